/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "plan.h"
#include "util.h"
#include "writers.h"

static const char *const action_type_names[_ACTION_MAX] = {
        [ACTION_WRITE] = "write",
        [ACTION_SKIP] = "skip",
        [ACTION_UNSUPPORTED] = "unsupported",
        [ACTION_REFUSED] = "refused",
        [ACTION_DEFERRED] = "defer",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(action_type, ActionType, action_type_names, _ACTION_MAX);

static const struct {
        const char *name;       /* for programs */
        const char *label;      /* for people */
} outcome_table[_OUTCOME_MAX] = {
        [OUTCOME_WOULD_WRITE] = { "would-write", "would-write" },
        [OUTCOME_SKIPPED] = { "skipped", "already right" },
        [OUTCOME_UNSUPPORTED] = { "unsupported", "unsupported" },
        [OUTCOME_REFUSED] = { "refused", "refused" },
        [OUTCOME_DEFERRED] = { "deferred", "left to another" },
        [OUTCOME_WRITTEN] = { "written", "changed" },
        [OUTCOME_FAILED] = { "failed", "failed" },
        [OUTCOME_GONE] = { "gone", "gone" },
};

const char *outcome_to_string(Outcome o) {
        return (unsigned) o < _OUTCOME_MAX ? outcome_table[o].name : NULL;
}

const char *action_outcome_label(const Action *a) {
        assert(a);
        /* Decided before the switch, again after it: it may turn out right already. */
        if (a->outcome == OUTCOME_WOULD_WRITE && a->after_switch)
                return "may-write";
        return (unsigned) a->outcome < _OUTCOME_MAX ? outcome_table[a->outcome].label : NULL;
}

/* What the planner's decision is as an outcome, before anything is written. */
static Outcome outcome_of(ActionType t) {
        switch (t) {
        case ACTION_SKIP:
                return OUTCOME_SKIPPED;
        case ACTION_UNSUPPORTED:
                return OUTCOME_UNSUPPORTED;
        case ACTION_REFUSED:
                return OUTCOME_REFUSED;
        case ACTION_DEFERRED:
                return OUTCOME_DEFERRED;
        default:
                return OUTCOME_WOULD_WRITE;
        }
}

void action_done(Action *a) {
        free(a->tunable);
        free(a->key);
        free(a->current);
        free(a->desired);
        free(a->write);
        strv_free(a->fallbacks);
        free(a->reason);
        free(a->result);
        free(a->file);
        free(a->rule);
        free(a->others);
        *a = (Action) {};
}

Plan *plan_free(Plan *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_actions; i++)
                action_done(&p->actions[i]);
        free(p->actions);
        free(p->disk);
        free(p);
        return NULL;
}

int action_set_reasonv(Action *a, const char *fmt, va_list ap) {
        assert(a && fmt);

        a->reason = mfree(a->reason);
        if (vasprintf(&a->reason, fmt, ap) < 0) {
                a->reason = NULL;
                return -ENOMEM;
        }
        return 0;
}

_printf_(3, 4) static int set_decision(Action *a, ActionType type, const char *fmt, ...) {
        va_list ap;
        int r;

        a->type = type;
        va_start(ap, fmt);
        r = action_set_reasonv(a, fmt, ap);
        va_end(ap);
        return r;
}

_printf_(3, 4) static int set_write(Action *a, int64_t num, const char *fmt, ...) {
        char buf[32];
        va_list ap;
        int r;

        r = value_sysfs_string(a->attr, num, buf, sizeof(buf));
        if (r < 0)
                return r;
        free(a->write);
        /* An iocost key is one "token=value" of its file's line. */
        a->write = a->attr->token ? strdup_printf("%s=%s", a->attr->token, buf) : strdup(buf);
        if (!a->write)
                return -ENOMEM;
        a->type = ACTION_WRITE;
        va_start(ap, fmt);
        r = action_set_reasonv(a, fmt, ap);
        va_end(ap);
        return r;
}

