/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The other writers' parsers (src/writers.c): udev rules as shipped by distributions, TuneD
 * profile chains, TLP, sysfsutils, the kernel command line; and their evaluation for a disk.
 */
#include <stdio.h>

#include "tests.h"
#include "util.h"
#include "writers-tuned.h"
#include "writers.h"

#define RULES_DIR "/usr/lib/udev/rules.d/"

static Writers *udev(const char *file, const char *text) {
        Writers *w = writers_new();

        assert_non_null(w);
        assert_true(writers_add_udev_rules(w, file, text, strlen(text)) >= 0);
        return w;
}

/* udev's properties from "KEY=value" strings. */
static UdevProps *props(char * const *l) {
        UdevProps *p = NULL;

        assert_int_equal(udev_props_from_strv(l, &p), 0);
        assert_non_null(p);
        return p;
}

static WriterTarget target(const char *name, Transport t, int rotational) {
        return (WriterTarget) {
                .name = name,
                .transport = t,
                .rotational = rotational,
                .removable = 0,
                .has_scheduler = 1,
                .scheduler_text = "[mq-deadline] kyber bfq none",
        };
}

/* The writers of @t, as "KEY VALUE FILE:LINE applies|may apply WHEN" lines. */
static char *eval(const Writers *w, const WriterTarget *t) {
        _cleanup_(other_writers_done) OtherWriters o = {};
        _cleanup_(strv_freep) char **lines = NULL;

        assert_int_equal(writers_for_disk(w, t, &o), 0);
        lines = calloc(1, sizeof(char *));
        assert_non_null(lines);
        for (size_t i = 0; i < o.n; i++) {
                const Writer *x = &o.writers[i];
                const char *key = "?";

                for (AttrId id = 0; id < _ATTR_MAX; id++)
                        if (x->attrs == ATTR_BIT(id))
                                key = attr_get(id)->key;
                if (x->kind == WRITER_SYSTEMD_IOCOST)
                        key = "iocost";
                assert_int_equal(strv_push(&lines, strdup_printf("%s%s%s %s %s:%u %s %s", key,
                                                                 x->tunable ? "" : "", strempty(x->tunable),
                                                                 strna(x->value), x->file, x->line,
                                                                 applies_to_string(x->applies),
                                                                 strna(x->when))),
                                 0);
        }
        return strv_join(lines, "\n");
}

#define assert_eval(w, t, expected)                                     \
        do {                                                            \
                WriterTarget _t = (t);                                  \
                _cleanup_(freep) char *_s = eval(w, &_t);               \
                assert_non_null(_s);                                    \
                if (!streq(_s, expected))                               \
                        fprintf(stderr, "got:\n%s\nexpected:\n%s\n", _s, expected); \
                assert_string_equal(_s, expected);                      \
        } while (0)

/* CachyOS' 60-ioschedulers.rules (2026): KERNEL and ATTR matches udev's own way. */
TEST(udev_cachyos) {
        _cleanup_(writers_freep) Writers *w = udev(RULES_DIR "60-ioschedulers.rules",
                "# HDD\n"
                "ACTION==\"add|change\", KERNEL==\"sd[a-z]*\", ATTR{queue/rotational}==\"1\", ATTR{queue/scheduler}=\"bfq\"\n"
                "# SSD\n"
                "ACTION==\"add|change\", KERNEL==\"sd[a-z]*|mmcblk[0-9]*\", ATTR{queue/rotational}==\"0\", ATTR{queue/scheduler}=\"mq-deadline\"\n"
                "ACTION==\"add|change\", KERNEL==\"nvme[0-9]*\", ATTR{queue/rotational}==\"0\", ATTR{queue/scheduler}=\"kyber\"\n");

        assert_int_equal(writers_count(w), 3);
        assert_eval(w, target("nvme0n1", TRANSPORT_NVME, 0),
                    "scheduler kyber " RULES_DIR "60-ioschedulers.rules:5 applies add|change");
        assert_eval(w, target("sda", TRANSPORT_ATA, 1),
                    "scheduler bfq " RULES_DIR "60-ioschedulers.rules:2 applies add|change");
        /* rotational unknown: both may apply */
        assert_eval(w, target("sdb", TRANSPORT_ATA, -1),
                    "scheduler bfq " RULES_DIR "60-ioschedulers.rules:2 may apply add|change\n"
                    "scheduler mq-deadline " RULES_DIR "60-ioschedulers.rules:4 may apply add|change");
        assert_eval(w, target("vda", TRANSPORT_VIRTIO, 1), "");
        assert_eval(w, target("sda1x", TRANSPORT_ATA, 0),
                    "scheduler mq-deadline " RULES_DIR "60-ioschedulers.rules:4 applies add|change");
}

