/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "disk.h"
#include "sysfs.h"
#include "udev-props.h"

/*
 * A disk read from sysfs (through sysfs.h, below its root) and udev's properties: identity,
 * flags, details and the current value of each attribute a DiskLoad asks for.
 */

/**
 * sysfs_load_disk() - read a disk's identity and current settings
 * @s: the tree
 * @name: kernel name; validated
 * @udev: udev's properties of the disk, filled at the edge (the environment of a udev RUN
 *        program, a libudev device), or NULL to read udev's database for the disk
 * @what: what to read; NULL for everything
 * @ret: the disk
 *
 * The files are looked up below the disk's directory when the caller pinned it
 * (sysfs_pin_disk()), else from sys/class/block.
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
