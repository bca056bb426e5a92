/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ioschedd-bus.h"
#include "ioschedd-disk-bus.h"
#include "log.h"
#include "util.h"
#include "writers.h"

#define GETTER_ARGS                                                                     \
        sd_bus *bus, const char *path, const char *interface, const char *property,     \
        sd_bus_message *reply, void *userdata, sd_bus_error *error

/* A published disk object has been read: o->reading.disk is set (disk_find). The value goes in with
 * sd_bus_message_append_basic(): GetManagedObjects calls each getter of thousands of disks, and
 * the format parser of sd_bus_message_append() was a third of its time. */
#define DISK_GETTER(fn, ...)                                                            \
        static int fn(GETTER_ARGS) {                                                    \
                const DiskObject *o = userdata;                                         \
                const Disk *d = o->reading.disk;                                        \
                assert(d);                                                              \
                __VA_ARGS__                                                             \
        }
#define DEFINE_DISK_STRING_GETTER(fn, expr)                                             \
        DISK_GETTER(fn, return sd_bus_message_append_basic(reply, 's', (expr));)
#define DEFINE_DISK_GETTER(fn, type, ctype, expr)                                       \
        DISK_GETTER(fn, ctype v = (expr); return sd_bus_message_append_basic(reply, type, &v);)
#define DEFINE_DISK_BOOL_GETTER(fn, expr) DEFINE_DISK_GETTER(fn, 'b', int, expr)

DEFINE_DISK_STRING_GETTER(property_get_devnum, strempty(d->devnum));
DEFINE_DISK_STRING_GETTER(property_get_model, strempty(d->model));
DEFINE_DISK_STRING_GETTER(property_get_vendor, strempty(d->vendor));
DEFINE_DISK_STRING_GETTER(property_get_serial, strempty(d->serial));
DEFINE_DISK_STRING_GETTER(property_get_wwn, strempty(d->wwn));
DEFINE_DISK_STRING_GETTER(property_get_transport, transport_to_string(d->transport));
DEFINE_DISK_STRING_GETTER(property_get_zoned, zoned_to_string(d->zoned));
DEFINE_DISK_BOOL_GETTER(property_get_rotational, d->rotational == 1);
DEFINE_DISK_BOOL_GETTER(property_get_removable, d->removable == 1);
DEFINE_DISK_GETTER(property_get_queues, 'u', uint32_t, d->nr_hw_queues);
DEFINE_DISK_GETTER(property_get_size, 't', uint64_t, d->size_bytes);
DEFINE_DISK_STRING_GETTER(property_get_name, o->name);
DEFINE_DISK_STRING_GETTER(property_get_last_error, strempty(o->last_error));
DEFINE_DISK_GETTER(property_get_last_applied, 't', uint64_t, o->last_applied);

/* The scheduler the kernel shows ("none" for a queue without a choice), "" for a queue without
 * a scheduler file: Current's "scheduler", for a list of disks. */
static const char *scheduler_of(const Disk *d) {
        return d->scheduler ?: (d->has_scheduler_file ? "none" : NULL);
}

DEFINE_DISK_STRING_GETTER(property_get_scheduler, strempty(scheduler_of(d)));

/* Stack: the role, the dm uuid's kind, the map or array above ("" for none or unknown). */
static int append_stack(sd_bus_message *reply, const Disk *d) {
        int r = sd_bus_message_open_container(reply, 'r', "sss");

        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', stack_role_to_string(d->stack.role));
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', strempty(d->stack.dm_kind));
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', strempty(d->stack.upper));
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

DISK_GETTER(property_get_stack, return append_stack(reply, d);)

/* Device: Transport, Rotational, Queues and Stack in one struct, one entry of GetManagedObjects
 * instead of four. */
DISK_GETTER(property_get_device,
        int rotational = d->rotational == 1;
        uint32_t queues = d->nr_hw_queues;
        int r = sd_bus_message_open_container(reply, 'r', "sbu(sss)");

        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', transport_to_string(d->transport));
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 'b', &rotational);
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 'u', &queues);
        if (r >= 0)
                r = append_stack(reply, d);
        return r < 0 ? r : sd_bus_message_close_container(reply);)

