/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "attr.h"
#include "disk.h"
#include "tests.h"
#include "util.h"

TEST(scheduler_parse) {
        static const struct {
                const char *text, *current;
                size_t n;
        } good[] = {
                { "[none] mq-deadline kyber bfq ", "none", 4 },          /* 6.2+ */
                { "none [mq-deadline] kyber bfq \n", "mq-deadline", 4 }, /* 7.x, with newline */
                { "mq-deadline kyber [bfq] none", "bfq", 4 },            /* 6.1: none last */
                { "[mq-deadline] none", "mq-deadline", 2 },
                { "none", NULL, 1 },                                     /* no elevator support */
                { "none\n", NULL, 1 },
        };
        static const char *const bad[] = {
                "", " ", "\n", "[none] [bfq]", "mq-deadline kyber", "[]", "[none", "none]",
                "[../x] none", "[a/b]", "[averyveryverylongschedulername]", "[none] b\x01",
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                _cleanup_(freep) char *cur = NULL;
                _cleanup_(strv_freep) char **avail = NULL;

                assert_int_equal(scheduler_parse(good[i].text, &cur, &avail), 0);
                if (good[i].current)
                        assert_string_equal(cur, good[i].current);
                else
                        assert_null(cur);
                assert_int_equal(strv_length(avail), good[i].n);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *cur = (char *) 0x1;
                char **avail = (char **) 0x1;

                assert_int_equal(scheduler_parse(bad[i], &cur, &avail), -EINVAL);
                /* ret_ parameters are never written on failure */
                assert_ptr_equal(cur, (char *) 0x1);
                assert_ptr_equal(avail, (char **) 0x1);
        }
}

