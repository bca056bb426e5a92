/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "apply.h"
#include "disk.h"
#include "plan.h"

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
