/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "apply.h"
#include "conf.h"
#include "fake-kernel.h"
#include "fixture.h"
#include "tests.h"
#include "util.h"
#include "writers-scan.h"

static void setup(Fixture *c, const FakeDiskSpec *spec, const char *settings) {
        fixture_setup(c, spec, "apply.conf", "*", settings);
}

static Plan *run(Fixture *c, const char *disk, DiskRunFlags flags, ReportSummary *stats) {
        return fixture_apply(c, disk, NULL, NULL, flags, stats);
}

static const FakeDiskSpec ssd = { .name = "sda", .devnum = "8:0", .scheduler = "none", .queues = 1 };

#define FULL_POLICY                                     \
        "scheduler = mq-deadline\n"                     \
        "iosched.fifo_batch = 8\n"                      \
        "iosched.read_expire = 250\n"                   \
        "nr_requests = 32\n"                            \
        "wbt_lat_usec = 3000\n"                         \
        "read_ahead_kb = 512\n"                         \
        "max_sectors_kb = 256\n"                        \
        "rq_affinity = 2\n"                             \
        "nomerges = 1\n"                                \
        "add_random = 1\n"                              \
        "iostats = 0\n"

TEST(changes_in_order_then_nothing) {
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        setup(&c, &ssd, FULL_POLICY);
        p = run(&c, "sda", 0, &st);
        /* one write per differing attribute, in the order that converges */
        assert_string_equal(c.k->log,
                "sda:queue/scheduler=mq-deadline\n"
                "sda:queue/iosched/fifo_batch=8\n"
                "sda:queue/iosched/read_expire=250\n"
                "sda:queue/nr_requests=32\n"
                "sda:queue/wbt_lat_usec=3000\n"
                "sda:queue/max_sectors_kb=256\n"
                "sda:queue/rq_affinity=2\n"
                "sda:queue/nomerges=1\n"
                "sda:queue/add_random=1\n"
                "sda:queue/iostats=0\n"
                "sda:queue/read_ahead_kb=512\n");
        assert_int_equal(st.written, 11);
        assert_int_equal(st.failed, 0);
        for (size_t i = 0; i < p->n_actions; i++)
                assert_int_equal(p->actions[i].outcome, OUTCOME_WRITTEN);
        assert_string_equal(fixture_action(p, "nr_requests")->result, "32");
        plan_free(p);

        /* the same policy again: zero writes */
        fake_kernel_forget_writes(c.k);
        st = (ReportSummary) {};
        p = run(&c, "sda", 0, &st);
        assert_int_equal(c.k->n_writes, 0);
        assert_int_equal(st.written, 0);
        assert_int_equal(st.skipped, 11);
        assert_int_equal(sysfs_get_n_writes(c.s), 11);
        plan_free(p);
        fixture_teardown(&c);
}

TEST(switch_resets_then_decides_again) {
        FakeDiskSpec bfq = ssd;
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        /* on bfq wbt reads 0; the switch to mq-deadline re-enables the default (2000); the
         * policy's "default" is then already right: decided after the switch, not written */
        bfq.scheduler = "bfq";
        bfq.wbt = "0";
        setup(&c, &bfq, "scheduler = mq-deadline\nwbt_lat_usec = default\nnr_requests = 64\n");
        p = run(&c, "sda", 0, &st);
        assert_string_equal(c.k->log, "sda:queue/scheduler=mq-deadline\n");
        assert_int_equal(fixture_action(p, "wbt_lat_usec")->outcome, OUTCOME_SKIPPED);
        /* the fake kernel resets nr_requests to 64 on a switch to mq-deadline */
        assert_int_equal(fixture_action(p, "nr_requests")->outcome, OUTCOME_SKIPPED);
        assert_int_equal(st.written, 1);
        plan_free(p);
        fixture_teardown(&c);
}

/* A queue limit written after read_ahead_kb raised it again (blk_apply_bdi_limits() on a
 * rotational disk): the read-ahead comes last, and is decided again after each write. */
