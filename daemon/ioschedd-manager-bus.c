/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "conf.h"
#include "ioschedd-conf-write.h"
#include "ioschedd-bus.h"
#include "ioschedd-disk-bus.h"
#include "ioschedd-manager-bus.h"
#include "ioschedd-polkit.h"
#include "log.h"
#include "report.h"
#include "util.h"

/* Untrusted text goes into error messages only when it is short and printable. */
static const char *shown(const char *s) {
        return s && string_is_printable(s, 64) ? s : "(not shown: too long or not printable)";
}

/*
 * A method call waiting for its jobs: the manager tells its completion each result, and this
 * file alone turns them into the reply.
 */
typedef struct Request {
        Completion completion;
        sd_bus_message *message;
        Manager *manager;
        uint32_t hold;          /* Hold(): the hold whose apply this waits for */
        bool one_disk;          /* a disk that went away is an error */
        char *note;             /* prefix of an error reply (SetPolicy: where it was saved) */
        unsigned n_failed, n_gone;
        char *first_failure;
} Request;

static Request *request_of(Completion *c) {
        return container_of(c, Request, completion);
}

static void request_free(Completion *c) {
        Request *req = request_of(c);

        sd_bus_message_unref(req->message);
        free(req->first_failure);
        free(req->note);
        free(req);
}

static Request *request_unref(Request *req) {
        if (req)
                completion_unref(&req->completion);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Request *, request_unref);

static void request_send(Request *req, int r) {
        if (r < 0)
                log_debug_errno(r, "Cannot send a reply: %m");
        req->message = sd_bus_message_unref(req->message);
}

/* Apply, ApplyAll, Reload, SetPolicy, ResetPolicy: count what failed. */
static void apply_job_done(Completion *c, const JobResult *res) {
        Request *req = request_of(c);
        const ReportSummary *sum = res->summary;

        if (res->error == -ENODEV)
                req->n_gone++;
        else if (res->error < 0) {
                req->n_failed++;
                if (!req->first_failure)
                        req->first_failure = strdup_printf("%s: %s", res->name, strerror(-res->error));
        } else if (sum && sum->failed > 0) {
                req->n_failed += sum->failed;
                if (!req->first_failure)
                        req->first_failure = strdup_printf("%s: %s: %s", res->name, sum->first_failure->key,
                                                           strna(sum->first_failure->reason));
        }
}

static void apply_done(Completion *c) {
        Request *req = request_of(c);
        sd_bus_message *call = req->message;

        /* A hold whose values did not take is no hold: its holder gets an error and no handle. */
        if (req->hold > 0 && (req->n_failed > 0 || req->n_gone > 0))
                (void) manager_hold_release(req->manager, req->hold, "its values could not be written", NULL);
        if (req->n_failed > 0)
                request_send(req, sd_bus_reply_method_errorf(call, BUS_ERROR_WRITE_FAILED,
                                                             "%s%u write(s) failed. First: %s",
                                                             strempty(req->note), req->n_failed,
                                                             strna(req->first_failure)));
        else if (req->one_disk && req->n_gone > 0)
                request_send(req, bus_reply_errnof(call, -ENODEV, NULL, "%sthe disk went away.",
                                               strempty(req->note)));
        else if (req->hold > 0)
                request_send(req, sd_bus_reply_method_return(call, "u", req->hold));
        else
                request_send(req, sd_bus_reply_method_return(call, NULL));
}

/* A method return to @call with one array of @contents open: reply_close_and_send() ends it. */
static int reply_open_array(sd_bus_message *call, const char *contents, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', contents);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(reply);
        return 0;
}

/* End a reply's one array and send it. */
static int reply_close_and_send(sd_bus_message *reply) {
        int r = sd_bus_message_close_container(reply);

        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static int reply_plan(sd_bus_message *call, const Plan *plan) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = reply_open_array(call, "(ssss)", &reply);
        if (r < 0)
                return r;
        for (size_t i = 0; plan && i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];

                r = sd_bus_message_append(reply, "(ssss)", a->key, strempty(a->current),
                                          strempty(a->desired), action_type_to_string(a->type));
                if (r < 0)
                        return r;
        }
        return reply_close_and_send(reply);
}

