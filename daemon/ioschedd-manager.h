/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libudev.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "apply.h"
#include "disk.h"
#include "hashmap.h"
#include "ioschedd-worker.h"
#include "plan.h"
#include "policy.h"

#define IOSCHEDD_WORKERS_DEFAULT 32
/* A worker idle this long ends: at rest the daemon keeps no 32 stacks (~20 KiB each). */
#define IOSCHEDD_WORKER_IDLE_USEC (10 * 1000000ULL)
#define IOSCHEDD_MONITOR_BUFFER (128 * 1024 * 1024)
/* A disk read only in part (a uevent's job) is read in full once no job has run for this long. */
#define IOSCHEDD_REFRESH_USEC (1 * 1000000ULL)
#define IOSCHEDD_REFRESH_MAX_USEC (10 * 1000000ULL)
/* With this many jobs queued or running, uevents come as a storm: even a new disk's first job
 * reads only what the policy needs (its other fields are published by the refresh). */
#define IOSCHEDD_STORM_JOBS 16
/* This many of the kernel's uevents, each within IOSCHEDD_BURST_QUIET_USEC of the one before,
 * are a burst (disks being created): a disk's events after its kernel "add" wait for its end,
 * at most IOSCHEDD_BURST_MAX_USEC (disk_object_hold()). */
#define IOSCHEDD_BURST_EVENTS 16
#define IOSCHEDD_BURST_QUIET_USEC (50 * 1000ULL)
#define IOSCHEDD_BURST_MAX_USEC (5 * 1000000ULL)

typedef struct Manager Manager;
typedef struct DiskObject DiskObject;
typedef struct Job Job;

/* A loaded configuration. Resolved settings point into its rules, so a disk keeps a
 * reference to the one its Resolved came from. Only the event loop's thread touches the
 * count; a job holds a reference while a worker uses it. */
typedef struct Config {
        unsigned n_ref;
        Policy *policy;
        char **errors;          /* of the files that were left out */
        DiskLoad load;          /* what of a disk the policy looks at (policy_disk_load()) */
} Config;

Config *config_ref(Config *c);
Config *config_unref(Config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_unref);

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
 * manager only reports to it: a result per job, then done.
 */
struct Completion {
        const CompletionOps *ops;
        unsigned n_ref;
        unsigned n_pending;     /* jobs queued for it and not done */
        bool armed;             /* every job is queued: done may come */
};

void completion_init(Completion *c, const CompletionOps *ops);
Completion *completion_ref(Completion *c);
Completion *completion_unref(Completion *c);
/* Every job is queued: done now if none is pending, else when the last one is. */
void completion_arm(Completion *c);

struct Job {
        WorkItem item;
        JobKind kind;
        DiskObject *disk;       /* the loop's object; the worker uses only the fields below */
        char *name;
        char **udev_props;      /* "KEY=value" from the uevent; NULL: read udev's database */
        Config *config;
        bool partial;           /* read only config->load; the rest comes from the last reading */
        Completion **waiting;   /* told when the job is done */
        size_t n_waiting;

        /* Results, written by the worker. */
        int error;
        Disk *disk_read;
        Resolved *resolved;
        Plan *report;           /* JOB_APPLY: outcomes; JOB_PLAN: the plan */
        ApplyStats stats;
        uint64_t usec_start, usec_end;
};

/* A disk object's own fields, after the Disk's in its dirty mask. */
enum {
        DISK_OBJECT_DESIRED = _DISK_FIELD_MAX,
        DISK_OBJECT_RULES,
        DISK_OBJECT_LAST_APPLIED,
        DISK_OBJECT_LAST_CHANGES,
        DISK_OBJECT_LAST_ERROR,
        _DISK_OBJECT_FIELD_MAX,
};
_Static_assert(_DISK_OBJECT_FIELD_MAX <= 64, "the dirty mask is a uint64_t");

struct DiskObject {
        Manager *manager;
        char *name;
        size_t index;           /* in Manager.disks */
        bool gone;              /* removed from the manager; freed when its job returns */
        bool seen;              /* by a rescan */

        /* As last read by a worker; NULL before the first read. */
        Disk *disk;
        Config *config;
        Resolved *resolved;
        char **last_changes;    /* of the last apply: key, old value, new value, key, ... */
        uint64_t last_applied;  /* CLOCK_REALTIME usec of the last apply, 0 never */
        char *last_error;
        uint64_t dirty;         /* DISK_FIELD_BIT()s and DISK_OBJECT_*: changed, not yet emitted */

