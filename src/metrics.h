/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "writers.h"

/*
 * The Prometheus text format of what iosched knows: one formatter for `ioschedctl metrics`
 * (which fills the model from the bus) and ioschedd's textfile (which fills it from its own
 * state), so every metric name is spelled here and nowhere else. Pure: it writes to a FILE
 * it is given.
 */

/* One key that a disk's policy sets. */
typedef struct MetricsKey {
        const char *key;                /* "scheduler", "iosched.low_latency", "io.cost.qos.rlat" */
        bool mismatch;                  /* the value read differs from the desired one */
} MetricsKey;

typedef struct MetricsDisk {
        const char *name;               /* the kernel name */
        const char *transport;          /* "nvme", "sata", ... "" unknown */
        bool rotational;
        const char *scheduler;          /* "" for a queue without a scheduler file */
        uint64_t last_applied_usec;     /* CLOCK_REALTIME; 0: never */
        bool failed;                    /* the last apply of the disk reported an error */
        const MetricsKey *keys;
        size_t n_keys;
        size_t n_holds;                 /* holds in force on the disk */
        const OtherWriters *writers;    /* the other programs that write its keys; NULL: none */
} MetricsDisk;

typedef struct Metrics {
        const char *version;
        uint64_t writes_done, writes_skipped, write_errors;
        uint64_t drift_corrected;       /* of writes_done: values another writer had changed */
        size_t config_errors;
        uint64_t disks_pending;
        const MetricsDisk *disks;       /* in any order: written sorted by name */
        size_t n_disks;
} Metrics;

/**
 * metrics_format() - write @m in the Prometheus text format (version 0.0.4)
 * @m: the model; the strings may hold anything (label values are escaped, bytes that are no
 *     UTF-8 become U+FFFD)
 * @f: where to write
 *
 * Every family is written with its HELP and TYPE lines, also one without samples (no disk
 * yet), so a scrape shows the same families whatever the state.
 *
 * Return: 0, -ENOMEM, or -EIO when @f reports a write error.
 */
int metrics_format(const Metrics *m, FILE *f);
