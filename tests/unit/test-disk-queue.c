/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's disk queue and uevent bursts, driven without a bus, a worker thread or a clock
 * of their own: the manager's jobs go to a fake pool that runs them (the real job_run() on a
 * fake kernel) when a test says so, and its clock moves when a test says so. What is checked:
 * work asked while a disk's job runs coalesces into one more pass; a burst of kernel uevents
 * holds udev's events and releases them at its end; disks read in part are read in full once
 * all is quiet; a disk that goes away while its job runs leaves, and who waited hears it.
 */
#include <sys/stat.h>

#include "fake-kernel.h"
#include "ioschedd-manager.h"
#include "log.h"
#include "tests.h"
#include "util.h"

#define N_DISKS 20
#define MS 1000ULL

/* A completion that counts what it hears. */
typedef struct Waiter {
        Completion c;
        unsigned jobs, gone, done;
} Waiter;

typedef struct World {
        FakeKernel *k;
        Sysfs *s;
        Manager *m;
        Job *submitted[256];    /* the fake pool: jobs submitted, not run yet, in order */
        size_t n_submitted;
        unsigned n_jobs;        /* submitted since the start */
        uint64_t mono, real;    /* the fake clock */
        Waiter a, b;            /* here, not on a test's stack: the disks may still point at them */
} World;

/* Static: a test that fails leaves cmocka's stack frame, not its world (world_new()). */
static World the_world, *world;

static void world_free(World *w);

static int fake_submit(Manager *m, Job *j) {
        assert_true(world->n_submitted < ELEMENTSOF(world->submitted));
        world->submitted[world->n_submitted++] = j;
        world->n_jobs++;
        return 0;
}

static uint64_t fake_now(Manager *m, clockid_t clock) {
        return clock == CLOCK_REALTIME ? world->real : world->mono;
}

static void tick(uint64_t usec) {
        world->mono += usec;
        world->real += usec;
}

static const char *disk_name(unsigned i) {
        static char buf[N_DISKS][16];

        snprintf(buf[i], sizeof(buf[i]), "loop%u", i);
        return buf[i];
}

/* A fake kernel with N_DISKS loop devices without a scheduler and a rule for all of them; the
 * manager started on it, its first pass queued and not run. */
static World *world_new(void) {
        World *w = &the_world;
        char path[PATH_MAX];
        FILE *f;

        /* A test that failed (cmocka jumped out of it) left its world: end it first. */
        if (world)
                world_free(world);
        *w = (World) { .mono = 1000000 * MS, .real = 1700000000ULL * 1000000 };
        world = w;
        log_set_max_level(LOG_WARNING);        /* a line per write of 20 disks, in every test */
        w->k = fake_kernel_new();
        assert_non_null(w->k);
        for (unsigned i = 0; i < N_DISKS; i++) {
                char devnum[16];

                snprintf(devnum, sizeof(devnum), "7:%u", i);
                assert_int_equal(fake_disk_add(w->k, &(FakeDiskSpec) { .name = disk_name(i),
                                                                       .devnum = devnum,
                                                                       .scheduler = "none" }), 0);
        }
        assert_int_equal(sysfs_new(w->k->root, &w->s), 0);
        fake_kernel_attach(w->k, w->s);
        snprintf(path, sizeof(path), "%s/test.conf", w->k->root);
        f = fopen(path, "we");
        assert_non_null(f);
        fprintf(f, "[rule all]\nmatch.name = loop*\nscheduler = mq-deadline\nnr_requests = 64\n");
        fclose(f);

        assert_int_equal(manager_new(&w->m), 0);
        w->m->sysfs_root = w->k->root;
        w->m->config_file = strdup(path);
        w->m->monitor_enabled = false;
        w->m->runtime_dir = NULL;
        w->m->submit = fake_submit;
        w->m->now = fake_now;
        assert_non_null(w->m->config_file);
        assert_int_equal(manager_start(w->m), 0);
        assert_int_equal(w->m->n_disks, N_DISKS);
        return w;
}

static void world_free(World *w) {
        /* Jobs the test left unrun finish as if the pool handed them back at exit. */
        while (w->n_submitted > 0) {
                Job *j = w->submitted[--w->n_submitted];

                j->error = -ECANCELED;
                manager_job_done(w->m, j);
        }
        free((char *) w->m->config_file);
        w->m = manager_free(w->m);
        sysfs_free(w->s);
        fake_kernel_free(w->k);
        world = NULL;
}

