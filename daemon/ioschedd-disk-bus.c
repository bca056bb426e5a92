/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ioschedd-disk-bus.h"
#include "log.h"
#include "util.h"

#define GETTER_ARGS                                                                     \
        sd_bus *bus, const char *path, const char *interface, const char *property,     \
        sd_bus_message *reply, void *userdata, sd_bus_error *error

/* A published disk object has been read: o->disk is set (disk_find). The value goes in with
 * sd_bus_message_append_basic(): GetManagedObjects calls each getter of thousands of disks, and
 * the format parser of sd_bus_message_append() was a third of its time. */
#define DISK_GETTER(fn, ...)                                                            \
        static int fn(GETTER_ARGS) {                                                    \
                const DiskObject *o = userdata;                                         \
                const Disk *d = o->disk;                                                \
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
/* A queue without a choice shows "none", one without the file "". */
DEFINE_DISK_STRING_GETTER(property_get_scheduler, d->scheduler ?: (d->has_scheduler_file ? "none" : ""));
DEFINE_DISK_BOOL_GETTER(property_get_rotational, d->rotational == 1);
DEFINE_DISK_BOOL_GETTER(property_get_removable, d->removable == 1);
DEFINE_DISK_GETTER(property_get_queues, 'u', uint32_t, d->nr_hw_queues);
DEFINE_DISK_GETTER(property_get_size, 't', uint64_t, d->size_bytes);
DEFINE_DISK_STRING_GETTER(property_get_last_error, strempty(o->last_error));
/* The kernel's io.cost.* lines without MAJ:MIN; "" when iocost is not set up on the disk or
 * not applicable on the system. */
DEFINE_DISK_STRING_GETTER(property_get_iocost_qos, disk_iocost_shown(d, ATTR_FILE_IOCOST_QOS));
DEFINE_DISK_STRING_GETTER(property_get_iocost_model, disk_iocost_shown(d, ATTR_FILE_IOCOST_MODEL));
DEFINE_DISK_BOOL_GETTER(property_get_iocost_other_writer, d->iocost_other_writer);

/* The current value of an attribute of the table (attr.c). -1 when the kernel has no such
 * file for this disk or the read failed (wbt_lat_usec fails with EINVAL until wbt is set up). */
#define DEFINE_ATTR_GETTER(fn, id)                                                      \
        DEFINE_DISK_GETTER(fn, 'x', int64_t, DISK_ATTR(d, id).err == 0 ? DISK_ATTR(d, id).value.num : (int64_t) -1)

DEFINE_ATTR_GETTER(property_get_nr_requests, ATTR_NR_REQUESTS);
DEFINE_ATTR_GETTER(property_get_wbt_lat_usec, ATTR_WBT_LAT_USEC);
DEFINE_ATTR_GETTER(property_get_read_ahead_kb, ATTR_READ_AHEAD_KB);
DEFINE_ATTR_GETTER(property_get_max_sectors_kb, ATTR_MAX_SECTORS_KB);
DEFINE_ATTR_GETTER(property_get_rq_affinity, ATTR_RQ_AFFINITY);
DEFINE_ATTR_GETTER(property_get_nomerges, ATTR_NOMERGES);
DEFINE_ATTR_GETTER(property_get_add_random, ATTR_ADD_RANDOM);
DEFINE_ATTR_GETTER(property_get_iostats, ATTR_IOSTATS);

static int property_get_schedulers(GETTER_ARGS) {
        const Disk *d = ((const DiskObject *) userdata)->disk;
        return sd_bus_message_append_strv(reply, d ? d->schedulers : NULL);
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

/* Tunables the kernel showed a value for: name, value. */
static bool tunable_record(const DiskObject *o, size_t i, Record *ret) {
        const Tunable *t = &o->disk->tunables[i];

        if (t->state.err < 0 || !t->state.raw)
                return false;
        *ret = (Record) { { t->name, t->state.raw }, 2 };
        return true;
}

/* Desired: key, value, rule, file, line. */
static bool desired_record(const DiskObject *o, size_t i, Record *ret) {
        const ResolvedSetting *rs = &o->resolved->settings[i];

        *ret = (Record) { { rs->setting->key, rs->setting->text, rs->rule->name, rs->rule->file }, 4,
                          true, rs->setting->line };
        return true;
}

/* MatchedRules: name, file, line. */
static bool rule_record(const DiskObject *o, size_t i, Record *ret) {
        const Rule *rule = o->resolved->rules[i];

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

DEFINE_ARRAY_GETTER(property_get_tunables, "{ss}", o->disk ? o->disk->n_tunables : 0, tunable_record);
DEFINE_ARRAY_GETTER(property_get_desired, "(ssssu)", o->resolved ? o->resolved->n_settings : 0,
                    desired_record);
DEFINE_ARRAY_GETTER(property_get_rules, "(ssu)", o->resolved ? o->resolved->n_rules : 0, rule_record);
DEFINE_ARRAY_GETTER(property_get_changes, "(sss)", strv_length(o->last_changes) / 3, change_record);

#define EC SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

/* Each property that emits changes, and the field of the dirty mask that it shows. */
#define DISK_PROPERTIES(X)                                                              \
        X("DevNum", "s", property_get_devnum, DISK_FIELD_DEVNUM)                        \
        X("Model", "s", property_get_model, DISK_FIELD_MODEL)                           \
        X("Vendor", "s", property_get_vendor, DISK_FIELD_VENDOR)                        \
        X("Serial", "s", property_get_serial, DISK_FIELD_SERIAL)                        \
        X("WWN", "s", property_get_wwn, DISK_FIELD_WWN)                                 \
        X("Transport", "s", property_get_transport, DISK_FIELD_TRANSPORT)               \
        X("Rotational", "b", property_get_rotational, DISK_FIELD_ROTATIONAL)            \
        X("Removable", "b", property_get_removable, DISK_FIELD_REMOVABLE)               \
        X("Zoned", "s", property_get_zoned, DISK_FIELD_ZONED)                           \
        X("Queues", "u", property_get_queues, DISK_FIELD_QUEUES)                        \
        X("SizeBytes", "t", property_get_size, DISK_FIELD_SIZE)                         \
        X("Scheduler", "s", property_get_scheduler, DISK_FIELD_SCHEDULER)               \
        X("AvailableSchedulers", "as", property_get_schedulers, DISK_FIELD_SCHEDULERS)  \
        X("NrRequests", "x", property_get_nr_requests, DISK_FIELD_ATTR + ATTR_NR_REQUESTS) \
        X("WbtLatUsec", "x", property_get_wbt_lat_usec, DISK_FIELD_ATTR + ATTR_WBT_LAT_USEC) \
        X("ReadAheadKB", "x", property_get_read_ahead_kb, DISK_FIELD_ATTR + ATTR_READ_AHEAD_KB) \
        X("MaxSectorsKB", "x", property_get_max_sectors_kb, DISK_FIELD_ATTR + ATTR_MAX_SECTORS_KB) \
        X("RqAffinity", "x", property_get_rq_affinity, DISK_FIELD_ATTR + ATTR_RQ_AFFINITY) \
        X("NoMerges", "x", property_get_nomerges, DISK_FIELD_ATTR + ATTR_NOMERGES)      \
        X("AddRandom", "x", property_get_add_random, DISK_FIELD_ATTR + ATTR_ADD_RANDOM) \
        X("IOStats", "x", property_get_iostats, DISK_FIELD_ATTR + ATTR_IOSTATS)         \
        X("Tunables", "a{ss}", property_get_tunables, DISK_FIELD_TUNABLES)              \
        X("IOCostQoS", "s", property_get_iocost_qos, DISK_FIELD_IOCOST_QOS)             \
        X("IOCostModel", "s", property_get_iocost_model, DISK_FIELD_IOCOST_MODEL)       \
        X("IOCostOtherWriter", "b", property_get_iocost_other_writer, DISK_FIELD_IOCOST_OTHER_WRITER) \
        X("Desired", "a(ssssu)", property_get_desired, DISK_OBJECT_DESIRED)             \
        X("MatchedRules", "a(ssu)", property_get_rules, DISK_OBJECT_RULES)              \
        X("LastApplied", "t", NULL, DISK_OBJECT_LAST_APPLIED) /* offsetof below */         \
        X("LastChanges", "a(sss)", property_get_changes, DISK_OBJECT_LAST_CHANGES)      \
        X("LastError", "s", property_get_last_error, DISK_OBJECT_LAST_ERROR)

static const sd_bus_vtable disk_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Name", "s", NULL, offsetof(DiskObject, name), SD_BUS_VTABLE_PROPERTY_CONST),
/* The one getter-less property: LastApplied, read at its offset. */
#define X(name, sig, getter, field) \
        SD_BUS_PROPERTY(name, sig, getter, (unsigned) (field) == DISK_OBJECT_LAST_APPLIED ? \
                        offsetof(DiskObject, last_applied) : 0, EC),
        DISK_PROPERTIES(X)
#undef X
        SD_BUS_VTABLE_END
};

static const struct {
        const char *name;
        unsigned field;
} disk_property_fields[] = {
#define X(name, sig, getter, field) { name, field },
        DISK_PROPERTIES(X)
#undef X
};

int disk_bus_path(const DiskObject *d, char **ret) {
        assert(d && ret);
        return sd_bus_path_encode(DISK_BUS_PATH_PREFIX, d->name, ret);
}

static int disk_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                     void **found, sd_bus_error *error) {
        _cleanup_(freep) char *name = NULL;
        Manager *m = userdata;
        DiskObject *d;

        if (sd_bus_path_decode(path, DISK_BUS_PATH_PREFIX, &name) <= 0)
                return 0;
        d = manager_find_disk(m, name);
        /* Unpublished (never read) disks are not on the bus yet. */
        if (!d || !d->disk)
                return 0;
        *found = d;
        return 1;
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
                if (!m->disks[i]->disk)
                        continue;
                r = disk_bus_path(m->disks[i], &l[n]);
                if (r < 0)
                        return r;
                n++;
        }
        *nodes = TAKE_PTR(l);
        return 1;
}

