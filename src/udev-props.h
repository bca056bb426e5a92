/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"

/*
 * A disk's udev properties, typed once at the edge: the udev helper fills them from its
 * environment (udev RUN), the daemon from libudev, the disk loader from udev's database
 * (host.c). The core reads the typed fields and looks other properties up by name; it never
 * parses "KEY=value" text. Pure: no I/O.
 *
 * Every property added is kept, sorted by name (a policy may match on any of them, and a
 * disk's stack role is told by DM_* and MPATH_* ones); the typed fields point into that list.
 * What is not printable UTF-8 (tabs allowed), or too long, is left out as if udev had not set it;
 * the identity fields are printable without tabs (they are shown on the bus).
 */
#define UDEV_PROPS_MAX 256              /* properties kept of one device */
#define UDEV_PROP_NAME_MAX 128
#define UDEV_PROP_VALUE_MAX 1024
#define UDEV_PROP_IDENTITY_MAX 256      /* model, vendor, serial, wwn: shown on the bus */

typedef struct UdevProperty {
        char *name;
        char *value;
} UdevProperty;

typedef struct UdevProps {
        /* The identity, NULL when udev does not know it. */
        const char *model;              /* ID_MODEL */
        const char *vendor;             /* ID_VENDOR */
        const char *serial;             /* ID_SERIAL_SHORT, else ID_SERIAL */
        const char *wwn;                /* ID_WWN_WITH_EXTENSION, else ID_WWN */
        const char *bus;                /* ID_BUS: ata, usb, scsi, ... */
        /* systemd's hwdb for iocost: IOCOST_SOLUTIONS, a list of names; each one's parameters
         * are the properties IOCOST_QOS_<NAME> and IOCOST_MODEL_<NAME>. */
        const char *iocost_solutions;
        /* The storage stack (stack.h): multipath-tools' mark of a path, systemd 259's
         * subsystem of a block device ("dm", "md", ...). */
        const char *multipath_device_path;      /* DM_MULTIPATH_DEVICE_PATH */
        const char *block_subsystem;            /* ID_BLOCK_SUBSYSTEM */
        /* Where the device is below /sys (DEVPATH: an event's, a RUN program's environment; not
         * in udev's database): spares a reading of the disk's link in sys/class/block. */
        const char *devpath;

        UdevProperty *props;            /* every property kept, sorted by name */
        size_t n_props;
        size_t n_allocated;
} UdevProps;

/* The properties that fill the identity, the stack's and the marks of a dm event that changes
 * nothing: what an edge that fetches property by property (libudev) asks for when the policy
 * needs no other. NULL-terminated. */
extern const char *const udev_props_identity_keys[];

UdevProps *udev_props_new(void);
UdevProps *udev_props_free(UdevProps *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(UdevProps *, udev_props_free);

/**
 * udev_props_add() - add one property
 * @p: the properties
 * @name: its name: letters, digits and "_.-:", at most UDEV_PROP_NAME_MAX
 * @value: its value: UTF-8 without control characters but tabs, 1 to UDEV_PROP_VALUE_MAX
 *         characters
 *
 * A name already there gets the new value. A property that is not valid, or past the
 * UDEV_PROPS_MAX-th, is left out.
 *
 * Return: 1 added, 0 left out, -ENOMEM.
 */
int udev_props_add(UdevProps *p, const char *name, const char *value);

/* The value of property @name, NULL when there is none. */
const char *udev_props_get(const UdevProps *p, const char *name);

/**
 * udev_props_copy_matching() - a copy of the properties whose names @want accepts
 * @p: the properties, NULL for none
 * @want: called with each name
 * @ret: the copy; NULL when nothing was accepted (a disk keeps no empty list)
 *
 * Return: 0 or -ENOMEM.
 */
int udev_props_copy_matching(const UdevProps *p, bool (*want)(const char *name), UdevProps **ret);

/* The same, keeping what @want accepts (may be NULL) and what @keys names (may be NULL). */
int udev_props_copy_keys(const UdevProps *p, bool (*want)(const char *name), char * const *keys,
                         UdevProps **ret);

/**
 * udev_props_from_strv() - properties from "KEY=value" strings
 * @l: the environment of a program udevd runs (RUN), or a test's list; NULL is empty
 * @ret: the properties
 *
 * Strings without "=" are skipped. Meant for the edge: the core never sees such strings.
 *
 * Return: 0 or -ENOMEM.
 */
int udev_props_from_strv(char * const *l, UdevProps **ret);

/**
 * udev_props_parse_db() - properties from the text of udev's database file of a device
 * @text: the file (/run/udev/data/bMAJ:MIN): "E:KEY=value" lines among others
 * @ret: the properties of the "E:" lines
 *
 * Return: 0 or -ENOMEM.
 */
int udev_props_parse_db(const char *text, UdevProps **ret);
