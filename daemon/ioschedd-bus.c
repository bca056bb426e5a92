/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <string.h>

#include "ioschedd-bus.h"

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
