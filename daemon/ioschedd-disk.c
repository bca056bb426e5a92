/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "ioschedd-disk-bus.h"
#include "ioschedd-disk.h"
#include "ioschedd-manager-bus.h"
#include "ioschedd-manager.h"
#include "log.h"
#include "report.h"
#include "util.h"

int disk_object_new(Manager *m, const char *name, DiskObject **ret) {
        _cleanup_(disk_object_freep) DiskObject *d = NULL;

        assert(m && name && ret);
        if (!disk_name_is_valid(name))
                return -EINVAL;
        d = calloc(1, sizeof(DiskObject));
        if (!d)
                return -ENOMEM;
        d->manager = m;
        d->name = strdup(name);
        if (!d->name)
                return -ENOMEM;
        *ret = TAKE_PTR(d);
        return 0;
}

DiskObject *disk_object_free(DiskObject *d) {
        if (!d)
                return NULL;
        assert(!d->running);
        disk_reading_done(&d->reading);
        for (int k = 0; k < _JOB_KIND_MAX; k++)
                completion_list_free(&d->want_waiting[k]);
        udev_props_free(d->want_props);
        strv_free(d->last_changes);
        strv_free(d->mismatched);
        strv_free(d->apply_unmet);
        free(d->last_error);
        for (size_t i = 0; i < d->n_holds; i++)
                hold_unref(d->holds[i]);
        free(d->holds);
        free(d->name);
        return mfree(d);
}

void disk_object_drop_wants(DiskObject *d) {
        assert(d);
        for (int k = 0; k < _JOB_KIND_MAX; k++) {
                const JobResult gone = { .kind = k, .name = d->name, .error = -ENODEV };

                d->want[k] = false;
                completion_list_done(&d->want_waiting[k], &gone);
        }
}

static int disk_object_start_next(DiskObject *d) {
        Manager *m = d->manager;
        JobKind kind;
        Job *j;

        if (d->running || d->gone)
                return 0;
        if (d->want[JOB_APPLY])
                kind = JOB_APPLY;
        else if (d->want[JOB_PLAN])
                kind = JOB_PLAN;
        else
                return 0;

        j = job_new(kind, d, d->name, m->config);
        if (!j || job_set_holds(j, d->holds, d->n_holds) < 0) {
                job_free(j);
                return -ENOMEM;
        }
        j->udev_props = TAKE_PTR(d->want_props);
        /* After a kernel uevent, a disk read before needs only what its policy looks at and
         * sets; in a storm each disk has three or four such events, and the rest of a full
         * read (thirty-odd sysfs lookups) is what competes with the kernel creating the disks.
         * While a storm lasts (many jobs queued), so does a disk's first job. udev's event
         * (its properties here) comes once the kernel is done with the disk (during a burst it
         * is held until the burst is over): read in full, since a partial read would be
         * followed by the refresh's full one (bench/storm: 2.8 jobs a disk instead of 2). */
        j->partial = kind == JOB_APPLY && !d->want_full && !j->udev_props &&
                     (disk_object_is_published(d) || m->n_running >= IOSCHEDD_STORM_JOBS);
        d->want_full = false;
        j->current = d->current_wanted;
        j->waiting = d->want_waiting[kind];
        d->want_waiting[kind] = (CompletionList) {};
        d->want[kind] = false;
        d->running = j;
        manager_submit_job(m, j);
        return 0;
}

int disk_object_want(DiskObject *d, JobKind kind, UdevProps **props, Completion *c) {
        int r;

        assert(d && kind >= 0 && kind < _JOB_KIND_MAX);
        if (d->gone)
                return -ENODEV;
        if (c) {
                r = completion_list_add(&d->want_waiting[kind], c);
                if (r < 0)
                        return r;
        }
        disk_object_keep_props(d, props);
        d->want[kind] = true;
        return disk_object_start_next(d);
}

int disk_object_queue(DiskObject *d, JobKind kind, UdevProps **props, Completion *c) {
        assert(d);
        if (!d->gone)
                d->want_full = true;
        return disk_object_want(d, kind, props, c);
}

void disk_object_keep_props(DiskObject *d, UdevProps **props) {
        assert(d);
        if (props && *props) {
                udev_props_free(d->want_props);
                d->want_props = TAKE_PTR(*props);
        }
}

