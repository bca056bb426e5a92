/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libudev.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "apply.h"
#include "disk.h"
#include "ioschedd-worker.h"
#include "plan.h"
#include "policy.h"

#define IOSCHEDD_WORKERS_DEFAULT 32
#define IOSCHEDD_MONITOR_BUFFER (128 * 1024 * 1024)

typedef struct Manager Manager;
typedef struct DiskObject DiskObject;
typedef struct Job Job;
typedef struct Request Request;

/* A loaded configuration. Resolved settings point into its rules, so a disk keeps a
 * reference to the one its Resolved came from. Only the event loop's thread touches the
 * count; a job holds a reference while a worker uses it. */
typedef struct Config {
        unsigned n_ref;
        Policy *policy;
        char **errors;          /* of the files that were left out */
} Config;

Config *config_ref(Config *c);
Config *config_unref(Config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_unref);

typedef enum JobKind {
        JOB_APPLY,              /* read, resolve, write what differs */
        JOB_PLAN,               /* read, resolve, plan: writes nothing */
        _JOB_KIND_MAX,
} JobKind;

typedef enum RequestKind {
        REQUEST_APPLY,          /* Apply, ApplyAll, SetPolicy, ResetPolicy: reply when done */
        REQUEST_PLAN,           /* Plan: reply with the plan */
} RequestKind;

/* A D-Bus method call waiting for the jobs it started. */
struct Request {
        unsigned n_ref;
        RequestKind kind;
        sd_bus_message *message;
        unsigned n_pending;
        unsigned n_failed;      /* writes that failed */
        unsigned n_gone;        /* disks that went away */
        char *first_failure;
        bool one_disk;          /* a disk that went away is an error */
        char *note;             /* prefix of an error reply (SetPolicy: where it was written) */
        void (*on_done)(void *userdata);        /* for requests without a message */
        void *userdata;
};

struct Job {
        WorkItem item;
        JobKind kind;
        DiskObject *disk;       /* the loop's object; the worker uses only the fields below */
        char *name;
        char **udev_props;      /* "KEY=value" from the uevent; NULL: read udev's database */
        Config *config;
        Request **requests;     /* answered when the job is done */
        size_t n_requests;

        /* Results, written by the worker. */
        int error;
        Disk *disk_read;
        Resolved *resolved;
        Plan *report;           /* JOB_APPLY: outcomes; JOB_PLAN: the plan */
        ApplyStats stats;
        uint64_t usec_start, usec_end;
};

struct DiskObject {
        Manager *manager;
        char *name;
        char *path;             /* D-Bus object path */
        bool gone;              /* removed from the manager; freed when its job returns */

        /* As last read by a worker; NULL before the first read. */
        Disk *disk;
        Config *config;
        Resolved *resolved;
        Plan *last_report;
        uint64_t last_applied;  /* CLOCK_REALTIME usec of the last apply, 0 never */
        char *last_error;

        Job *running;
        /* Coalesced work for when the running job is done. */
        bool want[_JOB_KIND_MAX];
        char **want_props;
        Request **want_requests[_JOB_KIND_MAX];
        size_t n_want_requests[_JOB_KIND_MAX];
};

struct Manager {
        sd_event *event;
        sd_bus *bus;
        struct udev *udev;
        struct udev_monitor *monitor;
        sd_event_source *monitor_source, *worker_source, *verify_source;
        WorkerPool *pool;

        const char *sysfs_root;         /* "/" */
        const char *config_root;        /* "/" */
        const char *config_file;        /* --config: this file alone */
        const char *runtime_dir;        /* the engine marker's directory (engine.h) */
        bool marker_written;
        unsigned n_workers;
        uint64_t verify_usec;           /* 0: off */
        bool monitor_enabled;
        int monitor_buffer;             /* receive buffer of the udev monitor, bytes */

        Config *config;
        char **config_errors;           /* of the last load, whether or not it took effect */

        DiskObject **disks;
        size_t n_disks;

        uint64_t writes_done, writes_skipped, write_errors;
        bool counters_changed;

        void *polkit_registry;
        bool initial_pass_done;
        unsigned initial_pending;
        void (*on_initial_pass_done)(Manager *m);
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
 * @request: waits for the apply of @disk, may be NULL
 * @disk: the disk @request waits for; NULL for every disk
 *
 * A configuration with errors is rejected whole: the previous one stays in force and the
 * errors are published in ConfigErrors.
 *
 * Return: 0, -EBADMSG when the configuration has errors, -ENOMEM.
 */
int manager_reload(Manager *m, Request *request, DiskObject *disk);

/* True when SetPolicy cannot persist anything: the daemon runs on --config FILE alone. */
bool manager_config_is_single_file(const Manager *m);

DiskObject *manager_find_disk(Manager *m, const char *name);
DiskObject *manager_find_disk_by_path(Manager *m, const char *path);

/**
 * disk_object_queue() - ask for work on a disk; coalesced with what is already asked
 * @d: the disk
 * @kind: apply or plan
 * @props: the uevent's properties (copied), or NULL
 * @request: answered when the work is done, may be NULL
 *
 * Return: 0 or -ENOMEM.
 */
int disk_object_queue(DiskObject *d, JobKind kind, char * const *props, Request *request);

/* Queue an apply of every disk; each job also answers @request if given. */
int manager_queue_all(Manager *m, Request *request);

Request *request_new(RequestKind kind, sd_bus_message *message);
Request *request_ref(Request *r);
Request *request_unref(Request *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Request *, request_unref);
/* Send the reply once nothing is pending; call after queueing the request's jobs. */
void request_maybe_reply(Request *r);

/* Path of the drop-in directory (persistent or runtime) under the config root. */
char *manager_dropin_dir(const Manager *m, bool runtime);
