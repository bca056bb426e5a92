/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "disk.h"
#include "macro.h"
#include "policy.h"
#include "writers.h"

/*
 * A loaded configuration. Resolved settings point into its rules, so a disk keeps a reference
 * to the one its Resolved came from. Only the event loop's thread touches the count; a job
 * holds a reference while a worker uses it.
 */
typedef struct Config {
        unsigned n_ref;
        Policy *policy;
        char **errors;          /* of the files that were left out */
        DiskLoad load;          /* what of a disk the policy and the writers look at */
        Writers *writers;       /* the host's other writers, looked for with the configuration */
        char **udev_keys;       /* load.udev_keys when both the policy and the writers name some */
} Config;

Config *config_ref(Config *c);
Config *config_unref(Config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_unref);

/**
 * config_load() - read the configuration
 * @root: where /etc/iosched.conf and the drop-in directories are ("/"); the other writers'
 *        files (udev rules, TuneD's profiles, ...) are looked for below it too
 * @single_file: --config: this file alone; NULL for the usual files
 * @ret: the configuration, with ret->errors listing what was left out
 *
 * Return: 0 or -ENOMEM.
 */
int config_load(const char *root, const char *single_file, Config **ret);

/**
 * config_log() - say what a loaded configuration is, once, where it was loaded
 * @c: the configuration
 * @in_force: whether it is now in force; at start a configuration is, with the files that
 *            have errors left out; a reload with errors is refused whole and the previous
 *            configuration stays
 */
void config_log(const Config *c, bool in_force);