static int append_pair(sd_bus_message *reply, const char *key, const char *value) {
        int r = sd_bus_message_open_container(reply, SD_BUS_TYPE_DICT_ENTRY, "ss");

        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', key);
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', value);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* The current scheduler's tunables the kernel showed a value for, as iosched.NAME. */
static int append_current_tunables(sd_bus_message *reply, const Disk *d) {
        char key[sizeof(IOSCHED_KEY_PREFIX) + TUNABLE_NAME_MAX];
        int r = 0;

        for (size_t i = 0; r >= 0 && i < d->n_tunables; i++) {
                const Tunable *t = &d->tunables[i];

                if (t->state.err < 0 || !t->state.raw)
                        continue;
                if (snprintf(key, sizeof(key), IOSCHED_KEY_PREFIX "%s", t->name) >= (int) sizeof(key))
                        continue;       /* not a tunable name (tunable_name_is_valid()) */
                r = append_pair(reply, key, t->state.raw);
        }
        return r;
}

/* The current value of @a on @d, if the kernel shows one: the scheduler ("none" for a queue
 * without a choice), a queue file, a key of the disk's io.cost.* line. */
static int append_current(sd_bus_message *reply, const Disk *d, const AttrInfo *a) {
        const IocostState *st;
        char buf[32];
        int64_t num;

        if (a->id == ATTR_SCHEDULER) {
                const char *s = scheduler_of(d);

                return s ? append_pair(reply, a->key, s) : 0;
        }
        if (a->id == ATTR_IOSCHED)
                return append_current_tunables(reply, d);
        switch (a->file) {
        case ATTR_FILE_QUEUE:
                /* -ENOENT: no such file on this disk; wbt_lat_usec fails until wbt is set up */
                if (DISK_ATTR(d, a->id).err != 0)
                        return 0;
                num = DISK_ATTR(d, a->id).value.num;
                break;
        case ATTR_FILE_IOCOST_QOS:
        case ATTR_FILE_IOCOST_MODEL:
                st = &DISK_IOCOST(d, a->file);
                if (st->err != 0 || !st->num)
                        return 0;       /* never set up on the disk, no io controller, no parse */
                num = st->num[a->id];
                break;
        default:
                return 0;               /* an option of iosched's own */
        }
        if (value_format(a, num, buf, sizeof(buf)) < 0)
                return 0;
        return append_pair(reply, a->key, buf);
}

/* Current: every key of the attribute table the kernel shows a value for, in the table's
 * order, spelt as the configuration spells it (a client compares it with Desired's text). */
static int property_get_current(GETTER_ARGS) {
        const Disk *d = ((const DiskObject *) userdata)->reading.disk;
        int r;

        assert(d);
        r = sd_bus_message_open_container(reply, 'a', "{ss}");
        for (AttrId id = 0; r >= 0 && id < _ATTR_MAX; id++)
                r = append_current(reply, d, attr_get(id));
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

static int property_get_schedulers(GETTER_ARGS) {
        const Disk *d = ((const DiskObject *) userdata)->reading.disk;
        return sd_bus_message_append_strv(reply, d ? d->schedulers : NULL);
}

static int property_get_mismatched(GETTER_ARGS) {
        return sd_bus_message_append_strv(reply, ((const DiskObject *) userdata)->mismatched);
}

/* One element of an array property: a struct or dict entry of strings and an optional line
 * number. */
typedef struct Record {
        const char *strings[4];
        size_t n_strings;
        bool has_line;
        uint32_t line;
} Record;

/* Element @i of an array property of @o: true with @ret filled in, false to leave it out. */
typedef bool (*RecordFn)(const DiskObject *o, size_t i, Record *ret);

/* An array of @n elements of @signature ("(ssu)", "{ss}"), appended field by field:
 * sd_bus_message_append() would parse its format for each of thousands of entries. */
static int append_array(sd_bus_message *reply, const char *signature, size_t n, RecordFn fn,
                        const DiskObject *o) {
        char type = signature[0] == '{' ? SD_BUS_TYPE_DICT_ENTRY : SD_BUS_TYPE_STRUCT;
        size_t len = strlen(signature) - 2;
        char contents[8];
        int r;

        assert(len < sizeof(contents));
        memcpy(contents, signature + 1, len);
        contents[len] = 0;

        r = sd_bus_message_open_container(reply, 'a', signature);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                Record rec = {};

                if (!fn(o, i, &rec))
                        continue;
                r = sd_bus_message_open_container(reply, type, contents);
                for (size_t j = 0; r >= 0 && j < rec.n_strings; j++)
                        r = sd_bus_message_append_basic(reply, 's', rec.strings[j]);
                if (r >= 0 && rec.has_line)
                        r = sd_bus_message_append_basic(reply, 'u', &rec.line);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* Desired: key, value, rule, file, line. */
static bool desired_record(const DiskObject *o, size_t i, Record *ret) {
        const ResolvedSetting *rs = &o->reading.resolved->settings[i];

        *ret = (Record) { { rs->setting->key, rs->setting->text, rs->rule->name, rs->rule->file }, 4,
                          true, rs->setting->line };
        return true;
}

/* MatchedRules: name, file, line. */
static bool rule_record(const DiskObject *o, size_t i, Record *ret) {
        const Rule *rule = o->reading.resolved->rules[i];

        *ret = (Record) { { rule->name, rule->file }, 2, true, rule->line };
        return true;
}

/* LastChanges: key, old value, new value (last_changes holds them in a row). */
static bool change_record(const DiskObject *o, size_t i, Record *ret) {
        char * const *l = o->last_changes + 3 * i;

        *ret = (Record) { { l[0], l[1], l[2] }, 3 };
        return true;
}

#define DEFINE_ARRAY_GETTER(fn, signature, count, record)                               \
        static int fn(GETTER_ARGS) {                                                    \
                const DiskObject *o = userdata;                                         \
                return append_array(reply, signature, (count), record, o);              \
        }

DEFINE_ARRAY_GETTER(property_get_desired, "(ssssu)", o->reading.resolved ? o->reading.resolved->n_settings : 0,
                    desired_record);
DEFINE_ARRAY_GETTER(property_get_rules, "(ssu)", o->reading.resolved ? o->reading.resolved->n_rules : 0, rule_record);
DEFINE_ARRAY_GETTER(property_get_changes, "(sss)", strv_length(o->last_changes) / 3, change_record);

/* OtherWriters: key, owner, source, file, line, value ("" unknown), when, certain. */
static int append_writer(sd_bus_message *reply, const Writer *w) {
        _cleanup_(freep) char *key = writer_key(w);
        int certain = w->applies == APPLIES_YES;

        if (!key)
                return -ENOMEM;
        return sd_bus_message_append(reply, "(ssssussb)", key, writer_kind_to_string(w->kind), w->source,
                                     w->file, w->line, strempty(w->value), strempty(w->when), certain);
}

static int property_get_other_writers(GETTER_ARGS) {
        const OtherWriters *o = ((const DiskObject *) userdata)->reading.disk->writers;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ssssussb)");
        for (size_t i = 0; r >= 0 && o && i < o->n; i++)
                r = append_writer(reply, &o->writers[i]);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* One hold: handle, holder, reason, since, and the settings as the configuration spells them. */
static int append_hold(sd_bus_message *reply, const Hold *h) {
        int r;

        r = sd_bus_message_append(reply, "usst", h->id, h->holder, h->reason, h->since);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "{ss}");
        for (size_t k = 0; r >= 0 && k < h->rule->n_settings; k++)
                r = append_pair(reply, h->rule->settings[k].key, h->rule->settings[k].text);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int property_get_holds(GETTER_ARGS) {
        const DiskObject *o = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ussta{ss})");
        for (size_t i = 0; r >= 0 && i < o->n_holds; i++) {
                r = sd_bus_message_open_container(reply, 'r', "ussta{ss}");
                r = r < 0 ? r : append_hold(reply, o->holds[i]);
                r = r < 0 ? r : sd_bus_message_close_container(reply);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* Whether a property's value is empty: GetManagedObjects and InterfacesAdded leave it out. */
#define DEFINE_EMPTY(fn, expr)                                                          \
        static bool fn(const void *userdata) {                                          \
                const DiskObject *o = userdata;                                         \
                return (expr);                                                          \
        }

DEFINE_EMPTY(empty_schedulers, strv_isempty(o->reading.disk->schedulers));
DEFINE_EMPTY(empty_writers, !o->reading.disk->writers || o->reading.disk->writers->n == 0);
DEFINE_EMPTY(empty_desired, !o->reading.resolved || o->reading.resolved->n_settings == 0);
DEFINE_EMPTY(empty_mismatched, strv_isempty(o->mismatched));
DEFINE_EMPTY(empty_rules, !o->reading.resolved || o->reading.resolved->n_rules == 0);
DEFINE_EMPTY(empty_changes, strv_length(o->last_changes) < 3);
DEFINE_EMPTY(empty_error, !o->last_error || !*o->last_error);
DEFINE_EMPTY(empty_holds, o->n_holds == 0);
DEFINE_EMPTY(empty_scheduler, !scheduler_of(o->reading.disk));

#define FIELD(f) DISK_FIELD_BIT(f)
/* Every field of the dirty mask that Current shows. */
#define CURRENT_FIELDS                                                                  \
        (FIELD(DISK_FIELD_SCHEDULER) | FIELD(DISK_FIELD_TUNABLES) | FIELD(DISK_FIELD_IOCOST_QOS) | \
         FIELD(DISK_FIELD_IOCOST_MODEL) | (((FIELD(_DISK_FIELD_MAX - 1) << 1) - 1) & ~(FIELD(DISK_FIELD_ATTR) - 1)))

/* The getter of each property of a disk in BUS_PROPERTIES (src/bus-names.h), and the fields of
 * the dirty mask whose change it shows. */
static const BusPropertyImpl disk_properties[_BUS_PROPERTY_MAX] = {
        [BUS_DISK_DEVNUM] = { property_get_devnum, .fields = FIELD(DISK_FIELD_DEVNUM) },
        [BUS_DISK_MODEL] = { property_get_model, .fields = FIELD(DISK_FIELD_MODEL) },
        [BUS_DISK_VENDOR] = { property_get_vendor, .fields = FIELD(DISK_FIELD_VENDOR) },
        [BUS_DISK_SERIAL] = { property_get_serial, .fields = FIELD(DISK_FIELD_SERIAL) },
        [BUS_DISK_WWN] = { property_get_wwn, .fields = FIELD(DISK_FIELD_WWN) },
        [BUS_DISK_TRANSPORT] = { property_get_transport, .fields = FIELD(DISK_FIELD_TRANSPORT) },
        [BUS_DISK_ROTATIONAL] = { property_get_rotational, .fields = FIELD(DISK_FIELD_ROTATIONAL) },
        [BUS_DISK_REMOVABLE] = { property_get_removable, .fields = FIELD(DISK_FIELD_REMOVABLE) },
        [BUS_DISK_ZONED] = { property_get_zoned, .fields = FIELD(DISK_FIELD_ZONED) },
        [BUS_DISK_STACK] = { property_get_stack, .fields = FIELD(DISK_FIELD_STACK) },
        [BUS_DISK_QUEUES] = { property_get_queues, .fields = FIELD(DISK_FIELD_QUEUES) },
        [BUS_DISK_SIZE_BYTES] = { property_get_size, .fields = FIELD(DISK_FIELD_SIZE) },
        [BUS_DISK_AVAILABLE_SCHEDULERS] = { property_get_schedulers, .fields = FIELD(DISK_FIELD_SCHEDULERS),
                                            .empty = empty_schedulers },
        [BUS_DISK_OTHER_WRITERS] = { property_get_other_writers, .fields = FIELD(DISK_FIELD_OTHER_WRITERS),
                                     .empty = empty_writers },
        [BUS_DISK_DESIRED] = { property_get_desired, .fields = FIELD(DISK_OBJECT_DESIRED), .empty = empty_desired },
        [BUS_DISK_MISMATCHED] = { property_get_mismatched, .fields = FIELD(DISK_OBJECT_MISMATCHED),
                                 .empty = empty_mismatched },
        [BUS_DISK_MATCHED_RULES] = { property_get_rules, .fields = FIELD(DISK_OBJECT_RULES), .empty = empty_rules },
        [BUS_DISK_LAST_APPLIED] = { property_get_last_applied, .fields = FIELD(DISK_OBJECT_LAST_APPLIED) },
        [BUS_DISK_LAST_CHANGES] = { property_get_changes, .fields = FIELD(DISK_OBJECT_LAST_CHANGES),
                                   .empty = empty_changes },
        [BUS_DISK_LAST_ERROR] = { property_get_last_error, .fields = FIELD(DISK_OBJECT_LAST_ERROR),
                                 .empty = empty_error },
        [BUS_DISK_HOLDS] = { property_get_holds, .fields = FIELD(DISK_OBJECT_HOLDS), .empty = empty_holds },
        [BUS_DISK_CURRENT] = { property_get_current, .fields = CURRENT_FIELDS },
        [BUS_DISK_NAME] = { property_get_name },        /* const */
        [BUS_DISK_SCHEDULER] = { property_get_scheduler, .fields = FIELD(DISK_FIELD_SCHEDULER),
                                 .empty = empty_scheduler },
        [BUS_DISK_DEVICE] = { property_get_device, .fields = FIELD(DISK_FIELD_TRANSPORT) | FIELD(DISK_FIELD_ROTATIONAL) |
                                                             FIELD(DISK_FIELD_QUEUES) | FIELD(DISK_FIELD_STACK) },
};


int disk_bus_path(const DiskObject *d, char **ret) {
        assert(d && ret);
        return sd_bus_path_encode(BUS_DISK_PATH_PREFIX, d->name, ret);
}

static int disk_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                     void **found, sd_bus_error *error) {
        _cleanup_(freep) char *name = NULL;
        Manager *m = userdata;
        DiskObject *d;

        if (sd_bus_path_decode(path, BUS_DISK_PATH_PREFIX, &name) <= 0)
                return 0;
        d = manager_find_disk(m, name);
        /* Unpublished (never read) disks are not on the bus yet. */
        if (!d || !disk_object_is_published(d))
                return 0;
        *found = d;
        return 1;
}

/*
 * Current's keys that no rule sets are not read with the rest of a disk (in a hotplug storm
 * they were a third of each disk's files, with a scheduler's tunables more): a Get of Current
 * on a disk whose reading has not got them queues a full read with them, and the reply waits
 * for it, at most IOSCHEDD_CURRENT_WAIT_USEC: the loop answers while workers are stuck in
 * writes, so then the reply has the keys read so far, and Current is invalidated when the read
 * lands. From then on every full read of the disk reads them.
 */
typedef struct CurrentGet {
        Completion completion;
        Manager *manager;
        char *name;
        sd_bus_message *call;   /* NULL once answered */
        sd_event_source *timeout;
} CurrentGet;

static CurrentGet *current_get_of(Completion *c) {
        return container_of(c, CurrentGet, completion);
}

static void current_get_free(Completion *c) {
        CurrentGet *g = current_get_of(c);

        sd_event_source_disable_unref(g->timeout);
        sd_bus_message_unref(g->call);
        free(g->name);
        free(g);
}

/* The reply to a Properties.Get of Current: sd-bus's, from the same getter. */
static int reply_current(sd_bus_message *call, const DiskObject *d) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'v', bus_property(BUS_DISK_CURRENT)->signature);
        if (r >= 0)
                r = property_get_current(NULL, NULL, NULL, NULL, reply, (void *) d, NULL);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

/* Answers @g's call once: with @error, or with Current as the disk has it now. */
static void current_get_answer(CurrentGet *g, int error) {
        const DiskObject *d = manager_find_disk(g->manager, g->name);
        int r;

        if (!g->call)
                return;         /* answered already (the wait ran out) */
        if (error >= 0 && (!d || !disk_object_is_published(d)))
                error = -ENODEV;
        if (error == -ENODEV)
                r = bus_reply_errnof(g->call, error, NULL, "Disk %s went away.", g->name);
        else if (error < 0)
                r = bus_reply_errnof(g->call, error, NULL, "Cannot read disk %s: %m", g->name);
        else
                r = reply_current(g->call, d);
        if (r < 0)
                log_debug_errno(r, "Cannot send a reply: %m");
        g->call = sd_bus_message_unref(g->call);
}

static void current_get_job_done(Completion *c, const JobResult *res) {
        CurrentGet *g = current_get_of(c);
        const DiskObject *d = manager_find_disk(g->manager, g->name);

        /* Read, but not with Current's keys: not the disk that was asked about. */
        current_get_answer(g, res->error < 0 ? res->error : d && !d->current_read ? -ENODEV : 0);
}

static void current_get_done(Completion *c) {
}

/* The read did not land in time: the keys read so far (the rules' and the scheduler). */
static int on_current_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        current_get_answer(userdata, 0);
        return 0;
}

/* A filter, before sd-bus looks for an object (an object callback would make every path below
 * the prefix an object to sd-bus, and change its errors): a Get of Current that must wait for a
 * read. Anything else, and a Get the disk can answer now, is sd-bus's (0). */
static int on_bus_message(sd_bus_message *call, void *userdata, sd_bus_error *error) {
        static const CompletionOps ops = {
                .job_done = current_get_job_done, .done = current_get_done, .free = current_get_free,
        };
        const char *interface, *property;
        Manager *m = userdata;
        DiskObject *d = NULL;
        CurrentGet *g;
        int r;

        if (!sd_bus_message_is_method_call(call, "org.freedesktop.DBus.Properties", "Get") ||
            !startswith(sd_bus_message_get_path(call), BUS_DISK_PATH_PREFIX "/"))
                return 0;
        r = sd_bus_message_read(call, "ss", &interface, &property);
        if (r >= 0 && streq(interface, BUS_DISK_INTERFACE) && streq(property, bus_property_name(BUS_DISK_CURRENT)))
                r = disk_find(NULL, sd_bus_message_get_path(call), NULL, m, (void **) &d, NULL);
        if (sd_bus_message_rewind(call, true) < 0)
                return -EBADMSG;
        if (r <= 0 || !d || d->current_read)
                return 0;
        g = calloc(1, sizeof(CurrentGet));
        if (!g)
                return -ENOMEM;
        completion_init(&g->completion, &ops);
        g->manager = m;
        g->call = sd_bus_message_ref(call);
        g->name = strdup(d->name);
        r = g->name ? manager_arm_timer(m, &g->timeout, manager_now(m, CLOCK_MONOTONIC) + IOSCHEDD_CURRENT_WAIT_USEC,
                                        on_current_timeout, g, "current-get") : -ENOMEM;
        if (r >= 0) {
                d->current_wanted = true;       /* before the job is made: it reads them */
                r = disk_object_queue(d, JOB_PLAN, NULL, &g->completion);
        }
        if (r >= 0)
                completion_arm(&g->completion);
        completion_unref(&g->completion);
        return r < 0 ? r : 1;
}

static int disk_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes,
                          sd_bus_error *error) {
        Manager *m = userdata;
        _cleanup_(strv_freep) char **l = NULL;
        int r;

        size_t n = 0;

        l = calloc(m->n_disks + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_disks; i++) {
                if (!disk_object_is_published(m->disks[i]))
                        continue;
                r = disk_bus_path(m->disks[i], &l[n]);
                if (r < 0)
                        return r;
                n++;
        }
        *nodes = TAKE_PTR(l);
        return 1;
}

