/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

#include "attr.h"
#include "util.h"

static const AttrInfo attr_table[_ATTR_MAX] = {
        [ATTR_SCHEDULER] = {
                .id = ATTR_SCHEDULER, .key = "scheduler", .path = "queue/scheduler",
                .property = "Scheduler", .kind = ATTR_KIND_SCHEDULER,
                .summary = "I/O scheduler; an ordered list, the first one the kernel offers wins",
        },
        [ATTR_IOSCHED] = {
                .id = ATTR_IOSCHED, .key = IOSCHED_KEY_PREFIX, .kind = ATTR_KIND_INT,
                .min = 0, .max = INT64_MAX, .follows_scheduler = true,
                .summary = "a tunable of the chosen scheduler (queue/iosched/<name>)",
        },
        [ATTR_NR_REQUESTS] = {
                .id = ATTR_NR_REQUESTS, .key = "nr_requests", .path = "queue/nr_requests",
                .property = "NrRequests", .kind = ATTR_KIND_INT, .min = 1, .max = 1 << 20,
                .follows_scheduler = true,
                .summary = "request queue depth; a scheduler switch resets it",
        },
        [ATTR_WBT_LAT_USEC] = {
                .id = ATTR_WBT_LAT_USEC, .key = "wbt_lat_usec", .path = "queue/wbt_lat_usec",
                .property = "WbtLatUsec", .kind = ATTR_KIND_WBT, .min = 1, .max = 60 * 1000 * 1000,
                .follows_scheduler = true,
                .summary = "writeback throttling target latency in microseconds, \"default\" or \"off\"",
        },
        [ATTR_MAX_SECTORS_KB] = {
                .id = ATTR_MAX_SECTORS_KB, .key = "max_sectors_kb", .path = "queue/max_sectors_kb",
                .property = "MaxSectorsKB", .kind = ATTR_KIND_INT, .min = 4, .max = 4 << 20,
                .summary = "largest request in KiB; never above max_hw_sectors_kb",
        },
        [ATTR_RQ_AFFINITY] = {
                .id = ATTR_RQ_AFFINITY, .key = "rq_affinity", .path = "queue/rq_affinity",
                .property = "RqAffinity", .kind = ATTR_KIND_INT, .min = 0, .max = 2,
                .summary = "complete requests on the submitting CPU's group (1) or CPU (2)",
        },
        [ATTR_NOMERGES] = {
                .id = ATTR_NOMERGES, .key = "nomerges", .path = "queue/nomerges",
                .property = "NoMerges", .kind = ATTR_KIND_INT, .min = 0, .max = 2,
                .summary = "0 merge, 1 only simple merges, 2 no merges",
        },
        [ATTR_ADD_RANDOM] = {
                .id = ATTR_ADD_RANDOM, .key = "add_random", .path = "queue/add_random",
                .property = "AddRandom", .kind = ATTR_KIND_BOOL, .min = 0, .max = 1,
                .summary = "feed I/O timings to the entropy pool",
        },
        [ATTR_IOSTATS] = {
                .id = ATTR_IOSTATS, .key = "iostats", .path = "queue/iostats",
                .property = "IOStats", .kind = ATTR_KIND_BOOL, .min = 0, .max = 1,
                .summary = "account I/O statistics",
        },
        [ATTR_READ_AHEAD_KB] = {
                .id = ATTR_READ_AHEAD_KB, .key = "read_ahead_kb", .path = "queue/read_ahead_kb",
                .property = "ReadAheadKB", .kind = ATTR_KIND_INT, .min = 0, .max = 4 << 20,
                .summary = "read-ahead in KiB",
        },
};

/* Tunables of the schedulers in mainline, by scheduler. A tunable is written only when the
 * scheduler chosen for the disk has it. */
static const struct {
        const char *scheduler;
        const char *name;
        bool jiffies;   /* milliseconds kept in jiffies: rounded up to a whole tick */
} tunable_table[] = {
        { "mq-deadline", "read_expire", true },
        { "mq-deadline", "write_expire", true },
        { "mq-deadline", "writes_starved" },
        { "mq-deadline", "front_merges" },
        { "mq-deadline", "fifo_batch" },
        { "mq-deadline", "async_depth" },
        { "mq-deadline", "prio_aging_expire", true },
        { "kyber", "read_lat_nsec" },
        { "kyber", "write_lat_nsec" },
        { "bfq", "back_seek_max" },
        { "bfq", "back_seek_penalty" },
        { "bfq", "fifo_expire_async" },
        { "bfq", "fifo_expire_sync" },
        { "bfq", "low_latency" },
        { "bfq", "max_budget" },
        { "bfq", "slice_idle" },
        { "bfq", "slice_idle_us" },
        { "bfq", "strict_guarantees" },
        { "bfq", "timeout_sync", true },
};