static const char *read_error_text(int err) {
        switch (err) {
        case -ENOENT:
                return "the kernel has no such attribute for this disk";
        case -EBADMSG:
                return "the current value cannot be parsed";
        case -EACCES:
        case -EPERM:
                return "the current value cannot be read (permission denied)";
        default:
                return "the current value cannot be read";
        }
}

/* The scheduler the policy asks for, among those the kernel offers. */
static int decide_scheduler(const Disk *d, const Setting *s, Action *a) {
        _cleanup_(strv_freep) char **offered = NULL;
        _cleanup_(freep) char *kernel_list = NULL;
        bool zoned_guard = d->zoned == ZONED_HOST_MANAGED;
        int r;

        if (!d->has_scheduler_file)
                return set_decision(a, ACTION_UNSUPPORTED, "bio-based queue: no I/O scheduler");
        if (DISK_ATTR(d, ATTR_SCHEDULER).err < 0 && DISK_ATTR(d, ATTR_SCHEDULER).err != -EBADMSG)
                return set_decision(a, ACTION_UNSUPPORTED, "%s",
                                    read_error_text(DISK_ATTR(d, ATTR_SCHEDULER).err));
        if (!d->scheduler)
                return set_decision(a, ACTION_UNSUPPORTED,
                                    "the queue has no elevator support (scheduler reads \"%s\")",
                                    strna(DISK_ATTR(d, ATTR_SCHEDULER).raw));
        a->current = strdup(d->scheduler);
        if (!a->current)
                return -ENOMEM;

        offered = calloc(1, sizeof(char *));
        if (!offered)
                return -ENOMEM;
        for (char **c = s->value.list; *c; c++) {
                if (!disk_scheduler_is_offered(d, *c))
                        continue;
                /* Host-managed zoned disks need mq-deadline's zone write locking; never
                 * move them to anything else. */
                if (zoned_guard && !streq(*c, "mq-deadline"))
                        continue;
                r = strv_extend(&offered, *c);
                if (r < 0)
                        return r;
        }

        if (!offered[0]) {
                kernel_list = strv_join(d->schedulers, " ");
                if (!kernel_list)
                        return -ENOMEM;
                if (zoned_guard)
                        return set_decision(a, ACTION_REFUSED,
                                            "host-managed zoned disk keeps mq-deadline");
                return set_decision(a, ACTION_UNSUPPORTED,
                                    "none of \"%s\" is offered (kernel offers: %s)",
                                    a->desired, kernel_list);
        }

        if (streq(offered[0], d->scheduler))
                return set_decision(a, ACTION_SKIP, "already %s", d->scheduler);

        a->write = strdup(offered[0]);
        a->fallbacks = strv_copy(offered + 1);
        if (!a->write || !a->fallbacks)
                return -ENOMEM;
        return set_decision(a, ACTION_WRITE, "%s -> %s%s", d->scheduler, offered[0],
                            streq(offered[0], s->value.list[0]) ? "" : " (first offered of the list)");
}