TEST(limits_raise_read_ahead) {
        FakeDiskSpec hdd = ssd;
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        hdd.rotational = 1;
        setup(&c, &hdd, "read_ahead_kb = 64\nmax_sectors_kb = 256\niostats = 0\n");
        assert_int_equal(fake_write(c.k, "sys/class/block/sda/queue/read_ahead_kb", "64"), 0);
        p = run(&c, "sda", 0, &st);
        /* read_ahead_kb was right before, but the limits raised it to 512 */
        assert_string_equal(c.k->log,
                "sda:queue/max_sectors_kb=256\n"
                "sda:queue/iostats=0\n"
                "sda:queue/read_ahead_kb=64\n");
        assert_int_equal(fixture_action(p, "read_ahead_kb")->outcome, OUTCOME_WRITTEN);
        assert_int_equal(st.failed, 0);
        plan_free(p);
        {
                _cleanup_(freep) char *ra = fake_read(c.k, "sys/class/block/sda/queue/read_ahead_kb");

                assert_string_equal(ra, "64");
        }
        fake_kernel_forget_writes(c.k);
        p = run(&c, "sda", 0, NULL);
        assert_int_equal(c.k->n_writes, 0);
        plan_free(p);
        fixture_teardown(&c);
}

TEST(busy_is_retried) {
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        setup(&c, &ssd, "nr_requests = 32\n");
        c.k->busy = 3;
        p = run(&c, "sda", 0, &st);
        assert_int_equal(c.k->n_writes, 4);
        assert_int_equal(fixture_action(p, "nr_requests")->outcome, OUTCOME_WRITTEN);
        assert_int_equal(st.written, 1);
        plan_free(p);

        /* a writer that never lets go: bounded, then a failure with the errno */
        assert_int_equal(fake_write(c.k, "sys/class/block/sda/queue/nr_requests", "256"), 0);
        c.k->busy = 1000;
        c.k->n_writes = 0;
        st = (ReportSummary) {};
        p = run(&c, "sda", 0, &st);
        assert_int_equal(c.k->n_writes, APPLY_BUSY_TRIES);
        assert_int_equal(fixture_action(p, "nr_requests")->outcome, OUTCOME_FAILED);
        assert_int_equal(fixture_action(p, "nr_requests")->error, -EBUSY);
        assert_int_equal(st.failed, 1);
        plan_free(p);
        fixture_teardown(&c);
}

TEST(einval_falls_back) {
        FakeDiskSpec spec = ssd;
        struct utsname u;
        char path[512];
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        /* kyber looks loadable (a module file exists) but the kernel refuses it: the next
         * scheduler of the list is tried */
        spec.schedulers = "none mq-deadline bfq";
        setup(&c, &spec, "scheduler = kyber bfq\n");
        assert_int_equal(uname(&u), 0);
        snprintf(path, sizeof(path), "lib/modules/%s/kernel/block/kyber-iosched.ko", u.release);
        assert_int_equal(fake_write(c.k, path, ""), 0);
        p = run(&c, "sda", 0, &st);
        assert_string_equal(c.k->log, "sda:queue/scheduler=kyber\nsda:queue/scheduler=bfq\n");
        assert_int_equal(fixture_action(p, "scheduler")->outcome, OUTCOME_WRITTEN);
        assert_string_equal(fixture_action(p, "scheduler")->result, "bfq");
        plan_free(p);
        fixture_teardown(&c);

        /* nothing of the list works: a clear failure */
        setup(&c, &spec, "scheduler = kyber\n");
        assert_int_equal(fake_write(c.k, path, ""), 0);
        st = (ReportSummary) {};
        p = run(&c, "sda", 0, &st);
        assert_int_equal(fixture_action(p, "scheduler")->outcome, OUTCOME_FAILED);
        assert_int_equal(fixture_action(p, "scheduler")->error, -EINVAL);
        assert_non_null(strstr(fixture_action(p, "scheduler")->reason, "Invalid argument"));
        plan_free(p);
        fixture_teardown(&c);
}

/* A disk that goes away while its writes go out: the disk it was, the write that finds it gone
 * (FakeKernel.vanish_*), and what then becomes of each key and of the writes. */
typedef struct GoneCase {
        const char *what;
        const FakeDiskSpec *spec;
        const char *settings;
        int vanish_after;
        bool vanish_after_success, vanish_queue_only;
        const FakeDiskSpec *vanish_readd;
        struct {
                const char *key;
                Outcome outcome;
        } keys[3];
        unsigned gone, n_writes;
} GoneCase;

static const FakeDiskSpec loop7_41 = { .name = "loop7", .devnum = "7:7", .scheduler = "none",
                                       .queues = 1, .diskseq = "41" };
