/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * udev's database file of a disk (/run/udev/data/bMAJ:MIN), as the disk loader reads it when
 * it is not run from a udev event: "E:KEY=value" lines among others, typed by
 * udev_props_parse_db().
 *
 * Invariants: every property kept is an "E:KEY=value" line of the text, with a valid name and a
 * printable value, the last one of its name; they are sorted by name, unique, at most
 * UDEV_PROPS_MAX; udev_props_get() finds each one; the typed fields are the values of their
 * properties; the transport classification copes with any ID_BUS.
 */
#include "fuzz.h"
#include "udev-props.h"

/* udev_props_add()'s rule, spelled out again: printable UTF-8 with tabs. */
static bool value_ok(const char *v) {
        size_t n = 0;

        if (!*v || !utf8_is_valid(v))
                return false;
        for (const char *c = v; *c; c++) {
                if (((unsigned char) *c < 0x20 && *c != '\t') || *c == 0x7f)
                        return false;
                if (((unsigned char) *c & 0xc0) != 0x80)
                        n++;
        }
        return n <= UDEV_PROP_VALUE_MAX;
}

/* The value of the last "E:@name=" line of @text with a value that can be kept, NULL when none. */
static char *last_value(const char *text, const char *name) {
        size_t l = strlen(name);
        char *v = NULL;

        for (const char *line = text; *line;) {
                size_t len = strcspn(line, "\n");

                if (len > 2 + l && line[0] == 'E' && line[1] == ':' && strncmp(line + 2, name, l) == 0 &&
                    line[2 + l] == '=') {
                        char *n = strndup(line + 3 + l, len - 3 - l);

                        fuzz_oom_check(n);
                        if (value_ok(n)) {
                                free(v);
                                v = n;
                        } else
                                free(n);
                }
                line += len + (line[len] == '\n');
        }
        return v;
}

static void check_typed(const UdevProps *p, const char *field, const char *name, const char *fallback) {
        const char *v = udev_props_get(p, name);

        if (!v && fallback)
                v = udev_props_get(p, fallback);
        if (v && !string_is_printable(v, UDEV_PROP_IDENTITY_MAX))
                v = NULL;
        fuzz_check(field == v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(udev_props_freep) UdevProps *p = NULL;
        _cleanup_(freep) char *text = NULL;

        text = fuzz_strndup(data, size);
        fuzz_check(udev_props_parse_db(text, &p) == 0);
        fuzz_check(p->n_props <= UDEV_PROPS_MAX);

        for (size_t i = 0; i < p->n_props; i++) {
                const UdevProperty *u = &p->props[i];

                if (i > 0)
                        fuzz_check(strcmp(p->props[i - 1].name, u->name) < 0);
                fuzz_check(*u->value && strlen(u->value) <= 4 * UDEV_PROP_VALUE_MAX &&
                           utf8_is_valid(u->value) && !strpbrk(u->value, "\n\r\x7f"));
                fuzz_check(udev_props_get(p, u->name) == u->value);
                /* A linear search of the text for each of the first 32: the input may hold
                 * thousands. */
                if (i < 32) {
                        _cleanup_(freep) char *v = last_value(text, u->name);

                        fuzz_check(v && streq(v, u->value));
                }
        }

        check_typed(p, p->model, "ID_MODEL", NULL);
        check_typed(p, p->vendor, "ID_VENDOR", NULL);
        check_typed(p, p->serial, "ID_SERIAL_SHORT", "ID_SERIAL");
        check_typed(p, p->wwn, "ID_WWN_WITH_EXTENSION", "ID_WWN");
        check_typed(p, p->bus, "ID_BUS", NULL);
        fuzz_check(p->iocost_solutions == udev_props_get(p, "IOCOST_SOLUTIONS"));

        (void) transport_classify("sdz", udev_props_get(p, "DEVPATH"), p->bus);
        (void) udev_props_get(p, "");
        return 0;
}
