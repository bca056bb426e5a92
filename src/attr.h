/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "macro.h"

/*
 * Everything iosched knows about a queue attribute lives in one table (attr.c): its config key,
 * its sysfs path, how its value is parsed and compared, and the order in which attributes are
 * written. The order is the one that converges: the scheduler first (switching resets its
 * tunables and nr_requests and may re-enable wbt), then its tunables, nr_requests, wbt, the
 * attributes no switch touches, and read_ahead_kb last: every write that commits queue limits
 * (max_sectors_kb, add_random, iostats) raises the read-ahead to twice the largest request on
 * a rotational disk (blk_apply_bdi_limits()).
 */
typedef enum AttrId {
        ATTR_SCHEDULER,
        ATTR_IOSCHED,           /* queue/iosched/<tunable>, config key "iosched.<tunable>" */
        ATTR_NR_REQUESTS,
        /* iocost: the cgroup v2 root's io.cost.model, then io.cost.qos (whose enable=1 turns
         * the default wbt off: wbt is decided after it). One write line per file. */
        ATTR_IOCOST_SOLUTION,           /* resolves to the keys below from udev's hwdb */
        ATTR_IOCOST_ALLOW_STATIC_KEY,   /* an opt-in, no kernel value */
        ATTR_IOCOST_MODEL_CTRL,
        ATTR_IOCOST_MODEL_RBPS,
        ATTR_IOCOST_MODEL_RSEQIOPS,
        ATTR_IOCOST_MODEL_RRANDIOPS,
        ATTR_IOCOST_MODEL_WBPS,
        ATTR_IOCOST_MODEL_WSEQIOPS,
        ATTR_IOCOST_MODEL_WRANDIOPS,
        ATTR_IOCOST_ENABLE,
        ATTR_IOCOST_CTRL,
        ATTR_IOCOST_RPCT,
        ATTR_IOCOST_RLAT,
        ATTR_IOCOST_WPCT,
        ATTR_IOCOST_WLAT,
        ATTR_IOCOST_MIN,
        ATTR_IOCOST_MAX,
        ATTR_WBT_LAT_USEC,
        ATTR_MAX_SECTORS_KB,
        ATTR_RQ_AFFINITY,
        ATTR_NOMERGES,
        ATTR_ADD_RANDOM,
        ATTR_IOSTATS,
        ATTR_READ_AHEAD_KB,
        ATTR_OWNER_DEFER,       /* an option: the other writers whose keys iosched leaves alone */
        _ATTR_MAX,
} AttrId;

typedef enum AttrKind {
        ATTR_KIND_SCHEDULER,    /* ordered list of scheduler names, first available wins */
        ATTR_KIND_INT,          /* decimal integer in [min, max] */
        ATTR_KIND_BOOL,         /* 0 or 1; the config also takes yes/no/true/false/on/off */
        ATTR_KIND_WBT,          /* microseconds, "default" (-1) or "off" (0) */
        ATTR_KIND_CTRL,         /* iocost's ctrl: "auto" (0) or "user" (1) */
        ATTR_KIND_PERCENT,      /* hundredths of a percent, written "95.50" (cgroup_parse_float) */
        ATTR_KIND_NAME,         /* a name (list[0]): an iocost solution or "hwdb" */
        ATTR_KIND_OWNERS,       /* other writers' kinds (writers.h): list of names, num a mask of
                                 * WRITER_KIND_BIT()s; "none" (0) */
} AttrKind;

/* Where an attribute lives. */
typedef enum AttrFile {
        ATTR_FILE_QUEUE,        /* sysfs, below the disk */
        ATTR_FILE_IOCOST_MODEL, /* <cgroup2 root>/io.cost.model, the disk's MAJ:MIN line */
        ATTR_FILE_IOCOST_QOS,   /* <cgroup2 root>/io.cost.qos */
        ATTR_FILE_NONE,         /* an option of iosched itself: nothing to read or write */
        _ATTR_FILE_MAX,
} AttrFile;

typedef struct AttrInfo {
        AttrId id;
        const char *key;        /* config and D-Bus settings key; "iosched." is a prefix */
        const char *path;       /* below /sys/class/block/<disk>/; NULL for ATTR_IOSCHED */
        AttrKind kind;
        int64_t min, max;
        bool follows_scheduler; /* a scheduler switch resets or changes it: plan it after one */
        bool clamp;             /* PERCENT: out of [min, max] is clamped, as the kernel does */
        bool mq_only;           /* blk-mq's alone: not applicable to a bio-based queue (6.11 and
                                 * later show such a queue none of these files) */
        AttrFile file;
        const char *token;      /* iocost: the kernel's "token=" in the file's line */
        const char *summary;
} AttrInfo;

#define IOSCHED_KEY_PREFIX "iosched."
#define ATTR_BIT(id) (UINT32_C(1) << (id))
#define ATTR_IOCOST_BITS_MASK                                                                   \
        (((ATTR_BIT(ATTR_IOCOST_MAX) << 1) - 1) & ~(ATTR_BIT(ATTR_IOCOST_SOLUTION) - 1))
#define SCHEDULER_NAME_MAX 15   /* the kernel's ELV_NAME_MAX is 16 with the NUL */
#define TUNABLE_NAME_MAX 64

_Static_assert(_ATTR_MAX <= 32, "DiskLoad.attrs has one bit per attribute");

const AttrInfo *attr_get(AttrId id);
/* The attribute of an iocost file with the kernel's token ("rpct"), or NULL. */
const AttrInfo *attr_from_token(AttrFile file, const char *token);
const AttrInfo *attr_from_key(const char *key);

