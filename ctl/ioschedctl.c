/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ioschedctl: look at and change the I/O policy that ioschedd keeps, over D-Bus.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "attr.h"
#include "cli.h"
#include "iocost.h"
#include "json.h"
#include "log.h"
#include "util.h"

#define BUS_NAME "org.iosched1"
#define MANAGER_PATH "/org/iosched1"
#define MANAGER_IFACE "org.iosched1.Manager"
#define DISK_IFACE "org.iosched1.Disk"

static struct {
        bool json, runtime, ask_password, legend;
} arg = { .ask_password = true, .legend = true };

typedef struct Desired {
        char *key, *value, *rule, *file;
        uint32_t line;
} Desired;

typedef struct DiskInfo {
        char *path;
        char *name, *transport, *scheduler, *model, *serial, *wwn, *last_error;
        bool rotational;
        uint32_t queues;
        uint64_t last_applied;
        int64_t attrs[_ATTR_MAX];       /* by the table's property names; -1 unknown */
        char **tunables;                /* name, value, name, value, ... */
        char *iocost[_ATTR_FILE_MAX];   /* IOCostModel, IOCostQoS: the kernel's line, "" none */
        bool iocost_other_writer;
        char **rules;
        Desired *desired;
        size_t n_desired;
} DiskInfo;

/* The string properties of org.iosched1.Disk, and where they go. */
static const struct {
        const char *name;
        size_t offset;
} string_props[] = {
        { "Name", offsetof(DiskInfo, name) }, { "Transport", offsetof(DiskInfo, transport) },
        { "Scheduler", offsetof(DiskInfo, scheduler) }, { "Model", offsetof(DiskInfo, model) },
        { "Serial", offsetof(DiskInfo, serial) }, { "WWN", offsetof(DiskInfo, wwn) },
        { "LastError", offsetof(DiskInfo, last_error) },
        { "IOCostQoS", offsetof(DiskInfo, iocost[ATTR_FILE_IOCOST_QOS]) },
        { "IOCostModel", offsetof(DiskInfo, iocost[ATTR_FILE_IOCOST_MODEL]) },
};

static char **string_field(DiskInfo *d, size_t i) {
        return (char **) ((uint8_t *) d + string_props[i].offset);
}

static char **string_prop(DiskInfo *d, const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(string_props); i++)
                if (streq(name, string_props[i].name))
                        return string_field(d, i);
        return NULL;
}

static void disk_info_done(DiskInfo *d) {
        free(d->path);
        for (size_t i = 0; i < ELEMENTSOF(string_props); i++)
                free(*string_field(d, i));
        strv_free(d->tunables);
        strv_free(d->rules);
        for (size_t i = 0; i < d->n_desired; i++) {
                free(d->desired[i].key);
                free(d->desired[i].value);
                free(d->desired[i].rule);
                free(d->desired[i].file);
        }
        free(d->desired);
}

static int error_of(const sd_bus_error *e, int r) {
        if (sd_bus_error_is_set(e))
                log_error("%s (%s)", e->message ?: e->name, e->name);
        else
                log_error_errno(r, "Failed: %m");
        return r < 0 ? r : -EIO;
}

static int read_string(sd_bus_message *m, char **dst) {
        const char *s;
        int r = sd_bus_message_read_basic(m, 's', &s);
        if (r < 0)
                return r;
        return free_and_strdup(dst, s);
}

