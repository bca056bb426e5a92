/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "attr.h"
#include "udev-props.h"

/*
 * Pure parts of iocost: the kernel's io.cost.qos and io.cost.model printouts, the cgroup v2
 * mounts of /proc/self/mountinfo, the kernel versions with the rq-qos static key, and
 * systemd-iocost's hwdb solutions. No I/O here; sysfs.c reads the files.
 */

/* What the kernel shows for one disk in one of the two files. */
typedef struct IocostState {
        int err;                /* 0; -ENODATA: no line for the disk (iocost never set up on it);
                                 * -ENOENT: no cgroup v2 io controller on the system;
                                 * -EBADMSG: the line cannot be parsed; other read errors */
        char *raw;              /* the disk's line without "MAJ:MIN " (for people and D-Bus) */
        /* _ATTR_MAX numbers by AttrId, for the attributes of this file; set when err is 0.
         * Allocated: a daemon keeps a reading of each of thousands of disks, most of which
         * have no line (or no cgroup v2 io controller at all). */
        int64_t *num;
} IocostState;

void iocost_state_done(IocostState *st);

/**
 * iocost_parse_line() - parse one line of io.cost.qos or io.cost.model
 * @file: ATTR_FILE_IOCOST_QOS or ATTR_FILE_IOCOST_MODEL
 * @line: "259:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.00 wlat=5000 min=50.00
 *        max=150.00" or "259:0 ctrl=user model=linear rbps=... wrandiops=..."
 * @ret_devnum: "259:0", newly allocated (may be NULL)
 * @ret: every field of the file; err 0; raw is the kernel's spelling (iocost_format())
 *
 * Every token of the file's format (the same from 5.4 to 7.3) must be there, once; unknown
 * tokens are ignored, "model=" must be "linear"; values the kernel cannot hold (rpct above
 * 100, min or max outside 1-10000, min above max) make the line unparsable.
 *
 * Return: 0; -EBADMSG for a line that does not parse; -ENOMEM.
 */
int iocost_parse_line(AttrFile file, const char *line, char **ret_devnum, IocostState *ret);

/**
 * iocost_format() - a disk's line as the kernel prints it, without "MAJ:MIN "
 * @file: ATTR_FILE_IOCOST_QOS or ATTR_FILE_IOCOST_MODEL
 * @num: the values by AttrId
 *
 * Return: "enable=1 ctrl=user rpct=95.00 ..." or "ctrl=auto model=linear rbps=...", newly
 * allocated; NULL on out of memory.
 */
char *iocost_format(AttrFile file, const int64_t num[_ATTR_MAX]);

/**
 * iocost_find() - find and parse a disk's line in the text of an io.cost.* file
 * @text: the whole file; may be empty
 * @devnum: "MAJ:MIN"
 * @ret: filled; ret->err is -ENODATA when the disk has no line, -EBADMSG when it does not parse
 *
 * Return: ret->err, or -ENOMEM.
 */
int iocost_find(AttrFile file, const char *text, const char *devnum, IocostState *ret);

/**
 * mountinfo_cgroup2_mounts() - the mount points of every cgroup2 file system
 * @text: the text of /proc/self/mountinfo
 * @ret: mount points, unescaped ("\040" is a space), in the file's order
 *
 * Return: 0 (possibly with an empty list), -ENOMEM.
 */
int mountinfo_cgroup2_mounts(const char *text, char ***ret);

/* Whether the "io" controller is listed in the text of a cgroup.controllers file. */
bool cgroup_controllers_have_io(const char *text);

/**
 * kernel_has_rqos_static_key() - whether a kernel enables rq-qos with a static key
 * @release: uname's release, "6.16.3+deb14-amd64"
 *
 * Linux 6.16.0 to 6.16.3 (and the 6.16 release candidates) did static_branch_inc() in
 * rq_qos_add() while the queue was frozen, taking cpu_hotplug_lock under freeze_lock (a lockdep
 * cycle, blktests block/005). "block: blk-rq-qos: replace static key with atomic bitop" fixed
 * it in 6.17 and 6.16.4.
 *
 * Return: true for those kernels.
 */
bool kernel_has_rqos_static_key(const char *release);

/**
 * iocost_solution_pick() - choose an iocost solution among a disk's hwdb properties
 * @props: the disk's udev properties (IOCOST_SOLUTIONS, IOCOST_QOS_<NAME>, IOCOST_MODEL_<NAME>);
 *         NULL for none
 * @want: a solution name, or "hwdb" for systemd-iocost's own choice: "naive" when
 *        IOCOST_SOLUTIONS lists it (systemd's default TargetSolution=), else the first listed
 * @ret_name: the name chosen, newly allocated
 * @ret_qos: the value of IOCOST_QOS_<NAME> (NAME upper-cased, '-' as '_'), in @props
 * @ret_model: the value of IOCOST_MODEL_<NAME>, in @props
 *
 * Return: 0; -ENOENT when the disk has no (or an empty) IOCOST_SOLUTIONS for "hwdb"; -ENXIO
 * when the solution's QOS or MODEL property is missing; -ENOMEM.
 */
int iocost_solution_pick(const UdevProps *props, const char *want, char **ret_name,
                         const char **ret_qos, const char **ret_model);

#define IOCOST_DEFAULT_SOLUTION "naive"
