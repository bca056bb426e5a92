/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "host.h"
#include "log.h"
#include "sysfs-disk.h"
#include "util.h"

#define TUNABLES_MAX 64

/* Tunables */

static void tunables_clear(Disk *d) {
        for (size_t i = 0; i < d->n_tunables; i++) {
                free(d->tunables[i].name);
                attr_state_done(&d->tunables[i].state);
        }
        d->tunables = mfree(d->tunables);
        d->n_tunables = 0;
}

typedef struct TunableWalk {
        Sysfs *s;
        Disk *d;
        size_t n_allocated;
} TunableWalk;

static int tunable_add(const char *name, void *userdata) {
        TunableWalk *w = userdata;
        Disk *d = w->d;
        Tunable *t;

        if (!tunable_name_is_valid(name) || d->n_tunables >= TUNABLES_MAX)
                return 0;
        if (GREEDY_REALLOC(d->tunables, w->n_allocated, d->n_tunables + 1) < 0)
                return -ENOMEM;
        t = &d->tunables[d->n_tunables];
        *t = (Tunable) { .name = strdup(name) };
        if (!t->name)
                return -ENOMEM;
        d->n_tunables++;
        (void) sysfs_read_setting(w->s, d->name, attr_get(ATTR_IOSCHED), t->name, &t->state);
        return 0;
}

static int load_tunables(Sysfs *s, Disk *d) {
        TunableWalk w = { .s = s, .d = d };
        int r;

        tunables_clear(d);
        /* queue/iosched/ is the elevator's: a queue at "none" (or without a choice) has none,
         * and its look-up is one more under kernfs's lock for every new loop device. */
        if (!d->scheduler || streq(d->scheduler, "none"))
                return 0;
        r = sysfs_disk_foreach(s, d->name, "queue/iosched", tunable_add, &w);
        return r == -ENOENT ? 0 : r;
}

/* Settings */

/* Schedulers the queue does not list but whose module exists: the kernel loads one on the
 * first write of its name, so a policy may ask for it. */
static int load_loadable_schedulers(Sysfs *s, Disk *d) {
        char * const *modules;
        int r;

        r = sysfs_scheduler_modules(s, &modules);
        if (r < 0)
                return r;
        for (char * const *m = modules; *m; m++)
                if (!strv_contains(d->schedulers, *m) && strv_extend(&d->schedulers_loadable, *m) < 0)
                        return -ENOMEM;
        return 0;
}

/* The scheduler is always read: the guards depend on it. Its line also carries the list of
 * schedulers: parsed fully here. */
static int load_scheduler(Sysfs *s, Disk *d) {
        _cleanup_(attr_state_done) AttrState sched = {};
        int r;

        /* The text alone: sysfs_read_setting() would parse the line once more for its value,
         * which is not kept. */
        r = sysfs_read_disk_text(s, d->name, attr_get(ATTR_SCHEDULER)->path, &sched.raw);
        if (r < 0)
                sched.err = r;
        if (r == -ENODEV)
                return r;
        d->scheduler = mfree(d->scheduler);
        if (!d->schedulers_shared)
                strv_free(d->schedulers);
        d->schedulers = NULL;
        d->schedulers_shared = false;
        d->schedulers_loadable = strv_free(d->schedulers_loadable);
        d->has_scheduler_file = r != -ENOENT;
        if (r >= 0) {
                r = scheduler_parse(sched.raw, &d->scheduler, &d->schedulers);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        sched.err = -EBADMSG;   /* as attr_state_parse() says it */
                else {
                        r = load_loadable_schedulers(s, d);
                        if (r < 0)
                                return r;
                        d->schedulers_shared = scheduler_list_intern(&d->schedulers) > 0;
                }
        }
        /* d->scheduler and d->schedulers are what is used of the line: its text stays only for
         * a queue without a choice (the planner quotes it), not in each of thousands of
         * readings a daemon keeps. */
        value_done(&sched.value);
        if (d->scheduler)
                sched.raw = mfree(sched.raw);
        attr_state_done(&DISK_ATTR(d, ATTR_SCHEDULER));
        DISK_ATTR(d, ATTR_SCHEDULER) = sched;
        sched = (AttrState) {};
        return 0;
}

static void load_queue_attrs(Sysfs *s, Disk *d) {
        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                if (id == ATTR_SCHEDULER || id == ATTR_IOSCHED || !(d->load.attrs & ATTR_BIT(id)) ||
                    attr_get(id)->file != ATTR_FILE_QUEUE)
                        continue;
                (void) sysfs_read_setting(s, d->name, attr_get(id), NULL, &DISK_ATTR(d, id));
        }
}

