/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "conf.h"
#include "ioschedd-conf-write.h"
#include "ioschedd-disk-bus.h"
#include "ioschedd-manager-bus.h"
#include "ioschedd-polkit.h"
#include "log.h"
#include "util.h"

/* Untrusted text goes into error messages only when it is short and printable. */
static const char *shown(const char *s) {
        return s && string_is_printable(s, 64) ? s : "(not shown: too long or not printable)";
}

static int lookup_disk(Manager *m, const char *name, DiskObject **ret, sd_bus_error *error) {
        const char *n = startswith(name, "/dev/") ?: name;
        DiskObject *d;

        if (!disk_name_is_valid(n))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_DISK_NAME,
                                         "Invalid disk name \"%s\": letters, digits and \"-_.:+!\", "
                                         "at most 31, not starting with a dot.", shown(name));
        d = manager_find_disk(m, n);
        if (!d || !d->disk)
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_DISK, "No such disk \"%s\".", n);
        *ret = d;
        return 0;
}

static int property_get_config_files(sd_bus *bus, const char *path, const char *interface,
                                     const char *property, sd_bus_message *reply, void *userdata,
                                     sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append_strv(reply, m->config ? m->config->policy->files : NULL);
}

static int property_get_config_errors(sd_bus *bus, const char *path, const char *interface,
                                      const char *property, sd_bus_message *reply, void *userdata,
                                      sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append_strv(reply, m->config_errors);
}

static int property_get_counter(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        Manager *m = userdata;
        uint64_t v = streq(property, "WritesDone") ? m->writes_done :
                     streq(property, "WritesSkipped") ? m->writes_skipped : m->write_errors;
        return sd_bus_message_append(reply, "t", v);
}

static int property_get_pending(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        Manager *m = userdata;
        uint32_t n = 0;

        for (size_t i = 0; i < m->n_disks; i++)
                n += m->disks[i]->running || m->disks[i]->want[JOB_APPLY] || m->disks[i]->want[JOB_PLAN];
        return sd_bus_message_append(reply, "u", n);
}

static int compare_names(const void *a, const void *b) {
        return strverscmp((*(DiskObject * const *) a)->name, (*(DiskObject * const *) b)->name);
}

static int method_list_disks(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(freep) DiskObject **sorted = NULL;
        Manager *m = userdata;
        int r;

        sorted = calloc(m->n_disks + 1, sizeof(DiskObject *));
        if (!sorted)
                return -ENOMEM;
        if (m->n_disks > 0)
                memcpy(sorted, m->disks, sizeof(DiskObject *) * m->n_disks);
        qsort(sorted, m->n_disks, sizeof(DiskObject *), compare_names);

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(so)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->n_disks; i++) {
                if (!sorted[i]->disk)
                        continue;       /* not read yet: not on the bus yet */
                r = sd_bus_message_append(reply, "(so)", sorted[i]->name, sorted[i]->path);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_get_disk(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const char *name;
        DiskObject *d;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        r = lookup_disk(m, name, &d, error);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "o", d->path);
}

static int method_plan(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(request_unrefp) Request *req = NULL;
        Manager *m = userdata;
        const char *name;
        DiskObject *d;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        r = lookup_disk(m, name, &d, error);
        if (r < 0)
                return r;
        req = request_new(REQUEST_PLAN, msg);
        if (!req)
                return -ENOMEM;
        req->one_disk = true;
        r = disk_object_queue(d, JOB_PLAN, NULL, req);
        if (r < 0)
                return r;
        return 1;
}

