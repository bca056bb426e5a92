/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the unit tests of the planner and of the pipeline (disk_run()) share: a policy of one rule from a
 * few lines of text, a fake kernel with one disk and such a policy, the action of a plan for
 * a key, one disk loaded, resolved and applied. Each one fails the running cmocka test on an
 * error.
 */
#include "disk-run.h"
#include "fake-kernel.h"
#include "policy.h"

/* A policy of one rule "r", "match.name = @match_name" and then @settings (a "key = value"
 * a line, from line 3 on), parsed as the file @file. */
Policy *fixture_policy(const char *file, const char *match_name, const char *settings);

/* The action of @plan for @key. */
const Action *fixture_action(const Plan *plan, const char *key);

/* A fake kernel with one disk, a Sysfs on it that writes through the fake kernel, a policy. */
typedef struct Fixture {
        FakeKernel *k;
        Sysfs *s;
        Policy *p;
        Writers *w;             /* the host's other writers: NULL, or a test's */
} Fixture;

/* The disk @spec, and the policy fixture_policy(@file, @match_name, @settings). */
void fixture_setup(Fixture *ret, const FakeDiskSpec *spec, const char *file, const char *match_name,
                   const char *settings);
void fixture_teardown(Fixture *f);

/* udev's properties from "KEY=value" strings, as the udev helper takes them from its
 * environment; NULL for NULL. */
UdevProps *fixture_props(char * const *l);

/* Run @disk through the pipeline (disk_run(): udev properties @props, @load, @flags): its plan
 * with the outcomes (each action's setting cleared: the run's Resolved is gone), and in @ret
 * (may be NULL) its summary. */
Plan *fixture_apply(const Fixture *f, const char *disk, char * const *props, const DiskLoad *load,
                    DiskRunFlags flags, ReportSummary *ret);

/* A policy, what it resolves to for one disk, and its plan for the disk. */
typedef struct FixturePlan {
        Policy *policy;
        Resolved *resolved;
        Plan *plan;
} FixturePlan;

/* fixture_policy(@file, "*", @settings), resolved and planned for @d. */
void fixture_plan(FixturePlan *ret, const char *file, const Disk *d, const char *settings);
/* The plan again, for @d read again or changed by the test. */
void fixture_plan_again(FixturePlan *x, const Disk *d);
void fixture_plan_done(FixturePlan *x);