static int decide_wbt(const Disk *d, const Setting *s, const char *final_scheduler, Action *a) {
        const AttrState *st = &DISK_ATTR(d, ATTR_WBT_LAT_USEC);
        int64_t want = s->value.num, def = wbt_default_usec(d);

        if (st->err == -EINVAL) {
                /* Reading fails until wbt is set up on the queue; writing sets it up. */
                a->current = strdup("not set up");
                if (!a->current)
                        return -ENOMEM;
                if (want == 0)
                        return set_decision(a, ACTION_SKIP, "wbt is not set up: already off");
                if (want == -1)
                        return set_decision(a, ACTION_SKIP,
                                            "wbt is not set up on this queue: that is the kernel default");
                return set_write(a, want, "sets wbt up with %" PRIi64 " us", want);
        }
        if (st->err < 0)
                return set_decision(a, ACTION_UNSUPPORTED, "%s", read_error_text(st->err));

        a->current = st->value.num == 0 ? strdup("off") : strdup_printf("%" PRIi64, st->value.num);
        if (!a->current)
                return -ENOMEM;

        if (want == 0) {
                if (st->value.num == 0)
                        return set_decision(a, ACTION_SKIP, "already off");
                return set_write(a, 0, "turns wbt off");
        }
        if (want == -1) {
                if (st->value.num == def)
                        return set_decision(a, ACTION_SKIP, "already the default (%" PRIi64 " us)", def);
                if (st->value.num == 0 && final_scheduler && streq(final_scheduler, "bfq"))
                        /* bfq turns the default wbt off and keeps the default latency: the
                         * kernel compares latencies only, so writing -1 would change nothing. */
                        return set_decision(a, ACTION_SKIP,
                                            "bfq keeps wbt off by default; writing the default would not re-enable it");
                return set_write(a, -1, "restores the default (%" PRIi64 " us)", def);
        }
        if (st->value.num == want)
                return set_decision(a, ACTION_SKIP, "already %" PRIi64, want);
        return set_write(a, want, "%s -> %" PRIi64, a->current, want);
}

static int decide_number(const Disk *d, const Setting *s, const AttrState *st, Action *a) {
        int64_t want = s->value.num, shown = want;

        if (st->err < 0)
                return set_decision(a, ACTION_UNSUPPORTED, "%s", read_error_text(st->err));
        a->current = strdup_printf("%" PRIi64, st->value.num);
        if (!a->current)
                return -ENOMEM;

        if (s->attr->id == ATTR_MAX_SECTORS_KB && d->max_hw_sectors_kb > 0 &&
            want > d->max_hw_sectors_kb)
                return set_decision(a, ACTION_REFUSED,
                                    "%" PRIi64 " is above max_hw_sectors_kb (%" PRIi64 ")",
                                    want, d->max_hw_sectors_kb);
        if (st->value.num == want)
                return set_decision(a, ACTION_SKIP, "already %" PRIi64, want);
        /* A tunable kept in jiffies shows the value rounded up to a whole tick. */
        if (s->attr->id == ATTR_IOSCHED)
                shown = tunable_kernel_value(s->tunable, want, d->hz);
        if (st->value.num == shown)
                return set_decision(a, ACTION_SKIP, "already %" PRIi64 " (%" PRIi64
                                    " in whole clock ticks of HZ=%u)", shown, want, d->hz);
        return set_write(a, want, "%" PRIi64 " -> %" PRIi64, st->value.num, want);
}

static const char *iocost_not_applicable(const Disk *d, AttrFile f) {
        switch (DISK_IOCOST(d, f).err) {
        case 0:
        case -ENODATA:
                return NULL;
        case -ENOENT:
                return "not applicable on this system: no cgroup v2 hierarchy with the io controller";
        case -EBADMSG:
                return "the kernel's line for this disk cannot be parsed";
        case -EACCES:
        case -EPERM:
                return "the cgroup file cannot be read (permission denied)";
        default:
                return "the cgroup file cannot be read";
        }
}

/* What the merged policy wants for the ctrl of @f: an explicit iocost[.model].ctrl, else
 * "user" as soon as one number of the file is set (the kernel makes any number user's). */
static bool iocost_want_user(const Resolved *r, AttrFile f, const ResolvedSetting **ret_ctrl) {
        AttrId ctrl = f == ATTR_FILE_IOCOST_QOS ? ATTR_IOCOST_CTRL : ATTR_IOCOST_MODEL_CTRL;
        const ResolvedSetting *c = resolved_find(r, ctrl, NULL);

        *ret_ctrl = c;
        if (c)
                return c->setting->value.num == 1;
        for (size_t i = 0; i < r->n_settings; i++) {
                const AttrInfo *a = r->settings[i].setting->attr;

                if (a->file == f && a->id != ctrl && a->id != ATTR_IOCOST_ENABLE)
                        return true;
        }
        return false;
}