/* openSUSE's 60-io-scheduler.rules shape: GOTO past what is done, matches on properties. */
static const char *const suse_rules =
        "ACTION!=\"add|change\", GOTO=\"sched_end\"\n"                                  /* 1 */
        "SUBSYSTEM!=\"block\", GOTO=\"sched_end\"\n"                                    /* 2 */
        "ENV{DEVTYPE}!=\"disk\", GOTO=\"sched_end\"\n"                                  /* 3 */
        "ATTR{queue/scheduler}==\"none\", GOTO=\"sched_end\"\n"                         /* 4 */
        "ENV{DM_MULTIPATH_DEVICE_PATH}==\"1\", ATTR{queue/scheduler}=\"none\", GOTO=\"sched_end\"\n"
        "KERNEL==\"loop*\", ATTR{queue/scheduler}=\"none\", GOTO=\"sched_end\"\n"       /* 6 */
        "KERNEL==\"vd*|xvd*\", GOTO=\"sched_end\"\n"                                    /* 7 */
        "ATTR{queue/rotational}==\"0\", ATTR{queue/scheduler}=\"mq-deadline\", GOTO=\"sched_end\"\n"
        "ATTR{queue/scheduler}=\"bfq\"\n"                                               /* 9 */
        "LABEL=\"sched_end\"\n";

TEST(udev_goto) {
        _cleanup_(writers_freep) Writers *w = udev("/etc/udev/rules.d/60-io-scheduler.rules", suse_rules);
        _cleanup_(udev_props_freep) UdevProps *no_props = props((char *[]) { (char *) "ID_BUS=ata", NULL });
        _cleanup_(udev_props_freep) UdevProps *mpath = props((char *[]) { (char *) "DM_MULTIPATH_DEVICE_PATH=1", NULL });
        WriterTarget t;

        assert_int_equal(writers_count(w), 4);
        t = target("loop0", TRANSPORT_LOOP, 0);
        t.udev = no_props;
        t.udev_complete = true;
        assert_eval(w, t, "scheduler none /etc/udev/rules.d/60-io-scheduler.rules:6 applies add|change");

        t = target("sda", TRANSPORT_ATA, 1);
        t.udev = no_props;
        t.udev_complete = true;
        assert_eval(w, t, "scheduler bfq /etc/udev/rules.d/60-io-scheduler.rules:9 applies add|change");

        t.udev = mpath;
        assert_eval(w, t, "scheduler none /etc/udev/rules.d/60-io-scheduler.rules:5 applies add|change");

        /* A lone "none": nothing is written (line 4 jumps). */
        t.udev = no_props;
        t.scheduler_text = "none";
        assert_eval(w, t, "");

        /* Properties unknown: the multipath line may apply, and so may all that follows it. */
        t = target("sdc", TRANSPORT_ATA, 0);
        assert_eval(w, t,
                    "scheduler none /etc/udev/rules.d/60-io-scheduler.rules:5 may apply add|change\n"
                    "scheduler mq-deadline /etc/udev/rules.d/60-io-scheduler.rules:8 may apply add|change");

        /* virtio disks are left alone */
        t = target("vda", TRANSPORT_VIRTIO, 1);
        t.udev = no_props;
        t.udev_complete = true;
        assert_eval(w, t, "");
}