/* A property without a getter (Name, LastApplied), read at its offset as sd-bus would. */
static int append_at_offset(sd_bus_message *reply, const sd_bus_vtable *v, const DiskObject *d) {
        const void *p = (const uint8_t *) d + v->x.property.offset;

        if (v->x.property.signature[0] == 's')
                return sd_bus_message_append_basic(reply, 's', *(char * const *) p);
        assert(v->x.property.signature[0] == 't');
        return sd_bus_message_append_basic(reply, 't', p);
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
 * with every property of disk_vtable, in its order, as sd-bus's own GetAll has them. sd-bus's
 * object manager would also list Peer, Introspectable and Properties, without properties, for
 * every object; like GDBus's, ours lists the interface that has them: at 4096 disks the three
 * empty entries were 8% of what a client's sd-bus spent walking the reply (callgrind). */
static int append_interfaces(sd_bus_message *reply, DiskObject *d, const char *path, sd_bus_error *error) {
        sd_bus *bus = sd_bus_message_get_bus(reply);
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{sa{sv}}");
        if (r >= 0)
                r = open_entry(reply, "sa{sv}", 's', DISK_BUS_INTERFACE, 'a', "{sv}");
        for (const sd_bus_vtable *v = disk_vtable + 1; r >= 0 && v->type != _SD_BUS_VTABLE_END; v++) {
                const char *name = v->x.property.member;

                assert(v->type == _SD_BUS_VTABLE_PROPERTY);
                r = open_entry(reply, "sv", 's', name, 'v', v->x.property.signature);
                if (r >= 0)
                        r = v->x.property.get ?
                                v->x.property.get(bus, path, DISK_BUS_INTERFACE, name, reply, d, error) :
                                append_at_offset(reply, v, d);
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
                if (!m->disks[i]->disk)
                        continue;       /* unpublished, as in disk_find() */
                r = append_object(reply, m->disks[i], error);
                if (r < 0)
                        return r;
        }
        return 0;
}

int disk_bus_register(Manager *m) {
        int r;

        r = sd_bus_add_fallback_vtable(m->bus, NULL, DISK_BUS_PATH_PREFIX, DISK_BUS_INTERFACE,
                                       disk_vtable, disk_find, m);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(m->bus, NULL, DISK_BUS_PATH_PREFIX, disk_enumerate, m);
}

void disk_bus_emit_changed(DiskObject *d) {
        _cleanup_(freep) char *path = NULL;
        const char *names[ELEMENTSOF(disk_property_fields) + 1];
        size_t n = 0;
        int r;

        assert(d);
        for (size_t i = 0; i < ELEMENTSOF(disk_property_fields); i++)
                if (d->dirty & DISK_FIELD_BIT(disk_property_fields[i].field))
                        names[n++] = disk_property_fields[i].name;
        names[n] = NULL;
        d->dirty = 0;
        if (n == 0 || !d->manager->announcing)
                return;
        r = disk_bus_path(d, &path);
        if (r >= 0)
                r = sd_bus_emit_properties_changed_strv(d->manager->bus, path, DISK_BUS_INTERFACE,
                                                        (char **) names);
        if (r < 0)
                log_debug_errno(r, "%s: cannot emit PropertiesChanged: %m", d->name);
}

/* InterfacesAdded built like GetManagedObjects' entries (sd_bus_emit_object_added() walks the
 * object tree and the vtable for each of a storm's disks: four times the cost); InterfacesRemoved
 * names the interface that InterfacesAdded listed. */
static int emit_added(DiskObject *d, const char *path) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        int r;

        r = sd_bus_message_new_signal(d->manager->bus, &sig, DISK_BUS_MANAGER_PATH,
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
                        sd_bus_emit_interfaces_removed(d->manager->bus, path, DISK_BUS_INTERFACE, NULL);
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