const AttrInfo *attr_get(AttrId id) {
        if ((unsigned) id >= _ATTR_MAX)
                return NULL;
        return &attr_table[id];
}

const AttrInfo *attr_from_key(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(attr_table); i++)
                if (i != ATTR_IOSCHED && streq(attr_table[i].key, key))
                        return &attr_table[i];
        return NULL;
}

bool tunable_name_is_valid(const char *name) {
        size_t n = 0;

        if (!name || !*name)
                return false;
        for (const char *p = name; *p; p++, n++) {
                if (n >= TUNABLE_NAME_MAX)
                        return false;
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
                        return false;
        }
        return true;
}

bool tunable_is_known(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(tunable_table); i++)
                if (streq(tunable_table[i].name, name))
                        return true;
        return false;
}

bool tunable_belongs_to(const char *scheduler, const char *tunable) {
        if (!scheduler)
                return false;
        scheduler = scheduler_canonical(scheduler);
        for (size_t i = 0; i < ELEMENTSOF(tunable_table); i++)
                if (streq(tunable_table[i].scheduler, scheduler) &&
                    streq(tunable_table[i].name, tunable))
                        return true;
        return false;
}

const char *tunable_by_index(size_t i, const char **ret_scheduler) {
        if (i >= ELEMENTSOF(tunable_table))
                return NULL;
        if (ret_scheduler)
                *ret_scheduler = tunable_table[i].scheduler;
        return tunable_table[i].name;
}

int64_t tunable_kernel_value(const char *tunable, int64_t value, unsigned hz) {
        bool jiffies = false;
        int64_t j;

        for (size_t i = 0; i < ELEMENTSOF(tunable_table); i++)
                if (streq(tunable_table[i].name, tunable))
                        jiffies = tunable_table[i].jiffies;
        if (!jiffies || hz == 0 || hz > 100000 || value < 0 || value > INT32_MAX)
                return value;
        if (streq(tunable, "timeout_sync") && value < 1)
                value = 1;      /* bfq_timeout_sync_store() clamps */
        /* msecs_to_jiffies() rounds up, jiffies_to_msecs() rounds down. */
        j = (value * hz + 999) / 1000;
        return j * 1000 / hz;
}

int setting_key_parse(const char *key, const AttrInfo **ret_attr, char **ret_tunable) {
        const AttrInfo *a;
        const char *t;

        t = startswith(key, IOSCHED_KEY_PREFIX);
        if (t) {
                char *c;

                if (!tunable_name_is_valid(t) || !tunable_is_known(t))
                        return -ENOENT;
                c = strdup(t);
                if (!c)
                        return -ENOMEM;
                *ret_attr = &attr_table[ATTR_IOSCHED];
                *ret_tunable = c;
                return 0;
        }

        a = attr_from_key(key);
        if (!a)
                return -ENOENT;
        *ret_attr = a;
        *ret_tunable = NULL;
        return 0;
}

int setting_keys(char ***ret) {
        _cleanup_(strv_freep) char **keys = calloc(1, sizeof(char *));
        const char *t;

        if (!keys)
                return -ENOMEM;
        for (AttrId id = 0; id < _ATTR_MAX; id++)
                if (id != ATTR_IOSCHED && strv_extend(&keys, attr_table[id].key) < 0)
                        return -ENOMEM;
        for (size_t i = 0; (t = tunable_by_index(i, NULL)); i++)
                if (strv_push(&keys, strdup_printf(IOSCHED_KEY_PREFIX "%s", t)) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(keys);
        return 0;
}

bool scheduler_name_is_valid(const char *name) {
        size_t n = 0;

        if (!name || !*name)
                return false;
        for (const char *p = name; *p; p++, n++) {
                if (n >= SCHEDULER_NAME_MAX)
                        return false;
                if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
                      *p == '-'))
                        return false;
        }
        return true;
}

