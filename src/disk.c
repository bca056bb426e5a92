/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "disk.h"
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

const char *transport_to_string(Transport t) {
        if ((unsigned) t >= _TRANSPORT_MAX)
                return NULL;
        return transport_names[t];
}

int transport_from_string(const char *s) {
        for (int i = 0; i < _TRANSPORT_MAX; i++)
                if (streq(transport_names[i], s))
                        return i;
        return -EINVAL;
}

static const char *const zoned_names[_ZONED_MAX] = {
        [ZONED_NONE] = "none",
        [ZONED_HOST_AWARE] = "host-aware",
        [ZONED_HOST_MANAGED] = "host-managed",
};

const char *zoned_to_string(Zoned z) {
        if ((unsigned) z >= _ZONED_MAX)
                return NULL;
        return zoned_names[z];
}

int zoned_from_string(const char *s) {
        for (int i = 0; i < _ZONED_MAX; i++)
                if (streq(zoned_names[i], s))
                        return i;
        return -EINVAL;
}

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

        /* SCSI disks: the bus they hang off. udev knows best; the sysfs path tells too. */
        if (id_bus) {
                if (streq(id_bus, "ata"))
                        return TRANSPORT_ATA;
                if (streq(id_bus, "usb"))
                        return TRANSPORT_USB;
                if (streq(id_bus, "nvme"))
                        return TRANSPORT_NVME;
                /* virtio-scsi disks are "scsi" to udev too. */
                if (streq(id_bus, "scsi"))
                        return TRANSPORT_SCSI;
        }
        if (devpath) {
                if (strstr(devpath, "/usb"))
                        return TRANSPORT_USB;
                if (strstr(devpath, "/ata"))
                        return TRANSPORT_ATA;
                /* A SCSI target below a virtio device is virtio-scsi: a SCSI disk with SCSI's
                 * queueing, not virtio-blk (whose disks are named vd*, matched above). */
                if (strstr(devpath, "/target"))
                        return TRANSPORT_SCSI;
                if (strstr(devpath, "/virtio"))
                        return TRANSPORT_VIRTIO;
                if (strstr(devpath, "/mmc"))
                        return TRANSPORT_MMC;
                if (strstr(devpath, "/nvme"))
                        return TRANSPORT_NVME;
        }
        if (startswith(name, "sd") || startswith(name, "sr") || (id_bus && streq(id_bus, "scsi")))
                return TRANSPORT_SCSI;
        return TRANSPORT_OTHER;
}

bool disk_name_is_valid(const char *name) {
        size_t n = 0;

        if (!name || !*name || name[0] == '.')
                return false;
        for (const char *p = name; *p; p++, n++) {
                if (n >= 31)
                        return false;
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || strchr("-_.:+!", *p)))
                        return false;
        }
        return true;
}

int scheduler_parse(const char *text, char **ret_current, char ***ret_available) {
        _cleanup_(strv_freep) char **words = NULL, **available = NULL;
        _cleanup_(freep) char *current = NULL;
        int r;

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

        if (st->err < 0)
                return;
        if (safe_atoi64(st->raw, INT64_MIN, INT64_MAX, &v) < 0) {
                st->err = -EBADMSG;
                return;
        }
        st->value.num = v;
}

int attr_state_parse(const AttrInfo *a, AttrState *st) {
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
        return st->err;
}

Disk *disk_new(const char *name) {
        Disk *d = calloc(1, sizeof(Disk));

        if (!d)
                return NULL;
        d->name = strdup(name);
        if (!d->name)
                return mfree(d);
        d->rotational = -1;
        d->removable = -1;
        d->max_hw_sectors_kb = -1;
        d->transport = TRANSPORT_OTHER;
        for (size_t i = 0; i < _ATTR_MAX; i++)
                d->attrs[i].err = -ENOENT;
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
        strv_free(d->schedulers);
        strv_free(d->schedulers_loadable);
        for (size_t i = 0; i < _ATTR_MAX; i++)
                attr_state_done(&d->attrs[i]);
        for (size_t i = 0; i < d->n_tunables; i++) {
                free(d->tunables[i].name);
                attr_state_done(&d->tunables[i].state);
        }
        free(d->tunables);
        free(d);
        return NULL;
}

const Tunable *disk_get_tunable(const Disk *d, const char *name) {
        for (size_t i = 0; i < d->n_tunables; i++)
                if (streq(d->tunables[i].name, name))
                        return &d->tunables[i];
        return NULL;
}

bool disk_scheduler_is_offered(const Disk *d, const char *name) {
        return strv_contains(d->schedulers, name) || strv_contains(d->schedulers_loadable, name);
}

int64_t wbt_default_usec(const Disk *d) {
        return d->rotational == 1 ? 75000 : 2000;
}