static int method_apply(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(request_unrefp) Request *req = NULL;
        Manager *m = userdata;
        const char *name;
        DiskObject *d;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        r = lookup_disk(m, name, &d, error);
        if (r < 0)
                return r;
        r = bus_verify_polkit_async(msg, POLKIT_ACTION_APPLY, &m->polkit_registry, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;

        req = request_new(REQUEST_APPLY, msg);
        if (!req)
                return -ENOMEM;
        req->one_disk = true;
        r = disk_object_queue(d, JOB_APPLY, NULL, req);
        if (r < 0)
                return r;
        request_maybe_reply(req);
        return 1;
}

static int method_apply_all(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(request_unrefp) Request *req = NULL;
        Manager *m = userdata;
        int r;

        r = bus_verify_polkit_async(msg, POLKIT_ACTION_APPLY, &m->polkit_registry, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;

        req = request_new(REQUEST_APPLY, msg);
        if (!req)
                return -ENOMEM;
        r = manager_queue_all(m, req);
        if (r < 0)
                return r;
        request_maybe_reply(req);
        return 1;
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(request_unrefp) Request *req = NULL;
        Manager *m = userdata;
        int r;

        r = bus_verify_polkit_async(msg, POLKIT_ACTION_RELOAD, &m->polkit_registry, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;

        req = request_new(REQUEST_APPLY, msg);
        if (!req)
                return -ENOMEM;
        r = manager_reload(m, req, NULL);
        if (r == -EBADMSG)
                return sd_bus_error_setf(error, BUS_ERROR_CONFIG_INVALID,
                                         "The configuration has %zu error(s); the previous one stays "
                                         "in force. First: %s", strv_length(m->config_errors),
                                         m->config_errors[0]);
        if (r < 0)
                return r;
        request_maybe_reply(req);
        return 1;
}

/* One setting of SetPolicy's a{sv}: the value as config text. Strings are taken as a config
 * file would spell them; integers and booleans are spelt for it; an array of strings is a
 * scheduler list. */
static int read_setting_value(sd_bus_message *msg, const char *key, char **ret, sd_bus_error *error) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(msg, &type, &contents);
        if (r < 0)
                return r;
        if (type != 'v')
                return -EINVAL;
        r = sd_bus_message_enter_container(msg, 'v', contents);
        if (r < 0)
                return r;

        if (streq(contents, "s")) {
                const char *s;

                r = sd_bus_message_read_basic(msg, 's', &s);
                if (r < 0)
                        return r;
                if (strlen(s) > SETTING_VALUE_MAX)
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                                 "Value of %s is longer than %d characters.", key,
                                                 SETTING_VALUE_MAX);
                *ret = strdup(s);
        } else if (streq(contents, "as")) {
                _cleanup_(strv_freep) char **l = NULL;

                r = sd_bus_message_read_strv(msg, &l);
                if (r < 0)
                        return r;
                *ret = strv_join(l, " ");
                if (*ret && strlen(*ret) > SETTING_VALUE_MAX) {
                        *ret = mfree(*ret);
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                                 "Value of %s is longer than %d characters.", key,
                                                 SETTING_VALUE_MAX);
                }
        } else if (streq(contents, "b")) {
                int b;

                r = sd_bus_message_read_basic(msg, 'b', &b);
                if (r < 0)
                        return r;
                *ret = strdup(b ? "1" : "0");
        } else if (strlen(contents) == 1 && strchr("ynqiuxt", contents[0])) {
                union {
                        uint8_t y;
                        int16_t n;
                        uint16_t q;
                        int32_t i;
                        uint32_t u;
                        int64_t x;
                        uint64_t t;
                } v;

                r = sd_bus_message_read_basic(msg, contents[0], &v);
                if (r < 0)
                        return r;
                switch (contents[0]) {
                case 'y': *ret = strdup_printf("%u", v.y); break;
                case 'n': *ret = strdup_printf("%d", v.n); break;
                case 'q': *ret = strdup_printf("%u", v.q); break;
                case 'i': *ret = strdup_printf("%d", v.i); break;
                case 'u': *ret = strdup_printf("%u", v.u); break;
                case 'x': *ret = strdup_printf("%lld", (long long) v.x); break;
                default:  *ret = strdup_printf("%llu", (unsigned long long) v.t); break;
                }
        } else
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                         "Value of %s has type \"%s\"; expected a string, an integer, "
                                         "a boolean or (for scheduler) an array of strings.", key,
                                         shown(contents));
        if (!*ret)
                return -ENOMEM;
        return sd_bus_message_exit_container(msg);
}

