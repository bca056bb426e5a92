/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "ioschedd-job.h"
#include "util.h"

/* A worker idle this long ends: at rest the daemon keeps no 32 stacks (~20 KiB each). */
#define JOB_WORKER_IDLE_USEC (10 * 1000000ULL)

void completion_init(Completion *c, const CompletionOps *ops) {
        assert(c && ops && ops->done);
        *c = (Completion) { .ops = ops, .n_ref = 1 };
}

static Completion *completion_ref(Completion *c) {
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

int completion_list_add(CompletionList *l, Completion *c) {
        Completion **a;

        assert(l && c);
        a = reallocarray(l->items, l->n + 1, sizeof(Completion *));
        if (!a)
                return -ENOMEM;
        l->items = a;
        a[l->n++] = completion_ref(c);
        c->n_pending++;
        return 0;
}

void completion_list_done(CompletionList *l, const JobResult *result) {
        CompletionList taken = *l;

        assert(l && result);
        /* Emptied first: a completion's done may queue more work for the same disk. */
        *l = (CompletionList) {};
        for (size_t i = 0; i < taken.n; i++)
                completion_job_done(taken.items[i], result);
        completion_list_free(&taken);
}

void completion_list_free(CompletionList *l) {
        assert(l);
        for (size_t i = 0; i < l->n; i++)
                completion_unref(l->items[i]);
        free(l->items);
        *l = (CompletionList) {};
}

void disk_reading_done(DiskReading *r) {
        assert(r);
        resolved_free(r->resolved);
        disk_free(r->disk);
        config_unref(r->config);
        for (size_t i = 0; i < r->n_holds; i++)
                hold_unref(r->holds[i]);
        free(r->holds);
        *r = (DiskReading) {};
}

int job_set_holds(Job *j, Hold *const *holds, size_t n) {
        assert(j && j->reading.n_holds == 0);
        if (n == 0)
                return 0;
        j->reading.holds = calloc(n, sizeof(Hold *));
        if (!j->reading.holds)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                j->reading.holds[i] = hold_ref(holds[i]);
        j->reading.n_holds = n;
        return 0;
}

/* On a worker thread: the pipeline (disk_run()), everything that blocks on sysfs. */
static void job_run(WorkItem *item, void *thread_data) {
        Job *j = container_of(item, Job, item);
        const Config *config = j->reading.config;
        _cleanup_(disk_run_freep) DiskRun *run = NULL;
        _cleanup_(policy_free_borrowedp) Policy *held = NULL;
        Sysfs *s = thread_data;
        DiskLoad l = config->load, full = DISK_LOAD_ALL;
        int r;

        j->usec_start = now_usec();
        /* A partial job reads what the policy needs; with udev's properties here, the identity
         * too (it costs no lookup but "device"). */
        l.identity = l.identity || j->udev_props;
        /* A full job reads the keys that no rule sets (Current's) only once a client asked for
         * them; the scheduler always (Scheduler, AvailableSchedulers). */
        if (!j->partial && !j->current)
                full.attrs = config->load.attrs | ATTR_BIT(ATTR_SCHEDULER);
        /* A disk's holds are rules after the configuration's: the newest wins key by key. */
        r = j->reading.n_holds > 0 ? policy_with_holds(config->policy, j->reading.holds, j->reading.n_holds, &held) : 0;
        if (r >= 0)
                r = disk_run(s, held ?: config->policy, config->writers, j->name, j->udev_props, j->partial ? &l : &full,
                             (j->kind == JOB_PLAN ? DISK_RUN_DRY_RUN : 0) | DISK_RUN_LOCK, &run);
        /* Gone before it was read, or renamed or made again as a partition: not ours. A disk
         * gone during an apply has a report that says where. */
        if (r >= 0 && (run->state == DISK_RUN_PARTITION || !run->plan))
                r = -ENODEV;
        if (r >= 0) {
                j->reading.disk = TAKE_PTR(run->disk);
                j->reading.resolved = TAKE_PTR(run->resolved);
                j->report = TAKE_PTR(run->plan);
                j->summary = run->summary;
                j->notes = run->notes;
        }
        j->error = r < 0 ? r : 0;
        j->usec_end = now_usec();
}

Job *job_new(JobKind kind, DiskObject *disk, const char *name, Config *config) {
        _cleanup_(job_freep) Job *j = NULL;

        assert(kind >= 0 && kind < _JOB_KIND_MAX && name && config);
        j = calloc(1, sizeof(Job));
        if (!j)
                return NULL;
        j->item.run = job_run;
        j->kind = kind;
        j->disk = disk;
        j->reading.config = config_ref(config);
        j->name = strdup(name);
        if (!j->name)
                return NULL;
        return TAKE_PTR(j);
}

Job *job_free(Job *j) {
        if (!j)
                return NULL;
        completion_list_free(&j->waiting);
        free(j->name);
        udev_props_free(j->udev_props);
        disk_reading_done(&j->reading);
        plan_free(j->report);
        free(j);
        return NULL;
}

static int job_thread_init(void *userdata, void **ret) {
        const Sysfs *host = userdata;
        Sysfs *s;
        int r;

        r = sysfs_new_sharing(host, &s);
        if (r < 0)
                return r;
        /* Its writes and lock waits let another thread start for the queued jobs. */
        sysfs_set_wait_hook(s, worker_pool_thread_wait);
        *ret = s;
        return 0;
}

static void job_thread_done(void *thread_data) {
        sysfs_free(thread_data);
}

const WorkerPoolOps job_worker_ops = {
        .thread_init = job_thread_init,
        .thread_done = job_thread_done,
        .idle_usec = JOB_WORKER_IDLE_USEC,
};