static const FakeDiskSpec loop7_42 = { .name = "loop7", .devnum = "7:7", .scheduler = "none",
                                       .queues = 1, .diskseq = "42" };
static const FakeDiskSpec loop7_noseq = { .name = "loop7", .devnum = "7:7", .scheduler = "none",
                                          .queues = 1 };

static const GoneCase gone_cases[] = {
        {
                .what = "gone at the second write",
                .spec = &ssd, .settings = "scheduler = mq-deadline\nnr_requests = 32\nread_ahead_kb = 64\n",
                .vanish_after = 2,
                .keys = { { "scheduler", OUTCOME_WRITTEN }, { "nr_requests", OUTCOME_GONE },
                          { "read_ahead_kb", OUTCOME_GONE } },
                .gone = 2, .n_writes = 2,
        },
        /* The disk went away and a new one came with the same name and number before iosched
         * looked (loop devices do that): the ENODEV of a queue attribute's open file is proof
         * enough that the disk it was opened for is gone. Nothing is written to the new one. */
        {
                .what = "replaced",
                .spec = &ssd, .settings = "nr_requests = 32\nread_ahead_kb = 64\n",
                .vanish_after = 1, .vanish_readd = &ssd,
                .keys = { { "nr_requests", OUTCOME_GONE }, { "read_ahead_kb", OUTCOME_GONE } },
                .gone = 2, .n_writes = 1,
        },
        /* The write went through, then the disk was removed and made again with the same name
         * and number (a loop device) before the value was read back: the value read is the new
         * device's, and only diskseq tells the two apart. The old disk is gone; the new one gets
         * no write (its own uevent brings its policy). */
        {
                .what = "replaced after the write",
                .spec = &loop7_41, .settings = "nr_requests = 32\nread_ahead_kb = 64\n",
                .vanish_after = 1, .vanish_after_success = true, .vanish_readd = &loop7_42,
                .keys = { { "nr_requests", OUTCOME_GONE }, { "read_ahead_kb", OUTCOME_GONE } },
                .gone = 2, .n_writes = 1,
        },
        /* The same race without diskseq (before Linux 5.15): the value is read back below the
         * directory the run holds open (sysfs_pin_disk()), the old disk's, which is gone: no
         * write lands on the new device either. */
        {
                .what = "replaced after the write, no diskseq",
                .spec = &loop7_noseq, .settings = "nr_requests = 32\n",
                .vanish_after = 1, .vanish_after_success = true, .vanish_readd = &loop7_noseq,
                .keys = { { "nr_requests", OUTCOME_GONE } },
                .gone = 1, .n_writes = 1,
        },
        /* del_gendisk() removes queue/ long before "dev": a disk caught in between is gone, not
         * a disk whose attributes cannot be read (which would make the write a failure). */
        {
                .what = "half deleted",
                .spec = &ssd, .settings = "nr_requests = 32\nread_ahead_kb = 64\n",
                .vanish_after = 1, .vanish_queue_only = true,
                .keys = { { "nr_requests", OUTCOME_GONE }, { "read_ahead_kb", OUTCOME_GONE } },
                .gone = 2, .n_writes = 1,
        },
};

TEST(disk_gone) {
        for (size_t i = 0; i < ELEMENTSOF(gone_cases); i++) {
                const GoneCase *t = &gone_cases[i];
                ReportSummary st = {};
                Plan *p;
                Fixture c;

                print_message("%s\n", t->what);
                setup(&c, t->spec, t->settings);
                c.k->vanish_after = t->vanish_after;
                c.k->vanish_after_success = t->vanish_after_success;
                c.k->vanish_queue_only = t->vanish_queue_only;
                c.k->vanish_readd = t->vanish_readd;
                p = run(&c, t->spec->name, 0, &st);
                for (size_t j = 0; j < ELEMENTSOF(t->keys) && t->keys[j].key; j++)
                        assert_int_equal(fixture_action(p, t->keys[j].key)->outcome, t->keys[j].outcome);
                assert_int_equal(st.failed, 0);
                assert_int_equal(st.gone, t->gone);
                assert_int_equal(c.k->n_writes, t->n_writes);
                plan_free(p);
                fixture_teardown(&c);
        }
}