/**
 * setting_key_parse() - split a config key into its attribute and tunable
 * @key: "scheduler", "wbt_lat_usec", "iosched.read_expire", ...
 * @ret_attr: the attribute
 * @ret_tunable: for iosched.* keys, the tunable name (newly allocated); NULL otherwise
 *
 * Return: 0, -ENOENT for an unknown key or tunable, -ENOMEM.
 */
int setting_key_parse(const char *key, const AttrInfo **ret_attr, char **ret_tunable);

/**
 * setting_keys() - every settings key, from the tables: the attributes' keys in table order,
 * then "iosched.<tunable>" for each known tunable
 * @ret: a new NULL-terminated list; untouched on failure
 *
 * For "ioschedctl --list-keys" (shell completion) and the tests that keep lists complete.
 *
 * Return: 0, -ENOMEM.
 */
int setting_keys(char ***ret);

/* A desired or current value. */
typedef struct Value {
        int64_t num;            /* INT, BOOL, WBT (-1 = kernel default, 0 = off) */
        char **list;            /* SCHEDULER: canonical names in order of preference */
} Value;

void value_done(Value *v);
bool value_equal(const AttrInfo *a, const Value *x, const Value *y);

/**
 * value_parse() - parse a config or D-Bus value of an attribute
 * @a: the attribute
 * @text: the value as written by a person
 * @ret: the parsed value, untouched on failure
 * @ret_error: on -EINVAL/-ERANGE, a human readable reason (static string)
 *
 * Return: 0, -EINVAL, -ERANGE or -ENOMEM.
 */
int value_parse(const AttrInfo *a, const char *text, Value *ret, const char **ret_error);

/* The value as a config file would spell it: "mq-deadline bfq", "default", "off", "128". */
char *value_to_string(const AttrInfo *a, const Value *v);

/**
 * value_format() - a number of @a (not a scheduler list or a name) as a config file spells it
 * @a: the attribute
 * @num: the value: "off" for a wbt_lat_usec of 0, "95.50" for 9550 hundredths of a percent
 * @buf, @size: where the text goes
 *
 * What ioschedd's Current shows, so that a client compares it with Desired's text.
 *
 * Return: 0, -EINVAL for a scheduler or name attribute, -ENOBUFS.
 */
int value_format(const AttrInfo *a, int64_t num, char *buf, size_t size);

/* The string written to sysfs for a single value (not for schedulers). */
int value_sysfs_string(const AttrInfo *a, int64_t num, char *buf, size_t size);

/**
 * percent_parse() - parse a percentage as the kernel's cgroup_parse_float(text, 2) does
 * @text: "95", "95.5", "99.999"
 * @ret: hundredths of a percent (9500, 9550, 10000)
 *
 * Return: 0; -EINVAL for anything but digits with an optional fraction; -ERANGE past 10^12.
 */
int percent_parse(const char *text, int64_t *ret);

bool scheduler_name_is_valid(const char *name);
const char *scheduler_canonical(const char *name);    /* "deadline" -> "mq-deadline" */
bool tunable_name_is_valid(const char *name);
bool tunable_is_known(const char *name);
bool tunable_belongs_to(const char *scheduler, const char *tunable);

/**
 * tunable_by_index() - enumerate the known scheduler tunables
 * @i: index, from 0
 * @ret_scheduler: the scheduler the tunable belongs to (may be NULL)
 *
 * For tables, documentation and the test that keeps the fuzzers' dictionary complete.
 *
 * Return: the tunable's name, or NULL past the end.
 */
const char *tunable_by_index(size_t i, const char **ret_scheduler);

/**
 * tunable_kernel_value() - the value a tunable reads back after @value was written to it
 * @tunable: the tunable's name ("read_expire")
 * @value: the value written
 * @hz: the kernel's tick rate (CONFIG_HZ); 0 when unknown
 *
 * mq-deadline's read_expire, write_expire, prio_aging_expire and bfq's timeout_sync are
 * milliseconds that the kernel keeps in jiffies: a write is rounded up to a whole tick, and
 * reads show the ticks in milliseconds again (250 reads back as 252 with HZ=250).
 *
 * Return: what the kernel will show; @value itself for exact tunables or an unknown @hz.
 */
int64_t tunable_kernel_value(const char *tunable, int64_t value, unsigned hz);

/**
 * kernel_scheduler_switch_races() - whether two scheduler switches of one queue at once can
 *                                   oops this kernel
 * @release: uname's release, "6.18.44-amd64"
 *
 * From 6.16 the second half of a switch (elevator_change_done(): the new elevator's sysfs
 * directory and debugfs entries, the old one's removal) runs outside the elevator lock. On 6.18
 * elv_iosched_store() holds only the read side of the tag set's update_nr_hwq_lock across it,
 * so a second writer's switch can free or replace q->elevator under the first: on 6.18.44 a
 * udev rule writing "none" while ioschedd wrote "mq-deadline" oopsed in
 * blk_mq_debugfs_register_sched() (q->elevator NULL), the writer died in the kernel with the
 * lock held and the disk could never be deleted. Debian's 7.3 takes the write side (a second
 * writer gets EBUSY); 6.12 and older switch under one lock. The kernels in between that could
 * not be checked here (6.16, 6.17, 6.19 to 7.2) count as affected.
 *
 * Return: true for 6.16 up to, not including, 7.3; false for others and for a release that
 *         does not parse.
 */
bool kernel_scheduler_switch_races(const char *release);
