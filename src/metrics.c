/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <string.h>

#include "metrics.h"
#include "util.h"
#include "writers.h"

/* Prometheus' conventions: the iosched_ prefix, base units (seconds), _total on counters,
 * _info for a constant 1 that carries labels; labels only with bounded values (disk names,
 * the configuration's keys). */
typedef enum MetricId {
        METRIC_BUILD_INFO,
        METRIC_WRITES,
        METRIC_WRITES_SKIPPED,
        METRIC_WRITES_FAILED,
        METRIC_DRIFT_CORRECTED,
        METRIC_CONFIG_ERRORS,
        METRIC_DISKS_PENDING,
        METRIC_DISK_INFO,
        METRIC_DISK_LAST_APPLY,
        METRIC_DISK_APPLY_FAILED,
        METRIC_DESIRED_MISMATCH,
        METRIC_DISK_HOLDS,
        METRIC_OTHER_WRITERS,
        _METRIC_MAX,
} MetricId;

static const struct {
        const char *name, *type, *help;
} metric_table[_METRIC_MAX] = {
        [METRIC_BUILD_INFO] = { "iosched_build_info", "gauge",
                                "The version of iosched that reports, as a label; always 1." },
        [METRIC_WRITES] = { "iosched_writes_total", "counter",
                            "Values written to the kernel because they differed from the policy." },
        [METRIC_WRITES_SKIPPED] = { "iosched_writes_skipped_total", "counter",
                                    "Values not written because the kernel had them already." },
        [METRIC_WRITES_FAILED] = { "iosched_writes_failed_total", "counter",
                                   "Writes the kernel refused, or whose value did not stick." },
        [METRIC_DRIFT_CORRECTED] = { "iosched_drift_corrected_total", "counter",
                                     "Values written back after another writer changed them." },
        [METRIC_CONFIG_ERRORS] = { "iosched_config_errors", "gauge",
                                   "Errors found in the configuration the last time it was read." },
        [METRIC_DISKS_PENDING] = { "iosched_disks_pending", "gauge",
                                   "Disks being read or written, or waiting to be." },
        [METRIC_DISK_INFO] = { "iosched_disk_info", "gauge",
                               "A disk ioschedd manages, with its transport and scheduler; always 1." },
        [METRIC_DISK_LAST_APPLY] = { "iosched_disk_last_apply_timestamp_seconds", "gauge",
                                     "When the disk was last brought to its policy (Unix time)." },
        [METRIC_DISK_APPLY_FAILED] = { "iosched_disk_apply_failed", "gauge",
                                       "1 when the disk's last apply reported an error." },
        [METRIC_DESIRED_MISMATCH] = { "iosched_desired_mismatch", "gauge",
                                      "1 when the key's value differs from the policy's, as last read." },
        [METRIC_DISK_HOLDS] = { "iosched_disk_holds", "gauge",
                                "Holds in force on the disk (the Hold method, ioschedctl hold)." },
        [METRIC_OTHER_WRITERS] = { "iosched_other_writers", "gauge",
                                   "Other programs that write the key of the disk, or may, by owner "
                                   "(udev-rules, tuned, tlp, sysfsutils, systemd-iocost)." },
};

/* A label value: backslash, double quote and newline escaped, as the text format wants;
 * bytes that are no UTF-8 become U+FFFD. */
static void label_value(FILE *f, const char *s) {
        for (const char *p = s ?: ""; *p; p++) {
                if (*p == '\\' || *p == '"')
                        fputc('\\', f), fputc(*p, f);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if ((unsigned char) *p < 0x80)
                        fputc(*p, f);
                else {
                        size_t n = utf8_char_len(p);

                        if (n == 0)
                                fputs("\xef\xbf\xbd", f);
                        else {
                                fwrite(p, 1, n, f);
                                p += n - 1;
                        }
                }
        }
}

static void family(FILE *f, MetricId id) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", metric_table[id].name, metric_table[id].help,
                metric_table[id].name, metric_table[id].type);
}

/* NAME{disk="...": a sample's start; label() adds labels, values end it. */
static void sample_start(FILE *f, MetricId id, const MetricsDisk *d) {
        fprintf(f, "%s{disk=\"", metric_table[id].name);
        label_value(f, d->name);
        fputc('"', f);
}

static void label(FILE *f, const char *name, const char *value) {
        fprintf(f, ",%s=\"", name);
        label_value(f, value);
        fputc('"', f);
}

static int compare_disks(const void *a, const void *b) {
        const MetricsDisk *x = *(const MetricsDisk * const *) a, *y = *(const MetricsDisk * const *) b;

        return strverscmp(x->name ?: "", y->name ?: "");
}