static int ignoring_hook(Sysfs *s, int fd, const char *disk, const char *rel, const char *value,
                         void *userdata) {
        return 0;       /* accepts every write and changes nothing */
}

TEST(write_not_confirmed) {
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        setup(&c, &ssd, "nr_requests = 32\n");
        sysfs_set_hooks(c.s, NULL, ignoring_hook, NULL);
        p = run(&c, "sda", 0, &st);
        assert_int_equal(fixture_action(p, "nr_requests")->outcome, OUTCOME_FAILED);
        assert_non_null(strstr(fixture_action(p, "nr_requests")->reason, "reads back \"256\""));
        assert_int_equal(st.failed, 1);
        /* written once more in case another writer came in between, then given up */
        assert_int_equal(sysfs_get_n_writes(c.s), 2);
        plan_free(p);
        fixture_teardown(&c);
}

/* Another writer changes the value right after ours (the kernel resets read_ahead_kb when a
 * loop device is detached): one more write, and it holds. */
static int racing_hook(Sysfs *s, int fd, const char *disk, const char *rel, const char *value,
                       void *userdata) {
        FakeKernel *k = userdata;
        int r = fake_kernel_write_hook(s, fd, disk, rel, value, k);

        if (r >= 0 && k->n_writes == 1)
                fake_write(k, "sys/class/block/sda/queue/nr_requests", "128");
        return r;
}

TEST(value_changed_after_write) {
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        setup(&c, &ssd, "nr_requests = 32\n");
        sysfs_set_hooks(c.s, NULL, racing_hook, c.k);
        p = run(&c, "sda", 0, &st);
        assert_int_equal(fixture_action(p, "nr_requests")->outcome, OUTCOME_WRITTEN);
        assert_int_equal(st.failed, 0);
        assert_int_equal(c.k->n_writes, 2);
        plan_free(p);
        fixture_teardown(&c);
}

/* DISK_RUN_LOCK where there is no lock to take: no node under ROOT/dev, or a node that is not
 * the disk's block device (a regular file of that name): the switch is made as without it.
 * (The lock itself, against a holder, is tests/integration/apply-lock.sh.) */
TEST(lock_without_node) {
        _cleanup_(freep) char *dir = NULL, *node = NULL;
        ReportSummary st = {};
        Disk fake = { .name = (char *) "sda", .devnum = (char *) "8:0" };
        Plan *p;
        Fixture c;
        FILE *f;
        int fd;

        setup(&c, &ssd, "scheduler = mq-deadline\n");
        p = run(&c, "sda", DISK_RUN_LOCK, &st);
        assert_string_equal(c.k->log, "sda:queue/scheduler=mq-deadline\n");
        assert_int_equal(st.written, 1);
        plan_free(p);

        assert_int_equal(sysfs_lock_disk(c.s, &fake, 0, &fd), 0);
        assert_int_equal(fd, -1);
        dir = strdup_printf("%s/dev", c.k->root);
        node = strdup_printf("%s/dev/sda", c.k->root);
        assert_int_equal(mkdir(dir, 0755), 0);
        f = fopen(node, "we");
        assert_non_null(f);
        fclose(f);
        assert_int_equal(sysfs_lock_disk(c.s, &fake, 0, &fd), 0);
        assert_int_equal(fd, -1);
        fake.devnum = (char *) "8";
        assert_int_equal(sysfs_lock_disk(c.s, &fake, 0, &fd), -EINVAL);
        fake.devnum = (char *) "8:0";
        fake.name = (char *) "../sda";
        assert_int_equal(sysfs_lock_disk(c.s, &fake, 0, &fd), -EINVAL);

        fake_kernel_forget_writes(c.k);
        assert_int_equal(fake_write(c.k, "sys/class/block/sda/queue/scheduler", "[none] mq-deadline"), 0);
        st = (ReportSummary) {};
        p = run(&c, "sda", DISK_RUN_LOCK, &st);
        assert_string_equal(c.k->log, "sda:queue/scheduler=mq-deadline\n");
        assert_int_equal(st.written, 1);
        plan_free(p);
        fixture_teardown(&c);       /* removes the fake root, dev/ with it */
}

