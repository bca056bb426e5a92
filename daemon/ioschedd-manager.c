/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <limits.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>

#include "conf.h"
#include "engine.h"
#include "hashmap.h"
#include "ioschedd-disk-bus.h"
#include "ioschedd-manager-bus.h"
#include "ioschedd-manager.h"
#include "log.h"
#include "report.h"
#include "sysfs.h"
#include "util.h"


Config *config_ref(Config *c) {
        if (c)
                c->n_ref++;
        return c;
}

Config *config_unref(Config *c) {
        if (!c || --c->n_ref > 0)
                return NULL;
        policy_free(c->policy);
        strv_free(c->errors);
        free(c);
        return NULL;
}

bool manager_config_is_single_file(const Manager *m) {
        return !!m->config_file;
}

int manager_load_config(Manager *m, Config **ret) {
        _cleanup_(config_unrefp) Config *c = NULL;
        int r;

        c = calloc(1, sizeof(Config));
        if (!c)
                return -ENOMEM;
        c->n_ref = 1;
        r = conf_load(m->config_root, m->config_file, &c->policy, &c->errors);
        if (r < 0)
                return r;
        policy_disk_load(c->policy, &c->load);
        *ret = TAKE_PTR(c);
        return 0;
}

/* Completions */

void completion_init(Completion *c, const CompletionOps *ops) {
        assert(c && ops && ops->done);
        *c = (Completion) { .ops = ops, .n_ref = 1 };
}

Completion *completion_ref(Completion *c) {
        if (c)
                c->n_ref++;
        return c;
}

Completion *completion_unref(Completion *c) {
        if (!c)
                return NULL;
        assert(c->n_ref > 0);
        if (--c->n_ref == 0 && c->ops->free)
                c->ops->free(c);
        return NULL;
}

static void completion_maybe_done(Completion *c) {
        if (!c->armed || c->n_pending > 0)
                return;
        c->armed = false;       /* done once */
        c->ops->done(c);
}

void completion_arm(Completion *c) {
        assert(c);
        c->armed = true;
        completion_maybe_done(c);
}

static void completion_job_done(Completion *c, const JobResult *result) {
        assert(c->n_pending > 0);
        c->n_pending--;
        if (c->ops->job_done)
                c->ops->job_done(c, result);
        completion_maybe_done(c);
}

static void completions_free(Completion **l, size_t n) {
        for (size_t i = 0; i < n; i++)
                completion_unref(l[i]);
        free(l);
}

/* Disk objects */

