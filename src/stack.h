/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where a disk stands in a storage stack: a whole disk, a device-mapper multipath map or one of
 * its paths, another device-mapper device, an md array or one of its members, an NVMe native
 * multipath head or one of its paths. Pure: the facts are read from sysfs and udev elsewhere
 * (sysfs-disk.c, the disk loader, fills Disk.stack) and come in as a StackFacts; the role comes out.
 *
 * What the kernel shows (Debian's 6.1, 6.12 and 7.3 in tests/system's guest, see
 * docs/system-tests.md "Storage stacks"):
 * - a device-mapper device has dm/ with dm/uuid and dm/name; the uuid's prefix up to the first
 *   "-" says who made it: "mpath" multipath-tools (and anyone following its convention),
 *   "LVM", "CRYPT", "part1" (kpartx's partitions), ... A request-based multipath map has a
 *   queue of its own (mq/, queue/scheduler); linear, crypt, thin and the others are bio-based;
 * - an md array has md/; its members list it in holders/;
 * - the paths of a multipath map list it in holders/, and multipath-tools' udev rules set
 *   DM_MULTIPATH_DEVICE_PATH=1 on them from their first event on (a path added again is known
 *   by that before the map takes it back and holders/ shows it); the property may be stale
 *   ("0" on a path whose WWID was added later, multipath-tools#103), so holders/ counts too;
 * - an NVMe native multipath head (nvme3n1) hangs below /devices/virtual/nvme-subsystem/ and is
 *   bio-based; its paths (nvme3c2n1, one per controller) hang below their controller, are
 *   hidden (no dev, no device node) and have the queues.
 */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

typedef enum StackRole {
        STACK_ROLE_DISK,                /* a whole disk, in no stack that changes its policy */
        STACK_ROLE_MULTIPATH_MAP,       /* a dm-multipath map (dm uuid "mpath-...") */
        STACK_ROLE_MULTIPATH_PATH,      /* a path of one */
        STACK_ROLE_DM,                  /* another device-mapper device: linear, crypt, thin, ... */
        STACK_ROLE_MD,                  /* an md array */
        STACK_ROLE_MD_MEMBER,           /* a member of one */
        STACK_ROLE_NVME_HEAD,           /* an NVMe native multipath head (bio-based) */
        STACK_ROLE_NVME_PATH,           /* a controller's path to one (hidden, has the queue) */
        _STACK_ROLE_MAX,
} StackRole;

/* "disk", "multipath-map", "multipath-path", "dm", "md", "md-member", "nvme-head", "nvme-path" */
const char *stack_role_to_string(StackRole r);
int stack_role_from_string(const char *s);      /* StackRole or -EINVAL */

/* One device in a disk's holders/ directory. */
typedef struct StackHolder {
        const char *name;               /* "dm-3", "md127" */
        const char *dm_uuid;            /* its dm/uuid; NULL when it is no device-mapper device */
        bool md;                        /* it has md/: an md array */
} StackHolder;

typedef struct StackFacts {
        const char *name;               /* the kernel name */
        const char *devpath;            /* below /sys, resolved: "/devices/virtual/..." */
        bool dm;                        /* it has dm/ */
        const char *dm_uuid;            /* dm/uuid; NULL or "" when there is none */
        bool md;                        /* it has md/ */
        const StackHolder *holders;
        size_t n_holders;
        /* udev's properties, NULL when udev does not know them */
        const char *multipath_device_path;      /* DM_MULTIPATH_DEVICE_PATH */
        const char *block_subsystem;            /* ID_BLOCK_SUBSYSTEM (systemd 259 and later) */
} StackFacts;

typedef struct Stack {
        StackRole role;
        char *dm_kind;          /* the dm uuid's prefix ("mpath", "LVM", "CRYPT", "part" for
                                 * kpartx's partN); NULL for no dm device or one without a uuid */
        char *upper;            /* the map or array a path or member belongs to ("dm-3",
                                 * "md127"); NULL when it is not known (a path added again,
                                 * before the map takes it back) */
} Stack;

void stack_done(Stack *s);

/**
 * stack_dm_kind() - the kind of a device-mapper device, from its dm uuid
 * @uuid: dm/uuid ("mpath-3600a0...", "LVM-Hn3...", "CRYPT-LUKS2-...", "part1-mpath-...")
 *
 * Return: a new string: the uuid up to its first "-" ("part" for kpartx's "partN"); NULL for
 * NULL, "" or a uuid without "-" (errno 0), or on out of memory (errno ENOMEM).
 */
char *stack_dm_kind(const char *uuid);

/**
 * stack_classify() - a disk's role in its storage stack
 * @f: the facts
 * @ret: filled on success; stack_done() frees it
 *
 * A device-mapper device is a multipath map when its uuid is "mpath-..." and another dm device
 * otherwise; an md array is one; an NVMe head is known by its place below an nvme-subsystem,
 * its paths by their names (nvmeXcYnZ) below a controller. A disk below a multipath map is a
 * path of it (holders/, or udev's DM_MULTIPATH_DEVICE_PATH=1 when the map does not hold it
 * yet), below an md array a member of it; any other disk is a whole disk, also one below LVM
 * or dm-crypt: its own queue schedules the I/O those send it.
 *
 * Return: 0 or -ENOMEM.
 */
int stack_classify(const StackFacts *f, Stack *ret);

/**
 * stack_role_is_multipath() - whether max_sectors_kb must stay as it is
 *
 * multipath-tools sets max_sectors_kb of a map and its paths when the map is created or a path
 * added, and multipath.conf(5) says it must not change on a live map: a request built for the
 * map's limit that a path refuses fails.
 *
 * Return: true for a multipath map and its paths.
 */
bool stack_role_is_multipath(StackRole r);

/* Looks up a udev property of an event: the value, NULL when it is not set. */
typedef const char *(*StackPropertyGet)(const char *key, void *userdata);

/**
 * stack_event_is_no_change() - whether a udev event of a device-mapper device changes nothing
 * for the disk's policy, so that nothing need be read for it
 * @get: looks up the event's properties
 * @userdata: for @get
 * @ret_why: the reason, for the debug log (static string); set when true is returned
 *
 * Device-mapper's and multipath-tools' rules mark the events other rules should leave alone:
 * DM_UDEV_DISABLE_OTHER_RULES_FLAG=1 (no table yet, suspended, a map multipath-tools does not
 * consider usable), MPATH_UNCHANGED=1 (a reload that changes nothing of the device: a path
 * failed or came back, multipathd reloaded the map), MPATH_DEVICE_READY=0 (a map without a
 * usable path, or suspended), DM_SUSPENDED=1 and multipathd's DM_ACTION=PATH_FAILED or
 * PATH_REINSTATED (marked MPATH_UNCHANGED=1 too since 0.8.8). A path's failure and return makes a burst of
 * them. Writing the scheduler of a map that queues I/O for want of a path would also wait
 * (freezing the queue waits for that I/O) until a path comes back.
 *
 * Return: true when the event is one of those.
 */
bool stack_event_is_no_change(StackPropertyGet get, void *userdata, const char **ret_why);
