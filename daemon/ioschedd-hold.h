/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "hold.h"
#include "ioschedd-job.h"

/*
 * The daemon's holds. Each Hold (src/hold.h: the settings, holder, reason) is in the manager's
 * registry with its holder's bus connection tracked (sd_bus_track): a hold ends on Release()
 * or when that connection closes, whichever comes first. A disk object lists its holds, the
 * oldest first; its jobs resolve with them on top of the configuration (policy_with_holds()).
 *
 * While any hold is in force, the registry is written to RUNTIME_DIR/holds. A daemon that
 * starts and finds the file (the last one stopped or crashed with holds in force) logs each
 * hold it dropped: the policy stands.
 */

typedef struct Manager Manager;
typedef struct DiskObject DiskObject;

#define HOLDS_FILE "holds"
#define HOLDS_MAX 1024          /* in force at once, all disks */
#define HOLDS_PER_DISK_MAX 16

typedef struct HoldEntry HoldEntry;

/**
 * manager_hold_add() - put a hold in force and apply its disk
 * @m: the manager
 * @d: the disk (h->disk)
 * @h: the hold; a reference is taken
 * @call: the Hold() call, whose sender is tracked
 * @c: waits for the disk's apply, may be NULL
 *
 * Return: 0; -E2BIG past HOLDS_MAX or HOLDS_PER_DISK_MAX; -ENOMEM; sd-bus's errno when the
 * sender cannot be tracked (nothing is in force then).
 */
int manager_hold_add(Manager *m, DiskObject *d, Hold *h, sd_bus_message *call, Completion *c);

/* A new handle: never 0, never one in force. */
uint32_t manager_hold_next_id(Manager *m);

/**
 * manager_hold_find() - a hold in force
 * @ret_sender: the unique bus name of its holder, may be NULL
 * Return: the hold, NULL when there is none of that handle.
 */
const Hold *manager_hold_find(Manager *m, uint32_t id, const char **ret_sender);

/**
 * manager_hold_release() - end a hold; its disk is applied again, and what is below the hold
 * (another hold, or the policy) comes back
 * @why: for the log line ("released by its holder", ...)
 * @c: waits for the disk's apply, may be NULL
 *
 * Return: 0, -ENOENT when there is no such hold, -ENOMEM.
 */
int manager_hold_release(Manager *m, uint32_t id, const char *why, Completion *c);

/* @d leaves the manager: its holds end with it (logged). */
void manager_holds_drop_disk(Manager *m, DiskObject *d);

/* At start: the holds a previous ioschedd left in m->runtime_dir are logged as dropped, and
 * the file goes. */
void manager_holds_report_dropped(Manager *m);

/* At exit: the registry is freed; the file stays, for the next start to report. */
void manager_holds_free(Manager *m);
