/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "ioschedd-manager.h"

/* Bounds of what a caller can hand us. */
#define SETTINGS_MAX 64
#define SETTING_VALUE_MAX 256

/**
 * manager_bus_decode_settings() - decode SetPolicy's a{sv} of settings
 * @msg: the message, positioned at the a{sv}
 * @ret_keys: the keys to set, each known to the attribute table
 * @ret_values: the canonical text of each value, as a config file spells it
 * @ret_remove: the keys given with an empty string: to remove from the disk's drop-in
 * @error: on a bad key or value, UnknownSetting or InvalidSetting with a message
 *
 * Exported for fuzz/fuzz-bus-settings.c.
 *
 * Return: 0; a negative errno (with @error set for a bad setting).
 */
int manager_bus_decode_settings(sd_bus_message *msg, char ***ret_keys, char ***ret_values,
                                char ***ret_remove, sd_bus_error *error);

/**
 * manager_connect_bus() - connect to the system bus (unless m->bus is set already), serve
 * org.iosched1.Manager, the disks and the object manager, attach to the manager's loop
 * Return: 0 or a negative errno (logged).
 */
int manager_connect_bus(Manager *m);

/* The first pass is done: request the bus name; once it is ours, signals go out and the
 * service manager hears READY=1 (manager_notify_ready()). */
void manager_bus_announce(Manager *m);

/* Applied, for a report with at least one change. */
void manager_bus_emit_applied(Manager *m, DiskObject *d, const Plan *report);
void manager_bus_emit_counters(Manager *m);
void manager_bus_emit_config(Manager *m);
