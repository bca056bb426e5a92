/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "disk-run.h"
#include "disk.h"
#include "hold.h"
#include "ioschedd-config.h"
#include "ioschedd-worker.h"
#include "plan.h"
#include "policy.h"

/*
 * A job: one pass of the pipeline over one disk on a worker thread (job_run()), and who waits
 * for it. It knows the configuration and sysfs, nothing of the manager or the bus: the disk
 * object that queued it takes the results back on the loop's thread.
 */

typedef struct DiskObject DiskObject;

typedef enum JobKind {
        JOB_APPLY,              /* read, resolve, write what differs */
        JOB_PLAN,               /* read, resolve, plan: writes nothing */
        _JOB_KIND_MAX,
} JobKind;

/* What a job found, reported to whoever waits for it. */
typedef struct JobResult {
        JobKind kind;
        const char *name;       /* the disk */
        int error;              /* the disk could not be read; -ENODEV: it went away (also during an apply) */
        const Plan *report;     /* JOB_APPLY: the outcomes; JOB_PLAN: the plan; NULL on error */
        const ReportSummary *summary;   /* of report */
} JobResult;

typedef struct Completion Completion;

typedef struct CompletionOps {
        void (*job_done)(Completion *c, const JobResult *result);       /* each job; optional */
        void (*done)(Completion *c);    /* once: armed and no job pending */
        void (*free)(Completion *c);    /* the last reference is gone; optional */
} CompletionOps;

/*
 * Something that waits for jobs: a D-Bus method call (the bus layer embeds it in its own
 * request), the first pass. Its owner made it and turns the results into replies; the
 * disk objects only report to it: a result per job, then done.
 */
struct Completion {
        const CompletionOps *ops;
        unsigned n_ref;
        unsigned n_pending;     /* jobs queued for it and not done */
        bool armed;             /* every job is queued: done may come */
};

void completion_init(Completion *c, const CompletionOps *ops);
Completion *completion_unref(Completion *c);
/* Every job is queued: done now if none is pending, else when the last one is. */
void completion_arm(Completion *c);

/* A list of completions that wait for the same job. */
typedef struct CompletionList {
        Completion **items;
        size_t n;
} CompletionList;

/* Adds a reference to @c and counts one more job pending for it. Return: 0 or -ENOMEM. */
int completion_list_add(CompletionList *l, Completion *c);
/* Tells each one @result and empties the list. */
void completion_list_done(CompletionList *l, const JobResult *result);
void completion_list_free(CompletionList *l);

/* A reading of a disk and what it resolved to under a configuration and the disk's holds:
 * Resolved points into their rules, so they move together. */
typedef struct DiskReading {
        Disk *disk;
        Resolved *resolved;
        Config *config;
        Hold **holds;           /* referenced, the oldest first */
        size_t n_holds;
} DiskReading;

void disk_reading_done(DiskReading *r);

typedef struct Job {
        WorkItem item;
        JobKind kind;
        DiskObject *disk;       /* the loop's object; the worker uses only the fields below */
        char *name;
        UdevProps *udev_props;  /* from the uevent; NULL: read udev's database */
        bool partial;           /* read only config->load; the rest comes from the last reading */
        bool current;           /* not partial: read Current's keys that no rule sets too */
        CompletionList waiting; /* told when the job is done */

        /* reading.config is set when the job is made; the rest is written by the worker. */
        DiskReading reading;
        int error;
        Plan *report;           /* JOB_APPLY: outcomes; JOB_PLAN: the plan */
        ReportSummary summary;  /* of report */
        unsigned notes;         /* report_notes() */
        uint64_t usec_start, usec_end;
} Job;

/**
 * job_new() - a job for a worker
 * @kind: apply or plan
 * @disk: the disk object, for who takes the results
 * @name: the disk's kernel name
 * @config: the configuration to resolve against (referenced)
 *
 * Return: the job, NULL on out of memory.
 */
Job *job_new(JobKind kind, DiskObject *disk, const char *name, Config *config);
/* The holds the job resolves with, on top of the configuration (referenced). Return: 0, -ENOMEM. */
int job_set_holds(Job *j, Hold *const *holds, size_t n);
Job *job_free(Job *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(Job *, job_free);

/* The WorkerPoolOps of the pool that runs jobs: each thread has its own Sysfs sharing the
 * host facts of the one that worker_pool_new()'s userdata is (a probed const Sysfs *). */
extern const WorkerPoolOps job_worker_ops;