static DiskObject *disk_object_free(DiskObject *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(DiskObject *, disk_object_free);

static DiskObject *disk_object_free(DiskObject *d) {
        if (!d)
                return NULL;
        assert(!d->running);
        for (int k = 0; k < _JOB_KIND_MAX; k++)
                completions_free(d->want_waiting[k], d->n_want_waiting[k]);
        strv_free(d->want_props);
        strv_free(d->last_changes);
        resolved_free(d->resolved);
        config_unref(d->config);
        disk_free(d->disk);
        free(d->last_error);
        free(d->name);
        free(d);
        return NULL;
}

DiskObject *manager_find_disk(Manager *m, const char *name) {
        assert(m && name);
        return hashmap_get(m->disks_by_name, name);
}

static int manager_add_disk(Manager *m, const char *name, DiskObject **ret) {
        _cleanup_(disk_object_freep) DiskObject *d = NULL;
        DiskObject **a;
        int r;

        assert(m && name && !manager_find_disk(m, name));
        if (!disk_name_is_valid(name))
                return -EINVAL;
        d = calloc(1, sizeof(DiskObject));
        if (!d)
                return -ENOMEM;
        d->manager = m;
        d->name = strdup(name);
        if (!d->name)
                return -ENOMEM;
        if (m->n_disks == m->n_disks_allocated) {
                size_t n = MAX(m->n_disks_allocated * 2, (size_t) 64);

                a = reallocarray(m->disks, n, sizeof(DiskObject *));
                if (!a)
                        return -ENOMEM;
                m->disks = a;
                m->n_disks_allocated = n;
        }
        r = hashmap_put(m->disks_by_name, d->name, d);
        if (r < 0)
                return r;
        d->index = m->n_disks;
        m->disks[m->n_disks++] = d;
        if (m->on_status_changed)
                m->on_status_changed(m);
        *ret = TAKE_PTR(d);
        return 0;
}

/* Answer what waits for work on a disk that is gone, without running it. */
static void disk_object_drop_wants(DiskObject *d) {
        for (int k = 0; k < _JOB_KIND_MAX; k++) {
                const JobResult gone = { .kind = k, .name = d->name, .error = -ENODEV };
                Completion **l = TAKE_PTR(d->want_waiting[k]);
                size_t n = d->n_want_waiting[k];

                d->n_want_waiting[k] = 0;
                d->want[k] = false;
                for (size_t i = 0; i < n; i++)
                        completion_job_done(l[i], &gone);
                completions_free(l, n);
        }
}

static void manager_remove_disk(Manager *m, DiskObject *d) {
        assert(m && d && !d->gone && m->disks[d->index] == d);
        if (d->disk) {
                /* Published once it was read: take it off the bus. */
                disk_bus_emit_removed(d);
                log_info("%s: removed.", d->name);
        }
        (void) hashmap_remove(m->disks_by_name, d->name);
        /* The order of m->disks means nothing: the last one takes the hole. */
        m->disks[d->index] = m->disks[--m->n_disks];
        m->disks[d->index]->index = d->index;
        d->gone = true;
        if (d->held) {
                d->held = false;
                m->n_held--;
        }
        disk_object_drop_wants(d);
        if (m->on_status_changed)
                m->on_status_changed(m);
        if (!d->running)
                disk_object_free(d);
}

/* Jobs */

static Job *job_free(Job *j) {
        if (!j)
                return NULL;
        completions_free(j->waiting, j->n_waiting);
        free(j->name);
        strv_free(j->udev_props);
        config_unref(j->config);
        disk_free(j->disk_read);
        resolved_free(j->resolved);
        plan_free(j->report);
        free(j);
        return NULL;
}

/* On a worker thread: everything that blocks on sysfs. */
static void job_run(WorkItem *item, void *thread_data) {
        Job *j = container_of(item, Job, item);
        Sysfs *s = thread_data;
        int r;

        j->usec_start = now_usec();
        DiskLoad l = j->config->load;

        /* A partial job reads what the policy needs; with udev's properties here, the identity
         * too (it costs no lookup but "device"). */
        l.identity = l.identity || j->udev_props;
        r = sysfs_load_disk(s, j->name, j->udev_props, j->partial ? &l : NULL, &j->disk_read);
        if (r < 0)
                goto finish;
        if (j->disk_read->partition) {
                r = -ENODEV;    /* renamed or re-created as a partition: not ours */
                goto finish;
        }
        r = policy_resolve(j->config->policy, j->disk_read, &j->resolved);
        if (r < 0)
                goto finish;
        if (j->kind == JOB_APPLY)
                r = apply_disk(s, j->disk_read, j->resolved, APPLY_LOCK, &j->report, &j->stats);
        else
                r = plan_build(j->disk_read, j->resolved, &j->report);
finish:
        j->error = r < 0 ? r : 0;
        j->usec_end = now_usec();
}

static int worker_thread_init(void *userdata, void **ret) {
        Manager *m = userdata;
        Sysfs *s;
        int r;

        r = sysfs_new(m->sysfs_root, &s);
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}

static void worker_thread_done(void *thread_data) {
        sysfs_free(thread_data);
}

static void job_finished(Manager *m, Job *j);

static int disk_object_start_next(DiskObject *d) {
        Manager *m = d->manager;
        JobKind kind;
        Job *j;
        int r;

        if (d->running || d->gone)
                return 0;
        if (d->want[JOB_APPLY])
                kind = JOB_APPLY;
        else if (d->want[JOB_PLAN])
                kind = JOB_PLAN;
        else
                return 0;

        j = calloc(1, sizeof(Job));
        if (!j)
                return -ENOMEM;
        j->item.run = job_run;
        j->kind = kind;
        j->disk = d;
        j->name = strdup(d->name);
        if (!j->name) {
                free(j);
                return -ENOMEM;
        }
        j->udev_props = TAKE_PTR(d->want_props);
        j->config = config_ref(m->config);
        /* After a uevent, a disk read before needs only what its policy looks at and sets;
         * in a storm each disk has three or four such events, and the rest of a full read
         * (thirty-odd sysfs lookups) is what competes with the kernel creating the disks.
         * While a storm lasts (many jobs queued), so does a disk's first job. */
        j->partial = kind == JOB_APPLY && !d->want_full &&
                     (d->disk || m->n_running >= IOSCHEDD_STORM_JOBS);
        d->want_full = false;
        j->waiting = TAKE_PTR(d->want_waiting[kind]);
        j->n_waiting = d->n_want_waiting[kind];
        d->n_want_waiting[kind] = 0;
        d->want[kind] = false;
        d->running = j;
        m->n_running++;

        r = worker_pool_submit(m->pool, &j->item);
        if (r < 0) {
                log_error_errno(r, "%s: cannot queue work: %m", d->name);
                j->error = r;
                job_finished(m, j);
        }
        return 0;
}

/* Work for a disk, as a uevent asks for it: what the policy needs is read (disk_object_start_next()). */
static int disk_object_want(DiskObject *d, JobKind kind, char * const *props, Completion *c) {
        assert(d && kind >= 0 && kind < _JOB_KIND_MAX);
        if (d->gone)
                return -ENODEV;
        if (c) {
                Completion **a = reallocarray(d->want_waiting[kind], d->n_want_waiting[kind] + 1,
                                              sizeof(Completion *));
                if (!a)
                        return -ENOMEM;
                d->want_waiting[kind] = a;
                a[d->n_want_waiting[kind]++] = completion_ref(c);
                c->n_pending++;
        }
        if (props) {
                char **copy = strv_copy(props);
                if (!copy)
                        return -ENOMEM;
                strv_free(d->want_props);
                d->want_props = copy;
        }
        d->want[kind] = true;
        return disk_object_start_next(d);
}

int disk_object_queue(DiskObject *d, JobKind kind, char * const *props, Completion *c) {
        assert(d);
        if (!d->gone)
                d->want_full = true;
        return disk_object_want(d, kind, props, c);
}

int manager_queue_all(Manager *m, Completion *c) {
        int r;

        for (size_t i = 0; i < m->n_disks; i++) {
                r = disk_object_queue(m->disks[i], JOB_APPLY, NULL, c);
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

/* Said once in the daemon's life, not per disk and event. */
static void log_iocost_once(const DiskObject *d, const Plan *report) {
        static bool told_two_writers, told_iocost_na;

        if (!told_two_writers && report_iocost_two_writers(d->disk, report)) {
                log_warning("%s: systemd's 90-iocost.rules also writes io.cost.qos and io.cost.model for this "
                            "disk on every udev event; turn one of the two off (see iosched.conf(5)).", d->name);
                told_two_writers = true;
        }
        for (size_t i = 0; i < report->n_actions && !told_iocost_na; i++)
                if (report->actions[i].attr->file != ATTR_FILE_QUEUE &&
                    report->actions[i].outcome == OUTCOME_UNSUPPORTED && d->disk &&
                    d->disk->iocost[ATTR_FILE_IOCOST_QOS].err == -ENOENT) {
                        log_full_errno(LOG_NOTICE, 0, "iocost.* keys are not applicable on this system: no "
                                       "cgroup v2 hierarchy with the io controller.");
                        told_iocost_na = true;
                }
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

/* A oneshot CLOCK_MONOTONIC timer at @usec, made on first use. */
static int manager_arm_timer(Manager *m, sd_event_source **s, uint64_t usec,
                             sd_event_time_handler_t handler, const char *description) {
        int r;

        if (!*s) {
                r = sd_event_add_time(m->event, s, CLOCK_MONOTONIC, usec, 0, handler, m);
                if (r >= 0)
                        (void) sd_event_source_set_description(*s, description);
        } else
                r = sd_event_source_set_time(*s, usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(*s, SD_EVENT_ONESHOT);
        return r;
}

static int on_refresh(sd_event_source *s, uint64_t usec, void *userdata);

static void manager_arm_refresh(Manager *m) {
        uint64_t now = now_usec();
        int r;

        if (m->refresh_since == 0)
                m->refresh_since = now;
        r = manager_arm_timer(m, &m->refresh_source, now + IOSCHEDD_REFRESH_USEC, on_refresh, "refresh");
        if (r < 0)
                log_warning_errno(r, "Cannot arm the refresh timer, disks read in part stay so "
                                  "until the next full read: %m");
}

/* Disks read in part during a storm are read in full when it is over: once no job has run
 * for IOSCHEDD_REFRESH_USEC, or IOSCHEDD_REFRESH_MAX_USEC after the first such disk if the
 * events never stop (a plan, which writes nothing: what the policy sets was read and applied
 * already). Until then the bus shows the last full reading of what no rule sets. */
static int on_refresh(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        size_t n = 0;

        if (m->n_running > 0 && now_usec() - m->refresh_since < IOSCHEDD_REFRESH_MAX_USEC) {
                manager_arm_refresh(m);
                return 0;
        }
        m->refresh_since = 0;
        for (size_t i = 0; i < m->n_disks; i++) {
                DiskObject *d = m->disks[i];

                if (!d->partial)
                        continue;
                d->partial = false;
                if (disk_object_queue(d, JOB_PLAN, NULL, NULL) == -ENOMEM) {
                        log_oom();
                        break;
                }
                n++;
        }
        log_debug("Reading %zu disk(s) read in part during events in full.", n);
        return 0;
}

/* Swap in what a job read; mark what a client would see change. */
static void disk_object_take_results(Manager *m, DiskObject *d, Job *j, const ReportSummary *sum) {
        bool first = !d->disk;
        uint64_t usec, taken = 0;

        /* What a partial job did not read is the last reading's (unless this is another
         * device of the same name: then it stays unknown); either way the disk is read in
         * full once the events are over. A new diskseq alone is new media in the same
         * queue (a loop device's LOOP_CONFIGURE): the queue's attributes stay its own. */
        if (j->partial && d->disk && streq_ptr(d->disk->devnum, j->disk_read->devnum))
                taken = disk_keep_unloaded(j->disk_read, d->disk);
        d->dirty |= disk_diff(d->disk, j->disk_read) & ~taken;
        d->partial = j->partial;
        if (d->partial)
                manager_arm_refresh(m);
        disk_free(d->disk);
        d->disk = TAKE_PTR(j->disk_read);
        if (!resolved_equal(d->resolved, j->resolved))
                d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_DESIRED) | DISK_FIELD_BIT(DISK_OBJECT_RULES);
        resolved_free(d->resolved);
        d->resolved = TAKE_PTR(j->resolved);
        config_unref(d->config);
        d->config = config_ref(j->config);

        if (j->kind == JOB_APPLY) {
                const Action *f = sum->first_failure;

                report_log(d->name, j->report);
                log_iocost_once(d, j->report);
                if (sum->written > 0)
                        manager_bus_emit_applied(m, d, j->report);
                m->writes_done += j->stats.written;
                m->writes_skipped += j->stats.skipped;
                m->write_errors += j->stats.failed;
                if (j->stats.written + j->stats.skipped + j->stats.failed > 0)
                        m->counters_changed = true;
                disk_object_set_error(d, f ? strdup_printf("%s: %s", f->key, strna(f->reason)) : NULL);
                char **changes = NULL;

                if (report_changes(j->report, &changes) < 0)
                        log_oom();      /* LastChanges stays as it was */
                else if (!strv_equal(d->last_changes, changes)) {
                        d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_LAST_CHANGES);
                        strv_free(d->last_changes);
                        d->last_changes = changes;
                } else
                        strv_free(changes);
                if (sd_event_now(m->event, CLOCK_REALTIME, &usec) < 0)
                        usec = now_usec();
                d->last_applied = usec;
                d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_LAST_APPLIED);
        }
        if (first) {
                d->dirty = 0;   /* InterfacesAdded carries every property */
                disk_bus_emit_added(d);
        } else
                disk_bus_emit_changed(d);
}

/* On the loop's thread: publish what a worker found, tell who waits. */
static void job_finished(Manager *m, Job *j) {
        DiskObject *d = j->disk;
        ReportSummary sum;
        JobResult result;
        bool gone;

        assert(m && d->running == j && m->n_running > 0);
        d->running = NULL;
        m->n_running--;
        report_summarize(j->report, &sum);
        gone = j->error < 0 ? ERRNO_IS_GONE(j->error) : sum.gone;
        log_debug("%s: %s done in %llu ms (%u written, %u already right)%s", d->name,
                  j->kind == JOB_APPLY ? "apply" : "plan",
                  (unsigned long long) (j->usec_end - j->usec_start) / 1000, j->stats.written,
                  j->stats.skipped, j->error < 0 ? ", failed" : "");

        if (!d->gone && !gone && j->error >= 0)
                disk_object_take_results(m, d, j, &sum);
        else if (!d->gone && !gone) {
                log_warning_errno(j->error, "%s: cannot read the disk: %m", d->name);
                disk_object_set_error(d, strdup_printf("cannot read the disk: %s", strerror(-j->error)));
                if (d->disk)
                        disk_bus_emit_changed(d);
        }

        /* Whichever way the disk went (ENOENT of a file, ENXIO of a node), it is -ENODEV to
         * who waits. */
        result = (JobResult) { .kind = j->kind, .name = j->name, .error = gone ? -ENODEV : j->error,
                               .report = j->report };
        for (size_t i = 0; i < j->n_waiting; i++)
                completion_job_done(j->waiting[i], &result);

        if (gone && !d->gone) {
                log_debug("%s: gone while it was read or written.", d->name);
                manager_remove_disk(m, d);      /* frees d: it runs nothing now */
        } else if (d->gone)
                disk_object_free(d);
        else
                (void) disk_object_start_next(d);

        job_free(j);
}

static int on_worker_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        WorkItem *l = worker_pool_take_done(m->pool);

        while (l) {
                WorkItem *next = l->next;
                Job *j = container_of(l, Job, item);

                if (l->error < 0)
                        j->error = l->error;    /* not run: no worker thread could start */
                job_finished(m, j);
                l = next;
        }
        if (m->counters_changed) {
                manager_bus_emit_counters(m);
                m->counters_changed = false;
                if (m->on_status_changed)
                        m->on_status_changed(m);
        }
        return 0;
}

/* Rescan: after the monitor lost events, and at start. */
static int manager_rescan(Manager *m, Completion *c) {
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        r = sysfs_new(m->sysfs_root, &s);
        if (r < 0)
                return log_error_errno(r, "Cannot open %s: %m", m->sysfs_root);
        r = sysfs_list_disks(s, &names);
        if (r < 0)
                return log_error_errno(r, "Cannot list disks: %m");

        /* Mark what is still there; the others went away while events were lost. */
        for (char **n = names; *n; n++) {
                DiskObject *d = manager_find_disk(m, *n);

                if (!d) {
                        r = manager_add_disk(m, *n, &d);
                        if (r == -EINVAL)
                                continue;
                        if (r < 0)
                                return log_error_errno(r, "Cannot add disk %s: %m", *n);
                }
                d->seen = true;
        }
        for (size_t i = m->n_disks; i > 0; i--) {
                DiskObject *d = m->disks[i - 1];

                if (!d->seen)
                        manager_remove_disk(m, d);
                else
                        d->seen = false;
        }
        return manager_queue_all(m, c) < 0 ? log_oom() : 0;
}

/* The udev properties a job reads (udev_disk_keys): libudev builds the list of all of a
 * device's properties anew for each event, and that list is most of what an event costs us;
 * the list only when the policy sets iocost keys (the hwdb's IOCOST_* properties). */
static int device_props(struct udev_device *dev, bool all, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        struct udev_list_entry *e;
        size_t n = 0;
        int r;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        if (!all) {
                for (const char *const *k = udev_disk_keys; *k; k++) {
                        const char *v = udev_device_get_property_value(dev, *k);

                        if (v && strv_push(&l, strdup_printf("%s=%s", *k, v)) < 0)
                                return -ENOMEM;
                }
                *ret = TAKE_PTR(l);
                return 0;
        }
        udev_list_entry_foreach(e, udev_device_get_properties_list_entry(dev)) {
                /* Bound what one event can make us keep. */
                if (++n > 256)
                        break;
                r = strv_push(&l, strdup_printf("%s=%s", udev_list_entry_get_name(e),
                                                strempty(udev_list_entry_get_value(e))));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/*
 * A burst of the kernel's uevents is disks being created (a storm: hundreds at boot, a
 * multipath rescan). Each new disk is brought to policy on its kernel uevent; udev's events
 * for it come later, while the burst goes on, and each would read the disk again to put back
 * what another rule wrote. Those reads take kernfs's lock against the kernel creating the next
 * disks, and with 2 CPUs they made the creation itself a third slower (bench/storm). So during
 * a burst only a disk's kernel "add" is acted on at once; its kernel "change" and udev's
 * events are held (udev's properties kept for the job), and every held disk is read in full
 * and checked once the burst is over: IOSCHEDD_BURST_QUIET_USEC without a kernel uevent, or
 * IOSCHEDD_BURST_MAX_USEC after the first was held.
 */
static bool manager_in_burst(Manager *m, uint64_t now) {
        return m->burst_events >= IOSCHEDD_BURST_EVENTS && now - m->burst_last < IOSCHEDD_BURST_QUIET_USEC;
}

static int on_burst_over(sd_event_source *s, uint64_t usec, void *userdata);

static void manager_arm_burst_over(Manager *m) {
        uint64_t when = MIN(m->burst_last + IOSCHEDD_BURST_QUIET_USEC, m->held_since + IOSCHEDD_BURST_MAX_USEC);
        int r;

        r = manager_arm_timer(m, &m->burst_source, when, on_burst_over, "burst-over");
        if (r < 0) {
                log_warning_errno(r, "Cannot arm the end of a uevent burst, checking the held disks now: %m");
                m->burst_events = 0;    /* no holding without the timer */
                (void) on_burst_over(NULL, 0, m);
        }
}

static int on_burst_over(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        uint64_t now = now_usec();
        size_t n = 0;

        if (m->n_held == 0)
                return 0;
        if (manager_in_burst(m, now) && now - m->held_since < IOSCHEDD_BURST_MAX_USEC) {
                manager_arm_burst_over(m);
                return 0;
        }
        for (size_t i = 0; i < m->n_disks; i++) {
                DiskObject *d = m->disks[i];

                if (!d->held)
                        continue;
                d->held = false;
                n++;
                /* In full: the CPUs are free now, and no refresh is needed after it. */
                if (disk_object_queue(d, JOB_APPLY, NULL, NULL) == -ENOMEM)
                        log_oom();      /* the next event, the verify timer or a rescan reads it */
        }
        m->n_held = 0;
        log_debug("A burst of kernel uevents is over: checking %zu disk(s) udev had events for.", n);
        return 0;
}

static void manager_count_kernel_event(Manager *m) {
        uint64_t now = now_usec();

        if (now - m->burst_last >= IOSCHEDD_BURST_QUIET_USEC)
                m->burst_events = 0;
        m->burst_last = now;
        if (m->burst_events < UINT_MAX)
                m->burst_events++;
        if (m->n_held > 0)
                manager_arm_burst_over(m);
}

/* During a burst: hold a later event for @d (read or being read) until its end; @props, udev's
 * properties, are taken for the job then. Return: true if held. */
static bool disk_object_hold(DiskObject *d, char ***props) {
        Manager *m = d->manager;
        uint64_t now = now_usec();

        if (!(d->disk || d->running) || !manager_in_burst(m, now))
                return false;
        if (props) {
                strv_free(d->want_props);
                d->want_props = TAKE_PTR(*props);
        }
        if (!d->held) {
                d->held = true;
                if (m->n_held++ == 0)
                        m->held_since = now;
        }
        manager_arm_burst_over(m);
        return true;
}

/*
 * A kernel uevent reaches us before udev has run its rules for it (udev's own broadcast comes
 * after them, a storm of hundreds of disks seconds later). When no rule matches on anything only
 * udev knows (policy_needs_udev()), the disk resolves the same now as after udev: act at once.
 * The job reads udev's database as it is (the identity udev gave the disk so far); udev's event
 * queues the disk again, which finds it at policy and writes nothing. Removals wait for udev.
 */
static void manager_handle_kernel_device(Manager *m, struct udev_device *dev) {
        const char *action = udev_device_get_action(dev), *name = udev_device_get_sysname(dev);
        DiskObject *d;

        if (!action || !name || !(streq(action, "add") || streq(action, "change")))
                return;
        if (!m->config || policy_needs_udev(m->config->policy) || !disk_name_is_valid(name))
                return;
        log_debug("%s: kernel uevent %s", name, action);
        manager_count_kernel_event(m);
        d = manager_find_disk(m, name);
        if (!d && manager_add_disk(m, name, &d) < 0) {
                log_oom();
                return;
        }
        /* A change (new media: a loop device's backing file) leaves the scheduler as it is. An
         * add is acted on at once: it may be another disk of the same name. */
        if (streq(action, "change") && disk_object_hold(d, NULL))
                return;
        if (disk_object_want(d, JOB_APPLY, NULL, NULL) == -ENOMEM)
                log_oom();
}

static void manager_handle_device(Manager *m, struct udev_device *dev) {
        const char *action = udev_device_get_action(dev), *name = udev_device_get_sysname(dev);
        _cleanup_(strv_freep) char **props = NULL;
        DiskObject *d;
        int r;

        if (!action || !name)
                return;
        if (!disk_name_is_valid(name)) {
                log_debug("Ignoring event for a device with an invalid name.");
                return;
        }
        log_debug("%s: uevent %s", name, action);
        d = manager_find_disk(m, name);

        if (streq(action, "remove")) {
                if (d)
                        manager_remove_disk(m, d);
                return;
        }
        if (streq(action, "move")) {
                const char *old = udev_device_get_property_value(dev, "DEVPATH_OLD");
                const char *base = old ? strrchr(old, '/') : NULL;
                DiskObject *o = base ? manager_find_disk(m, base + 1) : NULL;

                if (o && o != d)
                        manager_remove_disk(m, o);
        }

        if (!d) {
                r = manager_add_disk(m, name, &d);
                if (r < 0) {
                        log_oom();
                        return;
                }
        }
        r = device_props(dev, !m->config || (m->config->load.attrs & ATTR_IOCOST_BITS_MASK), &props);
        if (r < 0) {
                log_oom();
                return;
        }
        if (disk_object_hold(d, &props))
                return;
        if (disk_object_want(d, JOB_APPLY, props, NULL) == -ENOMEM)
                log_oom();
}

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        bool kernel = m->kernel_monitor && fd == udev_monitor_get_fd(m->kernel_monitor);
        struct udev_monitor *mon = kernel ? m->kernel_monitor : m->monitor;

        /* Take everything that is there: events for one disk coalesce into one job. */
        for (unsigned n = 0; n < 4096; n++) {
                struct udev_device *dev = udev_monitor_receive_device(mon);

                if (!dev) {
                        if (errno == ENOBUFS) {
                                log_warning("The udev monitor lost events (receive buffer full): "
                                            "reading every disk again.");
                                (void) manager_rescan(m, NULL);
                                continue;
                        }
                        break;
                }
                if (kernel)
                        manager_handle_kernel_device(m, dev);
                else
                        manager_handle_device(m, dev);
                udev_device_unref(dev);
        }
        return 0;
}

static int on_verify(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        /* A scheduler write by another tool emits no uevent: read again (apply writes only
         * what differs, so this is reads unless something drifted). */
        size_t n = 0;
        for (size_t i = 0; i < m->n_disks; i++) {
                DiskObject *d = m->disks[i];

                /* A disk that no rule gives a setting is never written: nothing to verify.
                 * What it matches changes only with a uevent or a reload, and both queue it
                 * anyway. One not read yet, or read under another config, is read again. */
                if (d->resolved && d->config == m->config && d->resolved->n_settings == 0)
                        continue;
                if (disk_object_queue(d, JOB_APPLY, NULL, NULL) == -ENOMEM) {
                        log_oom();
                        break;
                }
                n++;
        }
        log_debug("Verifying %zu of %zu disks (the others have no setting).", n, m->n_disks);
        r = sd_event_source_set_time_relative(s, m->verify_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Cannot re-arm the verify timer: %m");
        return 0;
}

static void initial_done(Completion *c) {
        Manager *m = container_of(c, Manager, initial);

        /* The first pass had every disk's job and reading in memory at once; what is kept is
         * a fraction of that. Give the free pages in between back to the kernel. */
        (void) malloc_trim(0);

        if (m->on_initial_pass_done)
                m->on_initial_pass_done(m);
}

int manager_reload(Manager *m, Completion *waiting, DiskObject *disk) {
        _cleanup_(config_unrefp) Config *c = NULL;
        int r;

        r = manager_load_config(m, &c);
        if (r < 0)
                return log_oom();

        strv_free(m->config_errors);
        m->config_errors = strv_copy(c->errors);
        if (!m->config_errors)
                return log_oom();

        if (!strv_isempty(c->errors)) {
                for (char **e = c->errors; *e; e++)
                        log_error("%s", *e);
                log_error("The configuration has %zu error(s): keeping the previous one.",
                          strv_length(c->errors));
                manager_bus_emit_config(m);
                return -EBADMSG;
        }

        config_unref(m->config);
        m->config = TAKE_PTR(c);
        log_info("Configuration loaded: %zu file(s), %zu rule(s).",
                 strv_length(m->config->policy->files), m->config->policy->n_rules);
        manager_bus_emit_config(m);

        for (size_t i = 0; i < m->n_disks; i++) {
                r = disk_object_queue(m->disks[i], JOB_APPLY, NULL,
                                      !disk || m->disks[i] == disk ? waiting : NULL);
                if (r == -ENOMEM)
                        return log_oom();
        }
        return 0;
}

int manager_new(Manager **ret) {
        Manager *m = calloc(1, sizeof(Manager));

        if (!m)
                return -ENOMEM;
        m->sysfs_root = "/";
        m->config_root = "/";
        m->n_workers = IOSCHEDD_WORKERS_DEFAULT;
        m->monitor_enabled = true;
        m->kernel_events = true;
        m->monitor_buffer = IOSCHEDD_MONITOR_BUFFER;
        m->disks_by_name = hashmap_new();
        if (!m->disks_by_name)
                return manager_free(m), -ENOMEM;
        *ret = m;
        return 0;
}

Manager *manager_free(Manager *m) {
        WorkItem *unrun = NULL;

        if (!m)
                return NULL;
        if (m->marker_written)
                (void) engine_marker_remove(m->runtime_dir);
        sd_event_source_unref(m->monitor_source);
        sd_event_source_unref(m->kernel_monitor_source);
        sd_event_source_unref(m->worker_source);
        sd_event_source_unref(m->verify_source);
        sd_event_source_unref(m->refresh_source);
        sd_event_source_unref(m->burst_source);
        sd_event_source_unref(m->status_source);
        if (m->pool) {
                worker_pool_free(m->pool, &unrun);
                while (unrun) {
                        WorkItem *next = unrun->next;
                        Job *j = container_of(unrun, Job, item);

                        j->disk->running = NULL;
                        if (j->disk->gone)
                                disk_object_free(j->disk);
                        job_free(j);
                        unrun = next;
                }
        }
        for (size_t i = 0; i < m->n_disks; i++) {
                m->disks[i]->running = NULL;
                disk_object_free(m->disks[i]);
        }
        free(m->disks);
        hashmap_free(m->disks_by_name);
        udev_monitor_unref(m->monitor);
        udev_monitor_unref(m->kernel_monitor);
        udev_unref(m->udev);
        manager_bus_free(m);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        config_unref(m->config);
        strv_free(m->config_errors);
        free(m);
        return NULL;
}

/* A monitor of block disks: @source "udev" (after udev's rules, with its properties) or
 * "kernel" (the kernel's uevents, before them). */
static int manager_add_monitor(Manager *m, const char *source, struct udev_monitor **ret_monitor,
                               sd_event_source **ret_source) {
        struct udev_monitor *mon;
        int r;

        mon = *ret_monitor = udev_monitor_new_from_netlink(m->udev, source);
        if (!mon)
                return log_error_errno(errno ?: ENOMEM, "Cannot create a %s monitor: %m", source);
        r = udev_monitor_filter_add_match_subsystem_devtype(mon, "block", "disk");
        if (r < 0)
                return log_error_errno(r, "Cannot filter the %s monitor: %m", source);
        /* Storms of add events (hundreds of disks at once) must not overflow the socket; if
         * they do anyway, ENOBUFS makes us read every disk again. */
        r = udev_monitor_set_receive_buffer_size(mon, m->monitor_buffer);
        if (r < 0)
                log_warning_errno(r, "Cannot enlarge the %s monitor's buffer: %m", source);
        r = udev_monitor_enable_receiving(mon);
        if (r < 0)
                return log_error_errno(r, "Cannot start the %s monitor: %m", source);
        r = sd_event_add_io(m->event, ret_source, udev_monitor_get_fd(mon), EPOLLIN, on_monitor, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the %s monitor: %m", source);
        (void) sd_event_source_set_description(*ret_source, streq(source, "udev") ? "udev-monitor" :
                                                                                   "kernel-monitor");
        return 0;
}

static int manager_start_monitor(Manager *m) {
        int r;

        m->udev = udev_new();
        if (!m->udev)
                return log_oom();
        r = manager_add_monitor(m, "udev", &m->monitor, &m->monitor_source);
        if (r < 0)
                return r;
        if (m->kernel_events) {
                r = manager_add_monitor(m, "kernel", &m->kernel_monitor, &m->kernel_monitor_source);
                if (r < 0)
                        return r;
        }

        /* From now on every event reaches us: the udev rule's helper may step aside. */
        if (m->runtime_dir) {
                r = engine_marker_write(m->runtime_dir);
                if (r < 0)
                        log_warning_errno(r, "Cannot write %s/%s, the udev rule keeps acting too: %m",
                                          m->runtime_dir, ENGINE_MARKER);
                m->marker_written = r >= 0;
        }
        return 0;
}

int manager_start(Manager *m) {
        static const WorkerPoolOps ops = {
                .thread_init = worker_thread_init,
                .thread_done = worker_thread_done,
                .idle_usec = IOSCHEDD_WORKER_IDLE_USEC,
        };
        static const CompletionOps initial_ops = { .done = initial_done };
        int r;

        r = manager_load_config(m, &m->config);
        if (r < 0)
                return log_oom();
        for (char **e = m->config->errors; *e; e++)
                log_error("%s", *e);
        if (!strv_isempty(m->config->errors))
                log_error("Files with errors are left out; the others are in force.");
        m->config_errors = strv_copy(m->config->errors);
        if (!m->config_errors)
                return log_oom();
        log_info("Configuration loaded: %zu file(s), %zu rule(s).",
                 strv_length(m->config->policy->files), m->config->policy->n_rules);

        r = worker_pool_new(m->n_workers, &ops, m, &m->pool);
        if (r < 0)
                return log_error_errno(r, "Cannot create the worker pool: %m");
        r = sd_event_add_io(m->event, &m->worker_source, worker_pool_get_fd(m->pool), EPOLLIN,
                            on_worker_done, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the worker pool: %m");
        (void) sd_event_source_set_description(m->worker_source, "worker-done");

        /* Monitor first, then list: a disk added in between is seen twice, never not at all. */
        if (m->monitor_enabled) {
                r = manager_start_monitor(m);
                if (r < 0)
                        return r;
        }

        if (m->verify_usec > 0) {
                r = sd_event_add_time_relative(m->event, &m->verify_source, CLOCK_MONOTONIC,
                                               m->verify_usec, 0, on_verify, m);
                if (r < 0)
                        return log_error_errno(r, "Cannot add the verify timer: %m");
                (void) sd_event_source_set_description(m->verify_source, "verify");
        }

        /* The initial pass: every disk read and brought to its policy. */
        completion_init(&m->initial, &initial_ops);
        r = manager_rescan(m, &m->initial);
        if (r < 0)
                return r;
        completion_arm(&m->initial);
        return 0;
}
