/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ioschedd-job.h"

/*
 * A disk object: one whole disk the daemon knows, its last reading (what the bus shows), and
 * the work asked for it. At most one job runs per disk; what is asked meanwhile is coalesced
 * into one more pass of each kind, and the callers that wait for it (disk_object_want()).
 * Its bus half is ioschedd-disk-bus.c.
 */

typedef struct Manager Manager;

/* A disk object's own fields, after the Disk's in its dirty mask. */
enum {
        DISK_OBJECT_DESIRED = _DISK_FIELD_MAX,
        DISK_OBJECT_MISMATCHED,
        DISK_OBJECT_RULES,
        DISK_OBJECT_LAST_APPLIED,
        DISK_OBJECT_LAST_CHANGES,
        DISK_OBJECT_LAST_ERROR,
        DISK_OBJECT_HOLDS,
        _DISK_OBJECT_FIELD_MAX,
};
_Static_assert(_DISK_OBJECT_FIELD_MAX <= 64, "the dirty mask is a uint64_t");

struct DiskObject {
        Manager *manager;
        char *name;
        size_t index;           /* in Manager.disks */

        /* As last read by a worker; reading.disk is NULL before the first read. */
        DiskReading reading;
        char **last_changes;    /* of the last apply: key, old value, new value, key, ... */
        /* The keys of reading.resolved whose value the last job found, or left, other than
         * desired: a write was due or failed, or the kernel cannot or may not take it. */
        char **mismatched;
        char **apply_unmet;     /* the keys the last apply left so: not counted as drift after */
        uint64_t last_applied;  /* CLOCK_REALTIME usec of the last apply, 0 never */
        char *last_error;
        Hold **holds;           /* in force, the oldest first (ioschedd-hold.c); referenced */
        size_t n_holds;
        uint64_t dirty;         /* DISK_FIELD_BIT()s and DISK_OBJECT_*: changed, not yet emitted */

        Job *running;
        /* The flags together (a bool between pointers costs 8 bytes of each disk). */
        bool gone;              /* removed from the manager; freed when its job returns */
        bool seen;              /* by a rescan */
        /* Coalesced work for when the running job is done. */
        bool want[_JOB_KIND_MAX];
        bool want_full;         /* queued by something else than a uevent: read everything */
        bool partial;           /* the last job read only what the policy needs: refresh later */
        bool held;              /* an event came during a kernel burst: checked at its end */
        bool held_add;          /* its kernel "add" came during a burst: read once the kernel is quiet */
        bool current_wanted;    /* a client asked for Current: full reads read its keys from now on */
        bool current_read;      /* reading.disk has Current's keys (a full read with them, or kept) */
        UdevProps *want_props;
        CompletionList want_waiting[_JOB_KIND_MAX];
};

/**
 * disk_object_new() - a disk object for @name, not read yet
 * Return: 0, -EINVAL for a name that is not a disk's, -ENOMEM.
 */
int disk_object_new(Manager *m, const char *name, DiskObject **ret);
/* Frees a disk object that runs nothing (the manager took it out of its registry). */
DiskObject *disk_object_free(DiskObject *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(DiskObject *, disk_object_free);

/* On the bus: read at least once. Before, neither the bus nor ListDisks shows it. */
static inline bool disk_object_is_published(const DiskObject *d) {
        return d->reading.disk;
}

/* Being read or written, or waiting to be (DisksPending). */
static inline bool disk_object_is_pending(const DiskObject *d) {
        return d->running || d->want[JOB_APPLY] || d->want[JOB_PLAN];
}

/**
 * disk_object_want() - ask for work on a disk, as a uevent does: a disk read before needs only
 * what its policy looks at (in a storm, a new disk too); coalesced with what is asked already
 * @d: the disk
 * @kind: apply or plan
 * @props: udev's properties of the event (taken: *@props is NULL after), or NULL
 * @c: told when the work is done, may be NULL
 *
 * Return: 0, -ENODEV for a disk that is gone, -ENOMEM.
 */
int disk_object_want(DiskObject *d, JobKind kind, UdevProps **props, Completion *c);

/* The same, reading everything (a method call, a reload, the verify timer, a rescan). */
int disk_object_queue(DiskObject *d, JobKind kind, UdevProps **props, Completion *c);

/* During a burst of kernel uevents: keep @props (taken, may be NULL) for the job that checks
 * @d once the burst is over; disk_object_release() queues it. */
void disk_object_hold(DiskObject *d, UdevProps **props);
/* udev's properties of an event, taken (*@props NULL after) for the disk's next job. */
void disk_object_keep_props(DiskObject *d, UdevProps **props);
/* The burst is over: read @d in full and apply. Return: 0 or -ENOMEM. */
int disk_object_release(DiskObject *d);

/* The disk left the manager: answer what waits for work that will not run. */
void disk_object_drop_wants(DiskObject *d);

/**
 * disk_object_job_finished() - on the loop's thread: take a job's results in (the bus shows
 * them), tell who waits, start the next job; the disk leaves the manager if it went away
 * @d: the disk (j->disk)
 * @j: its running job, freed here
 */
void disk_object_job_finished(DiskObject *d, Job *j);
