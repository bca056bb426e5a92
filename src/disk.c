/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#include "disk.h"
#include "writers.h"
#include "util.h"

static const char *const transport_names[_TRANSPORT_MAX] = {
        [TRANSPORT_NVME] = "nvme",       [TRANSPORT_ATA] = "ata",
        [TRANSPORT_SCSI] = "scsi",       [TRANSPORT_USB] = "usb",
        [TRANSPORT_VIRTIO] = "virtio",   [TRANSPORT_XEN] = "xen",
        [TRANSPORT_MMC] = "mmc",         [TRANSPORT_LOOP] = "loop",
        [TRANSPORT_ZRAM] = "zram",       [TRANSPORT_NBD] = "nbd",
        [TRANSPORT_UBLK] = "ublk",       [TRANSPORT_RBD] = "rbd",
        [TRANSPORT_NULL_BLK] = "null_blk", [TRANSPORT_PMEM] = "pmem",
        [TRANSPORT_MD] = "md",           [TRANSPORT_DM] = "dm",
        [TRANSPORT_OTHER] = "other",
};

DEFINE_STRING_TABLE_LOOKUP(transport, Transport, transport_names, _TRANSPORT_MAX);

static const char *const zoned_names[_ZONED_MAX] = {
        [ZONED_NONE] = "none",
        [ZONED_HOST_AWARE] = "host-aware",
        [ZONED_HOST_MANAGED] = "host-managed",
};

DEFINE_STRING_TABLE_LOOKUP(zoned, Zoned, zoned_names, _ZONED_MAX);

static bool name_has_prefix_digit(const char *name, const char *prefix) {
        const char *p = startswith(name, prefix);
        return p && *p >= '0' && *p <= '9';
}

Transport transport_classify(const char *name, const char *devpath, const char *id_bus) {
        static const struct {
                const char *prefix;
                Transport t;
        } by_name[] = {
                { "nvme", TRANSPORT_NVME },    { "vd", TRANSPORT_VIRTIO },
                { "xvd", TRANSPORT_XEN },      { "mmcblk", TRANSPORT_MMC },
                { "loop", TRANSPORT_LOOP },    { "zram", TRANSPORT_ZRAM },
                { "nbd", TRANSPORT_NBD },      { "ublkb", TRANSPORT_UBLK },
                { "rbd", TRANSPORT_RBD },      { "nullb", TRANSPORT_NULL_BLK },
                { "pmem", TRANSPORT_PMEM },    { "md", TRANSPORT_MD },
                { "dm-", TRANSPORT_DM },
        };

        assert(name);
        for (size_t i = 0; i < ELEMENTSOF(by_name); i++) {
                const char *p = startswith(name, by_name[i].prefix);

                if (!p)
                        continue;
                /* "vd" and "xvd" are followed by letters, the others by a number. */
                if (by_name[i].t == TRANSPORT_VIRTIO || by_name[i].t == TRANSPORT_XEN) {
                        if (*p >= 'a' && *p <= 'z')
                                return by_name[i].t;
                        continue;
                }
                if (by_name[i].t == TRANSPORT_DM || name_has_prefix_digit(name, by_name[i].prefix))
                        return by_name[i].t;
        }

        /* SCSI disks: the bus they hang off. udev knows best (virtio-scsi disks are "scsi" to
         * udev too); the sysfs path tells too, in this order: a SCSI target below a virtio
         * device is virtio-scsi, a SCSI disk with SCSI's queueing, not virtio-blk (whose disks
         * are named vd*, matched above). */
        static const struct {
                const char *s;
                Transport t;
        } by_bus[] = {
                { "ata", TRANSPORT_ATA }, { "usb", TRANSPORT_USB }, { "nvme", TRANSPORT_NVME },
                { "scsi", TRANSPORT_SCSI },
        }, by_path[] = {
                { "/usb", TRANSPORT_USB }, { "/ata", TRANSPORT_ATA }, { "/target", TRANSPORT_SCSI },
                { "/virtio", TRANSPORT_VIRTIO }, { "/mmc", TRANSPORT_MMC }, { "/nvme", TRANSPORT_NVME },
        };
        for (size_t i = 0; id_bus && i < ELEMENTSOF(by_bus); i++)
                if (streq(id_bus, by_bus[i].s))
                        return by_bus[i].t;
        for (size_t i = 0; devpath && i < ELEMENTSOF(by_path); i++)
                if (strstr(devpath, by_path[i].s))
                        return by_path[i].t;
        if (startswith(name, "sd") || startswith(name, "sr") || (id_bus && streq(id_bus, "scsi")))
                return TRANSPORT_SCSI;
        return TRANSPORT_OTHER;
}