TEST(disk_name) {
        static const char *const good[] = {
                "sda", "nvme0n1", "dm-0", "loop12", "md127", "mmcblk0", "cciss!c0d0", "nbd0",
                "ublkb3", "zram0", "vda", "sr0", "xvda", "a.b_c:d+e",
        };
        static const char *const bad[] = {
                "", ".", "..", "../sda", "sda/queue", "/dev/sda", "a b", "sda\n", ".hidden",
                "0123456789012345678901234567890123", "sda*", "sd?a", "s\\a", "x\x01",
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                assert_true(disk_name_is_valid(good[i]));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_false(disk_name_is_valid(bad[i]));
        assert_false(disk_name_is_valid(NULL));
}

TEST(transport) {
        /* by the name alone */
        static const struct {
                const char *name;
                Transport transport;
        } by_name[] = {
                { "nvme0n1", TRANSPORT_NVME }, { "vda", TRANSPORT_VIRTIO },
                { "xvdb", TRANSPORT_XEN }, { "loop7", TRANSPORT_LOOP }, { "zram0", TRANSPORT_ZRAM },
                { "nbd3", TRANSPORT_NBD }, { "ublkb0", TRANSPORT_UBLK }, { "md127", TRANSPORT_MD },
                { "dm-3", TRANSPORT_DM }, { "mmcblk0", TRANSPORT_MMC },
                { "nullb0", TRANSPORT_NULL_BLK }, { "pmem0", TRANSPORT_PMEM },
                { "rbd0", TRANSPORT_RBD },
        };

        for (size_t i = 0; i < ELEMENTSOF(by_name); i++)
                assert_int_equal(transport_classify(by_name[i].name, NULL, NULL), by_name[i].transport);
        assert_int_equal(transport_classify("sda", "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda", NULL), TRANSPORT_ATA);
        assert_int_equal(transport_classify("sdb", "/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb", NULL), TRANSPORT_USB);
        /* virtio-scsi (QEMU scsi-hd on virtio-scsi-pci, Debian's 6.1 in tests/system): a SCSI
         * disk, not virtio-blk; udev's ID_BUS says "scsi". */
        assert_int_equal(transport_classify("sdc", "/devices/pci0000:00/0000:00:03.0/virtio0/host2/target2:0:0/2:0:0:0/block/sdc", NULL), TRANSPORT_SCSI);
        assert_int_equal(transport_classify("sdc", "/devices/pci0000:00/0000:00:03.0/virtio0/host2/target2:0:0/2:0:0:0/block/sdc", "scsi"), TRANSPORT_SCSI);
        assert_int_equal(transport_classify("sdc", NULL, "scsi"), TRANSPORT_SCSI);
        assert_int_equal(transport_classify("sdd", "/devices/platform/host3/block/sdd", NULL), TRANSPORT_SCSI);
        assert_int_equal(transport_classify("sde", NULL, "usb"), TRANSPORT_USB);
        assert_int_equal(transport_classify("sdf", NULL, "ata"), TRANSPORT_ATA);
        /* "md" and "loop" need a number: "mdx" is not md */
        assert_int_equal(transport_classify("mdx", NULL, NULL), TRANSPORT_OTHER);
        assert_int_equal(transport_classify("loopy", NULL, NULL), TRANSPORT_OTHER);
        for (int t = 0; t < _TRANSPORT_MAX; t++)
                assert_int_equal(transport_from_string(transport_to_string(t)), t);
        assert_int_equal(transport_from_string("firewire"), -EINVAL);
}

static void parse_ok(AttrId id, const char *text, int64_t num) {
        Value v = {};

        assert_int_equal(value_parse(attr_get(id), text, &v, NULL), 0);
        assert_int_equal(v.num, num);
        value_done(&v);
}

static void parse_bad(AttrId id, const char *text, int error) {
        const char *why = NULL;
        Value v = { .num = 12345 };

        assert_int_equal(value_parse(attr_get(id), text, &v, &why), error);
        assert_non_null(why);
        assert_int_equal(v.num, 12345);
}

TEST(values) {
        _cleanup_(freep) char *s = NULL;
        Value v = {};

        parse_ok(ATTR_NR_REQUESTS, "64", 64);
        parse_bad(ATTR_NR_REQUESTS, "0", -ERANGE);
        parse_bad(ATTR_NR_REQUESTS, "-4", -ERANGE);
        parse_bad(ATTR_NR_REQUESTS, "99999999999999999999", -ERANGE);
        parse_bad(ATTR_NR_REQUESTS, "64k", -EINVAL);
        parse_bad(ATTR_NR_REQUESTS, " 64", -EINVAL);
        parse_bad(ATTR_NR_REQUESTS, "0x40", -EINVAL);
        parse_bad(ATTR_NR_REQUESTS, "", -EINVAL);
        parse_ok(ATTR_WBT_LAT_USEC, "default", -1);
        parse_ok(ATTR_WBT_LAT_USEC, "-1", -1);
        parse_ok(ATTR_WBT_LAT_USEC, "off", 0);
        parse_ok(ATTR_WBT_LAT_USEC, "0", 0);
        parse_ok(ATTR_WBT_LAT_USEC, "2000", 2000);
        parse_bad(ATTR_WBT_LAT_USEC, "-2", -ERANGE);
        parse_bad(ATTR_WBT_LAT_USEC, "fast", -EINVAL);
        parse_bad(ATTR_WBT_LAT_USEC, "60000001", -ERANGE);
        parse_ok(ATTR_ADD_RANDOM, "yes", 1);
        parse_ok(ATTR_ADD_RANDOM, "off", 0);
        parse_ok(ATTR_IOSTATS, "1", 1);
        parse_bad(ATTR_IOSTATS, "2", -EINVAL);
        parse_ok(ATTR_RQ_AFFINITY, "2", 2);
        parse_bad(ATTR_RQ_AFFINITY, "3", -ERANGE);
        parse_ok(ATTR_NOMERGES, "0", 0);
        parse_bad(ATTR_MAX_SECTORS_KB, "2", -ERANGE);
        parse_ok(ATTR_READ_AHEAD_KB, "0", 0);
        parse_ok(ATTR_IOSCHED, "100", 100);
        /* owner.defer: a mask of writer kinds, spelt in the kinds' order, "none" alone */
        parse_ok(ATTR_OWNER_DEFER, "tuned, udev-rules tuned", (1 << 0) | (1 << 1));
        parse_ok(ATTR_OWNER_DEFER, "none", 0);
        parse_bad(ATTR_OWNER_DEFER, "tuned none", -EINVAL);
        parse_bad(ATTR_OWNER_DEFER, "cmdline", -EINVAL);
        parse_bad(ATTR_OWNER_DEFER, "systemd", -EINVAL);
        assert_int_equal(value_parse(attr_get(ATTR_OWNER_DEFER), "sysfsutils,tuned", &v, NULL), 0);
        s = value_to_string(attr_get(ATTR_OWNER_DEFER), &v);
        assert_string_equal(s, "tuned sysfsutils");
        value_done(&v);
        s = mfree(s);

        /* schedulers: alias, order, duplicates, validation */
        assert_int_equal(value_parse(attr_get(ATTR_SCHEDULER), "deadline bfq  mq-deadline,none", &v, NULL), 0);
        s = value_to_string(attr_get(ATTR_SCHEDULER), &v);
        assert_string_equal(s, "mq-deadline bfq none");
        value_done(&v);
        parse_bad(ATTR_SCHEDULER, "../../x", -EINVAL);
        parse_bad(ATTR_SCHEDULER, "bfq\nnone", -EINVAL);
        parse_bad(ATTR_SCHEDULER, "averyveryverylongname", -EINVAL);
        parse_bad(ATTR_SCHEDULER, " ", -EINVAL);
        parse_bad(ATTR_SCHEDULER, "a b c d e f g h i", -EINVAL);
}

/* Percentages as blk-iocost.c parses them: cgroup_parse_float(buf, 2). */
TEST(percent) {
        static const struct {
                const char *text;
                int r;
                int64_t v;
        } cases[] = {
                { "95", 0, 9500 },     { "95.", 0, 9500 },     { "95.5", 0, 9550 },
                { "95.50", 0, 9550 },  { "95.555", 0, 9556 },  { "95.554", 0, 9555 },
                { "99.995", 0, 10000 }, { "0", 0, 0 },         { "0.004", 0, 0 },
                { "0.005", 0, 1 },     { "", -EINVAL, 0 },     { ".5", -EINVAL, 0 },
                { "-1", -EINVAL, 0 },  { "1e2", -EINVAL, 0 },  { "5%", -EINVAL, 0 },
                { " 5", -EINVAL, 0 },  { "1.2.3", -EINVAL, 0 }, { "1234567890123", -ERANGE, 0 },
        };
        const AttrInfo *min = attr_from_key("iocost.min"), *rpct = attr_from_key("iocost.rpct");
        _cleanup_(value_done) Value v = {};
        const char *error;
        char *t;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int64_t n = -1;

                assert_int_equal(percent_parse(cases[i].text, &n), cases[i].r);
                if (cases[i].r == 0)
                        assert_int_equal(n, cases[i].v);
        }
        /* min and max are clamped to 1-10000% by the kernel: the same value compares equal */
        assert_int_equal(value_parse(min, "0.5", &v, &error), 0);
        assert_int_equal(v.num, 100);
        assert_int_equal(value_parse(min, "20000", &v, &error), 0);
        assert_int_equal(v.num, 1000000);
        t = value_to_string(min, &v);
        assert_string_equal(t, "10000.00");
        free(t);
        assert_int_equal(value_parse(rpct, "100", &v, &error), 0);
        t = value_to_string(rpct, &v);
        assert_string_equal(t, "100.00");
        free(t);
        assert_int_equal(value_parse(rpct, "100.004", &v, &error), 0);
        assert_int_equal(v.num, 10000);
        assert_int_equal(value_parse(rpct, "100.005", &v, &error), -ERANGE);
}