/*
 * Decode SetPolicy's settings with the config file's own key table and value parsers
 * (rule_add_setting), so that a key or value means the same in both. An empty string removes
 * the key from the disk's drop-in. Returns the canonical text of each value.
 */
int manager_bus_decode_settings(sd_bus_message *msg, char ***ret_keys, char ***ret_values,
                                char ***ret_remove, sd_bus_error *error) {
        _cleanup_(strv_freep) char **keys = NULL, **values = NULL, **remove = NULL;
        _cleanup_(rule_freep) Rule *scratch = NULL;
        unsigned n = 0;
        int r;

        scratch = rule_new("scratch", "D-Bus", 0);
        keys = calloc(1, sizeof(char *));
        values = calloc(1, sizeof(char *));
        remove = calloc(1, sizeof(char *));
        if (!scratch || !keys || !values || !remove)
                return -ENOMEM;

        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_(freep) char *text = NULL;
                const char *key, *reason = NULL;

                r = sd_bus_message_enter_container(msg, 'e', "sv");
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (++n > SETTINGS_MAX)
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                                 "More than %d settings.", SETTINGS_MAX);
                r = sd_bus_message_read_basic(msg, 's', &key);
                if (r < 0)
                        return r;
                if (startswith(key, MATCH_KEY_PREFIX))
                        return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_SETTING,
                                                 "\"%s\" is a match, not a setting: SetPolicy matches "
                                                 "the disk it is called for.", shown(key));
                {
                        const AttrInfo *a;
                        _cleanup_(freep) char *tunable = NULL;

                        r = setting_key_parse(key, &a, &tunable);
                        if (r == -ENOENT)
                                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_SETTING,
                                                         "Unknown setting \"%s\".", shown(key));
                        if (r < 0)
                                return r;
                }
                if (strv_contains(keys, key) || strv_contains(remove, key))
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                                 "Setting \"%s\" is given twice.", key);
                r = read_setting_value(msg, key, &text, error);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(msg);
                if (r < 0)
                        return r;

                if (!*text) {
                        r = strv_extend(&remove, key);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = rule_add_setting(scratch, key, text, 0, &reason);
                if (r == -EINVAL || r == -ERANGE)
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                                 "Invalid value \"%s\" for %s: %s.", shown(text), key,
                                                 reason ?: "invalid value");
                if (r < 0)
                        return r;
                r = strv_extend(&keys, key);
                if (r >= 0)
                        r = strv_extend(&values, scratch->settings[scratch->n_settings - 1].text);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;

        *ret_keys = TAKE_PTR(keys);
        *ret_values = TAKE_PTR(values);
        *ret_remove = TAKE_PTR(remove);
        return 0;
}

