/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "apply.h"
#include "policy.h"
#include "report.h"
#include "sysfs-disk.h"
#include "udev-props.h"
#include "writers.h"

/*
 * One disk through the pipeline, the same in the udev helper and the daemon: load -> what the
 * disk is (a disk, a partition, gone) -> resolve the policy -> plan -> apply -> one summary of
 * the outcomes and the notes. The programs differ only in where the name comes from and where
 * the run goes (stdout, the journal, D-Bus).
 */

typedef enum DiskRunFlags {
        DISK_RUN_DRY_RUN = 1 << 0,      /* plan only: write nothing (each write "would-write") */
        DISK_RUN_LOCK = 1 << 1,         /* switch the scheduler under udev's lock (APPLY_LOCK) */
} DiskRunFlags;

typedef enum DiskRunState {
        DISK_RUN_DONE,                  /* planned, or applied: see the plan's outcomes */
        DISK_RUN_PARTITION,             /* a partition: left alone (policy is per whole disk) */
        DISK_RUN_GONE,                  /* there is no such disk (any more), or it went away during
                                         * the run (then the plan says where) */
        _DISK_RUN_STATE_MAX,
} DiskRunState;

typedef struct DiskRun {
        DiskRunState state;
        Disk *disk;             /* as read, and read again after writes; NULL when gone before */
        Resolved *resolved;     /* NULL for a partition or a disk gone before it was read */
        Plan *plan;             /* the actions with their outcomes; NULL as resolved */
        ReportSummary summary;  /* of plan */
        unsigned notes;         /* report_notes() */
} DiskRun;

/**
 * disk_event_changes_nothing() - whether udev's change event of a disk is one to leave alone
 * @name: the disk's kernel name
 * @props: the event's properties (udev's, after its rules), NULL for none
 *
 * A device-mapper device's change event that device-mapper's or multipath-tools' rules mark as
 * changing nothing (stack_event_is_no_change(): a path failing and coming back makes a burst of
 * them) causes no read and no write: said once at debug level, here.
 *
 * Return: true when the event is to be left alone.
 */
bool disk_event_changes_nothing(const char *name, const UdevProps *props);

DiskRun *disk_run_free(DiskRun *run);
DEFINE_TRIVIAL_CLEANUP_FUNC(DiskRun *, disk_run_free);

/**
 * disk_run() - bring one disk to its policy, or plan it
 * @s: the tree
 * @policy: the policy
 * @writers: the host's other writers (writers_scan()), NULL to look for none: the disk's keys
 *           they write are planned with them (owner.defer, Action.others), and the load widened
 *           for them (writers_disk_load())
 * @name: the disk's kernel name; validated
 * @udev: udev's properties of the disk from the caller's edge, or NULL to read udev's database
 * @load: what to read of the disk (policy_disk_load()), NULL for everything
 * @flags: DISK_RUN_DRY_RUN, DISK_RUN_LOCK
 * @ret: the run
 *
 * A disk that is not there, or goes away while it is read or written, is DISK_RUN_GONE; a
 * partition is DISK_RUN_PARTITION and is not resolved. Neither is an error: whether one is
 * worth telling (a name given by hand that never existed) is the caller's to say.
 *
 * Return: 0; -EINVAL for an invalid name; -ENOMEM; another negative errno when the disk cannot be
 * read (-EACCES, -EIO, ...).
 */
int disk_run(Sysfs *s, const Policy *policy, const Writers *writers, const char *name, const UdevProps *udev,
             const DiskLoad *load, DiskRunFlags flags, DiskRun **ret);

/**
 * disk_run_find_writers() - who else writes the disk's keys: run->disk->writers
 * @run: a run whose disk was read with writers_disk_load()'s load
 * @writers: the host's writers (writers_scan())
 *
 * Return: 0 or -ENOMEM.
 */
int disk_run_find_writers(DiskRun *run, const Writers *writers);