/* Reads an a{sv} of org.iosched1.Disk (the container must be next). */
static int read_disk_props(sd_bus_message *m, DiskInfo *d) {
        int r;

        for (size_t i = 0; i < _ATTR_MAX; i++)
                d->attrs[i] = -1;
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *name, *contents;
                char type;

                r = sd_bus_message_read_basic(m, 's', &name);
                if (r < 0)
                        return r;
                r = sd_bus_message_peek_type(m, &type, &contents);
                if (r < 0)
                        return r;
                r = sd_bus_message_enter_container(m, 'v', contents);
                if (r < 0)
                        return r;

                char **str = string_prop(d, name);

                if (str)
                        r = read_string(m, str);
                else if (streq(name, "IOCostOtherWriter")) {
                        int b;
                        r = sd_bus_message_read_basic(m, 'b', &b);
                        d->iocost_other_writer = b;
                }
                else if (streq(name, "Rotational")) {
                        int b;
                        r = sd_bus_message_read_basic(m, 'b', &b);
                        d->rotational = b;
                } else if (streq(name, "Queues"))
                        r = sd_bus_message_read_basic(m, 'u', &d->queues);
                else if (streq(name, "LastApplied"))
                        r = sd_bus_message_read_basic(m, 't', &d->last_applied);
                else if (streq(name, "Tunables")) {
                        const char *k, *v;

                        r = sd_bus_message_enter_container(m, 'a', "{ss}");
                        while (r >= 0 && (r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0)
                                if (strv_extend(&d->tunables, k) < 0 || strv_extend(&d->tunables, v) < 0)
                                        return -ENOMEM;
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                } else if (streq(name, "MatchedRules")) {
                        const char *rule, *file;
                        uint32_t line;

                        r = sd_bus_message_enter_container(m, 'a', "(ssu)");
                        while (r >= 0 && (r = sd_bus_message_read(m, "(ssu)", &rule, &file, &line)) > 0)
                                if (strv_extend(&d->rules, rule) < 0)
                                        return -ENOMEM;
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                } else if (streq(name, "Desired")) {
                        const char *k, *v, *rule, *file;
                        uint32_t line;

                        r = sd_bus_message_enter_container(m, 'a', "(ssssu)");
                        while (r >= 0 &&
                               (r = sd_bus_message_read(m, "(ssssu)", &k, &v, &rule, &file, &line)) > 0) {
                                Desired *a = realloc(d->desired, sizeof(Desired) * (d->n_desired + 1));
                                if (!a)
                                        return -ENOMEM;
                                d->desired = a;
                                a[d->n_desired++] = (Desired) {
                                        .key = strdup(k), .value = strdup(v), .rule = strdup(rule),
                                        .file = strdup(file), .line = line,
                                };
                        }
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                } else {
                        bool done = false;

                        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                                const AttrInfo *a = attr_get(id);

                                if (a->property && streq(a->property, name) && streq(contents, "x")) {
                                        r = sd_bus_message_read_basic(m, 'x', &d->attrs[id]);
                                        done = true;
                                        break;
                                }
                        }
                        if (!done)
                                r = sd_bus_message_skip(m, contents);
                }
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int compare_disks(const void *a, const void *b) {
        return strverscmp(((const DiskInfo *) a)->name, ((const DiskInfo *) b)->name);
}

/* Every disk with its properties, in one call (the object manager). */
static int get_disks(sd_bus *bus, DiskInfo **ret, size_t *ret_n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        DiskInfo *l = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, MANAGER_PATH, "org.freedesktop.DBus.ObjectManager",
                               "GetManagedObjects", &error, &reply, NULL);
        if (r < 0) {
                r = error_of(&error, r);
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}")) > 0) {
                const char *path;

                r = sd_bus_message_read_basic(reply, 'o', &path);
                if (r >= 0)
                        r = sd_bus_message_enter_container(reply, 'a', "{sa{sv}}");
                while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sa{sv}")) > 0) {
                        const char *iface;

                        r = sd_bus_message_read_basic(reply, 's', &iface);
                        if (r < 0)
                                break;
                        if (streq(iface, DISK_IFACE)) {
                                DiskInfo *a = realloc(l, sizeof(DiskInfo) * (n + 1));
                                if (!a) {
                                        r = -ENOMEM;
                                        break;
                                }
                                l = a;
                                l[n] = (DiskInfo) { .path = strdup(path) };
                                r = read_disk_props(reply, &l[n]);
                                n++;
                        } else
                                r = sd_bus_message_skip(reply, "a{sv}");
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        disk_info_done(&l[i]);
                free(l);
                return log_error_errno(r, "Cannot parse the reply: %m");
        }
        for (size_t i = 0; i < n; i++)
                if (!l[i].name)
                        l[i].name = strdup("?");
        qsort(l, n, sizeof(DiskInfo), compare_disks);
        *ret = l;
        *ret_n = n;
        return 0;
}