        Job *running;
        /* Coalesced work for when the running job is done. */
        bool want[_JOB_KIND_MAX];
        bool want_full;         /* queued by something else than a uevent: read everything */
        bool partial;           /* the last job read only what the policy needs: refresh later */
        bool held;              /* udev's event came during a kernel burst: checked at its end */
        char **want_props;
        Completion **want_waiting[_JOB_KIND_MAX];
        size_t n_want_waiting[_JOB_KIND_MAX];
};

struct Manager {
        sd_event *event;
        sd_bus *bus;
        struct udev *udev;
        struct udev_monitor *monitor;
        struct udev_monitor *kernel_monitor;    /* the kernel's uevents, before udev's rules */
        sd_event_source *monitor_source, *kernel_monitor_source, *worker_source, *verify_source;
        sd_event_source *refresh_source;        /* reads disks read in part, once all is quiet */
        uint64_t refresh_since;                 /* CLOCK_MONOTONIC usec: the oldest such disk */
        size_t n_running;                       /* jobs on the workers */
        sd_event_source *burst_source;          /* ends a burst of kernel uevents: the held disks */
        uint64_t burst_last, held_since;        /* CLOCK_MONOTONIC usec */
        unsigned burst_events;                  /* kernel uevents in the current burst */
        size_t n_held;
        WorkerPool *pool;

        const char *sysfs_root;         /* "/" */
        const char *config_root;        /* "/" */
        const char *config_file;        /* --config: this file alone */
        const char *runtime_dir;        /* the engine marker's directory (engine.h) */
        bool marker_written;
        unsigned n_workers;
        uint64_t verify_usec;           /* 0: off */
        bool monitor_enabled;
        bool kernel_events;             /* act on the kernel's uevents too (when the policy allows) */
        int monitor_buffer;             /* receive buffer of the udev monitor, bytes */

        Config *config;
        char **config_errors;           /* of the last load, whether or not it took effect */

        DiskObject **disks;             /* in no order */
        size_t n_disks, n_disks_allocated;
        Hashmap *disks_by_name;

        uint64_t writes_done, writes_skipped, write_errors;
        bool counters_changed;

        void *polkit_registry;
        /* Signals go out: set when the bus name is ours. Before, nobody who listens to
         * org.iosched1 could receive them, and the first pass over thousands of disks would
         * queue an InterfacesAdded for each (megabytes, and a third of the pass). A client
         * that sees the name reads the objects (GetManagedObjects). */
        bool announcing;
        Completion initial;             /* the first pass */
        void (*on_initial_pass_done)(Manager *m);
        /* A disk came or went, or the write counters moved: what the program's STATUS= says
         * (a oneshot defer source of its own, so a storm sends one notification per loop
         * iteration, not one per disk). */
        void (*on_status_changed)(Manager *m);
        sd_event_source *status_source;
};

int manager_new(Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/**
 * manager_start() - load the configuration, start the udev monitor and the worker pool,
 * enumerate the disks and queue the initial pass
 * Return: 0 or a negative errno (logged).
 */
int manager_start(Manager *m);

/**
 * manager_load_config() - read the configuration
 * @m: the manager
 * @ret: the configuration, with ret->errors listing what was left out
 * Return: 0 or -ENOMEM.
 */
int manager_load_config(Manager *m, Config **ret);

/**
 * manager_reload() - read the configuration again and apply it to every disk
 * @m: the manager
 * @c: waits for the apply of @disk, may be NULL
 * @disk: the disk @c waits for; NULL for every disk
 *
 * A configuration with errors is rejected whole: the previous one stays in force and the
 * errors are published in ConfigErrors.
 *
 * Return: 0, -EBADMSG when the configuration has errors, -ENOMEM.
 */
int manager_reload(Manager *m, Completion *c, DiskObject *disk);

/* True when SetPolicy cannot persist anything: the daemon runs on --config FILE alone. */
bool manager_config_is_single_file(const Manager *m);

DiskObject *manager_find_disk(Manager *m, const char *name);

/**
 * disk_object_queue() - ask for work on a disk; coalesced with what is already asked
 * @d: the disk
 * @kind: apply or plan
 * @props: the uevent's properties (copied), or NULL
 * @c: told when the work is done, may be NULL
 *
 * Return: 0, -ENODEV for a disk that is gone, -ENOMEM.
 */
int disk_object_queue(DiskObject *d, JobKind kind, char * const *props, Completion *c);

/* Queue an apply of every disk; @c, if given, waits for each. */
int manager_queue_all(Manager *m, Completion *c);
