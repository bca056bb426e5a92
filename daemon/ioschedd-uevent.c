/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <endian.h>
#include <limits.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include "ioschedd-manager.h"
#include "ioschedd-uevent.h"
#include "log.h"
#include "sysfs.h"
#include "util.h"

/* The multicast groups of the kernel's uevents and of udev's broadcasts, and a message's
 * largest size (the kernel's UEVENT_BUFFER_SIZE is 2048; udev adds its properties). */
#define UEVENT_GROUP_KERNEL 1
#define UEVENT_GROUP_UDEV 2
#define UEVENT_MESSAGE_MAX 16384

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

bool uevent_udev_pending(const UeventMonitor *u) {
        return u && uevent_udev_behind(u, manager_now(u->manager, CLOCK_MONOTONIC));
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

/*
 * The uevents of both sockets are read as they come, not through libudev, which made a device
 * of each message (its properties in hash maps, a list of them built anew for each lookup,
 * all freed after): 40,000 to 90,000 instructions a message, two to four messages a disk
 * created, most of the daemon's instructions in a storm (callgrind, bench/storm's 256 loop
 * devices). A block disk's action, name, SEQNUM and the few properties a job reads are all
 * the daemon takes of them.
 */

/* udev's broadcast: this header (systemd's struct monitor_netlink_header, which every libudev
 * reads, of any version), then the properties as the kernel's are. */
#define UDEV_MESSAGE_MAGIC 0xfeedcafeU
typedef struct UdevMessageHeader {
        char prefix[8];                 /* "libudev" */
        uint32_t magic;                 /* UDEV_MESSAGE_MAGIC, big endian */
        uint32_t header_size;
        uint32_t properties_off;
        uint32_t properties_len;
        uint32_t filter_subsystem_hash;
        uint32_t filter_devtype_hash;
        uint32_t filter_tag_bloom_hi;
        uint32_t filter_tag_bloom_lo;
} UdevMessageHeader;

static const char *uevent_value(const char *line, const char *key) {
        const char *v = startswith(line, key);

        return v && *v == '=' ? v + 1 : NULL;
}

/* Where the properties are: after udev's header, or after the kernel's "ACTION@DEVPATH". */
static int uevent_properties(const char *buf, size_t n, const char **ret, size_t *ret_len) {
        size_t l = strnlen(buf, n);

        if (streq(buf, "libudev")) {
                UdevMessageHeader h;

                if (n < sizeof(h))
                        return -EBADMSG;
                memcpy(&h, buf, sizeof(h));
                if (be32toh(h.magic) != UDEV_MESSAGE_MAGIC || h.properties_off < sizeof(h) ||
                    h.properties_off > n || h.properties_len > n - h.properties_off)
                        return -EBADMSG;
                *ret = buf + h.properties_off;
                *ret_len = h.properties_len;
                return 0;
        }
        if (!memchr(buf, '@', l) || l >= n)
                return -EBADMSG;
        *ret = buf + l + 1;
        *ret_len = n - l - 1;
        return 0;
}

int uevent_parse(const char *buf, size_t n, Uevent *ret) {
        Uevent e = {};
        const char *slash, *v;
        int64_t seqnum;
        int r;

        assert(buf && ret && buf[n] == 0);
        r = uevent_properties(buf, n, &e.props, &e.props_len);
        if (r < 0)
                return r;
        for (size_t i = 0; i < e.props_len; i += strnlen(e.props + i, e.props_len - i) + 1) {
                const char *l = e.props + i;

                /* Most of udev's lines are its own properties (ID_*, DEVLINKS, ...): the first
                 * byte sorts them out. */
                if (l[0] != 'A' && l[0] != 'D' && l[0] != 'S')
                        continue;
                if ((v = uevent_value(l, "ACTION")))
                        e.action = v;
                else if ((v = uevent_value(l, "DEVPATH")))
                        e.devpath = v;
                else if ((v = uevent_value(l, "DEVPATH_OLD")))
                        e.devpath_old = v;
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

/* @s's first @n bytes are one of @l. Each line of each udev event is looked up here: the first
 * byte sorts most keys out without a strlen() of each (callgrind, bench/storm 1024 disks:
 * 467,408 strlen() calls in a storm). */
static bool strv_has(const char *const *l, const char *s, size_t n) {
        for (; l && *l; l++)
                if ((*l)[0] == s[0] && strncmp(*l, s, n) == 0 && (*l)[n] == 0)
                        return true;
        return false;
}

int uevent_udev_props(const Uevent *e, bool all, char *const *keys, UdevProps **ret) {
        _cleanup_(udev_props_freep) UdevProps *p = NULL;
        char name[UDEV_PROP_NAME_MAX + 1];

        assert(e && ret);
        p = udev_props_new();
        if (!p)
                return -ENOMEM;
        for (size_t i = 0; i < e->props_len; i += strnlen(e->props + i, e->props_len - i) + 1) {
                const char *l = e->props + i, *eq = strchr(l, '=');
                size_t k = eq ? (size_t) (eq - l) : 0;

                if (k == 0 || k > UDEV_PROP_NAME_MAX)
                        continue;
                /* The identity (udev_props_identity_keys), the policy's match.property names
                 * and what the other writers' rules match on; every one for iocost keys (the
                 * hwdb's IOCOST_* properties). udev_props_add() bounds what one event keeps. */
                if (!all && !strv_has(udev_props_identity_keys, l, k) && !strv_has((const char *const *) keys, l, k))
                        continue;
                memcpy(name, l, k);
                name[k] = 0;
                if (udev_props_add(p, name, eq + 1) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

static void uevent_dispatch_udev(UeventMonitor *u, const Uevent *e) {
        const Config *c = u->manager->config;
        _cleanup_(udev_props_freep) UdevProps *props = NULL;
        const char *base;

        if (!streq(e->action, "remove") &&
            uevent_udev_props(e, !c || (c->load.attrs & ATTR_IOCOST_BITS_MASK), c ? c->load.udev_keys : NULL,
                              &props) < 0) {
                log_oom();
                return;
        }
        base = e->devpath_old ? strrchr(e->devpath_old, '/') : NULL;
        uevent_handle_udev(u, e->action, e->name, base ? base + 1 : NULL, &props, e->seqnum);
}

/* One message of @fd into @buf: 1, 0 when there is none, -ENOBUFS when some were lost. Only
 * the kernel's own on its group (port 0), only root's (udevd's) on udev's. */
static int uevent_receive(int fd, bool kernel, char *buf, size_t size, Uevent *ret) {
        union {
                struct cmsghdr header;
                char buf[CMSG_SPACE(sizeof(struct ucred))];
        } control;
        struct sockaddr_nl snl = {};
        struct iovec iov = { .iov_base = buf, .iov_len = size - 1 };
        struct msghdr msg = {
                .msg_name = &snl, .msg_namelen = sizeof(snl), .msg_iov = &iov, .msg_iovlen = 1,
                .msg_control = &control, .msg_controllen = sizeof(control),
        };
        struct cmsghdr *cmsg;
        ssize_t k;

        for (;;) {
                msg.msg_namelen = sizeof(snl);
                msg.msg_controllen = sizeof(control);
                k = recvmsg(fd, &msg, MSG_DONTWAIT);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return errno == ENOBUFS ? -ENOBUFS : 0;
                cmsg = CMSG_FIRSTHDR(&msg);
                if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
                        continue;
                if (kernel ? snl.nl_pid != 0 :
                             !cmsg || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_CREDENTIALS ||
                             ((struct ucred *) CMSG_DATA(cmsg))->uid != 0)
                        continue;
                buf[k] = 0;
                /* A block disk's: udev sends every device's, the kernel's group too. */
                if (uevent_parse(buf, (size_t) k, ret) < 0 || streq(buf, "libudev") == kernel ||
                    !streq(ret->subsystem, "block") || !streq_ptr(ret->devtype, "disk"))
                        continue;
                return 1;
        }
}

static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        UeventMonitor *u = userdata;
        bool kernel = s == u->kernel_source;

        /* Take everything that is there: events for one disk coalesce into one job. */
        for (unsigned n = 0; n < 4096; n++) {
                char buf[UEVENT_MESSAGE_MAX + 1];
                Uevent e;
                int r = uevent_receive(fd, kernel, buf, sizeof(buf), &e);

                if (r == -ENOBUFS) {
                        log_warning("The %s uevent socket lost events (receive buffer full): "
                                    "reading every disk again.", kernel ? "kernel" : "udev");
                        (void) manager_rescan(u->manager, NULL);
                        continue;
                }
                if (r == 0)
                        break;
                if (kernel)
                        uevent_handle_kernel(u, e.action, e.name, e.seqnum);
                else
                        uevent_dispatch_udev(u, &e);
        }
        return 0;
}

/* A socket of the kernel's uevents (@group UEVENT_GROUP_KERNEL) or udev's broadcasts of them
 * (UEVENT_GROUP_UDEV), watched by the loop in *@ret, which owns it. */
static int uevent_add_socket(UeventMonitor *u, unsigned group, int buffer, sd_event_source **ret) {
        struct sockaddr_nl snl = { .nl_family = AF_NETLINK, .nl_groups = group };
        const char *what = group == UEVENT_GROUP_KERNEL ? "kernel" : "udev";
        _cleanup_(closep) int fd = -1;
        int r, one = 1;

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return log_error_errno(errno, "Cannot create the %s uevent socket: %m", what);
        /* Storms of add events (hundreds of disks at once) must not overflow it; if they do
         * anyway, ENOBUFS makes us read every disk again. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof(buffer)) < 0 &&
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer)) < 0)
                log_warning_errno(errno, "Cannot enlarge the %s uevent socket's buffer: %m", what);
        /* The sender's credentials: udev's broadcasts are taken from root only. */
        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
                return log_error_errno(errno, "Cannot ask for the %s uevents' senders: %m", what);
        if (bind(fd, (struct sockaddr *) &snl, sizeof(snl)) < 0)
                return log_error_errno(errno, "Cannot listen to the %s uevents: %m", what);
        r = sd_event_add_io(u->manager->event, ret, fd, EPOLLIN, on_uevent, u);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the %s uevent socket: %m", what);
        (void) sd_event_source_set_io_fd_own(*ret, true);
        TAKE_FD(fd);
        (void) sd_event_source_set_description(*ret, group == UEVENT_GROUP_KERNEL ? "kernel-monitor" :
                                                                                  "udev-monitor");
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

        assert(u && u->manager->event && !u->monitor_source);
        r = uevent_add_socket(u, UEVENT_GROUP_UDEV, buffer, &u->monitor_source);
        if (r < 0)
                return r;
        if (kernel_events)
                r = uevent_add_socket(u, UEVENT_GROUP_KERNEL, buffer, &u->kernel_source);
        return r;
}

UeventMonitor *uevent_monitor_free(UeventMonitor *u) {
        if (!u)
                return NULL;
        /* The sources own their sockets. */
        sd_event_source_disable_unref(u->monitor_source);
        sd_event_source_disable_unref(u->kernel_source);
        sd_event_source_disable_unref(u->burst_source);
        return mfree(u);
}
