/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "ioschedd-disk-bus.h"
#include "log.h"
#include "util.h"

static DiskObject *disk_of(void *userdata) {
        return userdata;
}

static int property_get_string(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error) {
        DiskObject *o = disk_of(userdata);
        const Disk *d = o->disk;
        const char *v = NULL;

        if (streq(property, "Name"))
                v = o->name;
        else if (!d)
                v = NULL;
        else if (streq(property, "DevNum"))
                v = d->devnum;
        else if (streq(property, "Model"))
                v = d->model;
        else if (streq(property, "Vendor"))
                v = d->vendor;
        else if (streq(property, "Serial"))
                v = d->serial;
        else if (streq(property, "WWN"))
                v = d->wwn;
        else if (streq(property, "Transport"))
                v = transport_to_string(d->transport);
        else if (streq(property, "Zoned"))
                v = zoned_to_string(d->zoned);
        else if (streq(property, "Scheduler"))
                /* A queue without a choice shows "none", one without the file "". */
                v = d->scheduler ?: (d->has_scheduler_file ? "none" : "");
        else if (streq(property, "LastError"))
                v = o->last_error;
        else if (streq(property, "IOCostQoS"))
                /* The kernel's line without MAJ:MIN; "" when iocost is not set up on the disk
                 * or not applicable on the system. */
                v = d->iocost[ATTR_FILE_IOCOST_QOS].err == 0 ? d->iocost[ATTR_FILE_IOCOST_QOS].raw : NULL;
        else if (streq(property, "IOCostModel"))
                v = d->iocost[ATTR_FILE_IOCOST_MODEL].err == 0 ? d->iocost[ATTR_FILE_IOCOST_MODEL].raw : NULL;
        return sd_bus_message_append_basic(reply, 's', strempty(v));
}

static int property_get_bool(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error) {
        const Disk *d = disk_of(userdata)->disk;
        int v = 0;

        if (d && streq(property, "Rotational"))
                v = d->rotational == 1;
        else if (d && streq(property, "Removable"))
                v = d->removable == 1;
        else if (d && streq(property, "IOCostOtherWriter"))
                v = d->iocost_other_writer;
        return sd_bus_message_append(reply, "b", v);
}

static int property_get_queues(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error) {
        const Disk *d = disk_of(userdata)->disk;
        return sd_bus_message_append(reply, "u", d ? d->nr_hw_queues : 0);
}

static int property_get_size(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error) {
        const Disk *d = disk_of(userdata)->disk;
        return sd_bus_message_append(reply, "t", d ? d->size_bytes : UINT64_C(0));
}

static int property_get_last_applied(sd_bus *bus, const char *path, const char *interface,
                                     const char *property, sd_bus_message *reply, void *userdata,
                                     sd_bus_error *error) {
        return sd_bus_message_append(reply, "t", disk_of(userdata)->last_applied);
}

static int property_get_schedulers(sd_bus *bus, const char *path, const char *interface,
                                   const char *property, sd_bus_message *reply, void *userdata,
                                   sd_bus_error *error) {
        const Disk *d = disk_of(userdata)->disk;
        return sd_bus_message_append_strv(reply, d ? d->schedulers : NULL);
}

/* The current value of an attribute of the table (attr.c): the property is named there. -1
 * when the kernel has no such file for this disk or the read failed (wbt_lat_usec fails with
 * EINVAL until wbt is set up). */
static int property_get_attr(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error) {
        const Disk *d = disk_of(userdata)->disk;
        int64_t v = -1;

        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                const AttrInfo *a = attr_get(id);

                if (!a->property || !streq(a->property, property) || a->kind == ATTR_KIND_SCHEDULER)
                        continue;
                if (d && d->attrs[id].err == 0)
                        v = d->attrs[id].value.num;
                break;
        }
        return sd_bus_message_append(reply, "x", v);
}

