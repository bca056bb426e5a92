/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the kernel prints in sysfs, taken as hostile: the scheduler line, wbt_lat_usec, the
 * numbers, the tunables. The text goes through attr_state_parse() and scheduler_parse(), as
 * sysfs_read_setting() and sysfs_reload_settings() do, and the disk is then planned against a
 * policy that sets every attribute.
 *
 * Input: one flags byte, then lines:
 *   0 queue/scheduler   1 wbt_lat_usec   2 nr_requests   3 read_ahead_kb   4 max_sectors_kb
 *   5 rq_affinity   6 nomerges   7 add_random   8 iostats   9 max_hw_sectors_kb
 *   10... "tunable=value" (queue/iosched/NAME)
 * A line "!ENOENT", "!EINVAL", "!EIO" or "!EACCES" is a read that failed with that error.
 * Flags: 0x01 rotational, 0x02 host-managed zoned, 0x04 partition, 0x08 bio-based (no
 * scheduler file), 0x70 which of 8 policies, 0x80 the scheduler modules are loadable.
 *
 * Invariants (the project's promise): no write is planned for a value the queue already has;
 * every scheduler written is one the kernel offers and one the policy lists; a host-managed
 * zoned disk is never moved off mq-deadline; a partition gets no write; every string planned
 * for sysfs is the wanted number; the JSON report is valid UTF-8 without raw control
 * characters, whatever bytes the kernel printed.
 */
#include <inttypes.h>

#include "conf.h"
#include "fuzz.h"
#include "plan.h"
#include "report.h"

static const char *const policy_texts[8] = {
        "scheduler = mq-deadline\niosched.read_expire = 100\niosched.fifo_batch = 8\n"
        "nr_requests = 64\nwbt_lat_usec = default\nread_ahead_kb = 128\nmax_sectors_kb = 512\n"
        "rq_affinity = 2\nnomerges = 0\nadd_random = 0\niostats = 1\n",
        "scheduler = bfq mq-deadline none\niosched.low_latency = 0\niosched.slice_idle = 0\n"
        "wbt_lat_usec = off\nnr_requests = 256\n",
        "scheduler = none\nwbt_lat_usec = 2000\nnomerges = 2\n",
        "scheduler = kyber\niosched.read_lat_nsec = 1000000\nwbt_lat_usec = 75000\n",
        "wbt_lat_usec = default\nnr_requests = 128\niosched.read_expire = 500\nmax_sectors_kb = 4\n",
        "scheduler = deadline\nmax_sectors_kb = 4096\nwbt_lat_usec = 1\nread_ahead_kb = 0\n",
        "scheduler = bfq\nwbt_lat_usec = default\niosched.slice_idle_us = 0\n",
        "scheduler = mq-deadline kyber\niosched.write_expire = 1000\niosched.writes_starved = 2\n"
        "iosched.front_merges = 0\niosched.async_depth = 32\niosched.prio_aging_expire = 5000\n"
        "rq_affinity = 0\n",
};

static Policy *policies[8];

static const Policy *get_policy(unsigned i) {
        if (!policies[i]) {
                _cleanup_(freep) char *text =
                        strdup_printf("[rule p%u]\nmatch.name = *\n%s", i, policy_texts[i]);

                policies[i] = fuzz_policy_parse(text);
        }
        return policies[i];
}

static int read_error(const char *line) {
        static const struct {
                const char *text;
                int err;
        } errors[] = {
                {"!ENOENT", -ENOENT},
                {"!EINVAL", -EINVAL},
                {"!EIO", -EIO},
                {"!EACCES", -EACCES},
        };

        for (size_t i = 0; i < ELEMENTSOF(errors); i++)
                if (streq(line, errors[i].text))
                        return errors[i].err;
        return 0;
}

/* What sysfs_read_setting() does with a file's text: strip, then parse by kind. */
static void load_state(const AttrInfo *a, AttrState *st, const char *line) {
        attr_state_done(st);
        st->err = line ? read_error(line) : -ENOENT;
        if (st->err < 0)
                return;
        st->raw = strdup(line);
        fuzz_oom_check(st->raw);
        strstrip_inplace(st->raw);
        fuzz_check(attr_state_parse(a, st) != -ENOMEM);
}

static void load_scheduler(Disk *d, const char *line, bool bio_based) {
        AttrState *st = &DISK_ATTR(d, ATTR_SCHEDULER);
        int r;

        /* As sysfs_reload_settings(). */
        load_state(attr_get(ATTR_SCHEDULER), st, bio_based ? "!ENOENT" : line);
        d->has_scheduler_file = st->err != -ENOENT;
        if (st->err < 0)
                return;
        r = scheduler_parse(st->raw, &d->scheduler, &d->schedulers);
        fuzz_check(r == 0 || r == -EINVAL);
        fuzz_check((r == 0) == (st->err == 0));
        if (r < 0)
                return;
        fuzz_check(streq_ptr(d->scheduler, st->value.list[0]));
        fuzz_check(!d->scheduler || strv_contains(d->schedulers, d->scheduler));
        for (char **s = d->schedulers; *s; s++)
                fuzz_check(scheduler_name_is_valid(*s));
}

static void add_tunable(Disk *d, const char *line) {
        _cleanup_(freep) char *name = NULL;
        const char *eq = strchr(line, '=');
        Tunable *t;

        if (!eq || d->n_tunables >= 64)
                return;
        name = strndup(line, eq - line);
        fuzz_oom_check(name);
        if (!tunable_name_is_valid(name) || disk_get_tunable(d, name))
                return;
        t = realloc(d->tunables, sizeof(Tunable) * (d->n_tunables + 1));
        fuzz_oom_check(t);
        d->tunables = t;
        t = &d->tunables[d->n_tunables++];
        *t = (Tunable){.name = TAKE_PTR(name)};
        load_state(attr_get(ATTR_IOSCHED), &t->state, eq + 1);
}

static const AttrState *state_of(const Disk *d, const Action *a) {
        if (a->attr->id == ATTR_IOSCHED) {
                const Tunable *t = disk_get_tunable(d, a->tunable);
                return t ? &t->state : NULL;
        }
        return disk_attr_slot(a->attr->id) >= 0 ? &DISK_ATTR(d, a->attr->id) : NULL;
}

static void check_action(const Disk *d, const ResolvedSetting *rs, const Action *a, const char *switch_to) {
        const Setting *s = rs->setting;
        const AttrState *st;
        int64_t want = s->value.num, written;

        fuzz_check(a->attr == s->attr && streq(a->key, s->key));
        fuzz_check(a->type < _ACTION_MAX && a->reason);
        if (d->partition)
                fuzz_check(a->type == ACTION_REFUSED);
        if (a->type != ACTION_WRITE) {
                fuzz_check(!a->write);
                if (a->type == ACTION_SKIP && a->attr->kind != ATTR_KIND_SCHEDULER &&
                    a->attr->id != ATTR_WBT_LAT_USEC) {
                        st = state_of(d, a);
                        fuzz_check(st && st->err == 0 && st->value.num == want);
                }
                return;
        }
        fuzz_check(a->write);

        if (a->attr->id == ATTR_SCHEDULER) {
                fuzz_check(d->scheduler && !streq(a->write, d->scheduler));
                fuzz_check(disk_scheduler_is_offered(d, a->write));
                fuzz_check(strv_contains(s->value.list, a->write));
                if (d->zoned == ZONED_HOST_MANAGED)
                        fuzz_check(streq(a->write, "mq-deadline"));
                for (char **f = a->fallbacks; f && *f; f++)
                        fuzz_check(disk_scheduler_is_offered(d, *f) && strv_contains(s->value.list, *f));
                return;
        }

        fuzz_check(safe_atoi64(a->write, INT64_MIN, INT64_MAX, &written) == 0 && written == want);
        if (a->after_switch) {
                /* Decided again after the switch, on what the kernel reads then. */
                fuzz_check(switch_to && a->attr->follows_scheduler);
                return;
        }

        st = state_of(d, a);
        fuzz_check(st);
        if (a->attr->id == ATTR_WBT_LAT_USEC) {
                if (st->err == -EINVAL)
                        fuzz_check(want > 0); /* not set up: 0 and -1 are already true */
                else if (want == -1)
                        fuzz_check(st->err == 0 && st->value.num != wbt_default_usec(d));
                else
                        fuzz_check(st->err == 0 && st->value.num != want);
                return;
        }
        fuzz_check(st->err == 0 && st->value.num != want);
        if (a->attr->id == ATTR_MAX_SECTORS_KB && d->max_hw_sectors_kb > 0)
                fuzz_check(want <= d->max_hw_sectors_kb);
        if (a->attr->id == ATTR_IOSCHED)
                fuzz_check(d->scheduler && tunable_belongs_to(d->scheduler, a->tunable));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(disk_freep) Disk *d = NULL;
        _cleanup_(resolved_freep) Resolved *res = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_(freep) char *out = NULL;
        const char *switch_to = NULL;
        unsigned flags, n = 0;
        size_t n_out = 0;
        FILE *f;

        if (size < 1)
                return 0;
        flags = data[0];
        data++;
        size--;

        d = disk_new("fuzz0");
        fuzz_oom_check(d);
        d->load = DISK_LOAD_ALL;
        d->rotational = flags & 0x01;
        d->zoned = flags & 0x02 ? ZONED_HOST_MANAGED : ZONED_NONE;
        d->partition = flags & 0x04;
        d->nr_hw_queues = 1;

        for (char *line; (line = fuzz_next_line(&data, &size)); n++) {
                static const AttrId by_line[] = {
                        [1] = ATTR_WBT_LAT_USEC,   [2] = ATTR_NR_REQUESTS, [3] = ATTR_READ_AHEAD_KB,
                        [4] = ATTR_MAX_SECTORS_KB, [5] = ATTR_RQ_AFFINITY, [6] = ATTR_NOMERGES,
                        [7] = ATTR_ADD_RANDOM,     [8] = ATTR_IOSTATS,
                };
                int64_t v;

                if (n == 0)
                        load_scheduler(d, line, flags & 0x08);
                else if (n < ELEMENTSOF(by_line))
                        load_state(attr_get(by_line[n]), &DISK_ATTR(d, by_line[n]), line);
                else if (n == 9) {
                        /* As sysfs_load_disk(): a number or unknown. */
                        if (safe_atoi64(strstrip(line), INT64_MIN, INT64_MAX, &v) >= 0)
                                d->max_hw_sectors_kb = v;
                } else
                        add_tunable(d, line);
                free(line);
        }
        if (n == 0)
                load_scheduler(d, NULL, true);
        if (d->scheduler && (flags & 0x80)) {
                static const char *const loadable[] = {"mq-deadline", "kyber", "bfq"};

                for (size_t i = 0; i < ELEMENTSOF(loadable); i++)
                        if (!strv_contains(d->schedulers, loadable[i]))
                                fuzz_check(strv_extend(&d->schedulers_loadable, loadable[i]) == 0);
        }

        fuzz_check(policy_resolve(get_policy((flags >> 4) & 7), d, &res) == 0);
        fuzz_check(plan_build(d, res, &plan) == 0);
        fuzz_check(plan->n_actions == res->n_settings);
        for (size_t i = 0; i < plan->n_actions; i++) {
                check_action(d, &res->settings[i], &plan->actions[i], switch_to);
                if (plan->actions[i].attr->id == ATTR_SCHEDULER && plan->actions[i].type == ACTION_WRITE)
                        switch_to = plan->actions[i].write;
        }

        /* Raw kernel text ends up in reasons: the JSON report must escape it. */
        f = open_memstream(&out, &n_out);
        fuzz_oom_check(f);
        report_print_json(f, d, plan, NULL);
        fclose(f);
        fuzz_check(out && fuzz_no_control_chars(out, n_out));
        fuzz_check(fuzz_utf8_is_valid(out, n_out)); /* JSON is UTF-8 */
        return 0;
}