void disk_object_hold(DiskObject *d, UdevProps **props) {
        assert(d && !d->gone);
        disk_object_keep_props(d, props);
        d->held = true;
}

int disk_object_release(DiskObject *d) {
        assert(d && d->held);
        d->held = false;
        /* In full: the CPUs are free now, and no refresh is needed after it. */
        return disk_object_queue(d, JOB_APPLY, NULL, NULL);
}

/* What LastChanges shows of a report: each written action's key, old and new value. Kept
 * instead of the report: most disks have nothing in it, and a report is a few hundred bytes. */
static int report_changes(const Plan *report, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;

        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];

                if (a->outcome != OUTCOME_WRITTEN)
                        continue;
                if (strv_extend(&l, a->key) < 0 || strv_extend(&l, strempty(a->current)) < 0 ||
                    strv_extend(&l, strempty(a->result ?: a->write)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static void disk_object_set_error(DiskObject *d, char *error) {
        if (!streq_ptr(d->last_error, error))
                d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_LAST_ERROR);
        free(d->last_error);
        d->last_error = error;
}

/* Whether a job left @a's key at its desired value: written (and read back as desired) or
 * already right (in a plan too). */
static bool action_at_policy(const Action *a) {
        return a->outcome == OUTCOME_WRITTEN || a->outcome == OUTCOME_SKIPPED;
}

/* Mismatched: the keys a job did not find or leave at their desired value, in its order;
 * after an apply, also what it left so. */
static void disk_object_take_mismatched(DiskObject *d, const Job *j) {
        _cleanup_(strv_freep) char **l = NULL;

        for (size_t i = 0; j->report && i < j->report->n_actions; i++)
                if (!action_at_policy(&j->report->actions[i]) &&
                    strv_extend(&l, j->report->actions[i].key) < 0) {
                        log_oom();      /* Mismatched stays as it was */
                        return;
                }
        if (j->kind == JOB_APPLY) {
                char **copy = strv_copy(l);

                if (!copy && l) {
                        log_oom();
                        return;
                }
                strv_free(d->apply_unmet);
                d->apply_unmet = copy;
        }
        if (strv_equal(d->mismatched, l))
                return;
        d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_MISMATCHED);
        strv_free(d->mismatched);
        d->mismatched = TAKE_PTR(l);
}

/* Drift corrected: values written back under the same settings as the disk's last reading,
 * which its last apply had left at their policy: another writer changed them since. Not a
 * first reading, not a changed policy (a reload, SetPolicy), not a retry of a write that had
 * failed (or that the kernel could not or might not take). */
static unsigned drift_corrected(const DiskObject *d, const Plan *report, bool same_policy) {
        unsigned n = 0;

        if (!same_policy)
                return 0;
        for (size_t i = 0; report && i < report->n_actions; i++)
                if (report->actions[i].outcome == OUTCOME_WRITTEN &&
                    !strv_contains(d->apply_unmet, report->actions[i].key))
                        n++;
        return n;
}

/* Swap in what a job read: the bus shows it; mark what a client would see change. */
static void disk_object_take_reading(DiskObject *d, Job *j) {
        Disk *old = d->reading.disk;
        uint64_t taken = 0;

        /* What a partial job did not read is the last reading's (unless this is another
         * device of the same name: then it stays unknown); either way the disk is read in
         * full once the events are over. A new diskseq alone is new media in the same
         * queue (a loop device's LOOP_CONFIGURE): the queue's attributes stay its own. */
        if (j->partial && old && streq_ptr(old->devnum, j->reading.disk->devnum))
                taken = disk_keep_unloaded(j->reading.disk, old);
        else
                d->current_read = !j->partial && j->current;
        d->dirty |= disk_diff(old, j->reading.disk) & ~taken;
        if (!resolved_equal(d->reading.resolved, j->reading.resolved))
                d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_DESIRED) | DISK_FIELD_BIT(DISK_OBJECT_RULES);
        disk_reading_done(&d->reading);
        d->reading = j->reading;
        j->reading = (DiskReading) {};
        d->partial = j->partial;
        if (d->partial)
                manager_arm_refresh(d->manager);
}