/* RHEL's rule brings elevator= back from the command line; the dead parameter itself is a
 * writer that writes nothing. */
TEST(udev_import_cmdline) {
        static const char rules[] =
                "ACTION==\"add\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", KERNEL!=\"dm-*|md*\", IMPORT{cmdline}=\"elevator\"\n"
                "ACTION==\"add\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", KERNEL!=\"dm-*|md*\", ENV{elevator}==\"?*\", ATTR{queue/scheduler}=\"$env{elevator}\"\n";
        _cleanup_(writers_freep) Writers *w = writers_new();
        _cleanup_(writers_freep) Writers *none = writers_new();
        _cleanup_(writers_freep) Writers *unknown = writers_new();
        _cleanup_(udev_props_freep) UdevProps *empty = udev_props_new();
        _cleanup_(freep) char *desc = NULL;
        WriterTarget t = target("sda", TRANSPORT_SCSI, 0);

        assert_int_equal(writers_set_cmdline(w, "BOOT_IMAGE=/vmlinuz ro elevator=bfq quiet\n"), 0);
        assert_int_equal(writers_add_udev_rules(w, RULES_DIR "73-seat-late.rules", rules, strlen(rules)), 1);
        assert_eval(w, t,
                    "scheduler bfq /proc/cmdline:0 applies n/a\n"
                    "scheduler bfq " RULES_DIR "73-seat-late.rules:2 applies add");
        assert_true(writers_get(w, 0)->dead);
        desc = writer_describe(writers_get(w, 0));
        assert_string_equal(desc, "kernel command line elevator=bfq: no effect (no kernel since 5.0 reads it)");

        assert_int_equal(writers_set_cmdline(none, "ro quiet"), 0);
        assert_int_equal(writers_add_udev_rules(none, RULES_DIR "x.rules", rules, strlen(rules)), 1);
        /* Not imported, and no other rule set it: known to be unset. */
        t.udev = empty;
        t.udev_complete = true;
        assert_eval(none, t, "");
        /* What the database does not tell, another rule may have set. */
        t.udev_complete = false;
        assert_eval(none, t, "scheduler $env{elevator} " RULES_DIR "x.rules:2 may apply add");
        t.name = "dm-0";
        assert_eval(w, t, "scheduler bfq /proc/cmdline:0 applies n/a");

        /* No command line known: may apply, and the value cannot be known. */
        assert_int_equal(writers_add_udev_rules(unknown, RULES_DIR "x.rules", rules, strlen(rules)), 1);
        t.name = "sdb";
        assert_eval(unknown, t, "scheduler $env{elevator} " RULES_DIR "x.rules:2 may apply add");
}