/* Plan: one job, whose plan is the reply. */
static void plan_job_done(Completion *c, const JobResult *res) {
        Request *req = request_of(c);

        if (res->error == -ENODEV)
                request_send(req, bus_reply_errnof(req->message, res->error, NULL, "Disk %s went away.",
                                               res->name));
        else if (res->error < 0)
                request_send(req, bus_reply_errnof(req->message, res->error, NULL, "Cannot plan %s: %m",
                                               res->name));
        else
                request_send(req, reply_plan(req->message, res->report));
}

static void plan_done(Completion *c) {
}

static int request_new(Manager *m, sd_bus_message *msg, JobKind kind, bool one_disk, Request **ret) {
        static const CompletionOps apply_ops = {
                .job_done = apply_job_done, .done = apply_done, .free = request_free,
        };
        static const CompletionOps plan_ops = {
                .job_done = plan_job_done, .done = plan_done, .free = request_free,
        };
        Request *req;

        assert(msg && ret);
        req = calloc(1, sizeof(Request));
        if (!req)
                return -ENOMEM;
        completion_init(&req->completion, kind == JOB_PLAN ? &plan_ops : &apply_ops);
        req->message = sd_bus_message_ref(msg);
        req->manager = m;
        req->one_disk = one_disk;
        *ret = req;
        return 0;
}

/* Queue the apply of @d (NULL: every disk), after reading the configuration again when
 * @reload, once polkit allows @action (NULL: allowed already); the reply is sent when the jobs
 * are done. @saved: the drop-in SetPolicy or ResetPolicy just changed, for the error texts. */
static int request_apply(Manager *m, sd_bus_message *msg, const char *action, DiskObject *d,
                         bool reload, const char *saved, sd_bus_error *error) {
        _cleanup_(request_unrefp) Request *req = NULL;
        int r;

        if (action) {
                r = bus_verify_polkit_async(msg, action, &m->polkit_registry, error);
                if (r <= 0)
                        return r < 0 ? r : 1;
        }
        r = request_new(m, msg, JOB_APPLY, !!d, &req);
        if (r < 0)
                return r;
        if (saved) {
                req->note = strdup_printf("Saved to %s, but ", saved);
                if (!req->note)
                        return -ENOMEM;
        }
        if (reload)
                r = manager_reload(m, &req->completion, d);
        else if (d)
                r = disk_object_queue(d, JOB_APPLY, NULL, &req->completion);
        else
                r = manager_queue_all(m, &req->completion);
        if (r == -EBADMSG && saved)
                return bus_error_set_errnof(error, r, NULL, "%s is saved, but the configuration has "
                                            "errors, so the previous policy stays in force. First: %s",
                                            saved, m->config_errors[0]);
        if (r == -EBADMSG)
                return bus_error_set_errnof(error, r, NULL, "The configuration has %zu error(s); the "
                                            "previous one stays in force. First: %s",
                                            strv_length(m->config_errors), m->config_errors[0]);
        if (r < 0)
                return r;
        completion_arm(&req->completion);
        return 1;
}

static int lookup_disk(Manager *m, const char *name, DiskObject **ret, sd_bus_error *error);

/* The disk a method's first argument names. */
static int read_disk(Manager *m, sd_bus_message *msg, DiskObject **ret, sd_bus_error *error) {
        const char *name;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        return lookup_disk(m, name, ret, error);
}

static int lookup_disk(Manager *m, const char *name, DiskObject **ret, sd_bus_error *error) {
        const char *n = startswith(name, "/dev/") ?: name;
        DiskObject *d;

        if (!disk_name_is_valid(n))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_DISK_NAME,
                                         "Invalid disk name \"%s\": letters, digits and \"-_.:+!\", "
                                         "at most 31, not starting with a dot.", shown(name));
        d = manager_find_disk(m, n);
        if (!d || !disk_object_is_published(d))
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

