/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <limits.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include "ioschedd-manager.h"
#include "ioschedd-uevent.h"
#include "log.h"
#include "sysfs.h"
#include "util.h"

/* The kernel's multicast group of uevents (libudev's is 2), and a message's largest size (the
 * kernel's UEVENT_BUFFER_SIZE is 2048). */
#define UEVENT_KERNEL_GROUP 1
#define UEVENT_KERNEL_MESSAGE_MAX 8192

/*
 * A burst of the kernel's uevents is disks being created (a storm: hundreds at boot, a
 * multipath rescan). Each new disk is brought to policy on its kernel uevent; udev's events
 * for it come later, while the burst goes on, and each would read the disk again to put back
 * what another rule wrote. Those reads take kernfs's lock against the kernel creating the next
 * disks, and with 2 CPUs they made the creation itself a third slower (bench/storm); so did the
 * kernel "add"'s own read, done at once. So during a burst a disk's kernel "add" is acted on
 * once the kernel is quiet (not waiting for udev); its kernel "change" and udev's events are
 * held (udev's properties kept for the job), and every held disk is read in full
 * and checked once the burst is over: UEVENT_BURST_QUIET_USEC without a kernel uevent and
 * udev caught up with the burst (it has broadcast the burst's last kernel uevent, by SEQNUM),
 * or UEVENT_BURST_MAX_USEC after the first was held. udev runs its rules seconds behind the
 * kernel in a storm: ended by the kernel's quiet alone, a burst released its disks before
 * udev's events came, and each of those events read its disk once more (bench/storm: five
 * jobs a disk where two do).
 */
/* udev has yet to broadcast the last kernel uevent of the burst, or seemed to less than
 * UEVENT_BURST_MAX_USEC ago (no udev at all leaves it at that). */
static bool uevent_udev_behind(const UeventMonitor *u, uint64_t now) {
        return u->kernel_seqnum > u->udev_seqnum && now - u->burst_last < UEVENT_BURST_MAX_USEC;
}

static bool uevent_in_burst(const UeventMonitor *u, uint64_t now) {
        return u->burst_events >= UEVENT_BURST_EVENTS &&
               (now - u->burst_last < UEVENT_BURST_QUIET_USEC || uevent_udev_behind(u, now));
}

static int on_burst_over(sd_event_source *s, uint64_t usec, void *userdata) {
        uevent_burst_over(userdata);
        return 0;
}

static void uevent_arm_burst_over(UeventMonitor *u) {
        uint64_t now = manager_now(u->manager, CLOCK_MONOTONIC), last = u->burst_last, when = UINT64_MAX;
        int r;

        /* The held adds, once the kernel is quiet. */
        if (u->n_held_add > 0)
                when = MIN(u->burst_last + UEVENT_BURST_QUIET_USEC, u->add_held_since + UEVENT_BURST_MAX_USEC);
        /* While udev is behind, look again UEVENT_BURST_QUIET_USEC from now. */
        if (uevent_udev_behind(u, now))
                last = MAX(last, now);
        if (u->n_held > 0)
                when = MIN(when, MIN(last + UEVENT_BURST_QUIET_USEC, u->held_since + UEVENT_BURST_MAX_USEC));

        r = manager_arm_timer(u->manager, &u->burst_source, when, on_burst_over, u, "burst-over");
        if (r < 0) {
                log_warning_errno(r, "Cannot arm the end of a uevent burst, checking the held disks now: %m");
                u->burst_events = 0;    /* no holding without the timer */
                u->burst_last = 0;
                uevent_burst_over(u);
        }
}

/* The kernel is quiet (or was not for UEVENT_BURST_MAX_USEC): the disks whose kernel "add"
 * came during the burst are read and applied now, without waiting for udev. */
static void uevent_release_adds(UeventMonitor *u, uint64_t now) {
        Manager *m = u->manager;

        if (u->n_held_add == 0 ||
            (now - u->burst_last < UEVENT_BURST_QUIET_USEC && now - u->add_held_since < UEVENT_BURST_MAX_USEC))
                return;
        for (size_t i = 0; i < m->n_disks; i++) {
                DiskObject *d = m->disks[i];

                if (!d->held_add)
                        continue;
                d->held_add = false;
                if (disk_object_want(d, JOB_APPLY, NULL, NULL) == -ENOMEM)
                        log_oom();
        }
        u->n_held_add = 0;
}

