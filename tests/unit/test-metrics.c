/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "metrics.h"
#include "tests.h"
#include "util.h"

static char *format(const Metrics *m) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        assert_int_equal(metrics_format(m, f), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

/* Every family once, with its HELP and TYPE, also without a disk. */
TEST(empty) {
        const Metrics m = { .version = "0.1", .config_errors = 2 };
        _cleanup_(freep) char *t = format(&m);

        assert_string_equal(t,
                "# HELP iosched_build_info The version of iosched that reports, as a label; always 1.\n"
                "# TYPE iosched_build_info gauge\n"
                "iosched_build_info{version=\"0.1\"} 1\n"
                "# HELP iosched_writes_total Values written to the kernel because they differed from the policy.\n"
                "# TYPE iosched_writes_total counter\n"
                "iosched_writes_total 0\n"
                "# HELP iosched_writes_skipped_total Values not written because the kernel had them already.\n"
                "# TYPE iosched_writes_skipped_total counter\n"
                "iosched_writes_skipped_total 0\n"
                "# HELP iosched_writes_failed_total Writes the kernel refused, or whose value did not stick.\n"
                "# TYPE iosched_writes_failed_total counter\n"
                "iosched_writes_failed_total 0\n"
                "# HELP iosched_drift_corrected_total Values written back after another writer changed them.\n"
                "# TYPE iosched_drift_corrected_total counter\n"
                "iosched_drift_corrected_total 0\n"
                "# HELP iosched_config_errors Errors found in the configuration the last time it was read.\n"
                "# TYPE iosched_config_errors gauge\n"
                "iosched_config_errors 2\n"
                "# HELP iosched_disks_pending Disks being read or written, or waiting to be.\n"
                "# TYPE iosched_disks_pending gauge\n"
                "iosched_disks_pending 0\n"
                "# HELP iosched_disk_info A disk ioschedd manages, with its transport and scheduler; always 1.\n"
                "# TYPE iosched_disk_info gauge\n"
                "# HELP iosched_disk_last_apply_timestamp_seconds When the disk was last brought to its policy (Unix time).\n"
                "# TYPE iosched_disk_last_apply_timestamp_seconds gauge\n"
                "# HELP iosched_disk_apply_failed 1 when the disk's last apply reported an error.\n"
                "# TYPE iosched_disk_apply_failed gauge\n"
                "# HELP iosched_desired_mismatch 1 when the key's value differs from the policy's, as last read.\n"
                "# TYPE iosched_desired_mismatch gauge\n"
                "# HELP iosched_disk_holds Holds in force on the disk (the Hold method, ioschedctl hold).\n"
                "# TYPE iosched_disk_holds gauge\n"
                "# HELP iosched_other_writers Other programs that write the key of the disk, or may, by owner "
                "(udev-rules, tuned, tlp, sysfsutils, systemd-iocost).\n"
                "# TYPE iosched_other_writers gauge\n");
}

/* Holds per disk; other writers counted by key and owner (two udev rules of one key are one
 * sample of 2), the dead elevator= of the command line not at all. */
TEST(holds_and_writers) {
        /* KEY OWNER, as OtherWriters carries them. */
        static const char *const records[] = {
                "scheduler udev-rules", "scheduler tuned", "scheduler udev-rules", "read_ahead_kb tuned",
                "scheduler cmdline",
        };
        Writer w[ELEMENTSOF(records)];
        OtherWriters o = { .writers = w, .n = ELEMENTSOF(records) };

        for (size_t i = 0; i < ELEMENTSOF(records); i++) {
                _cleanup_(freep) char *key = strndup(records[i], strcspn(records[i], " "));

                assert_int_equal(writer_from_record(key, strchr(records[i], ' ') + 1, "test", "/etc/x", i, "x",
                                                    "", true, &w[i]),
                                 0);
        }
        const MetricsDisk d[] = {
                { .name = "loop1", .scheduler = "none", .n_holds = 2, .writers = &o },
                { .name = "loop0", .scheduler = "none" },
        };
        const Metrics m = { .version = "0.1", .disks = d, .n_disks = 2 };
        _cleanup_(freep) char *t = format(&m);

        assert_non_null(strstr(t,
                "# TYPE iosched_disk_holds gauge\n"
                "iosched_disk_holds{disk=\"loop0\"} 0\n"
                "iosched_disk_holds{disk=\"loop1\"} 2\n"
                "# HELP"));
        assert_non_null(strstr(t,
                "# TYPE iosched_other_writers gauge\n"
                "iosched_other_writers{disk=\"loop1\",key=\"scheduler\",owner=\"udev-rules\"} 2\n"
                "iosched_other_writers{disk=\"loop1\",key=\"scheduler\",owner=\"tuned\"} 1\n"
                "iosched_other_writers{disk=\"loop1\",key=\"read_ahead_kb\",owner=\"tuned\"} 1\n"));
        assert_int_equal(t[strlen(t) - 1], '\n');
        assert_null(strstr(t, "cmdline"));
        for (size_t i = 0; i < ELEMENTSOF(records); i++)
                writer_done(&w[i]);
}

/* Disks sorted by name as people sort them (loop2 before loop10), each family's samples
 * together, a disk never applied without a timestamp. */
TEST(disks) {
        const MetricsKey k10[] = { { "scheduler", false }, { "iosched.low_latency", true } };
        const MetricsDisk d[] = {
                { .name = "loop10", .transport = "loop", .scheduler = "bfq", .keys = k10, .n_keys = 2,
                  .last_applied_usec = 1700000000123456, .failed = true },
                { .name = "loop2", .transport = "loop", .rotational = true, .scheduler = "none" },
        };
        const Metrics m = { .version = "0.1", .writes_done = 3, .writes_skipped = 40,
                            .write_errors = 1, .drift_corrected = 2, .disks_pending = 1, .disks = d, .n_disks = 2 };
        _cleanup_(freep) char *t = format(&m);

        assert_non_null(strstr(t,
                "iosched_writes_total 3\n"));
        assert_non_null(strstr(t,
                "iosched_writes_skipped_total 40\n"));
        assert_non_null(strstr(t,
                "iosched_writes_failed_total 1\n"));
        assert_non_null(strstr(t,
                "iosched_drift_corrected_total 2\n"));
        assert_non_null(strstr(t,
                "# TYPE iosched_disk_info gauge\n"
                "iosched_disk_info{disk=\"loop2\",transport=\"loop\",rotational=\"1\",scheduler=\"none\"} 1\n"
                "iosched_disk_info{disk=\"loop10\",transport=\"loop\",rotational=\"0\",scheduler=\"bfq\"} 1\n"
                "# HELP"));
        assert_non_null(strstr(t,
                "# TYPE iosched_disk_last_apply_timestamp_seconds gauge\n"
                "iosched_disk_last_apply_timestamp_seconds{disk=\"loop10\"} 1700000000.123456\n"
                "# HELP"));
        assert_non_null(strstr(t,
                "# TYPE iosched_disk_apply_failed gauge\n"
                "iosched_disk_apply_failed{disk=\"loop2\"} 0\n"
                "iosched_disk_apply_failed{disk=\"loop10\"} 1\n"
                "# HELP"));
        assert_non_null(strstr(t,
                "# TYPE iosched_desired_mismatch gauge\n"
                "iosched_desired_mismatch{disk=\"loop10\",key=\"scheduler\"} 0\n"
                "iosched_desired_mismatch{disk=\"loop10\",key=\"iosched.low_latency\"} 1\n"));
        assert_int_equal(t[strlen(t) - 1], '\n');
}

/* Label values as the text format escapes them; what is no UTF-8 becomes U+FFFD; NULL is "". */
TEST(label_escapes) {
        const MetricsDisk d[] = { { .name = "a\"b\\c\nd", .transport = "x\xff", .scheduler = NULL } };
        const Metrics m = { .version = "caf\xc3\xa9", .disks = d, .n_disks = 1 };
        _cleanup_(freep) char *t = format(&m);

        assert_non_null(strstr(t, "iosched_build_info{version=\"caf\xc3\xa9\"} 1\n"));
        assert_non_null(strstr(t, "iosched_disk_info{disk=\"a\\\"b\\\\c\\nd\",transport=\"x\xef\xbf\xbd\","
                                  "rotational=\"0\",scheduler=\"\"} 1\n"));
}

/* A FILE that cannot be written is an error, not a short file taken for a whole one. */
TEST(write_error) {
        const Metrics m = { .version = "0.1" };
        FILE *f = fopen("/dev/full", "we");

        if (!f)
                skip();
        setvbuf(f, NULL, _IONBF, 0);
        assert_int_equal(metrics_format(&m, f), -EIO);
        fclose(f);
}

DEFINE_TEST_MAIN(NULL, NULL)