/* Write (or remove) the disk's drop-in: the settings it has, overridden by @keys, less @remove. */
static int persist_settings(Manager *m, DiskObject *d, char **keys, char **values, char **remove,
                            bool runtime, char **ret_path, sd_bus_error *error) {
        _cleanup_(freep) char *dir = NULL, *name = NULL, *path = NULL, *text = NULL;
        _cleanup_(strv_freep) char **mk = NULL, **mv = NULL, **errors = NULL;
        _cleanup_(policy_freep) Policy *old = NULL, *check = NULL;
        _cleanup_(dropin_id_done) DropinId id = {};
        int r;

        dir = manager_dropin_dir(m, runtime);
        if (!dir)
                return -ENOMEM;
        r = dropin_id_for_disk(d->disk, DROPIN_ID_WWN, &id);
        if (r < 0)
                return r;
        name = dropin_file_name(&id, runtime);
        if (!name)
                return -ENOMEM;
        path = strdup_printf("%s/%s", dir, name);
        mk = calloc(1, sizeof(char *));
        mv = calloc(1, sizeof(char *));
        old = policy_new();
        errors = calloc(1, sizeof(char *));
        if (!path || !mk || !mv || !old || !errors)
                return -ENOMEM;

        /* What the drop-in has now. A file edited into errors by hand is replaced. */
        if (access(path, F_OK) >= 0) {
                r = conf_load_file(path, old, &errors);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_warning("%s has errors; it is replaced by the settings given now.", path);
        }
        for (size_t i = 0; i < old->n_rules; i++) {
                const Rule *rule = old->rules[i];

                if (!streq(rule->name, DROPIN_RULE_NAME))
                        continue;
                for (size_t j = 0; j < rule->n_settings; j++) {
                        const Setting *s = &rule->settings[j];

                        if (strv_contains(keys, s->key) || strv_contains(remove, s->key) ||
                            strv_contains(mk, s->key))
                                continue;
                        if (strv_extend(&mk, s->key) < 0 || strv_extend(&mv, s->text) < 0)
                                return -ENOMEM;
                }
        }
        for (size_t i = 0; keys[i]; i++)
                if (strv_extend(&mk, keys[i]) < 0 || strv_extend(&mv, values[i]) < 0)
                        return -ENOMEM;

        if (strv_isempty(mk)) {
                r = dropin_remove(dir, name);
                if (r < 0)
                        return sd_bus_error_setf(error, BUS_ERROR_PERSIST_FAILED,
                                                 "Cannot remove %s: %s", path, strerror(-r));
                log_info("%s: no settings left, removed %s.", d->name, path);
                *ret_path = TAKE_PTR(path);
                return 0;
        }

        r = dropin_render(&id, mk, mv, &text);
        if (r < 0)
                return r;
        /* What we write must load: check it with the loader itself. */
        check = policy_new();
        if (!check)
                return -ENOMEM;
        r = conf_parse_text(text, strlen(text), path, check, &errors);
        if (r < 0) {
                log_error("Refusing to write a drop-in that does not load: %s",
                          strv_isempty(errors) ? "?" : errors[strv_length(errors) - 1]);
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                         "The settings do not make a valid drop-in.");
        }
        r = dropin_write_atomic(dir, name, text);
        if (r < 0)
                return sd_bus_error_setf(error, BUS_ERROR_PERSIST_FAILED, "Cannot write %s: %s", path,
                                         strerror(-r));
        log_info("%s: policy %s saved to %s.", d->name, runtime ? "until reboot" : "persistently", path);
        *ret_path = TAKE_PTR(path);
        return 0;
}

static int reload_for(Manager *m, sd_bus_message *msg, DiskObject *d, const char *path,
                      sd_bus_error *error) {
        _cleanup_(request_unrefp) Request *req = NULL;
        int r;

        req = request_new(REQUEST_APPLY, msg);
        if (!req)
                return -ENOMEM;
        req->one_disk = true;
        req->note = strdup_printf("Saved to %s, but ", path);
        r = manager_reload(m, req, d);
        if (r == -EBADMSG)
                return sd_bus_error_setf(error, BUS_ERROR_CONFIG_INVALID,
                                         "%s is saved, but the configuration has errors, so the "
                                         "previous policy stays in force. First: %s", path,
                                         m->config_errors[0]);
        if (r < 0)
                return r;
        request_maybe_reply(req);
        return 1;
}