/* Continued lines count from their first; what udev refuses is no writer. */
TEST(udev_syntax) {
        _cleanup_(writers_freep) Writers *w = udev("/etc/udev/rules.d/99-x.rules",
                "# read-ahead\n"                                                        /* 1 */
                "KERNEL==\"vd*\", \\\n"                                                 /* 2 */
                "  ATTR{bdi/read_ahead_kb}=\"4096\"\n"                                  /* 3 */
                "KERNEL==\"vd*\", FOO=\"x\", ATTR{queue/scheduler}=\"bfq\"\n"           /* 4: unknown key */
                "KERNEL=\"vd*\", ATTR{queue/scheduler}=\"bfq\"\n"                       /* 5: KERNEL= */
                "KERNEL==\"vd*\", ATTR{queue/scheduler}==\"bfq\"\n"                     /* 6: a match */
                "KERNEL==\"vd*\", ATTR{queue/scheduler}=\"bfq\n"                        /* 7: no closing quote */
                "KERNEL==\"vd*\", ATTR{queue/iosched/low_latency}=\"0\"\n"              /* 8 */
                "KERNEL==\"vd*\", ATTR{queue/max_sectors_kb}:=\"512\", ATTR{device/timeout}=\"60\"\n"
                "KERNEL==i\"VD*\", ATTR{queue/nr_requests}=e\"6\\x34\"\n"               /* 10 */
                "KERNEL==\"vd*\", ATTR{queue/wbt_lat_usec}=\"0\" GOTO=\"nowhere\"\n");  /* 11 */
        _cleanup_(other_writers_done) OtherWriters o = {};
        WriterTarget t = target("vdb", TRANSPORT_VIRTIO, 1);

        assert_eval(w, t,
                    "read_ahead_kb 4096 /etc/udev/rules.d/99-x.rules:2 applies add|change\n"
                    "iosched.low_latency 0 /etc/udev/rules.d/99-x.rules:8 applies add|change\n"
                    "max_sectors_kb 512 /etc/udev/rules.d/99-x.rules:9 applies add|change\n"
                    "nr_requests 6x34 /etc/udev/rules.d/99-x.rules:10 applies add|change\n"
                    "wbt_lat_usec 0 /etc/udev/rules.d/99-x.rules:11 applies add|change");
        assert_int_equal(writers_for_disk(w, &t, &o), 0);
        assert_true(writer_writes(&o.writers[1], ATTR_IOSCHED, "low_latency"));
        assert_false(writer_writes(&o.writers[1], ATTR_IOSCHED, "slice_idle"));
        assert_false(writer_writes(&o.writers[0], ATTR_SCHEDULER, NULL));
}

/* A file without a writer is not kept; a binary one neither crashes nor writes. */
TEST(udev_no_writer) {
        static const char junk[] = "\x01\x02KERNEL==\"\0\"ATTR{queue/scheduler}=\"bfq\"\n\\";
        _cleanup_(writers_freep) Writers *w = writers_new();

        assert_int_equal(writers_add_udev_rules(w, RULES_DIR "60-block.rules",
                                                "ACTION!=\"remove\", SUBSYSTEM==\"block\", OPTIONS+=\"watch\"\n", 55),
                         0);
        assert_int_equal(writers_add_udev_rules(w, "j.rules", junk, sizeof(junk) - 1), 0);
        assert_int_equal(writers_count(w), 0);
}

/* RUN programs that write to /sys/block, and what cannot be known of them. */
TEST(udev_run) {
        _cleanup_(writers_freep) Writers *w = udev("/etc/udev/rules.d/61-run.rules",
                "ACTION==\"add\", KERNEL==\"sd*\", RUN+=\"/bin/sh -c 'echo 1024 > /sys/block/%k/queue/nr_requests'\"\n"
                "ACTION==\"add\", KERNEL==\"sd*\", RUN+=\"/bin/sh -c 'echo none > /sys/block/sda/queue/scheduler'\"\n"
                "ACTION==\"change\", KERNEL==\"sd*\", RUN+=\"/sbin/blockdev --setra 8192 $devnode\"\n"
                "ACTION==\"add\", KERNEL==\"sd*\", RUN{builtin}+=\"kmod load sd_mod\"\n"
                "ACTION==\"add\", KERNEL==\"sd*\", RUN+=\"/usr/local/bin/tune %k\"\n");

        assert_eval(w, target("sdb", TRANSPORT_SCSI, 0),
                    "nr_requests 1024 /etc/udev/rules.d/61-run.rules:1 applies add\n"
                    "scheduler none /etc/udev/rules.d/61-run.rules:2 may apply add\n"
                    "read_ahead_kb 4096 /etc/udev/rules.d/61-run.rules:3 applies change");
}