/* value_format(): the config's spelling of a number, which ioschedd's Current shows. */
TEST(value_format) {
        static const struct {
                AttrId id;
                int64_t num;
                const char *text;
        } cases[] = {
                { ATTR_WBT_LAT_USEC, 0, "off" },
                { ATTR_WBT_LAT_USEC, -1, "default" },
                { ATTR_WBT_LAT_USEC, 75000, "75000" },
                { ATTR_NR_REQUESTS, 64, "64" },
                { ATTR_ADD_RANDOM, 1, "1" },
                { ATTR_IOCOST_CTRL, 1, "user" },
                { ATTR_IOCOST_MODEL_CTRL, 0, "auto" },
                { ATTR_IOCOST_RPCT, 9550, "95.50" },
        };
        char buf[32], tiny[3];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const AttrInfo *a = attr_get(cases[i].id);
                Value v = { .num = cases[i].num };
                char *t = value_to_string(a, &v);

                assert_int_equal(value_format(a, cases[i].num, buf, sizeof(buf)), 0);
                assert_string_equal(buf, cases[i].text);
                assert_string_equal(t, buf);
                free(t);
        }
        assert_int_equal(value_format(attr_get(ATTR_SCHEDULER), 0, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(value_format(attr_get(ATTR_WBT_LAT_USEC), 0, tiny, sizeof(tiny)), -ENOBUFS);
        assert_int_equal(value_format(attr_get(ATTR_NR_REQUESTS), 1024, tiny, sizeof(tiny)), -ENOBUFS);
}

TEST(keys) {
        const AttrInfo *a;
        char *t = NULL;

        assert_int_equal(setting_key_parse("scheduler", &a, &t), 0);
        assert_int_equal(a->id, ATTR_SCHEDULER);
        assert_null(t);
        assert_int_equal(setting_key_parse("iosched.read_expire", &a, &t), 0);
        assert_int_equal(a->id, ATTR_IOSCHED);
        assert_string_equal(t, "read_expire");
        free(t);
        assert_int_equal(setting_key_parse("iosched.nonesuch", &a, &t), -ENOENT);
        assert_int_equal(setting_key_parse("iosched.", &a, &t), -ENOENT);
        assert_int_equal(setting_key_parse("iosched.../x", &a, &t), -ENOENT);
        assert_int_equal(setting_key_parse("queue/scheduler", &a, &t), -ENOENT);
        assert_int_equal(setting_key_parse("Scheduler", &a, &t), -ENOENT);
        assert_true(tunable_belongs_to("mq-deadline", "fifo_batch"));
        assert_true(tunable_belongs_to("deadline", "fifo_batch"));
        assert_false(tunable_belongs_to("bfq", "fifo_batch"));
        assert_false(tunable_belongs_to(NULL, "fifo_batch"));
        /* Every queue attribute but the tunables has a key and a path; every
         * iocost attribute a key and the kernel's token, and no sysfs path. */
        unsigned slot_used = 0;
        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                a = attr_get(id);
                assert_int_equal(a->id, id);
                if (id == ATTR_IOSCHED)
                        continue;
                assert_ptr_equal(attr_from_key(a->key), a);
                if (a->file == ATTR_FILE_QUEUE) {
                        assert_non_null(a->path);
                        /* A Disk keeps its reading in a slot of its own (disk.h). */
                        assert_in_range(disk_attr_slot(id), 0, DISK_ATTR_SLOTS - 1);
                        assert_false(slot_used & (1u << disk_attr_slot(id)));
                        slot_used |= 1u << disk_attr_slot(id);
                } else {
                        assert_int_equal(disk_attr_slot(id), -1);
                        assert_null(a->path);
                        assert_true(startswith(a->key, "iocost.") || id == ATTR_OWNER_DEFER);
                        if (a->file != ATTR_FILE_NONE)
                                assert_ptr_equal(attr_from_token(a->file, a->token), a);
                }
        }
        assert_int_equal(slot_used, (1u << DISK_ATTR_SLOTS) - 1);
}