TEST(dry_run) {
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        setup(&c, &ssd, FULL_POLICY);
        p = run(&c, "sda", DISK_RUN_DRY_RUN, &st);
        assert_int_equal(sysfs_get_n_writes(c.s), 0);
        assert_int_equal(st.would_write, 11);
        assert_int_equal(fixture_action(p, "scheduler")->outcome, OUTCOME_WOULD_WRITE);
        plan_free(p);
        fixture_teardown(&c);
}

/* The pipeline decides once what a name is: a disk (its plan), a partition (left alone, not
 * resolved), nothing (gone, no disk read), or no name at all. */
TEST(run_states) {
        static const FakeDiskSpec part = { .name = "sda1", .devnum = "8:1", .partition = true };
        _cleanup_(disk_run_freep) DiskRun *run = NULL;
        Fixture c;

        setup(&c, &ssd, "scheduler = mq-deadline\n");
        assert_int_equal(fake_disk_add(c.k, &part), 0);

        assert_int_equal(disk_run(c.s, c.p, NULL, "sda1", NULL, NULL, 0, &run), 0);
        assert_int_equal(run->state, DISK_RUN_PARTITION);
        assert_non_null(run->disk);
        assert_null(run->resolved);
        assert_null(run->plan);
        run = disk_run_free(run);

        assert_int_equal(disk_run(c.s, c.p, NULL, "sdq", NULL, NULL, 0, &run), 0);
        assert_int_equal(run->state, DISK_RUN_GONE);
        assert_null(run->disk);
        assert_null(run->plan);
        run = disk_run_free(run);

        assert_int_equal(disk_run(c.s, c.p, NULL, "../sda", NULL, NULL, 0, &run), -EINVAL);
        assert_null(run);

        assert_int_equal(disk_run(c.s, c.p, NULL, "sda", NULL, NULL, 0, &run), 0);
        assert_int_equal(run->state, DISK_RUN_DONE);
        assert_int_equal(run->summary.written, 1);
        assert_int_equal(run->notes, 0);
        assert_int_equal(sysfs_get_n_writes(c.s), 1);
        fixture_teardown(&c);
}

/* One summary for a disk and for a run over many. */
TEST(summary_add) {
        ReportSummary total = {}, one = { .written = 2, .skipped = 1, .failed = 1 }, two = { .gone = 1, .refused = 3 };
        const Action failure = { .key = (char *) "nr_requests" };

        one.first_failure = &failure;
        report_summary_add(&total, &one);
        report_summary_add(&total, &two);
        assert_int_equal(total.written, 2);
        assert_int_equal(total.skipped, 1);
        assert_int_equal(total.failed, 1);
        assert_int_equal(total.gone, 1);
        assert_int_equal(total.refused, 3);
        assert_int_equal(total.would_write, 0);
        assert_ptr_equal(total.first_failure, &failure);
}

TEST(bad_names_never_reach_paths) {
        static const char *const names[] = { "../sda", "sda/../../etc", "..", "", "a b" };
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        FakeKernel *k = fake_kernel_new();
        Disk *d = NULL;

        assert_int_equal(sysfs_new(k->root, &s), 0);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                assert_int_equal(sysfs_load_disk(s, names[i], NULL, NULL, &d), -EINVAL);
                assert_int_equal(sysfs_write_setting(s, names[i], attr_get(ATTR_NR_REQUESTS), NULL, "1"), -EINVAL);
        }
        assert_int_equal(sysfs_write_setting(s, "sda", attr_get(ATTR_IOSCHED), "../../dev", "1"), -EINVAL);
        assert_int_equal(sysfs_load_disk(s, "nonesuch", NULL, NULL, &d), -ENODEV);
        assert_null(d);
        fake_kernel_free(k);
}

/* udev's database is written by whatever ran in udev: its strings end up on D-Bus and in JSON,
 * which need UTF-8. What is not printable UTF-8 is treated as absent. */