/* An apply's outcome: the log, Applied, the counters, LastError, LastChanges, LastApplied. */
static void disk_object_take_report(DiskObject *d, Job *j, bool same_policy) {
        static unsigned told_notes;     /* once in the daemon's life, not per disk and event */
        const ReportSummary *sum = &j->summary;
        Manager *m = d->manager;
        const Action *f = sum->first_failure;
        char **changes = NULL;

        report_log(d->name, j->report);
        report_log_notes(d->name, j->notes, &told_notes, LOG_NOTICE);
        if (sum->written > 0)
                manager_bus_emit_applied(m, d, j->report);
        manager_count_writes(m, sum, drift_corrected(d, j->report, same_policy));
        disk_object_set_error(d, f ? strdup_printf("%s: %s", f->key, strna(f->reason)) : NULL);
        if (report_changes(j->report, &changes) < 0)
                log_oom();      /* LastChanges stays as it was */
        else if (!strv_equal(d->last_changes, changes)) {
                d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_LAST_CHANGES);
                strv_free(d->last_changes);
                d->last_changes = changes;
        } else
                strv_free(changes);
        d->last_applied = manager_now(m, CLOCK_REALTIME);
        d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_LAST_APPLIED);
}

/* Each change of an apply that puts back a value the disk had at its last reading: someone
 * else changed it meanwhile (the log line says so, and who else writes the key). */
static void mark_changed_back(const DiskObject *d, Job *j) {
        const Disk *before = d->reading.disk;

        for (size_t i = 0; before && j->report && i < j->report->n_actions; i++) {
                Action *a = &j->report->actions[i];
                _cleanup_(action_done) Action then = {};

                if (a->outcome == OUTCOME_WRITTEN &&
                    plan_decide(before, j->reading.resolved, a->setting, NULL, &then) >= 0)
                        a->changed_back = then.type == ACTION_SKIP;
        }
}

static void disk_object_take_results(DiskObject *d, Job *j) {
        bool first = !disk_object_is_published(d);
        bool same_policy = !first && resolved_equal(d->reading.resolved, j->reading.resolved);

        if (j->kind == JOB_APPLY)
                mark_changed_back(d, j);
        disk_object_take_reading(d, j);
        if (j->kind == JOB_APPLY)
                disk_object_take_report(d, j, same_policy);
        disk_object_take_mismatched(d, j);
        if (first) {
                d->dirty = 0;   /* InterfacesAdded carries every property */
                disk_bus_emit_added(d);
        } else
                disk_bus_emit_changed(d);
}

void disk_object_job_finished(DiskObject *d, Job *j) {
        _cleanup_(job_freep) Job *job = j;
        JobResult result;
        bool gone;

        assert(d && j && d->running == j);
        d->running = NULL;
        gone = j->error < 0 ? ERRNO_IS_GONE(j->error) : j->summary.gone > 0;
        log_debug("%s: %s done in %llu ms (%u written, %u already right)%s", d->name,
                  j->kind == JOB_APPLY ? "apply" : "plan",
                  (unsigned long long) (j->usec_end - j->usec_start) / 1000, j->summary.written,
                  j->summary.skipped, j->error < 0 ? ", failed" : "");

        if (!d->gone && !gone && j->error >= 0)
                disk_object_take_results(d, j);
        else if (!d->gone && !gone) {
                log_warning_errno(j->error, "%s: cannot read the disk: %m", d->name);
                disk_object_set_error(d, strdup_printf("cannot read the disk: %s", strerror(-j->error)));
                if (disk_object_is_published(d))
                        disk_bus_emit_changed(d);
        }

        /* Whichever way the disk went (ENOENT of a file, ENXIO of a node), it is -ENODEV to
         * who waits. */
        result = (JobResult) { .kind = j->kind, .name = j->name, .error = gone ? -ENODEV : j->error,
                               .report = j->report, .summary = &j->summary };
        completion_list_done(&j->waiting, &result);

        if (gone && !d->gone) {
                log_debug("%s: gone while it was read or written.", d->name);
                manager_remove_disk(d->manager, d);     /* frees d: it runs nothing now */
        } else if (d->gone)
                disk_object_free(d);
        else
                (void) disk_object_start_next(d);
}
