/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "attr.h"
#include "disk.h"

/*
 * The only module that opens files under /sys and the cgroup tree. Every path is relative to a
 * root directory ("/" in production, a temporary tree in tests); every disk name and tunable is
 * validated before it becomes part of a path, and writes are possible only to the attributes of
 * the table in attr.c, below the disk's queue/ directory, and to the disk's own MAJ:MIN line of
 * io.cost.qos and io.cost.model in the root of the cgroup v2 hierarchy that has the io
 * controller. Loading a whole disk is sysfs-disk.h's; what is looked up about the host once
 * (the cgroup hierarchy, the kernel's release, systemd's iocost rule) is host.h's, cached here.
 */
typedef struct Sysfs Sysfs;

/* Tests emulate the kernel on a fake tree with these. The write hook is called instead of
 * write(2) on the opened file; the read hook before a disk file is read, and a negative errno
 * it returns is the read's result. */
typedef int (*SysfsWriteHook)(Sysfs *s, int fd, const char *disk, const char *relpath,
                              const char *value, void *userdata);
typedef int (*SysfsReadHook)(Sysfs *s, const char *disk, const char *relpath, void *userdata);
/* Called with true before a call that waits without using the CPU (a write(2), which on 6.11+
 * kernels waits for RCU grace periods; a pause while udev holds a disk's lock) and with false
 * after it, on the thread that waits. */
typedef void (*SysfsWaitHook)(bool begin);

/**
 * sysfs_new() - open a root
 * @root: the directory below which sys/, proc/, run/, lib/ and etc/ are looked for; NULL is "/"
 * @ret: the new object
 *
 * Return: 0, -ENOMEM, or the negative errno of opening @root.
 */
int sysfs_new(const char *root, Sysfs **ret);
/**
 * sysfs_new_sharing() - open @host's root again, for another thread
 * @host: probed (sysfs_probe_host()); it must outlive the new object and is only read from it
 * @ret: the new object, whose host facts (kernel release, cgroup tree, scheduler modules) are
 *       @host's: each thread of a pool would otherwise look them up again and keep its own copy
 *
 * Return: as sysfs_new().
 */
int sysfs_new_sharing(const Sysfs *host, Sysfs **ret);
/* Looks the host facts up now, before sysfs_new_sharing() shares them. Return: 0 or -ENOMEM. */
int sysfs_probe_host(Sysfs *s);
Sysfs *sysfs_free(Sysfs *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sysfs *, sysfs_free);

void sysfs_set_hooks(Sysfs *s, SysfsReadHook read_hook, SysfsWriteHook write_hook, void *userdata);
void sysfs_set_wait_hook(Sysfs *s, SysfsWaitHook hook);
unsigned long sysfs_get_n_writes(const Sysfs *s);
/* The root directory's fd (O_PATH), for host.h's look-ups; owned by @s. */
int sysfs_root_fd(const Sysfs *s);
/* The kernel's tick rate (host_hz()), 0 unknown. */
unsigned sysfs_hz(const Sysfs *s);

/**
 * sysfs_list_disks() - list whole disks (not partitions), sorted by name
 * Return: 0 or negative errno.
 */
int sysfs_list_disks(Sysfs *s, char ***ret);

/**
 * sysfs_nvme_head_paths() - the paths of an NVMe multipath head
 * @head: the head's name, nvme<S>n<N>
 *
 * A path is a hidden disk, nvme<S>c<C>n<N> for each controller nvme<C> of the head's subsystem
 * (sys/class/nvme-subsystem/nvme-subsys<S>/): the kernel sends no uevent for a hidden disk, so
 * only its head's tells that it may be there.
 * Return: 0 and the paths that exist (an empty list for a name that is not a head's, or a
 * subsystem gone), or a negative errno.
 */
int sysfs_nvme_head_paths(Sysfs *s, const char *head, char ***ret);

/**
 * sysfs_disk_exists() - whether a block device of that name is there now
 * Return: true when @name is a valid name and sys/class/block/@name/dev exists, or it is a
 * hidden disk (hidden reads 1) with a queue.
 */
bool sysfs_disk_exists(Sysfs *s, const char *name);

/**
 * sysfs_pin_disk() - hold a disk's directory open while its files are read
 * @s: the tree
 * @name: kernel name; validated
 *
 * Until sysfs_unpin_disk(), each file of @name is looked up below that directory, not by a walk
 * from the root through sys/class/block (path walks in kernfs are most of what reading a disk
 * costs). A disk that goes away meanwhile fails the reads. One disk at a time, pinned once: the
 * caller that reads and writes a disk (disk_run()) pins it, what it calls reads below it.
 *
 * Return: 0; -EINVAL for an invalid name; -ENODEV when there is no such disk.
 */
