/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <assert.h>
#include <stdint.h>

#include "attr.h"
#include "iocost.h"
#include "stack.h"
#include "udev-props.h"

typedef enum Transport {
        TRANSPORT_NVME,
        TRANSPORT_ATA,
        TRANSPORT_SCSI,
        TRANSPORT_USB,
        TRANSPORT_VIRTIO,
        TRANSPORT_XEN,
        TRANSPORT_MMC,
        TRANSPORT_LOOP,
        TRANSPORT_ZRAM,
        TRANSPORT_NBD,
        TRANSPORT_UBLK,
        TRANSPORT_RBD,
        TRANSPORT_NULL_BLK,
        TRANSPORT_PMEM,
        TRANSPORT_MD,
        TRANSPORT_DM,
        TRANSPORT_OTHER,
        _TRANSPORT_MAX,
} Transport;

const char *transport_to_string(Transport t);
int transport_from_string(const char *s);   /* Transport or -EINVAL */

/**
 * transport_classify() - tell how a disk is attached
 * @name: kernel name ("sda", "nvme0n1", "loop3", ...)
 * @devpath: the disk's resolved path below /sys ("/devices/pci.../ata1/..."), may be NULL
 * @id_bus: udev's ID_BUS property, may be NULL
 *
 * Return: the transport; TRANSPORT_OTHER when nothing is known.
 */
Transport transport_classify(const char *name, const char *devpath, const char *id_bus);

typedef enum Zoned {
        ZONED_NONE,
        ZONED_HOST_AWARE,
        ZONED_HOST_MANAGED,
        _ZONED_MAX,
} Zoned;

const char *zoned_to_string(Zoned z);
int zoned_from_string(const char *s);

/* The current value of one attribute, as read. */
typedef struct AttrState {
        int err;        /* 0, or the negative errno of the read: -ENOENT when the file is absent,
                         * -EINVAL for a wbt_lat_usec that is not set up */
        char *raw;      /* the text, stripped; NULL once a number is parsed (but for tunables) */
        Value value;    /* parsed; for the scheduler, list[0] is the current one */
} AttrState;

/*
 * A Disk keeps a reading of the scheduler and of each numeric queue file, in a slot of its own:
 * the other keys of the attribute table are iocost's (read into iocost[]), the tunables
 * (tunables[]) and options of iosched itself. A slot per AttrId would leave 19 of 28 unused,
 * 600 bytes of each of the thousands of readings a daemon keeps.
 */
#define DISK_ATTR_SLOTS 9

/* The slot of @id in Disk.attrs: the scheduler or an attribute with file ATTR_FILE_QUEUE other
 * than ATTR_IOSCHED; -1 for any other. */
int disk_attr_slot(AttrId id);
#define DISK_ATTR(d, id) ((d)->attrs[disk_attr_slot_checked(id)])
size_t disk_attr_slot_checked(AttrId id);      /* asserts that @id has a slot */

/* Disk.iocost has a slot for each of the two files of AttrFile that hold iocost's lines, not one
 * per AttrFile (48 bytes of each reading). */
#define DISK_IOCOST_SLOTS 2
_Static_assert(ATTR_FILE_IOCOST_QOS == ATTR_FILE_IOCOST_MODEL + 1, "the iocost files are adjacent");
static inline size_t disk_iocost_slot(AttrFile f) {
        assert(f == ATTR_FILE_IOCOST_MODEL || f == ATTR_FILE_IOCOST_QOS);
        return (size_t) (f - ATTR_FILE_IOCOST_MODEL);
}
#define DISK_IOCOST(d, f) ((d)->iocost[disk_iocost_slot(f)])

typedef struct Tunable {
        char *name;
        AttrState state;
} Tunable;

/* What to read of a disk: iosched-apply reads only what its policy can use. */
typedef struct DiskLoad {
        bool identity;          /* model, vendor, serial, wwn, the sysfs path and the transport */
        bool queues;            /* count the hardware queues */
        bool details;           /* size, max_hw_sectors_kb */
        bool flags;             /* rotational, removable */
        uint32_t attrs;         /* one bit per AttrId; ATTR_IOSCHED reads the tunables */
        char * const *udev_keys;        /* udev properties to keep besides the hwdb's (the other
                                         * writers' rules match on them); borrowed, may be NULL */
} DiskLoad;