void uevent_burst_over(UeventMonitor *u) {
        Manager *m;
        uint64_t now;
        size_t n = 0;

        assert(u);
        m = u->manager;
        now = manager_now(m, CLOCK_MONOTONIC);
        uevent_release_adds(u, now);
        if (u->n_held == 0 && u->n_held_add == 0)
                return;
        if (u->n_held_add > 0 ||
            (uevent_in_burst(u, now) && now - u->held_since < UEVENT_BURST_MAX_USEC)) {
                uevent_arm_burst_over(u);
                return;
        }
        for (size_t i = 0; i < m->n_disks; i++) {
                if (!m->disks[i]->held)
                        continue;
                n++;
                if (disk_object_release(m->disks[i]) == -ENOMEM)
                        log_oom();      /* the next event, the verify timer or a rescan reads it */
        }
        u->n_held = 0;
        log_debug("A burst of kernel uevents is over: checking %zu disk(s) udev had events for.", n);
}

static void uevent_count_kernel_event(UeventMonitor *u, uint64_t seqnum) {
        uint64_t now = manager_now(u->manager, CLOCK_MONOTONIC);

        /* A pause of the kernel's while udev is behind is the same burst. */
        if (now - u->burst_last >= UEVENT_BURST_QUIET_USEC && !uevent_udev_behind(u, now))
                u->burst_events = 0;
        u->burst_last = now;
        u->kernel_seqnum = MAX(u->kernel_seqnum, seqnum);
        if (u->burst_events < UINT_MAX)
                u->burst_events++;
        if (u->n_held > 0 || u->n_held_add > 0)
                uevent_arm_burst_over(u);
}

/* During a burst: hold a later event for @d (read or being read) until its end; @props, udev's
 * properties, are taken for the job then. Return: true if held. */
static bool uevent_hold(UeventMonitor *u, DiskObject *d, UdevProps **props) {
        uint64_t now = manager_now(u->manager, CLOCK_MONOTONIC);

        /* Its kernel add is held: the add's job reads it (with udev's properties, if here). */
        if (d->held_add) {
                disk_object_keep_props(d, props);
                return true;
        }
        if (!(disk_object_is_published(d) || d->running) || !uevent_in_burst(u, now))
                return false;
        if (!d->held && u->n_held++ == 0)
                u->held_since = now;
        disk_object_hold(d, props);
        uevent_arm_burst_over(u);
        return true;
}

void uevent_forget(UeventMonitor *u, DiskObject *d) {
        assert(d);
        if (u && d->held_add) {
                d->held_add = false;
                u->n_held_add--;
        }
        if (!u || !d->held)
                return;
        d->held = false;
        u->n_held--;
}

/* A kernel "add" during a burst: read once the kernel is quiet. Return: true if held. */
static bool uevent_hold_add(UeventMonitor *u, DiskObject *d) {
        uint64_t now = manager_now(u->manager, CLOCK_MONOTONIC);

        if (!uevent_in_burst(u, now))
                return false;
        if (!d->held_add && u->n_held_add++ == 0)
                u->add_held_since = now;
        d->held_add = true;
        uevent_arm_burst_over(u);
        return true;
}

/* The disk of an event, added to the manager if new; NULL when out of memory. */
static DiskObject *uevent_disk(UeventMonitor *u, const char *name) {
        DiskObject *d = manager_find_disk(u->manager, name);

        if (!d && manager_add_disk(u->manager, name, &d) < 0) {
                log_oom();
                return NULL;
        }
        /* An NVMe head's paths are hidden disks, of which the kernel sends no uevent. */
        if (manager_add_nvme_paths(u->manager, name) < 0)
                log_oom();
        return d;
}

/*
 * A kernel uevent reaches us before udev has run its rules for it (udev's own broadcast comes
 * after them, a storm of hundreds of disks seconds later). When no rule matches on anything only
 * udev knows (policy_needs_udev()), the disk resolves the same now as after udev: act at once.
 * The job reads udev's database as it is (the identity udev gave the disk so far); udev's event
 * queues the disk again, which finds it at policy and writes nothing. Removals wait for udev.
 */