/* systemd's 90-iocost.rules, as shipped (systemd 257): the writer IOCostOtherWriter was. */
TEST(udev_systemd_iocost) {
        _cleanup_(writers_freep) Writers *w = udev(RULES_DIR "90-iocost.rules",
                "#  SPDX-License-Identifier: LGPL-2.1-or-later\n"
                "\n"
                "SUBSYSTEM!=\"block\", GOTO=\"iocost_end\"\n"
                "\n"
                "ENV{DEVTYPE}==\"partition\", GOTO=\"iocost_end\"\n"
                "\n"
                "ACTION==\"remove\", GOTO=\"iocost_end\"\n"
                "\n"
                "ENV{ID_MODEL}!=\"\", IMPORT{builtin}=\"hwdb 'block::name:$env{ID_MODEL}:fwrev:$env{ID_REVISION}:'\"\n"
                "\n"
                "ENV{IOCOST_SOLUTIONS}!=\"\", RUN+=\"iocost apply $env{DEVNAME}\"\n"
                "\n"
                "LABEL=\"iocost_end\"\n");
        _cleanup_(udev_props_freep) UdevProps *hwdb =
                props((char *[]) { (char *) "ID_MODEL=QEMU_NVMe_Ctrl", (char *) "IOCOST_SOLUTIONS=naive", NULL });
        _cleanup_(udev_props_freep) UdevProps *none = props((char *[]) { (char *) "ID_MODEL=QEMU_NVMe_Ctrl", NULL });
        _cleanup_(other_writers_done) OtherWriters o = {};
        _cleanup_(freep) char *keys = NULL, *desc = NULL;
        _cleanup_(strv_freep) char **udev_keys = NULL;
        WriterTarget t = target("nvme0n1", TRANSPORT_NVME, 0);

        t.udev = hwdb;
        t.udev_complete = true;
        assert_eval(w, t, "iocost n/a " RULES_DIR "90-iocost.rules:11 applies add|change");
        assert_int_equal(writers_for_disk(w, &t, &o), 0);
        assert_int_equal(o.writers[0].kind, WRITER_SYSTEMD_IOCOST);
        assert_true(writer_writes(&o.writers[0], ATTR_IOCOST_RLAT, NULL));
        assert_true(writer_writes(&o.writers[0], ATTR_IOCOST_MODEL_RBPS, NULL));
        assert_false(writer_writes(&o.writers[0], ATTR_SCHEDULER, NULL));
        keys = other_writers_of_key(&o, ATTR_IOCOST_ENABLE, NULL, UINT32_MAX);
        assert_string_equal(keys, RULES_DIR "90-iocost.rules:11");
        desc = writer_describe(&o.writers[0]);
        assert_string_equal(desc, "systemd-iocost rule " RULES_DIR "90-iocost.rules:11 writes it on add|change");

        t.udev = none;
        assert_eval(w, t, "");
        t.udev_complete = false;
        assert_eval(w, t, "iocost n/a " RULES_DIR "90-iocost.rules:11 may apply add|change");

        assert_int_equal(writers_udev_keys(w, &udev_keys), 0);
        /* Only what the kept lines match on: the hwdb import's line decides nothing. */
        assert_int_equal(strv_length(udev_keys), 1);
        assert_string_equal(udev_keys[0], "IOCOST_SOLUTIONS");
}

static TunedProfile *tuned(const char *name, const char *text) {
        _cleanup_(freep) char *file = strdup_printf("/etc/tuned/%s/tuned.conf", name);
        TunedProfile *p = NULL;

        assert_int_equal(tuned_profile_parse(name, file, text, strlen(text), &p), 0);
        return p;
}

/* A profile chain: the child's [disk] merges into the parent's, [variables], [sysfs] paths,
 * devices= and the one-unit-per-device rule. */
