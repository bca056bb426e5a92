/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "hashmap.h"
#include "ioschedd-config.h"
#include "ioschedd-disk.h"
#include "ioschedd-hold.h"
#include "ioschedd-job.h"
#include "ioschedd-metrics.h"
#include "ioschedd-polkit.h"
#include "ioschedd-uevent.h"
#include "ioschedd-worker.h"
#include "sysfs.h"

#define IOSCHEDD_WORKERS_DEFAULT 32
#define IOSCHEDD_MONITOR_BUFFER (128 * 1024 * 1024)
/* A disk read only in part (a uevent's job) is read in full once no job has run for this long. */
#define IOSCHEDD_REFRESH_USEC (1 * 1000000ULL)
#define IOSCHEDD_REFRESH_MAX_USEC (10 * 1000000ULL)
/* How long a Get of Current waits for the read of its keys that no rule sets (ioschedd-disk-bus.c). */
#define IOSCHEDD_CURRENT_WAIT_USEC (1 * 1000000ULL)
/* With this many jobs queued or running, uevents come as a storm: even a new disk's first job
 * reads only what the policy needs (its other fields are published by the refresh). */
#define IOSCHEDD_STORM_JOBS 16

/*
 * The daemon: its event loop, signals, watchdog and notifications to the service manager, the
 * bus connection (ioschedd-manager-bus.c serves it), the configuration in force, the registry
 * of disk objects, the worker pool that runs their jobs, the refresh and verify timers and the
 * write counters.
 */
struct Manager {
        sd_event *event;
        sd_bus *bus;
        sd_event_source *sighup_source, *worker_source, *verify_source, *status_source;
        sd_event_source *refresh_source;        /* reads disks read in part, once all is quiet */
        uint64_t refresh_since;                 /* CLOCK_MONOTONIC usec: the oldest such disk */
        size_t n_running;                       /* jobs submitted and not finished */
        WorkerPool *pool;
        Sysfs *host;                    /* the host facts the pool's threads share */
        UeventMonitor *uevent;

        /* Options: set between manager_new() and manager_start(). */
        const char *sysfs_root;         /* "/" */
        const char *config_root;        /* "/" */
        const char *config_file;        /* --config: this file alone */
        const char *runtime_dir;        /* the engine marker's directory (engine.h); NULL: none */
        unsigned n_workers;
        uint64_t verify_usec;           /* 0: off */
        bool monitor_enabled;
        bool kernel_events;             /* act on the kernel's uevents too (when the policy allows) */
        int monitor_buffer;             /* receive buffer of the uevent monitors, bytes */
        const char *metrics_path;       /* --metrics-file; NULL: none */

        bool marker_written;
        Config *config;
        char **config_errors;           /* of the last load, whether or not it took effect */

        DiskObject **disks;             /* in no order */
        size_t n_disks, n_disks_allocated;
        Hashmap *disks_by_name;

        uint64_t writes_done, writes_skipped, write_errors;
        uint64_t drift_corrected;       /* of writes_done: values another writer had changed */
        bool counters_changed;

        HoldEntry **holds;              /* every hold in force, the oldest first (ioschedd-hold.c) */
        size_t n_holds;
        uint32_t last_hold_id;

        PolkitRegistry *polkit_registry;        /* the method calls waiting for polkit */
        MetricsFile *metrics_file;              /* NULL: no --metrics-file */
        /* Signals go out: set by ioschedd-manager-bus.c when the bus name is ours. Before,
         * nobody who listens to org.iosched1 could receive them, and the first pass over
         * thousands of disks would queue an InterfacesAdded for each (megabytes, and a third
         * of the pass). A client that sees the name reads the objects (GetManagedObjects). */
        bool announcing;
        bool ready;                     /* READY=1 was sent: STATUS= and RELOADING=1 may follow */
        Completion initial;             /* the first pass */

        /* NULL: jobs go to the worker pool, time is the loop's. The unit tests set their own:
         * a pool that runs jobs when the test says so, a clock that moves when it says so. */
        int (*submit)(Manager *m, Job *j);
        uint64_t (*now)(Manager *m, clockid_t clock);
};