/* The list "ioschedctl --list-keys" prints: each key once, each one a key setting_key_parse
 * takes, every attribute and every tunable in it. */
TEST(setting_keys) {
        _cleanup_(strv_freep) char **keys = NULL;
        const AttrInfo *a;
        size_t tunables = 0;
        const char *t;

        assert_int_equal(setting_keys(&keys), 0);
        for (char **k = keys; *k; k++) {
                char *tunable = NULL;

                assert_int_equal(setting_key_parse(*k, &a, &tunable), 0);
                free(tunable);
                for (char **l = k + 1; *l; l++)
                        assert_string_not_equal(*k, *l);
        }
        for (AttrId id = 0; id < _ATTR_MAX; id++)
                if (id != ATTR_IOSCHED)
                        assert_true(strv_contains(keys, attr_get(id)->key));
        for (size_t i = 0; (t = tunable_by_index(i, NULL)); i++, tunables++) {
                _cleanup_(freep) char *k = strdup_printf(IOSCHED_KEY_PREFIX "%s", t);

                assert_true(strv_contains(keys, k));
        }
        assert_int_equal(strv_length(keys), _ATTR_MAX - 1 + tunables);
        assert_true(strv_contains(keys, "scheduler"));
        assert_true(strv_contains(keys, "iosched.read_expire"));
}

