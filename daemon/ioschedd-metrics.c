/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <string.h>

#include "ioschedd-conf-write.h"
#include "ioschedd-manager.h"
#include "ioschedd-metrics.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

struct MetricsFile {
        Manager *manager;
        char *dir, *name;
        sd_event_source *timer;
        uint64_t last_write;    /* CLOCK_MONOTONIC usec; 0 never */
        char *text;             /* what the file holds; NULL before the first write */
        bool started;           /* the first pass is over: the file follows the state */
        bool written;
        int last_error;         /* of the last failed write, logged; 0 after a good one */
};

int metrics_file_new(Manager *m, const char *path, MetricsFile **ret) {
        _cleanup_(metrics_file_freep) MetricsFile *f = NULL;
        const char *slash;

        assert(m && path && ret);
        slash = strrchr(path, '/');
        if (path[0] != '/' || !slash[1])
                return -EINVAL;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->manager = m;
        f->dir = slash == path ? strdup("/") : strndup(path, slash - path);
        f->name = strdup(slash + 1);
        if (!f->dir || !f->name)
                return -ENOMEM;
        *ret = TAKE_PTR(f);
        return 0;
}

MetricsFile *metrics_file_free(MetricsFile *f) {
        if (!f)
                return NULL;
        sd_event_source_disable_unref(f->timer);
        if (f->written) {
                int r = dropin_remove(f->dir, f->name);
                if (r < 0)
                        log_warning_errno(r, "Cannot remove %s/%s: %m", f->dir, f->name);
        }
        free(f->text);
        free(f->dir);
        free(f->name);
        return mfree(f);
}

static int on_metrics_due(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) metrics_file_flush(userdata);
        return 0;
}

void metrics_file_changed(MetricsFile *f) {
        uint64_t now, when;
        int enabled = SD_EVENT_OFF, r;

        if (!f || !f->started)
                return;
        if (f->timer && sd_event_source_get_enabled(f->timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;         /* a write is due already; it takes the state it finds then */
        now = manager_now(f->manager, CLOCK_MONOTONIC);
        when = f->last_write > 0 ? MAX(now, f->last_write + IOSCHEDD_METRICS_USEC) : now;
        r = manager_arm_timer(f->manager, &f->timer, when, on_metrics_due, f, "metrics-file");
        if (r < 0)
                log_warning_errno(r, "Cannot arm the metrics file's timer, %s/%s is not updated: %m",
                                  f->dir, f->name);
}

void metrics_file_start(MetricsFile *f) {
        if (!f)
                return;
        f->started = true;
        metrics_file_changed(f);
}

uint64_t metrics_file_due(const MetricsFile *f) {
        uint64_t when;
        int enabled;

        assert(f);
        if (!f->timer || sd_event_source_get_enabled(f->timer, &enabled) < 0 || enabled == SD_EVENT_OFF ||
            sd_event_source_get_time(f->timer, &when) < 0)
                return 0;
        return when;
}

int metrics_file_flush(MetricsFile *f) {
        _cleanup_(freep) char *text = NULL;
        size_t size = 0;
        FILE *out;
        int r;

        assert(f);
        /* This pass takes the state as it is now: a write that was due is done. */
        if (f->timer)
                (void) sd_event_source_set_enabled(f->timer, SD_EVENT_OFF);
        out = open_memstream(&text, &size);
        if (!out)
                return log_oom();
        r = manager_metrics_format(f->manager, out);
        if (fclose(out) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return log_warning_errno(r, "Cannot format the metrics: %m");
        if (f->text && streq(f->text, text))
                return 0;

        r = dropin_write_atomic(f->dir, f->name, text);
        if (r < 0) {
                if (r != f->last_error)
                        log_warning_errno(r, "Cannot write the metrics to %s/%s: %m", f->dir, f->name);
                f->last_error = r;
                return r;
        }
        if (f->last_error != 0)
                log_info("Metrics written to %s/%s again.", f->dir, f->name);
        f->last_error = 0;
        f->written = true;
        f->last_write = manager_now(f->manager, CLOCK_MONOTONIC);
        free(f->text);
        f->text = TAKE_PTR(text);
        return 1;
}

/* The model of the manager's state: the disks on the bus, each with the keys of its policy. */
int manager_metrics_format(Manager *m, FILE *out) {
        _cleanup_(freep) MetricsDisk *disks = NULL;
        _cleanup_(freep) MetricsKey *keys = NULL;
        size_t n_disks = 0, n_keys = 0, k = 0;

        assert(m && out);
        for (size_t i = 0; i < m->n_disks; i++)
                if (disk_object_is_published(m->disks[i]) && m->disks[i]->reading.resolved)
                        n_keys += m->disks[i]->reading.resolved->n_settings;
        disks = calloc(MAX(m->n_disks, 1u), sizeof(*disks));
        keys = calloc(MAX(n_keys, 1u), sizeof(*keys));
        if (!disks || !keys)
                return -ENOMEM;

        for (size_t i = 0; i < m->n_disks; i++) {
                const DiskObject *d = m->disks[i];
                const Disk *disk = d->reading.disk;
                const Resolved *res = d->reading.resolved;

                if (!disk_object_is_published(d))
                        continue;
                disks[n_disks] = (MetricsDisk) {
                        .name = d->name,
                        .transport = transport_to_string(disk->transport),
                        .rotational = disk->rotational == 1,
                        /* As Current spells it: "none" for a queue without a choice. */
                        .scheduler = disk->scheduler ?: (disk->has_scheduler_file ? "none" : ""),
                        .last_applied_usec = d->last_applied,
                        .failed = !!d->last_error,
                        .keys = keys + k,
                        .n_holds = d->n_holds,
                        .writers = disk->writers,
                };
                for (size_t s = 0; res && s < res->n_settings; s++) {
                        const char *key = res->settings[s].setting->key;

                        keys[k++] = (MetricsKey) { key, strv_contains(d->mismatched, key) };
                        disks[n_disks].n_keys++;
                }
                n_disks++;
        }
        return metrics_format(&(Metrics) {
                .version = IOSCHED_VERSION,
                .writes_done = m->writes_done,
                .writes_skipped = m->writes_skipped,
                .write_errors = m->write_errors,
                .drift_corrected = m->drift_corrected,
                .config_errors = strv_length(m->config_errors),
                .disks_pending = manager_disks_pending(m),
                .disks = disks,
                .n_disks = n_disks,
        }, out);
}