/* A dict entry {KEY VALUE}: opened, its key appended, its value's container opened (a{sv} of an
 * interface, a{sa{sv}} of an object, v of a property). */
static int open_entry(sd_bus_message *reply, const char *contents, char key_type, const char *key,
                      char value_type, const char *value_contents) {
        int r;

        r = sd_bus_message_open_container(reply, 'e', contents);
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, key_type, key);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, value_type, value_contents);
        return r;
}

/* The a{sa{sv}} of one disk (in GetManagedObjects and InterfacesAdded): the disk's interface
 * with its properties in the order of BUS_PROPERTIES, as sd-bus's own GetAll has them, but for
 * an empty array or string: left out. Each {sv} costs the daemon, dbus-daemon (which checks the
 * variant's signature) and the client about 5,700 instructions besides its elements' (callgrind,
 * 4096 disks): the five empty ones of a disk at its policy were a fifth of the reply's cost.
 * sd-bus's object manager would also list Peer, Introspectable and Properties, without
 * properties, for every object; like GDBus's, ours lists the interface that has them: at 4096
 * disks the three empty entries were 8% of what a client's sd-bus spent walking the reply
 * (callgrind). */
static int append_interfaces(sd_bus_message *reply, DiskObject *d, const char *path, sd_bus_error *error) {
        sd_bus *bus = sd_bus_message_get_bus(reply);
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{sa{sv}}");
        if (r >= 0)
                r = open_entry(reply, "sa{sv}", 's', BUS_DISK_INTERFACE, 'a', "{sv}");
        for (BusPropertyId p = 0; r >= 0 && p < _BUS_PROPERTY_MAX; p++) {
                const BusProperty *bp = bus_property(p);

                if (bp->object != BUS_OBJECT_DISK || bp->change == BUS_PROPERTY_EXPLICIT ||
                    (disk_properties[p].empty && disk_properties[p].empty(d)))
                        continue;
                r = open_entry(reply, "sv", 's', bp->name, 'v', bp->signature);
                if (r >= 0)
                        r = disk_properties[p].get(bus, path, BUS_DISK_INTERFACE, bp->name, reply, d, error);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);      /* v */
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);      /* {sv} */
        }
        /* a{sv}, {sa{sv}}, a{sa{sv}} */
        for (unsigned i = 0; r >= 0 && i < 3; i++)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* The {oa{sa{sv}}} of one disk in GetManagedObjects. */
