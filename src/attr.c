/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

#include "attr.h"
#include "util.h"
#include "writers.h"

/* A queue/ attribute: its key is the file's name. */
#define QUEUE_ATTR(id_, name, kind_, min_, max_, what, ...)                                     \
        [id_] = { .id = id_, .key = name, .path = "queue/" name, .kind = kind_,                 \
                  .min = min_, .max = max_, .summary = what, __VA_ARGS__ }
/* A key of one of the iocost lines: "iocost.TOKEN" of io.cost.qos, "iocost.model.TOKEN" of
 * io.cost.model, TOKEN being the kernel's name in the line. */
#define IOCOST_ATTR(id_, file_, prefix, tok, kind_, min_, max_, what, ...)                      \
        [id_] = { .id = id_, .key = prefix tok, .kind = kind_, .min = min_, .max = max_,        \
                  .file = file_, .token = tok, .mq_only = true, .summary = what, __VA_ARGS__ }
#define QOS_ATTR(id_, tok, kind_, min_, max_, what, ...)                                        \
        IOCOST_ATTR(id_, ATTR_FILE_IOCOST_QOS, "iocost.", tok, kind_, min_, max_, "io.cost.qos: " what, __VA_ARGS__)
#define MODEL_ATTR(id_, tok, kind_, what)                                                       \
        IOCOST_ATTR(id_, ATTR_FILE_IOCOST_MODEL, "iocost.model.", tok, kind_,                   \
                    0, kind_ == ATTR_KIND_CTRL ? 1 : INT64_MAX, "io.cost.model: " what)

