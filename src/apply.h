/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "plan.h"
#include "sysfs-disk.h"

typedef enum ApplyFlags {
        /* Take udev's lock on the device node around a scheduler switch (sysfs_lock_disk()).
         * Not from a program udevd runs for the disk's event: udevd holds it then. */
        APPLY_LOCK = 1 << 0,
} ApplyFlags;

/* udevd holds the lock while it runs one event's rules and programs. */
#define APPLY_LOCK_TIMEOUT_USEC (10 * 1000000ULL)

#define APPLY_BUSY_TRIES 10
#define APPLY_BUSY_DELAY_USEC 2000
#define APPLY_BUSY_DELAY_MAX_USEC 100000

/**
 * apply_plan() - bring one disk to its policy
 * @s: the tree
 * @d: the disk, as loaded; its settings are re-read after a scheduler switch and after writes
 * @r: the resolved settings
 * @plan: plan_build()'s for @d and @r; each action's outcome is set in place
 * @flags: APPLY_LOCK to switch the scheduler under udev's lock
 *
 * One write(2) per attribute that differs, read back to confirm. EBUSY is retried with a
 * bounded back-off; EINVAL on the scheduler tries the next offered one of the list; ENOENT or
 * ENODEV when the disk is gone ends the disk quietly (OUTCOME_GONE). After each write the
 * actions that follow are decided again on what the disk reads now (plan_decide_rest()).
 *
 * Return: 0 (failures are outcomes in the plan), or -ENOMEM.
 */
int apply_plan(Sysfs *s, Disk *d, const Resolved *r, Plan *plan, ApplyFlags flags);
