/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host scan of the other writers (src/writers-scan.c) on a fake root: which files it reads,
 * in which order, what masks and shadows them, and what it refuses to take as a name.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fake-kernel.h"
#include "fixture.h"
#include "hold.h"
#include "tests.h"
#include "util.h"
#include "writers-scan.h"

static void tree_link(FakeKernel *k, const char *target, const char *path) {
        char full[PATH_MAX];

        snprintf(full, sizeof(full), "%s/%s", k->root, path);
        assert_int_equal(symlink(target, full), 0);
}

static void tree_exec(FakeKernel *k, const char *path) {
        char full[PATH_MAX];

        assert_int_equal(fake_write(k, path, "#!/bin/sh"), 0);
        snprintf(full, sizeof(full), "%s/%s", k->root, path);
        assert_int_equal(chmod(full, 0755), 0);
}

/* Every writer for @name as "SOURCE FILE:LINE VALUE" lines. */
static char *found(const Writers *w, const char *name, const char *devpath) {
        _cleanup_(other_writers_done) OtherWriters o = {};
        _cleanup_(strv_freep) char **lines = calloc(1, sizeof(char *));
        _cleanup_(udev_props_freep) UdevProps *udev = NULL;
        WriterTarget t;

        assert_int_equal(udev_props_from_strv((char *[]) { (char *) "ID_BUS=ata", NULL }, &udev), 0);
        t = (WriterTarget) {
                .name = name,
                .devpath = devpath,
                .transport = TRANSPORT_SCSI,
                .rotational = 1,
                .removable = 0,
                .has_scheduler = 1,
                .scheduler_text = "[mq-deadline] none",
                .udev = udev,
                .udev_complete = true,
        };

        assert_int_equal(writers_for_disk(w, &t, &o), 0);
        for (size_t i = 0; i < o.n; i++) {
                _cleanup_(freep) char *where = writer_where(&o.writers[i]);

                assert_int_equal(strv_push(&lines, strdup_printf("%s %s %s", o.writers[i].source, where,
                                                                 strna(o.writers[i].value))),
                                 0);
        }
        return strv_join(lines, "\n");
}

