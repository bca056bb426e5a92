/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SetPolicy's settings dictionary (a{sv}) through manager_bus_decode_settings(), the daemon's
 * own decoder. The input describes the dictionary: entries of
 *     KEY "\n" TYPE VALUE
 * where TYPE is one byte choosing the variant's type, and VALUE is a line of text for strings,
 * 8 bytes for numbers, a count byte and lines for string arrays. The message is built with
 * sd-bus as a client would send it (what sd-bus refuses to build, such as strings that are not
 * UTF-8, never reaches a daemon: such inputs are skipped).
 *
 * Invariants: the call succeeds, or fails with UnknownSetting or InvalidSetting whose message
 * is valid UTF-8 (it goes back on the bus), or with an errno of the message's shape; on success
 * every key is known, none twice, every value is canonical (it parses back to itself), and
 * removals are known keys too.
 */
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "fuzz.h"
#include "ioschedd-manager-bus.h"

/* sd-bus builds messages only for a bus that was started: a server end of a socket pair,
 * never authenticated, is enough and touches nothing outside the process. */
static sd_bus *fuzz_bus(void) {
        static sd_bus *bus;
        int fds[2];

        if (bus)
                return bus;
        fuzz_check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) >= 0);
        fuzz_check(sd_bus_new(&bus) >= 0);
        fuzz_check(sd_bus_set_fd(bus, fds[0], fds[0]) >= 0);
        fuzz_check(sd_bus_set_server(bus, 1,
                                     SD_ID128_MAKE(7c, 2f, 0e, 55, 9b, 1a, 4d, 0b, 8e, 31, 6a, 44, 1f, 90,
                                                   c2, d3)) >= 0);
        fuzz_check(sd_bus_set_anonymous(bus, true) >= 0);
        fuzz_check(sd_bus_start(bus) >= 0);
        return bus;
}

static bool take(const uint8_t **p, size_t *left, void *buf, size_t n) {
        if (*left < n)
                return false;
        memcpy(buf, *p, n);
        *p += n;
        *left -= n;
        return true;
}

/* Append one variant chosen by @type; -EINVAL when sd-bus refuses the content. */
static int append_variant(sd_bus_message *m, uint8_t type, const uint8_t **p, size_t *left) {
        _cleanup_(freep) char *line = NULL;
        uint64_t n = 0;
        int r;

        switch (type % 12) {
        case 0:
                line = fuzz_next_line(p, left);
                return sd_bus_message_append(m, "v", "s", line ?: "");
        case 1: {
                uint8_t count = 0;

                (void) take(p, left, &count, 1);
                r = sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'a', "s");
                for (unsigned i = 0; r >= 0 && i < count; i++) {
                        free(line);
                        line = fuzz_next_line(p, left);
                        r = sd_bus_message_append(m, "s", line ?: "");
                }
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                return r;
        }
        case 2:
                (void) take(p, left, &n, 1);
                return sd_bus_message_append(m, "v", "b", (int) (n & 1));
        case 3 ... 9: {
                /* The integer types, from as many bytes of the input as each holds. */
                static const char types[] = "ynqiuxt";
                static const uint8_t sizes[] = { 1, 2, 2, 4, 4, 8, 8 };
                const char t[2] = { types[type % 12 - 3], 0 };
                uint8_t v[8] = {};

                (void) take(p, left, v, sizes[type % 12 - 3]);
                r = sd_bus_message_open_container(m, 'v', t);
                if (r >= 0)
                        r = sd_bus_message_append_basic(m, t[0], v);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                return r;
        }
        case 10: {
                double d = 0;

                (void) take(p, left, &d, sizeof(d));
                return sd_bus_message_append(m, "v", "d", d);
        }
        default:
                /* A variant in a variant. */
                line = fuzz_next_line(p, left);
                r = sd_bus_message_open_container(m, 'v', "v");
                if (r >= 0)
                        r = sd_bus_message_append(m, "v", "s", line ?: "");
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                return r;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(strv_freep) char **keys = NULL, **values = NULL, **remove = NULL;
        unsigned n_entries = 0;
        int r;

        fuzz_check(sd_bus_message_new_method_call(fuzz_bus(), &m, BUS_SERVICE, BUS_MANAGER_PATH,
                                                  BUS_MANAGER_INTERFACE, BUS_METHOD_SET_POLICY) >= 0);
        fuzz_check(sd_bus_message_open_container(m, 'a', "{sv}") >= 0);
        while (size > 0 && n_entries++ < 200) {
                _cleanup_(freep) char *key = fuzz_next_line(&data, &size);
                uint8_t type = 0;

                (void) take(&data, &size, &type, 1);
                if (sd_bus_message_open_container(m, 'e', "sv") < 0 ||
                    sd_bus_message_append(m, "s", key ?: "") < 0 ||
                    append_variant(m, type, &data, &size) < 0 || sd_bus_message_close_container(m) < 0)
                        return 0; /* not a message a client could send */
        }
        fuzz_check(sd_bus_message_close_container(m) >= 0);
        fuzz_check(sd_bus_message_seal(m, 1, 0) >= 0);
        fuzz_check(sd_bus_message_rewind(m, true) >= 0);

        r = manager_bus_decode_settings(m, &keys, &values, &remove, &error);
        if (r < 0) {
                fuzz_check(r != -ENOMEM);
                if (sd_bus_error_is_set(&error)) {
                        fuzz_check(sd_bus_error_has_names(&error, BUS_ERROR_UNKNOWN_SETTING,
                                                          BUS_ERROR_INVALID_SETTING));
                        fuzz_check(error.message &&
                                   fuzz_utf8_is_valid(error.message, strlen(error.message)));
                }
                fuzz_check(!keys && !values && !remove); /* untouched on failure */
                return 0;
        }

        fuzz_check(strv_length(keys) == strv_length(values));
        for (size_t i = 0; keys[i]; i++) {
                _cleanup_(freep) char *tunable = NULL, *canonical = NULL;
                _cleanup_(value_done) Value v = {};
                const AttrInfo *a;

                fuzz_check(setting_key_parse(keys[i], &a, &tunable) == 0);
                fuzz_check(!strv_contains(keys + i + 1, keys[i]) && !strv_contains(remove, keys[i]));
                fuzz_check(value_parse(a, values[i], &v, NULL) == 0);
                canonical = value_to_string(a, &v);
                fuzz_oom_check(canonical);
                fuzz_check(streq(canonical, values[i]));
        }
        for (size_t i = 0; remove[i]; i++) {
                _cleanup_(freep) char *tunable = NULL;
                const AttrInfo *a;

                fuzz_check(setting_key_parse(remove[i], &a, &tunable) == 0);
                fuzz_check(!strv_contains(remove + i + 1, remove[i]));
        }
        return 0;
}