void uevent_handle_kernel(UeventMonitor *u, const char *action, const char *name, uint64_t seqnum) {
        const Config *c = u->manager->config;
        DiskObject *d;

        assert(u);
        if (!action || !name || !(streq(action, "add") || streq(action, "change")))
                return;
        if (!c || policy_needs_udev(c->policy) || !disk_name_is_valid(name))
                return;
        /* Whether a dm device's change changes anything, udev's rules tell (its event's marks). */
        if (streq(action, "change") && startswith(name, "dm-")) {
                log_debug("%s: kernel uevent change of a device-mapper device: udev's event tells "
                          "whether it changes anything", name);
                return;
        }
        log_debug("%s: kernel uevent %s", name, action);
        uevent_count_kernel_event(u, seqnum);
        d = uevent_disk(u, name);
        if (!d)
                return;
        /* A change (new media: a loop device's backing file) leaves the scheduler as it is. An
         * add is acted on once the kernel is quiet (it may be another disk of the same name):
         * reading it at once takes kernfs's lock (each path component's revalidation) that the
         * kernel creating the next disks takes for each of its files, and with the storm's
         * other readers on 2 CPUs the creation itself waited on it (bench/storm: the creator
         * blocked in kernfs_add_one()/kernfs_activate() much of its time). */
        if (streq(action, "add") ? uevent_hold_add(u, d) : uevent_hold(u, d, NULL))
                return;
        if (disk_object_want(d, JOB_APPLY, NULL, NULL) == -ENOMEM)
                log_oom();
}

void uevent_handle_udev(UeventMonitor *u, const char *action, const char *name, const char *old_name,
                        UdevProps **props, uint64_t seqnum) {
        Manager *m;
        DiskObject *d;

        assert(u);
        m = u->manager;
        u->udev_seqnum = MAX(u->udev_seqnum, seqnum);
        if (!action || !name)
                return;
        if (!disk_name_is_valid(name)) {
                log_debug("Ignoring event for a device with an invalid name.");
                return;
        }
        if (streq(action, "change") && disk_event_changes_nothing(name, props ? *props : NULL))
                return;
        log_debug("%s: uevent %s", name, action);
        d = manager_find_disk(m, name);
        if (streq(action, "remove")) {
                if (d)
                        manager_remove_disk(m, d);
                return;
        }
        if (streq(action, "move") && old_name) {
                DiskObject *o = manager_find_disk(m, old_name);

                if (o && o != d)
                        manager_remove_disk(m, o);
        }
        d = d ?: uevent_disk(u, name);
        if (!d || uevent_hold(u, d, props))
                return;
        if (disk_object_want(d, JOB_APPLY, props, NULL) == -ENOMEM)
                log_oom();
}

/* The udev properties a job reads (udev_props_identity_keys): libudev builds the list of all of
 * a device's properties anew for each event, and that list is most of what an event costs us;
 * the list only when the policy sets iocost keys (the hwdb's IOCOST_* properties). */