static int property_get_pending(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        return sd_bus_message_append(reply, "u", (uint32_t) manager_disks_pending(userdata));
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

        r = reply_open_array(msg, "(so)", &reply);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->n_disks; i++) {
                _cleanup_(freep) char *path = NULL;

                if (!disk_object_is_published(sorted[i]))
                        continue;
                r = disk_bus_path(sorted[i], &path);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(so)", sorted[i]->name, path);
                if (r < 0)
                        return r;
        }
        return reply_close_and_send(reply);
}

static int method_get_disk(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(freep) char *path = NULL;
        DiskObject *d;
        int r;

        r = read_disk(userdata, msg, &d, error);
        if (r < 0)
                return r;
        r = disk_bus_path(d, &path);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "o", path);
}

static int method_plan(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(request_unrefp) Request *req = NULL;
        DiskObject *d;
        int r;

        r = read_disk(userdata, msg, &d, error);
        if (r < 0)
                return r;
        r = request_new(userdata, msg, JOB_PLAN, true, &req);
        if (r < 0)
                return r;
        r = disk_object_queue(d, JOB_PLAN, NULL, &req->completion);
        if (r < 0)
                return r;
        completion_arm(&req->completion);
        return 1;
}

static int method_apply(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        DiskObject *d;
        int r;

        r = read_disk(m, msg, &d, error);
        if (r < 0)
                return r;
        return request_apply(m, msg, POLKIT_ACTION_APPLY, d, false, NULL, error);
}

static int method_apply_all(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return request_apply(userdata, msg, POLKIT_ACTION_APPLY, NULL, false, NULL, error);
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return request_apply(userdata, msg, POLKIT_ACTION_RELOAD, NULL, true, NULL, error);
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
                *ret = strdup(s);
        } else if (streq(contents, "as")) {
                _cleanup_(strv_freep) char **l = NULL;

                r = sd_bus_message_read_strv(msg, &l);
                if (r < 0)
                        return r;
                *ret = strv_join(l, " ");
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
        /* A string, or a list joined: numbers and booleans are shorter. */
        if (strlen(*ret) > SETTING_VALUE_MAX) {
                *ret = mfree(*ret);
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                         "Value of %s is longer than %d characters.", key,
                                         SETTING_VALUE_MAX);
        }
        return sd_bus_message_exit_container(msg);
}

/* The decoded settings: the canonical text of each, parsed into a scratch rule. */
typedef struct Settings {
        Rule *scratch;
        char **keys, **values, **remove;
} Settings;

static void settings_done(Settings *s) {
        rule_free(s->scratch);
        strv_free(s->keys);
        strv_free(s->values);
        strv_free(s->remove);
}

/* A key of the configuration's key table, not a match, not given before. */
static int check_setting_key(const Settings *s, const char *key, sd_bus_error *error) {
        _cleanup_(freep) char *tunable = NULL;
        const AttrInfo *a;
        int r;

        if (startswith(key, MATCH_KEY_PREFIX))
                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_SETTING,
                                         "\"%s\" is a match, not a setting: SetPolicy matches "
                                         "the disk it is called for.", shown(key));
        r = setting_key_parse(key, &a, &tunable);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, BUS_ERROR_UNKNOWN_SETTING, "Unknown setting \"%s\".",
                                         shown(key));
        if (r < 0)
                return r;
        if (strv_contains(s->keys, key) || strv_contains(s->remove, key))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                         "Setting \"%s\" is given twice.", key);
        return 0;
}

/* One {sv}, entered: its key checked, its value parsed as the file would parse it; an empty
 * string removes the key. */
static int decode_setting(sd_bus_message *msg, Settings *s, sd_bus_error *error) {
        _cleanup_(freep) char *text = NULL;
        const char *key, *reason = NULL;
        int r;

        r = sd_bus_message_read_basic(msg, 's', &key);
        if (r < 0)
                return r;
        r = check_setting_key(s, key, error);
        if (r < 0)
                return r;
        r = read_setting_value(msg, key, &text, error);
        if (r < 0)
                return r;
        if (!*text)
                return strv_extend(&s->remove, key);
        r = rule_add_setting(s->scratch, key, text, 0, &reason);
        if (r == -EINVAL || r == -ERANGE)
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING, "Invalid value \"%s\" for %s: %s.",
                                         shown(text), key, reason ?: "invalid value");
        if (r < 0)
                return r;
        r = strv_extend(&s->keys, key);
        if (r >= 0)
                r = strv_extend(&s->values, s->scratch->settings[s->scratch->n_settings - 1].text);
        return r;
}

