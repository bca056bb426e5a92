/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's disk queue and uevent bursts, driven without a bus, a worker thread or a clock
 * of their own: the manager's jobs go to a fake pool that runs them (the real job_run() on a
 * fake kernel) when a test says so, and its clock moves when a test says so. What is checked:
 * work asked while a disk's job runs coalesces into one more pass; a burst of kernel uevents
 * holds udev's events and releases them at its end; disks read in part are read in full once
 * all is quiet; a disk that goes away while its job runs leaves, and who waited hears it.
 */
#include <endian.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "daemon-world.h"
#include "tests.h"
#include "util.h"

#define N_DISKS 20
#define MS WORLD_MS
#define SETTINGS "scheduler = mq-deadline\nnr_requests = 64"

static const char *disk_name(unsigned i) {
        static char buf[N_DISKS][16];

        snprintf(buf[i], sizeof(buf[i]), "loop%u", i);
        return buf[i];
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
static UdevProps *props_of(const char *kv) {
        UdevProps *p = NULL;

        assert_int_equal(udev_props_from_strv((char *[]) { (char *) kv, NULL }, &p), 0);
        return p;
}

/* The first pass: one job per disk, each applied; the disks are on the "bus" (published). */
TEST(first_pass) {
        World *w = world_new(N_DISKS, SETTINGS);

        assert_int_equal(w->n_submitted, N_DISKS);
        assert_int_equal(w->m->n_running, N_DISKS);
        assert_int_equal(world_run_all(w), N_DISKS);
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

/* An NVMe head's paths are hidden disks (a queue, no dev) of which the kernel sends no uevent:
 * the head's event brings them in, each read and applied like any disk; without the head's
 * event nothing does. */
TEST(hidden_nvme_paths) {
        static const FakeDiskSpec head = { .name = "nvme2n1", .devnum = "259:1", .no_scheduler_file = true };
        static const FakeDiskSpec path = { .name = "nvme2c2n1", .devnum = "259:9", .scheduler = "none", .queues = 2 };
        World *w = world_ran(1, "scheduler = mq-deadline\n[rule paths]\nmatch.role = nvme-path\nscheduler = mq-deadline");
        UeventMonitor *u = w->m->uevent;
        char p[PATH_MAX];
        DiskObject *d;

        assert_int_equal(fake_disk_add(w->k, &path), 0);
        snprintf(p, sizeof(p), "%s/sys/class/block/nvme2c2n1/dev", w->k->root);
        assert_int_equal(unlink(p), 0);
        assert_int_equal(fake_write(w->k, "sys/class/block/nvme2c2n1/hidden", "1"), 0);
        assert_int_equal(fake_write(w->k, "sys/class/nvme-subsystem/nvme-subsys2/nvme2/cntlid", "1"), 0);
        assert_int_equal(fake_disk_add(w->k, &head), 0);
        assert_null(manager_find_disk(w->m, "nvme2c2n1"));

        uevent_handle_kernel(u, "add", "nvme2n1", 0);
        world_run_all(w);
        d = manager_find_disk(w->m, "nvme2c2n1");
        assert_non_null(d);
        assert_true(disk_object_is_published(d));
        assert_true(d->reading.disk->hidden);
        assert_int_equal(d->reading.disk->stack.role, STACK_ROLE_NVME_PATH);
        assert_string_equal(d->reading.disk->scheduler, "mq-deadline");
        assert_non_null(manager_find_disk(w->m, "nvme2n1"));
        world_free(w);
}

/* Work asked while a disk's job runs is one more pass, however often it is asked, and every
 * caller that waits for it hears of that one pass. */
TEST(coalescing) {
        World *w = world_ran(N_DISKS, SETTINGS);
        DiskObject *d = world_disk(w, "loop3");
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
        world_run_one(w);
        assert_int_equal(a->done, 1);
        assert_int_equal(b->done, 0);
        /* The coalesced apply, then the plan: one job each. */
        assert_int_equal(submitted_count_for(w, d), 1);
        assert_int_equal(submitted_for(w, d)->kind, JOB_APPLY);
        assert_false(submitted_for(w, d)->partial);    /* a call asked: read in full */
        world_run_one(w);
        assert_int_equal(b->done, 1);
        assert_int_equal(b->jobs, 1);
        assert_int_equal(submitted_count_for(w, d), 1);
        assert_int_equal(submitted_for(w, d)->kind, JOB_PLAN);
        world_run_one(w);
        assert_int_equal(w->n_submitted, 0);
        assert_false(disk_object_is_pending(d));
        assert_int_equal(w->n_jobs, N_DISKS + 3);
        world_free(w);
}

/* A uevent's job for a disk read before reads what the policy needs; the disk is read in full
 * once no job has run for IOSCHEDD_REFRESH_USEC, or IOSCHEDD_REFRESH_MAX_USEC at the latest. */
TEST(refresh) {
        World *w = world_ran(N_DISKS, SETTINGS);
        DiskObject *d = world_disk(w, "loop5");
        sd_event_source *s;
        uint64_t when;

        assert_int_equal(disk_object_want(d, JOB_APPLY, NULL, NULL), 0);
        assert_true(submitted_for(w, d)->partial);
        world_run_one(w);
        assert_true(d->partial);
        s = w->m->refresh_source;
        assert_non_null(s);
        assert_int_equal(sd_event_source_get_time(s, &when), 0);
        assert_int_equal(when, w->mono + IOSCHEDD_REFRESH_USEC);

        /* Other disks keep jobs running: the refresh waits... */
        assert_int_equal(disk_object_want(manager_find_disk(w->m, "loop6"), JOB_APPLY, NULL, NULL), 0);
        world_tick(w, IOSCHEDD_REFRESH_USEC);
        manager_refresh(w->m);
        assert_int_equal(submitted_count_for(w, d), 0);
        assert_true(d->partial);
        /* ...at most IOSCHEDD_REFRESH_MAX_USEC. */
        world_tick(w, IOSCHEDD_REFRESH_MAX_USEC);
        manager_refresh(w->m);
        assert_int_equal(submitted_count_for(w, d), 1);
        assert_int_equal(submitted_for(w, d)->kind, JOB_PLAN);
        assert_false(submitted_for(w, d)->partial);
        assert_false(d->partial);
        world_run_all(w);
        assert_false(d->partial);
        world_free(w);
}

/* udev's event for a disk read in part (its kernel add's job in a storm) reads it in full: no
 * refresh is left to do for it, one job less than a partial read and the refresh's. */
TEST(udev_event_reads_in_full) {
        World *w = world_ran(N_DISKS, SETTINGS);
        DiskObject *d = world_disk(w, "loop5");
        UdevProps *props = props_of("ID_MODEL=Fake");

        assert_int_equal(disk_object_want(d, JOB_APPLY, NULL, NULL), 0);
        assert_true(submitted_for(w, d)->partial);
        world_run_one(w);
        assert_true(d->partial);
        assert_int_equal(disk_object_want(d, JOB_APPLY, &props, NULL), 0);
        assert_null(props);     /* taken */
        assert_false(submitted_for(w, d)->partial);
        world_run_one(w);
        assert_false(d->partial);
        manager_refresh(w->m);
        assert_int_equal(submitted_count_for(w, d), 0);
        world_free(w);
}

/* A dm device's change events that device-mapper's or multipath-tools' rules mark as changing
 * nothing queue no job (no read, no write); its other events do, and so do the same marks on a
 * disk that is no dm device. The kernel's change of a dm device waits for udev's. */
TEST(dm_events_that_change_nothing) {
        static const char *const marks[] = {
                "MPATH_UNCHANGED=1", "DM_UDEV_DISABLE_OTHER_RULES_FLAG=1", "MPATH_DEVICE_READY=0",
                "DM_SUSPENDED=1", "DM_ACTION=PATH_REINSTATED",
        };
        World *w = world_ran(N_DISKS, SETTINGS);
        UeventMonitor *u = w->m->uevent;
        _cleanup_(udev_props_freep) UdevProps *props = NULL;

        for (size_t i = 0; i < ELEMENTSOF(marks); i++) {
                props = props_of(marks[i]);
                uevent_handle_udev(u, "change", "dm-0", NULL, &props, 0);
                props = udev_props_free(props);
                if (w->n_submitted != 0)
                        fail_msg("%s: a job was queued", marks[i]);
                assert_null(manager_find_disk(w->m, "dm-0"));
        }
        uevent_handle_kernel(u, "change", "dm-0", 0);
        assert_int_equal(w->n_submitted, 0);

        props = props_of("MPATH_DEVICE_READY=1");
        uevent_handle_udev(u, "change", "dm-0", NULL, &props, 0);
        assert_int_equal(w->n_submitted, 1);
        props = udev_props_free(props);
        world_run_all(w);

        props = props_of("MPATH_UNCHANGED=1");
        uevent_handle_udev(u, "change", "loop1", NULL, &props, 0);
        assert_int_equal(submitted_count_for(w, world_disk(w, "loop1")), 1);
        world_run_all(w);
        world_free(w);
}

/* A burst of kernel uevents: disks being created. A kernel "add" before the burst acts at once,
 * one during it once UEVENT_BURST_QUIET_USEC pass without a kernel uevent; a later kernel
 * "change" and udev's events are held, with udev's properties, and each held disk is read in
 * full and applied then too (udev being caught up). */
TEST(burst_hold_release) {
        World *w = world_ran(N_DISKS, SETTINGS);
        UeventMonitor *u = w->m->uevent;
        DiskObject *d = world_disk(w, "loop1");
        uint64_t when;

        assert_non_null(u);

        /* No burst yet: udev's event queues the disk. */
        _cleanup_(udev_props_freep) UdevProps *props = props_of("ID_MODEL=Fake");
        uevent_handle_udev(u, "change", "loop1", NULL, &props, 0);
        assert_int_equal(submitted_count_for(w, d), 1);
        world_run_all(w);

        /* A burst: UEVENT_BURST_EVENTS kernel uevents 1 ms apart. The adds before it act at
         * once; the burst's own waits for the kernel's quiet. */
        for (unsigned i = 0; i < UEVENT_BURST_EVENTS; i++) {
                uevent_handle_kernel(u, "add", disk_name(i), 0);
                world_tick(w, 1 * MS);
        }
        assert_int_equal(w->n_submitted, UEVENT_BURST_EVENTS - 1);
        assert_true(world_disk(w, disk_name(UEVENT_BURST_EVENTS - 1))->held_add);
        assert_int_equal(u->n_held_add, 1);
        world_run_all(w);
        /* In the burst: udev's events and the kernel's change are held, not run. */
        props = props_of("ID_MODEL=Held");
        uevent_handle_udev(u, "change", "loop1", NULL, &props, 0);
        uevent_handle_kernel(u, "change", "loop2", 0);
        assert_int_equal(w->n_submitted, 0);
        assert_true(d->held);
        assert_true(manager_find_disk(w->m, "loop2")->held);
        assert_int_equal(u->n_held, 2);
        assert_string_equal(udev_props_get(d->want_props, "ID_MODEL"), "Held");
        assert_int_equal(sd_event_source_get_time(u->burst_source, &when), 0);
        assert_int_equal(when, u->burst_last + UEVENT_BURST_QUIET_USEC);

        /* The timer fires while kernel uevents keep coming: still held, the add too. */
        uevent_handle_kernel(u, "add", disk_name(17), 0);
        world_run_all(w);
        world_tick(w, UEVENT_BURST_QUIET_USEC / 2);
        uevent_burst_over(u);
        assert_true(d->held);
        assert_true(world_disk(w, disk_name(17))->held_add);
        assert_int_equal(w->n_submitted, 0);

        /* Quiet: the two adds are read, and every held disk in full and applied, with udev's
         * properties. */
        world_tick(w, UEVENT_BURST_QUIET_USEC);
        uevent_burst_over(u);
        assert_false(d->held);
        assert_int_equal(u->n_held, 0);
        assert_int_equal(u->n_held_add, 0);
        assert_false(world_disk(w, disk_name(17))->held_add);
        assert_int_equal(submitted_count_for(w, world_disk(w, disk_name(17))), 1);
        assert_int_equal(w->n_submitted, 4);
        assert_int_equal(submitted_for(w, d)->kind, JOB_APPLY);
        assert_false(submitted_for(w, d)->partial);
        assert_string_equal(udev_props_get(submitted_for(w, d)->udev_props, "ID_MODEL"), "Held");
        world_run_all(w);
        world_free(w);
}

/* A burst that never ends releases what it held UEVENT_BURST_MAX_USEC after the first hold. */
TEST(burst_max) {
        World *w = world_ran(N_DISKS, SETTINGS);
        UeventMonitor *u = w->m->uevent;
        DiskObject *d = world_disk(w, "loop4");

        for (unsigned i = 0; i < UEVENT_BURST_EVENTS; i++) {
                uevent_handle_kernel(u, "add", disk_name(i), 0);
                world_tick(w, 1 * MS);
        }
        world_run_all(w);
        uevent_handle_udev(u, "change", "loop4", NULL, NULL, 0);
        assert_true(d->held);
        for (uint64_t t = 0; t < UEVENT_BURST_MAX_USEC; t += 10 * MS) {
                uevent_handle_kernel(u, "add", disk_name(18), 0);
                world_run_all(w);
                world_tick(w, 10 * MS);
                uevent_burst_over(u);
        }
        assert_false(d->held);
        assert_int_equal(submitted_count_for(w, d), 1);
        world_run_all(w);
        world_free(w);
}

/* udev runs its rules seconds behind the kernel in a storm: the burst goes on, its disks held,
 * until udev has broadcast the burst's last kernel uevent (SEQNUM), though the kernel is
 * quiet; then each held disk is read once, in full, with what udev's events said. */
TEST(burst_waits_for_udev) {
        World *w = world_ran(N_DISKS, SETTINGS);
        UeventMonitor *u = w->m->uevent;
        DiskObject *d = world_disk(w, "loop3");
        uint64_t when;
        size_t held, adds;

        for (unsigned i = 0; i < UEVENT_BURST_EVENTS; i++) {
                uevent_handle_kernel(u, "add", disk_name(i), 100 + 2 * i);
                uevent_handle_kernel(u, "change", disk_name(i), 101 + 2 * i);
                world_tick(w, 1 * MS);
        }
        world_run_all(w);
        /* The kernel is quiet: the adds that came during the burst are read now, though udev
         * is behind (they took kernfs's lock from the kernel creating the next disks). */
        adds = u->n_held_add;
        assert_true(adds > 0);
        assert_int_equal(w->n_submitted, 0);
        world_tick(w, 2 * UEVENT_BURST_QUIET_USEC);
        uevent_burst_over(u);
        assert_int_equal(u->n_held_add, 0);
        assert_int_equal(w->n_submitted, adds);
        assert_int_equal(submitted_count_for(w, world_disk(w, disk_name(UEVENT_BURST_EVENTS - 1))), 1);
        world_run_all(w);
        /* udev's events of the first disks come. */
        for (unsigned i = 0; i < 4; i++) {
                _cleanup_(udev_props_freep) UdevProps *props = props_of("ID_MODEL=Late");

                uevent_handle_udev(u, "add", disk_name(i), NULL, NULL, 100 + 2 * i);
                uevent_handle_udev(u, "change", disk_name(i), NULL, &props, 101 + 2 * i);
        }
        assert_int_equal(w->n_submitted, 0);
        assert_true(d->held);
        /* udev is behind: the timer looks again later, and holds on. */
        assert_int_equal(sd_event_source_get_time(u->burst_source, &when), 0);
        assert_int_equal(when, w->mono + UEVENT_BURST_QUIET_USEC);
        world_tick(w, UEVENT_BURST_QUIET_USEC);
        uevent_burst_over(u);
        assert_true(d->held);
        assert_int_equal(w->n_submitted, 0);
        /* udev's event of the burst's last kernel uevent: caught up. */
        uevent_handle_udev(u, "change", disk_name(UEVENT_BURST_EVENTS - 1), NULL, NULL,
                           101 + 2 * (UEVENT_BURST_EVENTS - 1));
        held = u->n_held;
        assert_true(held > 4);  /* the first four disks and the kernel's later changes */
        world_tick(w, UEVENT_BURST_QUIET_USEC);
        uevent_burst_over(u);
        assert_false(d->held);
        assert_int_equal(u->n_held, 0);
        /* And the last disk, on its udev event: its kernel change went with its held add. */
        assert_int_equal(w->n_submitted, held + 1);
        assert_false(submitted_for(w, d)->partial);
        assert_string_equal(udev_props_get(submitted_for(w, d)->udev_props, "ID_MODEL"), "Late");
        world_run_all(w);
        world_free(w);
}

/* A storm's disks, read in part on their kernel "add", are not refreshed while udev is behind
 * the kernel's uevents: udev's events for them come (held during the burst) and read each in
 * full; a refresh before them read every disk in full twice. Without udev's events the refresh
 * comes once udev is given up on (UEVENT_BURST_MAX_USEC after the kernel's last uevent). */
TEST(refresh_waits_for_udev) {
        World *w = world_ran(N_DISKS, SETTINGS);
        UeventMonitor *u = w->m->uevent;
        unsigned n = UEVENT_BURST_EVENTS;

        for (unsigned i = 0; i < n; i++) {
                uevent_handle_kernel(u, "add", disk_name(i), 100 + 2 * i);
                uevent_handle_kernel(u, "change", disk_name(i), 101 + 2 * i);
                world_tick(w, 1 * MS);
        }
        world_run_all(w);
        world_tick(w, 2 * UEVENT_BURST_QUIET_USEC);
        uevent_burst_over(u);
        world_run_all(w);
        for (unsigned i = 0; i < n; i++)
                assert_true(world_disk(w, disk_name(i))->partial);
        assert_true(uevent_udev_pending(u));

        /* Quiet, but udev is behind: no refresh yet. */
        world_tick(w, IOSCHEDD_REFRESH_USEC);
        manager_refresh(w->m);
        assert_int_equal(w->n_submitted, 0);
        assert_non_null(w->m->refresh_source);

        /* udev's events come, held, and the burst ends: each disk is read once, in full. */
        for (unsigned i = 0; i < n; i++) {
                _cleanup_(udev_props_freep) UdevProps *a = props_of("ID_MODEL=Fake"), *c = props_of("ID_MODEL=Fake");

                uevent_handle_udev(u, "add", disk_name(i), NULL, &a, 100 + 2 * i);
                uevent_handle_udev(u, "change", disk_name(i), NULL, &c, 101 + 2 * i);
        }
        assert_false(uevent_udev_pending(u));
        /* The last one's events end the burst: not held. */
        assert_int_equal(w->n_submitted, 1);
        world_tick(w, UEVENT_BURST_QUIET_USEC);
        uevent_burst_over(u);
        assert_int_equal(w->n_submitted, n);
        for (unsigned i = 0; i < n; i++)
                assert_false(submitted_for(w, world_disk(w, disk_name(i)))->partial);
        world_run_all(w);
        world_tick(w, IOSCHEDD_REFRESH_USEC);
        manager_refresh(w->m);
        assert_int_equal(w->n_submitted, 0);
        for (unsigned i = 0; i < n; i++)
                assert_false(world_disk(w, disk_name(i))->partial);

        /* Another burst that udev never broadcasts: refreshed once it is given up on. */
        for (unsigned i = 0; i < n; i++) {
                uevent_handle_kernel(u, "add", disk_name(i), 200 + i);
                world_tick(w, 1 * MS);
        }
        world_tick(w, 2 * UEVENT_BURST_QUIET_USEC);
        uevent_burst_over(u);
        world_run_all(w);
        world_tick(w, IOSCHEDD_REFRESH_USEC);
        manager_refresh(w->m);
        assert_int_equal(w->n_submitted, 0);
        world_tick(w, UEVENT_BURST_MAX_USEC);
        assert_false(uevent_udev_pending(u));
        manager_refresh(w->m);
        assert_int_equal(w->n_submitted, n);
        assert_int_equal(submitted_for(w, world_disk(w, disk_name(0)))->kind, JOB_PLAN);
        world_run_all(w);
        world_free(w);
}

/* The disk goes away while its job runs: it leaves the manager, and who waited for it hears
 * -ENODEV, also for the work coalesced behind the job. */
TEST(gone_while_running) {
        World *w = world_ran(N_DISKS, SETTINGS);
        Waiter *a = waiter_init(&w->a), *b = waiter_init(&w->b);
        DiskObject *d = world_disk(w, "loop7");

        /* Queued, then gone before its worker reads it. */
        assert_int_equal(disk_object_queue(d, JOB_APPLY, NULL, &a->c), 0);
        assert_int_equal(fake_disk_remove(w->k, "loop7"), 0);
        assert_int_equal(disk_object_queue(d, JOB_PLAN, NULL, &b->c), 0);
        completion_arm(&a->c);
        completion_arm(&b->c);
        world_run_one(w);
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
        World *w = world_ran(N_DISKS, SETTINGS);
        DiskObject *d = world_disk(w, "loop8");
        Waiter *a = waiter_init(&w->a);

        assert_int_equal(disk_object_want(d, JOB_APPLY, NULL, NULL), 0);
        assert_int_equal(disk_object_queue(d, JOB_APPLY, NULL, &a->c), 0);
        completion_arm(&a->c);
        uevent_handle_udev(w->m->uevent, "remove", "loop8", NULL, NULL, 0);
        assert_null(manager_find_disk(w->m, "loop8"));
        assert_true(d->gone);
        assert_int_equal(a->done, 1);
        assert_int_equal(a->gone, 1);
        assert_int_equal(disk_object_want(d, JOB_APPLY, NULL, NULL), -ENODEV);
        /* The job comes back (valgrind and ASan see the object freed then). */
        world_run_one(w);
        assert_int_equal(w->n_submitted, 0);
        assert_int_equal(w->m->n_disks, N_DISKS - 1);
        world_free(w);
}

/* The kernel's uevents as its socket carries them (the daemon reads them without libudev). */
TEST(uevent_parse_kernel) {
        static const char add[] = "add@/devices/virtual/block/loop5000\0ACTION=add\0"
                "DEVPATH=/devices/virtual/block/loop5000\0SUBSYSTEM=block\0MAJOR=7\0MINOR=5000\0"
                "DEVNAME=loop5000\0DEVTYPE=disk\0DISKSEQ=12\0SEQNUM=4242";
        static const char bdi[] = "add@/devices/virtual/bdi/7:5000\0ACTION=add\0"
                "DEVPATH=/devices/virtual/bdi/7:5000\0SUBSYSTEM=bdi\0SEQNUM=4243";
        static const char no_action[] = "add@/devices/virtual/block/loop1\0"
                "DEVPATH=/devices/virtual/block/loop1\0SUBSYSTEM=block";
        static const char no_header[] = "ACTION=add\0DEVPATH=/devices/virtual/block/loop1\0SUBSYSTEM=block";
        static const char short_udev[] = "libudev\0\xfe\xed\xca\xfe";
        static const char no_name[] = "add@/\0ACTION=add\0DEVPATH=/devices/\0SUBSYSTEM=block";
        Uevent e;

        assert_int_equal(uevent_parse(add, sizeof(add) - 1, &e), 0);
        assert_string_equal(e.action, "add");
        assert_string_equal(e.devpath, "/devices/virtual/block/loop5000");
        assert_string_equal(e.name, "loop5000");
        assert_string_equal(e.subsystem, "block");
        assert_string_equal(e.devtype, "disk");
        assert_int_equal(e.seqnum, 4242);
        assert_null(e.devpath_old);

        assert_int_equal(uevent_parse(bdi, sizeof(bdi) - 1, &e), 0);
        assert_string_equal(e.subsystem, "bdi");
        assert_null(e.devtype);
        assert_string_equal(e.name, "7:5000");

        assert_int_equal(uevent_parse(no_action, sizeof(no_action) - 1, &e), -EBADMSG);
        assert_int_equal(uevent_parse(no_header, sizeof(no_header) - 1, &e), -EBADMSG);
        assert_int_equal(uevent_parse(short_udev, sizeof(short_udev) - 1, &e), -EBADMSG);
        assert_int_equal(uevent_parse(no_name, sizeof(no_name) - 1, &e), -EBADMSG);
}

/* udev's broadcast: its header (systemd's monitor_netlink_header), then the properties. */
static size_t udev_message(char *buf, size_t size, const char *props, size_t len, uint32_t magic) {
        uint32_t h[8] = { htobe32(magic), 40, 40, (uint32_t) len };

        assert_true(40 + len < size);
        memcpy(buf, "libudev", 8);
        memcpy(buf + 8, h, sizeof(h));
        memcpy(buf + 40, props, len);
        buf[40 + len] = 0;
        return 40 + len;
}

TEST(uevent_parse_udev) {
        static const char props[] = "ACTION=move\0DEVPATH=/devices/virtual/block/dm-3\0"
                "DEVPATH_OLD=/devices/virtual/block/dm-2\0SUBSYSTEM=block\0DEVTYPE=disk\0SEQNUM=77\0"
                "ID_MODEL=Fancy\0ID_SERIAL=S123\0DM_NAME=vg-lv\0MY_KEY=mine\0USEC_INITIALIZED=5";
        _cleanup_(udev_props_freep) UdevProps *p = NULL, *all = NULL;
        char *const keys[] = { (char *) "MY_KEY", NULL };
        char buf[512];
        size_t n;
        Uevent e;

        n = udev_message(buf, sizeof(buf), props, sizeof(props), 0xfeedcafe);
        assert_int_equal(uevent_parse(buf, n, &e), 0);
        assert_string_equal(e.action, "move");
        assert_string_equal(e.name, "dm-3");
        assert_string_equal(e.devpath_old, "/devices/virtual/block/dm-2");
        assert_string_equal(e.devtype, "disk");
        assert_int_equal(e.seqnum, 77);

        /* The identity and the keys asked for; every one with all. */
        assert_int_equal(uevent_udev_props(&e, false, keys, &p), 0);
        assert_string_equal(udev_props_get(p, "ID_MODEL"), "Fancy");
        assert_string_equal(udev_props_get(p, "MY_KEY"), "mine");
        assert_null(udev_props_get(p, "USEC_INITIALIZED"));
        assert_int_equal(uevent_udev_props(&e, true, NULL, &all), 0);
        assert_string_equal(udev_props_get(all, "USEC_INITIALIZED"), "5");
        assert_string_equal(udev_props_get(all, "MY_KEY"), "mine");

        /* Another magic, or properties past the end: not udev's. */
        n = udev_message(buf, sizeof(buf), props, sizeof(props), 0xcafefeed);
        assert_int_equal(uevent_parse(buf, n, &e), -EBADMSG);
        n = udev_message(buf, sizeof(buf), props, sizeof(props), 0xfeedcafe);
        assert_int_equal(uevent_parse(buf, n - 1, &e), -EBADMSG);
}

DEFINE_TEST_MAIN(NULL, NULL);
