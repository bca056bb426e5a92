/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ioschedctl: look at and change the I/O policy that ioschedd keeps, over D-Bus.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "attr.h"
#include "bus-names.h"
#include "cli.h"
#include "iocost.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "report.h"
#include "util.h"
#include "writers.h"

static struct {
        bool json, runtime, ask_password, legend;
        const char *reason;
        char **command;         /* after "--": hold's COMMAND */
        int exit_status;        /* hold: COMMAND's */
} arg = { .ask_password = true, .legend = true };

typedef struct Desired {
        char *key, *value, *rule, *file;
        uint32_t line;
} Desired;

/* What ioschedctl shows of an org.iosched1.Disk. */
typedef struct DiskInfo {
        char *path;
        char *name, *transport, *last_error;
        char *scheduler;                /* Scheduler: Current's scheduler, in the list */
        char *role, *dm_kind, *upper;   /* Stack */
        bool rotational;
        uint32_t queues;
        uint64_t last_applied;
        char **current;                 /* Current: key, value, key, value, ... */
        OtherWriters writers;           /* OtherWriters */
        char **rules;
        Desired *desired;
        size_t n_desired;
        char **mismatched;              /* keys of desired not at their value */
        char **holds;                   /* Holds, each as explain shows it */
} DiskInfo;

/* The string properties shown, and where they go. */
static const size_t string_fields[_BUS_PROPERTY_MAX] = {
        [BUS_DISK_NAME] = offsetof(DiskInfo, name),
        [BUS_DISK_TRANSPORT] = offsetof(DiskInfo, transport),
        [BUS_DISK_LAST_ERROR] = offsetof(DiskInfo, last_error),
        [BUS_DISK_SCHEDULER] = offsetof(DiskInfo, scheduler),
};

static char **string_field(DiskInfo *d, BusPropertyId p) {
        return string_fields[p] ? (char **) ((uint8_t *) d + string_fields[p]) : NULL;
}

static void disk_info_done(DiskInfo *d) {
        free(d->path);
        for (BusPropertyId p = 0; p < _BUS_PROPERTY_MAX; p++)
                if (string_field(d, p))
                        free(*string_field(d, p));
        strv_free(d->current);
        strv_free(d->rules);
        strv_free(d->mismatched);
        strv_free(d->holds);
        other_writers_done(&d->writers);
        free(d->role);
        free(d->dm_kind);
        free(d->upper);
        for (size_t i = 0; i < d->n_desired; i++) {
                free(d->desired[i].key);
                free(d->desired[i].value);
                free(d->desired[i].rule);
                free(d->desired[i].file);
        }
        free(d->desired);
}

/* The current value of @key ("scheduler", "iosched.fifo_batch", "iocost.rpct"), or NULL when
 * the kernel shows none. */
static const char *current_value(const DiskInfo *d, const char *key) {
        for (char **c = d->current; c && c[0] && c[1]; c += 2)
                if (streq(c[0], key))
                        return c[1];
        return NULL;
}

static const char *current_of(const DiskInfo *d, AttrId id) {
        return current_value(d, attr_get(id)->key);
}