bool disk_name_is_valid(const char *name) {
        return name && name[0] != '.' && string_in_charset(name, CHARSET_ALNUM "-_.:+!", 31);
}

int scheduler_list_intern(char ***l) {
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        static char **kept[64];
        static size_t n_kept;
        int r = 0;

        assert(l && *l);
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < n_kept; i++)
                if (strv_equal(kept[i], *l)) {
                        strv_free(*l);
                        *l = kept[i];
                        r = 1;
                        goto unlock;
                }
        if (n_kept < ELEMENTSOF(kept)) {
                kept[n_kept++] = *l;
                r = 1;
        }
unlock:
        pthread_mutex_unlock(&lock);
        return r;
}

int scheduler_parse(const char *text, char **ret_current, char ***ret_available) {
        _cleanup_(strv_freep) char **words = NULL, **available = NULL;
        _cleanup_(freep) char *current = NULL;
        int r;

        assert(text && ret_current && ret_available);
        r = strv_split(text, " \t\n", &words);
        if (r < 0)
                return r;
        if (strv_length(words) == 0)
                return -EINVAL;

        available = calloc(1, sizeof(char *));
        if (!available)
                return -ENOMEM;
        for (char **w = words; *w; w++) {
                char *name = *w;
                size_t l = strlen(name);
                bool bracketed = false;

                if (name[0] == '[') {
                        if (l < 3 || name[l - 1] != ']' || current)
                                return -EINVAL;
                        name[l - 1] = 0;
                        name++;
                        bracketed = true;
                }
                if (!scheduler_name_is_valid(name))
                        return -EINVAL;
                if (bracketed) {
                        current = strdup(name);
                        if (!current)
                                return -ENOMEM;
                }
                r = strv_extend(&available, name);
                if (r < 0)
                        return r;
        }

        /* A lone unbracketed "none" means the queue has no elevator support (6.13 and older
         * BLK_MQ_F_NO_SCHED queues); several names without brackets make no sense. */
        if (!current && !(strv_length(available) == 1 && streq(available[0], "none")))
                return -EINVAL;

        *ret_current = TAKE_PTR(current);
        *ret_available = TAKE_PTR(available);
        return 0;
}

void attr_state_done(AttrState *st) {
        st->raw = mfree(st->raw);
        value_done(&st->value);
        st->err = 0;
}

void attr_state_parse_number(AttrState *st) {
        int64_t v;

        assert(st);
        if (st->err < 0)
                return;
        if (safe_atoi64(st->raw, INT64_MIN, INT64_MAX, &v) < 0) {
                st->err = -EBADMSG;
                return;
        }
        st->value.num = v;
}

int attr_state_parse(const AttrInfo *a, AttrState *st) {
        assert(a && st);

        if (st->err < 0)
                return st->err;
        value_done(&st->value);

        if (a->kind == ATTR_KIND_SCHEDULER) {
                _cleanup_(freep) char *current = NULL;
                _cleanup_(strv_freep) char **available = NULL;
                int r;

                r = scheduler_parse(st->raw, &current, &available);
                if (r < 0)
                        return (st->err = r == -ENOMEM ? r : -EBADMSG);
                /* list[0] is the current scheduler; the rest of the list is unused here. */
                st->value.list = calloc(2, sizeof(char *));
                if (!st->value.list)
                        return (st->err = -ENOMEM);
                st->value.list[0] = TAKE_PTR(current);
                return 0;
        }

        attr_state_parse_number(st);
        /* A number is kept as a number: thousands of disks each hold a reading. Tunables keep
         * their text, which is what Tunables shows. */
        if (st->err == 0 && a->id != ATTR_IOSCHED)
                st->raw = mfree(st->raw);
        return st->err;
}

