/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "ioschedd-bus.h"
#include "macro.h"

static uint64_t property_flags(BusPropertyChange change) {
        return change == BUS_PROPERTY_CONST ? SD_BUS_VTABLE_PROPERTY_CONST :
               change == BUS_PROPERTY_EMITS ? SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE :
               change == BUS_PROPERTY_EXPLICIT ? SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION | SD_BUS_VTABLE_PROPERTY_EXPLICIT : 0;
}

const sd_bus_vtable *bus_vtable_build(BusObject object, const BusPropertyImpl impl[_BUS_PROPERTY_MAX],
                                      const sd_bus_vtable *tail, sd_bus_vtable *v, size_t size) {
        size_t n = 0;

        assert(impl && v && size >= 2);
        v[n++] = (sd_bus_vtable) SD_BUS_VTABLE_START(0);
        for (BusPropertyId p = 0; p < _BUS_PROPERTY_MAX; p++) {
                const BusProperty *bp = bus_property(p);

                if (bp->object != object)
                        continue;
                assert(impl[p].get || impl[p].offset > 0);
                assert(n < size - 1);
                v[n++] = (sd_bus_vtable) SD_BUS_PROPERTY(bp->name, bp->signature, impl[p].get,
                                                         impl[p].offset, property_flags(bp->change));
        }
        for (const sd_bus_vtable *t = tail ? tail + 1 : NULL; t && t->type != _SD_BUS_VTABLE_END; t++) {
                assert(n < size - 1);
                v[n++] = *t;
        }
        v[n] = (sd_bus_vtable) SD_BUS_VTABLE_END;
        return v;
}

/*
 * The one mapping of an errno of the manager or of conf-write to the error a caller gets. Each of
 * these has one meaning there:
 *   ENODEV   the disk went away (a JobResult's error)                         NoSuchDisk
 *   EBADMSG  manager_reload(): the configuration has errors, the old stays    ConfigInvalid
 *   ENOEXEC  dropin_persist(): the settings would not make a drop-in that loads InvalidSetting
 * NULL for any other errno: the caller's own name for the step that failed, or sd-bus's name
 * for the errno (NoMemory, AccessDenied, ...).
 */
static const char *bus_error_name_of(int r) {
        switch (r) {
        case -ENODEV:
                return BUS_ERROR_NO_SUCH_DISK;
        case -EBADMSG:
                return BUS_ERROR_CONFIG_INVALID;
        case -ENOEXEC:
                return BUS_ERROR_INVALID_SETTING;
        default:
                return NULL;
        }
}

/* @error for @r: bus_error_name_of(@r), else @otherwise, else sd-bus's name for the errno;
 * the message is @format's, where %m is @r. Return: a negative errno, for a handler's return. */
_printf_(4, 0)
static int bus_error_set_errnofv(sd_bus_error *error, int r, const char *otherwise, const char *format,
                                 va_list ap) {
        const char *name = bus_error_name_of(r) ?: otherwise;

        assert(r < 0 && format);
        if (!name)
                return sd_bus_error_set_errnofv(error, r, format, ap);
        errno = -r;
        (void) sd_bus_error_setfv(error, name, format, ap);
        return r;
}

int bus_error_set_errnof(sd_bus_error *error, int r, const char *otherwise, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        r = bus_error_set_errnofv(error, r, otherwise, format, ap);
        va_end(ap);
        return r;
}

int bus_reply_errnof(sd_bus_message *call, int r, const char *otherwise, const char *format, ...) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        va_list ap;

        va_start(ap, format);
        (void) bus_error_set_errnofv(&e, r, otherwise, format, ap);
        va_end(ap);
        return sd_bus_reply_method_error(call, &e);
}
