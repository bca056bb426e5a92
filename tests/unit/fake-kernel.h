/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fake sysfs tree in a temporary directory, and a write hook for the Sysfs module that
 * behaves like the block layer: a scheduler write puts the name in brackets, resets the
 * tunables and nr_requests, and turns wbt off for bfq; unknown schedulers and bad numbers get
 * EINVAL. Errors can be injected: EBUSY for the next N writes, or the disk vanishing.
 */
#include "sysfs.h"

typedef struct FakeDiskSpec {
        const char *name;
        const char *devnum;             /* "7:0" */
        const char *diskseq;            /* NULL: no diskseq file (before Linux 5.15) */
        const char *schedulers;         /* offered, e.g. "none mq-deadline kyber bfq" */
        const char *scheduler;          /* current; NULL for a queue without elevator ("none" alone) */
        bool no_scheduler_file;         /* bio-based */
        bool partition;
        int rotational;
        int removable;
        const char *zoned;              /* NULL = "none" */
        unsigned queues;                /* mq/0..N-1 */
        const char *wbt;                /* NULL = the default for rotational; "EINVAL" = not set up */
        const char *model, *vendor, *serial;
        bool has_device;                /* device/ with model, vendor, serial */
} FakeDiskSpec;

typedef struct FakeKernel {
        char *root;
        char log[8192];                 /* "disk:relpath=value\n" for every write, in order */
        unsigned n_writes;
        unsigned busy;                  /* fail this many writes with EBUSY */
        int vanish_after;               /* > 0: remove the disk at that write and fail it */
        char *vanish_disk;
        const FakeDiskSpec *vanish_readd;       /* add this disk again right after it vanished */
        bool vanish_queue_only;                 /* leave the disk half deleted: no queue/ */
        bool vanish_after_success;              /* the write succeeds, then the disk goes */
        char *cgroup;                   /* the cgroup2 mount (below root) with io.cost.*, or NULL */
        unsigned iocost_writes;         /* writes to io.cost.qos and io.cost.model */
        int fail_next;                  /* < 0: the next write fails with it */
} FakeKernel;

FakeKernel *fake_kernel_new(void);
void fake_kernel_free(FakeKernel *k);
int fake_disk_add(FakeKernel *k, const FakeDiskSpec *spec);
int fake_disk_remove(FakeKernel *k, const char *name);
int fake_write(FakeKernel *k, const char *path, const char *content);   /* path below root */
char *fake_read(FakeKernel *k, const char *path);                      /* stripped, malloc'ed */
void fake_kernel_attach(FakeKernel *k, Sysfs *s);
/* Empty the log and zero the write counters: what a test checks next is what comes after. */
void fake_kernel_forget_writes(FakeKernel *k);

/*
 * A cgroup2 mount at @mountpoint ("/sys/fs/cgroup"), listed in proc/self/mountinfo, with
 * "io" among its root's controllers when @io (else the io controller is bound to v1, as on the
 * development machines). The write hook then behaves like blk-iocost.c: the first write for a
 * disk sets iocost up (both files get its line, ctrl=auto with the kernel's numbers), the
 * tokens are parsed like ioc_qos_write()/ioc_cost_model_write() (EINVAL for unknown ones and
 * for min > max, any number makes ctrl user, min and max clamped), and enable=1 turns a
 * default wbt_lat_usec off. @release, if not NULL, goes to proc/sys/kernel/osrelease.
 */
int fake_cgroup2_add(FakeKernel *k, const char *mountpoint, bool io, const char *release);
/* Set the disk's line of "io.cost.qos" or "io.cost.model" as the kernel prints it. */
int fake_iocost_set(FakeKernel *k, const char *file, const char *line);
/* The write hook fake_kernel_attach() installs, for hooks that wrap it. */
int fake_kernel_write_hook(Sysfs *s, int fd, const char *disk, const char *rel, const char *value,
                           void *userdata);