/*
 * Decode SetPolicy's settings with the config file's own key table and value parsers
 * (rule_add_setting), so that a key or value means the same in both. An empty string removes
 * the key from the disk's drop-in. Returns the canonical text of each value.
 */
int manager_bus_decode_settings(sd_bus_message *msg, char ***ret_keys, char ***ret_values,
                                char ***ret_remove, sd_bus_error *error) {
        _cleanup_(settings_done) Settings s = {};
        unsigned n = 0;
        int r;

        assert(msg && ret_keys && ret_values && ret_remove);
        s.scratch = rule_new("scratch", "D-Bus", 0);
        s.keys = calloc(1, sizeof(char *));
        s.values = calloc(1, sizeof(char *));
        s.remove = calloc(1, sizeof(char *));
        if (!s.scratch || !s.keys || !s.values || !s.remove)
                return -ENOMEM;

        r = sd_bus_message_enter_container(msg, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(msg, 'e', "sv")) > 0) {
                if (++n > SETTINGS_MAX)
                        return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                                 "More than %d settings.", SETTINGS_MAX);
                r = decode_setting(msg, &s, error);
                if (r >= 0)
                        r = sd_bus_message_exit_container(msg);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        *ret_keys = TAKE_PTR(s.keys);
        *ret_values = TAKE_PTR(s.values);
        *ret_remove = TAKE_PTR(s.remove);
        return 0;
}

/* SetPolicy, ResetPolicy: only with drop-in directories, only once polkit allows it. 1: go on
 * with @ret_dir, the drop-in directory; 0: polkit was asked; < 0: refused. */
static int policy_change_begin(Manager *m, sd_bus_message *msg, bool runtime, const char *refusal,
                               char **ret_dir, sd_bus_error *error) {
        int r;

        if (manager_config_is_single_file(m))
                return sd_bus_error_setf(error, BUS_ERROR_NOT_SUPPORTED,
                                         "ioschedd runs on one configuration file (--config): %s",
                                         refusal);
        r = bus_verify_polkit_async(msg, POLKIT_ACTION_SET_POLICY, &m->polkit_registry, error);
        if (r <= 0)
                return r;
        *ret_dir = dropin_dir(m->config_root, runtime);
        return *ret_dir ? 1 : -ENOMEM;
}

/* SetPolicy's and Hold's arguments: the disk, the settings, and one more of type @last. */
static int read_disk_settings(Manager *m, sd_bus_message *msg, DiskObject **ret_disk, char ***ret_keys,
                              char ***ret_values, char ***ret_remove, char last, void *ret_last,
                              sd_bus_error *error) {
        int r;

        r = read_disk(m, msg, ret_disk, error);
        if (r < 0)
                return r;
        r = manager_bus_decode_settings(msg, ret_keys, ret_values, ret_remove, error);
        if (r < 0)
                return r;
        return sd_bus_message_read_basic(msg, last, ret_last);
}