const char *scheduler_canonical(const char *name) {
        /* The kernel registers "deadline" as an alias of mq-deadline and always shows the
         * real name in queue/scheduler. */
        if (streq(name, "deadline"))
                return "mq-deadline";
        return name;
}

void value_done(Value *v) {
        v->list = strv_free(v->list);
        v->num = 0;
}

int value_copy(const Value *src, Value *dst) {
        Value c = { .num = src->num };

        if (src->list) {
                c.list = strv_copy(src->list);
                if (!c.list)
                        return -ENOMEM;
        }
        *dst = c;
        return 0;
}

bool value_equal(const AttrInfo *a, const Value *x, const Value *y) {
        if (a->kind != ATTR_KIND_SCHEDULER)
                return x->num == y->num;
        if (strv_length(x->list) != strv_length(y->list))
                return false;
        for (size_t i = 0; x->list && x->list[i]; i++)
                if (!streq(x->list[i], y->list[i]))
                        return false;
        return true;
}

static int parse_scheduler_list(const char *text, Value *ret, const char **ret_error) {
        _cleanup_(strv_freep) char **words = NULL, **list = NULL;
        int r;

        r = strv_split(text, " \t,", &words);
        if (r < 0)
                return r;
        if (strv_length(words) == 0) {
                *ret_error = "empty scheduler list";
                return -EINVAL;
        }
        if (strv_length(words) > 8) {
                *ret_error = "more than 8 schedulers listed";
                return -EINVAL;
        }
        list = calloc(1, sizeof(char *));
        if (!list)
                return -ENOMEM;
        for (char **w = words; *w; w++) {
                const char *c;

                if (!scheduler_name_is_valid(*w)) {
                        *ret_error = "invalid scheduler name (letters, digits, '-', '_', at most 15)";
                        return -EINVAL;
                }
                c = scheduler_canonical(*w);
                if (strv_contains(list, c))
                        continue;
                r = strv_extend(&list, c);
                if (r < 0)
                        return r;
        }
        ret->num = 0;
        ret->list = TAKE_PTR(list);
        return 0;
}

int value_parse(const AttrInfo *a, const char *text, Value *ret, const char **ret_error) {
        const char *dummy;
        int64_t v;
        int r;

        if (!ret_error)
                ret_error = &dummy;
        *ret_error = NULL;

        if (!text || !*text) {
                *ret_error = "empty value";
                return -EINVAL;
        }

        switch (a->kind) {
        case ATTR_KIND_SCHEDULER:
                return parse_scheduler_list(text, ret, ret_error);

        case ATTR_KIND_BOOL:
                r = parse_boolean(text);
                if (r < 0) {
                        *ret_error = "not a boolean (0, 1, yes, no, true, false, on, off)";
                        return -EINVAL;
                }
                *ret = (Value) { .num = r };
                return 0;

        case ATTR_KIND_WBT:
                if (streq(text, "default") || streq(text, "-1")) {
                        *ret = (Value) { .num = -1 };
                        return 0;
                }
                if (streq(text, "off") || streq(text, "0")) {
                        *ret = (Value) { .num = 0 };
                        return 0;
                }
                _fallthrough_;
        case ATTR_KIND_INT:
                r = safe_atoi64(text, a->min, a->max, &v);
                if (r == -ERANGE) {
                        *ret_error = "value out of range";
                        return r;
                }
                if (r < 0) {
                        *ret_error = a->kind == ATTR_KIND_WBT
                                ? "not a number of microseconds, \"default\" or \"off\""
                                : "not a decimal integer";
                        return -EINVAL;
                }
                *ret = (Value) { .num = v };
                return 0;
        }
        return -EINVAL;
}

char *value_to_string(const AttrInfo *a, const Value *v) {
        switch (a->kind) {
        case ATTR_KIND_SCHEDULER:
                return strv_join(v->list, " ");
        case ATTR_KIND_WBT:
                if (v->num == -1)
                        return strdup("default");
                if (v->num == 0)
                        return strdup("off");
                _fallthrough_;
        default:
                return strdup_printf("%" PRIi64, v->num);
        }
}

int value_sysfs_string(const AttrInfo *a, int64_t num, char *buf, size_t size) {
        int n;

        if (a->kind == ATTR_KIND_SCHEDULER)
                return -EINVAL;
        n = snprintf(buf, size, "%" PRIi64, num);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}
