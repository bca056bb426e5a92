/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Every name of the D-Bus API org.iosched1 (org.iosched1(5)), the one spelling in C: the daemon
 * builds its vtables from the property list, ioschedctl and the benchmarks' client read it. Header
 * only and free of sd-bus, so that any client can include it.
 *
 * A property is X(OBJECT, ID, "Name", "signature", CHANGE): CHANGE is how a client learns of a
 * new value, CONST (never changes), EMITS (PropertiesChanged) or NONE (read it again); EXPLICIT:
 * left out of GetAll and GetManagedObjects (a client that wants it calls Properties.Get), and
 * PropertiesChanged names it among the invalidated (sd-bus's SD_BUS_VTABLE_PROPERTY_EXPLICIT
 * with EMITS_INVALIDATION). A
 * disk's current attribute values are not properties of their own: they are the map Current,
 * keyed like the configuration (the attribute table of src/attr.c is the schema), explicit; the
 * scheduler alone is also Scheduler, for a list of disks. GetManagedObjects carries what a list
 * shows; the details are explicit (org.iosched1(5), HISTORY).
 */
#include <string.h>

#define BUS_SERVICE "org.iosched1"
#define BUS_MANAGER_PATH "/org/iosched1"
#define BUS_MANAGER_INTERFACE "org.iosched1.Manager"
#define BUS_DISK_INTERFACE "org.iosched1.Disk"
/* A disk's object: BUS_DISK_PATH_PREFIX/<kernel name escaped as sd_bus_path_encode() does> */
#define BUS_DISK_PATH_PREFIX BUS_MANAGER_PATH "/disk"

/* org.iosched1.Manager: methods and the signal. */
#define BUS_METHOD_LIST_DISKS "ListDisks"
#define BUS_METHOD_GET_DISK "GetDisk"
#define BUS_METHOD_PLAN "Plan"
#define BUS_METHOD_APPLY "Apply"
#define BUS_METHOD_APPLY_ALL "ApplyAll"
#define BUS_METHOD_SET_POLICY "SetPolicy"
#define BUS_METHOD_RESET_POLICY "ResetPolicy"
#define BUS_METHOD_RELOAD "Reload"
#define BUS_METHOD_HOLD "Hold"
#define BUS_METHOD_RELEASE "Release"
#define BUS_SIGNAL_APPLIED "Applied"

/* Every property: X(OBJECT, ID, "Name", "signature", CHANGE); the manager's, then a disk's in
 * the order the daemon serves them (GetAll, GetManagedObjects). */
#define BUS_PROPERTIES(X)                                                                       \
        X(MANAGER, VERSION, "Version", "s", CONST)                                              \
        X(MANAGER, CONFIG_FILES, "ConfigFiles", "as", EMITS)                                    \
        X(MANAGER, CONFIG_ERRORS, "ConfigErrors", "as", EMITS)                                  \
        X(MANAGER, WRITES_DONE, "WritesDone", "t", EMITS)                                       \
        X(MANAGER, WRITES_SKIPPED, "WritesSkipped", "t", EMITS)                                 \
        X(MANAGER, WRITE_ERRORS, "WriteErrors", "t", EMITS)                                     \
        X(MANAGER, DRIFT_CORRECTED, "DriftCorrected", "t", EMITS)                               \
        X(MANAGER, DISKS_PENDING, "DisksPending", "u", NONE)                                    \
        X(DISK, NAME, "Name", "s", CONST)                                                       \
        X(DISK, DEVICE, "Device", "(sbu(sss))", EMITS)                                          \
        X(DISK, SCHEDULER, "Scheduler", "s", EMITS)                                             \
        X(DISK, DEVNUM, "DevNum", "s", EXPLICIT)                                                \
        X(DISK, MODEL, "Model", "s", EXPLICIT)                                                  \
        X(DISK, VENDOR, "Vendor", "s", EXPLICIT)                                                \
        X(DISK, SERIAL, "Serial", "s", EXPLICIT)                                                \
        X(DISK, WWN, "WWN", "s", EXPLICIT)                                                      \
        X(DISK, TRANSPORT, "Transport", "s", EXPLICIT)                                          \
        X(DISK, ROTATIONAL, "Rotational", "b", EXPLICIT)                                        \
        X(DISK, REMOVABLE, "Removable", "b", EXPLICIT)                                          \
        X(DISK, ZONED, "Zoned", "s", EXPLICIT)                                                  \
        X(DISK, STACK, "Stack", "(sss)", EXPLICIT)                                              \
        X(DISK, QUEUES, "Queues", "u", EXPLICIT)                                                \
        X(DISK, SIZE_BYTES, "SizeBytes", "t", EXPLICIT)                                         \
        X(DISK, AVAILABLE_SCHEDULERS, "AvailableSchedulers", "as", EXPLICIT)                    \
        X(DISK, CURRENT, "Current", "a{ss}", EXPLICIT)                                          \
        X(DISK, OTHER_WRITERS, "OtherWriters", "a(ssssussb)", EMITS)                            \
        X(DISK, DESIRED, "Desired", "a(ssssu)", EXPLICIT)                                       \
        X(DISK, MISMATCHED, "Mismatched", "as", EMITS)                                          \
        X(DISK, MATCHED_RULES, "MatchedRules", "a(ssu)", EXPLICIT)                              \
        X(DISK, LAST_APPLIED, "LastApplied", "t", EMITS)                                        \
        X(DISK, LAST_CHANGES, "LastChanges", "a(sss)", EXPLICIT)                                \
        X(DISK, LAST_ERROR, "LastError", "s", EMITS)                                           \
        X(DISK, HOLDS, "Holds", "a(ussta{ss})", EMITS)