static int method_set_policy(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(strv_freep) char **keys = NULL, **values = NULL, **remove = NULL;
        _cleanup_(freep) char *dir = NULL, *path = NULL;
        Manager *m = userdata;
        DiskObject *d;
        int runtime, r;

        r = read_disk_settings(m, msg, &d, &keys, &values, &remove, 'b', &runtime, error);
        if (r < 0)
                return r;
        if (strv_isempty(keys) && strv_isempty(remove))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING, "No settings given.");
        r = policy_change_begin(m, msg, runtime, "policy changes cannot be saved.", &dir, error);
        if (r <= 0)
                return r < 0 ? r : 1;

        r = dropin_persist(dir, d->reading.disk, keys, values, remove, runtime, &path);
        if (r == -ENOEXEC)
                return bus_error_set_errnof(error, r, NULL, "The settings do not make a valid drop-in.");
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bus_error_set_errnof(error, r, BUS_ERROR_PERSIST_FAILED,
                                            "Cannot save the policy in %s: %m", dir);
        return request_apply(m, msg, NULL, d, true, path, error);
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
        r = policy_change_begin(m, msg, runtime, "there is no saved policy to reset.", &dir, error);
        if (r <= 0)
                return r < 0 ? r : 1;

        r = dropin_reset(dir, d->reading.disk, runtime, &removed);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bus_error_set_errnof(error, r, BUS_ERROR_PERSIST_FAILED,
                                            "Cannot remove a drop-in of %s: %m", dir);
        if (r == 0)
                return sd_bus_reply_method_return(msg, NULL);   /* nothing to reset */
        return request_apply(m, msg, NULL, d, true, removed, error);
}

/* Who holds: "COMM (pid PID, uid UID)" as the bus tells of the sender, else its unique name. */
static char *holder_of(sd_bus_message *call) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *comm = NULL;
        pid_t pid = 0;
        uid_t uid = 0;

        if (sd_bus_query_sender_creds(call, SD_BUS_CREDS_PID | SD_BUS_CREDS_EUID | SD_BUS_CREDS_COMM |
                                                    SD_BUS_CREDS_AUGMENT, &creds) >= 0 &&
            sd_bus_creds_get_pid(creds, &pid) >= 0 && sd_bus_creds_get_euid(creds, &uid) >= 0) {
                (void) sd_bus_creds_get_comm(creds, &comm);
                return strdup_printf("%s (pid %d, uid %u)", comm ?: "?", (int) pid, (unsigned) uid);
        }
        return strdup(strempty(sd_bus_message_get_sender(call)));
}

static int method_hold(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(strv_freep) char **keys = NULL, **values = NULL, **remove = NULL;
        _cleanup_(request_unrefp) Request *req = NULL;
        _cleanup_(hold_unrefp) Hold *h = NULL;
        _cleanup_(freep) char *holder = NULL;
        Manager *m = userdata;
        const char *reason;
        DiskObject *d;
        int r;

        r = read_disk_settings(m, msg, &d, &keys, &values, &remove, 's', &reason, error);
        if (r < 0)
                return r;
        if (!strv_isempty(remove))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING,
                                         "%s has no value: a hold sets values, Release() ends it.", remove[0]);
        if (strv_isempty(keys))
                return sd_bus_error_setf(error, BUS_ERROR_INVALID_SETTING, "No settings given.");
        r = bus_verify_polkit_async(msg, POLKIT_ACTION_HOLD, &m->polkit_registry, error);
        if (r <= 0)
                return r < 0 ? r : 1;

        holder = holder_of(msg);
        if (!holder)
                return -ENOMEM;
        r = hold_new(manager_hold_next_id(m), d->name, holder, reason, manager_now(m, CLOCK_REALTIME), &h);
        if (r < 0)
                return r;
        for (size_t i = 0; keys[i]; i++) {
                r = hold_add_setting(h, keys[i], values[i], NULL);
                if (r < 0)
                        return r;       /* the values are canonical already: ENOMEM */
        }
        r = request_new(m, msg, JOB_APPLY, true, &req);
        if (r < 0)
                return r;
        req->hold = h->id;
        r = manager_hold_add(m, d, h, msg, &req->completion);
        if (r == -E2BIG)
                return sd_bus_error_setf(error, BUS_ERROR_TOO_MANY_HOLDS,
                                         "Too many holds: at most %d in force, %d on a disk.", HOLDS_MAX,
                                         HOLDS_PER_DISK_MAX);
        if (r < 0)
                return r;
        completion_arm(&req->completion);
        return 1;
}

