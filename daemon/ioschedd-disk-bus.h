/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "ioschedd-manager.h"

/**
 * disk_bus_register() - serve org.iosched1.Disk below BUS_DISK_PATH_PREFIX
 * Return: 0 or a negative errno.
 */
int disk_bus_register(Manager *m);

/**
 * disk_bus_path() - the object path of a disk: BUS_DISK_PATH_PREFIX/<escaped name>
 * Return: 0 or a negative errno.
 */
int disk_bus_path(const DiskObject *d, char **ret);

/**
 * disk_bus_append_objects() - every published disk as GetManagedObjects lists it
 * @m: the manager
 * @reply: positioned inside the reply's a{oa{sa{sv}}}
 * @error: set by a getter that fails
 *
 * The same entries, in the same order, as sd-bus's object manager writes for the fallback
 * vtable and its enumerator, without its walk (per path: a node lookup for each prefix,
 * the path decoded again, the disk looked up by name).
 *
 * Return: 0 or a negative errno.
 */
int disk_bus_append_objects(Manager *m, sd_bus_message *reply, sd_bus_error *error);

/* PropertiesChanged with the properties of d->dirty; clears it. */
void disk_bus_emit_changed(DiskObject *d);
void disk_bus_emit_added(DiskObject *d);
void disk_bus_emit_removed(DiskObject *d);