/* A disk's other writers counted by (key, owner), one sample each in the order each pair first
 * appears; a writer that writes nothing (a dead elevator=) is not counted. */
static int other_writers_samples(FILE *f, const MetricsDisk *d) {
        const OtherWriters *o = d->writers;

        for (size_t i = 0; o && i < o->n; i++) {
                _cleanup_(freep) char *key = NULL;
                const Writer *w = &o->writers[i];
                size_t n = 0;
                bool seen = false;

                if (w->dead)
                        continue;
                key = writer_key(w);
                if (!key)
                        return -ENOMEM;
                for (size_t j = 0; j < o->n && !seen; j++) {
                        const Writer *x = &o->writers[j];
                        _cleanup_(freep) char *k = NULL;

                        if (x->dead || x->kind != w->kind)
                                continue;
                        k = writer_key(x);
                        if (!k)
                                return -ENOMEM;
                        if (!streq(k, key))
                                continue;
                        seen = j < i;
                        n++;
                }
                if (seen)
                        continue;
                sample_start(f, METRIC_OTHER_WRITERS, d);
                label(f, "key", key);
                label(f, "owner", writer_kind_to_string(w->kind));
                fprintf(f, "} %zu\n", n);
        }
        return 0;
}

int metrics_format(const Metrics *m, FILE *f) {
        _cleanup_(freep) const MetricsDisk **disks = NULL;

        if (m->n_disks > 0) {
                disks = calloc(m->n_disks, sizeof(*disks));
                if (!disks)
                        return -ENOMEM;
                for (size_t i = 0; i < m->n_disks; i++)
                        disks[i] = &m->disks[i];
                qsort(disks, m->n_disks, sizeof(*disks), compare_disks);
        }

        family(f, METRIC_BUILD_INFO);
        fprintf(f, "%s{version=\"", metric_table[METRIC_BUILD_INFO].name);
        label_value(f, m->version);
        fputs("\"} 1\n", f);

        const struct {
                MetricId id;
                uint64_t value;
        } globals[] = {
                { METRIC_WRITES, m->writes_done },
                { METRIC_WRITES_SKIPPED, m->writes_skipped },
                { METRIC_WRITES_FAILED, m->write_errors },
                { METRIC_DRIFT_CORRECTED, m->drift_corrected },
                { METRIC_CONFIG_ERRORS, m->config_errors },
                { METRIC_DISKS_PENDING, m->disks_pending },
        };
        for (size_t i = 0; i < ELEMENTSOF(globals); i++) {
                family(f, globals[i].id);
                fprintf(f, "%s %" PRIu64 "\n", metric_table[globals[i].id].name, globals[i].value);
        }

        family(f, METRIC_DISK_INFO);
        for (size_t i = 0; i < m->n_disks; i++) {
                sample_start(f, METRIC_DISK_INFO, disks[i]);
                label(f, "transport", disks[i]->transport);
                label(f, "rotational", disks[i]->rotational ? "1" : "0");
                label(f, "scheduler", disks[i]->scheduler);
                fputs("} 1\n", f);
        }
        family(f, METRIC_DISK_LAST_APPLY);
        for (size_t i = 0; i < m->n_disks; i++)
                if (disks[i]->last_applied_usec > 0) {
                        sample_start(f, METRIC_DISK_LAST_APPLY, disks[i]);
                        fprintf(f, "} %" PRIu64 ".%06" PRIu64 "\n", disks[i]->last_applied_usec / 1000000,
                                disks[i]->last_applied_usec % 1000000);
                }
        family(f, METRIC_DISK_APPLY_FAILED);
        for (size_t i = 0; i < m->n_disks; i++) {
                sample_start(f, METRIC_DISK_APPLY_FAILED, disks[i]);
                fprintf(f, "} %d\n", disks[i]->failed);
        }
        family(f, METRIC_DESIRED_MISMATCH);
        for (size_t i = 0; i < m->n_disks; i++)
                for (size_t k = 0; k < disks[i]->n_keys; k++) {
                        sample_start(f, METRIC_DESIRED_MISMATCH, disks[i]);
                        label(f, "key", disks[i]->keys[k].key);
                        fprintf(f, "} %d\n", disks[i]->keys[k].mismatch);
                }

        family(f, METRIC_DISK_HOLDS);
        for (size_t i = 0; i < m->n_disks; i++) {
                sample_start(f, METRIC_DISK_HOLDS, disks[i]);
                fprintf(f, "} %zu\n", disks[i]->n_holds);
        }
        family(f, METRIC_OTHER_WRITERS);
        for (size_t i = 0; i < m->n_disks; i++) {
                int r = other_writers_samples(f, disks[i]);

                if (r < 0)
                        return r;
        }

        return ferror(f) ? -EIO : 0;
}