#define DISK_LOAD_ALL ((DiskLoad) { .identity = true, .queues = true, .details = true, .flags = true, \
                                    .attrs = UINT32_MAX })

typedef struct Disk {
        DiskLoad load;
        char *name;
        char *devnum;           /* "MAJ:MIN" */
        int64_t diskseq;        /* the device instance (Linux 5.15+); 0 unknown */
        char *devpath;          /* below /sys, resolved */

        /* Identity: udev's properties when udev knows the disk, sysfs otherwise. */
        char *model, *vendor, *serial, *wwn;
        char *model_sysfs, *vendor_sysfs;       /* raw sysfs spelling, matched as well */
        Transport transport;
        int rotational;         /* -1 unknown */
        int removable;          /* -1 unknown */
        Zoned zoned;
        unsigned nr_hw_queues;  /* 0 for bio-based queues */
        unsigned hz;            /* the kernel's tick rate, for tunables kept in jiffies; 0 unknown */
        uint64_t size_bytes;
        int64_t max_hw_sectors_kb;      /* -1 unknown */

        /* Scheduler: current NULL when the queue offers no choice (a lone "none" or no file). */
        char *scheduler;
        char **schedulers;      /* available, as the kernel lists them */
        char **schedulers_loadable;     /* not registered yet, but a module exists */

        /* The flags together: the daemon keeps a Disk for each of thousands of disks, and a
         * bool between pointers costs 8 bytes. */
        bool partition;
        bool hidden;            /* a hidden disk (an NVMe multipath path, nvme0c0n1): a queue, no
                                 * device number (devnum NULL), no node */
        bool schedulers_shared; /* schedulers is scheduler_list_intern()'s: not the disk's to free */
        bool has_scheduler_file;
        bool rqos_static_key;   /* the running kernel sets rq-qos up with a static key */
        bool udev_read;         /* udev's properties were at hand: a key of load.udev_keys that
                                 * udev lacks is unset, not unknown */

        AttrState attrs[DISK_ATTR_SLOTS];       /* by disk_attr_slot(): use DISK_ATTR() */
        Tunable *tunables;      /* of the current scheduler */
        size_t n_tunables;

        /* iocost: the disk's lines of io.cost.model and io.cost.qos: use DISK_IOCOST(). */
        IocostState iocost[DISK_IOCOST_SLOTS];
        UdevProps *udev;        /* udev's properties kept besides the identity above: the hwdb's
                                 * IOCOST_* when the load reads iocost; NULL for none */
        struct OtherWriters *writers;   /* who else writes its keys (writers.h); NULL: nobody, or
                                         * not looked for */
        Stack stack;            /* its place in a storage stack (stack.h); a partition's is
                                 * STACK_ROLE_DISK */
} Disk;