TEST(identity_not_utf8) {
        static const FakeDiskSpec spec = { .name = "sdz", .devnum = "8:240", .scheduler = "none" };
        char *props[] = { "ID_MODEL=bad\x7f\xfemodel", "ID_SERIAL_SHORT=ser\xc3\x28ial",
                          "ID_VENDOR=V\xc3\xa9ndor", "ID_WWN=0x5000\x1b[31m", NULL };
        _cleanup_(udev_props_freep) UdevProps *u = fixture_props(props);
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(disk_freep) Disk *d = NULL;
        FakeKernel *k = fake_kernel_new();

        assert_int_equal(fake_disk_add(k, &spec), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);
        assert_int_equal(sysfs_load_disk(s, "sdz", u, NULL, &d), 0);
        assert_null(d->model);
        assert_null(d->serial);
        assert_null(d->wwn);
        assert_string_equal(d->vendor, "V\xc3\xa9ndor");  /* valid UTF-8 stays */
        assert_true(string_is_printable("V\xc3\xa9ndor", 10));
        assert_false(string_is_printable("\xed\xa0\x80", 10));      /* a surrogate */
        assert_false(string_is_printable("\xc0\xaf", 10));          /* overlong "/" */
        fake_kernel_free(k);
}

TEST(list_disks) {
        static const FakeDiskSpec a = { .name = "loop10", .scheduler = "none" };
        static const FakeDiskSpec b = { .name = "loop2", .scheduler = "none" };
        static const FakeDiskSpec pa = { .name = "loop2p1", .partition = true };
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(strv_freep) char **l = NULL;
        FakeKernel *k = fake_kernel_new();

        fake_disk_add(k, &a);
        fake_disk_add(k, &b);
        fake_disk_add(k, &pa);
        assert_int_equal(sysfs_new(k->root, &s), 0);
        assert_int_equal(sysfs_list_disks(s, &l), 0);
        assert_int_equal(strv_length(l), 2);
        assert_string_equal(l[0], "loop2");
        assert_string_equal(l[1], "loop10");
        fake_kernel_free(k);
}

/* A storage stack as tests/system's guest shows it (Debian's 6.1): a multipath map over two
 * SCSI paths, an LVM volume and an md array (bio-based: queue/scheduler reads a lone "none",
 * nr_requests and wbt_lat_usec are there and refuse writes), an md member. */
static const char *const stack_conf =
        "[rule all]\nmatch.name = *\nscheduler = bfq\nnr_requests = 64\nwbt_lat_usec = off\n"
        "read_ahead_kb = 4096\nmax_sectors_kb = 256\n"
        "[rule map]\nmatch.role = multipath-map\nmatch.dm = mpath\nscheduler = kyber\n"
        "[rule paths]\nmatch.role = multipath-path\nscheduler = none\n"
        "[rule lvm]\nmatch.dm = LVM\nmatch.property.DM_LV_NAME = data\nread_ahead_kb = 8192\n";

static DiskRun *stack_run(Fixture *c, const char *disk, char * const *props) {
        _cleanup_(udev_props_freep) UdevProps *u = fixture_props(props);
        DiskLoad load;
        DiskRun *run = NULL;

        policy_disk_load(c->p, &load);
        assert_int_equal(disk_run(c->s, c->p, NULL, disk, u, &load, 0, &run), 0);
        assert_non_null(run->disk);
        assert_int_equal(run->summary.failed, 0);
        return run;
}

static void expect_outcome(const DiskRun *run, const char *key, Outcome o, const char *reason) {
        const Action *a = fixture_action(run->plan, key);

        if (a->outcome != o || (reason && !strstr(strempty(a->reason), reason)))
                fail_msg("%s %s: %s (%s), expected %s (%s)", run->disk->name, key, outcome_to_string(a->outcome),
                         strna(a->reason), outcome_to_string(o), strna(reason));
}