/* Slot + 1: 0 is "none". Every queue file of the table has one (test-attr checks). */
static const uint8_t attr_slots[_ATTR_MAX] = {
        [ATTR_SCHEDULER] = 1,
        [ATTR_NR_REQUESTS] = 2,
        [ATTR_WBT_LAT_USEC] = 3,
        [ATTR_MAX_SECTORS_KB] = 4,
        [ATTR_RQ_AFFINITY] = 5,
        [ATTR_NOMERGES] = 6,
        [ATTR_ADD_RANDOM] = 7,
        [ATTR_IOSTATS] = 8,
        [ATTR_READ_AHEAD_KB] = 9,
};

int disk_attr_slot(AttrId id) {
        return id < _ATTR_MAX ? (int) attr_slots[id] - 1 : -1;
}

size_t disk_attr_slot_checked(AttrId id) {
        int slot = disk_attr_slot(id);

        assert(slot >= 0 && slot < DISK_ATTR_SLOTS);
        return (size_t) slot;
}

Disk *disk_new(const char *name) {
        Disk *d = calloc(1, sizeof(Disk));

        assert(name);
        if (!d)
                return NULL;
        d->name = strdup(name);
        if (!d->name)
                return mfree(d);
        d->rotational = -1;
        d->removable = -1;
        d->max_hw_sectors_kb = -1;
        d->transport = TRANSPORT_OTHER;
        for (size_t i = 0; i < DISK_ATTR_SLOTS; i++)
                d->attrs[i].err = -ENOENT;
        for (size_t i = 0; i < DISK_IOCOST_SLOTS; i++)
                d->iocost[i].err = -ENOENT;
        return d;
}

Disk *disk_free(Disk *d) {
        if (!d)
                return NULL;
        free(d->name);
        free(d->devnum);
        free(d->devpath);
        free(d->model);
        free(d->vendor);
        free(d->serial);
        free(d->wwn);
        free(d->model_sysfs);
        free(d->vendor_sysfs);
        free(d->scheduler);
        if (!d->schedulers_shared)
                strv_free(d->schedulers);
        strv_free(d->schedulers_loadable);
        for (size_t i = 0; i < DISK_ATTR_SLOTS; i++)
                attr_state_done(&d->attrs[i]);
        for (size_t i = 0; i < d->n_tunables; i++) {
                free(d->tunables[i].name);
                attr_state_done(&d->tunables[i].state);
        }
        free(d->tunables);
        for (size_t i = 0; i < DISK_IOCOST_SLOTS; i++)
                iocost_state_done(&d->iocost[i]);
        udev_props_free(d->udev);
        other_writers_free(d->writers);
        stack_done(&d->stack);
        free(d);
        return NULL;
}

const Tunable *disk_get_tunable(const Disk *d, const char *name) {
        assert(d && name);

        for (size_t i = 0; i < d->n_tunables; i++)
                if (streq(d->tunables[i].name, name))
                        return &d->tunables[i];
        return NULL;
}

bool disk_scheduler_is_offered(const Disk *d, const char *name) {
        assert(d && name);

        return strv_contains(d->schedulers, name) || strv_contains(d->schedulers_loadable, name);
}

bool disk_is_bio_based(const Disk *d) {
        assert(d);

        switch (d->stack.role) {
        case STACK_ROLE_DM:
        case STACK_ROLE_MD:
        case STACK_ROLE_NVME_HEAD:
                return !d->scheduler;
        default:
                return false;
        }
}

int64_t wbt_default_usec(const Disk *d) {
        assert(d);

        return d->rotational == 1 ? 75000 : 2000;
}

/* The value a client sees of an attribute: the number, or -1 when it cannot be read. */
static int64_t attr_shown(const AttrState *st) {
        return st->err == 0 ? st->value.num : -1;
}