TEST(scan) {
        FakeKernel *k = fake_kernel_new();
        _cleanup_(writers_freep) Writers *w = NULL;
        _cleanup_(freep) char *sda = NULL, *sdc = NULL;
        char fifo[PATH_MAX];

        assert_non_null(k);
        /* udev: /etc shadows /usr/lib, a link to /dev/null masks, and the lib/ -> usr/lib
         * merge of Debian 12 shows each file once. */
        assert_int_equal(fake_write(k, "usr/lib/udev/rules.d/60-sched.rules",
                                    "KERNEL==\"sd*\", ATTR{queue/scheduler}=\"kyber\""), 0);
        assert_int_equal(fake_write(k, "etc/udev/rules.d/60-sched.rules",
                                    "# local\nKERNEL==\"sd*\", ATTR{queue/scheduler}=\"bfq\""), 0);
        assert_int_equal(fake_write(k, "usr/lib/udev/rules.d/61-ra.rules",
                                    "KERNEL==\"sd*\", ATTR{bdi/read_ahead_kb}=\"4096\""), 0);
        tree_link(k, "/dev/null", "etc/udev/rules.d/61-ra.rules");
        assert_int_equal(fake_write(k, "usr/lib/udev/rules.d/62-empty.rules", ""), 0);
        assert_int_equal(fake_write(k, "run/udev/rules.d/62-empty.rules", ""), 0);
        assert_int_equal(fake_write(k, "usr/lib/udev/rules.d/90-iocost.rules",
                                    "ENV{IOCOST_SOLUTIONS}!=\"\", RUN+=\"iocost apply $env{DEVNAME}\""), 0);
        assert_int_equal(fake_write(k, "usr/lib/udev/rules.d/bad\nname.rules",
                                    "KERNEL==\"sd*\", ATTR{queue/nr_requests}=\"1\""), 0);
        tree_link(k, "usr/lib", "lib");
        /* A FIFO where a rules file would be: not read (it would block). */
        snprintf(fifo, sizeof(fifo), "%s/etc/udev/rules.d/70-fifo.rules", k->root);
        assert_int_equal(mkfifo(fifo, 0600), 0);

        /* TuneD: the active profile includes one in /usr/lib. */
        tree_exec(k, "usr/sbin/tuned");
        assert_int_equal(fake_write(k, "etc/tuned/active_profile", "mine"), 0);
        assert_int_equal(fake_write(k, "etc/tuned/mine/tuned.conf",
                                    "[main]\ninclude=throughput\n[disk]\nelevator=none"), 0);
        assert_int_equal(fake_write(k, "usr/lib/tuned/throughput/tuned.conf",
                                    "[disk]\nreadahead=>4096\n[sysfs]\n/sys/block/../../etc/x/queue/nr_requests=1"), 0);

        /* TLP, with a by-id name. */
        tree_exec(k, "usr/sbin/tlp");
        assert_int_equal(fake_write(k, "usr/share/tlp/defaults.conf", "DISK_DEVICES=\"nvme0n1 sda\""), 0);
        assert_int_equal(fake_write(k, "etc/tlp.conf", "DISK_DEVICES=\"ata-DISK_1 sdq\"\nDISK_IOSCHED=\"mq-deadline bfq\""), 0);
        assert_int_equal(fake_write(k, "dev/sdc", ""), 0);
        assert_int_equal(fake_write(k, "dev/disk/by-id/.keep", ""), 0);
        tree_link(k, "../../sdc", "dev/disk/by-id/ata-DISK_1");

        /* sysfsutils and the command line. */
        assert_int_equal(fake_write(k, "etc/sysfs.d/10-ra.conf", "block/sda/queue/read_ahead_kb = 512"), 0);
        assert_int_equal(fake_write(k, "proc/cmdline", "root=/dev/vda1 elevator=deadline quiet"), 0);

        assert_int_equal(writers_scan(k->root, &w), 0);
        sda = found(w, "sda", "/devices/pci0000:00/ata1/host0/target0:0:0/0:0:0:0/block/sda");
        assert_string_equal(sda,
                            "kernel command line /proc/cmdline deadline\n"
                            "udev rule /etc/udev/rules.d/60-sched.rules:2 bfq\n"
                            "TuneD profile mine /etc/tuned/mine/tuned.conf:4 none\n"
                            "TuneD profile throughput /usr/lib/tuned/throughput/tuned.conf:2 >4096\n"
                            "sysfsutils /etc/sysfs.d/10-ra.conf:1 512");
        sdc = found(w, "sdc", NULL);
        assert_string_equal(sdc,
                            "kernel command line /proc/cmdline deadline\n"
                            "udev rule /etc/udev/rules.d/60-sched.rules:2 bfq\n"
                            "TuneD profile mine /etc/tuned/mine/tuned.conf:4 none\n"
                            "TuneD profile throughput /usr/lib/tuned/throughput/tuned.conf:2 >4096\n"
                            "TLP /etc/tlp.conf:2 mq-deadline");
        writers_free(w);
        w = NULL;

        /* systemd's iocost helper installed: its rule writes; TuneD gone: no profile. */
        tree_exec(k, "usr/lib/udev/iocost");
        assert_int_equal(unlink(fifo), 0);
        {
                char tuned[PATH_MAX];

                snprintf(tuned, sizeof(tuned), "%s/usr/sbin/tuned", k->root);
                assert_int_equal(unlink(tuned), 0);
        }
        assert_int_equal(writers_scan(k->root, &w), 0);
        {
                size_t n_iocost = 0, n_tuned = 0;

                for (size_t i = 0; i < writers_count(w); i++) {
                        n_iocost += writers_get(w, i)->kind == WRITER_SYSTEMD_IOCOST;
                        n_tuned += writers_get(w, i)->kind == WRITER_TUNED;
                }
                assert_int_equal(n_iocost, 1);
                assert_int_equal(n_tuned, 0);
        }
        fake_kernel_free(k);
}

TEST(scan_empty_root) {
        FakeKernel *k = fake_kernel_new();
        _cleanup_(writers_freep) Writers *w = NULL;

        assert_non_null(k);
        assert_int_equal(writers_scan(k->root, &w), 0);
        assert_int_equal(writers_count(w), 0);
        fake_kernel_free(k);
        assert_int_equal(writers_scan("/nonexistent-iosched-root", &w), -ENOENT);
}