static int append_object(sd_bus_message *reply, DiskObject *d, sd_bus_error *error) {
        _cleanup_(freep) char *path = NULL;
        int r;

        r = disk_bus_path(d, &path);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'e', "oa{sa{sv}}");
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 'o', path);
        if (r >= 0)
                r = append_interfaces(reply, d, path, error);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

int disk_bus_append_objects(Manager *m, sd_bus_message *reply, sd_bus_error *error) {
        int r;

        assert(m && reply);
        for (size_t i = 0; i < m->n_disks; i++) {
                if (!disk_object_is_published(m->disks[i]))
                        continue;       /* unpublished, as in disk_find() */
                r = append_object(reply, m->disks[i], error);
                if (r < 0)
                        return r;
        }
        return 0;
}

int disk_bus_register(Manager *m) {
        /* Built once: the bus keeps pointing at it. */
        static sd_bus_vtable vtable[1 + _BUS_PROPERTY_MAX + 1];
        int r;

        assert(m && m->bus);
        if (vtable[0].type != _SD_BUS_VTABLE_START)
                (void) bus_vtable_build(BUS_OBJECT_DISK, disk_properties, NULL, vtable, ELEMENTSOF(vtable));
        r = sd_bus_add_fallback_vtable(m->bus, NULL, BUS_DISK_PATH_PREFIX, BUS_DISK_INTERFACE,
                                       vtable, disk_find, m);
        if (r < 0)
                return r;
        r = sd_bus_add_filter(m->bus, NULL, on_bus_message, m);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(m->bus, NULL, BUS_DISK_PATH_PREFIX, disk_enumerate, m);
}