static int64_t iocost_effective(const Disk *d, const Resolved *r, AttrId id, int64_t dflt) {
        const ResolvedSetting *rs = resolved_find(r, id, NULL);

        if (rs)
                return rs->setting->value.num;
        if (DISK_IOCOST(d, ATTR_FILE_IOCOST_QOS).err == 0)
                return DISK_IOCOST(d, ATTR_FILE_IOCOST_QOS).num[id];
        return dflt;
}

static int decide_iocost_option(const Disk *d, const Resolved *r, const Setting *s, Action *a) {
        if (s->attr->id == ATTR_IOCOST_ALLOW_STATIC_KEY)
                return set_decision(a, ACTION_SKIP, "an opt-in of iosched; %s",
                                    d->rqos_static_key ? "this kernel sets rq-qos up with the static key"
                                                       : "this kernel does not need it");
        if (r->iocost_solution)
                return set_decision(a, ACTION_SKIP, "hwdb solution \"%s\" gives the iocost keys not set explicitly",
                                    r->iocost_solution);
        return set_decision(a, ACTION_UNSUPPORTED, "%s",
                            r->iocost_solution_err == -ENOENT
                                    ? "the disk has no IOCOST_SOLUTIONS in udev's hwdb"
                                    : "the disk's hwdb has no IOCOST_QOS_<NAME> and IOCOST_MODEL_<NAME> for it");
}

/* io.cost.qos and io.cost.model: each key on its own; apply joins a file's writes in one line. */
static int decide_iocost(const Disk *d, const Resolved *r, const Setting *s, Action *a) {
        AttrFile f = s->attr->file;
        const ResolvedSetting *ctrl, *allow;
        const IocostState *st;
        bool absent, want_user, cur_user;
        AttrId id = s->attr->id;
        int64_t want = s->value.num, cur;
        char buf[32];
        const char *na;

        if (f == ATTR_FILE_NONE)
                return decide_iocost_option(d, r, s, a);
        st = &DISK_IOCOST(d, f);
        absent = st->err == -ENODATA;
        na = iocost_not_applicable(d, f);
        if (na)
                return set_decision(a, ACTION_UNSUPPORTED, "%s", na);
        if (!d->has_scheduler_file)
                return set_decision(a, ACTION_UNSUPPORTED, "bio-based queue: iocost needs blk-mq");

        want_user = iocost_want_user(r, f, &ctrl);
        cur_user = !absent && st->num[f == ATTR_FILE_IOCOST_QOS ? ATTR_IOCOST_CTRL : ATTR_IOCOST_MODEL_CTRL];
        cur = absent ? 0 : st->num[id];
        if (absent)
                a->current = strdup("not set up");
        else {
                if (value_sysfs_string(s->attr, cur, buf, sizeof(buf)) < 0)
                        return -EINVAL;
                a->current = strdup(buf);
        }
        if (!a->current)
                return -ENOMEM;

        if (s->attr->kind == ATTR_KIND_CTRL || id == ATTR_IOCOST_ENABLE) {
                if (cur == want)
                        return set_decision(a, ACTION_SKIP, absent ? "iocost is not set up on this disk: already %s"
                                                                   : "already %s", s->text);
        } else if (!want_user)
                return set_decision(a, ACTION_REFUSED,
                                    "ignored: %s = auto (%s:%u) lets the kernel choose the numbers",
                                    ctrl->setting->key, ctrl->rule->file, ctrl->setting->line);
        else if (!absent && cur_user && cur == want)
                return set_decision(a, ACTION_SKIP, "already %s", s->text);

        if (id == ATTR_IOCOST_MIN || id == ATTR_IOCOST_MAX) {
                /* The kernel refuses min above max, taking the other from its current
                 * parameters (1% and 10000% when iocost is not set up yet). */
                int64_t lo = iocost_effective(d, r, ATTR_IOCOST_MIN, 100);
                int64_t hi = iocost_effective(d, r, ATTR_IOCOST_MAX, 1000000);

                if (lo > hi)
                        return set_decision(a, ACTION_REFUSED,
                                            "min %" PRIi64 ".%02" PRIi64 " would be above max %" PRIi64
                                            ".%02" PRIi64 ": the kernel refuses it (EINVAL)",
                                            lo / 100, lo % 100, hi / 100, hi % 100);
        }

        /* Setting iocost up on a disk (neither file has its line: both show one once it is)
         * adds an rq-qos policy: on 6.16.0-6.16.3 that does static_branch_inc() under the
         * queue freeze (seed 004). */
        allow = resolved_find(r, ATTR_IOCOST_ALLOW_STATIC_KEY, NULL);
        if (absent && DISK_IOCOST(d, f == ATTR_FILE_IOCOST_QOS ? ATTR_FILE_IOCOST_MODEL : ATTR_FILE_IOCOST_QOS).err == -ENODATA &&
            d->rqos_static_key && !(allow && allow->setting->value.num == 1))
                return set_decision(a, ACTION_REFUSED,
                                    "refused on this kernel: Linux 6.16.0-6.16.3 take cpu_hotplug_lock under the "
                                    "queue freeze when iocost is first set up on a disk (rq-qos static key, a "
                                    "lockdep deadlock; fixed in 6.16.4 and 6.17 by \"block: blk-rq-qos: replace "
                                    "static key with atomic bitop\"); set iocost.allow_static_key_kernels = yes "
                                    "to do it anyway");

        if (absent)
                return set_write(a, want, "iocost is not set up on this disk");
        if (s->attr->kind != ATTR_KIND_CTRL && id != ATTR_IOCOST_ENABLE && !cur_user)
                return set_write(a, want, "%s chosen by the kernel (ctrl=auto) -> %s", a->current,
                                        s->text);
        return set_write(a, want, "%s -> %s", a->current, s->text);
}