static const AttrInfo attr_table[_ATTR_MAX] = {
        QUEUE_ATTR(ATTR_SCHEDULER, "scheduler", ATTR_KIND_SCHEDULER, 0, 0,
                   "I/O scheduler; an ordered list, the first one the kernel offers wins", .mq_only = true),
        [ATTR_IOSCHED] = {
                .id = ATTR_IOSCHED, .key = IOSCHED_KEY_PREFIX, .kind = ATTR_KIND_INT,
                .min = 0, .max = INT64_MAX, .follows_scheduler = true, .mq_only = true,
                .summary = "a tunable of the chosen scheduler (queue/iosched/<name>)",
        },
        QUEUE_ATTR(ATTR_NR_REQUESTS, "nr_requests", ATTR_KIND_INT, 1, 1 << 20,
                   "request queue depth; a scheduler switch resets it", .follows_scheduler = true,
                   .mq_only = true),
        [ATTR_IOCOST_SOLUTION] = {
                .id = ATTR_IOCOST_SOLUTION, .key = "iocost.solution", .kind = ATTR_KIND_NAME,
                .file = ATTR_FILE_NONE,
                .summary = "take the iocost keys from udev's hwdb (systemd-iocost's IOCOST_QOS_<NAME>, IOCOST_MODEL_<NAME>): a solution name, or \"hwdb\" for systemd's choice",
        },
        [ATTR_IOCOST_ALLOW_STATIC_KEY] = {
                .id = ATTR_IOCOST_ALLOW_STATIC_KEY, .key = "iocost.allow_static_key_kernels",
                .kind = ATTR_KIND_BOOL, .min = 0, .max = 1, .file = ATTR_FILE_NONE,
                .summary = "set iocost up on Linux 6.16.0-6.16.3 too (rq-qos static key taken under the queue freeze)",
        },
        MODEL_ATTR(ATTR_IOCOST_MODEL_CTRL, "ctrl", ATTR_KIND_CTRL,
                   "\"auto\" (the kernel's model for the device) or \"user\""),
        MODEL_ATTR(ATTR_IOCOST_MODEL_RBPS, "rbps", ATTR_KIND_INT, "sequential read bytes per second"),
        MODEL_ATTR(ATTR_IOCOST_MODEL_RSEQIOPS, "rseqiops", ATTR_KIND_INT, "sequential read IOs per second"),
        MODEL_ATTR(ATTR_IOCOST_MODEL_RRANDIOPS, "rrandiops", ATTR_KIND_INT, "random read IOs per second"),
        MODEL_ATTR(ATTR_IOCOST_MODEL_WBPS, "wbps", ATTR_KIND_INT, "sequential write bytes per second"),
        MODEL_ATTR(ATTR_IOCOST_MODEL_WSEQIOPS, "wseqiops", ATTR_KIND_INT, "sequential write IOs per second"),
        MODEL_ATTR(ATTR_IOCOST_MODEL_WRANDIOPS, "wrandiops", ATTR_KIND_INT, "random write IOs per second"),
        QOS_ATTR(ATTR_IOCOST_ENABLE, "enable", ATTR_KIND_BOOL, 0, 1,
                 "iocost on for the disk (also turns the default wbt off)"),
        QOS_ATTR(ATTR_IOCOST_CTRL, "ctrl", ATTR_KIND_CTRL, 0, 1,
                 "\"auto\" (the kernel picks the numbers) or \"user\""),
        QOS_ATTR(ATTR_IOCOST_RPCT, "rpct", ATTR_KIND_PERCENT, 0, 10000,
                 "read latency percentile (0-100, two decimals)"),
        QOS_ATTR(ATTR_IOCOST_RLAT, "rlat", ATTR_KIND_INT, 0, UINT32_MAX, "read latency target in microseconds"),
        QOS_ATTR(ATTR_IOCOST_WPCT, "wpct", ATTR_KIND_PERCENT, 0, 10000,
                 "write latency percentile (0-100, two decimals)"),
        QOS_ATTR(ATTR_IOCOST_WLAT, "wlat", ATTR_KIND_INT, 0, UINT32_MAX, "write latency target in microseconds"),
        QOS_ATTR(ATTR_IOCOST_MIN, "min", ATTR_KIND_PERCENT, 100, 1000000,
                 "lowest vrate in percent (the kernel clamps to 1-10000)", .clamp = true),
        QOS_ATTR(ATTR_IOCOST_MAX, "max", ATTR_KIND_PERCENT, 100, 1000000,
                 "highest vrate in percent (the kernel clamps to 1-10000)", .clamp = true),
        QUEUE_ATTR(ATTR_WBT_LAT_USEC, "wbt_lat_usec", ATTR_KIND_WBT, 1, 60 * 1000 * 1000,
                   "writeback throttling target latency in microseconds, \"default\" or \"off\"",
                   .follows_scheduler = true, .mq_only = true),
        QUEUE_ATTR(ATTR_MAX_SECTORS_KB, "max_sectors_kb", ATTR_KIND_INT, 4, 4 << 20,
                   "largest request in KiB; never above max_hw_sectors_kb"),
        QUEUE_ATTR(ATTR_RQ_AFFINITY, "rq_affinity", ATTR_KIND_INT, 0, 2,
                   "complete requests on the submitting CPU's group (1) or CPU (2)", .mq_only = true),
        QUEUE_ATTR(ATTR_NOMERGES, "nomerges", ATTR_KIND_INT, 0, 2,
                   "0 merge, 1 only simple merges, 2 no merges"),
        QUEUE_ATTR(ATTR_ADD_RANDOM, "add_random", ATTR_KIND_BOOL, 0, 1, "feed I/O timings to the entropy pool"),
        QUEUE_ATTR(ATTR_IOSTATS, "iostats", ATTR_KIND_BOOL, 0, 1, "account I/O statistics"),
        QUEUE_ATTR(ATTR_READ_AHEAD_KB, "read_ahead_kb", ATTR_KIND_INT, 0, 4 << 20,
                   "read-ahead in KiB"),
        [ATTR_OWNER_DEFER] = {
                .id = ATTR_OWNER_DEFER, .key = "owner.defer", .kind = ATTR_KIND_OWNERS,
                .file = ATTR_FILE_NONE,
                .summary = "leave the keys another program writes to it, and only report: udev-rules, tuned, tlp, sysfsutils, systemd-iocost, or none",
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

const AttrInfo *attr_from_token(AttrFile file, const char *token) {
        assert(token);

        for (size_t i = 0; i < ELEMENTSOF(attr_table); i++)
                if (attr_table[i].file == file && attr_table[i].token && streq(attr_table[i].token, token))
                        return &attr_table[i];
        return NULL;
}

const AttrInfo *attr_from_key(const char *key) {
        assert(key);

        for (size_t i = 0; i < ELEMENTSOF(attr_table); i++)
                if (i != ATTR_IOSCHED && streq(attr_table[i].key, key))
                        return &attr_table[i];
        return NULL;
}

bool tunable_name_is_valid(const char *name) {
        return string_in_charset(name, CHARSET_LOWER_DIGITS "_", TUNABLE_NAME_MAX);
}

bool tunable_is_known(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(tunable_table); i++)
                if (streq(tunable_table[i].name, name))
                        return true;
        return false;
}

bool tunable_belongs_to(const char *scheduler, const char *tunable) {
        assert(tunable);

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

        assert(tunable);
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

        assert(key && ret_attr && ret_tunable);
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

        assert(ret);
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
        return string_in_charset(name, CHARSET_LOWER_DIGITS "_-", SCHEDULER_NAME_MAX);
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

bool value_equal(const AttrInfo *a, const Value *x, const Value *y) {
        assert(a && x && y);

        if (a->kind != ATTR_KIND_SCHEDULER && a->kind != ATTR_KIND_NAME && a->kind != ATTR_KIND_OWNERS)
                return x->num == y->num;
        if (strv_length(x->list) != strv_length(y->list))
                return false;
        for (size_t i = 0; x->list && x->list[i]; i++)
                if (!streq(x->list[i], y->list[i]))
                        return false;
        return true;
}

int percent_parse(const char *text, int64_t *ret) {
        int64_t whole = 0, frac = 0;
        size_t nw = 0, nf = 0;
        const char *p = text;

        assert(text && ret);
        /* cgroup_parse_float(s, 2): "95", "95.", "95.5", "95.555" (rounded to the closest
         * hundredth, as DIV_ROUND_CLOSEST_ULL does). Stricter than the kernel's sscanf(): no
         * sign, no blanks, nothing after the digits. */
        for (; *p >= '0' && *p <= '9'; p++, nw++) {
                if (nw >= 12)
                        return -ERANGE;
                whole = whole * 10 + (*p - '0');
        }
        if (nw == 0)
                return -EINVAL;
        if (*p == '.') {
                int64_t div = 1;

                for (p++; *p >= '0' && *p <= '9'; p++, nf++) {
                        if (nf >= 18)
                                return -EINVAL;
                        frac = frac * 10 + (*p - '0');
                }
                if (nf < 2)
                        frac *= nf == 0 ? 100 : 10;
                else {
                        for (size_t i = 2; i < nf; i++)
                                div *= 10;
                        frac = (frac + div / 2) / div;
                }
        }
        if (*p)
                return -EINVAL;
        *ret = whole * 100 + frac;
        return 0;
}

static int parse_name(const char *text, Value *ret, const char **ret_error) {
        _cleanup_(strv_freep) char **list = NULL;
        size_t n = 0;

        for (const char *p = text; *p; p++, n++)
                if (n >= 64 || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                 (*p >= '0' && *p <= '9') || *p == '-' || *p == '_')) {
                        *ret_error = "not a name (letters, digits, '-', '_', at most 64)";
                        return -EINVAL;
                }
        list = calloc(2, sizeof(char *));
        if (!list || !(list[0] = strdup(text)))
                return -ENOMEM;
        *ret = (Value) { .list = TAKE_PTR(list) };
        return 0;
}

/* owner.defer: kinds of other writers (writer_kind_from_string()), or "none". Canonical: each
 * once, in the order of the kinds; "none" alone. */
static int parse_owners(const char *text, Value *ret, const char **ret_error) {
        _cleanup_(strv_freep) char **words = NULL, **list = NULL;
        uint32_t mask = 0;
        bool none = false;
        int r;

        r = strv_split(text, " \t,", &words);
        if (r < 0)
                return r;
        for (char **w = words; *w; w++) {
                int k;

                if (streq(*w, "none")) {
                        none = true;
                        continue;
                }
                k = writer_kind_from_string(*w);
                if (k < 0 || k == WRITER_CMDLINE) {
                        *ret_error = "not an owner (udev-rules, tuned, tlp, sysfsutils, systemd-iocost, or none)";
                        return -EINVAL;
                }
                mask |= WRITER_KIND_BIT(k);
        }
        if (strv_isempty(words) || (none && mask)) {
                *ret_error = "owners, or \"none\" alone";
                return -EINVAL;
        }
        list = calloc(1, sizeof(char *));
        if (!list)
                return -ENOMEM;
        for (WriterKind k = 0; k < _WRITER_KIND_MAX; k++)
                if ((mask & WRITER_KIND_BIT(k)) && strv_extend(&list, writer_kind_to_string(k)) < 0)
                        return -ENOMEM;
        if (!mask && strv_extend(&list, "none") < 0)
                return -ENOMEM;
        *ret = (Value) { .num = mask, .list = TAKE_PTR(list) };
        return 0;
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

        assert(a && ret);
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

        case ATTR_KIND_NAME:
                return parse_name(text, ret, ret_error);

        case ATTR_KIND_OWNERS:
                return parse_owners(text, ret, ret_error);

        case ATTR_KIND_CTRL:
                if (!streq(text, "auto") && !streq(text, "user")) {
                        *ret_error = "not \"auto\" or \"user\"";
                        return -EINVAL;
                }
                *ret = (Value) { .num = streq(text, "user") };
                return 0;

        case ATTR_KIND_PERCENT:
                r = percent_parse(text, &v);
                if (r == -EINVAL) {
                        *ret_error = "not a percentage (digits, at most two decimals count: \"95.5\")";
                        return r;
                }
                if (r < 0 || (!a->clamp && (v < a->min || v > a->max))) {
                        *ret_error = a->clamp ? "value out of range" : "value out of range (0-100)";
                        return -ERANGE;
                }
                /* The kernel clamps min and max to 1-10000%: so does the comparison. */
                *ret = (Value) { .num = v < a->min ? a->min : v > a->max ? a->max : v };
                return 0;

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
        char buf[32];

        assert(a && v);
        assert(a && v);
        if (a->kind == ATTR_KIND_SCHEDULER || a->kind == ATTR_KIND_NAME || a->kind == ATTR_KIND_OWNERS)
                return strv_join(v->list, " ");
        return value_format(a, v->num, buf, sizeof(buf)) < 0 ? NULL : strdup(buf);
}

int value_format(const AttrInfo *a, int64_t num, char *buf, size_t size) {
        assert(a && buf);
        if (a->kind == ATTR_KIND_WBT && (num == -1 || num == 0)) {
                int n = snprintf(buf, size, "%s", num ? "default" : "off");

                return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
        }
        return value_sysfs_string(a, num, buf, size);
}

int value_sysfs_string(const AttrInfo *a, int64_t num, char *buf, size_t size) {
        int n;

        assert(a && buf);
        switch (a->kind) {
        case ATTR_KIND_SCHEDULER:
        case ATTR_KIND_NAME:
        case ATTR_KIND_OWNERS:
                return -EINVAL;
        case ATTR_KIND_CTRL:
                n = snprintf(buf, size, "%s", num ? "user" : "auto");
                break;
        case ATTR_KIND_PERCENT:
                n = snprintf(buf, size, "%" PRIi64 ".%02" PRIi64, num / 100, num % 100);
                break;
        default:
                n = snprintf(buf, size, "%" PRIi64, num);
        }
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

bool kernel_scheduler_switch_races(const char *release) {
        unsigned major, minor, patch;

        return kernel_release_parse(release, &major, &minor, &patch) >= 0 &&
                ((major == 6 && minor >= 16) || (major == 7 && minor < 3));
}
