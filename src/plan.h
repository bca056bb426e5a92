/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>

#include "disk.h"
#include "policy.h"

typedef enum ActionType {
        ACTION_WRITE,           /* the value differs: one write */
        ACTION_SKIP,            /* already right: no write */
        ACTION_UNSUPPORTED,     /* the kernel or the device cannot do it */
        ACTION_REFUSED,         /* a safety guard says no */
        ACTION_DEFERRED,        /* it differs, and another writer owns it (owner.defer): no write */
        _ACTION_MAX,
} ActionType;

const char *action_type_to_string(ActionType t);

/* What became of an action: the one vocabulary of the reports, the journal and the counters.
 * The planner sets the first five; apply turns a would-write into one of the last three. */
typedef enum Outcome {
        OUTCOME_WOULD_WRITE,    /* a write decided and not made (yet): a plan, a dry run */
        OUTCOME_SKIPPED,        /* already right */
        OUTCOME_UNSUPPORTED,
        OUTCOME_REFUSED,
        OUTCOME_DEFERRED,       /* left to another writer (owner.defer) */
        OUTCOME_WRITTEN,        /* written and read back as desired */
        OUTCOME_FAILED,         /* the write failed, or the value did not stick */
        OUTCOME_GONE,           /* the disk went away */
        _OUTCOME_MAX,
} Outcome;

/* "would-write", "skipped", ..., "gone": for programs (JSON). */
const char *outcome_to_string(Outcome o);

typedef struct Action {
        const ResolvedSetting *setting; /* what it decides; valid while its Resolved lives */
        const AttrInfo *attr;
        char *tunable;
        char *key;              /* "scheduler", "iosched.read_expire", ... */
        ActionType type;
        char *current;          /* as read, for people; NULL when unknown */
        char *desired;          /* as configured */
        char *write;            /* the string to write (ACTION_WRITE) */
        char **fallbacks;       /* scheduler: the next offered candidates, tried on EINVAL */
        char *reason;           /* why, for people */
        char *file;             /* provenance of the desired value (a copy: a hwdb solution's rule
                                 * lives only as long as its Resolved) */
        unsigned line;
        char *rule;
        bool after_switch;      /* decided before a scheduler switch; decided again after it */
        char *others;           /* where else the key is written (other_writers_of_key()), or NULL */
        bool changed_back;      /* the disk had the value before, until someone else changed it
                                 * (the daemon knows: it read the disk last time) */

        Outcome outcome;
        int error;              /* negative errno of a failed write */
        char *result;           /* the value read back after the write */
} Action;

typedef struct Plan {
        char *disk;
        Action *actions;
        size_t n_actions;
} Plan;

Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);
void action_done(Action *a);

/* The outcome of @a for people: "changed", "already right", "would-write", "may-write" (decided
 * again after a scheduler switch), "unsupported", ... */
const char *action_outcome_label(const Action *a);

/**
 * action_note_others() - where else an action's key is written: a->others
 * @o: the disk's other writers, NULL for none
 * Return: 0 or -ENOMEM.
 */
int action_note_others(Action *a, const struct OtherWriters *o);

/**
 * plan_build() - compare the desired settings of a disk with its current ones
 * @d: the disk as read
 * @r: the resolved settings
 * @ret: one action per resolved setting, in the order they must be written
 *
 * Pure: no I/O. Knows the kernel's semantics: the bracketed scheduler, the "deadline" alias,
 * what wbt_lat_usec "0", "-1" and a failed read mean, which tunables belong to which scheduler,
 * what a scheduler switch resets, and the guards (partitions, bio-based queues and the keys
 * only blk-mq has, host-managed zoned disks, max_hw_sectors_kb, max_sectors_kb of a multipath
 * map and its paths).
 *
 * Return: 0 or -ENOMEM.
 */
int plan_build(const Disk *d, const Resolved *r, Plan **ret);

/**
 * action_set_reasonv() - replace an action's reason (for people) with a formatted one
 * Return: 0 or -ENOMEM (then the reason is NULL).
 */
int action_set_reasonv(Action *a, const char *fmt, va_list ap) _printf_(2, 0);

/**
 * plan_decide() - decide one setting against a disk; the core of plan_build()
 * @d: the disk as read
 * @r: all the resolved settings (iocost keys are decided together: ctrl, min <= max)
 * @rs: the setting, one of @r's
 * @switch_to: the scheduler a pending switch will set, or NULL
 *
 * An iocost key that differs gets its own "token=value" in ->write; apply_plan() joins the
 * writes of one file into one line (iocost_write_line()).
 *
 * Return: 0 or -ENOMEM.
 */
int plan_decide(const Disk *d, const Resolved *r, const ResolvedSetting *rs, const char *switch_to,
                Action *ret);

/**
 * plan_decide_rest() - decide the actions of a plan from @from on again, on what @d reads now
 * @d: the disk, read again after a write (a scheduler switch resets what follows it; a queue
 *     limit raises read_ahead_kb; iocost's enable turns the default wbt off)
 * @r: the resolved settings the plan was built from
 * @p: the plan; its actions from @from on are replaced
 *
 * Return: 0 or -ENOMEM (then @p is as it was).
 */
int plan_decide_rest(const Disk *d, const Resolved *r, Plan *p, size_t from);

/**
 * iocost_write_line() - the one line to write to an io.cost.* file
 * @devnum: the disk's "MAJ:MIN"
 * @actions: actions in plan order
 * @n: how many
 * @file: ATTR_FILE_IOCOST_QOS or ATTR_FILE_IOCOST_MODEL
 * @ret: "MAJ:MIN tok=val tok=val" of every ACTION_WRITE of @file in order; NULL when nothing of
 *       @file differs
 *
 * Return: 0 or -ENOMEM.
 */
int iocost_write_line(const char *devnum, const Action *actions, size_t n, AttrFile file, char **ret);