/* What every action says whatever it decides: the key, the desired value and where it was set. */
static int action_init(Action *a, const ResolvedSetting *rs) {
        const Setting *s = rs->setting;

        a->setting = rs;
        a->attr = s->attr;
        a->line = s->line;
        a->key = strdup(s->key);
        a->desired = strdup(s->text);
        a->file = strdup(rs->rule->file);
        a->rule = strdup(rs->rule->name);
        if (!a->key || !a->desired || !a->file || !a->rule ||
            (s->tunable && !(a->tunable = strdup(s->tunable))))
                return -ENOMEM;
        return 0;
}

/* Values a scheduler switch resets cannot be compared before it: plan a write, and decide
 * again once the switch is done. */
static int decide_before_switch(const Setting *s, const char *switch_to, Action *a) {
        a->after_switch = true;
        if (s->attr->id == ATTR_IOSCHED && !tunable_belongs_to(switch_to, s->tunable))
                return set_decision(a, ACTION_UNSUPPORTED, "not a tunable of %s", switch_to);
        a->current = strdup(s->attr->id == ATTR_WBT_LAT_USEC ? "may change with the switch"
                                                             : "reset by the switch");
        if (!a->current)
                return -ENOMEM;
        return set_write(a, s->value.num, "decided again after the switch to %s", switch_to);
}

static int decide_tunable(const Disk *d, const Setting *s, Action *a) {
        const Tunable *t;

        if (!d->scheduler || !tunable_belongs_to(d->scheduler, s->tunable))
                return set_decision(a, ACTION_UNSUPPORTED, "not a tunable of %s",
                                    d->scheduler ?: "a queue without scheduler");
        t = disk_get_tunable(d, s->tunable);
        if (!t)
                return set_decision(a, ACTION_UNSUPPORTED, "this kernel's %s has no tunable %s",
                                    d->scheduler, s->tunable);
        return decide_number(d, s, &t->state, a);
}

