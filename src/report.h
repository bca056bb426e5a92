/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "apply.h"
#include "disk.h"
#include "plan.h"

/* What a report adds up to, for a reply, a counter or an error text. */
typedef struct ReportSummary {
        unsigned written, failed;
        bool gone;                      /* the disk went away during the run */
        const Action *first_failure;    /* NULL when none failed */
} ReportSummary;

/**
 * report_summarize() - count a report's outcomes
 * @report: the actions with their outcomes; NULL counts as empty
 * @ret: the summary
 */
void report_summarize(const Plan *report, ReportSummary *ret);

/**
 * report_log() - one journal line per change and per failure, with the old and the new value
 * and the rule that asked for it: what an administrator greps for
 * @name: the disk
 * @report: the actions with their outcomes
 */
void report_log(const char *name, const Plan *report);

/* The outcome of a report action for people: "written", "already right", ... */
const char *report_outcome_label(const Action *a);

/**
 * report_print_text() - print a disk's report as aligned lines
 * @f: where to
 * @d: the disk (identity shown in the header), may be NULL
 * @report: the actions with their outcomes
 * @verbose: also print the provenance of each value
 */
void report_print_text(FILE *f, const Disk *d, const Plan *report, bool verbose);

/* One JSON object for a disk: {"disk":..., "transport":..., "actions":[...]} */
void report_print_json(FILE *f, const Disk *d, const Plan *report, const char *note);

/* Whether systemd's 90-iocost.rules writes io.cost.* for @d too while @report sets iocost keys. */
bool report_iocost_two_writers(const Disk *d, const Plan *report);