static int property_get_tunables(sd_bus *bus, const char *path, const char *interface,
                                 const char *property, sd_bus_message *reply, void *userdata,
                                 sd_bus_error *error) {
        const Disk *d = disk_of(userdata)->disk;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{ss}");
        if (r < 0)
                return r;
        for (size_t i = 0; d && i < d->n_tunables; i++) {
                const Tunable *t = &d->tunables[i];

                if (t->state.err < 0 || !t->state.raw)
                        continue;
                r = sd_bus_message_append(reply, "{ss}", t->name, t->state.raw);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_desired(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        const Resolved *res = disk_of(userdata)->resolved;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ssssu)");
        if (r < 0)
                return r;
        for (size_t i = 0; res && i < res->n_settings; i++) {
                const ResolvedSetting *rs = &res->settings[i];

                r = sd_bus_message_append(reply, "(ssssu)", rs->setting->key, rs->setting->text,
                                          rs->rule->name, rs->rule->file, rs->setting->line);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_rules(sd_bus *bus, const char *path, const char *interface,
                              const char *property, sd_bus_message *reply, void *userdata,
                              sd_bus_error *error) {
        const Resolved *res = disk_of(userdata)->resolved;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ssu)");
        if (r < 0)
                return r;
        for (size_t i = 0; res && i < res->n_rules; i++) {
                r = sd_bus_message_append(reply, "(ssu)", res->rules[i]->name, res->rules[i]->file,
                                          res->rules[i]->line);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_changes(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error) {
        const Plan *p = disk_of(userdata)->last_report;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sss)");
        if (r < 0)
                return r;
        for (size_t i = 0; p && i < p->n_actions; i++) {
                const Action *a = &p->actions[i];

                if (a->outcome != OUTCOME_WRITTEN)
                        continue;
                r = sd_bus_message_append(reply, "(sss)", a->key, strempty(a->current),
                                          strempty(a->result ?: a->write));
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

#define EC SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

const sd_bus_vtable disk_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Name", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("DevNum", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("Model", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("Vendor", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("Serial", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("WWN", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("Transport", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("Rotational", "b", property_get_bool, 0, EC),
        SD_BUS_PROPERTY("Removable", "b", property_get_bool, 0, EC),
        SD_BUS_PROPERTY("Zoned", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("Queues", "u", property_get_queues, 0, EC),
        SD_BUS_PROPERTY("SizeBytes", "t", property_get_size, 0, EC),
        SD_BUS_PROPERTY("Scheduler", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("AvailableSchedulers", "as", property_get_schedulers, 0, EC),
        SD_BUS_PROPERTY("NrRequests", "x", property_get_attr, 0, EC),
        SD_BUS_PROPERTY("WbtLatUsec", "x", property_get_attr, 0, EC),
        SD_BUS_PROPERTY("ReadAheadKB", "x", property_get_attr, 0, EC),
        SD_BUS_PROPERTY("MaxSectorsKB", "x", property_get_attr, 0, EC),
        SD_BUS_PROPERTY("RqAffinity", "x", property_get_attr, 0, EC),
        SD_BUS_PROPERTY("NoMerges", "x", property_get_attr, 0, EC),
        SD_BUS_PROPERTY("AddRandom", "x", property_get_attr, 0, EC),
        SD_BUS_PROPERTY("IOStats", "x", property_get_attr, 0, EC),
        SD_BUS_PROPERTY("Tunables", "a{ss}", property_get_tunables, 0, EC),
        SD_BUS_PROPERTY("IOCostQoS", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("IOCostModel", "s", property_get_string, 0, EC),
        SD_BUS_PROPERTY("IOCostOtherWriter", "b", property_get_bool, 0, EC),
        SD_BUS_PROPERTY("Desired", "a(ssssu)", property_get_desired, 0, EC),
        SD_BUS_PROPERTY("MatchedRules", "a(ssu)", property_get_rules, 0, EC),
        SD_BUS_PROPERTY("LastApplied", "t", property_get_last_applied, 0, EC),
        SD_BUS_PROPERTY("LastChanges", "a(sss)", property_get_changes, 0, EC),
        SD_BUS_PROPERTY("LastError", "s", property_get_string, 0, EC),
        SD_BUS_VTABLE_END
};

static int disk_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                     void **found, sd_bus_error *error) {
        Manager *m = userdata;
        DiskObject *d = manager_find_disk_by_path(m, path);

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

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_disks; i++) {
                if (!m->disks[i]->disk)
                        continue;
                r = strv_extend(&l, m->disks[i]->path);
                if (r < 0)
                        return r;
        }
        *nodes = TAKE_PTR(l);
        return 1;
}

int disk_bus_register(Manager *m) {
        int r;

        r = sd_bus_add_fallback_vtable(m->bus, NULL, DISK_BUS_PATH_PREFIX, DISK_BUS_INTERFACE,
                                       disk_vtable, disk_find, m);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(m->bus, NULL, DISK_BUS_PATH_PREFIX, disk_enumerate, m);
}

/* Render one property through its own getter: the text is what a client would see. */
static char *render_property(DiskObject *d, const sd_bus_vtable *v) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        _cleanup_(freep) char *buf = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        size_t size = 0;
        FILE *f;
        int r;

        r = sd_bus_message_new_signal(d->manager->bus, &msg, d->path, DISK_BUS_INTERFACE, "Snapshot");
        if (r < 0)
                return NULL;
        r = v->x.property.get(d->manager->bus, d->path, DISK_BUS_INTERFACE, v->x.property.member,
                              msg, d, &error);
        sd_bus_error_free(&error);
        if (r < 0)
                return NULL;
        r = sd_bus_message_seal(msg, 1, 0);
        if (r < 0)
                return NULL;
        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        r = sd_bus_message_dump(msg, f, 0);
        if (fclose(f) != 0 || r < 0)
                return NULL;
        return TAKE_PTR(buf);
}

static bool vtable_emits(const sd_bus_vtable *v) {
        return v->type == _SD_BUS_VTABLE_PROPERTY && (v->flags & SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE);
}

char **disk_bus_snapshot(DiskObject *d) {
        size_t n = 0;
        char **l;

        if (!d->manager->bus)
                return NULL;
        for (const sd_bus_vtable *v = disk_vtable; v->type != _SD_BUS_VTABLE_END; v++)
                n += vtable_emits(v);
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return NULL;
        n = 0;
        for (const sd_bus_vtable *v = disk_vtable; v->type != _SD_BUS_VTABLE_END; v++)
                if (vtable_emits(v)) {
                        l[n] = render_property(d, v);
                        if (!l[n])
                                l[n] = strdup("");      /* compares as changed */
                        n++;
                }
        /* A NULL in the middle would end the list early: fill it. */
        for (size_t i = 0; i < n; i++)
                if (!l[i])
                        return strv_free(l);
        return l;
}

void disk_bus_emit_changed(DiskObject *d, char **before) {
        _cleanup_(strv_freep) char **after = NULL, **names = NULL;
        size_t i = 0;
        int r;

        if (!d->manager->bus)
                return;
        after = disk_bus_snapshot(d);
        names = calloc(1, sizeof(char *));
        if (!names)
                return;
        for (const sd_bus_vtable *v = disk_vtable; v->type != _SD_BUS_VTABLE_END; v++) {
                if (!vtable_emits(v))
                        continue;
                if (!before || !after || !before[i] || !after[i] || !streq(before[i], after[i]))
                        if (strv_extend(&names, v->x.property.member) < 0)
                                return;
                i++;
        }
        if (strv_isempty(names))
                return;
        r = sd_bus_emit_properties_changed_strv(d->manager->bus, d->path, DISK_BUS_INTERFACE, names);
        if (r < 0)
                log_debug_errno(r, "%s: cannot emit PropertiesChanged: %m", d->name);
}

void disk_bus_emit_added(DiskObject *d) {
        int r;

        if (!d->manager->bus)
                return;
        r = sd_bus_emit_object_added(d->manager->bus, d->path);
        if (r < 0)
                log_debug_errno(r, "%s: cannot emit InterfacesAdded: %m", d->name);
}

void disk_bus_emit_removed(DiskObject *d) {
        int r;

        if (!d->manager->bus)
                return;
        r = sd_bus_emit_object_removed(d->manager->bus, d->path);
        if (r < 0)
                log_debug_errno(r, "%s: cannot emit InterfacesRemoved: %m", d->name);
}