static int decide(const Disk *d, const Resolved *res, const Setting *s, const char *switch_to,
                  Action *a) {
        if (d->partition)
                return set_decision(a, ACTION_REFUSED, "partition: settings belong to the whole disk");
        /* Said before anything is read of it: a bio-based queue has no such file to read
         * (6.11 and later) or one that refuses every write (6.1's nr_requests). */
        if (s->attr->mq_only && disk_is_bio_based(d))
                return set_decision(a, ACTION_UNSUPPORTED,
                                    "not applicable: bio-based queue (%s%s%s), the queues below it schedule its I/O",
                                    stack_role_to_string(d->stack.role), d->stack.dm_kind ? " " : "",
                                    strempty(d->stack.dm_kind));
        /* io.cost.* lines are keyed by the device number, which a hidden disk has not. */
        if (!d->devnum && s->attr->file != ATTR_FILE_QUEUE && s->attr->file != ATTR_FILE_NONE)
                return set_decision(a, ACTION_UNSUPPORTED, "not applicable: a hidden disk has no device number");
        /* multipath-tools sets max_sectors_kb of a map and its paths as it builds the map, and a
         * request built for the map's limit that a path refuses fails (multipath.conf(5)). */
        if (s->attr->id == ATTR_MAX_SECTORS_KB && stack_role_is_multipath(d->stack.role))
                return set_decision(a, ACTION_REFUSED, "%s: max_sectors_kb stays as multipath-tools set it "
                                    "(a live map's paths must keep the map's limit)",
                                    stack_role_to_string(d->stack.role));
        if (switch_to && s->attr->follows_scheduler)
                return decide_before_switch(s, switch_to, a);

        switch (s->attr->id) {
        case ATTR_OWNER_DEFER:
                return set_decision(a, ACTION_SKIP, "an option of iosched: what %s write%s of this disk "
                                    "is left to %s", s->text, s->value.num ? "" : "s",
                                    s->value.num ? "them" : "iosched");
        case ATTR_SCHEDULER:
                return decide_scheduler(d, s, a);
        case ATTR_IOSCHED:
                return decide_tunable(d, s, a);
        case ATTR_WBT_LAT_USEC:
                return decide_wbt(d, s, switch_to ?: d->scheduler, a);
        default:
                if (s->attr->file != ATTR_FILE_QUEUE)
                        return decide_iocost(d, res, s, a);
                return decide_number(d, s, &DISK_ATTR(d, s->attr->id), a);
        }
}

int action_note_others(Action *a, const OtherWriters *o) {
        assert(a);
        errno = 0;
        a->others = mfree(a->others);
        a->others = other_writers_of_key(o, a->attr->id, a->tunable, UINT32_MAX);
        return !a->others && errno == ENOMEM ? -ENOMEM : 0;
}

/* owner.defer: a write of a key that a writer of a deferred kind writes (or may) is left to it.
 * A hold is asked for explicitly: it is written. */
static int defer_to_other(const Disk *d, const Resolved *res, const ResolvedSetting *rs, Action *a) {
        const ResolvedSetting *defer = resolved_find(res, ATTR_OWNER_DEFER, NULL);
        _cleanup_(freep) char *where = NULL;
        const Writer *w;

        if (a->type != ACTION_WRITE || !defer || rs->rule->hold)
                return 0;
        w = other_writers_find(d->writers, a->attr->id, a->tunable, (uint32_t) defer->setting->value.num);
        if (!w)
                return 0;
        where = writer_where(w);
        if (!where)
                return -ENOMEM;
        a->write = mfree(a->write);
        a->fallbacks = strv_free(a->fallbacks);
        return set_decision(a, ACTION_DEFERRED, "left to %s (%s%s, owner.defer at %s:%u)",
                            writer_kind_to_string(w->kind), where,
                            w->applies == APPLIES_MAYBE ? ", may apply" : "", defer->rule->file,
                            defer->setting->line);
}

