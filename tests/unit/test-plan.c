/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "conf.h"
#include "fake-kernel.h"
#include "fixture.h"
#include "plan.h"
#include "tests.h"
#include "util.h"

typedef struct Ctx {
        FakeKernel *k;
        Sysfs *s;
        Disk *d;
        FixturePlan x;
} Ctx;

static void ctx_done(Ctx *c) {
        fixture_plan_done(&c->x);
        disk_free(c->d);
        sysfs_free(c->s);
        fake_kernel_free(c->k);
}

/* Build a disk from @spec, optionally overwrite its scheduler line with @sched_line (real
 * text of a given kernel), plan the settings of @settings for it. */
static void plan_for(Ctx *c, const FakeDiskSpec *spec, const char *sched_line, const char *settings) {
        char path[256];

        *c = (Ctx) {};
        c->k = fake_kernel_new();
        assert_non_null(c->k);
        assert_int_equal(fake_disk_add(c->k, spec), 0);
        if (sched_line) {
                snprintf(path, sizeof(path), "sys/class/block/%s/queue/scheduler", spec->name);
                assert_int_equal(fake_write(c->k, path, sched_line), 0);
        }
        assert_int_equal(sysfs_new(c->k->root, &c->s), 0);
        fake_kernel_attach(c->k, c->s);
        assert_int_equal(sysfs_load_disk(c->s, spec->name, NULL, NULL, &c->d), 0);

        fixture_plan(&c->x, "plan.conf", c->d, settings);
}

static const Action *action(const Ctx *c, const char *key) {
        return fixture_action(c->x.plan, key);
}

static void expect(const char *settings, const FakeDiskSpec *spec, const char *sched_line,
                   const char *key, ActionType type, const char *write, const char *reason) {
        Ctx c;
        const Action *a;

        plan_for(&c, spec, sched_line, settings);
        a = action(&c, key);
        if (a->type != type || (write && !streq_ptr(a->write, write)) ||
            (reason && !strstr(strempty(a->reason), reason)))
                fail_msg("%s on %s: got %s write=%s reason=\"%s\"; expected %s write=%s reason~\"%s\"",
                         settings, spec->name, action_type_to_string(a->type), strna(a->write),
                         strna(a->reason), action_type_to_string(type), strna(write), strna(reason));
        if (type != ACTION_WRITE)
                assert_null(a->write);
        ctx_done(&c);
}

static const FakeDiskSpec ssd = { .name = "sda", .devnum = "8:0", .scheduler = "mq-deadline", .queues = 1 };
static const FakeDiskSpec hdd = { .name = "sdb", .devnum = "8:16", .scheduler = "mq-deadline", .rotational = 1 };
static const FakeDiskSpec nvme = { .name = "nvme0n1", .devnum = "259:0", .scheduler = "none", .queues = 4 };
static const FakeDiskSpec bfq_disk = { .name = "sdc", .devnum = "8:32", .scheduler = "bfq", .wbt = "0" };
static const FakeDiskSpec noelv = { .name = "sdd", .devnum = "8:48" };
static const FakeDiskSpec dm = { .name = "dm-0", .devnum = "253:0", .no_scheduler_file = true };
static const FakeDiskSpec part = { .name = "sda1", .devnum = "8:1", .partition = true };
static const FakeDiskSpec smr = { .name = "sde", .devnum = "8:64", .scheduler = "mq-deadline", .zoned = "host-managed", .rotational = 1 };
static const FakeDiskSpec nowbt = { .name = "sdf", .devnum = "8:80", .scheduler = "none", .wbt = "EINVAL" };

TEST(scheduler) {
        /* unchanged, in each kernel's format */
        expect("scheduler = mq-deadline", &ssd, "none [mq-deadline] kyber bfq ", "scheduler", ACTION_SKIP, NULL, "already");
        expect("scheduler = mq-deadline", &ssd, "kyber [mq-deadline] bfq none", "scheduler", ACTION_SKIP, NULL, NULL);
        expect("scheduler = mq-deadline", &ssd, "[mq-deadline] kyber bfq none", "scheduler", ACTION_SKIP, NULL, NULL);
        expect("scheduler = none", &nvme, "[none] mq-deadline kyber bfq \n", "scheduler", ACTION_SKIP, NULL, NULL);
        /* the alias */
        expect("scheduler = deadline", &ssd, NULL, "scheduler", ACTION_SKIP, NULL, NULL);
        /* a change */
        expect("scheduler = none", &ssd, NULL, "scheduler", ACTION_WRITE, "none", "mq-deadline -> none");
        /* first offered of the list wins */
        expect("scheduler = kyber none", &ssd, "none [mq-deadline] bfq", "scheduler", ACTION_WRITE, "none", "first offered");
        expect("scheduler = kyber bfq", &ssd, "none [mq-deadline]", "scheduler", ACTION_UNSUPPORTED, NULL, "kernel offers: none mq-deadline");
        /* no elevator support, bio-based, partition */
        expect("scheduler = none", &noelv, NULL, "scheduler", ACTION_UNSUPPORTED, NULL, "no elevator support");
        expect("scheduler = none", &dm, NULL, "scheduler", ACTION_UNSUPPORTED, NULL, "bio-based");
        expect("scheduler = none", &part, NULL, "scheduler", ACTION_REFUSED, NULL, "partition");
        /* host-managed zoned disks keep mq-deadline */
        expect("scheduler = none", &smr, NULL, "scheduler", ACTION_REFUSED, NULL, "host-managed");
        expect("scheduler = bfq mq-deadline", &smr, NULL, "scheduler", ACTION_SKIP, NULL, NULL);
        expect("scheduler = bfq mq-deadline", &smr, "[none] mq-deadline bfq", "scheduler", ACTION_WRITE, "mq-deadline", NULL);
}