/* PropertiesChanged built from the property list, as InterfacesAdded is: the values of the
 * EMITS properties whose fields are in @dirty, the names of the EXPLICIT ones among the
 * invalidated (what sd-bus's vtable flags say). sd_bus_emit_properties_changed_strv() found the
 * object again for it (the path decoded, the disk looked up, the vtable searched for each name):
 * ~17,600 instructions a call, at least once for each disk of a storm. */
static int emit_changed(DiskObject *d, const char *path, uint64_t dirty) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *bus = d->manager->bus;
        int r;

        r = sd_bus_message_new_signal(bus, &sig, path, "org.freedesktop.DBus.Properties", "PropertiesChanged");
        if (r >= 0)
                r = sd_bus_message_append_basic(sig, 's', BUS_DISK_INTERFACE);
        if (r >= 0)
                r = sd_bus_message_open_container(sig, 'a', "{sv}");
        for (BusPropertyId p = 0; r >= 0 && p < _BUS_PROPERTY_MAX; p++) {
                const BusProperty *bp = bus_property(p);

                if (bp->object != BUS_OBJECT_DISK || bp->change != BUS_PROPERTY_EMITS ||
                    !(dirty & disk_properties[p].fields))
                        continue;
                r = open_entry(sig, "sv", 's', bp->name, 'v', bp->signature);
                if (r >= 0)
                        r = disk_properties[p].get(bus, path, BUS_DISK_INTERFACE, bp->name, sig, d, &error);
                if (r >= 0)
                        r = sd_bus_message_close_container(sig);        /* v */
                if (r >= 0)
                        r = sd_bus_message_close_container(sig);        /* {sv} */
        }
        if (r >= 0)
                r = sd_bus_message_close_container(sig);
        if (r >= 0)
                r = sd_bus_message_open_container(sig, 'a', "s");
        for (BusPropertyId p = 0; r >= 0 && p < _BUS_PROPERTY_MAX; p++) {
                const BusProperty *bp = bus_property(p);

                if (bp->object == BUS_OBJECT_DISK && bp->change == BUS_PROPERTY_EXPLICIT &&
                    (dirty & disk_properties[p].fields))
                        r = sd_bus_message_append_basic(sig, 's', bp->name);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(sig);
        if (r >= 0)
                r = sd_bus_send(bus, sig, NULL);
        return r;
}

