/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the kernel prints in io.cost.qos and io.cost.model, and what /proc/self/mountinfo
 * says, taken as hostile. The disk is 259:0.
 *
 * Input: one flags byte, then the text of io.cost.qos, a line "--", the text of io.cost.model,
 * a line "--", the text of mountinfo. Flags: 0x03 which of 4 policies, 0x04 the kernel has the
 * rq-qos static key, 0x08 iocost.allow_static_key_kernels = yes, 0x10 bio-based queue.
 *
 * Invariants: a line either parses whole or is -EBADMSG (or absent, -ENODATA); what parsed
 * prints in the kernel's format and parses back to the same values; no write is planned for a
 * value the kernel already shows (with ctrl=user), nor for a file that could not be read, nor
 * a first set-up on a static-key kernel without the opt-in; every token written parses to the
 * wanted value; and once the kernel took the line (emulated as blk-iocost.c does), the same
 * policy plans no write at all: one line converges.
 */
#include "conf.h"
#include "fuzz.h"
#include "iocost.h"
#include "plan.h"

static const char *const policy_texts[4] = {
        "iocost.enable = yes\niocost.rpct = 95\niocost.rlat = 5000\niocost.wpct = 95.5\n"
        "iocost.wlat = 10000\niocost.min = 50\niocost.max = 150\niocost.model.rbps = 2706339840\n"
        "iocost.model.rseqiops = 89698\niocost.model.rrandiops = 110036\niocost.model.wbps = 1063126016\n"
        "iocost.model.wseqiops = 135560\niocost.model.wrandiops = 130734\n",
        "iocost.enable = yes\niocost.ctrl = auto\niocost.model.ctrl = auto\niocost.rlat = 1\n",
        "iocost.enable = no\niocost.min = 0.5\niocost.max = 99.999\niocost.model.ctrl = user\n",
        "iocost.ctrl = user\niocost.rpct = 0\niocost.wpct = 100\niocost.min = 20000\n"
        "iocost.model.wrandiops = 0\n",
};

static Policy *policies[4];

static const Policy *get_policy(unsigned i, bool allow) {
        unsigned slot = i;

        if (!policies[slot]) {
                _cleanup_(freep) char *text = strdup_printf(
                        "[rule p%u]\nmatch.name = *\n%s\n[rule allow]\nmatch.name = allowed\n"
                        "iocost.allow_static_key_kernels = yes\n", i, policy_texts[i]);

                policies[slot] = fuzz_policy_parse(text);
        }
        return policies[slot];
}

static void check_state(AttrFile f, const IocostState *st) {
        _cleanup_(iocost_state_done) IocostState again = {};
        _cleanup_(freep) char *line = NULL;

        fuzz_check(st->err == 0 || st->err == -ENODATA || st->err == -EBADMSG);
        if (st->err < 0)
                return;
        fuzz_check(st->raw && fuzz_no_control_chars(st->raw, strlen(st->raw)));
        line = strdup_printf("259:0 %s", st->raw);
        fuzz_oom_check(line);
        fuzz_check(iocost_parse_line(f, line, NULL, &again) == 0);
        for (AttrId id = 0; id < _ATTR_MAX; id++)
                if (attr_get(id)->file == f)
                        fuzz_check(again.num[id] == st->num[id]);
}

/* The token as blk-iocost.c would take it, into @num; false for what it would refuse. */
static bool kernel_take(AttrFile f, const char *line, int64_t *num) {
        _cleanup_(strv_freep) char **words = NULL;
        AttrId ctrl = f == ATTR_FILE_IOCOST_QOS ? ATTR_IOCOST_CTRL : ATTR_IOCOST_MODEL_CTRL;

        fuzz_check(strv_split(line, " ", &words) == 0);
        fuzz_check(words[0] && streq(words[0], "259:0") && words[1]);
        for (char **w = words + 1; *w; w++) {
                char *eq = strchr(*w, '=');
                const AttrInfo *a;
                int64_t n;

                fuzz_check(eq);
                *eq = 0;
                a = attr_from_token(f, *w);
                fuzz_check(a);
                if (a->kind == ATTR_KIND_CTRL) {
                        fuzz_check(streq(eq + 1, "auto") || streq(eq + 1, "user"));
                        num[a->id] = streq(eq + 1, "user");
                        continue;
                }
                if (a->kind == ATTR_KIND_PERCENT)
                        fuzz_check(percent_parse(eq + 1, &n) == 0);
                else
                        fuzz_check(safe_atoi64(eq + 1, 0, a->max, &n) == 0);
                num[a->id] = n;
                if (a->id != ATTR_IOCOST_ENABLE)
                        num[ctrl] = 1;
        }
        return f != ATTR_FILE_IOCOST_QOS || num[ATTR_IOCOST_MIN] <= num[ATTR_IOCOST_MAX];
}

