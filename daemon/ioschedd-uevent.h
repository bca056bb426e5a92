/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-event.h>

#include "ioschedd-disk.h"

/*
 * The uevents of block disks, from udev (after its rules ran, with its properties) and from
 * the kernel (before them), and bursts of the kernel's: disks being created.
 */

/* This many of the kernel's uevents, each within UEVENT_BURST_QUIET_USEC of the one before,
 * are a burst (disks being created): a disk's events after its kernel "add" wait for its end
 * (the kernel quiet and udev caught up), at most UEVENT_BURST_MAX_USEC after the first was
 * held. */
#define UEVENT_BURST_EVENTS 16
#define UEVENT_BURST_QUIET_USEC (50 * 1000ULL)
#define UEVENT_BURST_MAX_USEC (5 * 1000000ULL)

typedef struct UeventMonitor {
        Manager *manager;
        sd_event_source *monitor_source;        /* udev's broadcasts (after its rules), owns the socket */
        sd_event_source *kernel_source;         /* the kernel's uevents, before udev's rules; owns the socket */
        sd_event_source *burst_source;          /* ends a burst of kernel uevents: the held disks */
        uint64_t burst_last, held_since;        /* CLOCK_MONOTONIC usec */
        unsigned burst_events;                  /* kernel uevents in the current burst */
        uint64_t kernel_seqnum, udev_seqnum;    /* SEQNUM: the last counted kernel uevent, udev's last event */
        size_t n_held;
        uint64_t add_held_since;                /* CLOCK_MONOTONIC usec: the first kernel "add" held */
        size_t n_held_add;                      /* disks whose kernel "add" waits for the kernel's quiet */
} UeventMonitor;

/* udev has yet to broadcast kernel uevents the monitor counted (it runs seconds behind the kernel
 * in a storm), for at most UEVENT_BURST_MAX_USEC after the kernel's last: their disks get udev's
 * event, whose job reads them in full. False without a monitor. */
bool uevent_udev_pending(const UeventMonitor *u);

/* A monitor that listens to nothing yet (uevent_monitor_start()); the tests hand it events. */
int uevent_monitor_new(Manager *m, UeventMonitor **ret);

/**
 * uevent_monitor_start() - listen to udev's events of block disks and, with @kernel_events,
 * to the kernel's
 * @u: the monitor; the manager's loop watches the sockets
 * @kernel_events: act on the kernel's uevents too (when the policy allows it)
 * @buffer: the receive buffer of each socket, bytes
 *
 * Return: 0 or a negative errno (logged).
 */
int uevent_monitor_start(UeventMonitor *u, bool kernel_events, int buffer);
UeventMonitor *uevent_monitor_free(UeventMonitor *u);
DEFINE_TRIVIAL_CLEANUP_FUNC(UeventMonitor *, uevent_monitor_free);

/**
 * uevent_handle_udev() - udev's event for a disk: queue it, or during a burst hold it
 * @u: the monitor
 * @action: "add", "change", "remove", "move", ...
 * @name: the disk's kernel name
 * @old_name: for "move", the name before, may be NULL
 * @props: udev's properties of the event, taken (*@props is NULL after); may be NULL
 * @seqnum: the event's SEQNUM (the kernel uevent's it follows), 0 if unknown
 */
void uevent_handle_udev(UeventMonitor *u, const char *action, const char *name, const char *old_name,
                        UdevProps **props, uint64_t seqnum);

/* The kernel's uevent for a disk, before udev's rules ran: an "add" or "change" queues it at
 * once when no rule matches on what only udev knows (policy_needs_udev()). */
void uevent_handle_kernel(UeventMonitor *u, const char *action, const char *name, uint64_t seqnum);

/* A uevent as a netlink socket carries it: the kernel's ("ACTION@DEVPATH", then "KEY=VALUE"
 * strings, each ended by a NUL) or udev's broadcast of it (udev's header, then the same
 * strings with udev's properties). The strings point into the message. */
typedef struct Uevent {
        const char *action;
        const char *devpath;
        const char *devpath_old;        /* "move": where it was; NULL */
        const char *subsystem;
        const char *devtype;    /* NULL when the event has none */
        const char *name;       /* the last component of devpath: the name in sys/class/block */
        uint64_t seqnum;        /* 0 when the event has none */
        const char *props;      /* the "KEY=VALUE" strings */
        size_t props_len;
} Uevent;

/* Return: 0, or -EBADMSG for a message that is not a uevent (neither header; no ACTION,
 * DEVPATH or SUBSYSTEM; a DEVPATH without a name). @buf[@n] must be NUL. */
int uevent_parse(const char *buf, size_t n, Uevent *ret);
/* The properties of @e a job reads: the identity (udev_props_identity_keys) and @keys, or
 * with @all every one. Return: 0 or -ENOMEM. */
int uevent_udev_props(const Uevent *e, bool all, char *const *keys, UdevProps **ret);

/* The burst-over timer: once the kernel is quiet, the disks whose kernel "add" came during the
 * burst are read (what the policy needs) and applied; once udev has caught up too, every held
 * disk is read in full and applied; a burst still going on arms the timer again. */
void uevent_burst_over(UeventMonitor *u);

/* @d leaves the manager: it is held no more. */
void uevent_forget(UeventMonitor *u, DiskObject *d);