static int method_set_policy(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(strv_freep) char **keys = NULL, **values = NULL, **remove = NULL;
        _cleanup_(freep) char *path = NULL;
        Manager *m = userdata;
        const char *name;
        DiskObject *d;
        int runtime, r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        r = lookup_disk(m, name, &d, error);
        if (r < 0)
                return r;
        r = manager_bus_decode_settings(msg, &keys, &values, &remove, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(msg, "b", &runtime);
        if (r < 0)
                return r;
        if (strv_isempty(keys) && strv_isempty(remove))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING, "No settings given.");
        if (manager_config_is_single_file(m))
                return sd_bus_error_setf(error, BUS_ERROR_NOT_SUPPORTED,
                                         "ioschedd runs on one configuration file (--config): "
                                         "policy changes cannot be saved.");

        r = bus_verify_polkit_async(msg, POLKIT_ACTION_SET_POLICY, &m->polkit_registry, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;

        r = persist_settings(m, d, keys, values, remove, runtime, &path, error);
        if (r < 0)
                return r;
        return reload_for(m, msg, d, path, error);
}

static int method_reset_policy(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(freep) char *dir = NULL, *removed = NULL;
        Manager *m = userdata;
        const char *name;
        DiskObject *d;
        int runtime, r;

        r = sd_bus_message_read(msg, "sb", &name, &runtime);
        if (r < 0)
                return r;
        r = lookup_disk(m, name, &d, error);
        if (r < 0)
                return r;
        if (manager_config_is_single_file(m))
                return sd_bus_error_setf(error, BUS_ERROR_NOT_SUPPORTED,
                                         "ioschedd runs on one configuration file (--config): "
                                         "there is no saved policy to reset.");
        r = bus_verify_polkit_async(msg, POLKIT_ACTION_SET_POLICY, &m->polkit_registry, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;

        dir = manager_dropin_dir(m, runtime);
        if (!dir)
                return -ENOMEM;
        /* Whichever identity the drop-in was written with (the disk may have shown its WWN
         * only later): remove every one of this disk's. */
        for (DropinIdKind k = 0; k < _DROPIN_ID_MAX; k++) {
                _cleanup_(dropin_id_done) DropinId id = {};
                _cleanup_(freep) char *fname = NULL;

                r = dropin_id_for_disk(d->disk, k, &id);
                if (r < 0)
                        return r;
                fname = dropin_file_name(&id, runtime);
                if (!fname)
                        return -ENOMEM;
                r = dropin_remove(dir, fname);
                if (r < 0)
                        return sd_bus_error_setf(error, BUS_ERROR_PERSIST_FAILED, "Cannot remove %s/%s: %s",
                                                 dir, fname, strerror(-r));
                if (r > 0) {
                        log_info("%s: removed %s/%s.", d->name, dir, fname);
                        free(removed);
                        removed = strdup_printf("%s/%s", dir, fname);
                        if (!removed)
                                return -ENOMEM;
                }
        }
        if (!removed)
                return sd_bus_reply_method_return(msg, NULL);   /* nothing to reset */
        return reload_for(m, msg, d, removed, error);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", IOSCHED_VERSION);
}

#define EC SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ConfigFiles", "as", property_get_config_files, 0, EC),
        SD_BUS_PROPERTY("ConfigErrors", "as", property_get_config_errors, 0, EC),
        SD_BUS_PROPERTY("WritesDone", "t", property_get_counter, 0, EC),
        SD_BUS_PROPERTY("WritesSkipped", "t", property_get_counter, 0, EC),
        SD_BUS_PROPERTY("WriteErrors", "t", property_get_counter, 0, EC),
        SD_BUS_PROPERTY("DisksPending", "u", property_get_pending, 0, 0),

        SD_BUS_METHOD_WITH_ARGS("ListDisks", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(so)", disks),
                                method_list_disks, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetDisk", SD_BUS_ARGS("s", name), SD_BUS_RESULT("o", path),
                                method_get_disk, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Plan", SD_BUS_ARGS("s", disk), SD_BUS_RESULT("a(ssss)", actions),
                                method_plan, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Apply", SD_BUS_ARGS("s", disk), SD_BUS_NO_RESULT,
                                method_apply, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ApplyAll", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                method_apply_all, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetPolicy", SD_BUS_ARGS("s", disk, "a{sv}", settings, "b", runtime),
                                SD_BUS_NO_RESULT, method_set_policy, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ResetPolicy", SD_BUS_ARGS("s", disk, "b", runtime), SD_BUS_NO_RESULT,
                                method_reset_policy, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reload", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("Applied", SD_BUS_ARGS("s", disk, "a(sss)", changes), 0),
        SD_BUS_VTABLE_END
};

int manager_bus_register(Manager *m) {
        int r;

        r = sd_bus_add_object_vtable(m->bus, NULL, MANAGER_BUS_PATH, MANAGER_BUS_INTERFACE,
                                     manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Cannot register %s: %m", MANAGER_BUS_PATH);
        r = disk_bus_register(m);
        if (r < 0)
                return log_error_errno(r, "Cannot register the disk objects: %m");
        r = sd_bus_add_object_manager(m->bus, NULL, MANAGER_BUS_PATH);
        if (r < 0)
                return log_error_errno(r, "Cannot add the object manager: %m");
        return 0;
}

void manager_bus_free(Manager *m) {
        bus_verify_polkit_async_registry_free(m->polkit_registry);
        m->polkit_registry = NULL;
}

static int reply_plan(sd_bus_message *call, const Job *j) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssss)");
        if (r < 0)
                return r;
        for (size_t i = 0; j->report && i < j->report->n_actions; i++) {
                const Action *a = &j->report->actions[i];

                r = sd_bus_message_append(reply, "(ssss)", a->key, strempty(a->current),
                                          strempty(a->desired), action_type_to_string(a->type));
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

void manager_bus_reply_request(Request *req, const Job *j) {
        sd_bus_message *call = req->message;
        int r;

        if (!call)
                return;
        if (req->kind == REQUEST_PLAN) {
                if (j->error < 0 && ERRNO_IS_GONE(j->error))
                        r = sd_bus_reply_method_errorf(call, BUS_ERROR_NO_SUCH_DISK,
                                                       "Disk %s went away.", j->name);
                else if (j->error < 0)
                        r = sd_bus_reply_method_errnof(call, j->error, "Cannot plan %s: %m", j->name);
                else
                        r = reply_plan(call, j);
        } else if (req->n_failed > 0)
                r = sd_bus_reply_method_errorf(call, BUS_ERROR_WRITE_FAILED,
                                               "%s%u write(s) failed. First: %s",
                                               strempty(req->note), req->n_failed,
                                               strna(req->first_failure));
        else if (req->one_disk && req->n_gone > 0)
                r = sd_bus_reply_method_errorf(call, BUS_ERROR_NO_SUCH_DISK, "%sthe disk went away.",
                                               strempty(req->note));
        else
                r = sd_bus_reply_method_return(call, NULL);
        if (r < 0)
                log_debug_errno(r, "Cannot send a reply: %m");
}

void manager_bus_emit_applied(Manager *m, DiskObject *d, const Plan *report) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        bool any = false;
        int r;

        if (!m->bus)
                return;
        for (size_t i = 0; i < report->n_actions; i++)
                any = any || report->actions[i].outcome == OUTCOME_WRITTEN;
        if (!any)
                return;         /* nothing changed: no signal */

        r = sd_bus_message_new_signal(m->bus, &sig, MANAGER_BUS_PATH, MANAGER_BUS_INTERFACE, "Applied");
        if (r >= 0)
                r = sd_bus_message_append(sig, "s", d->name);
        if (r >= 0)
                r = sd_bus_message_open_container(sig, 'a', "(sss)");
        for (size_t i = 0; r >= 0 && i < report->n_actions; i++) {
                const Action *a = &report->actions[i];

                if (a->outcome == OUTCOME_WRITTEN)
                        r = sd_bus_message_append(sig, "(sss)", a->key, strempty(a->current),
                                                  strempty(a->result ?: a->write));
        }
        if (r >= 0)
                r = sd_bus_message_close_container(sig);
        if (r >= 0)
                r = sd_bus_send(m->bus, sig, NULL);
        if (r < 0)
                log_debug_errno(r, "Cannot emit Applied: %m");
}

void manager_bus_emit_counters(Manager *m) {
        if (m->bus)
                (void) sd_bus_emit_properties_changed(m->bus, MANAGER_BUS_PATH, MANAGER_BUS_INTERFACE,
                                                      "WritesDone", "WritesSkipped", "WriteErrors", NULL);
}

void manager_bus_emit_config(Manager *m) {
        if (m->bus)
                (void) sd_bus_emit_properties_changed(m->bus, MANAGER_BUS_PATH, MANAGER_BUS_INTERFACE,
                                                      "ConfigFiles", "ConfigErrors", NULL);
}