static int method_release(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(request_unrefp) Request *req = NULL;
        _cleanup_(freep) char *why = NULL;
        Manager *m = userdata;
        const char *sender;
        uint32_t id;
        int r;

        r = sd_bus_message_read(msg, "u", &id);
        if (r < 0)
                return r;
        if (!manager_hold_find(m, id, &sender))
                return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_HOLD, "No hold %" PRIu32 ".", id);
        /* Its holder may end it; anyone else needs the right to hold. */
        if (!streq_ptr(sender, sd_bus_message_get_sender(msg))) {
                r = bus_verify_polkit_async(msg, POLKIT_ACTION_HOLD, &m->polkit_registry, error);
                if (r <= 0)
                        return r < 0 ? r : 1;
                why = strdup_printf("released by %s", strempty(sd_bus_message_get_sender(msg)));
        } else
                why = strdup("released by its holder");
        if (!why)
                return -ENOMEM;
        /* The reply waits for the apply: what is below the hold is back when it comes. */
        r = request_new(m, msg, JOB_APPLY, true, &req);
        if (r >= 0)
                r = manager_hold_release(m, id, why, &req->completion);
        if (r < 0)
                return r;
        completion_arm(&req->completion);
        return 1;
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", IOSCHED_VERSION);
}

/* GetManagedObjects, answered from m->disks (disk_bus_append_objects()): sd-bus's object
 * manager walks its object tree for each disk (a node lookup per path prefix, the path decoded
 * again, the disk looked up by name) and lists the three standard interfaces of each without
 * properties; measured in-process (tests/unit/bench-objects, docs/daemon.md), that costs 43%
 * more CPU to build the reply and 19% more for the client to walk it. A message callback on
 * the path runs before sd-bus's own handling; anything else, and a call with arguments (which
 * sd-bus refuses), goes on to sd-bus. */