TEST(stacks) {
        static const FakeDiskSpec map = { .name = "dm-0", .devnum = "253:0", .scheduler = "mq-deadline", .rotational = 1 };
        static const FakeDiskSpec specs[] = {
                { .name = "sdb", .devnum = "8:16", .scheduler = "mq-deadline", .rotational = 1 },
                { .name = "sdc", .devnum = "8:32", .scheduler = "mq-deadline", .rotational = 1 },
                { .name = "sdd", .devnum = "8:48", .scheduler = "mq-deadline", .rotational = 1 },
                { .name = "dm-1", .devnum = "253:1" },          /* scheduler "none" alone */
                { .name = "md127", .devnum = "9:127" },
        };
        char *lv_props[] = { (char *) "DM_LV_NAME=data", (char *) "DM_UUID=LVM-abc", NULL };
        char *path_props[] = { (char *) "DM_MULTIPATH_DEVICE_PATH=1", NULL };
        _cleanup_(disk_run_freep) DiskRun *m = NULL, *p = NULL, *p2 = NULL, *lv = NULL, *md = NULL, *mem = NULL;
        Fixture c;

        fixture_setup(&c, &map, "stack.conf", "none", "");
        policy_free(c.p);
        assert_non_null(c.p = policy_new());
        {
                _cleanup_(strv_freep) char **errors = calloc(1, sizeof(char *));

                assert_int_equal(conf_parse_text(stack_conf, strlen(stack_conf), "stack.conf", c.p, &errors), 0);
        }
        for (size_t i = 0; i < ELEMENTSOF(specs); i++)
                assert_int_equal(fake_disk_add(c.k, &specs[i]), 0);
        assert_int_equal(fake_write(c.k, "sys/class/block/dm-0/dm/uuid", "mpath-35000c50015ea7100"), 0);
        assert_int_equal(fake_write(c.k, "sys/class/block/sdb/holders/dm-0", ""), 0);
        assert_int_equal(fake_write(c.k, "sys/class/block/dm-1/dm/uuid", "LVM-nBUnxiAfr4MNf"), 0);
        assert_int_equal(fake_write(c.k, "sys/class/block/md127/md/level", "raid1"), 0);
        assert_int_equal(fake_write(c.k, "sys/class/block/sdc/holders/md127", ""), 0);

        /* The map: its own policy; max_sectors_kb stays as multipath-tools set it. */
        m = stack_run(&c, "dm-0", NULL);
        assert_int_equal(m->disk->stack.role, STACK_ROLE_MULTIPATH_MAP);
        assert_string_equal(m->disk->stack.dm_kind, "mpath");
        expect_outcome(m, "scheduler", OUTCOME_WRITTEN, NULL);
        assert_string_equal(m->plan->actions[0].write, "kyber");
        expect_outcome(m, "max_sectors_kb", OUTCOME_REFUSED, "multipath-map: max_sectors_kb stays");

        /* A path by holders/, and one the map does not hold yet, by udev's mark. */
        p = stack_run(&c, "sdb", NULL);
        assert_int_equal(p->disk->stack.role, STACK_ROLE_MULTIPATH_PATH);
        assert_string_equal(p->disk->stack.upper, "dm-0");
        expect_outcome(p, "scheduler", OUTCOME_WRITTEN, NULL);
        assert_string_equal(p->plan->actions[0].write, "none");
        expect_outcome(p, "max_sectors_kb", OUTCOME_REFUSED, "multipath-path");
        p2 = stack_run(&c, "sdd", path_props);
        assert_int_equal(p2->disk->stack.role, STACK_ROLE_MULTIPATH_PATH);
        assert_null(p2->disk->stack.upper);
        assert_string_equal(p2->plan->actions[0].write, "none");

        /* Bio-based: the queue-only keys are not applicable, the others are written. */
        lv = stack_run(&c, "dm-1", lv_props);
        assert_int_equal(lv->disk->stack.role, STACK_ROLE_DM);
        assert_string_equal(lv->disk->stack.dm_kind, "LVM");
        assert_true(disk_is_bio_based(lv->disk));
        expect_outcome(lv, "scheduler", OUTCOME_UNSUPPORTED, "not applicable: bio-based queue (dm LVM)");
        expect_outcome(lv, "nr_requests", OUTCOME_UNSUPPORTED, "bio-based");
        expect_outcome(lv, "wbt_lat_usec", OUTCOME_UNSUPPORTED, "bio-based");
        expect_outcome(lv, "max_sectors_kb", OUTCOME_WRITTEN, NULL);
        expect_outcome(lv, "read_ahead_kb", OUTCOME_WRITTEN, NULL);
        assert_string_equal(fixture_action(lv->plan, "read_ahead_kb")->write, "8192");  /* match.property */
        md = stack_run(&c, "md127", NULL);
        assert_int_equal(md->disk->stack.role, STACK_ROLE_MD);
        expect_outcome(md, "nr_requests", OUTCOME_UNSUPPORTED, "not applicable: bio-based queue (md)");
        expect_outcome(md, "read_ahead_kb", OUTCOME_WRITTEN, NULL);
        assert_string_equal(fixture_action(md->plan, "read_ahead_kb")->write, "4096");

        /* A member of the array is a disk with a queue of its own. */
        mem = stack_run(&c, "sdc", NULL);
        assert_int_equal(mem->disk->stack.role, STACK_ROLE_MD_MEMBER);
        assert_string_equal(mem->disk->stack.upper, "md127");
        expect_outcome(mem, "scheduler", OUTCOME_WRITTEN, NULL);
        assert_string_equal(mem->plan->actions[0].write, "bfq");
        expect_outcome(mem, "max_sectors_kb", OUTCOME_WRITTEN, NULL);
        fixture_teardown(&c);
}