/* SCHED, not offered by the kernel (OFFERED), is unsupported until its module file
 * (lib/modules/RELEASE/kernel/block/MODULE) exists: then it is written, the kernel loads it. */
static void check_loadable(const char *offered, const char *sched, const char *module) {
        struct utsname u;
        char path[512], settings[64];
        Ctx c;

        assert_int_equal(uname(&u), 0);
        snprintf(settings, sizeof(settings), "scheduler = %s", sched);
        plan_for(&c, &ssd, offered, settings);
        assert_int_equal(action(&c, "scheduler")->type, ACTION_UNSUPPORTED);
        snprintf(path, sizeof(path), "lib/modules/%s/kernel/block/%s", u.release, module);
        assert_int_equal(fake_write(c.k, path, ""), 0);
        /* Modules are looked for once a Sysfs (a run of the helper, a worker of the daemon). */
        disk_free(c.d);
        assert_int_equal(sysfs_load_disk(c.s, "sda", NULL, NULL, &c.d), 0);
        fixture_plan_again(&c.x, c.d);
        assert_int_equal(action(&c, "scheduler")->type, ACTION_UNSUPPORTED);
        sysfs_free(c.s);
        assert_int_equal(sysfs_new(c.k->root, &c.s), 0);
        fake_kernel_attach(c.k, c.s);
        disk_free(c.d);
        assert_int_equal(sysfs_load_disk(c.s, "sda", NULL, NULL, &c.d), 0);
        fixture_plan_again(&c.x, c.d);
        assert_int_equal(action(&c, "scheduler")->type, ACTION_WRITE);
        assert_string_equal(action(&c, "scheduler")->write, sched);
        ctx_done(&c);
}

TEST(loadable_module) {
        /* kyber is not registered, but its module exists */
        check_loadable("none [mq-deadline] bfq", "kyber", "kyber-iosched.ko.xz");
        /* Debian 12's form: bfq.ko, uncompressed, the kernel offering only built-in ones. That
         * ioschedd's unit keeps /usr/lib/modules readable is checked by unit-security. */
        check_loadable("none [mq-deadline]", "bfq", "bfq.ko");
}

TEST(tunables) {
        Ctx c;

        expect("iosched.fifo_batch = 16", &ssd, NULL, "iosched.fifo_batch", ACTION_SKIP, NULL, NULL);
        expect("iosched.fifo_batch = 8", &ssd, NULL, "iosched.fifo_batch", ACTION_WRITE, "8", "16 -> 8");
        /* tunables only for the scheduler actually chosen */
        expect("iosched.low_latency = 0", &ssd, NULL, "iosched.low_latency", ACTION_UNSUPPORTED, NULL, "not a tunable of mq-deadline");
        expect("scheduler = bfq\niosched.low_latency = 0", &ssd, NULL, "iosched.low_latency", ACTION_WRITE, "0", "after the switch to bfq");
        expect("scheduler = bfq\niosched.fifo_batch = 4", &ssd, NULL, "iosched.fifo_batch", ACTION_UNSUPPORTED, NULL, "not a tunable of bfq");
        expect("iosched.fifo_batch = 4", &nvme, NULL, "iosched.fifo_batch", ACTION_UNSUPPORTED, NULL, "not a tunable of none");

        /* order: scheduler, tunables, nr_requests, wbt, the rest, read_ahead_kb last */
        plan_for(&c, &nvme, NULL,
                 "read_ahead_kb = 64\nwbt_lat_usec = 500\nnr_requests = 32\niosched.fifo_batch = 4\nscheduler = mq-deadline\nrq_affinity = 2");
        assert_int_equal(c.x.plan->n_actions, 6);
        assert_string_equal(c.x.plan->actions[0].key, "scheduler");
        assert_string_equal(c.x.plan->actions[1].key, "iosched.fifo_batch");
        assert_string_equal(c.x.plan->actions[2].key, "nr_requests");
        assert_string_equal(c.x.plan->actions[3].key, "wbt_lat_usec");
        assert_string_equal(c.x.plan->actions[4].key, "rq_affinity");
        assert_string_equal(c.x.plan->actions[5].key, "read_ahead_kb");
        for (size_t i = 1; i <= 3; i++)
                assert_true(c.x.plan->actions[i].after_switch);
        assert_false(c.x.plan->actions[4].after_switch);
        assert_false(c.x.plan->actions[5].after_switch);
        ctx_done(&c);
}

