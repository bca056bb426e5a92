/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "ioschedd-manager.h"

#define DISK_BUS_INTERFACE "org.iosched1.Disk"
#define DISK_BUS_PATH_PREFIX "/org/iosched1/disk"

extern const sd_bus_vtable disk_vtable[];

/**
 * disk_bus_register() - serve org.iosched1.Disk below DISK_BUS_PATH_PREFIX
 * Return: 0 or a negative errno.
 */
int disk_bus_register(Manager *m);

/* The values of the properties that emit changes, as text, to compare before and after. */
char **disk_bus_snapshot(DiskObject *d);
/* PropertiesChanged with the properties whose text differs from @before. */
void disk_bus_emit_changed(DiskObject *d, char **before);
void disk_bus_emit_added(DiskObject *d);
void disk_bus_emit_removed(DiskObject *d);
