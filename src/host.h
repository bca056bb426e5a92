/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "macro.h"
#include "udev-props.h"

/*
 * What iosched looks up about the host, below a root directory: the cgroup v2 hierarchy with
 * the io controller, the kernel's release and tick rate, the scheduler modules it could load,
 * udev's database. Stateless: each function
 * reads the files it names relative to @root_fd ("/" in production, a temporary tree in tests);
 * the Sysfs object keeps what must be looked up only once (sysfs.h).
 */

/**
 * host_cgroup_io_root() - the cgroup v2 hierarchy whose root has the io controller
 * @root_fd: the root directory
 * @ret: its mount point relative to the root ("sys/fs/cgroup", "." for the root itself)
 *
 * Reads proc/self/mountinfo and the cgroup.controllers of each cgroup2 mount's root (only mounts
 * of a hierarchy's root, no ".." in the mount point).
 *
 * Return: 0; -ENOENT when there is none (iocost is not applicable on this system); -ENOMEM.
 */
int host_cgroup_io_root(int root_fd, char **ret);

/**
 * host_kernel_release() - the running kernel's release
 * @root_fd: the root directory: proc/sys/kernel/osrelease below it, else uname(2)
 *
 * Return: the release, newly allocated; NULL on out of memory or when nothing tells.
 */
char *host_kernel_release(int root_fd);

/* The kernel's tick rate (CONFIG_HZ), for tunables kept in jiffies; 0 when unknown. */
unsigned host_hz(void);

/**
 * host_scheduler_modules() - schedulers the kernel can load: their module is on disk
 * @root_fd: the root directory (lib/modules/RELEASE/kernel/block below it)
 * @release: the kernel's release, NULL for none
 * @ret: the schedulers' names (mq-deadline, kyber, bfq) whose module exists; NULL-terminated
 *
 * A scheduler whose module is loaded (or built in) is listed by each queue; one that is not is
 * loaded by the kernel on the first write of its name.
 *
 * Return: 0 or -ENOMEM.
 */
int host_scheduler_modules(int root_fd, const char *release, char ***ret);

/**
 * host_udev_db_read() - udev's database entry of a block device
 * @root_fd: the root directory (run/udev/data/bMAJ:MIN below it)
 * @devnum: "MAJ:MIN"
 * @ret: its properties; NULL when udev has no entry for it (or it cannot be read)
 *
 * Return: 0, -EINVAL for a devnum that is not "MAJ:MIN", -ENOMEM.
 */
int host_udev_db_read(int root_fd, const char *devnum, UdevProps **ret);
