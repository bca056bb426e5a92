/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "apply.h"
#include "disk.h"
#include "plan.h"

/* What reports add up to, for a reply, a counter, the helper's last line or an error text: the
 * actions by outcome. */
typedef struct ReportSummary {
        unsigned would_write, skipped, unsupported, refused, deferred, written, failed, gone;
        const Action *first_failure;    /* NULL when none failed */
} ReportSummary;

/**
 * report_summarize() - count a report's outcomes
 * @report: the actions with their outcomes; NULL counts as empty
 * @ret: the summary
 */
void report_summarize(const Plan *report, ReportSummary *ret);

/* Add @one to @total (first_failure: the first one's). */
void report_summary_add(ReportSummary *total, const ReportSummary *one);

/* Whether systemd's 90-iocost.rules writes io.cost.* for @d too while @report sets iocost keys. */
bool report_iocost_two_writers(const Disk *d, const Plan *report);

/* What a report says besides its actions, said once in a journal. */
typedef enum ReportNote {
        REPORT_NOTE_TWO_WRITERS,        /* systemd's 90-iocost.rules writes io.cost.* for the disk too */
        REPORT_NOTE_IOCOST_NA,          /* iocost keys are set, and there is no cgroup v2 io controller */
        _REPORT_NOTE_MAX,
} ReportNote;

#define REPORT_NOTE_BIT(n) (1u << (n))

/**
 * report_notes() - the notes that go with a disk's report
 * @d: the disk, may be NULL
 * @report: its actions with their outcomes
 *
 * Return: a mask of REPORT_NOTE_BIT()s.
 */
unsigned report_notes(const Disk *d, const Plan *report);

/* The text of a note, for people: one sentence without the disk's name. */
const char *report_note_text(ReportNote n);

/**
 * report_log_notes() - log the notes of a disk, each at most once in a process's life
 * @name: the disk
 * @notes: report_notes()'s mask
 * @told: the notes said already; updated
 * @na_level: the level of REPORT_NOTE_IOCOST_NA (the helper run by udev says it at debug)
 *
 * Two writers is a warning: the admin has to turn one off.
 */
void report_log_notes(const char *name, unsigned notes, unsigned *told, int na_level);

/**
 * report_log() - one journal line per change and per failure, with the old and the new value
 * and the rule that asked for it: what an administrator greps for
 * @name: the disk
 * @report: the actions with their outcomes
 */
void report_log(const char *name, const Plan *report);

/**
 * report_print_text() - print a disk's report as aligned lines
 * @f: where to
 * @d: the disk (identity shown in the header), may be NULL
 * @report: the actions with their outcomes
 * @verbose: also print the provenance of each value
 */
void report_print_text(FILE *f, const Disk *d, const Plan *report, bool verbose);

/* "  other writers: KEYS: DESCRIPTION" lines, one per writer of the disk's keys (none: none). */
void report_print_writers(FILE *f, const Disk *d);

/* One JSON object for a disk: {"disk":..., "transport":..., "other_writers":[...],
 * "actions":[...]} */
void report_print_json(FILE *f, const Disk *d, const Plan *report, const char *note);