/* The i-th tunable a client sees (one that was read), from *i on; NULL at the end. */
static const Tunable *next_shown_tunable(const Disk *d, size_t *i) {
        for (; *i < d->n_tunables; (*i)++)
                if (d->tunables[*i].state.err == 0 && d->tunables[*i].state.raw)
                        return &d->tunables[(*i)++];
        return NULL;
}

static bool tunables_equal(const Disk *a, const Disk *b) {
        size_t i = 0, j = 0;

        for (;;) {
                const Tunable *x = next_shown_tunable(a, &i), *y = next_shown_tunable(b, &j);

                if (!x || !y)
                        return !x && !y;
                if (!streq(x->name, y->name) || !streq(x->state.raw, y->state.raw))
                        return false;
        }
}

const char *disk_iocost_shown(const Disk *d, AttrFile f) {
        return DISK_IOCOST(d, f).err == 0 ? strempty(DISK_IOCOST(d, f).raw) : "";
}

#define TAKE_FROM(dst, src) do { typeof(dst) _t = (dst); (dst) = (src); (src) = _t; } while (0)

uint64_t disk_keep_unloaded(Disk *d, Disk *old) {
        DiskLoad *l = &d->load;
        uint64_t taken = 0;

        assert(d && old);
        if (!l->identity && old->load.identity) {
                TAKE_FROM(d->model, old->model);
                TAKE_FROM(d->vendor, old->vendor);
                TAKE_FROM(d->serial, old->serial);
                TAKE_FROM(d->wwn, old->wwn);
                TAKE_FROM(d->model_sysfs, old->model_sysfs);
                TAKE_FROM(d->vendor_sysfs, old->vendor_sysfs);
                TAKE_FROM(d->devpath, old->devpath);
                d->transport = old->transport;  /* ID_BUS is udev's, the path sysfs' */
                l->identity = true;
                taken |= DISK_FIELD_BIT(DISK_FIELD_MODEL) | DISK_FIELD_BIT(DISK_FIELD_VENDOR) |
                         DISK_FIELD_BIT(DISK_FIELD_SERIAL) | DISK_FIELD_BIT(DISK_FIELD_WWN) |
                         DISK_FIELD_BIT(DISK_FIELD_TRANSPORT);
        }
        if (!l->flags && old->load.flags) {
                d->rotational = old->rotational;
                d->removable = old->removable;
                l->flags = true;
                taken |= DISK_FIELD_BIT(DISK_FIELD_ROTATIONAL) | DISK_FIELD_BIT(DISK_FIELD_REMOVABLE);
        }
        if (!l->queues && old->load.queues) {
                d->nr_hw_queues = old->nr_hw_queues;
                l->queues = true;
                taken |= DISK_FIELD_BIT(DISK_FIELD_QUEUES);
        }
        if (!l->details && !(l->attrs & ATTR_BIT(ATTR_MAX_SECTORS_KB)) && old->load.details) {
                d->size_bytes = old->size_bytes;
                d->max_hw_sectors_kb = old->max_hw_sectors_kb;
                l->details = true;
                taken |= DISK_FIELD_BIT(DISK_FIELD_SIZE);
        }
        if (!(l->attrs & ATTR_IOCOST_BITS_MASK) && (old->load.attrs & ATTR_IOCOST_BITS_MASK)) {
                for (size_t i = 0; i < DISK_IOCOST_SLOTS; i++)
                        TAKE_FROM(d->iocost[i], old->iocost[i]);
                TAKE_FROM(d->udev, old->udev);
                d->rqos_static_key = old->rqos_static_key;
                l->attrs |= old->load.attrs & ATTR_IOCOST_BITS_MASK;
                taken |= DISK_FIELD_BIT(DISK_FIELD_IOCOST_QOS) | DISK_FIELD_BIT(DISK_FIELD_IOCOST_MODEL);
        }
        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                int slot = disk_attr_slot(id);  /* the queue's attributes; iocost's are above */

                if (slot < 0 || id == ATTR_SCHEDULER || (l->attrs & ATTR_BIT(id)) ||
                    !(old->load.attrs & ATTR_BIT(id)))
                        continue;
                TAKE_FROM(d->attrs[slot], old->attrs[slot]);
                l->attrs |= ATTR_BIT(id);
                taken |= DISK_FIELD_BIT(DISK_FIELD_ATTR + id);
        }
        /* The tunables belong to the scheduler: another one has others. */
        if (!(l->attrs & ATTR_BIT(ATTR_IOSCHED)) && (old->load.attrs & ATTR_BIT(ATTR_IOSCHED)) &&
            streq_ptr(d->scheduler, old->scheduler)) {
                TAKE_FROM(d->tunables, old->tunables);
                TAKE_FROM(d->n_tunables, old->n_tunables);
                l->attrs |= ATTR_BIT(ATTR_IOSCHED);
                taken |= DISK_FIELD_BIT(DISK_FIELD_TUNABLES);
        }
        return taken;
}
#undef TAKE_FROM