/* read_expire is kept in jiffies: at HZ=250 the kernel shows 250 as 252. That is "already
 * right", or every run would write it again and report a failure. */
TEST(tunable_in_jiffies) {
        Ctx c;

        plan_for(&c, &ssd, NULL, "iosched.read_expire = 250");
        assert_int_equal(fake_write(c.k, "sys/class/block/sda/queue/iosched/read_expire", "252"), 0);
        assert_int_equal(sysfs_reload_settings(c.s, c.d), 0);
        for (unsigned hz = 0; hz <= 1000; hz += 250) {
                c.d->hz = hz;
                fixture_plan_again(&c.x, c.d);
                /* 252 is 250 rounded up to a tick at HZ=250 only */
                assert_int_equal(action(&c, "iosched.read_expire")->type,
                                 hz == 250 ? ACTION_SKIP : ACTION_WRITE);
        }
        ctx_done(&c);
}

TEST(wbt) {
        expect("wbt_lat_usec = 2000", &ssd, NULL, "wbt_lat_usec", ACTION_SKIP, NULL, NULL);
        expect("wbt_lat_usec = default", &ssd, NULL, "wbt_lat_usec", ACTION_SKIP, NULL, "default (2000 us)");
        expect("wbt_lat_usec = default", &hdd, NULL, "wbt_lat_usec", ACTION_SKIP, NULL, "default (75000 us)");
        expect("wbt_lat_usec = 4000", &ssd, NULL, "wbt_lat_usec", ACTION_WRITE, "4000", "2000 -> 4000");
        expect("wbt_lat_usec = off", &ssd, NULL, "wbt_lat_usec", ACTION_WRITE, "0", NULL);
        /* bfq turned wbt off: the default cannot re-enable it, a number can */
        expect("wbt_lat_usec = off", &bfq_disk, NULL, "wbt_lat_usec", ACTION_SKIP, NULL, "already off");
        expect("wbt_lat_usec = default", &bfq_disk, NULL, "wbt_lat_usec", ACTION_SKIP, NULL, "bfq");
        expect("wbt_lat_usec = 3000", &bfq_disk, NULL, "wbt_lat_usec", ACTION_WRITE, "3000", NULL);
        /* off by hand on another scheduler: the default is a real change */
        {
                FakeDiskSpec off = ssd;

                off.wbt = "0";
                expect("wbt_lat_usec = default", &off, NULL, "wbt_lat_usec", ACTION_WRITE, "-1", "restores");
        }
        /* not set up: the first write sets it up */
        expect("wbt_lat_usec = off", &nowbt, NULL, "wbt_lat_usec", ACTION_SKIP, NULL, "not set up");
        expect("wbt_lat_usec = default", &nowbt, NULL, "wbt_lat_usec", ACTION_SKIP, NULL, "not set up");
        expect("wbt_lat_usec = 2000", &nowbt, NULL, "wbt_lat_usec", ACTION_WRITE, "2000", "sets wbt up");
        /* bio-based: no wbt file */
        expect("wbt_lat_usec = 2000", &dm, NULL, "wbt_lat_usec", ACTION_UNSUPPORTED, NULL, "no such attribute");
}

TEST(numbers) {
        expect("nr_requests = 256", &ssd, NULL, "nr_requests", ACTION_SKIP, NULL, NULL);
        expect("nr_requests = 64", &ssd, NULL, "nr_requests", ACTION_WRITE, "64", "256 -> 64");
        expect("read_ahead_kb = 128", &dm, NULL, "read_ahead_kb", ACTION_SKIP, NULL, NULL);
        expect("max_sectors_kb = 1024", &ssd, NULL, "max_sectors_kb", ACTION_WRITE, "1024", NULL);
        expect("max_sectors_kb = 4096", &ssd, NULL, "max_sectors_kb", ACTION_REFUSED, NULL, "max_hw_sectors_kb (2048)");
        expect("rq_affinity = 2", &ssd, NULL, "rq_affinity", ACTION_WRITE, "2", NULL);
        expect("nomerges = 0", &ssd, NULL, "nomerges", ACTION_SKIP, NULL, NULL);
        expect("add_random = 1", &ssd, NULL, "add_random", ACTION_WRITE, "1", NULL);
        expect("iostats = on", &ssd, NULL, "iostats", ACTION_SKIP, NULL, NULL);
        expect("nr_requests = 64", &part, NULL, "nr_requests", ACTION_REFUSED, NULL, "partition");
}

TEST(unparsable_current) {
        Ctx c;

        plan_for(&c, &ssd, NULL, "nr_requests = 64");
        assert_int_equal(fake_write(c.k, "sys/class/block/sda/queue/nr_requests", "garbage"), 0);
        assert_int_equal(sysfs_reload_settings(c.s, c.d), 0);
        fixture_plan_again(&c.x, c.d);
        assert_int_equal(action(&c, "nr_requests")->type, ACTION_UNSUPPORTED);
        assert_non_null(strstr(action(&c, "nr_requests")->reason, "cannot be parsed"));
        ctx_done(&c);
}

DEFINE_TEST_MAIN(NULL, NULL)