/* Runs the oldest submitted job on the fake kernel and hands it back. */
static void run_one(World *w) {
        Job *j;

        assert_true(w->n_submitted > 0);
        j = w->submitted[0];
        memmove(w->submitted, w->submitted + 1, --w->n_submitted * sizeof(Job *));
        j->item.run(&j->item, w->s);
        manager_job_done(w->m, j);
}

/* Runs jobs until none is left, also those that finishing jobs submit. Return: how many. */
static unsigned run_all(World *w) {
        unsigned n = 0;

        while (w->n_submitted > 0) {
                run_one(w);
                n++;
        }
        return n;
}

/* A world whose first pass has run: every disk read and at its policy. */
static World *world_ran(void) {
        World *w = world_new();

        run_all(w);
        return w;
}

static DiskObject *disk(World *w, const char *name) {
        DiskObject *d = manager_find_disk(w->m, name);

        assert_non_null(d);
        return d;
}

static Job *submitted_for(World *w, const DiskObject *d) {
        for (size_t i = 0; i < w->n_submitted; i++)
                if (w->submitted[i]->disk == d)
                        return w->submitted[i];
        return NULL;
}

static unsigned submitted_count_for(World *w, const DiskObject *d) {
        unsigned n = 0;

        for (size_t i = 0; i < w->n_submitted; i++)
                n += w->submitted[i]->disk == d;
        return n;
}

/* udev's properties of an event: one "KEY=value". */
static char **props_of(const char *kv) {
        char **l = NULL;

        assert_int_equal(strv_extend(&l, kv), 0);
        return l;
}

static void waiter_job_done(Completion *c, const JobResult *res) {
        Waiter *w = container_of(c, Waiter, c);

        w->jobs++;
        w->gone += res->error == -ENODEV;
}

static void waiter_done(Completion *c) {
        container_of(c, Waiter, c)->done++;
}

static const CompletionOps waiter_ops = { .job_done = waiter_job_done, .done = waiter_done };

static Waiter *waiter_init(Waiter *w) {
        *w = (Waiter) {};
        completion_init(&w->c, &waiter_ops);
        return w;
}

/* The first pass: one job per disk, each applied; the disks are on the "bus" (published). */
TEST(first_pass) {
        World *w = world_new();

        assert_int_equal(w->n_submitted, N_DISKS);
        assert_int_equal(w->m->n_running, N_DISKS);
        assert_int_equal(run_all(w), N_DISKS);
        for (unsigned i = 0; i < N_DISKS; i++) {
                DiskObject *d = manager_find_disk(w->m, disk_name(i));

                assert_non_null(d);
                assert_true(disk_object_is_published(d));
                assert_false(disk_object_is_pending(d));
                assert_string_equal(d->reading.disk->scheduler, "mq-deadline");
                assert_int_equal(DISK_ATTR(d->reading.disk, ATTR_NR_REQUESTS).value.num, 64);
                assert_int_equal(d->last_applied, w->real);
        }
        assert_int_equal(w->m->n_running, 0);
        assert_true(w->m->writes_done >= N_DISKS);
        world_free(w);
}

/* Work asked while a disk's job runs is one more pass, however often it is asked, and every
 * caller that waits for it hears of that one pass. */
TEST(coalescing) {
        World *w = world_ran();
        DiskObject *d = disk(w, "loop3");
        Waiter *a = waiter_init(&w->a), *b = waiter_init(&w->b);

        assert_int_equal(disk_object_queue(d, JOB_APPLY, NULL, &a->c), 0);
        assert_int_equal(submitted_count_for(w, d), 1);
        assert_non_null(d->running);
        /* While it runs: events, calls and a plan. */
        for (unsigned i = 0; i < 5; i++)
                assert_int_equal(disk_object_want(d, JOB_APPLY, NULL, NULL), 0);
        assert_int_equal(disk_object_queue(d, JOB_APPLY, NULL, &b->c), 0);
        assert_int_equal(disk_object_want(d, JOB_PLAN, NULL, NULL), 0);
        assert_int_equal(submitted_count_for(w, d), 1);
        assert_true(disk_object_is_pending(d));

        completion_arm(&a->c);
        completion_arm(&b->c);
        run_one(w);
        assert_int_equal(a->done, 1);
        assert_int_equal(b->done, 0);
        /* The coalesced apply, then the plan: one job each. */
        assert_int_equal(submitted_count_for(w, d), 1);
        assert_int_equal(submitted_for(w, d)->kind, JOB_APPLY);
        assert_false(submitted_for(w, d)->partial);    /* a call asked: read in full */
        run_one(w);
        assert_int_equal(b->done, 1);
        assert_int_equal(b->jobs, 1);
        assert_int_equal(submitted_count_for(w, d), 1);
        assert_int_equal(submitted_for(w, d)->kind, JOB_PLAN);
        run_one(w);
        assert_int_equal(w->n_submitted, 0);
        assert_false(disk_object_is_pending(d));
        assert_int_equal(w->n_jobs, N_DISKS + 3);
        world_free(w);
}

