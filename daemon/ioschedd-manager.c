/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "conf.h"
#include "engine.h"
#include "ioschedd-disk-bus.h"
#include "ioschedd-manager-bus.h"
#include "ioschedd-manager.h"
#include "log.h"
#include "sysfs.h"
#include "util.h"

#define container_of(ptr, type, member) ((type *) ((char *) (ptr) - offsetof(type, member)))

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
        *ret = TAKE_PTR(c);
        return 0;
}

char *manager_dropin_dir(const Manager *m, bool runtime) {
        const char *root = streq(m->config_root, "/") ? "" : m->config_root;
        return strdup_printf("%s%s", root, runtime ? "/run/iosched.d" : "/etc/iosched.d");
}

/* Requests */

Request *request_new(RequestKind kind, sd_bus_message *message) {
        Request *r = calloc(1, sizeof(Request));

        if (!r)
                return NULL;
        r->n_ref = 1;
        r->kind = kind;
        r->message = message ? sd_bus_message_ref(message) : NULL;
        return r;
}

Request *request_ref(Request *r) {
        if (r)
                r->n_ref++;
        return r;
}

Request *request_unref(Request *r) {
        if (!r || --r->n_ref > 0)
                return NULL;
        sd_bus_message_unref(r->message);
        free(r->first_failure);
        free(r->note);
        free(r);
        return NULL;
}

void request_maybe_reply(Request *r) {
        if (r->n_pending > 0)
                return;
        if (!r->message) {
                if (r->on_done) {
                        void (*cb)(void *) = r->on_done;

                        r->on_done = NULL;
                        cb(r->userdata);
                }
                return;
        }
        manager_bus_reply_request(r, NULL);
        r->message = sd_bus_message_unref(r->message);
}

/* One job of a request is done. */
static void request_job_done(Request *r, const Job *j) {
        if (j->error < 0 && ERRNO_IS_GONE(j->error))
                r->n_gone++;
        else if (j->error < 0) {
                r->n_failed++;
                if (!r->first_failure)
                        r->first_failure = strdup_printf("%s: %s", j->name, strerror(-j->error));
        } else if (j->report && j->kind == JOB_APPLY)
                for (size_t i = 0; i < j->report->n_actions; i++) {
                        const Action *a = &j->report->actions[i];

                        if (a->outcome == OUTCOME_GONE) {
                                r->n_gone++;
                                break;
                        }
                        if (a->outcome != OUTCOME_FAILED)
                                continue;
                        r->n_failed++;
                        if (!r->first_failure)
                                r->first_failure = strdup_printf("%s: %s: %s", j->name, a->key,
                                                                 strna(a->reason));
                }

        if (r->kind == REQUEST_PLAN && r->message) {
                manager_bus_reply_request(r, j);
                r->message = sd_bus_message_unref(r->message);
        }
        if (r->n_pending > 0)
                r->n_pending--;
        request_maybe_reply(r);
}

/* Disk objects */

static DiskObject *disk_object_free(DiskObject *d) {
        if (!d)
                return NULL;
        assert(!d->running);
        for (int k = 0; k < _JOB_KIND_MAX; k++) {
                for (size_t i = 0; i < d->n_want_requests[k]; i++)
                        request_unref(d->want_requests[k][i]);
                free(d->want_requests[k]);
        }
        strv_free(d->want_props);
        plan_free(d->last_report);
        resolved_free(d->resolved);
        config_unref(d->config);
        disk_free(d->disk);
        free(d->last_error);
        free(d->name);
        free(d->path);
        free(d);
        return NULL;
}

DiskObject *manager_find_disk(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (streq(m->disks[i]->name, name))
                        return m->disks[i];
        return NULL;
}

DiskObject *manager_find_disk_by_path(Manager *m, const char *path) {
        for (size_t i = 0; i < m->n_disks; i++)
                if (streq(m->disks[i]->path, path))
                        return m->disks[i];
        return NULL;
}