uint64_t disk_diff(const Disk *a, const Disk *b) {
        uint64_t m = 0;

        assert(b);
        if (!a)
                return DISK_FIELD_BIT(_DISK_FIELD_MAX) - 1;
#define DIFF(field, differs) if (differs) m |= DISK_FIELD_BIT(field)
        DIFF(DISK_FIELD_DEVNUM, !streq_ptr(a->devnum, b->devnum));
        DIFF(DISK_FIELD_MODEL, !streq_ptr(a->model, b->model));
        DIFF(DISK_FIELD_VENDOR, !streq_ptr(a->vendor, b->vendor));
        DIFF(DISK_FIELD_SERIAL, !streq_ptr(a->serial, b->serial));
        DIFF(DISK_FIELD_WWN, !streq_ptr(a->wwn, b->wwn));
        DIFF(DISK_FIELD_TRANSPORT, a->transport != b->transport);
        DIFF(DISK_FIELD_ROTATIONAL, (a->rotational == 1) != (b->rotational == 1));
        DIFF(DISK_FIELD_REMOVABLE, (a->removable == 1) != (b->removable == 1));
        DIFF(DISK_FIELD_ZONED, a->zoned != b->zoned);
        DIFF(DISK_FIELD_QUEUES, a->nr_hw_queues != b->nr_hw_queues);
        DIFF(DISK_FIELD_SIZE, a->size_bytes != b->size_bytes);
        DIFF(DISK_FIELD_SCHEDULER, !streq_ptr(a->scheduler, b->scheduler) ||
                                   a->has_scheduler_file != b->has_scheduler_file);
        DIFF(DISK_FIELD_SCHEDULERS, !strv_equal(a->schedulers, b->schedulers));
        DIFF(DISK_FIELD_TUNABLES, !tunables_equal(a, b));
        DIFF(DISK_FIELD_IOCOST_QOS, !streq(disk_iocost_shown(a, ATTR_FILE_IOCOST_QOS),
                                           disk_iocost_shown(b, ATTR_FILE_IOCOST_QOS)));
        DIFF(DISK_FIELD_IOCOST_MODEL, !streq(disk_iocost_shown(a, ATTR_FILE_IOCOST_MODEL),
                                             disk_iocost_shown(b, ATTR_FILE_IOCOST_MODEL)));
        DIFF(DISK_FIELD_OTHER_WRITERS, !other_writers_equal(a->writers, b->writers));
        DIFF(DISK_FIELD_STACK, a->stack.role != b->stack.role || !streq_ptr(a->stack.dm_kind, b->stack.dm_kind) ||
                               !streq_ptr(a->stack.upper, b->stack.upper));
        for (AttrId id = 0; id < _ATTR_MAX; id++)
                DIFF(DISK_FIELD_ATTR + id, disk_attr_slot(id) >= 0 &&
                                           attr_shown(&DISK_ATTR(a, id)) != attr_shown(&DISK_ATTR(b, id)));
#undef DIFF
        return m;
}