static int get_disk(sd_bus *bus, const char *name, DiskInfo *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *path;
        DiskInfo d = {};
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, MANAGER_PATH, MANAGER_IFACE, "GetDisk", &error, &reply,
                               "s", name);
        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &path);
        if (r >= 0) {
                d.path = strdup(path);
                reply = sd_bus_message_unref(reply);
                r = sd_bus_call_method(bus, BUS_NAME, d.path, "org.freedesktop.DBus.Properties", "GetAll",
                                       &error, &reply, "s", DISK_IFACE);
        }
        if (r < 0) {
                r = error_of(&error, r);
                sd_bus_error_free(&error);
                disk_info_done(&d);
                return r;
        }
        r = read_disk_props(reply, &d);
        if (r < 0) {
                disk_info_done(&d);
                return log_error_errno(r, "Cannot parse the reply: %m");
        }
        *ret = d;
        return 0;
}

static const char *attr_text(const DiskInfo *d, AttrId id, char *buf, size_t size) {
        int64_t v = d->attrs[id];

        if (v < 0)
                return "-";
        if (id == ATTR_WBT_LAT_USEC && v == 0)
                return "off";
        snprintf(buf, size, "%" PRIi64, v);
        return buf;
}

static const char *time_text(uint64_t usec, char *buf, size_t size) {
        time_t t = (time_t) (usec / 1000000);
        struct tm tm;

        if (usec == 0)
                return "never";
        localtime_r(&t, &tm);
        strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
        return buf;
}