void disk_bus_emit_changed(DiskObject *d) {
        _cleanup_(freep) char *path = NULL;
        uint64_t dirty;
        bool any = false;
        int r;

        assert(d);
        dirty = d->dirty;
        d->dirty = 0;
        for (BusPropertyId p = 0; !any && p < _BUS_PROPERTY_MAX; p++)
                any = bus_property(p)->object == BUS_OBJECT_DISK && (dirty & disk_properties[p].fields);
        if (!any || !d->manager->announcing)
                return;
        r = disk_bus_path(d, &path);
        if (r >= 0)
                r = emit_changed(d, path, dirty);
        if (r < 0)
                log_debug_errno(r, "%s: cannot emit PropertiesChanged: %m", d->name);
}

/* InterfacesAdded built like GetManagedObjects' entries (sd_bus_emit_object_added() walks the
 * object tree and the vtable for each of a storm's disks: four times the cost); InterfacesRemoved
 * names the interface that InterfacesAdded listed. */
static int emit_added(DiskObject *d, const char *path) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        int r;

        r = sd_bus_message_new_signal(d->manager->bus, &sig, BUS_MANAGER_PATH,
                                      "org.freedesktop.DBus.ObjectManager", "InterfacesAdded");
        if (r >= 0)
                r = sd_bus_message_append_basic(sig, 'o', path);
        if (r >= 0)
                r = append_interfaces(sig, d, path, NULL);
        if (r >= 0)
                r = sd_bus_send(d->manager->bus, sig, NULL);
        return r;
}

static void emit_object(DiskObject *d, bool added) {
        _cleanup_(freep) char *path = NULL;
        int r;

        assert(d);
        if (!d->manager->announcing)
                return;
        r = disk_bus_path(d, &path);
        if (r >= 0)
                r = added ? emit_added(d, path) :
                        sd_bus_emit_interfaces_removed(d->manager->bus, path, BUS_DISK_INTERFACE, NULL);
        if (r < 0)
                log_debug_errno(r, "%s: cannot emit %s: %m", d->name,
                                added ? "InterfacesAdded" : "InterfacesRemoved");
}

void disk_bus_emit_added(DiskObject *d) {
        emit_object(d, true);
}

void disk_bus_emit_removed(DiskObject *d) {
        emit_object(d, false);
}