/* A number of the attribute table as JSON shows it: -1 when unknown. */
static int64_t current_num(const DiskInfo *d, AttrId id) {
        const char *text = current_of(d, id);
        Value v = {};

        if (!text || value_parse(attr_get(id), text, &v, NULL) < 0)
                return -1;
        return v.num;
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

static int read_bool(sd_bus_message *m, bool *dst) {
        int b, r = sd_bus_message_read_basic(m, 'b', &b);

        if (r >= 0)
                *dst = b;
        return r;
}

/* Current: a{ss} into key, value, key, value, ... */
static int read_current(sd_bus_message *m, DiskInfo *d) {
        const char *k, *v;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{ss}");
        while (r >= 0 && (r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0)
                if (strv_extend(&d->current, k) < 0 || strv_extend(&d->current, v) < 0)
                        return -ENOMEM;
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_rules(sd_bus_message *m, DiskInfo *d) {
        const char *rule, *file;
        uint32_t line;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ssu)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(ssu)", &rule, &file, &line)) > 0)
                if (strv_extend(&d->rules, rule) < 0)
                        return -ENOMEM;
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_desired(sd_bus_message *m, DiskInfo *d) {
        const char *k, *v, *rule, *file;
        uint32_t line;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ssssu)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(ssssu)", &k, &v, &rule, &file, &line)) > 0) {
                Desired *a = reallocarray(d->desired, d->n_desired + 1, sizeof(Desired));

                if (!a)
                        return -ENOMEM;
                Desired *x = &a[d->n_desired++];

                d->desired = a;
                *x = (Desired) {
                        .key = strdup(k), .value = strdup(v), .rule = strdup(rule),
                        .file = strdup(file), .line = line,
                };
                if (!x->key || !x->value || !x->rule || !x->file)
                        return -ENOMEM;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static const char *time_text(uint64_t usec, char *buf, size_t size);

/* OtherWriters: each as the core describes it (writer_describe()). */
static int read_writers(sd_bus_message *m, DiskInfo *d) {
        const char *key, *owner, *source, *file, *value, *when;
        uint32_t line;
        int certain, r;

        r = sd_bus_message_enter_container(m, 'a', "(ssssussb)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(ssssussb)", &key, &owner, &source, &file, &line,
                                                   &value, &when, &certain)) > 0) {
                Writer *a = reallocarray(d->writers.writers, d->writers.n + 1, sizeof(Writer));

                if (!a)
                        return -ENOMEM;
                d->writers.writers = a;
                r = writer_from_record(key, owner, source, file, line, value, when, certain,
                                       &a[d->writers.n]);
                if (r == -EINVAL)
                        continue;       /* a newer daemon's key or owner: not shown */
                if (r < 0)
                        return r;
                d->writers.n++;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

/* Whether a writer of @d writes systemd-iocost's lines while a rule sets iocost keys. */
static bool iocost_two_writers(const DiskInfo *d) {
        if (!other_writers_find(&d->writers, ATTR_IOCOST_ENABLE, NULL, WRITER_KIND_BIT(WRITER_SYSTEMD_IOCOST)))
                return false;
        for (size_t i = 0; i < d->n_desired; i++)
                if (startswith(d->desired[i].key, "iocost."))
                        return true;
        return false;
}

/* Holds: "hold ID by HOLDER since TIME (REASON): KEY=VALUE ..." each. */
static int read_holds(sd_bus_message *m, DiskInfo *d) {
        const char *holder, *reason, *k, *v;
        uint64_t since;
        uint32_t id;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ussta{ss})");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "ussta{ss}")) > 0) {
                _cleanup_(strv_freep) char **kv = NULL;
                _cleanup_(freep) char *settings = NULL;
                char buf[32];

                r = sd_bus_message_read(m, "usst", &id, &holder, &reason, &since);
                r = r < 0 ? r : sd_bus_message_enter_container(m, 'a', "{ss}");
                while (r >= 0 && (r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0)
                        if (strv_push(&kv, strdup_printf("%s=%s", k, v)) < 0)
                                return -ENOMEM;
                /* out of the settings, then out of the hold */
                for (int i = 0; i < 2 && r >= 0; i++)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
                settings = strv_join(kv, " ");
                if (!settings || strv_push(&d->holds, strdup_printf("hold %" PRIu32 " by %s since %s (%s): %s", id,
                                                                     holder, time_text(since, buf, sizeof(buf)),
                                                                     reason, settings)) < 0)
                        return -ENOMEM;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_stack(sd_bus_message *m, DiskInfo *d) {
        const char *role, *kind, *upper;
        int r = sd_bus_message_read(m, "(sss)", &role, &kind, &upper);

        if (r < 0)
                return r;
        if (free_and_strdup(&d->role, role) < 0 || free_and_strdup(&d->dm_kind, kind) < 0 ||
            free_and_strdup(&d->upper, upper) < 0)
                return -ENOMEM;
        return 0;
}

/* Device: Transport, Rotational, Queues, Stack. */
static int read_device(sd_bus_message *m, DiskInfo *d) {
        int r = sd_bus_message_enter_container(m, 'r', "sbu(sss)");

        if (r >= 0)
                r = read_string(m, &d->transport);
        if (r >= 0)
                r = read_bool(m, &d->rotational);
        if (r >= 0)
                r = sd_bus_message_read_basic(m, 'u', &d->queues);
        if (r >= 0)
                r = read_stack(m, d);
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

/* "multipath-path of dm-0", "dm LVM", "disk": the role as status and explain show it. */
static char *stack_text(const DiskInfo *d) {
        return strdup_printf("%s%s%s%s%s", d->role ?: "-", d->dm_kind && *d->dm_kind ? " " : "",
                             strempty(d->dm_kind), d->upper && *d->upper ? " of " : "", strempty(d->upper));
}

/* The value of one property, the variant entered; properties not shown are skipped. */
static int read_disk_prop(sd_bus_message *m, const char *name, const char *contents, DiskInfo *d) {
        int p = bus_property_from_name(BUS_OBJECT_DISK, name);

        /* Only the signatures of src/bus-names.h: another daemon's would not parse. */
        if (p < 0 || !streq(contents, bus_property(p)->signature))
                return sd_bus_message_skip(m, contents);
        if (string_field(d, p))
                return read_string(m, string_field(d, p));
        switch (p) {
        case BUS_DISK_DEVICE:
                return read_device(m, d);
        case BUS_DISK_ROTATIONAL:
                return read_bool(m, &d->rotational);
        case BUS_DISK_OTHER_WRITERS:
                return read_writers(m, d);
        case BUS_DISK_STACK:
                return read_stack(m, d);
        case BUS_DISK_QUEUES:
                return sd_bus_message_read_basic(m, 'u', &d->queues);
        case BUS_DISK_LAST_APPLIED:
                return sd_bus_message_read_basic(m, 't', &d->last_applied);
        case BUS_DISK_CURRENT:
                return read_current(m, d);
        case BUS_DISK_MATCHED_RULES:
                return read_rules(m, d);
        case BUS_DISK_DESIRED:
                return read_desired(m, d);
        case BUS_DISK_MISMATCHED:
                return sd_bus_message_read_strv(m, &d->mismatched);
        case BUS_DISK_HOLDS:
                return read_holds(m, d);
        default:
                return sd_bus_message_skip(m, contents);
        }
}

/* One {sv} of the a{sv}, the entry entered. */
static int read_disk_entry(sd_bus_message *m, DiskInfo *d) {
        const char *name, *contents;
        char type;
        int r;

        r = sd_bus_message_read_basic(m, 's', &name);
        if (r < 0)
                return r;
        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(m, 'v', contents);
        if (r < 0)
                return r;
        r = read_disk_prop(m, name, contents, d);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* Reads an a{sv} of org.iosched1.Disk (the container must be next). */
static int read_disk_props(sd_bus_message *m, DiskInfo *d) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = read_disk_entry(m, d);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

/* Which explicit properties a verb shows (not in GetAll or GetManagedObjects). */
typedef enum Explicit {
        EXPLICIT_CURRENT = 1 << 0,
        EXPLICIT_RULES = 1 << 1,
        EXPLICIT_DESIRED = 1 << 2,
        /* Desired only for a disk with other writers: the owner.defer and two-writers notes */
        EXPLICIT_DESIRED_IF_WRITERS = 1 << 3,
        EXPLICIT_ALL = EXPLICIT_CURRENT | EXPLICIT_RULES | EXPLICIT_DESIRED,
} Explicit;

/* One Properties.Get in flight. */
typedef struct Fetch {
        sd_bus_slot *slot;
        DiskInfo *d;
        const BusProperty *bp;
        size_t *pending;
        int *result;
} Fetch;

static int on_explicit(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const Fetch *f = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        int r;

        (*f->pending)--;
        if (e && sd_bus_error_has_name(e, SD_BUS_ERROR_UNKNOWN_OBJECT))
                return 0;       /* gone since it was listed: shown with what the list has */
        if (e)
                r = error_of(e, -EIO);
        else {
                r = sd_bus_message_enter_container(m, 'v', f->bp->signature);
                if (r >= 0)
                        r = read_disk_prop(m, f->bp->name, f->bp->signature, f->d);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r < 0 && *f->result >= 0)
                *f->result = r;
        return 0;
}

/* At most this many calls in flight: under dbus-daemon's max_replies_per_connection. */
#define FETCH_WINDOW 64

/* The property each bit of Explicit reads. */
static const struct {
        Explicit bit;
        BusPropertyId property;
} explicit_properties[] = {
        { EXPLICIT_CURRENT, BUS_DISK_CURRENT },
        { EXPLICIT_RULES, BUS_DISK_MATCHED_RULES },
        { EXPLICIT_DESIRED, BUS_DISK_DESIRED },
};

/* The explicit properties of @mask of the @n disks of @l, one Properties.Get each, FETCH_WINDOW
 * in flight rather than one round trip after the other. */
static int read_disks_explicit(sd_bus *bus, DiskInfo *l, size_t n, Explicit mask) {
        _cleanup_(freep) Fetch *f = calloc(MAX(n * ELEMENTSOF(explicit_properties), 1u), sizeof(Fetch));
        size_t n_fetch = 0, next = 0, pending = 0;
        int result = 0, r = 0;

        if (!f)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                Explicit m = mask | ((mask & EXPLICIT_DESIRED_IF_WRITERS) && l[i].writers.n > 0 ? EXPLICIT_DESIRED : 0);

                for (size_t p = 0; p < ELEMENTSOF(explicit_properties); p++)
                        if (m & explicit_properties[p].bit)
                                f[n_fetch++] = (Fetch) { NULL, &l[i], bus_property(explicit_properties[p].property),
                                                         &pending, &result };
        }
        while (r >= 0 && result >= 0 && (next < n_fetch || pending > 0)) {
                for (; r >= 0 && pending < FETCH_WINDOW && next < n_fetch; next++, pending++)
                        r = sd_bus_call_method_async(bus, &f[next].slot, BUS_SERVICE, f[next].d->path,
                                                     "org.freedesktop.DBus.Properties", "Get", on_explicit,
                                                     &f[next], "ss", BUS_DISK_INTERFACE, f[next].bp->name);
                if (r < 0)
                        break;
                r = sd_bus_process(bus, NULL);
                if (r == 0)
                        r = sd_bus_wait(bus, UINT64_MAX);
        }
        /* Calls still due (an error ended the loop) call back no more. */
        for (size_t i = 0; i < next; i++)
                sd_bus_slot_unref(f[i].slot);
        if (r < 0)
                return log_error_errno(r, "Cannot read the disks' properties: %m");
        return result;
}

static int compare_disks(const void *a, const void *b) {
        return strverscmp(((const DiskInfo *) a)->name, ((const DiskInfo *) b)->name);
}

/* Every disk with its properties, in one call (the object manager). */
static int get_disks(sd_bus *bus, Explicit mask, DiskInfo **ret, size_t *ret_n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        DiskInfo *l = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_call_method(bus, BUS_SERVICE, BUS_MANAGER_PATH, "org.freedesktop.DBus.ObjectManager",
                               "GetManagedObjects", &error, &reply, NULL);
        if (r < 0)
                return error_of(&error, r);
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
                        if (streq(iface, BUS_DISK_INTERFACE)) {
                                DiskInfo *a = realloc(l, sizeof(DiskInfo) * (n + 1));
                                if (!a) {
                                        r = -ENOMEM;
                                        break;
                                }
                                l = a;
                                l[n] = (DiskInfo) { .path = strdup(path) };
                                r = l[n].path ? read_disk_props(reply, &l[n]) : -ENOMEM;
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
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (!l[i].name)
                        r = free_and_strdup(&l[i].name, "?");
        if (r >= 0)
                r = read_disks_explicit(bus, l, n, mask);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        disk_info_done(&l[i]);
                free(l);
                return log_error_errno(r, "Cannot parse the reply: %m");
        }
        qsort(l, n, sizeof(DiskInfo), compare_disks);
        *ret = l;
        *ret_n = n;
        return 0;
}

static int get_disk(sd_bus *bus, const char *name, DiskInfo *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *path;
        DiskInfo d = {};
        int r;

        r = sd_bus_call_method(bus, BUS_SERVICE, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE, BUS_METHOD_GET_DISK, &error, &reply,
                               "s", name);
        if (r >= 0)
                r = sd_bus_message_read(reply, "o", &path);
        if (r >= 0) {
                d.path = strdup(path);
                if (!d.path)
                        return log_oom();
                reply = sd_bus_message_unref(reply);
                r = sd_bus_call_method(bus, BUS_SERVICE, d.path, "org.freedesktop.DBus.Properties", "GetAll",
                                       &error, &reply, "s", BUS_DISK_INTERFACE);
        }
        if (r < 0) {
                disk_info_done(&d);
                return error_of(&error, r);
        }
        r = read_disk_props(reply, &d);
        if (r >= 0)
                r = read_disks_explicit(bus, &d, 1, EXPLICIT_ALL);
        if (r < 0) {
                disk_info_done(&d);
                return log_error_errno(r, "Cannot parse the reply: %m");
        }
        *ret = d;
        return 0;
}

/* A current value in a table: "-" when the kernel shows none. */
static const char *attr_text(const DiskInfo *d, AttrId id) {
        const char *text = current_of(d, id);

        return text && *text ? text : "-";
}

/* The disk's io.cost.* line as the kernel prints it, from Current's keys of @file; NULL when
 * it has none (iocost never set up on the disk, or no io controller). */
static char *iocost_line(const DiskInfo *d, AttrFile file) {
        int64_t num[_ATTR_MAX] = {};

        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                if (attr_get(id)->file != file)
                        continue;
                if (!current_of(d, id))
                        return NULL;
                num[id] = current_num(d, id);
        }
        return iocost_format(file, num);
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

static const Desired *find_desired(const DiskInfo *d, const char *key) {
        for (size_t i = 0; i < d->n_desired; i++)
                if (streq(d->desired[i].key, key))
                        return &d->desired[i];
        return NULL;
}

/* "other_writers":[{"key":...,"owner":...,...}] of a disk. */
static void print_writers_json(const DiskInfo *d) {
        fputs(",\"other_writers\":[", stdout);
        for (size_t i = 0; i < d->writers.n; i++) {
                const Writer *w = &d->writers.writers[i];
                _cleanup_(freep) char *key = writer_key(w);
                const JsonMember m[] = {
                        { "key", key }, { "owner", writer_kind_to_string(w->kind) }, { "source", w->source },
                        { "file", w->file }, { "value", w->value }, { "when", w->when },
                };

                fputs(i > 0 ? ",{" : "{", stdout);
                json_members(stdout, m, ELEMENTSOF(m));
                printf(",\"line\":%u,\"certain\":%s}", w->line, w->applies == APPLIES_YES ? "true" : "false");
        }
        fputc(']', stdout);
}

/* The disk's other writers, one line each, with PREFIX: status names the disk, explain not; and
 * the two-writers note of systemd-iocost. A key left to its writer (owner.defer) says so. */
static void print_writers(const DiskInfo *d, const char *prefix) {
        const Desired *defer = find_desired(d, attr_get(ATTR_OWNER_DEFER)->key);
        _cleanup_(value_done) Value v = {};

        if (defer)
                (void) value_parse(attr_get(ATTR_OWNER_DEFER), defer->value, &v, NULL);
        for (size_t i = 0; i < d->writers.n; i++) {
                const Writer *w = &d->writers.writers[i];
                _cleanup_(freep) char *key = writer_key(w), *text = writer_describe(w);
                bool left = !w->dead && (v.num & WRITER_KIND_BIT(w->kind));

                printf("%s%s%s also written by %s%s\n", strempty(prefix), prefix ? ": " : "", strna(key),
                       strna(text), left ? "; left to it (owner.defer)" : "");
        }
        if (iocost_two_writers(d))
                printf("%s%s%s\n", prefix ?: "note", ": ", report_note_text(REPORT_NOTE_TWO_WRITERS));
}

static int verb_status(sd_bus *bus, char **args) {
        DiskInfo *l = NULL;
        size_t n = 0;
        int r;

        r = get_disks(bus, EXPLICIT_CURRENT | EXPLICIT_RULES | EXPLICIT_DESIRED_IF_WRITERS, &l, &n);
        if (r < 0)
                return r;

        if (!arg.json && arg.legend)
                printf("%-12s %-9s %-14s %-12s %8s %7s %10s %-16s %-19s %s\n", "DISK", "TRANSPORT", "ROLE",
                       "SCHEDULER", "WBT_USEC", "NR_REQ", "READ_AHEAD", "RULE", "LAST APPLIED", "ERROR");
        if (arg.json)
                fputc('[', stdout);
        for (size_t i = 0; i < n; i++) {
                const DiskInfo *d = &l[i];
                _cleanup_(freep) char *rules = strv_join(d->rules, ",");
                char buf[32];

                if (arg.json) {
                        fputs(i > 0 ? ",\n{" : "{", stdout);
                        const JsonMember m[] = {
                                { "disk", d->name }, { "transport", d->transport }, { "role", d->role },
                                { "dm", d->dm_kind && *d->dm_kind ? d->dm_kind : NULL },
                                { "above", d->upper && *d->upper ? d->upper : NULL },
                                { "scheduler", current_of(d, ATTR_SCHEDULER) } };
                        _cleanup_(freep) char *qos = iocost_line(d, ATTR_FILE_IOCOST_QOS);
                        _cleanup_(freep) char *model = iocost_line(d, ATTR_FILE_IOCOST_MODEL);

                        json_members(stdout, m, ELEMENTSOF(m));
                        printf(",\"wbt_lat_usec\":%" PRIi64 ",\"nr_requests\":%" PRIi64
                               ",\"read_ahead_kb\":%" PRIi64 ",\"rotational\":%s,\"queues\":%u",
                               current_num(d, ATTR_WBT_LAT_USEC), current_num(d, ATTR_NR_REQUESTS),
                               current_num(d, ATTR_READ_AHEAD_KB), d->rotational ? "true" : "false", d->queues);
                        fputs(",\"rules\":[", stdout);
                        for (size_t j = 0; d->rules && d->rules[j]; j++) {
                                if (j > 0)
                                        fputc(',', stdout);
                                json_string(stdout, d->rules[j]);
                        }
                        fputs("],\"iocost_qos\":", stdout);
                        json_string(stdout, qos);
                        fputs(",\"iocost_model\":", stdout);
                        json_string(stdout, model);
                        printf(",\"iocost_other_writer\":%s", iocost_two_writers(d) ? "true" : "false");
                        print_writers_json(d);
                        printf(",\"last_applied_usec\":%" PRIu64 ",\"error\":", d->last_applied);
                        json_string(stdout, d->last_error && *d->last_error ? d->last_error : NULL);
                        fputc('}', stdout);
                        continue;
                }
                printf("%-12s %-9s %-14s %-12s %8s %7s %10s %-16s %-19s %s\n", d->name, strna(d->transport),
                       d->role ?: "-", attr_text(d, ATTR_SCHEDULER), attr_text(d, ATTR_WBT_LAT_USEC),
                       attr_text(d, ATTR_NR_REQUESTS), attr_text(d, ATTR_READ_AHEAD_KB),
                       rules && *rules ? rules : "-", time_text(d->last_applied, buf, sizeof(buf)),
                       d->last_error && *d->last_error ? d->last_error : "-");
        }
        if (arg.json)
                puts("]");
        else
                for (size_t i = 0; i < n; i++)
                        print_writers(&l[i], l[i].name);
        for (size_t i = 0; i < n; i++)
                disk_info_done(&l[i]);
        free(l);
        return 0;
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
        if (w && w->line == 0)  /* a hold's: no line of a file */
                printf("%-24s %-14s %-14s %s (rule %s)\n", key, strna(current), w->value, w->file, w->rule);
        else if (w)
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
        if (arg.json) {
                fputs("{\"disk\":", stdout);
                json_string(stdout, d.name);
                fputs(",\"role\":", stdout);
                json_string(stdout, d.role);
                fputs(",\"keys\":[", stdout);
        } else if (arg.legend) {
                _cleanup_(freep) char *stack = stack_text(&d);

                if (!stack)
                        return log_oom();
                printf("%s (%s%s, %s)\n%-24s %-14s %-14s %s\n", d.name, strna(d.transport),
                       d.rotational ? ", rotational" : "", stack, "KEY", "CURRENT", "DESIRED", "SET BY");
        }

        /* Every key of the attribute table, then the tunables: set by a file:line, or left
         * at what the kernel has. iocost keys only where the disk has a line or a rule sets them. */
        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                const AttrInfo *a = attr_get(id);
                const char *cur = current_of(&d, id);

                if (id == ATTR_IOSCHED || (a->file != ATTR_FILE_QUEUE && !cur && !find_desired(&d, a->key)))
                        continue;
                explain_line(a->key, cur, find_desired(&d, a->key), &first);
        }
        for (char **c = d.current; c && c[0] && c[1]; c += 2)
                if (startswith(c[0], IOSCHED_KEY_PREFIX))
                        explain_line(c[0], c[1], find_desired(&d, c[0]), &first);
        /* Desired tunables the current scheduler does not have. */
        for (size_t i = 0; i < d.n_desired; i++)
                if (startswith(d.desired[i].key, IOSCHED_KEY_PREFIX) && !current_value(&d, d.desired[i].key))
                        explain_line(d.desired[i].key, NULL, &d.desired[i], &first);
        if (arg.json) {
                printf("],\"iocost_other_writer\":%s", iocost_two_writers(&d) ? "true" : "false");
                print_writers_json(&d);
                fputs(",\"holds\":[", stdout);
                for (size_t i = 0; d.holds && d.holds[i]; i++) {
                        if (i > 0)
                                fputc(',', stdout);
                        json_string(stdout, d.holds[i]);
                }
                puts("]}");
        } else {
                for (size_t i = 0; d.holds && d.holds[i]; i++)
                        printf("%s %s\n", i == 0 ? "held:" : "     ", d.holds[i]);
        }
        if (!arg.json)
                print_writers(&d, NULL);
        return 0;
}

static int plan_one(sd_bus *bus, const char *name, bool *first, bool quiet_gone) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *key, *cur, *want, *action;
        bool any = false;
        int r;

        r = sd_bus_call_method(bus, BUS_SERVICE, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE, BUS_METHOD_PLAN, &error, &reply,
                               "s", name);
        if (r < 0 && quiet_gone && sd_bus_error_has_name(&error, BUS_ERROR_NO_SUCH_DISK)) {
                return 0;       /* listed a moment ago, gone now: not an error of a plan of every disk */
        }
        if (r < 0)
                return error_of(&error, r);
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

                r = get_disks(bus, 0, &l, &n);
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

/* A mutating call waits for its writes: they wait for RCU grace periods, and a few hundred
 * disks take seconds. */
#define CALL_TIMEOUT_USEC (300 * 1000000ULL)

/* Send a mutating call and wait for its reply. */
static int call_wait(sd_bus *bus, sd_bus_message *m) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call(bus, m, CALL_TIMEOUT_USEC, &error, NULL);
        return r < 0 ? error_of(&error, r) : r;
}

static int call_simple(sd_bus *bus, const char *method, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_SERVICE, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE, method);
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
        return args[0] ? call_simple(bus, BUS_METHOD_APPLY, "s", args[0]) : call_simple(bus, BUS_METHOD_APPLY_ALL, NULL);
}

static int verb_reload(sd_bus *bus, char **args) {
        return call_simple(bus, BUS_METHOD_RELOAD, NULL);
}

static int verb_reset(sd_bus *bus, char **args) {
        return call_simple(bus, BUS_METHOD_RESET_POLICY, "sb", args[0], arg.runtime);
}

/* A call of @method for disk @args[0] with the settings KEY=VALUE of @args[1...]; the caller
 * appends the rest. */
static int settings_call(sd_bus *bus, const char *method, char **args, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BUS_SERVICE, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE, method);
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
        if (r < 0)
                return log_error_errno(r, "Cannot create the call: %m");
        *ret = TAKE_PTR(m);
        return 0;
}

static int verb_set(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = settings_call(bus, BUS_METHOD_SET_POLICY, args, &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "b", arg.runtime);
        if (r < 0)
                return log_error_errno(r, "Cannot create the call: %m");
        return call_wait(bus, m);
}

/* The manager's part of the metrics: its properties (GetAll). */
static int get_manager_metrics(sd_bus *bus, Metrics *ret, char **ret_version) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Metrics m = {};
        char *version = NULL;
        int r;

        r = sd_bus_call_method(bus, BUS_SERVICE, BUS_MANAGER_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                               &error, &reply, "s", BUS_MANAGER_INTERFACE);
        if (r < 0)
                return error_of(&error, r);
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *name, *contents;
                _cleanup_(strv_freep) char **errors = NULL;
                uint32_t pending;
                char type;
                int p;

                r = sd_bus_message_read_basic(reply, 's', &name);
                if (r >= 0)
                        r = sd_bus_message_peek_type(reply, &type, &contents);
                if (r >= 0)
                        r = sd_bus_message_enter_container(reply, 'v', contents);
                if (r < 0)
                        break;
                p = bus_property_from_name(BUS_OBJECT_MANAGER, name);
                if (p >= 0 && !streq(contents, bus_property(p)->signature))
                        p = -1;
                switch (p) {
                case BUS_MANAGER_VERSION:
                        r = read_string(reply, &version);
                        break;
                case BUS_MANAGER_CONFIG_ERRORS:
                        r = sd_bus_message_read_strv(reply, &errors);
                        m.config_errors = strv_length(errors);
                        break;
                case BUS_MANAGER_WRITES_DONE:
                        r = sd_bus_message_read_basic(reply, 't', &m.writes_done);
                        break;
                case BUS_MANAGER_WRITES_SKIPPED:
                        r = sd_bus_message_read_basic(reply, 't', &m.writes_skipped);
                        break;
                case BUS_MANAGER_WRITE_ERRORS:
                        r = sd_bus_message_read_basic(reply, 't', &m.write_errors);
                        break;
                case BUS_MANAGER_DRIFT_CORRECTED:
                        r = sd_bus_message_read_basic(reply, 't', &m.drift_corrected);
                        break;
                case BUS_MANAGER_DISKS_PENDING:
                        r = sd_bus_message_read_basic(reply, 'u', &pending);
                        m.disks_pending = pending;
                        break;
                default:
                        r = sd_bus_message_skip(reply, contents);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0) {
                free(version);
                return log_error_errno(r, "Cannot parse the reply: %m");
        }
        *ret = m;
        *ret_version = version;
        return 0;
}