static int verb_status(sd_bus *bus, char **args) {
        DiskInfo *l = NULL;
        size_t n = 0;
        int r;

        r = get_disks(bus, &l, &n);
        if (r < 0)
                return r;

        if (!arg.json && arg.legend)
                printf("%-12s %-9s %-12s %8s %7s %10s %-16s %-19s %s\n", "DISK", "TRANSPORT", "SCHEDULER",
                       "WBT_USEC", "NR_REQ", "READ_AHEAD", "RULE", "LAST APPLIED", "ERROR");
        if (arg.json)
                fputc('[', stdout);
        for (size_t i = 0; i < n; i++) {
                const DiskInfo *d = &l[i];
                _cleanup_(freep) char *rules = strv_join(d->rules, ",");
                char b1[32], b2[32], b3[32], b4[32];

                if (arg.json) {
                        fputs(i > 0 ? ",\n{" : "{", stdout);
                        const JsonMember m[] = {
                                { "disk", d->name }, { "transport", d->transport },
                                { "scheduler", d->scheduler } };

                        json_members(stdout, m, ELEMENTSOF(m));
                        printf(",\"wbt_lat_usec\":%" PRIi64 ",\"nr_requests\":%" PRIi64
                               ",\"read_ahead_kb\":%" PRIi64 ",\"rotational\":%s,\"queues\":%u",
                               d->attrs[ATTR_WBT_LAT_USEC], d->attrs[ATTR_NR_REQUESTS],
                               d->attrs[ATTR_READ_AHEAD_KB], d->rotational ? "true" : "false", d->queues);
                        fputs(",\"rules\":[", stdout);
                        for (size_t j = 0; d->rules && d->rules[j]; j++) {
                                if (j > 0)
                                        fputc(',', stdout);
                                json_string(stdout, d->rules[j]);
                        }
                        fputs("],\"iocost_qos\":", stdout);
                        json_string(stdout, d->iocost[ATTR_FILE_IOCOST_QOS] && *d->iocost[ATTR_FILE_IOCOST_QOS]
                                                    ? d->iocost[ATTR_FILE_IOCOST_QOS] : NULL);
                        fputs(",\"iocost_model\":", stdout);
                        json_string(stdout, d->iocost[ATTR_FILE_IOCOST_MODEL] && *d->iocost[ATTR_FILE_IOCOST_MODEL]
                                                    ? d->iocost[ATTR_FILE_IOCOST_MODEL] : NULL);
                        printf(",\"iocost_other_writer\":%s", d->iocost_other_writer ? "true" : "false");
                        printf(",\"last_applied_usec\":%" PRIu64 ",\"error\":", d->last_applied);
                        json_string(stdout, d->last_error && *d->last_error ? d->last_error : NULL);
                        fputc('}', stdout);
                        continue;
                }
                printf("%-12s %-9s %-12s %8s %7s %10s %-16s %-19s %s\n", d->name, strna(d->transport),
                       d->scheduler && *d->scheduler ? d->scheduler : "-",
                       attr_text(d, ATTR_WBT_LAT_USEC, b1, sizeof(b1)),
                       attr_text(d, ATTR_NR_REQUESTS, b2, sizeof(b2)),
                       attr_text(d, ATTR_READ_AHEAD_KB, b3, sizeof(b3)),
                       rules && *rules ? rules : "-", time_text(d->last_applied, b4, sizeof(b4)),
                       d->last_error && *d->last_error ? d->last_error : "-");
        }
        if (arg.json)
                puts("]");
        else
                for (size_t i = 0; i < n; i++)
                        if (l[i].iocost_other_writer)
                                printf("%s: systemd's 90-iocost.rules also writes io.cost.qos and io.cost.model "
                                       "(two writers; see iosched.conf(5))\n", l[i].name);
        for (size_t i = 0; i < n; i++)
                disk_info_done(&l[i]);
        free(l);
        return 0;
}

/* An iocost key's current value, from the kernel's line on the bus; NULL without one. */
static const char *iocost_text(const DiskInfo *d, const AttrInfo *a, char *buf, size_t size) {
        _cleanup_(iocost_state_done) IocostState st = {};
        _cleanup_(freep) char *line = NULL;
        const char *raw = a->file < _ATTR_FILE_MAX ? d->iocost[a->file] : NULL;

        if (!raw || !*raw || a->file == ATTR_FILE_NONE)
                return NULL;
        line = strdup_printf("0:0 %s", raw);
        if (!line || iocost_parse_line(a->file, line, NULL, &st) < 0 ||
            value_sysfs_string(a, st.num[a->id], buf, size) < 0)
                return NULL;
        return buf;
}

static const Desired *find_desired(const DiskInfo *d, const char *key) {
        for (size_t i = 0; i < d->n_desired; i++)
                if (streq(d->desired[i].key, key))
                        return &d->desired[i];
        return NULL;
}

static const char *tunable_value(const DiskInfo *d, const char *name) {
        for (size_t i = 0; d->tunables && d->tunables[i] && d->tunables[i + 1]; i += 2)
                if (streq(d->tunables[i], name))
                        return d->tunables[i + 1];
        return NULL;
}

static void explain_line(const char *key, const char *current, const Desired *w, bool *first) {
        if (arg.json) {
                fputs(*first ? "{" : ",\n{", stdout);
                *first = false;
                const JsonMember m[] = {
                        { "key", key }, { "current", current }, { "desired", w ? w->value : NULL },
                        { "rule", w ? w->rule : NULL }, { "file", w ? w->file : NULL } };

                json_members(stdout, m, ELEMENTSOF(m));
                printf(",\"line\":%u}", w ? w->line : 0);
                return;
        }
        if (w)
                printf("%-24s %-14s %-14s %s:%u (rule %s)\n", key, strna(current), w->value, w->file,
                       w->line, w->rule);
        else
                printf("%-24s %-14s %-14s %s\n", key, strna(current), "-", "kernel default");
}