static int load_iocost_lines(Sysfs *s, Disk *d) {
        /* The lines are keyed by MAJ:MIN: a hidden disk has none (the states stay unread). */
        if (!(d->load.attrs & ATTR_IOCOST_BITS_MASK) || !d->devnum)
                return 0;
        for (AttrFile f = ATTR_FILE_IOCOST_MODEL; f <= ATTR_FILE_IOCOST_QOS; f++)
                if (sysfs_read_iocost(s, d->name, d->devnum, f, &DISK_IOCOST(d, f)) == -ENOMEM)
                        return -ENOMEM;
        return 0;
}

/* The disk may have gone away while it was read: tell the caller rather than planning on a
 * half-read disk. del_gendisk() removes queue/ first and "dev" last: a disk with queue/ was
 * not being deleted when it was looked for, so "dev" (or "hidden") needs no look-up of its own
 * (below a pinned directory, a disk made again under the name is not this one either). */
static int check_still_there(Sysfs *s, const Disk *d) {
        return sysfs_disk_has(s, d->name, "queue") ? 0 : -ENODEV;
}

int sysfs_reload_settings(Sysfs *s, Disk *d) {
        int r;

        assert(s && d);
        r = load_scheduler(s, d);
        if (r < 0)
                return r;
        load_queue_attrs(s, d);
        r = load_iocost_lines(s, d);
        if (r < 0)
                return r;
        if (d->load.attrs & ATTR_BIT(ATTR_IOSCHED)) {
                r = load_tunables(s, d);
                if (r < 0)
                        return r;
        }
        return check_still_there(s, d);
}

/* Identity */

/* An optional file of the disk: absent, unreadable or not printable leaves *dst as it is. */
static int read_optional(Sysfs *s, const char *disk, const char *rel, char **dst) {
        _cleanup_(freep) char *v = NULL;
        int r;

        r = sysfs_read_disk_text(s, disk, rel, &v);
        if (r < 0)
                return ERRNO_IS_GONE(r) || r == -EACCES || r == -EIO || r == -EINVAL ? 0 : r;
        if (!*v || !string_is_printable(v, UDEV_PROP_IDENTITY_MAX))
                return 0;
        free(*dst);
        *dst = TAKE_PTR(v);
        return 0;
}

static int dup_identity(char **dst, const char *v) {
        return v ? free_and_strdup(dst, v) : 0;
}

/* What the device says of itself in sysfs, where udev said nothing. Virtual disks (loop, zram,
 * dm, ...) have no device: the reads are spared. */
static int load_identity_sysfs(Sysfs *s, Disk *d) {
        int r;

        /* A disk below /devices/virtual has no device (no parent on a bus): no look-up. */
        if ((d->devpath && startswith(d->devpath, "/devices/virtual/")) ||
            !sysfs_disk_has(s, d->name, "device"))
                return 0;
        r = read_optional(s, d->name, "device/model", &d->model_sysfs);
        if (r >= 0)
                r = read_optional(s, d->name, "device/vendor", &d->vendor_sysfs);
        if (r >= 0 && !d->serial)
                r = read_optional(s, d->name, "device/serial", &d->serial);
        if (r >= 0 && !d->wwn)
                r = read_optional(s, d->name, "wwid", &d->wwn);
        if (r >= 0 && !d->wwn)
                r = read_optional(s, d->name, "device/wwid", &d->wwn);
        if (r < 0)
                return r;
        if (!d->model && d->model_sysfs && free_and_strdup(&d->model, d->model_sysfs) < 0)
                return -ENOMEM;
        if (!d->vendor && d->vendor_sysfs && free_and_strdup(&d->vendor, d->vendor_sysfs) < 0)
                return -ENOMEM;
        return 0;
}

/* udev's DEVPATH when it is this disk's: "/devices/.../NAME". */
static const char *udev_devpath(const UdevProps *udev, const char *name) {
        const char *p = udev ? udev->devpath : NULL, *base;

        if (!p || !startswith(p, "/devices/") || strstr(p, "/../") || strstr(p, "/./"))
                return NULL;
        base = strrchr(p, '/');
        return streq(base + 1, name) ? p : NULL;
}

/* udev's identity first (it knows the spelling people match on), then the device's own. */
static int load_identity(Sysfs *s, Disk *d, const UdevProps *udev) {
        const char *devpath = udev_devpath(udev, d->name);
        int r;

        /* The link's target tells the transport (a kernfs walk per call, under the lock the
         * kernel creating disks takes): the event's DEVPATH says the same. */
        if (devpath)
                r = free_and_strdup(&d->devpath, devpath);
        else
                r = sysfs_disk_devpath(s, d->name, &d->devpath);
        if (r == -ENOMEM)
                return r;
        if (udev) {
                if (dup_identity(&d->model, udev->model) < 0 ||
                    dup_identity(&d->vendor, udev->vendor) < 0 ||
                    dup_identity(&d->serial, udev->serial) < 0 ||
                    dup_identity(&d->wwn, udev->wwn) < 0)
                        return -ENOMEM;
        }
        return load_identity_sysfs(s, d);
}