TEST(tuned_chain) {
        _cleanup_(tuned_profile_freep) TunedProfile *parent = tuned("base",
                "[main]\n"
                "summary=base\n"
                "[disk]\n"
                "elevator=mq-deadline\n"
                "readahead=>4096   # only when larger\n");
        _cleanup_(tuned_profile_freep) TunedProfile *child = tuned("child",
                "[main]\n"                                              /* 1 */
                "include = base\n"                                      /* 2 */
                "[variables]\n"                                         /* 3 */
                "sched = bfq\n"                                         /* 4 */
                "[disk]\n"                                              /* 5 */
                "devices = !sdb, !nvme*\n"                              /* 6 */
                "elevator = ${sched}\n"                                 /* 7 */
                "[nvme]\n"                                              /* 8 */
                "type=disk\n"                                           /* 9 */
                "devices=nvme*\n"                                       /* 10 */
                "elevator=none\n"                                       /* 11 */
                "[sysfs]\n"                                             /* 12 */
                "/sys/block/sdb/queue/scheduler = kyber\n"              /* 13 */
                "/sys/block/sd*/queue/iosched/low_latency = 0\n");      /* 14 */
        _cleanup_(writers_freep) Writers *w = writers_new();
        _cleanup_(strv_freep) char **inc = NULL;
        TunedProfile *chain[2] = { parent, child };

        assert_int_equal(tuned_profile_includes(child, &inc), 0);
        assert_int_equal(strv_length(inc), 1);
        assert_string_equal(inc[0], "base");
        assert_int_equal(writers_add_tuned(w, chain, 2), 0);
        assert_eval(w, target("sda", TRANSPORT_ATA, 1),
                    "scheduler bfq /etc/tuned/child/tuned.conf:7 applies profile apply, add\n"
                    "read_ahead_kb >4096 /etc/tuned/base/tuned.conf:5 applies profile apply, add\n"
                    "iosched.low_latency 0 /etc/tuned/child/tuned.conf:14 applies profile apply");
        assert_eval(w, target("sdb", TRANSPORT_ATA, 1),
                    "scheduler kyber /etc/tuned/child/tuned.conf:13 applies profile apply\n"
                    "iosched.low_latency 0 /etc/tuned/child/tuned.conf:14 applies profile apply");
        assert_eval(w, target("nvme0n1", TRANSPORT_NVME, 0),
                    "scheduler none /etc/tuned/child/tuned.conf:11 applies profile apply, add");
}

/* TuneD gives a device to the first [disk] unit (by priority) that matches it; replace=1
 * drops the parent's keys; enabled=false drops a unit; a removable disk is not TuneD's. */
TEST(tuned_units) {
        _cleanup_(tuned_profile_freep) TunedProfile *parent = tuned("p",
                "[disk]\nelevator=mq-deadline\nreadahead=256\n");
        _cleanup_(tuned_profile_freep) TunedProfile *child = tuned("c",
                "[main]\ninclude=p\n"
                "[disk]\nreplace=1\nelevator=kyber\n"
                "[late]\ntype=disk\npriority=-5\ndevices=sdz\nelevator=bfq\n"
                "[off]\ntype=disk\nenabled=false\nelevator=none\n");
        _cleanup_(writers_freep) Writers *w = writers_new();
        TunedProfile *chain[2] = { parent, child };
        WriterTarget t = target("sda", TRANSPORT_SCSI, 0);

        assert_int_equal(writers_add_tuned(w, chain, 2), 0);
        assert_eval(w, t, "scheduler kyber /etc/tuned/c/tuned.conf:5 applies profile apply, add");
        t.name = "sdz";
        assert_eval(w, t, "scheduler bfq /etc/tuned/c/tuned.conf:10 applies profile apply, add");
        t.removable = 1;
        assert_eval(w, t, "");
        t.removable = -1;
        assert_eval(w, t, "scheduler bfq /etc/tuned/c/tuned.conf:10 may apply profile apply, add");
}