/* The pipeline with the host's writers: Action.others names them, owner.defer leaves their
 * keys alone (no write, "left to"), a key nobody else writes is written, a hold is written even
 * so. */
static const FakeDiskSpec sdb = { .name = "sdb", .devnum = "8:16", .schedulers = "none mq-deadline kyber",
                                  .scheduler = "none", .queues = 1, .rotational = 1 };

static Plan *run_with(Fixture *c, const char *settings, bool with_hold) {
        _cleanup_(hold_unrefp) Hold *h = NULL;
        _cleanup_(policy_free_borrowedp) Policy *b = NULL;
        _cleanup_(disk_run_freep) DiskRun *run = NULL;
        Policy *p = fixture_policy("/etc/iosched.conf", "sdb", settings);

        if (with_hold) {
                assert_int_equal(hold_new(1, "sdb", "test", "why", 0, &h), 0);
                assert_int_equal(hold_add_setting(h, "scheduler", "kyber", NULL), 0);
        }
        assert_int_equal(policy_with_holds(p, &h, with_hold ? 1 : 0, &b), 0);
        assert_int_equal(disk_run(c->s, b, c->w, "sdb", NULL, NULL, 0, &run), 0);
        policy_free(p);
        for (size_t i = 0; i < run->plan->n_actions; i++)
                run->plan->actions[i].setting = NULL;
        return TAKE_PTR(run->plan);
}

TEST(pipeline) {
        Fixture c;
        Plan *p;
        const Action *a;

        fixture_setup(&c, &sdb, "/etc/iosched.conf", "sdb", "scheduler = none");
        assert_int_equal(fake_write(c.k, "etc/udev/rules.d/60-sched.rules",
                                    "ACTION==\"add|change\", KERNEL==\"sd*\", ATTR{queue/rotational}==\"1\", ATTR{queue/scheduler}=\"kyber\""), 0);
        assert_int_equal(writers_scan(c.k->root, &c.w), 0);

        /* Correcting, today's default: written, and the log line has who else writes it. */
        p = run_with(&c, "scheduler = mq-deadline\nread_ahead_kb = 256", false);
        a = fixture_action(p, "scheduler");
        assert_int_equal(a->outcome, OUTCOME_WRITTEN);
        assert_string_equal(a->others, "/etc/udev/rules.d/60-sched.rules:1");
        assert_null(fixture_action(p, "read_ahead_kb")->others);
        assert_int_equal(c.k->n_writes, 2);
        plan_free(p);

        /* Deferred: the rule's key is left alone; the other one is written. */
        assert_int_equal(fake_write(c.k, "sys/class/block/sdb/queue/scheduler", "[none] mq-deadline kyber"), 0);
        fake_kernel_forget_writes(c.k);
        p = run_with(&c, "scheduler = mq-deadline\nread_ahead_kb = 512\nowner.defer = udev-rules", false);
        a = fixture_action(p, "scheduler");
        assert_int_equal(a->type, ACTION_DEFERRED);
        assert_int_equal(a->outcome, OUTCOME_DEFERRED);
        assert_string_equal(a->reason, "left to udev-rules (/etc/udev/rules.d/60-sched.rules:1, owner.defer at "
                                       "/etc/iosched.conf:5)");
        assert_int_equal(fixture_action(p, "read_ahead_kb")->outcome, OUTCOME_WRITTEN);
        assert_int_equal(c.k->n_writes, 1);
        plan_free(p);

        /* Deferred to another owner: written as usual. */
        fake_kernel_forget_writes(c.k);
        p = run_with(&c, "scheduler = mq-deadline\nowner.defer = tuned", false);
        assert_int_equal(fixture_action(p, "scheduler")->outcome, OUTCOME_WRITTEN);
        plan_free(p);

        /* A hold is asked for explicitly: written, deferral or not. */
        fake_kernel_forget_writes(c.k);
        p = run_with(&c, "scheduler = none\nowner.defer = udev-rules", true);
        a = fixture_action(p, "scheduler");
        assert_string_equal(a->rule, "hold-1");
        assert_int_equal(a->outcome, OUTCOME_WRITTEN);
        plan_free(p);
        fixture_teardown(&c);
}

DEFINE_TEST_MAIN(NULL, NULL)