static bool is_iocost_prop(const char *name) {
        return startswith(name, "IOCOST_");
}

/* The udev properties a disk keeps: the hwdb's for iocost, and those the other writers' rules
 * match on (load.udev_keys). */
static int load_udev_kept(Disk *d, const UdevProps *udev) {
        bool iocost = d->load.attrs & ATTR_IOCOST_BITS_MASK;

        d->udev_read = udev;
        if (!iocost && strv_isempty(d->load.udev_keys))
                return 0;
        return udev_props_copy_keys(udev, iocost ? is_iocost_prop : NULL, d->load.udev_keys, &d->udev);
}

/* Stack */

#define STACK_HOLDERS_MAX 16

typedef struct HolderWalk {
        Sysfs *s;
        StackHolder holders[STACK_HOLDERS_MAX];
        char *uuids[STACK_HOLDERS_MAX];
        char *names[STACK_HOLDERS_MAX];
        size_t n;
} HolderWalk;

static void holder_walk_done(HolderWalk *w) {
        for (size_t i = 0; i < w->n; i++) {
                free(w->names[i]);
                free(w->uuids[i]);
        }
}

/* The kernel names a device-mapper disk "dm-<minor>" and an md array "md<N>" ("md_d<N>"):
 * no other disk has dm/ or md/, and a look-up spared is one kernfs walk less for each disk of
 * a storm. */
static bool maybe_dm(const char *name) {
        return startswith(name, "dm-");
}

static bool maybe_md(const char *name) {
        return startswith(name, "md");
}

/* One entry of holders/: a dm device tells its uuid, an md array has md/. */
static int holder_add(const char *name, void *userdata) {
        HolderWalk *w = userdata;
        int r;

        if (w->n >= STACK_HOLDERS_MAX || !disk_name_is_valid(name))
                return 0;
        w->names[w->n] = strdup(name);
        if (!w->names[w->n])
                return -ENOMEM;
        r = maybe_dm(name) ? sysfs_read_disk_text(w->s, name, "dm/uuid", &w->uuids[w->n]) : 0;
        if (r == -ENOMEM)
                return r;
        w->holders[w->n] = (StackHolder) {
                .name = w->names[w->n],
                .dm_uuid = w->uuids[w->n],
                .md = !w->uuids[w->n] && maybe_md(name) && sysfs_disk_has(w->s, name, "md"),
        };
        w->n++;
        return 0;
}

/* The disk's place in a storage stack: dm/, md/ and holders/ from sysfs, udev's marks when it
 * has them. A few look-ups a disk: holders/ is empty for most. */
static int load_stack(Sysfs *s, Disk *d, const UdevProps *udev) {
        _cleanup_(holder_walk_done) HolderWalk w = { .s = s };
        _cleanup_(freep) char *uuid = NULL, *devpath = NULL;
        StackFacts f = { .name = d->name, .devpath = d->devpath };
        int r;

        /* Only an NVMe head or path is told by where it hangs. */
        if (!f.devpath && startswith(d->name, "nvme")) {
                r = sysfs_disk_devpath(s, d->name, &devpath);
                if (r == -ENOMEM)
                        return r;
                f.devpath = devpath;
        }
        f.dm = maybe_dm(d->name) && sysfs_disk_has(s, d->name, "dm");
        if (f.dm) {
                r = sysfs_read_disk_text(s, d->name, "dm/uuid", &uuid);
                if (r == -ENOMEM)
                        return r;
                f.dm_uuid = uuid;
        } else
                f.md = maybe_md(d->name) && sysfs_disk_has(s, d->name, "md");
        if (!f.dm && !f.md) {
                r = sysfs_disk_foreach(s, d->name, "holders", holder_add, &w);
                if (r == -ENOMEM)
                        return r;
                f.holders = w.holders;
                f.n_holders = w.n;
        }
        if (udev) {
                f.multipath_device_path = udev->multipath_device_path;
                f.block_subsystem = udev->block_subsystem;
        }
        stack_done(&d->stack);
        return stack_classify(&f, &d->stack);
}

/* Flags and details */

static void load_flags(Sysfs *s, Disk *d) {
        int64_t v;

        if (sysfs_read_disk_number(s, d->name, "queue/rotational", &v) >= 0)
                d->rotational = v != 0;
        if (sysfs_read_disk_number(s, d->name, "removable", &v) >= 0)
                d->removable = v != 0;
}