/* A profile TuneD cannot parse is applied by TuneD not at all: no writers. */
TEST(tuned_invalid) {
        _cleanup_(tuned_profile_freep) TunedProfile *p = tuned("bad", "elevator=bfq\n[disk]\nelevator=bfq\n");
        _cleanup_(writers_freep) Writers *w = writers_new();
        TunedProfile *chain[1] = { p };

        assert_int_equal(writers_add_tuned(w, chain, 1), -EBADMSG);
        assert_int_equal(writers_count(w), 0);
}

static char *resolve_by_id(const char *id, void *userdata) {
        (void) userdata;
        if (streq(id, "ata-Samsung_SSD_870_S1"))
                return strdup("sdc");
        return NULL;
}

/* TLP: the i-th DISK_IOSCHED for the i-th DISK_DEVICES entry, by-id names resolved. */
TEST(tlp) {
        static const char defaults[] = "DISK_DEVICES=\"nvme0n1 sda\"\nDISK_IOSCHED=\"keep keep\"\n";
        static const char conf[] =
                "# TLP\n"
                "TLP_ENABLE=1\n"
                "DISK_IOSCHED=\"mq-deadline bfq\"\n";
        static const char dropin[] =
                "DISK_DEVICES=\"ata-Samsung_SSD_870_S1 sdb\"\n"
                "DISK_IOSCHED=\"none\"\n"
                "DISK_IOSCHED+=\"kyber\"\n";
        _cleanup_(tlp_conf_freep) TlpConf *c = tlp_conf_new(), *d = tlp_conf_new();
        _cleanup_(writers_freep) Writers *w = writers_new(), *w2 = writers_new(), *w3 = writers_new();

        /* Which configuration (0 tlp.conf, 1 the drop-in, 2 the drop-in without a resolver:
         * a by-id name may be any disk), the disk, its writer. */
        static const struct {
                unsigned which;
                const char *disk, *expected;
        } cases[] = {
                { 0, "nvme0n1", "scheduler mq-deadline /etc/tlp.conf:3 applies" },
                { 0, "sda", "scheduler bfq /etc/tlp.conf:3 applies" },
                { 1, "sdc", "scheduler none /etc/tlp.d/10-disk.conf:3 applies" },
                { 1, "sdb", "scheduler kyber /etc/tlp.d/10-disk.conf:3 applies" },
                { 2, "sdq", "scheduler none /etc/tlp.d/10-disk.conf:3 may apply" },
        };
        Writers *ws[3] = { w, w2, w3 };

        assert_int_equal(tlp_conf_parse(c, "/usr/share/tlp/defaults.conf", defaults, strlen(defaults)), 0);
        assert_int_equal(tlp_conf_parse(c, "/etc/tlp.conf", conf, strlen(conf)), 0);
        assert_int_equal(writers_add_tlp(w, c, resolve_by_id, NULL), 0);
        assert_int_equal(tlp_conf_parse(d, "/etc/tlp.d/10-disk.conf", dropin, strlen(dropin)), 0);
        assert_int_equal(writers_add_tlp(w2, d, resolve_by_id, NULL), 0);
        assert_int_equal(writers_add_tlp(w3, d, NULL, NULL), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(freep) char *expected = strdup_printf("%s tlp start, AC/battery change", cases[i].expected);

                assert_eval(ws[cases[i].which], target(cases[i].disk, TRANSPORT_ATA, 0), expected);
        }

        assert_int_equal(tlp_conf_parse(c, "/etc/tlp.d/00-off.conf", "TLP_ENABLE=0\n", 13), 0);
        writers_free(w);
        w = writers_new();
        assert_int_equal(writers_add_tlp(w, c, NULL, NULL), 0);
        assert_int_equal(writers_count(w), 0);
}