/* max_sectors_kb above max_hw_sectors_kb is refused, never written (the kernel's EINVAL). */
TEST(max_sectors_above_hw) {
        static const FakeDiskSpec d = { .name = "sdz", .devnum = "8:400", .scheduler = "none" };
        ReportSummary sum;
        _cleanup_(plan_freep) Plan *plan = NULL;
        Fixture c;

        fixture_setup(&c, &d, "hw.conf", "*", "max_sectors_kb = 4096\n");
        plan = run(&c, "sdz", 0, &sum);
        assert_int_equal(fixture_action(plan, "max_sectors_kb")->outcome, OUTCOME_REFUSED);
        assert_non_null(strstr(fixture_action(plan, "max_sectors_kb")->reason, "above max_hw_sectors_kb (2048)"));
        assert_int_equal(c.k->n_writes, 0);
        assert_int_equal(sum.failed, 0);
        fixture_teardown(&c);
}

/* An NVMe multipath path as 6.1 shows it: hidden (hidden reads 1), a queue, no dev and no node.
 * It is read, classified and written like any disk; iocost, keyed by MAJ:MIN, is not applicable. */
TEST(hidden_nvme_path) {
        static const FakeDiskSpec spec = { .name = "nvme2c2n1", .devnum = "259:9", .scheduler = "mq-deadline", .queues = 2 };
        _cleanup_(writers_freep) Writers *w = NULL;
        _cleanup_(disk_run_freep) DiskRun *run = NULL;
        char path[PATH_MAX];
        Fixture c;

        fixture_setup(&c, &spec, "hidden.conf", "nvme*", "scheduler = none\niocost.enable = yes\n");
        snprintf(path, sizeof(path), "%s/sys/class/block/nvme2c2n1/dev", c.k->root);
        assert_int_equal(unlink(path), 0);
        /* No dev and not hidden: a disk being deleted, gone. */
        assert_false(sysfs_disk_exists(c.s, "nvme2c2n1"));
        assert_int_equal(disk_run(c.s, c.p, NULL, "nvme2c2n1", NULL, NULL, 0, &run), 0);
        assert_int_equal(run->state, DISK_RUN_GONE);
        run = disk_run_free(run);

        assert_int_equal(fake_write(c.k, "sys/class/block/nvme2c2n1/hidden", "1"), 0);
        assert_true(sysfs_disk_exists(c.s, "nvme2c2n1"));
        assert_int_equal(disk_run(c.s, c.p, NULL, "nvme2c2n1", NULL, NULL, DISK_RUN_LOCK, &run), 0);
        assert_int_equal(run->state, DISK_RUN_DONE);
        assert_true(run->disk->hidden);
        assert_null(run->disk->devnum);
        assert_int_equal(run->disk->stack.role, STACK_ROLE_NVME_PATH);
        assert_int_equal(fixture_action(run->plan, "scheduler")->outcome, OUTCOME_WRITTEN);
        assert_int_equal(fixture_action(run->plan, "iocost.enable")->outcome, OUTCOME_UNSUPPORTED);
        assert_non_null(strstr(fixture_action(run->plan, "iocost.enable")->reason, "hidden disk"));
        assert_int_equal(run->summary.failed, 0);
        assert_int_equal(c.k->iocost_writes, 0);
        run = disk_run_free(run);

        /* As ioschedd runs it: everything read (a full pass), the other writers looked for. */
        assert_int_equal(writers_scan(c.k->root, &w), 0);
        assert_int_equal(disk_run(c.s, c.p, w, "nvme2c2n1", NULL, NULL, DISK_RUN_LOCK, &run), 0);
        assert_int_equal(run->state, DISK_RUN_DONE);
        assert_int_equal(run->disk->stack.role, STACK_ROLE_NVME_PATH);
        assert_int_equal(run->summary.failed, 0);
        fixture_teardown(&c);
}

DEFINE_TEST_MAIN(NULL, NULL)