Disk *disk_free(Disk *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(Disk *, disk_free);

/* What a client of a disk sees of it, field by field: one bit each in disk_diff()'s mask. */
typedef enum DiskField {
        DISK_FIELD_DEVNUM,
        DISK_FIELD_MODEL,
        DISK_FIELD_VENDOR,
        DISK_FIELD_SERIAL,
        DISK_FIELD_WWN,
        DISK_FIELD_TRANSPORT,
        DISK_FIELD_ROTATIONAL,
        DISK_FIELD_REMOVABLE,
        DISK_FIELD_ZONED,
        DISK_FIELD_QUEUES,
        DISK_FIELD_SIZE,
        DISK_FIELD_SCHEDULER,
        DISK_FIELD_SCHEDULERS,
        DISK_FIELD_TUNABLES,
        DISK_FIELD_IOCOST_QOS,          /* the io.cost.qos line shown (iocost[].raw) */
        DISK_FIELD_IOCOST_MODEL,
        DISK_FIELD_OTHER_WRITERS,
        DISK_FIELD_STACK,               /* role, dm kind, the map or array above */
        DISK_FIELD_ATTR,        /* + AttrId: a numeric attribute (-1 when unreadable) */
        _DISK_FIELD_MAX = DISK_FIELD_ATTR + _ATTR_MAX,
} DiskField;

#define DISK_FIELD_BIT(f) (UINT64_C(1) << (f))
/* The io.cost.* line a client is shown: "" when there is none or it cannot be parsed. */
const char *disk_iocost_shown(const Disk *d, AttrFile f);

/**
 * disk_diff() - which fields differ between two readings of a disk
 * @a: the earlier reading, NULL: every field differs
 * @b: the later one
 *
 * Return: a mask of DISK_FIELD_BIT()s.
 */
uint64_t disk_diff(const Disk *a, const Disk *b);

/**
 * disk_keep_unloaded() - complete a partial reading of a disk with an earlier one
 * @d: the new reading, made with a DiskLoad that left some fields out
 * @old: an earlier reading of the same device; what @d did not read is moved out of it
 *
 * Identity, queue count, size, the attributes and io.cost lines @d's load left out are taken
 * from @old, and @d's load grows by what @old had. The tunables are taken only when both
 * readings have the same scheduler (they belong to it). @old is left for disk_free() only.
 * What is taken is as current as @old was: the caller reads the disk in full later.
 *
 * Return: the DISK_FIELD_BIT()s taken from @old: disk_diff() of what is left of @old and @d
 * must not count them.
 */
uint64_t disk_keep_unloaded(Disk *d, Disk *old);
Disk *disk_new(const char *name);

/**
 * disk_name_is_valid() - check a kernel block device name before it becomes part of a path
 *
 * Return: true for names made of letters, digits and "-_.:+!", at most 31 characters, not
 * starting with a dot. Never true for "", ".", ".." or anything with a "/".
 */
bool disk_name_is_valid(const char *name);

/**
 * scheduler_parse() - parse the text of queue/scheduler
 * @text: "[none] mq-deadline kyber bfq " (6.2+), "mq-deadline [bfq] none" (6.1), "none"
 * @ret_current: the bracketed name, or NULL for a queue with no elevator support
 * @ret_available: every listed name, in the kernel's order
 *
 * Return: 0; -EINVAL for text that is not a scheduler list; -ENOMEM.
 */
int scheduler_parse(const char *text, char **ret_current, char ***ret_available);

/**
 * scheduler_list_intern() - one copy of each list of schedulers for the whole process
 * @l: a list; replaced by the kept one equal to it, which is never freed
 *
 * A machine's queues list a handful of different sets, each for thousands of disks: the daemon
 * keeps a reading per disk, and the same four names in five allocations per reading were about
 * a tenth of its heap at 4096 disks. Thread-safe.
 *
 * Return: 1 if *@l is now the kept list (the caller's was freed), 0 if it stays the caller's
 * (no memory, or more than 64 different lists).
 */
int scheduler_list_intern(char ***l);

/* Parse a number read from sysfs into st->value.num; sets st->err to -EBADMSG on junk. */
void attr_state_parse_number(AttrState *st);

/**
 * attr_state_parse() - parse the text of an attribute as read from sysfs
 * @a: the attribute
 * @st: st->raw is the stripped text; st->value is set from it
 *
 * Pure: what sysfs_read_setting() does with the text it read. For the scheduler, value.list[0]
 * is the bracketed name (NULL for a queue without elevator support).
 *
 * Return: st->err: 0; -EBADMSG for text that cannot be parsed; -ENOMEM.
 */
int attr_state_parse(const AttrInfo *a, AttrState *st);
void attr_state_done(AttrState *st);

const Tunable *disk_get_tunable(const Disk *d, const char *name);
bool disk_scheduler_is_offered(const Disk *d, const char *name);

/**
 * disk_is_bio_based() - whether the disk's queue is bio-based: a device-mapper device other
 * than a request-based multipath table, an md array, an NVMe multipath head
 * @d: the disk, with its stack and scheduler read
 *
 * Such a queue has no elevator (queue/scheduler is absent or reads a lone "none"), no
 * nr_requests, no wbt and no scheduler tunables to set: the I/O is scheduled on the queues
 * below it. Told by the stack's role and the scheduler line together: a blk-mq queue without
 * elevator support (6.13 and older) also reads a lone "none" but still has nr_requests.
 *
 * Return: true for a bio-based queue.
 */
bool disk_is_bio_based(const Disk *d);

/* Nominal default of wbt_lat_usec: 2 ms non-rotational, 75 ms rotational. */
int64_t wbt_default_usec(const Disk *d);