TEST(sysfs_conf) {
        static const char conf[] =
                "# sysfs.conf\n"
                "block/sda/queue/scheduler = bfq\n"
                "mode block/sda/queue/scheduler = 0644\n"
                "owner block/sda/queue/scheduler = root:disk\n"
                "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sdb/queue/read_ahead_kb = 512 # more\n"
                "class/block/sd*/queue/nr_requests = 64\n"
                "bus/scsi/devices/0:0:0:0/block/sda/queue/rq_affinity = 2\n"
                "kernel/mm/transparent_hugepage/enabled = never\n";
        _cleanup_(writers_freep) Writers *w = writers_new();
        WriterTarget t = target("sdb", TRANSPORT_ATA, 1);

        assert_int_equal(writers_add_sysfs_conf(w, "/etc/sysfs.conf", conf, strlen(conf)), 4);
        t.devpath = "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sdb";
        assert_eval(w, t,
                    "read_ahead_kb 512 /etc/sysfs.conf:5 applies boot\n"
                    "nr_requests 64 /etc/sysfs.conf:6 applies boot\n"
                    "rq_affinity 2 /etc/sysfs.conf:7 may apply boot");
        t.name = "sda";
        t.devpath = "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda";
        assert_eval(w, t,
                    "scheduler bfq /etc/sysfs.conf:2 applies boot\n"
                    "nr_requests 64 /etc/sysfs.conf:6 applies boot\n"
                    "rq_affinity 2 /etc/sysfs.conf:7 may apply boot");
}

/* The text a drift log line and the reports use. */
TEST(describe) {
        _cleanup_(writers_freep) Writers *w = udev("/etc/udev/rules.d/60-foo.rules",
                "KERNEL==\"sd*\", ATTR{queue/scheduler}=\"bfq\"\n"
                "KERNEL==\"sd*\", ATTRS{vendor}==\"ATA*\", ATTR{queue/scheduler}=\"kyber\"\n");
        _cleanup_(other_writers_done) OtherWriters o = {}, c = {};
        _cleanup_(freep) char *all = NULL, *none = NULL, *d0 = NULL, *d1 = NULL;
        WriterTarget t = target("sda", TRANSPORT_ATA, 1);

        assert_int_equal(writers_for_disk(w, &t, &o), 0);
        all = other_writers_of_key(&o, ATTR_SCHEDULER, NULL, UINT32_MAX);
        assert_string_equal(all, "/etc/udev/rules.d/60-foo.rules:1, /etc/udev/rules.d/60-foo.rules:2 (may apply)");
        none = other_writers_of_key(&o, ATTR_SCHEDULER, NULL, WRITER_KIND_BIT(WRITER_TUNED));
        assert_null(none);
        assert_null(other_writers_of_key(&o, ATTR_NR_REQUESTS, NULL, UINT32_MAX));
        assert_non_null(other_writers_find(&o, ATTR_SCHEDULER, NULL, WRITER_KIND_BIT(WRITER_UDEV_RULE)));
        d0 = writer_describe(&o.writers[0]);
        d1 = writer_describe(&o.writers[1]);
        assert_string_equal(d0, "udev rule /etc/udev/rules.d/60-foo.rules:1 writes bfq on add|change");
        assert_string_equal(d1, "udev rule /etc/udev/rules.d/60-foo.rules:2 writes kyber on add|change (may apply)");
        assert_int_equal(other_writers_copy(&o, &c), 0);
        assert_true(other_writers_equal(&o, &c));
        free(c.writers[1].value);
        c.writers[1].value = strdup("none");
        assert_false(other_writers_equal(&o, &c));
        assert_false(other_writers_equal(&o, NULL));
        assert_true(other_writers_equal(NULL, &(OtherWriters) {}));

        assert_int_equal(writer_kind_from_string("tuned"), WRITER_TUNED);
        assert_int_equal(writer_kind_from_string("udev-rules"), WRITER_UDEV_RULE);
        assert_int_equal(writer_kind_from_string("tune"), -EINVAL);
        assert_string_equal(writer_kind_to_string(WRITER_SYSTEMD_IOCOST), "systemd-iocost");
}

DEFINE_TEST_MAIN(NULL, NULL)