static void load_details(Sysfs *s, Disk *d) {
        int64_t v;

        if (sysfs_read_disk_number(s, d->name, "size", &v) >= 0 && v >= 0)
                d->size_bytes = (uint64_t) v * 512;
        if (sysfs_read_disk_number(s, d->name, "queue/max_hw_sectors_kb", &v) >= 0)
                d->max_hw_sectors_kb = v;
}

static void load_zoned(Sysfs *s, Disk *d) {
        _cleanup_(freep) char *z = NULL;
        int k;

        if (sysfs_read_disk_text(s, d->name, "queue/zoned", &z) >= 0 && (k = zoned_from_string(z)) >= 0)
                d->zoned = k;
}

static int count_queue(const char *name, void *userdata) {
        unsigned *n = userdata;

        if (name[0] >= '0' && name[0] <= '9')
                (*n)++;
        return 0;
}

static unsigned count_hw_queues(Sysfs *s, const char *disk) {
        unsigned n = 0;

        return sysfs_disk_foreach(s, disk, "mq", count_queue, &n) < 0 ? 0 : n;
}

/* The device: its number, and which instance of it (a disk removed and made again, a loop
 * device, may get the same name and number; diskseq tells the instances apart). */
static int load_device(Sysfs *s, Disk *d) {
        int64_t hidden;
        int r;

        r = sysfs_read_disk_text(s, d->name, "dev", &d->devnum);
        /* A hidden disk has queue/ and no dev: the kernel gives it no number. */
        if (r == -ENOENT && sysfs_read_disk_number(s, d->name, "hidden", &hidden) >= 0 && hidden == 1)
                d->hidden = true;
        else if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        if (sysfs_read_disk_number(s, d->name, "diskseq", &d->diskseq) < 0 || d->diskseq < 0)
                d->diskseq = 0;
        /* A partition has no queue/: a disk pinned with one needs no look-up of "partition". */
        d->partition = !sysfs_disk_pinned_with_queue(s, d->name) && sysfs_disk_has(s, d->name, "partition");
        return 0;
}

static int load_udev_db(Sysfs *s, const Disk *d, UdevProps **ret) {
        int r;

        r = host_udev_db_read(sysfs_root_fd(s), d->devnum, ret);
        return r == -EINVAL ? 0 : r;    /* a devnum that is no "MAJ:MIN": no entry */
}

static int load_all(Sysfs *s, Disk *d, const UdevProps *udev) {
        _cleanup_(udev_props_freep) UdevProps *db = NULL;
        int r;

        r = load_device(s, d);
        if (r < 0)
                return r;
        /* Without udev's properties from the caller, its database has them. */
        if (!udev && d->devnum && (d->load.identity || !strv_isempty(d->load.udev_keys))) {
                r = load_udev_db(s, d, &db);
                if (r < 0)
                        return r;
                udev = db;
        }
        if (d->load.identity) {
                r = load_identity(s, d, udev);
                if (r < 0)
                        return r;
        }
        /* Whether the kernel sets rq-qos up with a static key (iocost's guard). */
        if (d->load.attrs & ATTR_IOCOST_BITS_MASK)
                d->rqos_static_key = kernel_has_rqos_static_key(sysfs_kernel_release(s));
        r = load_udev_kept(d, udev);
        if (r < 0)
                return r;
        d->transport = transport_classify(d->name, d->devpath, udev ? udev->bus : NULL);
        if (d->load.flags)
                load_flags(s, d);
        if (d->load.details || (d->load.attrs & ATTR_BIT(ATTR_MAX_SECTORS_KB)))
                load_details(s, d);
        load_zoned(s, d);
        if (d->load.queues)
                d->nr_hw_queues = count_hw_queues(s, d->name);
        if (d->partition)
                return 0;
        r = load_stack(s, d, udev);
        if (r < 0)
                return r;
        return sysfs_reload_settings(s, d);
}

int sysfs_load_disk(Sysfs *s, const char *name, const UdevProps *udev, const DiskLoad *what,
                    Disk **ret) {
        _cleanup_(disk_freep) Disk *d = NULL;
        int r;

        assert(s && ret);
        if (!disk_name_is_valid(name))
                return -EINVAL;
        /* Below the disk's directory when the caller pinned it (disk_run()), else each file is
         * walked to from sys/class/block; a disk that goes away meanwhile fails the reads. */
        d = disk_new(name);
        if (!d)
                return -ENOMEM;
        d->load = what ? *what : DISK_LOAD_ALL;
        d->hz = sysfs_hz(s);
        r = load_all(s, d, udev);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(d);
        return 0;
}