static int verb_explain(sd_bus *bus, char **args) {
        _cleanup_(disk_info_done) DiskInfo d = {};
        bool first = true;
        int r;

        r = get_disk(bus, args[0], &d);
        if (r < 0)
                return r;
        if (arg.json)
                fputs("{\"disk\":", stdout), json_string(stdout, d.name), fputs(",\"keys\":[", stdout);
        else if (arg.legend)
                printf("%s (%s%s)\n%-24s %-14s %-14s %s\n", d.name, strna(d.transport),
                       d.rotational ? ", rotational" : "", "KEY", "CURRENT", "DESIRED", "SET BY");

        /* Every key of the attribute table, then the tunables: set by a file:line, or left
         * at what the kernel has. */
        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                const AttrInfo *a = attr_get(id);
                char buf[32];

                if (id == ATTR_IOSCHED)
                        continue;
                const char *cur;

                if (a->file != ATTR_FILE_QUEUE) {
                        /* iocost keys: those set, and those of a file with a line */
                        cur = iocost_text(&d, a, buf, sizeof(buf));
                        if (cur || find_desired(&d, a->key))
                                explain_line(a->key, cur, find_desired(&d, a->key), &first);
                        continue;
                }
                if (id == ATTR_SCHEDULER)
                        cur = d.scheduler && *d.scheduler ? d.scheduler : NULL;
                else
                        cur = d.attrs[id] < 0 ? NULL : attr_text(&d, id, buf, sizeof(buf));
                explain_line(a->key, cur, find_desired(&d, a->key), &first);
        }
        for (size_t i = 0; d.tunables && d.tunables[i] && d.tunables[i + 1]; i += 2) {
                _cleanup_(freep) char *key = strdup_printf(IOSCHED_KEY_PREFIX "%s", d.tunables[i]);
                if (!key)
                        return log_oom();
                explain_line(key, d.tunables[i + 1], find_desired(&d, key), &first);
        }
        /* Desired tunables the current scheduler does not have. */
        for (size_t i = 0; i < d.n_desired; i++) {
                const char *t = startswith(d.desired[i].key, IOSCHED_KEY_PREFIX);
                if (t && !tunable_value(&d, t))
                        explain_line(d.desired[i].key, NULL, &d.desired[i], &first);
        }
        if (arg.json)
                printf("],\"iocost_other_writer\":%s}\n", d.iocost_other_writer ? "true" : "false");
        else if (d.iocost_other_writer)
                printf("note: systemd's 90-iocost.rules also writes io.cost.qos and io.cost.model for %s "
                       "(two writers; see iosched.conf(5))\n", d.name);
        return 0;
}

static int plan_one(sd_bus *bus, const char *name, bool *first, bool quiet_gone) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *key, *cur, *want, *action;
        bool any = false;
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, MANAGER_PATH, MANAGER_IFACE, "Plan", &error, &reply,
                               "s", name);
        if (r < 0 && quiet_gone && sd_bus_error_has_name(&error, "org.iosched1.Error.NoSuchDisk")) {
                /* Listed a moment ago, gone now: not an error of a plan of every disk. */
                sd_bus_error_free(&error);
                return 0;
        }
        if (r < 0) {
                r = error_of(&error, r);
                sd_bus_error_free(&error);
                return r;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ssss)");
        if (arg.json) {
                fputs(*first ? "{" : ",\n{", stdout);
                fputs("\"disk\":", stdout);
                json_string(stdout, name);
                fputs(",\"actions\":[", stdout);
        } else if (!*first)
                fputc('\n', stdout);
        *first = false;
        while (r >= 0 && (r = sd_bus_message_read(reply, "(ssss)", &key, &cur, &want, &action)) > 0) {
                if (arg.json) {
                        fputs(any ? ",{" : "{", stdout);
                        const JsonMember m[] = {
                                { "key", key }, { "current", *cur ? cur : NULL }, { "desired", want },
                                { "action", action } };

                        json_members(stdout, m, ELEMENTSOF(m));
                        fputc('}', stdout);
                } else {
                        if (!any)
                                printf("%s\n", name);
                        printf("  %-22s %-14s %-14s %s\n", key, *cur ? cur : "-", want, action);
                }
                any = true;
        }
        if (r < 0)
                return log_error_errno(r, "Cannot parse the reply: %m");
        if (arg.json)
                fputs("]}", stdout);
        else if (!any)
                printf("%s\n  no rule matches: nothing to do\n", name);
        return 0;
}