typedef enum BusObject {
        BUS_OBJECT_MANAGER,     /* BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE */
        BUS_OBJECT_DISK,        /* below BUS_DISK_PATH_PREFIX, BUS_DISK_INTERFACE */
} BusObject;

typedef enum BusPropertyChange {
        BUS_PROPERTY_CONST,
        BUS_PROPERTY_EMITS,
        BUS_PROPERTY_NONE,
        BUS_PROPERTY_EXPLICIT,
} BusPropertyChange;

#define _BUS_PROPERTY_ENUM_(object, id, name, signature, change) BUS_##object##_##id,
#define _BUS_PROPERTY_ENTRY_(object_, id, name_, signature_, change_)                   \
        { .object = BUS_OBJECT_##object_, .name = name_, .signature = signature_,       \
          .change = BUS_PROPERTY_##change_ },

/* BUS_MANAGER_VERSION, ..., BUS_DISK_NAME, ... */
typedef enum BusPropertyId {
        BUS_PROPERTIES(_BUS_PROPERTY_ENUM_)
        _BUS_PROPERTY_MAX,
} BusPropertyId;

typedef struct BusProperty {
        BusObject object;
        const char *name;
        const char *signature;
        BusPropertyChange change;
} BusProperty;

static inline const BusProperty *bus_property(BusPropertyId p) {
        static const BusProperty table[] = { BUS_PROPERTIES(_BUS_PROPERTY_ENTRY_) };
        return (unsigned) p < _BUS_PROPERTY_MAX ? &table[p] : NULL;
}

static inline const char *bus_property_name(BusPropertyId p) {
        return bus_property(p)->name;
}

/* The property of @object called @name, or -1 for one this client does not know. */
static inline int bus_property_from_name(BusObject object, const char *name) {
        for (int p = 0; p < _BUS_PROPERTY_MAX; p++)
                if (bus_property(p)->object == object && strcmp(bus_property(p)->name, name) == 0)
                        return p;
        return -1;
}

/* Errors (org.iosched1(5), ERRORS). */
#define BUS_ERROR_NO_SUCH_DISK "org.iosched1.Error.NoSuchDisk"
#define BUS_ERROR_INVALID_DISK_NAME "org.iosched1.Error.InvalidDiskName"
#define BUS_ERROR_UNKNOWN_SETTING "org.iosched1.Error.UnknownSetting"
#define BUS_ERROR_INVALID_SETTING "org.iosched1.Error.InvalidSetting"
#define BUS_ERROR_WRITE_FAILED "org.iosched1.Error.WriteFailed"
#define BUS_ERROR_CONFIG_INVALID "org.iosched1.Error.ConfigInvalid"
#define BUS_ERROR_NOT_SUPPORTED "org.iosched1.Error.NotSupported"
#define BUS_ERROR_PERSIST_FAILED "org.iosched1.Error.PersistFailed"
#define BUS_ERROR_NO_SUCH_HOLD "org.iosched1.Error.NoSuchHold"
#define BUS_ERROR_TOO_MANY_HOLDS "org.iosched1.Error.TooManyHolds"

/* polkit actions (dbus/org.iosched1.policy). */
#define POLKIT_ACTION_APPLY "org.iosched1.apply"
#define POLKIT_ACTION_SET_POLICY "org.iosched1.set-policy"
#define POLKIT_ACTION_RELOAD "org.iosched1.reload"
#define POLKIT_ACTION_HOLD "org.iosched1.hold"