static int manager_add_disk(Manager *m, const char *name, DiskObject **ret) {
        DiskObject *d, **a;
        int r;

        if (!disk_name_is_valid(name))
                return -EINVAL;
        d = calloc(1, sizeof(DiskObject));
        if (!d)
                return -ENOMEM;
        d->manager = m;
        d->name = strdup(name);
        if (!d->name) {
                free(d);
                return -ENOMEM;
        }
        r = sd_bus_path_encode(DISK_BUS_PATH_PREFIX, name, &d->path);
        if (r < 0) {
                disk_object_free(d);
                return r;
        }
        a = realloc(m->disks, sizeof(DiskObject *) * (m->n_disks + 1));
        if (!a) {
                disk_object_free(d);
                return -ENOMEM;
        }
        m->disks = a;
        m->disks[m->n_disks++] = d;
        *ret = d;
        return 0;
}

/* Answer what waits for work on a disk that is gone, without running it. */
static void disk_object_drop_wants(DiskObject *d) {
        for (int k = 0; k < _JOB_KIND_MAX; k++) {
                Job fake = { .kind = k, .name = d->name, .error = -ENODEV };

                for (size_t i = 0; i < d->n_want_requests[k]; i++) {
                        request_job_done(d->want_requests[k][i], &fake);
                        request_unref(d->want_requests[k][i]);
                }
                d->want_requests[k] = mfree(d->want_requests[k]);
                d->n_want_requests[k] = 0;
                d->want[k] = false;
        }
}

static void manager_remove_disk(Manager *m, DiskObject *d) {
        if (d->disk) {
                /* Published once it was read: take it off the bus (while it can still be
                 * found, so that InterfacesRemoved names its interfaces). */
                disk_bus_emit_removed(d);
                log_info("%s: removed.", d->name);
        }
        for (size_t i = 0; i < m->n_disks; i++)
                if (m->disks[i] == d) {
                        memmove(m->disks + i, m->disks + i + 1,
                                sizeof(DiskObject *) * (m->n_disks - i - 1));
                        m->n_disks--;
                        break;
                }
        d->gone = true;
        disk_object_drop_wants(d);
        if (!d->running)
                disk_object_free(d);
}

/* Jobs */

static Job *job_free(Job *j) {
        if (!j)
                return NULL;
        for (size_t i = 0; i < j->n_requests; i++)
                request_unref(j->requests[i]);
        free(j->requests);
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
        r = sysfs_load_disk(s, j->name, j->udev_props, NULL, &j->disk_read);
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
                r = apply_disk(s, j->disk_read, j->resolved, 0, &j->report, &j->stats);
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
        j->requests = TAKE_PTR(d->want_requests[kind]);
        j->n_requests = d->n_want_requests[kind];
        d->n_want_requests[kind] = 0;
        d->want[kind] = false;
        d->running = j;

        r = worker_pool_submit(m->pool, &j->item);
        if (r < 0) {
                log_error_errno(r, "%s: cannot queue work: %m", d->name);
                j->error = r;
                job_finished(m, j);
        }
        return 0;
}

int disk_object_queue(DiskObject *d, JobKind kind, char * const *props, Request *request) {
        if (d->gone)
                return -ENODEV;
        if (request) {
                Request **a = realloc(d->want_requests[kind],
                                      sizeof(Request *) * (d->n_want_requests[kind] + 1));
                if (!a)
                        return -ENOMEM;
                d->want_requests[kind] = a;
                a[d->n_want_requests[kind]++] = request_ref(request);
                request->n_pending++;
        }
        if (props) {
                char **c = strv_copy(props);
                if (!c)
                        return -ENOMEM;
                strv_free(d->want_props);
                d->want_props = c;
        }
        d->want[kind] = true;
        return disk_object_start_next(d);
}