/**
 * manager_new() - a manager with its event loop: SIGTERM and SIGINT end it, SIGHUP reloads,
 * the service manager's watchdog is fed; no bus yet (manager_connect_bus())
 * Return: 0 or a negative errno (logged).
 */
int manager_new(Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/**
 * manager_start() - load the configuration, start the worker pool and the uevent monitors,
 * list the disks and queue the first pass; the bus name is requested when it is done
 * Return: 0 or a negative errno (logged).
 */
int manager_start(Manager *m);

/**
 * manager_reload() - read the configuration again and apply it to every disk
 * @m: the manager
 * @c: waits for the apply of @disk, may be NULL
 * @disk: the disk @c waits for; NULL for every disk
 *
 * A configuration with errors is rejected whole: the previous one stays in force and the
 * errors are published in ConfigErrors. The service manager is told (RELOADING=1, READY=1).
 *
 * Return: 0, -EBADMSG when the configuration has errors, -ENOMEM.
 */
int manager_reload(Manager *m, Completion *c, DiskObject *disk);

/* True when SetPolicy cannot persist anything: the daemon runs on --config FILE alone. */
bool manager_config_is_single_file(const Manager *m);

DiskObject *manager_find_disk(Manager *m, const char *name);
/* Disks being read or written, or waiting to be (DisksPending). */
size_t manager_disks_pending(const Manager *m);
/* A new disk object in the registry, not read yet. Return: 0, -EINVAL (not a disk name), -ENOMEM. */
int manager_add_disk(Manager *m, const char *name, DiskObject **ret);
/* Out of the registry (and off the bus); freed now, or when its running job returns. */
void manager_remove_disk(Manager *m, DiskObject *d);

/* Queue an apply of every disk; @c, if given, waits for each. Return: 0 or -ENOMEM. */
int manager_queue_all(Manager *m, Completion *c);

/**
 * manager_add_nvme_paths() - add the paths of an NVMe multipath head that are not known yet
 * @m: the manager
 * @head: a disk name; nothing is done unless it is a head's (nvme<S>n<N>)
 *
 * A path is a hidden disk, of which the kernel announces nothing: an event of its head is the
 * sign that it may have come (at start, the rescan finds those there). Each new one is applied.
 * Return: 0 or -ENOMEM.
 */
int manager_add_nvme_paths(Manager *m, const char *head);

/**
 * manager_rescan() - list the disks again: new ones are added, vanished ones removed, all are
 * applied (at start, and after the monitor lost events)
 * @m: the manager
 * @c: waits for every disk, may be NULL
 *
 * Return: 0 or a negative errno (logged).
 */
int manager_rescan(Manager *m, Completion *c);

/* A disk object's job to run (m->submit or the pool); a job that cannot run finishes at once
 * with the error. */
void manager_submit_job(Manager *m, Job *j);
/* A job came back from its worker: its disk object takes the results. */
void manager_job_done(Manager *m, Job *j);

/* Add a job's writes to the counters (WritesDone, ...; STATUS=); @drift of them put back what
 * another writer changed (DriftCorrected). */
void manager_count_writes(Manager *m, const ReportSummary *stats, unsigned drift);

/* The time on @clock: the loop's (the start of this iteration), or the tests'. */
uint64_t manager_now(Manager *m, clockid_t clock);

/* A oneshot CLOCK_MONOTONIC timer at @usec, made on first use. Return: 0 or a negative errno. */
int manager_arm_timer(Manager *m, sd_event_source **s, uint64_t usec, sd_event_time_handler_t handler,
                      void *userdata, const char *description);

/* A disk was read in part: read such disks in full once all is quiet (manager_refresh()). */
void manager_arm_refresh(Manager *m);
/* What the refresh timer does: a plan (a full read) of each disk read in part, or wait for the
 * jobs to end, at most IOSCHEDD_REFRESH_MAX_USEC. */
void manager_refresh(Manager *m);

/* The bus name is ours: the service manager hears READY=1 and STATUS=. */
void manager_notify_ready(Manager *m);