static int device_props(struct udev_device *dev, bool all, char * const *keys, UdevProps **ret) {
        _cleanup_(udev_props_freep) UdevProps *p = NULL;
        struct udev_list_entry *e;

        p = udev_props_new();
        if (!p)
                return -ENOMEM;
        if (!all) {
                for (const char *const *k = udev_props_identity_keys; *k; k++) {
                        const char *v = udev_device_get_property_value(dev, *k);

                        if (v && udev_props_add(p, *k, v) < 0)
                                return -ENOMEM;
                }
                /* The policy's match.property names and what the other writers' rules match on. */
                for (char * const *k = keys; k && *k; k++) {
                        const char *v = udev_device_get_property_value(dev, *k);

                        if (v && udev_props_add(p, *k, v) < 0)
                                return -ENOMEM;
                }
                *ret = TAKE_PTR(p);
                return 0;
        }
        /* udev_props_add() bounds what one event can make us keep. */
        udev_list_entry_foreach(e, udev_device_get_properties_list_entry(dev))
                if (udev_props_add(p, udev_list_entry_get_name(e),
                                   strempty(udev_list_entry_get_value(e))) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

static void uevent_dispatch(UeventMonitor *u, struct udev_device *dev) {
        const char *action = udev_device_get_action(dev), *name = udev_device_get_sysname(dev);
        const Config *c = u->manager->config;
        _cleanup_(udev_props_freep) UdevProps *props = NULL;
        const char *old, *base;

        if (action && !streq(action, "remove") &&
            device_props(dev, !c || (c->load.attrs & ATTR_IOCOST_BITS_MASK), c ? c->load.udev_keys : NULL,
                         &props) < 0) {
                log_oom();
                return;
        }
        old = udev_device_get_property_value(dev, "DEVPATH_OLD");
        base = old ? strrchr(old, '/') : NULL;
        uevent_handle_udev(u, action, name, base ? base + 1 : NULL, &props, udev_device_get_seqnum(dev));
}

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        UeventMonitor *u = userdata;

        /* Take everything that is there: events for one disk coalesce into one job. */
        for (unsigned n = 0; n < 4096; n++) {
                struct udev_device *dev = udev_monitor_receive_device(u->monitor);

                if (!dev) {
                        if (errno == ENOBUFS) {
                                log_warning("The udev monitor lost events (receive buffer full): "
                                            "reading every disk again.");
                                (void) manager_rescan(u->manager, NULL);
                                continue;
                        }
                        break;
                }
                uevent_dispatch(u, dev);
                udev_device_unref(dev);
        }
        return 0;
}

static const char *uevent_value(const char *line, const char *key) {
        const char *v = startswith(line, key);

        return v && *v == '=' ? v + 1 : NULL;
}

int kernel_uevent_parse(const char *buf, size_t n, KernelUevent *ret) {
        KernelUevent e = {};
        const char *slash;
        int64_t seqnum;

        assert(buf && ret && buf[n] == 0);
        /* The header, "ACTION@DEVPATH"; libudev's messages start "libudev". */
        if (!memchr(buf, '@', strnlen(buf, n)))
                return -EBADMSG;
        for (size_t i = strlen(buf) + 1; i < n; i += strlen(buf + i) + 1) {
                const char *l = buf + i, *v;

                if ((v = uevent_value(l, "ACTION")))
                        e.action = v;
                else if ((v = uevent_value(l, "DEVPATH")))
                        e.devpath = v;
                else if ((v = uevent_value(l, "SUBSYSTEM")))
                        e.subsystem = v;
                else if ((v = uevent_value(l, "DEVTYPE")))
                        e.devtype = v;
                else if ((v = uevent_value(l, "SEQNUM")) && safe_atoi64(v, 0, INT64_MAX, &seqnum) >= 0)
                        e.seqnum = (uint64_t) seqnum;
        }
        if (!e.action || !e.devpath || !e.subsystem)
                return -EBADMSG;
        slash = strrchr(e.devpath, '/');
        e.name = slash ? slash + 1 : e.devpath;
        if (!*e.name)
                return -EBADMSG;
        *ret = e;
        return 0;
}

/*
 * The kernel's uevents, read from its netlink socket as they are: a block disk's action, name
 * and SEQNUM are all the daemon takes of them. libudev made a device of each one (its
 * properties in hash maps, then freed): 40,000-odd instructions a message, three messages
 * (a disk's add and change, its bdi's add) per disk created, a quarter of the daemon's
 * instructions in a storm (callgrind, bench/storm's 256 loop devices).
 */
static int on_kernel_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        UeventMonitor *u = userdata;

        for (unsigned n = 0; n < 4096; n++) {
                char buf[UEVENT_KERNEL_MESSAGE_MAX + 1];
                struct sockaddr_nl snl = {};
                struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
                struct msghdr msg = { .msg_name = &snl, .msg_namelen = sizeof(snl), .msg_iov = &iov, .msg_iovlen = 1 };
                KernelUevent e;
                ssize_t k = recvmsg(fd, &msg, MSG_DONTWAIT);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == ENOBUFS) {
                                log_warning("The kernel uevent socket lost events (receive buffer full): "
                                            "reading every disk again.");
                                (void) manager_rescan(u->manager, NULL);
                                continue;
                        }
                        break;
                }
                /* The kernel's own (port 0), whole. */
                if (snl.nl_pid != 0 || (msg.msg_flags & MSG_TRUNC))
                        continue;
                buf[k] = 0;
                if (kernel_uevent_parse(buf, k, &e) < 0 || !streq(e.subsystem, "block") ||
                    !streq_ptr(e.devtype, "disk"))
                        continue;
                uevent_handle_kernel(u, e.action, e.name, e.seqnum);
        }
        return 0;
}