/* The Prometheus text of what ioschedd shows on the bus: the formatter of its textfile. */
static int verb_metrics(sd_bus *bus, char **args) {
        _cleanup_(freep) char *version = NULL;
        _cleanup_(freep) MetricsDisk *disks = NULL;
        _cleanup_(freep) MetricsKey *keys = NULL;
        DiskInfo *l = NULL;
        size_t n = 0, n_keys = 0, k = 0;
        Metrics m;
        int r;

        r = get_manager_metrics(bus, &m, &version);
        if (r >= 0)
                r = get_disks(bus, EXPLICIT_DESIRED, &l, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                n_keys += l[i].n_desired;
        disks = calloc(MAX(n, 1u), sizeof(*disks));
        keys = calloc(MAX(n_keys, 1u), sizeof(*keys));
        if (!disks || !keys)
                r = log_oom();
        for (size_t i = 0; r >= 0 && i < n; i++) {
                disks[i] = (MetricsDisk) {
                        .name = l[i].name,
                        .transport = l[i].transport,
                        .rotational = l[i].rotational,
                        .scheduler = strempty(l[i].scheduler),
                        .last_applied_usec = l[i].last_applied,
                        .failed = l[i].last_error && *l[i].last_error,
                        .keys = keys + k,
                        .n_keys = l[i].n_desired,
                        .n_holds = strv_length(l[i].holds),
                        .writers = &l[i].writers,
                };
                for (size_t j = 0; j < l[i].n_desired; j++)
                        keys[k++] = (MetricsKey) { l[i].desired[j].key,
                                                   strv_contains(l[i].mismatched, l[i].desired[j].key) };
        }
        if (r >= 0) {
                m.version = version;
                m.disks = disks;
                m.n_disks = n;
                r = metrics_format(&m, stdout);
                if (r < 0)
                        log_error_errno(r, "Cannot write the metrics: %m");
        }
        for (size_t i = 0; i < n; i++)
                disk_info_done(&l[i]);
        free(l);
        return r;
}

/* The reason of a hold when --reason gives none: the command line, as far as it is short. */
static char *command_text(char **command) {
        _cleanup_(freep) char *s = strv_join(command, " ");

        if (s && strlen(s) > 128)
                strcpy(s + 125, "...");
        return TAKE_PTR(s);
}

/* Run COMMAND and wait for it: its exit status, 128 + a signal that killed it (as a shell
 * says), or a negative errno. Ctrl-C reaches COMMAND, whose end ends the hold. */
static int run_command(char **command) {
        struct sigaction ignore = { .sa_handler = SIG_IGN }, old_int, old_quit;
        int status, r;
        pid_t pid;

        (void) sigaction(SIGINT, &ignore, &old_int);
        (void) sigaction(SIGQUIT, &ignore, &old_quit);
        pid = fork();
        if (pid < 0)
                return log_error_errno(errno, "Cannot fork: %m");
        if (pid == 0) {
                (void) sigaction(SIGINT, &old_int, NULL);
                (void) sigaction(SIGQUIT, &old_quit, NULL);
                execvp(command[0], command);
                log_error_errno(errno, "Cannot run %s: %m", command[0]);
                _exit(errno == ENOENT ? 127 : 126);
        }
        while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                ;
        (void) sigaction(SIGINT, &old_int, NULL);
        (void) sigaction(SIGQUIT, &old_quit, NULL);
        if (r < 0)
                return log_error_errno(errno, "Cannot wait for %s: %m", command[0]);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * hold DISK KEY=VALUE... -- COMMAND: hold the settings while COMMAND runs, as systemd-inhibit
 * holds a lock. The hold is in force (written) when COMMAND starts; it ends when COMMAND does
 * (Release waits until what is below is back), or when this process dies: ioschedd tracks
 * our bus connection.
 */
static int verb_hold(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(freep) char *reason = NULL;
        uint32_t handle;
        int r, status;

        if (strv_isempty(arg.command)) {
                log_error("hold needs a command to run: ioschedctl hold DISK KEY=VALUE... -- COMMAND");
                return -EINVAL;
        }
        reason = arg.reason ? strdup(arg.reason) : command_text(arg.command);
        if (!reason)
                return log_oom();
        r = settings_call(bus, BUS_METHOD_HOLD, args, &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", reason);
        if (r < 0)
                return log_error_errno(r, "Cannot create the call: %m");
        r = sd_bus_call(bus, m, CALL_TIMEOUT_USEC, &error, &reply);
        if (r < 0)
                return error_of(&error, r);
        r = sd_bus_message_read(reply, "u", &handle);
        if (r < 0)
                return log_error_errno(r, "Cannot read the reply: %m");

        status = run_command(arg.command);
        r = call_simple(bus, BUS_METHOD_RELEASE, "u", handle);
        if (status < 0)
                return status;
        /* The command's status is ours; a failed release is said (the hold ends with this
         * process anyway). */
        if (r < 0)
                log_warning("The hold ends with this process.");
        arg.exit_status = status;
        return 0;
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
               "  reload                   Read the configuration again and apply it\n"
               "  metrics                  What ioschedd knows, in the Prometheus text format\n"
               "  hold DISK KEY=VALUE... -- COMMAND [ARG...]\n"
               "                           Hold settings of a disk while COMMAND runs; exits\n"
               "                           with its status\n\n"
               "Options:\n"
               "  -h --help                Show this help\n"
               "     --version             Show the version\n"
               "     --json                JSON output (status, explain, plan)\n"
               "     --runtime             set, reset: until reboot (/run/iosched.d), not /etc\n"
               "     --no-legend           No column headers\n"
               "     --no-ask-password     Do not ask for a password (polkit) \n"
               "     --list-keys           Print the keys \"set\" takes, one per line\n"
               "     --reason=TEXT         hold: why, shown with the hold (default: COMMAND)\n\n"
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
                ARG_REASON,
        };
        static const struct option options[] = {
                CLI_OPTIONS_COMMON,
                { "json", no_argument, NULL, ARG_JSON },
                { "runtime", no_argument, NULL, ARG_RUNTIME },
                { "no-legend", no_argument, NULL, ARG_NO_LEGEND },
                { "no-ask-password", no_argument, NULL, ARG_NO_ASK_PASSWORD },
                { "list-keys", no_argument, NULL, ARG_LIST_KEYS },
                { "reason", required_argument, NULL, ARG_REASON },
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
                case ARG_REASON:
                        arg.reason = optarg;
                        break;
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
                { "metrics", 0, 0, verb_metrics },
                { "hold", 2, UINT32_MAX, verb_hold },
        };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *verb;
        unsigned n;
        int r;

        log_set_prefix("ioschedctl");
        /* Read by people and scripts, never by journald: no "<N>" priorities. */
        log_set_console_prefix(0);
        /* What follows "--" is hold's COMMAND: getopt must not take its options, nor move the
         * "--" away (it permutes). */
        for (int i = 1; i < argc; i++)
                if (streq(argv[i], "--")) {
                        arg.command = argv + i + 1;
                        argc = i;
                        break;
                }
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
                /* hold's COMMAND is after "--": the verb's arguments end there. */
                argv[argc] = NULL;
                r = verbs[i].run(bus, optind < argc ? argv + optind + 1 : argv + argc);
                return r < 0 ? 1 : arg.exit_status;
        }
        log_error("Unknown command \"%s\"; see --help.", verb);
        return EXIT_USAGE;
}
