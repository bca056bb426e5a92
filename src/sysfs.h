/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "attr.h"
#include "disk.h"

/*
 * The only module that touches /sys (and udev's database below /run/udev). Every path is
 * relative to a root directory ("/" in production, a temporary tree in tests); every disk name
 * and tunable is validated before it becomes part of a path, and writes are possible only to
 * the attributes of the table in attr.c, below the disk's queue/ directory, and to the disk's
 * own MAJ:MIN line of io.cost.qos and io.cost.model in the root of the cgroup v2 hierarchy
 * that has the io controller (found in proc/self/mountinfo below the same root).
 */
typedef struct Sysfs Sysfs;

/* Tests emulate the kernel on a fake tree with these. The write hook is called instead of
 * write(2) on the opened file; the read hook before a disk file is read, and a negative errno
 * it returns is the read's result. */
typedef int (*SysfsWriteHook)(Sysfs *s, int fd, const char *disk, const char *relpath,
                              const char *value, void *userdata);
typedef int (*SysfsReadHook)(Sysfs *s, const char *disk, const char *relpath, void *userdata);

int sysfs_new(const char *root, Sysfs **ret);
Sysfs *sysfs_free(Sysfs *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sysfs *, sysfs_free);

void sysfs_set_hooks(Sysfs *s, SysfsReadHook read_hook, SysfsWriteHook write_hook, void *userdata);
unsigned long sysfs_get_n_writes(const Sysfs *s);

/**
 * sysfs_list_disks() - list whole disks (not partitions), sorted by name
 * Return: 0 or negative errno.
 */
int sysfs_list_disks(Sysfs *s, char ***ret);

/**
 * sysfs_disk_exists() - whether a block device of that name is there now
 * Return: true when @name is a valid name and sys/class/block/@name/dev exists.
 */
bool sysfs_disk_exists(Sysfs *s, const char *name);

/**
 * sysfs_load_disk() - read a disk's identity and current settings
 * @s: the tree
 * @name: kernel name; validated
 * @udev: udev's properties of the disk, filled at the edge (the environment of a udev RUN
 *        program, a libudev device), or NULL to read udev's database for the disk
 * @what: what to read; NULL for everything
 * @ret: the disk
 *
 * Return: 0; -EINVAL for an invalid name; -ENOENT/-ENODEV when there is no such disk.
 */
int sysfs_load_disk(Sysfs *s, const char *name, const UdevProps *udev, const DiskLoad *what,
                    Disk **ret);

/**
 * sysfs_reload_settings() - read the current settings of a loaded disk again (those of d->load)
 * Return: 0, or -ENOENT/-ENODEV when the disk went away.
 */
int sysfs_reload_settings(Sysfs *s, Disk *d);

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
 * sysfs_iocost_probe() - find the cgroup v2 hierarchy whose root has the io controller
 *
 * Reads proc/self/mountinfo and the cgroup.controllers of each cgroup2 mount's root, once:
 * io.cost.qos and io.cost.model are read and written there.
 *
 * Return: 0; -ENOENT when there is none (iocost is not applicable on this system); -ENOMEM.
 */
int sysfs_iocost_probe(Sysfs *s);

/**
 * sysfs_systemd_iocost_active() - whether systemd's 90-iocost.rules is in effect
 *
 * Return: true when the rule is in one of udev's rules directories (the first one with the
 * name, not masked by a link to /dev/null or an empty file) and its helper is installed: it
 * writes io.cost.qos and io.cost.model on every udev event of a disk with IOCOST_SOLUTIONS.
 */
bool sysfs_systemd_iocost_active(Sysfs *s);

/* The kernel's release: proc/sys/kernel/osrelease below the root, else uname(2). May be NULL. */
const char *sysfs_kernel_release(Sysfs *s);

/* Read one attribute's current value; *ret is reset first. Return: st->err. */
int sysfs_read_setting(Sysfs *s, const char *disk, const AttrInfo *a, const char *tunable,
                       AttrState *ret);