static void check_plan(const Disk *d, const Resolved *res, const Plan *plan) {
        for (size_t i = 0; i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];
                const Setting *s = res->settings[i].setting;
                const IocostState *st;
                int64_t n;

                fuzz_check(a->attr == s->attr && a->reason);
                if (a->attr->file == ATTR_FILE_NONE) {
                        fuzz_check(a->type != ACTION_WRITE);
                        continue;
                }
                if (a->type != ACTION_WRITE) {
                        fuzz_check(!a->write);
                        continue;
                }
                st = &DISK_IOCOST(d, a->attr->file);
                fuzz_check(st->err == 0 || st->err == -ENODATA);
                fuzz_check(d->has_scheduler_file);
                if (DISK_IOCOST(d, ATTR_FILE_IOCOST_QOS).err == -ENODATA &&
                    DISK_IOCOST(d, ATTR_FILE_IOCOST_MODEL).err == -ENODATA && d->rqos_static_key)
                        fuzz_check(resolved_find(res, ATTR_IOCOST_ALLOW_STATIC_KEY, NULL));
                fuzz_check(startswith(a->write, a->attr->token) && a->write[strlen(a->attr->token)] == '=');
                if (a->attr->kind == ATTR_KIND_PERCENT)
                        fuzz_check(percent_parse(a->write + strlen(a->attr->token) + 1, &n) == 0);
                else if (a->attr->kind == ATTR_KIND_CTRL)
                        n = streq(a->write + strlen(a->attr->token) + 1, "user");
                else
                        fuzz_check(safe_atoi64(a->write + strlen(a->attr->token) + 1, 0, INT64_MAX, &n) == 0);
                fuzz_check(n == s->value.num);
                /* written only when it differs, or when the kernel holds it as its own (auto) */
                if (st->err == 0 && a->attr->kind != ATTR_KIND_CTRL && a->attr->id != ATTR_IOCOST_ENABLE)
                        fuzz_check(st->num[a->attr->id] != n ||
                                   !st->num[a->attr->file == ATTR_FILE_IOCOST_QOS ? ATTR_IOCOST_CTRL
                                                                                   : ATTR_IOCOST_MODEL_CTRL]);
                else if (st->err == 0)
                        fuzz_check(st->num[a->attr->id] != n);
        }
}

static void load(Disk *d, AttrFile f, const char *text) {
        fuzz_check(iocost_find(f, text ?: "", "259:0", &DISK_IOCOST(d, f)) != -ENOMEM);
        check_state(f, &DISK_IOCOST(d, f));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(disk_freep) Disk *d = NULL;
        _cleanup_(resolved_freep) Resolved *res = NULL;
        _cleanup_(plan_freep) Plan *plan = NULL, *again = NULL;
        _cleanup_(strv_freep) char **mounts = NULL;
        _cleanup_(freep) char *text = NULL;
        char *parts[3] = {}, *p;
        unsigned flags;

        if (size < 1 || size > 1 << 16)
                return 0;
        flags = data[0];
        text = fuzz_strndup(data + 1, size - 1);
        fuzz_oom_check(text);
        p = text;
        for (size_t i = 0; i < 3 && p; i++) {
                char *sep = strstr(p, "\n--\n");

                parts[i] = p;
                if (sep)
                        *sep = 0;
                p = sep ? sep + 4 : NULL;
        }

        fuzz_check(mountinfo_cgroup2_mounts(parts[2] ?: "", &mounts) == 0);
        for (char **m = mounts; *m; m++)
                fuzz_check((*m)[0] == '/');

        d = disk_new(flags & 0x08 ? "allowed" : "nvme0n1");
        fuzz_oom_check(d);
        d->devnum = strdup("259:0");
        fuzz_oom_check(d->devnum);
        d->has_scheduler_file = !(flags & 0x10);
        d->rqos_static_key = flags & 0x04;
        load(d, ATTR_FILE_IOCOST_QOS, parts[0]);
        load(d, ATTR_FILE_IOCOST_MODEL, parts[1]);

        fuzz_check(policy_resolve(get_policy(flags & 0x03, flags & 0x08), d, &res) == 0);
        fuzz_check(plan_build(d, res, &plan) == 0);
        check_plan(d, res, plan);

        /* The kernel takes the lines (model first; the first write sets both up). */
        for (AttrFile f = ATTR_FILE_IOCOST_MODEL; f <= ATTR_FILE_IOCOST_QOS; f++) {
                _cleanup_(freep) char *line = NULL;
                int64_t num[_ATTR_MAX];

                fuzz_check(iocost_write_line(d->devnum, plan->actions, plan->n_actions, f, &line) == 0);
                if (!line)
                        continue;
                for (AttrFile g = ATTR_FILE_IOCOST_MODEL; g <= ATTR_FILE_IOCOST_QOS; g++)
                        if (DISK_IOCOST(d, g).err == -ENODATA) {
                                /* a new ioc: ctrl=auto, the kernel's min and max */
                                DISK_IOCOST(d, g) = (IocostState) { .num = calloc(_ATTR_MAX, sizeof(int64_t)) };
                                fuzz_oom_check(DISK_IOCOST(d, g).num);
                                DISK_IOCOST(d, g).num[ATTR_IOCOST_MIN] = 100;
                                DISK_IOCOST(d, g).num[ATTR_IOCOST_MAX] = 1000000;
                        }
                memcpy(num, DISK_IOCOST(d, f).num, sizeof(num));
                if (kernel_take(f, line, num))
                        memcpy(DISK_IOCOST(d, f).num, num, sizeof(num));
        }
        fuzz_check(plan_build(d, res, &again) == 0);
        for (size_t i = 0; i < again->n_actions; i++)
                if (again->actions[i].attr->file != ATTR_FILE_NONE)
                        fuzz_check(again->actions[i].type != ACTION_WRITE);
        return 0;
}