int sysfs_pin_disk(Sysfs *s, const char *name);
void sysfs_unpin_disk(Sysfs *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sysfs *, sysfs_unpin_disk);

/**
 * sysfs_read_disk_text() - read one file of a disk with a single read(2)
 * @disk: kernel name; validated
 * @rel: the file below the disk's directory ("queue/rotational"); a path of this program's
 *       own, never from input: it must not start with "/" or have a ".." component
 * @ret: the text, stripped
 *
 * Return: 0 or the negative errno of the open or read (-ENOENT: no such file).
 */
int sysfs_read_disk_text(Sysfs *s, const char *disk, const char *rel, char **ret);
/* The same, parsed as a decimal number: -EINVAL for text that is not one. */
int sysfs_read_disk_number(Sysfs *s, const char *disk, const char *rel, int64_t *ret);
/* Whether @rel exists below the disk's directory. */
bool sysfs_disk_has(Sysfs *s, const char *disk, const char *rel);
/* Whether @disk is the pinned one and its queue/ was there when it was pinned (a partition has
 * none): known without a look-up. */
bool sysfs_disk_pinned_with_queue(const Sysfs *s, const char *disk);

/**
 * sysfs_disk_devpath() - where the disk is in the device tree
 * @ret: the target of sys/class/block/@disk from "/devices/" on ("/devices/pci0000:00/...")
 *
 * Return: 0, or the negative errno of readlink (-ENOENT: no such disk).
 */
int sysfs_disk_devpath(Sysfs *s, const char *disk, char **ret);

/**
 * sysfs_disk_foreach() - call @cb with each name in a directory of a disk
 * @rel: the directory below the disk's ("mq", "queue/iosched")
 * @cb: called for each entry but "." and ".."; a negative return stops the walk and is returned
 *
 * Return: 0, the first negative return of @cb, or the negative errno of opening the directory.
 */
int sysfs_disk_foreach(Sysfs *s, const char *disk, const char *rel,
                       int (*cb)(const char *name, void *userdata), void *userdata);

/* Read one attribute's current value; *ret is reset first. Return: st->err. */
int sysfs_read_setting(Sysfs *s, const char *disk, const AttrInfo *a, const char *tunable,
                       AttrState *ret);

/**
 * sysfs_read_iocost() - read a disk's line of io.cost.qos or io.cost.model
 * @disk: kernel name (for the read hook)
 * @devnum: the disk's "MAJ:MIN"
 * @f: ATTR_FILE_IOCOST_QOS or ATTR_FILE_IOCOST_MODEL
 * @ret: reset, then filled (iocost_find())
 *
 * Return: ret->err, or -ENOMEM.
 */
int sysfs_read_iocost(Sysfs *s, const char *disk, const char *devnum, AttrFile f, IocostState *ret);

/**
 * sysfs_write_setting() - write one attribute with a single write(2)
 * @tunable: for ATTR_IOSCHED, the tunable name; validated
 * @value: the value; for an io.cost.* attribute the whole line, which must start with the
 *         disk's own "MAJ:MIN "
 *
 * Return: 0 or the negative errno of open/write (-EBUSY, -EINVAL, -ENOENT, -ENODEV, ...).
 */
int sysfs_write_setting(Sysfs *s, const char *disk, const AttrInfo *a, const char *tunable,
                        const char *value);

/**
 * sysfs_lock_disk() - take udev's lock on the disk's device node, exclusively
 * @d: the disk (its name and devnum)
 * @timeout_usec: how long to wait while another program (udevd running its rules) holds it
 * @ret_fd: the locked fd (close it to unlock), or -1 when there is no node to lock
 *
 * Return: 1 locked, 0 no node of this disk to lock, -EWOULDBLOCK after @timeout_usec,
 *         or another negative errno.
 */
int sysfs_lock_disk(Sysfs *s, const Disk *d, uint64_t timeout_usec, int *ret_fd);

/**
 * sysfs_iocost_probe() - find the cgroup v2 hierarchy whose root has the io controller, once
 *
 * host_cgroup_io_root(), remembered: io.cost.qos and io.cost.model are read and written there.
 *
 * Return: 0; -ENOENT when there is none (iocost is not applicable on this system); -ENOMEM.
 */
int sysfs_iocost_probe(Sysfs *s);


/* host_kernel_release(), looked up once. May be NULL. */
const char *sysfs_kernel_release(Sysfs *s);

/**
 * sysfs_scheduler_modules() - host_scheduler_modules() of the kernel's release, looked up once
 * @ret: the list, owned by @s
 *
 * Return: 0 or -ENOMEM.
 */
int sysfs_scheduler_modules(Sysfs *s, char * const **ret);
