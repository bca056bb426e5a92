/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "macro.h"

/* How the daemon serves one property of BUS_PROPERTIES: its getter, or (without one) the
 * offset of its value in the object; the dirty mask's fields whose change it shows; whether its
 * value is empty (an empty array or string), for the properties that GetManagedObjects and
 * InterfacesAdded leave out then (NULL: never left out). */
typedef struct BusPropertyImpl {
        sd_bus_property_get_t get;
        size_t offset;
        uint64_t fields;
        bool (*empty)(const void *userdata);
} BusPropertyImpl;

/**
 * bus_vtable_build() - a vtable of @object's properties, in the order of BUS_PROPERTIES, then
 *                      @tail
 * @object: which object's properties of src/bus-names.h
 * @impl: by BusPropertyId: how each is served (a getter or an offset for each of @object's)
 * @tail: methods and signals after a SD_BUS_VTABLE_START, ending with SD_BUS_VTABLE_END;
 *        may be NULL
 * @v: room for 1 + _BUS_PROPERTY_MAX + the entries of @tail
 * @size: the room, in entries
 *
 * The names, signatures and flags are src/bus-names.h's: a property is spelt once in C.
 *
 * Return: @v.
 */
const sd_bus_vtable *bus_vtable_build(BusObject object, const BusPropertyImpl impl[_BUS_PROPERTY_MAX],
                                      const sd_bus_vtable *tail, sd_bus_vtable *v, size_t size);

/**
 * bus_error_set_errnof() - set @error for @r: the daemon's error name for an errno with one meaning
 *                          (ENODEV: NoSuchDisk, EBADMSG: ConfigInvalid, ENOEXEC: InvalidSetting),
 *                          else @otherwise, else sd-bus's name for the errno
 * @format: the message; %m is @r
 *
 * Return: @r, for a handler's return.
 */
_printf_(4, 5)
int bus_error_set_errnof(sd_bus_error *error, int r, const char *otherwise, const char *format, ...);

/* The same error as bus_error_set_errnof(), as the reply to @call. Return: sd-bus's, of the send. */
_printf_(4, 5)
int bus_reply_errnof(sd_bus_message *call, int r, const char *otherwise, const char *format, ...);
