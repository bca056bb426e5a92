/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "conf.h"
#include "fixture.h"
#include "util.h"

Policy *fixture_policy(const char *file, const char *match_name, const char *settings) {
        _cleanup_(strv_freep) char **errors = calloc(1, sizeof(char *));
        _cleanup_(freep) char *text = strdup_printf("[rule r]\nmatch.name = %s\n%s\n", match_name,
                                                    settings);
        Policy *p = policy_new();

        assert_non_null(errors);
        assert_non_null(text);
        assert_non_null(p);
        assert_int_equal(conf_parse_text(text, strlen(text), file, p, &errors), 0);
        if (!strv_isempty(errors))
                fail_msg("%s", errors[0]);
        return p;
}

const Action *fixture_action(const Plan *plan, const char *key) {
        for (size_t i = 0; i < plan->n_actions; i++)
                if (streq(plan->actions[i].key, key))
                        return &plan->actions[i];
        fail_msg("no action for %s", key);
        return NULL;
}

void fixture_setup(Fixture *ret, const FakeDiskSpec *spec, const char *file, const char *match_name,
                   const char *settings) {
        *ret = (Fixture) { .k = fake_kernel_new() };
        assert_non_null(ret->k);
        assert_int_equal(fake_disk_add(ret->k, spec), 0);
        assert_int_equal(sysfs_new(ret->k->root, &ret->s), 0);
        fake_kernel_attach(ret->k, ret->s);
        ret->p = fixture_policy(file, match_name, settings);
}

void fixture_teardown(Fixture *f) {
        policy_free(f->p);
        writers_free(f->w);
        sysfs_free(f->s);
        fake_kernel_free(f->k);
        *f = (Fixture) {};
}

UdevProps *fixture_props(char * const *l) {
        UdevProps *p = NULL;

        if (!l)
                return NULL;
        assert_int_equal(udev_props_from_strv(l, &p), 0);
        return p;
}

Plan *fixture_apply(const Fixture *f, const char *disk, char * const *props, const DiskLoad *load,
                    DiskRunFlags flags, ReportSummary *ret) {
        _cleanup_(udev_props_freep) UdevProps *u = fixture_props(props);
        _cleanup_(disk_run_freep) DiskRun *run = NULL;
        Plan *plan;

        assert_int_equal(disk_run(f->s, f->p, f->w, disk, u, load, flags, &run), 0);
        assert_non_null(run->plan);
        if (ret)
                *ret = run->summary;
        plan = TAKE_PTR(run->plan);
        for (size_t i = 0; i < plan->n_actions; i++)
                plan->actions[i].setting = NULL;
        /* first_failure points into the plan, which the caller keeps. */
        return plan;
}

void fixture_plan(FixturePlan *ret, const char *file, const Disk *d, const char *settings) {
        *ret = (FixturePlan) { .policy = fixture_policy(file, "*", settings) };
        assert_int_equal(policy_resolve(ret->policy, d, &ret->resolved), 0);
        assert_int_equal(plan_build(d, ret->resolved, &ret->plan), 0);
}

void fixture_plan_again(FixturePlan *x, const Disk *d) {
        x->plan = plan_free(x->plan);
        assert_int_equal(plan_build(d, x->resolved, &x->plan), 0);
}

void fixture_plan_done(FixturePlan *x) {
        plan_free(x->plan);
        resolved_free(x->resolved);
        policy_free(x->policy);
        *x = (FixturePlan) {};
}