/* A uevent's job for a disk read before reads what the policy needs; the disk is read in full
 * once no job has run for IOSCHEDD_REFRESH_USEC, or IOSCHEDD_REFRESH_MAX_USEC at the latest. */
TEST(refresh) {
        World *w = world_ran();
        DiskObject *d = disk(w, "loop5");
        sd_event_source *s;
        uint64_t when;

        assert_int_equal(disk_object_want(d, JOB_APPLY, NULL, NULL), 0);
        assert_true(submitted_for(w, d)->partial);
        run_one(w);
        assert_true(d->partial);
        s = w->m->refresh_source;
        assert_non_null(s);
        assert_int_equal(sd_event_source_get_time(s, &when), 0);
        assert_int_equal(when, w->mono + IOSCHEDD_REFRESH_USEC);

        /* Other disks keep jobs running: the refresh waits... */
        assert_int_equal(disk_object_want(manager_find_disk(w->m, "loop6"), JOB_APPLY, NULL, NULL), 0);
        tick(IOSCHEDD_REFRESH_USEC);
        manager_refresh(w->m);
        assert_int_equal(submitted_count_for(w, d), 0);
        assert_true(d->partial);
        /* ...at most IOSCHEDD_REFRESH_MAX_USEC. */
        tick(IOSCHEDD_REFRESH_MAX_USEC);
        manager_refresh(w->m);
        assert_int_equal(submitted_count_for(w, d), 1);
        assert_int_equal(submitted_for(w, d)->kind, JOB_PLAN);
        assert_false(submitted_for(w, d)->partial);
        assert_false(d->partial);
        run_all(w);
        assert_false(d->partial);
        world_free(w);
}

/* A burst of kernel uevents: disks being created. Their kernel "add" acts at once; a later
 * kernel "change" and udev's events are held, with udev's properties, and each held disk is
 * read in full and applied once UEVENT_BURST_QUIET_USEC pass without a kernel uevent. */
TEST(burst_hold_release) {
        World *w = world_ran();
        UeventMonitor *u = w->m->uevent;
        DiskObject *d = disk(w, "loop1");
        uint64_t when;

        assert_non_null(u);

        /* No burst yet: udev's event queues the disk. */
        _cleanup_(strv_freep) char **props = props_of("ID_MODEL=Fake");
        uevent_handle_udev(u, "change", "loop1", NULL, &props);
        assert_int_equal(submitted_count_for(w, d), 1);
        run_all(w);

        /* A burst: UEVENT_BURST_EVENTS kernel uevents 1 ms apart. Each add acts at once. */
        for (unsigned i = 0; i < UEVENT_BURST_EVENTS; i++) {
                uevent_handle_kernel(u, "add", disk_name(i));
                tick(1 * MS);
        }
        assert_int_equal(w->n_submitted, UEVENT_BURST_EVENTS);
        run_all(w);
        /* In the burst: udev's events and the kernel's change are held, not run. */
        props = props_of("ID_MODEL=Held");
        uevent_handle_udev(u, "change", "loop1", NULL, &props);
        uevent_handle_kernel(u, "change", "loop2");
        assert_int_equal(w->n_submitted, 0);
        assert_true(d->held);
        assert_true(manager_find_disk(w->m, "loop2")->held);
        assert_int_equal(u->n_held, 2);
        assert_string_equal(d->want_props[0], "ID_MODEL=Held");
        assert_int_equal(sd_event_source_get_time(u->burst_source, &when), 0);
        assert_int_equal(when, u->burst_last + UEVENT_BURST_QUIET_USEC);

        /* The timer fires while kernel uevents keep coming: still held. */
        uevent_handle_kernel(u, "add", disk_name(17));
        run_all(w);
        tick(UEVENT_BURST_QUIET_USEC / 2);
        uevent_burst_over(u);
        assert_true(d->held);
        assert_int_equal(w->n_submitted, 0);

        /* Quiet: every held disk is read in full and applied, with udev's properties. */
        tick(UEVENT_BURST_QUIET_USEC);
        uevent_burst_over(u);
        assert_false(d->held);
        assert_int_equal(u->n_held, 0);
        assert_int_equal(w->n_submitted, 2);
        assert_int_equal(submitted_for(w, d)->kind, JOB_APPLY);
        assert_false(submitted_for(w, d)->partial);
        assert_string_equal(submitted_for(w, d)->udev_props[0], "ID_MODEL=Held");
        run_all(w);
        world_free(w);
}

