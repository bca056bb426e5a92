/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "macro.h"

/*
 * The textfile for node_exporter (--metrics-file): the Prometheus text of the manager's state
 * (src/metrics.c formats it, as for `ioschedctl metrics`), written whole after something it
 * shows changed, at most once every IOSCHEDD_METRICS_USEC. The text goes to a hidden temporary
 * file in the target's directory (no ".prom" name, so a scrape never reads it half written),
 * which is renamed over the target. Text equal to what the file holds is not written again.
 * The file is first written when the first pass is over, as the bus name is first requested
 * then. It is removed when ioschedd stops: a stale one would show a state nobody keeps.
 */

#define IOSCHEDD_METRICS_USEC (5 * 1000000ULL)

typedef struct Manager Manager;
typedef struct MetricsFile MetricsFile;

/**
 * metrics_file_new() - the textfile of @m at @path; nothing is written yet
 * @m: the manager
 * @path: an absolute path
 * @ret: the textfile
 *
 * Return: 0, -EINVAL for a path that is not absolute or names no file, -ENOMEM.
 */
int metrics_file_new(Manager *m, const char *path, MetricsFile **ret);
/* Removes the file if it was written. */
MetricsFile *metrics_file_free(MetricsFile *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(MetricsFile *, metrics_file_free);

/* Something the file shows may have changed: write it when IOSCHEDD_METRICS_USEC have passed
 * since the last write (now, if none). Nothing before metrics_file_start(). NULL does nothing. */
void metrics_file_changed(MetricsFile *f);

/* The first pass over every disk is over: write the file now, and after every change from
 * then on. Before, it would show a part of the disks with the rest pending, a state no client
 * of the bus sees (the bus name is requested at the same point) and a scrape would take for
 * disks gone and back. NULL does nothing. */
void metrics_file_start(MetricsFile *f);

/* CLOCK_MONOTONIC usec when the timer writes next; 0: nothing is due. */
uint64_t metrics_file_due(const MetricsFile *f);

/**
 * metrics_file_flush() - write the file now if its text changed (what the timer does)
 * Return: 1 written, 0 the file holds this text already, or a negative errno (logged once
 * for a run of equal errors).
 */
int metrics_file_flush(MetricsFile *f);

/**
 * manager_metrics_format() - the manager's state in the Prometheus text format
 * @m: the manager
 * @out: where to write
 *
 * The disks are those on the bus, with the keys of their policy and Mismatched.
 *
 * Return: 0, -ENOMEM, -EIO (@out could not be written).
 */
int manager_metrics_format(Manager *m, FILE *out);