static int verb_plan(sd_bus *bus, char **args) {
        bool first = true;
        int r = 0;

        if (arg.json)
                fputc('[', stdout);
        if (args[0])
                r = plan_one(bus, args[0], &first, false);
        else {
                DiskInfo *l = NULL;
                size_t n = 0;

                r = get_disks(bus, &l, &n);
                for (size_t i = 0; r >= 0 && i < n; i++)
                        r = plan_one(bus, l[i].name, &first, true);
                for (size_t i = 0; i < n; i++)
                        disk_info_done(&l[i]);
                free(l);
        }
        if (arg.json)
                puts("]");
        return r;
}

/* Send a mutating call and wait for its reply: writes wait for grace periods, and a few hundred
 * disks take seconds. */
static int call_wait(sd_bus *bus, sd_bus_message *m) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call(bus, m, 300 * 1000000ULL, &error, NULL);
        if (r < 0) {
                r = error_of(&error, r);
                sd_bus_error_free(&error);
        }
        return r;
}

static int call_simple(sd_bus *bus, const char *method, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, MANAGER_PATH, MANAGER_IFACE, method);
        if (r < 0)
                return log_error_errno(r, "Cannot create the call: %m");
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0)
                        return log_error_errno(r, "Cannot create the call: %m");
        }
        return call_wait(bus, m);
}

static int verb_apply(sd_bus *bus, char **args) {
        return args[0] ? call_simple(bus, "Apply", "s", args[0]) : call_simple(bus, "ApplyAll", NULL);
}

static int verb_reload(sd_bus *bus, char **args) {
        return call_simple(bus, "Reload", NULL);
}

static int verb_reset(sd_bus *bus, char **args) {
        return call_simple(bus, "ResetPolicy", "sb", args[0], arg.runtime);
}

static int verb_set(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_NAME, MANAGER_PATH, MANAGER_IFACE, "SetPolicy");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", args[0]);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        for (char **a = args + 1; r >= 0 && *a; a++) {
                _cleanup_(freep) char *key = NULL;
                const char *eq = strchr(*a, '=');

                if (!eq || eq == *a) {
                        log_error("Expected KEY=VALUE, got \"%s\".", *a);
                        return -EINVAL;
                }
                key = strndup(*a, eq - *a);
                if (!key)
                        return log_oom();
                /* Values go as strings: the daemon parses them as the config file would. */
                r = sd_bus_message_append(m, "{sv}", key, "s", eq + 1);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "b", arg.runtime);
        if (r < 0)
                return log_error_errno(r, "Cannot create the call: %m");
        return call_wait(bus, m);
}

/* From the attribute and tunable tables: shell completion asks the program, not a copy. */
static int list_keys(void) {
        _cleanup_(strv_freep) char **keys = NULL;

        if (setting_keys(&keys) < 0)
                return log_oom();
        for (char **k = keys; *k; k++)
                puts(*k);
        return 0;
}

