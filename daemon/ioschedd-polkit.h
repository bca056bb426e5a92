/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/*
 * Asynchronous polkit checks for method handlers, after systemd's bus-polkit.c:
 *
 *         r = bus_verify_polkit_async(message, POLKIT_ACTION_APPLY, &m->polkit_registry, error);
 *         if (r < 0)
 *                 return r;
 *         if (r == 0)
 *                 return 1;       // asked polkit; the handler runs again with the answer
 *
 * The first call starts CheckAuthorization and returns 0; when polkit answers, the method
 * call is put back in the bus's read queue, the handler runs again from the start and this
 * time gets the answer. Callers with effective uid 0 are allowed without asking. When polkit
 * is not on the bus, everyone else is denied.
 */

/* The method calls waiting for polkit's answer, and the questions in flight. */
typedef struct PolkitRegistry PolkitRegistry;

/**
 * bus_verify_polkit_async() - is the sender of @call allowed @action?
 * @call: the method call
 * @action: the polkit action id
 * @registry: where pending queries are kept (the caller's, NULL at first)
 * @error: set on denial
 *
 * Return: 1 allowed; 0 the answer is pending (return 1 from the handler); -EACCES denied
 * (org.freedesktop.DBus.Error.AccessDenied or .InteractiveAuthorizationRequired in @error);
 * another negative errno on failure.
 */
int bus_verify_polkit_async(sd_bus_message *call, const char *action, PolkitRegistry **registry,
                            sd_bus_error *error);

/* Cancel pending queries and free the registry. */
PolkitRegistry *polkit_registry_free(PolkitRegistry *registry);