static int on_manager_message(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Manager *m = userdata;
        int r;

        if (!sd_bus_message_is_method_call(msg, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects") ||
            !sd_bus_message_has_signature(msg, ""))
                return 0;
        r = reply_open_array(msg, "{oa{sa{sv}}}", &reply);
        if (r >= 0)
                r = disk_bus_append_objects(m, reply, error);
        if (r < 0)
                return r;
        return reply_close_and_send(reply);
}

/* The getter of each property of the manager in BUS_PROPERTIES (src/bus-names.h), or the
 * offset of its number in Manager. */
static const BusPropertyImpl manager_properties[_BUS_PROPERTY_MAX] = {
        [BUS_MANAGER_VERSION] = { property_get_version },
        [BUS_MANAGER_CONFIG_FILES] = { property_get_config_files },
        [BUS_MANAGER_CONFIG_ERRORS] = { property_get_config_errors },
        [BUS_MANAGER_WRITES_DONE] = { .offset = offsetof(Manager, writes_done) },
        [BUS_MANAGER_WRITES_SKIPPED] = { .offset = offsetof(Manager, writes_skipped) },
        [BUS_MANAGER_WRITE_ERRORS] = { .offset = offsetof(Manager, write_errors) },
        [BUS_MANAGER_DRIFT_CORRECTED] = { .offset = offsetof(Manager, drift_corrected) },
        [BUS_MANAGER_DISKS_PENDING] = { property_get_pending },
};

static const sd_bus_vtable manager_methods[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_LIST_DISKS, SD_BUS_NO_ARGS, SD_BUS_RESULT("a(so)", disks),
                                method_list_disks, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_GET_DISK, SD_BUS_ARGS("s", name), SD_BUS_RESULT("o", path),
                                method_get_disk, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_PLAN, SD_BUS_ARGS("s", disk), SD_BUS_RESULT("a(ssss)", actions),
                                method_plan, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_APPLY, SD_BUS_ARGS("s", disk), SD_BUS_NO_RESULT,
                                method_apply, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_APPLY_ALL, SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                method_apply_all, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_SET_POLICY, SD_BUS_ARGS("s", disk, "a{sv}", settings, "b", runtime),
                                SD_BUS_NO_RESULT, method_set_policy, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_RESET_POLICY, SD_BUS_ARGS("s", disk, "b", runtime), SD_BUS_NO_RESULT,
                                method_reset_policy, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_RELOAD, SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_HOLD, SD_BUS_ARGS("s", disk, "a{sv}", settings, "s", reason),
                                SD_BUS_RESULT("u", handle), method_hold, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(BUS_METHOD_RELEASE, SD_BUS_ARGS("u", handle), SD_BUS_NO_RESULT,
                                method_release, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS(BUS_SIGNAL_APPLIED, SD_BUS_ARGS("s", disk, "a(sss)", changes), 0),
        SD_BUS_VTABLE_END
};

static int manager_bus_register(Manager *m) {
        /* The properties (src/bus-names.h's), then the methods; built once: the bus keeps
         * pointing at it. */
        static sd_bus_vtable vtable[1 + _BUS_PROPERTY_MAX + ELEMENTSOF(manager_methods)];
        int r;

        assert(m && m->bus);
        if (vtable[0].type != _SD_BUS_VTABLE_START)
                (void) bus_vtable_build(BUS_OBJECT_MANAGER, manager_properties, manager_methods, vtable,
                                        ELEMENTSOF(vtable));
        r = sd_bus_add_object_vtable(m->bus, NULL, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE, vtable, m);
        if (r < 0)
                return log_error_errno(r, "Cannot register %s: %m", BUS_MANAGER_PATH);
        r = disk_bus_register(m);
        if (r < 0)
                return log_error_errno(r, "Cannot register the disk objects: %m");
        r = sd_bus_add_object_manager(m->bus, NULL, BUS_MANAGER_PATH);
        if (r < 0)
                return log_error_errno(r, "Cannot add the object manager: %m");
        r = sd_bus_add_object(m->bus, NULL, BUS_MANAGER_PATH, on_manager_message, m);
        if (r < 0)
                return log_error_errno(r, "Cannot add the object manager's own GetManagedObjects: %m");
        return 0;
}

int manager_connect_bus(Manager *m) {
        int r;

        assert(m && m->event);
        if (!m->bus) {
                r = sd_bus_open_system(&m->bus);
                if (r < 0)
                        return log_error_errno(r, "Cannot connect to the system bus: %m");
        }
        r = manager_bus_register(m);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Cannot attach the bus to the event loop: %m");
        return 0;
}

static int on_name_acquired(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (e) {
                log_error("Cannot own %s on the bus: %s", BUS_SERVICE, e->message);
                (void) sd_event_exit(m->event, -sd_bus_error_get_errno(e) ?: -EEXIST);
                return 0;
        }
        m->announcing = true;
        manager_notify_ready(m);
        return 0;
}

void manager_bus_announce(Manager *m) {
        int r;

        assert(m);
        if (!m->bus)
                return;         /* the tests' manager has none */
        r = sd_bus_request_name_async(m->bus, NULL, BUS_SERVICE, 0, on_name_acquired, m);
        if (r < 0) {
                log_error_errno(r, "Cannot request the bus name: %m");
                (void) sd_event_exit(m->event, r);
        }
}

void manager_bus_emit_applied(Manager *m, DiskObject *d, const Plan *report) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        int r;

        assert(m && d && report);
        if (!m->announcing)
                return;

        r = sd_bus_message_new_signal(m->bus, &sig, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE,
                                      BUS_SIGNAL_APPLIED);
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
        assert(m);
        if (m->announcing)
                (void) sd_bus_emit_properties_changed(m->bus, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE,
                                                      bus_property_name(BUS_MANAGER_WRITES_DONE),
                                                      bus_property_name(BUS_MANAGER_WRITES_SKIPPED),
                                                      bus_property_name(BUS_MANAGER_WRITE_ERRORS),
                                                      bus_property_name(BUS_MANAGER_DRIFT_CORRECTED),
                                                      NULL);
}

void manager_bus_emit_config(Manager *m) {
        assert(m);
        if (m->announcing)
                (void) sd_bus_emit_properties_changed(m->bus, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE,
                                                      bus_property_name(BUS_MANAGER_CONFIG_FILES),
                                                      bus_property_name(BUS_MANAGER_CONFIG_ERRORS),
                                                      NULL);
}