/* The kernel keeps some millisecond tunables in jiffies (msecs_to_jiffies() on store,
 * jiffies_to_msecs() on show): these are the values a real kernel reads back. */
TEST(tunable_kernel_value) {
        /* HZ=250, the machines' kernel: 250 ms is 62.5 ticks, stored as 63, shown as 252 */
        assert_int_equal(tunable_kernel_value("read_expire", 250, 250), 252);
        assert_int_equal(tunable_kernel_value("read_expire", 500, 250), 500);
        assert_int_equal(tunable_kernel_value("write_expire", 5001, 250), 5004);
        assert_int_equal(tunable_kernel_value("prio_aging_expire", 1, 250), 4);
        assert_int_equal(tunable_kernel_value("read_expire", 0, 250), 0);
        assert_int_equal(tunable_kernel_value("timeout_sync", 0, 250), 4);
        /* HZ=100 and HZ=300 (1000 is no multiple of 300: shown rounded down) */
        assert_int_equal(tunable_kernel_value("read_expire", 255, 100), 260);
        assert_int_equal(tunable_kernel_value("read_expire", 250, 300), 250);
        assert_int_equal(tunable_kernel_value("read_expire", 251, 300), 253);
        /* HZ=1000 is exact; an unknown HZ compares exactly */
        assert_int_equal(tunable_kernel_value("read_expire", 251, 1000), 251);
        assert_int_equal(tunable_kernel_value("read_expire", 250, 0), 250);
        /* exact tunables */
        assert_int_equal(tunable_kernel_value("fifo_batch", 250, 250), 250);
        assert_int_equal(tunable_kernel_value("fifo_expire_sync", 125, 250), 125);
        assert_int_equal(tunable_kernel_value("slice_idle", 7, 250), 7);
}

TEST(kernel_release) {
        static const struct {
                const char *release;
                int r;
                unsigned major, minor, patch;
        } cases[] = {
                { "6.16.3+deb14-amd64", 0, 6, 16, 3 }, { "6.16-rc3", 0, 6, 16, 0 },
                { "6.16", 0, 6, 16, 0 },               { "6.18.44-fc-v669", 0, 6, 18, 44 },
                { "7.3.4+bpo-amd64", 0, 7, 3, 4 },     { "6.16+", 0, 6, 16, 0 },
                { "6.16.x", -EINVAL },                 { "6", -EINVAL },
                { "garbage", -EINVAL },                { "", -EINVAL },
                { NULL, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned major = 99, minor = 99, patch = 99;

                assert_int_equal(kernel_release_parse(cases[i].release, &major, &minor, &patch), cases[i].r);
                if (cases[i].r < 0) {
                        /* ret_ untouched on failure */
                        assert_int_equal(major + minor + patch, 3 * 99);
                        continue;
                }
                assert_int_equal(major, cases[i].major);
                assert_int_equal(minor, cases[i].minor);
                assert_int_equal(patch, cases[i].patch);
        }
}

TEST(scheduler_switch_races) {
        static const struct {
                const char *release;
                bool races;
        } cases[] = {
                { "6.12.118-amd64", false }, { "6.15.9", false },      { "6.16", true },
                { "6.18.44-fc-v669", true }, { "7.0-rc1", true },      { "7.2.9", true },
                { "7.3.4+bpo-amd64", false }, { "8.0", false },        { "5.10.0", false },
                { "garbage", false },         { NULL, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                assert_int_equal(kernel_scheduler_switch_races(cases[i].release), cases[i].races);
}

DEFINE_TEST_MAIN(NULL, NULL)
