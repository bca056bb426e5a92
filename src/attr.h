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
        ATTR_WBT_LAT_USEC,
        ATTR_MAX_SECTORS_KB,
        ATTR_RQ_AFFINITY,
        ATTR_NOMERGES,
        ATTR_ADD_RANDOM,
        ATTR_IOSTATS,
        ATTR_READ_AHEAD_KB,
        _ATTR_MAX,
} AttrId;

typedef enum AttrKind {
        ATTR_KIND_SCHEDULER,    /* ordered list of scheduler names, first available wins */
        ATTR_KIND_INT,          /* decimal integer in [min, max] */
        ATTR_KIND_BOOL,         /* 0 or 1; the config also takes yes/no/true/false/on/off */
        ATTR_KIND_WBT,          /* microseconds, "default" (-1) or "off" (0) */
} AttrKind;

typedef struct AttrInfo {
        AttrId id;
        const char *key;        /* config and D-Bus settings key; "iosched." is a prefix */
        const char *path;       /* below /sys/class/block/<disk>/; NULL for ATTR_IOSCHED */
        const char *property;   /* D-Bus property of the current value; NULL for tunables */
        AttrKind kind;
        int64_t min, max;
        bool follows_scheduler; /* a scheduler switch resets or changes it: plan it after one */
        const char *summary;
} AttrInfo;

#define IOSCHED_KEY_PREFIX "iosched."
#define SCHEDULER_NAME_MAX 15   /* the kernel's ELV_NAME_MAX is 16 with the NUL */
#define TUNABLE_NAME_MAX 64

const AttrInfo *attr_get(AttrId id);
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
int value_copy(const Value *src, Value *dst);
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

/* The string written to sysfs for a single value (not for schedulers). */
int value_sysfs_string(const AttrInfo *a, int64_t num, char *buf, size_t size);

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