int manager_queue_all(Manager *m, Request *request) {
        int r;

        for (size_t i = 0; i < m->n_disks; i++) {
                r = disk_object_queue(m->disks[i], JOB_APPLY, NULL, request);
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

static void log_report(const DiskObject *d, const Plan *report) {
        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];

                /* One line per change, with the old and the new value: what an admin greps
                 * the journal for. */
                if (a->outcome == OUTCOME_WRITTEN)
                        log_info("%s: %s %s -> %s (rule %s, %s:%u)", d->name, a->key,
                                 strna(a->current), strna(a->result ?: a->write), a->rule,
                                 a->file, a->line);
                else if (a->outcome == OUTCOME_FAILED)
                        log_warning("%s: %s: %s (rule %s, %s:%u)", d->name, a->key,
                                    strna(a->reason), a->rule, a->file, a->line);
        }
}

static char *report_first_failure(const Plan *report) {
        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];

                if (a->outcome == OUTCOME_FAILED)
                        return strdup_printf("%s: %s", a->key, strna(a->reason));
        }
        return NULL;
}

static bool report_is_gone(const Plan *report) {
        for (size_t i = 0; i < report->n_actions; i++)
                if (report->actions[i].outcome == OUTCOME_GONE)
                        return true;
        return false;
}

static void manager_check_initial(Manager *m);

/* On the loop's thread: publish what a worker found. */
static void job_finished(Manager *m, Job *j) {
        DiskObject *d = j->disk;
        _cleanup_(strv_freep) char **before = NULL;
        bool gone = j->error < 0 ? ERRNO_IS_GONE(j->error) : (j->report && report_is_gone(j->report));

        assert(d->running == j);
        d->running = NULL;
        log_debug("%s: %s done in %llu ms (%u written, %u already right)%s", d->name,
                  j->kind == JOB_APPLY ? "apply" : "plan",
                  (unsigned long long) (j->usec_end - j->usec_start) / 1000, j->stats.written,
                  j->stats.skipped, j->error < 0 ? ", failed" : "");

        if (!d->gone && !gone && j->error >= 0) {
                bool first = !d->disk;

                before = first ? NULL : disk_bus_snapshot(d);

                disk_free(d->disk);
                d->disk = TAKE_PTR(j->disk_read);
                resolved_free(d->resolved);
                d->resolved = TAKE_PTR(j->resolved);
                config_unref(d->config);
                d->config = config_ref(j->config);

                if (j->kind == JOB_APPLY) {
                        struct timespec ts;

                        log_report(d, j->report);
                        manager_bus_emit_applied(m, d, j->report);
                        m->writes_done += j->stats.written;
                        m->writes_skipped += j->stats.skipped;
                        m->write_errors += j->stats.failed;
                        if (j->stats.written + j->stats.skipped + j->stats.failed > 0)
                                m->counters_changed = true;
                        free(d->last_error);
                        d->last_error = report_first_failure(j->report);
                        /* The requests below still read the job's report: share it until
                         * the job is freed. */
                        plan_free(d->last_report);
                        d->last_report = j->report;
                        clock_gettime(CLOCK_REALTIME, &ts);
                        d->last_applied = (uint64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
                }
                if (first) {
                        log_debug("%s: new disk, %s", d->name, d->path);
                        disk_bus_emit_added(d);
                } else
                        disk_bus_emit_changed(d, before);
        } else if (!d->gone && !gone) {
                log_warning_errno(j->error, "%s: cannot read the disk: %m", d->name);
                free(d->last_error);
                d->last_error = strdup_printf("cannot read the disk: %s", strerror(-j->error));
        }

        for (size_t i = 0; i < j->n_requests; i++)
                request_job_done(j->requests[i], j);
        if (!d->gone && d->last_report == j->report)
                j->report = NULL;       /* now the disk's */

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
        }
        manager_check_initial(m);
        return 0;
}

