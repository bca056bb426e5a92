/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <malloc.h>
#include <signal.h>
#include <systemd/sd-daemon.h>

#include "engine.h"
#include "ioschedd-disk-bus.h"
#include "ioschedd-manager-bus.h"
#include "ioschedd-manager.h"
#include "log.h"
#include "sysfs.h"
#include "util.h"

bool manager_config_is_single_file(const Manager *m) {
        assert(m);
        return !!m->config_file;
}

uint64_t manager_now(Manager *m, clockid_t clock) {
        uint64_t usec;

        assert(m);
        if (m->now)
                return m->now(m, clock);
        if (!m->event || sd_event_now(m->event, clock, &usec) < 0) {
                struct timespec ts;

                (void) clock_gettime(clock, &ts);
                usec = (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
        }
        return usec;
}

/* Notifications to the service manager */

static void notify_status(Manager *m) {
        (void) sd_notifyf(false, "STATUS=%zu disks; %llu writes, %llu skipped, %llu failed%s",
                          m->n_disks, (unsigned long long) m->writes_done,
                          (unsigned long long) m->writes_skipped,
                          (unsigned long long) m->write_errors,
                          strv_isempty(m->config_errors) ? "" : "; the configuration has errors");
}

static int on_status_due(sd_event_source *s, void *userdata) {
        notify_status(userdata);
        return 0;
}

/* Disks arrive after READY too (drivers that load late, hotplug), and writes are counted all
 * along: keep STATUS= true, one notification per loop iteration, not one per disk. */
static void manager_status_changed(Manager *m) {
        if (m->ready && m->status_source)
                (void) sd_event_source_set_enabled(m->status_source, SD_EVENT_ONESHOT);
}

void manager_notify_ready(Manager *m) {
        assert(m);
        log_info("Ready: %zu disks, bus name %s.", m->n_disks, BUS_SERVICE);
        m->ready = true;
        (void) sd_notify(false, "READY=1");
        notify_status(m);
}

/* The registry of disk objects */

DiskObject *manager_find_disk(Manager *m, const char *name) {
        assert(m && name);
        return hashmap_get(m->disks_by_name, name);
}

int manager_add_disk(Manager *m, const char *name, DiskObject **ret) {
        _cleanup_(disk_object_freep) DiskObject *d = NULL;
        int r;

        assert(m && name && ret && !manager_find_disk(m, name));
        r = disk_object_new(m, name, &d);
        if (r < 0)
                return r;
        if (m->n_disks == m->n_disks_allocated) {
                size_t n = MAX(m->n_disks_allocated * 2, (size_t) 64);
                DiskObject **a = reallocarray(m->disks, n, sizeof(DiskObject *));

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
        manager_status_changed(m);
        *ret = TAKE_PTR(d);
        return 0;
}

void manager_remove_disk(Manager *m, DiskObject *d) {
        assert(m && d && !d->gone && m->disks[d->index] == d);
        if (disk_object_is_published(d)) {
                disk_bus_emit_removed(d);
                log_info("%s: removed.", d->name);
        }
        (void) hashmap_remove(m->disks_by_name, d->name);
        /* The order of m->disks means nothing: the last one takes the hole. */
        m->disks[d->index] = m->disks[--m->n_disks];
        m->disks[d->index]->index = d->index;
        d->gone = true;
        uevent_forget(m->uevent, d);
        manager_holds_drop_disk(m, d);
        disk_object_drop_wants(d);
        manager_status_changed(m);
        metrics_file_changed(m->metrics_file);
        if (!d->running)
                disk_object_free(d);
}

int manager_queue_all(Manager *m, Completion *c) {
        int r;

        assert(m);
        for (size_t i = 0; i < m->n_disks; i++) {
                r = disk_object_queue(m->disks[i], JOB_APPLY, NULL, c);
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

int manager_add_nvme_paths(Manager *m, const char *head) {
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(strv_freep) char **paths = NULL;
        int r;

        assert(m && head);
        if (!startswith(head, "nvme") || strchr(head, 'c'))
                return 0;       /* not a head: nvme<S>n<N> has no controller part */
        r = sysfs_new(m->sysfs_root, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;       /* the root is logged at start */
        r = sysfs_nvme_head_paths(s, head, &paths);
        if (r < 0)
                return r;
        for (char **p = paths; *p; p++) {
                DiskObject *d;

                if (manager_find_disk(m, *p))
                        continue;
                r = manager_add_disk(m, *p, &d);
                if (r == -EINVAL)
                        continue;
                if (r < 0)
                        return r;
                log_debug("%s: a path of %s (a hidden disk: no uevent of its own)", *p, head);
                r = disk_object_want(d, JOB_APPLY, NULL, NULL);
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

int manager_rescan(Manager *m, Completion *c) {
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        assert(m);
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

/* Jobs */

void manager_submit_job(Manager *m, Job *j) {
        int r;

        assert(m && j && j->disk);
        m->n_running++;
        r = m->submit ? m->submit(m, j) : worker_pool_submit(m->pool, &j->item);
        if (r < 0) {
                log_error_errno(r, "%s: cannot queue work: %m", j->name);
                j->error = r;
                manager_job_done(m, j);
        }
}

size_t manager_disks_pending(const Manager *m) {
        size_t n = 0;

        assert(m);
        for (size_t i = 0; i < m->n_disks; i++)
                n += disk_object_is_pending(m->disks[i]);
        return n;
}

void manager_job_done(Manager *m, Job *j) {
        assert(m && j && m->n_running > 0);
        m->n_running--;
        disk_object_job_finished(j->disk, j);
        metrics_file_changed(m->metrics_file);
}

void manager_count_writes(Manager *m, const ReportSummary *stats, unsigned drift) {
        assert(m && stats && drift <= stats->written);
        m->writes_done += stats->written;
        m->drift_corrected += drift;
        m->writes_skipped += stats->skipped;
        m->write_errors += stats->failed;
        if (stats->written + stats->skipped + stats->failed > 0)
                m->counters_changed = true;
}

static int on_worker_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        WorkItem *l = worker_pool_take_done(m->pool);
        bool any = l;

        while (l) {
                WorkItem *next = l->next;
                Job *j = container_of(l, Job, item);

                if (l->error < 0)
                        j->error = l->error;    /* not run: no worker thread could start */
                manager_job_done(m, j);
                l = next;
        }
        if (m->counters_changed) {
                manager_bus_emit_counters(m);
                m->counters_changed = false;
                manager_status_changed(m);
        }
        /* The last idle worker ended (ops.idle_usec after the last job): the daemon is at rest.
         * The jobs since the first pass freed readings all over the heap, which keeps the
         * pages of freed chunks but at its top: give them back, once per rest. */
        if (!any && worker_pool_get_n_threads(m->pool) == 0)
                (void) malloc_trim(0);
        return 0;
}

/* Timers */

int manager_arm_timer(Manager *m, sd_event_source **s, uint64_t usec, sd_event_time_handler_t handler,
                      void *userdata, const char *description) {
        int r;

        assert(m && s && handler);
        if (!*s) {
                r = sd_event_add_time(m->event, s, CLOCK_MONOTONIC, usec, 0, handler, userdata);
                if (r >= 0)
                        (void) sd_event_source_set_description(*s, description);
        } else
                r = sd_event_source_set_time(*s, usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(*s, SD_EVENT_ONESHOT);
        return r;
}

static int on_refresh(sd_event_source *s, uint64_t usec, void *userdata) {
        manager_refresh(userdata);
        return 0;
}

void manager_arm_refresh(Manager *m) {
        uint64_t now;
        int r;

        assert(m);
        now = manager_now(m, CLOCK_MONOTONIC);
        if (m->refresh_since == 0)
                m->refresh_since = now;
        r = manager_arm_timer(m, &m->refresh_source, now + IOSCHEDD_REFRESH_USEC, on_refresh, m, "refresh");
        if (r < 0)
                log_warning_errno(r, "Cannot arm the refresh timer, disks read in part stay so "
                                  "until the next full read: %m");
}

/* Disks read in part during a storm are read in full when it is over: once no job has run
 * for IOSCHEDD_REFRESH_USEC and udev has caught up with the kernel's uevents, or
 * IOSCHEDD_REFRESH_MAX_USEC after the first such disk if the events never stop (a plan, which
 * writes nothing: what the policy sets was read and applied already). Until then the bus shows
 * the last full reading of what no rule sets. udev's event for a disk reads it in full, and so
 * does the release of a disk held during a burst: in a storm udev broadcasts its events seconds
 * after the kernel's, and a refresh between the two read each disk in full twice (bench/storm,
 * 1024 disks: three jobs a disk, two of them full reads). */
void manager_refresh(Manager *m) {
        size_t n = 0;

        assert(m);
        if ((m->n_running > 0 || uevent_udev_pending(m->uevent)) &&
            manager_now(m, CLOCK_MONOTONIC) - m->refresh_since < IOSCHEDD_REFRESH_MAX_USEC) {
                manager_arm_refresh(m);
                return;
        }
        m->refresh_since = 0;
        for (size_t i = 0; i < m->n_disks; i++) {
                DiskObject *d = m->disks[i];

                /* A held disk is read in full when its burst is over. */
                if (!d->partial || d->held)
                        continue;
                d->partial = false;
                if (disk_object_queue(d, JOB_PLAN, NULL, NULL) == -ENOMEM) {
                        log_oom();
                        break;
                }
                n++;
        }
        log_debug("Reading %zu disk(s) read in part during events in full.", n);
}

static int on_verify(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        size_t n = 0;
        int r;

        /* A scheduler write by another tool emits no uevent: read again (apply writes only
         * what differs, so this is reads unless something drifted). */
        for (size_t i = 0; i < m->n_disks; i++) {
                DiskObject *d = m->disks[i];

                /* A disk that no rule gives a setting is never written: nothing to verify.
                 * What it matches changes only with a uevent or a reload, and both queue it
                 * anyway. One not read yet, or read under another config, is read again. */
                if (d->reading.resolved && d->reading.config == m->config &&
                    d->reading.resolved->n_settings == 0)
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

/* Configuration */

int manager_reload(Manager *m, Completion *waiting, DiskObject *disk) {
        _cleanup_(config_unrefp) Config *c = NULL;
        int r;

        assert(m);
        if (m->ready)
                (void) sd_notify(false, "RELOADING=1\nSTATUS=Reloading the configuration");
        r = config_load(m->config_root, m->config_file, &c);
        if (r >= 0) {
                strv_free(m->config_errors);
                m->config_errors = strv_copy(c->errors);
                r = m->config_errors ? 0 : -ENOMEM;
        }
        if (r < 0)
                r = log_oom();
        else if (!strv_isempty(c->errors)) {
                config_log(c, false);
                r = -EBADMSG;
        } else {
                config_unref(m->config);
                m->config = TAKE_PTR(c);
                config_log(m->config, true);
                r = 0;
        }
        if (r != -ENOMEM) {
                manager_bus_emit_config(m);
                metrics_file_changed(m->metrics_file);
        }
        for (size_t i = 0; r == 0 && i < m->n_disks; i++)
                if (disk_object_queue(m->disks[i], JOB_APPLY, NULL,
                                      !disk || m->disks[i] == disk ? waiting : NULL) == -ENOMEM)
                        r = log_oom();
        if (m->ready) {
                (void) sd_notify(false, "READY=1");
                notify_status(m);
        }
        return r;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload(userdata, NULL, NULL);
        return 0;
}

/* Life */

int manager_new(Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        assert(ret);
        m = calloc(1, sizeof(Manager));
        if (!m)
                return log_oom();
        m->sysfs_root = "/";
        m->config_root = "/";
        m->n_workers = IOSCHEDD_WORKERS_DEFAULT;
        m->monitor_enabled = true;
        m->kernel_events = true;
        m->monitor_buffer = IOSCHEDD_MONITOR_BUFFER;
        m->disks_by_name = hashmap_new();
        if (!m->disks_by_name)
                return log_oom();

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Cannot create the event loop: %m");
        /* Before any thread exists (both block the signals in our mask, which the workers
         * inherit): SIGTERM and SIGINT end the loop, SIGHUP reloads. */
        r = sd_event_set_signal_exit(m->event, true);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &m->sighup_source, SIGHUP | SD_EVENT_SIGNAL_PROCMASK,
                                        on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch signals: %m");
        (void) sd_event_source_set_description(m->sighup_source, "sighup");
        r = sd_event_add_defer(m->event, &m->status_source, on_status_due, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->status_source, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Cannot add the status event: %m");
        (void) sd_event_source_set_description(m->status_source, "status");
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Cannot enable the watchdog: %m");
        *ret = TAKE_PTR(m);
        return 0;
}

/* The jobs the pool hands back unrun at exit, and the disk objects of the gone ones. */
static void manager_free_unrun(WorkItem *unrun) {
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

Manager *manager_free(Manager *m) {
        WorkItem *unrun = NULL;

        if (!m)
                return NULL;
        if (m->marker_written)
                (void) engine_marker_remove(m->runtime_dir);
        uevent_monitor_free(m->uevent);
        metrics_file_free(m->metrics_file);
        sd_event_source_unref(m->sighup_source);
        sd_event_source_unref(m->worker_source);
        sd_event_source_unref(m->verify_source);
        sd_event_source_unref(m->refresh_source);
        sd_event_source_unref(m->status_source);
        worker_pool_free(m->pool, &unrun);
        manager_free_unrun(unrun);
        sysfs_free(m->host);            /* after the threads that share it */
        manager_holds_free(m);
        for (size_t i = 0; i < m->n_disks; i++) {
                m->disks[i]->running = NULL;
                disk_object_free(m->disks[i]);
        }
        free(m->disks);
        hashmap_free(m->disks_by_name);
        polkit_registry_free(m->polkit_registry);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        config_unref(m->config);
        strv_free(m->config_errors);
        free(m);
        return NULL;
}

static void initial_done(Completion *c) {
        Manager *m = container_of(c, Manager, initial);

        /* The first pass had every disk's job and reading in memory at once; what is kept is
         * a fraction of that. The workers idle now end (their stacks were a third of RssAnon
         * after a first pass over 256 disks, and their malloc caches go back to the heap);
         * then the free pages in between go back to the kernel. */
        if (m->pool)
                worker_pool_end_idle(m->pool);
        (void) malloc_trim(0);
        metrics_file_start(m->metrics_file);
        manager_bus_announce(m);
}

static int manager_start_pool(Manager *m) {
        WorkerPoolOps ops;
        int r;

        if (m->submit)
                return 0;       /* the tests run the jobs */
        /* Looked up once, here, not by each thread at its first job: the threads' copies were
         * spread between the readings the loop keeps, and left holes there when they ended. */
        r = sysfs_new(m->sysfs_root, &m->host);
        if (r >= 0)
                r = sysfs_probe_host(m->host);
        if (r < 0)
                return log_error_errno(r, "Cannot open %s: %m", m->sysfs_root);
        /* Reading a disk uses the CPU; its writes wait for the kernel: --workers threads at most,
         * no more than twice the CPUs that are not waiting. */
        ops = job_worker_ops;
        ops.max_running = 2 * (unsigned) MAX(sysconf(_SC_NPROCESSORS_ONLN), 1L);
        r = worker_pool_new(m->n_workers, &ops, m->host, &m->pool);
        if (r < 0)
                return log_error_errno(r, "Cannot create the worker pool: %m");
        r = sd_event_add_io(m->event, &m->worker_source, worker_pool_get_fd(m->pool), EPOLLIN,
                            on_worker_done, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the worker pool: %m");
        (void) sd_event_source_set_description(m->worker_source, "worker-done");
        return 0;
}

static int manager_start_monitor(Manager *m) {
        int r;

        r = uevent_monitor_new(m, &m->uevent);
        if (r < 0)
                return log_oom();
        if (!m->monitor_enabled)
                return 0;
        r = uevent_monitor_start(m->uevent, m->kernel_events, m->monitor_buffer);
        if (r < 0)
                return r;
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
        static const CompletionOps initial_ops = { .done = initial_done };
        int r;

        assert(m && m->event);
        r = config_load(m->config_root, m->config_file, &m->config);
        if (r < 0)
                return log_oom();
        config_log(m->config, true);
        m->config_errors = strv_copy(m->config->errors);
        if (!m->config_errors)
                return log_oom();
        if (m->metrics_path) {
                r = metrics_file_new(m, m->metrics_path, &m->metrics_file);
                if (r < 0)
                        return log_error_errno(r, "Cannot use %s for the metrics: %m", m->metrics_path);
        }
        r = manager_start_pool(m);
        if (r < 0)
                return r;
        /* Holds end with the daemon that took them: the first pass brings their disks back to
         * the policy, and the log says which were dropped. */
        manager_holds_report_dropped(m);
        /* Monitor first, then list: a disk added in between is seen twice, never not at all. */
        r = manager_start_monitor(m);
        if (r < 0)
                return r;
        if (m->verify_usec > 0) {
                r = sd_event_add_time_relative(m->event, &m->verify_source, CLOCK_MONOTONIC,
                                               m->verify_usec, 0, on_verify, m);
                if (r < 0)
                        return log_error_errno(r, "Cannot add the verify timer: %m");
                (void) sd_event_source_set_description(m->verify_source, "verify");
        }

        /* The first pass: every disk read and brought to its policy. */
        completion_init(&m->initial, &initial_ops);
        r = manager_rescan(m, &m->initial);
        if (r < 0)
                return r;
        (void) sd_notifyf(false, "STATUS=Applying the policy to %zu disks", m->n_disks);
        completion_arm(&m->initial);
        return 0;
}
