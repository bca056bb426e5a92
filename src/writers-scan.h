/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "writers.h"

/*
 * The host scan of the other writers: finds and reads their files below a root directory ("/"
 * in production, a fake tree in tests) through one directory fd, validates every name it takes
 * from a directory or a file before it becomes part of a path, and hands the text to the pure
 * parsers of writers.c.
 */

/* udev's rules directories, from the one that wins on equal file names to the one that loses. */
extern const char *const writers_udev_rules_dirs[];

/**
 * writers_scan() - find the other writers of a host
 * @root: the root directory
 * @ret: the writers found
 *
 * Reads, below @root: the rules of udev's directories (the first file of a name wins; one that
 * is empty or a link to /dev/null masks the name), dropping RUN writers whose program is not
 * installed; TuneD's active profile and post-loaded profile with their include= chains
 * (etc/tuned/active_profile, the profile directories of tuned-main.conf's profile_dirs, else
 * usr/lib/tuned and etc/tuned, and their profiles/ subdirectories), when TuneD is installed;
 * TLP's defaults.conf, tlp.d and tlp.conf when TLP is installed, by-id names resolved through
 * dev/disk/by-id; sysfsutils' etc/sysfs.conf and etc/sysfs.d; proc/cmdline. A file that cannot
 * be read is left out (logged at debug level): the scan is a report, never a reason to fail.
 *
 * Return: 0, -ENOMEM, or the negative errno of opening @root.
 */
int writers_scan(const char *root, Writers **ret);