/* Rescan: after the monitor lost events, and at start. */
static int manager_rescan(Manager *m, Request *request) {
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        r = sysfs_new(m->sysfs_root, &s);
        if (r < 0)
                return log_error_errno(r, "Cannot open %s: %m", m->sysfs_root);
        r = sysfs_list_disks(s, &names);
        if (r < 0)
                return log_error_errno(r, "Cannot list disks: %m");

        for (size_t i = m->n_disks; i > 0; i--) {
                DiskObject *d = m->disks[i - 1];
                if (!strv_contains(names, d->name))
                        manager_remove_disk(m, d);
        }
        for (char **n = names; *n; n++) {
                DiskObject *d = manager_find_disk(m, *n);

                if (!d) {
                        r = manager_add_disk(m, *n, &d);
                        if (r == -EINVAL)
                                continue;
                        if (r < 0)
                                return log_oom();
                }
        }
        return manager_queue_all(m, request) < 0 ? log_oom() : 0;
}

static int device_props(struct udev_device *dev, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        struct udev_list_entry *e;
        size_t n = 0;
        int r;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
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
        r = device_props(dev, &props);
        if (r < 0) {
                log_oom();
                return;
        }
        if (disk_object_queue(d, JOB_APPLY, props, NULL) == -ENOMEM)
                log_oom();
}

static int on_monitor(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;

        /* Take everything that is there: events for one disk coalesce into one job. */
        for (unsigned n = 0; n < 4096; n++) {
                struct udev_device *dev = udev_monitor_receive_device(m->monitor);

                if (!dev) {
                        if (errno == ENOBUFS) {
                                log_warning("The udev monitor lost events (receive buffer full): "
                                            "reading every disk again.");
                                (void) manager_rescan(m, NULL);
                                continue;
                        }
                        break;
                }
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

static void initial_done(void *userdata) {
        Manager *m = userdata;

        m->initial_pass_done = true;
}

static void manager_check_initial(Manager *m) {
        if (m->initial_pass_done && m->on_initial_pass_done) {
                void (*cb)(Manager *) = m->on_initial_pass_done;

                m->on_initial_pass_done = NULL;
                cb(m);
        }
}

int manager_reload(Manager *m, Request *request, DiskObject *disk) {
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
                                      !disk || m->disks[i] == disk ? request : NULL);
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
        m->monitor_buffer = IOSCHEDD_MONITOR_BUFFER;
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
        sd_event_source_unref(m->worker_source);
        sd_event_source_unref(m->verify_source);
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
        udev_monitor_unref(m->monitor);
        udev_unref(m->udev);
        manager_bus_free(m);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        config_unref(m->config);
        strv_free(m->config_errors);
        free(m);
        return NULL;
}

static int manager_start_monitor(Manager *m) {
        int r;

        m->udev = udev_new();
        if (!m->udev)
                return log_oom();
        m->monitor = udev_monitor_new_from_netlink(m->udev, "udev");
        if (!m->monitor)
                return log_error_errno(errno ?: ENOMEM, "Cannot create a udev monitor: %m");
        r = udev_monitor_filter_add_match_subsystem_devtype(m->monitor, "block", "disk");
        if (r < 0)
                return log_error_errno(r, "Cannot filter the udev monitor: %m");
        /* Storms of add events (hundreds of disks at once) must not overflow the socket; if
         * they do anyway, ENOBUFS makes us read every disk again. */
        r = udev_monitor_set_receive_buffer_size(m->monitor, m->monitor_buffer);
        if (r < 0)
                log_warning_errno(r, "Cannot enlarge the udev monitor's buffer: %m");
        r = udev_monitor_enable_receiving(m->monitor);
        if (r < 0)
                return log_error_errno(r, "Cannot start the udev monitor: %m");
        r = sd_event_add_io(m->event, &m->monitor_source, udev_monitor_get_fd(m->monitor), EPOLLIN,
                            on_monitor, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the udev monitor: %m");
        (void) sd_event_source_set_description(m->monitor_source, "udev-monitor");

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
        };
        _cleanup_(request_unrefp) Request *initial = NULL;
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
        initial = request_new(REQUEST_APPLY, NULL);
        if (!initial)
                return log_oom();
        initial->on_done = initial_done;
        initial->userdata = m;
        r = manager_rescan(m, initial);
        if (r < 0)
                return r;
        request_maybe_reply(initial);
        manager_check_initial(m);
        return 0;
}