int plan_decide(const Disk *d, const Resolved *res, const ResolvedSetting *rs, const char *switch_to,
                Action *ret) {
        _cleanup_(action_done) Action a = {};
        int r;

        assert(d && res && rs && ret);
        r = action_init(&a, rs);
        if (r < 0)
                return r;
        r = decide(d, res, rs->setting, switch_to, &a);
        if (r < 0)
                return r;
        /* Who else writes the key: for the log line of a change, and owner.defer. */
        r = action_note_others(&a, d->writers);
        if (r < 0)
                return r;
        r = defer_to_other(d, res, rs, &a);
        if (r < 0)
                return r;
        a.outcome = outcome_of(a.type);
        *ret = a;
        a = (Action) {};
        return 0;
}

/* The scheduler a write in @p's first @n actions switches to, NULL for none. The scheduler,
 * if set, comes first (attribute order). */
static const char *switch_target(const Action *actions, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (actions[i].attr->id == ATTR_SCHEDULER && actions[i].type == ACTION_WRITE)
                        return actions[i].write;
        return NULL;
}

int plan_build(const Disk *d, const Resolved *r, Plan **ret) {
        _cleanup_(plan_freep) Plan *p = NULL;
        int k;

        assert(d && r && ret);
        p = calloc(1, sizeof(Plan));
        if (!p)
                return -ENOMEM;
        p->disk = strdup(d->name);
        if (!p->disk)
                return -ENOMEM;
        if (r->n_settings > 0) {
                p->actions = calloc(r->n_settings, sizeof(Action));
                if (!p->actions)
                        return -ENOMEM;
        }

        /* r->settings is in attribute order: the scheduler, if set, comes first. */
        for (size_t i = 0; i < r->n_settings; i++) {
                k = plan_decide(d, r, &r->settings[i], switch_target(p->actions, p->n_actions),
                                &p->actions[p->n_actions]);
                if (k < 0)
                        return k;
                p->n_actions++;
        }

        *ret = TAKE_PTR(p);
        return 0;
}

int plan_decide_rest(const Disk *d, const Resolved *r, Plan *p, size_t from) {
        _cleanup_(action_done) Action sched = {};
        const ResolvedSetting *rs;
        const char *switch_to = NULL;
        Action *again;
        size_t n;
        int k;

        assert(d && r && p && from <= p->n_actions);
        /* A switch still pending (one that failed, say) is decided on what the disk reads. */
        rs = resolved_find(r, ATTR_SCHEDULER, NULL);
        if (rs) {
                k = plan_decide(d, r, rs, NULL, &sched);
                if (k < 0)
                        return k;
                if (sched.type == ACTION_WRITE)
                        switch_to = sched.write;
        }
        n = p->n_actions - from;
        again = calloc(MAX(n, (size_t) 1), sizeof(Action));
        if (!again)
                return -ENOMEM;
        for (size_t j = 0; j < n; j++) {
                const Action *a = &p->actions[from + j];

                k = a->attr->id == ATTR_SCHEDULER ? plan_decide(d, r, a->setting, NULL, &again[j])
                                                  : plan_decide(d, r, a->setting, switch_to, &again[j]);
                if (k < 0) {
                        for (size_t i = 0; i < j; i++)
                                action_done(&again[i]);
                        free(again);
                        return k;
                }
        }
        for (size_t j = 0; j < n; j++) {
                action_done(&p->actions[from + j]);
                p->actions[from + j] = again[j];
        }
        free(again);
        return 0;
}

int iocost_write_line(const char *devnum, const Action *actions, size_t n, AttrFile file, char **ret) {
        _cleanup_(freep) char *line = NULL;

        assert(devnum && ret);
        for (size_t i = 0; i < n; i++) {
                const Action *a = &actions[i];
                char *l;

                if (a->attr->file != file || a->type != ACTION_WRITE || !a->write)
                        continue;
                l = strdup_printf("%s %s", line ?: devnum, a->write);
                if (!l)
                        return -ENOMEM;
                free(line);
                line = l;
        }
        *ret = TAKE_PTR(line);
        return 0;
}