/* A burst that never ends releases what it held UEVENT_BURST_MAX_USEC after the first hold. */
TEST(burst_max) {
        World *w = world_ran();
        UeventMonitor *u = w->m->uevent;
        DiskObject *d = disk(w, "loop4");

        for (unsigned i = 0; i < UEVENT_BURST_EVENTS; i++) {
                uevent_handle_kernel(u, "add", disk_name(i));
                tick(1 * MS);
        }
        run_all(w);
        uevent_handle_udev(u, "change", "loop4", NULL, NULL);
        assert_true(d->held);
        for (uint64_t t = 0; t < UEVENT_BURST_MAX_USEC; t += 10 * MS) {
                uevent_handle_kernel(u, "add", disk_name(18));
                run_all(w);
                tick(10 * MS);
                uevent_burst_over(u);
        }
        assert_false(d->held);
        assert_int_equal(submitted_count_for(w, d), 1);
        run_all(w);
        world_free(w);
}

/* The disk goes away while its job runs: it leaves the manager, and who waited for it hears
 * -ENODEV, also for the work coalesced behind the job. */
TEST(gone_while_running) {
        World *w = world_ran();
        Waiter *a = waiter_init(&w->a), *b = waiter_init(&w->b);
        DiskObject *d = disk(w, "loop7");

        /* Queued, then gone before its worker reads it. */
        assert_int_equal(disk_object_queue(d, JOB_APPLY, NULL, &a->c), 0);
        assert_int_equal(fake_disk_remove(w->k, "loop7"), 0);
        assert_int_equal(disk_object_queue(d, JOB_PLAN, NULL, &b->c), 0);
        completion_arm(&a->c);
        completion_arm(&b->c);
        run_one(w);
        assert_null(manager_find_disk(w->m, "loop7"));
        assert_int_equal(w->m->n_disks, N_DISKS - 1);
        assert_int_equal(a->done, 1);
        assert_int_equal(a->gone, 1);
        assert_int_equal(b->done, 1);
        assert_int_equal(b->gone, 1);
        assert_int_equal(w->n_submitted, 0);
        world_free(w);
}

/* udev's "remove" while the job runs: the object leaves at once and is freed when the job
 * comes back; the coalesced work is dropped and its caller hears -ENODEV. */
TEST(removed_while_running) {
        World *w = world_ran();
        DiskObject *d = disk(w, "loop8");
        Waiter *a = waiter_init(&w->a);

        assert_int_equal(disk_object_want(d, JOB_APPLY, NULL, NULL), 0);
        assert_int_equal(disk_object_queue(d, JOB_APPLY, NULL, &a->c), 0);
        completion_arm(&a->c);
        uevent_handle_udev(w->m->uevent, "remove", "loop8", NULL, NULL);
        assert_null(manager_find_disk(w->m, "loop8"));
        assert_true(d->gone);
        assert_int_equal(a->done, 1);
        assert_int_equal(a->gone, 1);
        assert_int_equal(disk_object_want(d, JOB_APPLY, NULL, NULL), -ENODEV);
        /* The job comes back (valgrind and ASan see the object freed then). */
        run_one(w);
        assert_int_equal(w->n_submitted, 0);
        assert_int_equal(w->m->n_disks, N_DISKS - 1);
        world_free(w);
}

DEFINE_TEST_MAIN(NULL, NULL);