static int uevent_add_kernel_socket(UeventMonitor *u, int buffer) {
        struct sockaddr_nl snl = { .nl_family = AF_NETLINK, .nl_groups = UEVENT_KERNEL_GROUP };
        _cleanup_(closep) int fd = -1;
        int r;

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return log_error_errno(errno, "Cannot create the kernel uevent socket: %m");
        /* Storms of add events must not overflow it; if they do anyway, ENOBUFS makes us read
         * every disk again. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof(buffer)) < 0 &&
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer)) < 0)
                log_warning_errno(errno, "Cannot enlarge the kernel uevent socket's buffer: %m");
        if (bind(fd, (struct sockaddr *) &snl, sizeof(snl)) < 0)
                return log_error_errno(errno, "Cannot listen to the kernel's uevents: %m");
        r = sd_event_add_io(u->manager->event, &u->kernel_source, fd, EPOLLIN, on_kernel_monitor, u);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the kernel uevent socket: %m");
        (void) sd_event_source_set_io_fd_own(u->kernel_source, true);
        TAKE_FD(fd);
        (void) sd_event_source_set_description(u->kernel_source, "kernel-monitor");
        return 0;
}

/* udev's monitor of block disks (after its rules, with its properties). */
static int uevent_add_monitor(UeventMonitor *u, int buffer) {
        struct udev_monitor *mon;
        int r;

        mon = u->monitor = udev_monitor_new_from_netlink(u->udev, "udev");
        if (!mon)
                return log_error_errno(errno ?: ENOMEM, "Cannot create a udev monitor: %m");
        r = udev_monitor_filter_add_match_subsystem_devtype(mon, "block", "disk");
        if (r < 0)
                return log_error_errno(r, "Cannot filter the udev monitor: %m");
        /* Storms of add events (hundreds of disks at once) must not overflow the socket; if
         * they do anyway, ENOBUFS makes us read every disk again. */
        r = udev_monitor_set_receive_buffer_size(mon, buffer);
        if (r < 0)
                log_warning_errno(r, "Cannot enlarge the udev monitor's buffer: %m");
        r = udev_monitor_enable_receiving(mon);
        if (r < 0)
                return log_error_errno(r, "Cannot start the udev monitor: %m");
        r = sd_event_add_io(u->manager->event, &u->monitor_source, udev_monitor_get_fd(mon), EPOLLIN,
                            on_monitor, u);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the udev monitor: %m");
        (void) sd_event_source_set_description(u->monitor_source, "udev-monitor");
        return 0;
}

int uevent_monitor_new(Manager *m, UeventMonitor **ret) {
        UeventMonitor *u;

        assert(m && ret);
        u = calloc(1, sizeof(UeventMonitor));
        if (!u)
                return -ENOMEM;
        u->manager = m;
        *ret = u;
        return 0;
}

int uevent_monitor_start(UeventMonitor *u, bool kernel_events, int buffer) {
        int r;

        assert(u && u->manager->event && !u->udev);
        u->udev = udev_new();
        if (!u->udev)
                return log_oom();
        r = uevent_add_monitor(u, buffer);
        if (r < 0)
                return r;
        if (kernel_events)
                r = uevent_add_kernel_socket(u, buffer);
        return r;
}

/* A monitor and the loop's watch of it go together. */
static void monitor_close(struct udev_monitor **mon, sd_event_source **s) {
        *s = sd_event_source_disable_unref(*s);
        *mon = udev_monitor_unref(*mon);
}

UeventMonitor *uevent_monitor_free(UeventMonitor *u) {
        if (!u)
                return NULL;
        monitor_close(&u->monitor, &u->monitor_source);
        sd_event_source_disable_unref(u->kernel_source);        /* it owns the socket */
        sd_event_source_disable_unref(u->burst_source);
        udev_unref(u->udev);
        return mfree(u);
}
