/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "plan.h"
#include "sysfs-disk.h"

typedef struct ApplyStats {
        unsigned written, skipped, failed, unsupported, gone, would_write;
} ApplyStats;

typedef enum ApplyFlags {
        APPLY_DRY_RUN = 1 << 0,
        /* Take udev's lock on the device node around a scheduler switch (sysfs_lock_disk()).
         * Not from a program udevd runs for the disk's event: udevd holds it then. */
        APPLY_LOCK = 1 << 1,
} ApplyFlags;

/* udevd holds the lock while it runs one event's rules and programs. */
#define APPLY_LOCK_TIMEOUT_USEC (10 * 1000000ULL)

#define APPLY_BUSY_TRIES 10
#define APPLY_BUSY_DELAY_USEC 2000
#define APPLY_BUSY_DELAY_MAX_USEC 100000

/**
 * apply_disk() - bring one disk to its policy
 * @s: the tree
 * @d: the disk, as loaded; its settings are re-read after a scheduler switch and after writes
 * @r: the resolved settings
 * @flags: APPLY_DRY_RUN to write nothing; APPLY_LOCK to switch the scheduler under udev's lock
 * @ret_report: every action with its outcome, in the order they were done
 * @stats: counters to add to (may be NULL)
 *
 * One write(2) per attribute that differs, read back to confirm. EBUSY is retried with a
 * bounded back-off; EINVAL on the scheduler tries the next offered one of the list; ENOENT or
 * ENODEV when the disk is gone ends the disk quietly (OUTCOME_GONE). After a scheduler switch,
 * the settings it resets are read again and decided again.
 *
 * Return: 0 (failures are outcomes in the report), or -ENOMEM.
 */
int apply_disk(Sysfs *s, Disk *d, const Resolved *r, ApplyFlags flags, Plan **ret_report,
               ApplyStats *stats);