static void help(void) {
        printf("%s [OPTIONS...] COMMAND ...\n\n"
               "Look at and change the I/O policy ioschedd keeps.\n\n"
               "Commands:\n"
               "  status                   Every disk: scheduler, wbt, nr_requests, read-ahead,\n"
               "                           matching rules, last apply, last error\n"
               "  explain DISK             Each key of a disk: current value, desired value and\n"
               "                           the file:line that sets it, or \"kernel default\"\n"
               "  plan [DISK]              What applying would write (nothing is written)\n"
               "  apply [DISK]             Bring one disk, or every disk, to its policy\n"
               "  set DISK KEY=VALUE...    Save settings for a disk (a drop-in) and apply them\n"
               "  reset DISK               Remove the settings saved for a disk\n"
               "  reload                   Read the configuration again and apply it\n\n"
               "Options:\n"
               "  -h --help                Show this help\n"
               "     --version             Show the version\n"
               "     --json                JSON output (status, explain, plan)\n"
               "     --runtime             set, reset: until reboot (/run/iosched.d), not /etc\n"
               "     --no-legend           No column headers\n"
               "     --no-ask-password     Do not ask for a password (polkit) \n"
               "     --list-keys           Print the keys \"set\" takes, one per line\n\n"
               "The bus is the system bus, or $DBUS_SYSTEM_BUS_ADDRESS.\n",
               program_invocation_short_name);
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_JSON = _CLI_ARG_FIRST,
                ARG_RUNTIME,
                ARG_NO_LEGEND,
                ARG_NO_ASK_PASSWORD,
                ARG_LIST_KEYS,
        };
        static const struct option options[] = {
                CLI_OPTIONS_COMMON,
                { "json", no_argument, NULL, ARG_JSON },
                { "runtime", no_argument, NULL, ARG_RUNTIME },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "no-ask-password", no_argument, NULL, ARG_NO_ASK_PASSWORD },
                { "list-keys", no_argument, NULL, ARG_LIST_KEYS },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                CLI_CASES_COMMON(help);
                case ARG_JSON:
                        arg.json = true;
                        break;
                case ARG_RUNTIME:
                        arg.runtime = true;
                        break;
                case ARG_NO_LEGEND:
                        arg.legend = false;
                        break;
                case ARG_NO_ASK_PASSWORD:
                        arg.ask_password = false;
                        break;
                case ARG_LIST_KEYS:
                        return list_keys();
                default:
                        return -EINVAL;
                }
        return 1;
}

int main(int argc, char *argv[]) {
        static const struct {
                const char *name;
                unsigned min_args, max_args;
                int (*run)(sd_bus *bus, char **args);
        } verbs[] = {
                { "status", 0, 0, verb_status },
                { "explain", 1, 1, verb_explain },
                { "plan", 0, 1, verb_plan },
                { "apply", 0, 1, verb_apply },
                { "set", 2, UINT32_MAX, verb_set },
                { "reset", 1, 1, verb_reset },
                { "reload", 0, 0, verb_reload },
        };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *verb;
        unsigned n;
        int r;

        log_set_prefix("ioschedctl");
        /* Read by people and scripts, never by journald: no "<N>" priorities. */
        log_set_console_prefix(0);
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;

        verb = optind < argc ? argv[optind] : "status";
        n = optind < argc ? (unsigned) (argc - optind - 1) : 0;
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                if (!streq(verbs[i].name, verb))
                        continue;
                if (n < verbs[i].min_args || n > verbs[i].max_args) {
                        log_error("Wrong number of arguments for \"%s\"; see --help.", verb);
                        return EXIT_USAGE;
                }
                r = sd_bus_open_system(&bus);
                if (r < 0) {
                        log_error_errno(r, "Cannot connect to the system bus: %m");
                        return 1;
                }
                (void) sd_bus_set_allow_interactive_authorization(bus, arg.ask_password);
                r = verbs[i].run(bus, optind < argc ? argv + optind + 1 : argv + argc);
                return r < 0 ? 1 : 0;
        }
        log_error("Unknown command \"%s\"; see --help.", verb);
        return EXIT_USAGE;
}
