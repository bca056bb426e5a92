/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktest: runs inside the QEMU guest that kernel-patches/verify boots.
 *
 * Measures what writing an unchanged value to queue sysfs attributes costs,
 * checks that changing writes still work, times adding null_blk disks that
 * get a default elevator, and switches schedulers while I/O runs.  Every
 * result is one line starting with "KT " so that the host can parse the
 * serial console log:
 *
 *   KT same <attr> <write_median_us> <write_min_us> <write_max_us> <n> <open_write_close_median_us>
 *   KT shared <seconds> <sibling_changes> <same_writes> <ebusy> <errors>
 *   KT cheap <attr> <write_median_us> <read_median_us> <n>
 *   KT nrhwq <seconds> <updates> <same_writes> <ebusy> <errors>
 *   KT nrhwq-lost <updates> <none_writes> <ebusy> <lost>
 *   KT race-nrhwq <seconds> <updates> <scheduler_writes_ok> <nr_requests_ok> <nr_requests_failed>
 *   KT modprobe <attr> <modprobe_runs> <writes>
 *   KT add <n> <p50_us> <p99_us> <max_us> <sched_ok>
 *   KT addbench <n> <p50_us> <p99_us> <max_us> <sched_ok>
 *   KT elvset <calls> <p50_us> <p99_us> <calls_quiescing> <sync_rcu_calls> <sync_rcu_p50_us>
 *   KT check <name> PASS|FAIL <detail>
 *   KT stress <seconds> <changes> <same> <ebusy> <errors> <slowest_us>
 *   KT iops <sched> <iops>
 *
 * Only this guest's null_blk disks are touched; it never runs on the host.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NULLB_CFS "/sys/kernel/config/nullb"
#define CGROUP2 "/sys/fs/cgroup"
#define TRACEFS "/sys/kernel/tracing"
#define SAMPLES 20
/* for writes that cost microseconds on every kernel: enough to compare them */
#define SAMPLES_CHEAP 200
#define ADD_DISKS 64
#define SLOW_WRITE_US (10 * 1000 * 1000)

static int failures;

static uint64_t now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * Write @val to @path like a udev rule does: open, write, close.  If
 * @ret_write_us is set, the write() alone is timed: that is where the store
 * method runs; open and close cost the same on both kernels.
 */
static int write_attr_timed(const char *path, const char *val, uint64_t *ret_write_us)
{
        uint64_t t0;
        ssize_t n;
        int fd, r = 0;

        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        t0 = now_us();
        n = write(fd, val, strlen(val));
        if (ret_write_us)
                *ret_write_us = now_us() - t0;
        if (n < 0)
                r = -errno;
        else if ((size_t)n != strlen(val))
                r = -EIO;
        close(fd);
        return r;
}

static int write_attr(const char *path, const char *val)
{
        return write_attr_timed(path, val, NULL);
}

static int read_attr(const char *path, char *buf, size_t size)
{
        ssize_t n;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

static void qpath(char *buf, size_t size, const char *disk, const char *attr)
{
        snprintf(buf, size, "/sys/block/%s/queue/%s", disk, attr);
}

static int qwrite_timed(const char *disk, const char *attr, const char *val,
                        uint64_t *ret_write_us)
{
        char p[320];

        qpath(p, sizeof(p), disk, attr);
        return write_attr_timed(p, val, ret_write_us);
}

static int qwrite(const char *disk, const char *attr, const char *val)
{
        return qwrite_timed(disk, attr, val, NULL);
}

static int qread(const char *disk, const char *attr, char *buf, size_t size)
{
        char p[320];

        qpath(p, sizeof(p), disk, attr);
        return read_attr(p, buf, size);
}

/* The bracketed name in queue/scheduler. */
static int current_sched(const char *disk, char *buf, size_t size)
{
        char raw[256], *b, *e;
        int r;

        r = qread(disk, "scheduler", raw, sizeof(raw));
        if (r < 0)
                return r;
        b = strchr(raw, '[');
        e = b ? strchr(b, ']') : NULL;
        if (!b || !e)
                return -EINVAL;
        *e = '\0';
        snprintf(buf, size, "%s", b + 1);
        return 0;
}

static void check(bool ok, const char *name, const char *fmt, ...)
{
        va_list ap;

        printf("KT check %s %s ", name, ok ? "PASS" : "FAIL");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
        if (!ok)
                failures++;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

/* median of @n sorted values */
static double median(const uint64_t *v, int n)
{
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t pct(const uint64_t *v, int n, int p)
{
        int i = (p * n + 99) / 100 - 1;

        if (i < 0)
                i = 0;
        return v[i];
}

/*
 * One untimed write first (it may be a real change, e.g. the first
 * max_sectors_kb write also records a user limit), then SAMPLES timed ones.
 * Every write must return @want_err (0: success, else a negative errno): a
 * write that must fail, such as an unknown scheduler name, is timed too.
 */
static void same_value_path_n(const char *path, const char *label, const char *val,
                              int want_err, int n)
{
        uint64_t t[SAMPLES_CHEAP], w[SAMPLES_CHEAP], t0;
        int i, r;

        if (access(path, F_OK) < 0) {
                printf("KT info missing %s\n", label);
                return;
        }
        r = write_attr(path, val);
        if (r < 0 && r != want_err) {
                check(false, label, "warm-up write of '%s' failed: %s", val, strerror(-r));
                return;
        }
        for (i = 0; i < n; i++) {
                t0 = now_us();
                r = write_attr_timed(path, val, &w[i]);
                t[i] = now_us() - t0;
                if (r != want_err) {
                        check(false, label, "write %d of '%s': %s, expected %s", i, val,
                              r ? strerror(-r) : "success",
                              want_err ? strerror(-want_err) : "success");
                        return;
                }
        }
        qsort(t, n, sizeof(t[0]), cmp_u64);
        qsort(w, n, sizeof(w[0]), cmp_u64);
        /* write() alone, then open+write+close */
        printf("KT same %s %.1f %llu %llu %d %.1f\n", label, median(w, n),
               (unsigned long long)w[0], (unsigned long long)w[n - 1], n, median(t, n));
        fflush(stdout);
}

static void same_value_path(const char *path, const char *label, const char *val,
                            int want_err)
{
        same_value_path_n(path, label, val, want_err, SAMPLES);
}

static void same_value(const char *disk, const char *label, const char *attr,
                       const char *val)
{
        char p[256];

        qpath(p, sizeof(p), disk, attr);
        same_value_path(p, label, val, 0);
}

/*
 * The current value written back @n times.  With @may_fail, a write that
 * fails (io_poll on a queue without poll queues) is timed as a failing one,
 * and said so; else a failure fails the check @label.
 */
static void same_current_n(const char *disk, const char *label, const char *attr, int n,
                           bool may_fail)
{
        char cur[64], p[256];
        int r;

        r = qread(disk, attr, cur, sizeof(cur));
        if (r == -ENOENT) {
                printf("KT info missing %s\n", label);
                return;
        }
        if (r < 0) {
                check(false, label, "read failed: %s", strerror(-r));
                return;
        }
        qpath(p, sizeof(p), disk, attr);
        r = may_fail ? write_attr(p, cur) : 0;
        if (r < 0)
                printf("KT info fails %s %s\n", label, strerror(-r));
        same_value_path_n(p, label, cur, r, n);
}

/*
 * Writes that cost microseconds on every kernel, where the host's load moves
 * the figures of one boot against another's: each write() of the current
 * value is paired with a read() of the attribute (the same code on every
 * kernel), so write/read compares kernels measured at different times.
 */
static void cheap_pair(const char *disk, const char *attr)
{
        uint64_t w[SAMPLES_CHEAP], rd[SAMPLES_CHEAP], t0;
        char p[256], cur[64], buf[64];
        ssize_t n;
        int i, fd;

        qpath(p, sizeof(p), disk, attr);
        if ((strcmp(attr, "scheduler") ? read_attr(p, cur, sizeof(cur)) :
             current_sched(disk, cur, sizeof(cur))) < 0) {
                printf("KT info missing cheap %s\n", attr);
                return;
        }
        for (i = 0; i < SAMPLES_CHEAP; i++) {
                fd = open(p, O_RDWR | O_CLOEXEC);
                if (fd < 0) {
                        check(false, attr, "open: %s", strerror(errno));
                        return;
                }
                t0 = now_us();
                n = pread(fd, buf, sizeof(buf), 0);
                rd[i] = now_us() - t0;
                t0 = now_us();
                if (n > 0)
                        n = pwrite(fd, cur, strlen(cur), 0);
                w[i] = now_us() - t0;
                close(fd);
                if (n < 0) {
                        check(false, attr, "write of '%s': %s", cur, strerror(errno));
                        return;
                }
        }
        qsort(w, SAMPLES_CHEAP, sizeof(w[0]), cmp_u64);
        qsort(rd, SAMPLES_CHEAP, sizeof(rd[0]), cmp_u64);
        printf("KT cheap %s %.1f %.1f %d\n", attr, median(w, SAMPLES_CHEAP),
               median(rd, SAMPLES_CHEAP), SAMPLES_CHEAP);
}

static void same_current(const char *disk, const char *label, const char *attr)
{
        same_current_n(disk, label, attr, SAMPLES, false);
}

static int nullb_attr(const char *name, const char *attr, const char *val)
{
        char p[256];

        snprintf(p, sizeof(p), NULLB_CFS "/%s/%s", name, attr);
        return write_attr(p, val);
}

/*
 * Create a configfs null_blk device with one hardware queue (so it gets
 * mq-deadline by default) and return its disk name.  The power write is
 * where add_disk() runs; its duration is returned in @ret_us.
 */
static int nullb_create(const char *name, bool memory_backed, bool shared_tags, char *disk,
                        size_t size, uint64_t *ret_us)
{
        char p[256];
        uint64_t t0;
        int r;

        snprintf(p, sizeof(p), NULLB_CFS "/%s", name);
        if (mkdir(p, 0755) < 0)
                return -errno;
        if ((r = nullb_attr(name, "size", memory_backed ? "128" : "1024")) < 0 ||
            (r = nullb_attr(name, "submit_queues", "1")) < 0 ||
            (r = nullb_attr(name, "poll_queues", "0")) < 0 ||
            (r = nullb_attr(name, "memory_backed", memory_backed ? "1" : "0")) < 0 ||
            (shared_tags && (r = nullb_attr(name, "shared_tags", "1")) < 0))
                return r;
        t0 = now_us();
        r = nullb_attr(name, "power", "1");
        if (ret_us)
                *ret_us = now_us() - t0;
        if (r < 0)
                return r;
        /* configfs devices are named after their directory. */
        snprintf(disk, size, "%s", name);
        snprintf(p, sizeof(p), "/sys/block/%s", disk);
        if (access(p, F_OK) < 0)
                return -errno;
        return 0;
}

static void nullb_remove(const char *name)
{
        char p[256];

        nullb_attr(name, "power", "0");
        snprintf(p, sizeof(p), NULLB_CFS "/%s", name);
        rmdir(p);
}

/*
 * request_module() runs the program named in /proc/sys/kernel/modprobe; a
 * script that only logs its call counts the runs.
 */
#define MODPROBE_LOG "/tmp/modprobe.log"
#define MODPROBE_SCRIPT "/tmp/modprobe-count"

static int modprobe_setup(void)
{
        static const char script[] = "#!/bin/sh\necho \"$*\" >> " MODPROBE_LOG "\n";
        int fd, r = 0;

        fd = open(MODPROBE_SCRIPT, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        if (fd < 0)
                return -errno;
        if (write(fd, script, strlen(script)) != (ssize_t)strlen(script))
                r = -EIO;
        close(fd);
        return r ? r : write_attr("/proc/sys/kernel/modprobe", MODPROBE_SCRIPT);
}

static long modprobe_runs(void)
{
        FILE *f = fopen(MODPROBE_LOG, "re");
        long n = 0;
        int c;

        if (!f)
                return 0;
        while ((c = fgetc(f)) != EOF)
                n += c == '\n';
        fclose(f);
        return n;
}

/*
 * Writes that change nothing because they are clamped to the current value,
 * or that fail: they should cost no more than a read.
 */
static void test_same_failing(const char *disk)
{
        char p[256], nr[32];
        long runs;
        int i;

        /* nr_requests below the minimum (4) is clamped to it. */
        if (qread(disk, "nr_requests", nr, sizeof(nr)) == 0 &&
            qwrite(disk, "nr_requests", "4") == 0) {
                same_value(disk, "nr_requests:below-min", "nr_requests", "1");
                qwrite(disk, "nr_requests", nr);
        }
        /*
         * An unknown name requests its module on every kernel: counted
         * first, then timed without it (an empty /proc/sys/kernel/modprobe
         * makes request_module() return at once), which leaves what the
         * store itself does: the usermode helper's time depends on the host.
         */
        qpath(p, sizeof(p), disk, "scheduler");
        runs = modprobe_runs();
        for (i = 0; i <= SAMPLES; i++)
                write_attr(p, "bogus");
        printf("KT modprobe scheduler:unknown %ld %d\n", modprobe_runs() - runs, SAMPLES + 1);
        if (write_attr("/proc/sys/kernel/modprobe", "\n") == 0) {
                same_value_path(p, "scheduler:unknown", "bogus", -EINVAL);
                write_attr("/proc/sys/kernel/modprobe", MODPROBE_SCRIPT);
        }
        /* async_depth needs an elevator: on none every write fails. */
        if (qwrite(disk, "scheduler", "none") == 0) {
                qpath(p, sizeof(p), disk, "async_depth");
                same_value_path(p, "async_depth:none", "8", -EINVAL);
        }
        if (qwrite(disk, "scheduler", "mq-deadline") < 0)
                check(false, "setup", "switch back to mq-deadline failed");
}

/* The disk's MAJ:MIN, as the io.cost.* files key their lines. */
static int disk_devno(const char *disk, char *buf, size_t size)
{
        char p[256];

        snprintf(p, sizeof(p), "/sys/block/%s/dev", disk);
        return read_attr(p, buf, size);
}

/*
 * io.cost.qos and io.cost.model of the cgroup2 root (init mounts it): the
 * warm-up write sets up iocost and the user parameters; the timed ones
 * write the same parameters again, as systemd's iocost udev rule does on
 * every event.  iocost is disabled again afterwards (a real change).
 */
static void test_same_iocost(const char *disk)
{
        char devno[32], val[256];

        if (disk_devno(disk, devno, sizeof(devno)) < 0) {
                check(false, "iocost", "cannot read the device number of %s", disk);
                return;
        }
        snprintf(val, sizeof(val), "%s enable=1 ctrl=user rpct=95.00 rlat=5000 "
                 "wpct=95.00 wlat=5000 min=50.00 max=150.00", devno);
        same_value_path(CGROUP2 "/io.cost.qos", "io.cost.qos", val, 0);
        snprintf(val, sizeof(val), "%s ctrl=user model=linear rbps=2000000000 "
                 "rseqiops=100000 rrandiops=100000 wbps=1000000000 wseqiops=50000 "
                 "wrandiops=50000", devno);
        same_value_path(CGROUP2 "/io.cost.model", "io.cost.model", val, 0);
        snprintf(val, sizeof(val), "%s enable=0", devno);
        if (access(CGROUP2 "/io.cost.qos", F_OK) == 0 &&
            write_attr(CGROUP2 "/io.cost.qos", val) < 0)
                check(false, "iocost", "disabling iocost on %s failed", disk);
}

/*
 * wbt that is off by default (under bfq, or with iocost enabled) reads 0.
 * Writing that 0 back, as tools that save and restore queue settings do:
 * each round on a new disk (wbt on by default), turned off by default, its
 * 0 read and written back (timed), then the default allowed again (back to
 * mq-deadline, iocost disabled): wbt should be on again, as without the write.
 */
static int wbt_default_allowed(const char *disk, const char *devno, bool iocost, bool allow)
{
        char val[128];

        if (!iocost)
                return qwrite(disk, "scheduler", allow ? "mq-deadline" : "bfq");
        snprintf(val, sizeof(val), "%s enable=%d", devno, !allow);
        return write_attr(CGROUP2 "/io.cost.qos", val);
}

static void test_wbt_readback(void)
{
        static const char *const how[] = { "bfq", "iocost" };
        char disk[32], devno[32], cur[64], label[64];
        uint64_t w[SAMPLES], t[SAMPLES], t0;
        int k, i, off_after = 0, r = 0;

        for (k = 0; k < 2; k++) {
                bool iocost = k == 1;

                snprintf(label, sizeof(label), "wbt_lat_usec:0-%s", how[k]);
                if (iocost && access(CGROUP2 "/io.cost.qos", F_OK) < 0) {
                        printf("KT info missing %s\n", label);
                        continue;
                }
                off_after = 0;
                for (i = 0; i < SAMPLES; i++) {
                        r = nullb_create("w0", false, false, disk, sizeof(disk), NULL);
                        r = r ? r : disk_devno(disk, devno, sizeof(devno));
                        r = r ? r : wbt_default_allowed(disk, devno, iocost, false);
                        r = r ? r : qread(disk, "wbt_lat_usec", cur, sizeof(cur));
                        if (r == 0 && strcmp(cur, "0")) {
                                check(false, label, "wbt_lat_usec reads %s, not 0", cur);
                                r = -EINVAL;
                        }
                        t0 = now_us();
                        r = r ? r : qwrite_timed(disk, "wbt_lat_usec", cur, &w[i]);
                        t[i] = now_us() - t0;
                        r = r ? r : wbt_default_allowed(disk, devno, iocost, true);
                        r = r ? r : qread(disk, "wbt_lat_usec", cur, sizeof(cur));
                        nullb_remove("w0");
                        if (r < 0)
                                break;
                        off_after += !strcmp(cur, "0");
                }
                if (r < 0) {
                        check(false, label, "round %d failed: %s", i, strerror(-r));
                        continue;
                }
                qsort(w, SAMPLES, sizeof(w[0]), cmp_u64);
                qsort(t, SAMPLES, sizeof(t[0]), cmp_u64);
                printf("KT same %s %.1f %llu %llu %d %.1f\n", label, median(w, SAMPLES),
                       (unsigned long long)w[0], (unsigned long long)w[SAMPLES - 1], SAMPLES,
                       median(t, SAMPLES));
                snprintf(label, sizeof(label), "wbt-0-readback-%s", how[k]);
                check(off_after == 0, label, "wbt off after the default allowed it again in "
                      "%d of %d rounds", off_after, SAMPLES);
        }
}

/* A host-managed zoned null_blk disk (4 MB zones), for zoned_qd1_writes. */
/*
 * Create a configfs null_blk device with one hardware queue and the
 * attribute/value pairs of @attrs (NULL-terminated) set before power-on.
 */
static int nullb_create_with(const char *name, const char *const *attrs)
{
        char p[256];
        size_t i;
        int r;

        snprintf(p, sizeof(p), NULLB_CFS "/%s", name);
        if (mkdir(p, 0755) < 0)
                return -errno;
        if ((r = nullb_attr(name, "size", "256")) < 0 ||
            (r = nullb_attr(name, "submit_queues", "1")) < 0 ||
            (r = nullb_attr(name, "poll_queues", "0")) < 0)
                return r;
        for (i = 0; attrs[i] && attrs[i + 1]; i += 2)
                if ((r = nullb_attr(name, attrs[i], attrs[i + 1])) < 0)
                        return r;
        if ((r = nullb_attr(name, "power", "1")) < 0)
                return r;
        snprintf(p, sizeof(p), "/sys/block/%s", name);
        return access(p, F_OK) < 0 ? -errno : 0;
}

static void expect_value(const char *disk, const char *attr, const char *val);

static void test_zoned(void)
{
        static const char *const zoned[] = { "zoned", "1", "zone_size", "4", NULL };
        char p[256];
        int r;

        r = nullb_create_with("z0", zoned);
        if (r < 0) {
                check(false, "zoned", "cannot create a zoned null_blk disk: %s", strerror(-r));
                nullb_remove("z0");
                return;
        }
        qpath(p, sizeof(p), "z0", "zoned_qd1_writes");
        if (access(p, F_OK) == 0) {
                same_current("z0", "zoned_qd1_writes", "zoned_qd1_writes");
                expect_value("z0", "zoned_qd1_writes", "1");
                same_value("z0", "zoned_qd1_writes:1", "zoned_qd1_writes", "1");
                expect_value("z0", "zoned_qd1_writes", "0");
        } else {
                printf("KT info missing zoned_qd1_writes\n");
        }
        nullb_remove("z0");
}

/*
 * A queue without an elevator whose tag depth (1 here) is below the minimum
 * of nr_requests (4) shows that depth: writing it back must succeed, as on
 * 7.3.4.  Any other value below the minimum is raised to it, which is above
 * the depth: EINVAL, as on 7.3.4.
 */
static void test_shallow(void)
{
        static const char *const shallow[] = { "hw_queue_depth", "1", NULL };
        char nr[32];
        int r;

        r = nullb_create_with("sh0", shallow);
        r = r ? r : qwrite("sh0", "scheduler", "none");
        r = r ? r : qread("sh0", "nr_requests", nr, sizeof(nr));
        if (r < 0) {
                check(false, "shallow", "null_blk of depth 1 without an elevator: %s",
                      strerror(-r));
                nullb_remove("sh0");
                return;
        }
        r = qwrite("sh0", "nr_requests", nr);
        check(r == 0, "shallow-nr_requests-same",
              "nr_requests %s written back on a queue of depth 1 without an elevator: %s", nr,
              r ? strerror(-r) : "ok");
        r = qwrite("sh0", "nr_requests", "2");
        check(r == -EINVAL, "shallow-nr_requests-below-min",
              "nr_requests 2 there (raised to 4, above the depth): %s",
              r ? strerror(-r) : "accepted");
        nullb_remove("sh0");
}

static void test_same(const char *disk)
{
        static const char *const scheds[] = { "none", "mq-deadline", "bfq" };
        bool counting = modprobe_setup() == 0;
        char label[64];
        long runs;
        size_t i;

        for (i = 0; i < sizeof(scheds) / sizeof(scheds[0]); i++) {
                snprintf(label, sizeof(label), "scheduler:%s", scheds[i]);
                runs = modprobe_runs();
                same_value(disk, label, "scheduler", scheds[i]);
                if (counting)
                        printf("KT modprobe %s %ld %d\n", label, modprobe_runs() - runs,
                               SAMPLES + 1);
        }
        /* wbt is on by default with mq-deadline (bfq turns it off). */
        if (qwrite(disk, "scheduler", "mq-deadline") < 0)
                check(false, "setup", "switch to mq-deadline failed");
        same_current(disk, "wbt_lat_usec", "wbt_lat_usec");
        /* free on every kernel since 7.0: compared with more samples */
        same_current_n(disk, "nr_requests", "nr_requests", SAMPLES_CHEAP, false);
        same_current_n(disk, "read_ahead_kb", "read_ahead_kb", SAMPLES_CHEAP, false);
        cheap_pair(disk, "nr_requests");
        cheap_pair(disk, "read_ahead_kb");
        cheap_pair(disk, "scheduler");
        same_current(disk, "max_sectors_kb", "max_sectors_kb");
        same_current(disk, "async_depth", "async_depth");
        same_current_n(disk, "nomerges", "nomerges", SAMPLES, true);
        same_current_n(disk, "rq_affinity", "rq_affinity", SAMPLES, true);
        same_current_n(disk, "io_poll", "io_poll", SAMPLES, true);
        same_current_n(disk, "io_poll_delay", "io_poll_delay", SAMPLES, true);
        same_current_n(disk, "io_timeout", "io_timeout", SAMPLES, true);
        test_same_failing(disk);
        test_same_iocost(disk);
        test_wbt_readback();
        test_zoned();
        test_shallow();
}

static void expect_sched(const char *disk, const char *want)
{
        char cur[64] = "";
        int r;

        r = qwrite(disk, "scheduler", want);
        if (r == 0)
                r = current_sched(disk, cur, sizeof(cur));
        check(r == 0 && !strcmp(cur, want), "switch", "%s: wrote %s, reads [%s]%s%s", disk,
              want, cur, r ? " error " : "", r ? strerror(-r) : "");
}

static void expect_value(const char *disk, const char *attr, const char *val)
{
        char cur[64] = "";
        int r;

        r = qwrite(disk, attr, val);
        if (r == 0)
                r = qread(disk, attr, cur, sizeof(cur));
        check(r == 0 && !strcmp(cur, val), "readback", "%s %s: wrote %s, reads %s%s%s", disk,
              attr, val, cur, r ? " error " : "", r ? strerror(-r) : "");
}

static void test_changes(const char *disk)
{
        static const char *const cycle[] = {
                "mq-deadline", "kyber", "bfq", "none", "bfq", "mq-deadline", "none",
                "kyber", "mq-deadline",
        };
        char ra[32], depth[32], nr[32], ms[32];
        size_t i;
        int r;

        for (i = 0; i < sizeof(cycle) / sizeof(cycle[0]); i++)
                expect_sched(disk, cycle[i]);
        /* Not "nonexistent": every name starting with "none" means none. */
        r = qwrite(disk, "scheduler", "bogus");
        check(r == -EINVAL, "unknown-scheduler", "write of an unknown name: %s",
              r ? strerror(-r) : "accepted");

        expect_value(disk, "wbt_lat_usec", "3000");
        expect_value(disk, "wbt_lat_usec", "0");
        expect_value(disk, "wbt_lat_usec", "2000");
        expect_value(disk, "nr_requests", "32");
        expect_value(disk, "nr_requests", "64");
        expect_value(disk, "read_ahead_kb", "64");
        expect_value(disk, "read_ahead_kb", "128");
        r = qread(disk, "max_sectors_kb", ms, sizeof(ms));
        expect_value(disk, "max_sectors_kb", "64");
        if (r == 0)
                expect_value(disk, "max_sectors_kb", ms);

        /* A "none" rewrite must not reset a lowered nr_requests. */
        expect_sched(disk, "none");
        r = qread(disk, "nr_requests", depth, sizeof(depth));
        expect_value(disk, "nr_requests", "16");
        r = r ? r : qwrite(disk, "scheduler", "none");
        r = r ? r : qread(disk, "nr_requests", nr, sizeof(nr));
        check(r == 0 && !strcmp(nr, "16"), "none-keeps-nr_requests",
              "nr_requests 16, after writing none again: %s (queue depth %s)", nr, depth);
        expect_value(disk, "nr_requests", depth);

        /*
         * Informational: an unchanged max_sectors_kb write used to commit the
         * limits, which raises a lowered read-ahead back to the default.
         */
        r = qread(disk, "max_sectors_kb", ms, sizeof(ms));
        r = r ? r : qwrite(disk, "read_ahead_kb", "16");
        r = r ? r : qwrite(disk, "max_sectors_kb", ms);
        r = r ? r : qread(disk, "read_ahead_kb", ra, sizeof(ra));
        printf("KT info read_ahead_kb-after-same-max_sectors_kb %s\n", r ? "error" : ra);
        qwrite(disk, "read_ahead_kb", "128");
        expect_sched(disk, "mq-deadline");
}

/*
 * Creates up to @n null_blk disks PREFIX0, PREFIX1, ... with their creation times in @t (a
 * failure is the check @what); counts in @sched_ok those that came up with mq-deadline.
 * Returns how many were created.
 */
static int add_disks(const char *prefix, const char *what, int n, uint64_t *t, int *sched_ok)
{
        char name[32], disk[32], cur[64];
        int i, r;

        *sched_ok = 0;
        for (i = 0; i < n; i++) {
                snprintf(name, sizeof(name), "%s%d", prefix, i);
                r = nullb_create(name, false, false, disk, sizeof(disk), &t[i]);
                if (r < 0) {
                        check(false, what, "creating %s failed: %s", name, strerror(-r));
                        break;
                }
                if (current_sched(disk, cur, sizeof(cur)) == 0 && !strcmp(cur, "mq-deadline"))
                        (*sched_ok)++;
        }
        return i;
}

/* "KT WHAT n p50 p99 max sched_ok" of @n creation times, and the check WHAT-default-elevator. */
static void report_adds(const char *what, uint64_t *t, int n, int sched_ok)
{
        char name[64];

        qsort(t, n, sizeof(t[0]), cmp_u64);
        printf("KT %s %d %llu %llu %llu %d\n", what, n, (unsigned long long)pct(t, n, 50),
               (unsigned long long)pct(t, n, 99), (unsigned long long)t[n - 1], sched_ok);
        snprintf(name, sizeof(name), "%s-default-elevator", what);
        check(sched_ok == n, name, "%d of %d added disks got mq-deadline", sched_ok, n);
}

static void test_add(void)
{
        uint64_t t[ADD_DISKS];
        char name[32];
        int i, sched_ok, n;

        n = add_disks("add", "add", ADD_DISKS, t, &sched_ok);
        for (i = 0; i < n; i++) {
                snprintf(name, sizeof(name), "add%d", i);
                nullb_remove(name);
        }
        if (n)
                report_adds("add", t, n, sched_ok);
}

/*
 * The add benchmark traces the default elevator setup of each added disk
 * with the function graph tracer: elevator_set_default() and, called from
 * it, blk_mq_quiesce_queue() and synchronize_rcu() (the grace period that
 * quiescing waits for).  Only these three functions are patched, so the
 * tracer costs a few microseconds per add.
 */
static int trace_set(const char *file, const char *val)
{
        char p[256];
        int fd, r = 0;

        snprintf(p, sizeof(p), TRACEFS "/%s", file);
        fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* tracefs filter files take one name per write() and say so. */
        while (*val && !r) {
                ssize_t n = write(fd, val, strlen(val));

                if (n < 0)
                        r = -errno;
                else if (n == 0)
                        r = -EIO;
                else
                        val += n;
        }
        close(fd);
        return r;
}

static int trace_start(void)
{
        static const char *const steps[][2] = {
                { "tracing_on", "0" },
                { "current_tracer", "nop" },
                { "set_ftrace_filter", "elevator_set_default blk_mq_quiesce_queue synchronize_rcu" },
                { "set_graph_function", "elevator_set_default" },
                { "options/funcgraph-tail", "1" },
                { "buffer_size_kb", "2048" },
                { "trace", "" },
                { "current_tracer", "function_graph" },
                { "tracing_on", "1" },
        };
        size_t i;
        int r;

        for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                r = trace_set(steps[i][0], steps[i][1]);
                if (r < 0) {
                        check(false, "add-trace", "writing '%s' to %s/%s: %s", steps[i][1],
                              TRACEFS, steps[i][0], strerror(-r));
                        return r;
                }
        }
        return 0;
}

/* The duration in a function graph line ("  1) # 8123.456 us  |  ..."), or -1. */
static double graph_duration(const char *line, const char *bar)
{
        const char *us = strstr(line, " us ");
        const char *b;

        if (!us || us > bar)
                return -1;
        for (b = us; b > line && (b[-1] == '.' || (b[-1] >= '0' && b[-1] <= '9')); b--)
                ;
        return b < us ? strtod(b, NULL) : -1;
}

/*
 * Whether the code part of a function graph line ends a call of @name: either
 * "name();" (no traced callee) or the closing brace that funcgraph-tail
 * labels with the name.
 */
static bool graph_ends(const char *code, const char *name)
{
        char leaf[64], tail[64];

        snprintf(leaf, sizeof(leaf), "%s();", name);
        snprintf(tail, sizeof(tail), "} /* %s */", name);
        return strstr(code, leaf) || strstr(code, tail);
}

static void trace_report(int adds)
{
        uint64_t esd[512], sync[512];
        int n_esd = 0, n_sync = 0, n_quiesce_calls = 0, quiescing = 0, lost = 0;
        bool in_esd = false, esd_quiesced = false;
        char line[512];
        FILE *f;

        trace_set("tracing_on", "0");
        f = fopen(TRACEFS "/trace", "re");
        if (!f) {
                check(false, "add-trace", "cannot read %s/trace: %s", TRACEFS, strerror(errno));
                return;
        }
        while (fgets(line, sizeof(line), f)) {
                char *bar = strchr(line, '|');
                double d;

                if (line[0] == '#' || !bar)
                        continue;
                d = graph_duration(line, bar);
                if (strstr(bar, "elevator_set_default() {")) {
                        in_esd = true;
                        esd_quiesced = false;
                } else if (graph_ends(bar, "elevator_set_default")) {
                        if (d < 0 || n_esd >= (int)(sizeof(esd) / sizeof(esd[0]))) {
                                lost++;
                        } else {
                                esd[n_esd++] = (uint64_t)d;
                                quiescing += esd_quiesced;
                        }
                        in_esd = false;
                } else if (graph_ends(bar, "blk_mq_quiesce_queue")) {
                        n_quiesce_calls++;
                        esd_quiesced |= in_esd;
                } else if (graph_ends(bar, "synchronize_rcu")) {
                        if (d >= 0 && n_sync < (int)(sizeof(sync) / sizeof(sync[0])))
                                sync[n_sync++] = (uint64_t)d;
                        else
                                lost++;
                }
        }
        fclose(f);
        trace_set("current_tracer", "nop");
        if (!n_esd) {
                check(false, "add-trace", "no elevator_set_default() call in the trace");
                return;
        }
        qsort(esd, n_esd, sizeof(esd[0]), cmp_u64);
        qsort(sync, n_sync, sizeof(sync[0]), cmp_u64);
        printf("KT elvset %d %llu %llu %d %d %llu\n", n_esd,
               (unsigned long long)pct(esd, n_esd, 50), (unsigned long long)pct(esd, n_esd, 99),
               quiescing, n_sync, (unsigned long long)(n_sync ? pct(sync, n_sync, 50) : 0));
        check(n_esd == adds && !lost, "add-trace",
              "%d elevator_set_default() calls traced for %d adds, %d unreadable lines, "
              "%d blk_mq_quiesce_queue() calls", n_esd, adds, lost, n_quiesce_calls);
}

/*
 * Add @n single-queue disks and time each add_disk(), with the default
 * elevator setup traced.  verify boots this under QEMU's instruction
 * counting (-icount), where guest time advances with the instructions the
 * guest executes and jumps over idle periods, so the figures do not depend
 * on how busy the host is.  The disks stay until the guest reboots.
 */
static void test_add_bench(int n)
{
        uint64_t t[512];
        int sched_ok, added;
        bool traced;

        if (n < 1 || n > (int)(sizeof(t) / sizeof(t[0])))
                n = sizeof(t) / sizeof(t[0]);
        traced = trace_start() == 0;
        added = add_disks("b", "addbench", n, t, &sched_ok);
        if (traced)
                trace_report(added);
        if (added)
                report_adds("addbench", t, added, sched_ok);
}

struct stress_stats {
        unsigned long changes, same, ebusy, errors;
        uint64_t slowest;
};

static void timed_write(const char *disk, const char *attr, const char *val, bool change,
                        struct stress_stats *st)
{
        uint64_t t0 = now_us(), dt;
        int r;

        r = qwrite(disk, attr, val);
        dt = now_us() - t0;
        if (dt > st->slowest)
                st->slowest = dt;
        if (r == -EBUSY)
                st->ebusy++;
        else if (r < 0) {
                st->errors++;
                printf("KT stress-error %s %s %s: %s\n", disk, attr, val, strerror(-r));
        } else if (change)
                st->changes++;
        else
                st->same++;
}

/* Switch schedulers and other attributes until @end; @same: rewrite current values. */
static void stress_worker(char *const *disks, int ndisks, uint64_t end, bool same, int fd)
{
        static const char *const scheds[] = { "mq-deadline", "kyber", "bfq", "none" };
        static const char *const lats[] = { "2000", "3000", "0", "-1" };
        static const char *const nrs[] = { "64", "32", "48" };
        struct stress_stats st = { 0 };
        char cur[64];
        unsigned long i = 0;
        int d;

        while (now_us() < end) {
                for (d = 0; d < ndisks; d++) {
                        const char *disk = disks[d];

                        if (same) {
                                if (current_sched(disk, cur, sizeof(cur)) == 0)
                                        timed_write(disk, "scheduler", cur, false, &st);
                                if (qread(disk, "wbt_lat_usec", cur, sizeof(cur)) == 0)
                                        timed_write(disk, "wbt_lat_usec", cur, false, &st);
                                if (qread(disk, "max_sectors_kb", cur, sizeof(cur)) == 0)
                                        timed_write(disk, "max_sectors_kb", cur, false, &st);
                                if (qread(disk, "nr_requests", cur, sizeof(cur)) == 0)
                                        timed_write(disk, "nr_requests", cur, false, &st);
                        } else {
                                timed_write(disk, "scheduler", scheds[(i + d) % 4], true, &st);
                                timed_write(disk, "wbt_lat_usec", lats[i % 4], true, &st);
                                timed_write(disk, "nr_requests", nrs[i % 3], true, &st);
                                timed_write(disk, "max_sectors_kb", i % 2 ? "64" : "128",
                                            true, &st);
                        }
                }
                i++;
        }
        if (write(fd, &st, sizeof(st)) != sizeof(st))
                _exit(2);
        _exit(0);
}

static void test_stress(char *const *disks, int ndisks, int seconds)
{
        struct stress_stats total = { 0 }, st;
        uint64_t end = now_us() + (uint64_t)seconds * 1000000;
        int pfd[2], i, status, ok = 1;
        pid_t pid[2];

        if (pipe(pfd) < 0) {
                check(false, "stress", "pipe: %s", strerror(errno));
                return;
        }
        for (i = 0; i < 2; i++) {
                pid[i] = fork();
                if (pid[i] == 0) {
                        close(pfd[0]);
                        stress_worker(disks, ndisks, end, i == 1, pfd[1]);
                }
        }
        close(pfd[1]);
        /* The workers stop at @end; give blocked writes 60 s more before calling it a hang. */
        alarm(seconds + 60);
        for (i = 0; i < 2; i++) {
                if (read(pfd[0], &st, sizeof(st)) != sizeof(st)) {
                        ok = 0;
                        continue;
                }
                total.changes += st.changes;
                total.same += st.same;
                total.ebusy += st.ebusy;
                total.errors += st.errors;
                if (st.slowest > total.slowest)
                        total.slowest = st.slowest;
        }
        for (i = 0; i < 2; i++)
                if (waitpid(pid[i], &status, 0) < 0 || !WIFEXITED(status) ||
                    WEXITSTATUS(status))
                        ok = 0;
        alarm(0);
        close(pfd[0]);
        printf("KT stress %d %lu %lu %lu %lu %llu\n", seconds, total.changes, total.same,
               total.ebusy, total.errors, (unsigned long long)total.slowest);
        check(ok && total.errors == 0 && total.changes > 0 && total.same > 0 &&
              total.slowest < SLOW_WRITE_US, "stress",
              "%lu changing and %lu same-value writes, %lu EBUSY, %lu errors, slowest %llu us",
              total.changes, total.same, total.ebusy, total.errors,
              (unsigned long long)total.slowest);
}

/*
 * The current scheduler and nr_requests of @disk written again; counted.
 * With @only_elevator, a queue that reads "none" is skipped: during an
 * nr_hw_queues update that is a transient state, and writing it back after
 * the update would be a real switch (and its nr_requests invalid for none).
 */
static void rewrite_current(const char *disk, bool only_elevator, unsigned long *same,
                            unsigned long *ebusy, unsigned long *errors)
{
        char cur[64], nr[32];
        int r;

        if (current_sched(disk, cur, sizeof(cur)) < 0 ||
            qread(disk, "nr_requests", nr, sizeof(nr)) < 0) {
                (*errors)++;
                printf("KT info rewrite-error %s: read failed\n", disk);
                return;
        }
        if (only_elevator && !strcmp(cur, "none"))
                return;
        r = qwrite(disk, "scheduler", cur);
        r = r ? r : qwrite(disk, "nr_requests", nr);
        if (r == -EBUSY) {
                (*ebusy)++;
        } else if (r < 0) {
                (*errors)++;
                printf("KT info rewrite-error %s: scheduler %s, nr_requests %s: %s\n", disk,
                       cur, nr, strerror(-r));
        } else {
                (*same)++;
        }
}

/*
 * Two disks sharing one tag set (null_blk shared_tags=1), like the LUNs of a
 * SCSI host or the namespaces of an NVMe controller: a child switches the
 * scheduler and nr_requests of the first in a loop, while the current
 * scheduler and nr_requests of the second are written again, first with
 * mq-deadline, then with none.  Those writes change nothing and must never
 * fail, EBUSY included.
 */
static void test_shared(int seconds)
{
        static const char *const scheds[] = { "none", "mq-deadline", "kyber", "bfq" };
        static const char *const nrs[] = { "32", "64", "48" };
        unsigned long same = 0, ebusy = 0, errors = 0, changes = 0;
        char s0[32], s1[32];
        int pfd[2], phase, status;
        uint64_t end;
        pid_t pid;

        if (nullb_create("s0", false, true, s0, sizeof(s0), NULL) < 0 ||
            nullb_create("s1", false, true, s1, sizeof(s1), NULL) < 0) {
                check(false, "shared-tags", "cannot create null_blk disks with shared_tags=1");
                goto out;
        }
        if (pipe(pfd) < 0) {
                check(false, "shared-tags", "pipe: %s", strerror(errno));
                goto out;
        }
        end = now_us() + (uint64_t)seconds * 1000000;
        pid = fork();
        if (pid == 0) {
                unsigned long i = 0, n = 0;

                close(pfd[0]);
                while (now_us() < end) {
                        n += qwrite(s0, "scheduler", scheds[i % 4]) == 0;
                        n += qwrite(s0, "nr_requests", nrs[i % 3]) == 0;
                        i++;
                }
                if (write(pfd[1], &n, sizeof(n)) != sizeof(n))
                        _exit(2);
                _exit(0);
        }
        close(pfd[1]);
        for (phase = 0; phase < 2; phase++) {
                uint64_t phase_end = now_us() + (uint64_t)seconds * 1000000 / 2;

                /* The switch itself is a change and may see EBUSY: retry. */
                while (qwrite(s1, "scheduler", phase ? "none" : "mq-deadline") == -EBUSY &&
                       now_us() < phase_end)
                        ;
                while (now_us() < phase_end)
                        rewrite_current(s1, false, &same, &ebusy, &errors);
        }
        if (read(pfd[0], &changes, sizeof(changes)) != sizeof(changes))
                errors++;
        close(pfd[0]);
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
                errors++;
        printf("KT shared %d %lu %lu %lu %lu\n", seconds, changes, same, ebusy, errors);
        check(same > 0 && changes > 0 && !ebusy && !errors, "shared-tags-no-ebusy",
              "%lu same-value scheduler+nr_requests writes while the sibling changed %lu "
              "times: %lu EBUSY, %lu errors", same, changes, ebusy, errors);
out:
        nullb_remove("s1");
        nullb_remove("s0");
}

/*
 * nr_hw_queues updates (null_blk's submit_queues switched between 1 and 2 by a
 * child, 50 ms apart) leave the queue without its elevator, and with
 * nr_requests reset, for a while.  First half: the current scheduler and nr_requests are written
 * again meanwhile; such writes may fail with EBUSY during an update, never
 * otherwise.  Second half: "none" is written to the queue on mq-deadline; once
 * an update that started after the write returned has finished, the queue
 * must still be on none: a write that the transient none of an update made
 * look unchanged would have been undone by the update.
 */
static void test_nrhwq(int seconds)
{
        unsigned long same = 0, ebusy = 0, errors = 0, none_ok = 0, none_ebusy = 0, lost = 0;
        unsigned long *updates, u0;
        char disk[32], cur[64];
        uint64_t end, mid;
        int status, r;
        pid_t pid;

        updates = mmap(NULL, sizeof(*updates), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (updates == MAP_FAILED) {
                check(false, "nrhwq", "mmap: %s", strerror(errno));
                return;
        }
        *updates = 0;
        if (nullb_create("h0", false, false, disk, sizeof(disk), NULL) < 0) {
                check(false, "nrhwq", "cannot create the null_blk disk");
                goto out;
        }
        mid = now_us() + (uint64_t)seconds * 1000000 / 2;
        end = mid + (uint64_t)seconds * 1000000 / 2;
        pid = fork();
        if (pid == 0) {
                /* updates back to back would leave no time without one */
                struct timespec pause = { 0, 50 * 1000 * 1000 };
                unsigned long i = 0, bad = 0;

                while (now_us() < end) {
                        int e = nullb_attr("h0", "submit_queues", i++ % 2 ? "1" : "2");

                        if (e == 0)
                                __atomic_add_fetch(updates, 1, __ATOMIC_SEQ_CST);
                        else if (bad++ < 10)
                                printf("KT info nrhwq-error submit_queues: %s\n", strerror(-e));
                        nanosleep(&pause, NULL);
                }
                _exit(bad ? 3 : 0);
        }
        while (now_us() < mid)
                rewrite_current(disk, true, &same, &ebusy, &errors);
        while (now_us() < end) {
                while ((r = qwrite(disk, "scheduler", "mq-deadline")) == -EBUSY &&
                       now_us() < end)
                        ;
                if (r < 0)
                        continue;
                r = qwrite(disk, "scheduler", "none");
                if (r == -EBUSY) {
                        none_ebusy++;
                        continue;
                }
                if (r < 0) {
                        errors++;
                        printf("KT info nrhwq-error none: %s\n", strerror(-r));
                        continue;
                }
                none_ok++;
                /* wait for the update in flight, if any, to finish */
                u0 = __atomic_load_n(updates, __ATOMIC_SEQ_CST);
                while (__atomic_load_n(updates, __ATOMIC_SEQ_CST) < u0 + 1 && now_us() < end)
                        sched_yield();
                if (__atomic_load_n(updates, __ATOMIC_SEQ_CST) < u0 + 1)
                        break;
                if (current_sched(disk, cur, sizeof(cur)) < 0)
                        errors++;
                else if (strcmp(cur, "none"))
                        lost++;
        }
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
                errors++;
        printf("KT nrhwq %d %lu %lu %lu %lu\n", seconds, *updates, same, ebusy, errors);
        printf("KT nrhwq-lost %lu %lu %lu %lu\n", *updates, none_ok, none_ebusy, lost);
        check(*updates > 0 && same > 0 && !errors, "nrhwq-same-value",
              "%lu same-value scheduler+nr_requests writes during %lu nr_hw_queues updates: "
              "%lu EBUSY, %lu errors", same, *updates, ebusy, errors);
        check(none_ok > 0 && !lost, "nrhwq-no-lost-write",
              "%lu writes of none to a queue on mq-deadline during nr_hw_queues updates "
              "(%lu EBUSY): %lu undone", none_ok, none_ebusy, lost);
out:
        nullb_remove("h0");
        munmap(updates, sizeof(*updates));
}

/*
 * The window of test_nrhwq() on its own, for kernels where a sysfs store can
 * run inside an nr_hw_queues update (6.12: the update's freeze does not keep
 * a store out, and it drops sysfs_lock while it reallocates the hardware
 * contexts): one child switches submit_queues between 1 and 2 back to back,
 * another writes "mq-deadline" to the scheduler in a loop (a no-op except
 * while an update has the queue on none), and this process writes 32 and 64
 * to nr_requests in turn.  Errors are expected and only counted; what the
 * kernel does is in its log (init's check).  Not part of the measure run.
 */
static void race_nrhwq(int seconds)
{
        unsigned long *counts, nr_ok = 0, nr_err = 0, i = 0;
        char disk[32];
        pid_t pids[2];
        int k, status;
        uint64_t end;

        counts = mmap(NULL, 2 * sizeof(*counts), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (counts == MAP_FAILED) {
                check(false, "race-nrhwq", "mmap: %s", strerror(errno));
                return;
        }
        counts[0] = counts[1] = 0;
        if (nullb_create("r0", false, false, disk, sizeof(disk), NULL) < 0) {
                check(false, "race-nrhwq", "cannot create the null_blk disk");
                goto out;
        }
        end = now_us() + (uint64_t)seconds * 1000000;
        for (k = 0; k < 2; k++) {
                pids[k] = fork();
                if (pids[k] != 0)
                        continue;
                for (i = 0; now_us() < end; i++) {
                        if (k == 0 && nullb_attr("r0", "submit_queues", i % 2 ? "1" : "2") == 0)
                                __atomic_add_fetch(&counts[0], 1, __ATOMIC_SEQ_CST);
                        if (k == 1 && qwrite(disk, "scheduler", "mq-deadline") == 0)
                                __atomic_add_fetch(&counts[1], 1, __ATOMIC_SEQ_CST);
                }
                _exit(0);
        }
        for (i = 0; now_us() < end; i++) {
                if (qwrite(disk, "nr_requests", i % 2 ? "32" : "64") == 0)
                        nr_ok++;
                else
                        nr_err++;
        }
        for (k = 0; k < 2; k++) {
                if (waitpid(pids[k], &status, 0) < 0)
                        continue;
                if (WIFSIGNALED(status))
                        printf("KT info race-nrhwq %s killed by signal %d\n",
                               k ? "scheduler writer" : "submit_queues writer",
                               WTERMSIG(status));
        }
        printf("KT race-nrhwq %d %lu %lu %lu %lu\n", seconds, counts[0], counts[1], nr_ok,
               nr_err);
out:
        nullb_remove("r0");
        munmap(counts, 2 * sizeof(*counts));
}

/* 4k O_DIRECT reads at QD1 for @seconds: unplugged scheduler inserts. */
static void test_iops(const char *disk, const char *sched, int seconds)
{
        char path[64];
        uint64_t end, n = 0;
        void *buf;
        off_t off = 0;
        int fd;

        if (qwrite(disk, "scheduler", sched) < 0 || posix_memalign(&buf, 4096, 4096))
                return;
        snprintf(path, sizeof(path), "/dev/%s", disk);
        fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
        if (fd < 0) {
                check(false, "iops", "open %s: %s", path, strerror(errno));
                free(buf);
                return;
        }
        end = now_us() + (uint64_t)seconds * 1000000;
        while (now_us() < end) {
                if (pread(fd, buf, 4096, off) != 4096) {
                        check(false, "iops", "pread: %s", strerror(errno));
                        break;
                }
                off = (off + 4096 * 7) % (64 << 20);
                n++;
        }
        close(fd);
        free(buf);
        printf("KT iops %s %llu\n", sched, (unsigned long long)(n / seconds));
}

/*
 * The same-value rewriter that verify --blktests runs beside every test:
 * until SIGTERM, the current scheduler (also "none") and nr_requests of every
 * disk but the guest's root (vda) are written back, as udev rules and tuning
 * tools do, at RATE writes a second (20 unless given), one disk after the
 * other, each value read right before it is written.  A write is started
 * 1/RATE s after the one before it started, or at once when that one took
 * longer: a kernel whose writes freeze the queue gets
 * as many as they let through, one whose writes are cheap gets RATE, so the
 * load offered is the same on every kernel (a fixed pause between rounds gave
 * the kernel with cheap writes 20 to 30 times the writes).  Prints one line
 * when stopped:
 *   KT rewriter <writes> <ebusy> <enoent_enodev> <other_errors> <slowest_us>
 * (a disk removed between the read and the write counts as ENOENT/ENODEV).
 */
static volatile sig_atomic_t rewriter_stop;

static void on_term(int sig)
{
        (void)sig;
        rewriter_stop = 1;
}

/* Waits until *next (µs of now_us()), then sets it one interval later; not to catch up. */
static void rewriter_pace(uint64_t *next, uint64_t interval_us)
{
        uint64_t t = now_us();

        while (t < *next && !rewriter_stop) {
                struct timespec ts = { (time_t)((*next - t) / 1000000),
                                       (long)((*next - t) % 1000000) * 1000 };

                nanosleep(&ts, NULL); /* SIGTERM ends it early */
                t = now_us();
        }
        *next = (t > *next ? t : *next) + interval_us;
}

static void rewrite_one(const char *disk, const char *attr, const char *val,
                        unsigned long *c, uint64_t *slowest)
{
        uint64_t t0 = now_us(), dt;
        int r = qwrite(disk, attr, val);

        dt = now_us() - t0;
        if (dt > *slowest)
                *slowest = dt;
        c[0]++;
        if (r == -EBUSY)
                c[1]++;
        else if (r == -ENOENT || r == -ENODEV)
                c[2]++;
        else if (r < 0) {
                c[3]++;
                if (c[3] <= 10)
                        fprintf(stderr, "rewriter: %s %s '%s': %s\n", disk, attr, val,
                                strerror(-r));
        }
}

static int rewriter(unsigned rate)
{
        unsigned long c[4] = { 0 };
        uint64_t slowest = 0, interval = 1000000 / rate, next = now_us();
        char cur[64];
        struct dirent *de;
        DIR *d;

        assert(rate >= 1 && rate <= 10000);
        signal(SIGTERM, on_term);
        signal(SIGINT, on_term);
        while (!rewriter_stop) {
                unsigned long before = c[0];

                d = opendir("/sys/block");
                if (!d)
                        return 1;
                while ((de = readdir(d)) && !rewriter_stop) {
                        if (de->d_name[0] == '.' || !strcmp(de->d_name, "vda"))
                                continue;
                        /* paced before the read: the value written is the one just read */
                        rewriter_pace(&next, interval);
                        if (!rewriter_stop && current_sched(de->d_name, cur, sizeof(cur)) == 0)
                                rewrite_one(de->d_name, "scheduler", cur, c, &slowest);
                        rewriter_pace(&next, interval);
                        if (!rewriter_stop && qread(de->d_name, "nr_requests", cur, sizeof(cur)) == 0)
                                rewrite_one(de->d_name, "nr_requests", cur, c, &slowest);
                }
                closedir(d);
                if (c[0] == before) /* no disk to write: wait an interval, not spin */
                        rewriter_pace(&next, interval);
        }
        printf("KT rewriter %lu %lu %lu %lu %llu\n", c[0], c[1], c[2], c[3],
               (unsigned long long)slowest);
        return 0;
}

static void on_alarm(int sig)
{
        (void)sig;
        printf("KT check hang FAIL a stress worker did not finish in time\n");
        fflush(stdout);
        _exit(1);
}

static int usage(void)
{
        fprintf(stderr, "usage: ktest setup | measure DISK0 DISK1 | stress SECONDS DISK0 DISK1 | "
                "addbench N | race-nrhwq SECONDS | rewrite [WRITES_PER_S]\n");
        return 2;
}

int main(int argc, char **argv)
{
        char d0[32], d1[32];

        setvbuf(stdout, NULL, _IOLBF, 0);
        signal(SIGALRM, on_alarm);

        if ((argc == 2 || argc == 3) && !strcmp(argv[1], "rewrite")) {
                char *end = NULL;
                unsigned long rate = argc == 3 ? strtoul(argv[2], &end, 10) : 20;

                if (argc == 3 && (end == argv[2] || *end || rate < 1 || rate > 10000))
                        return usage();
                return rewriter((unsigned)rate);
        }
        if (argc == 2 && !strcmp(argv[1], "setup")) {
                /* Two memory-backed single-queue disks for the tests and for dd. */
                if (nullb_create("t0", true, false, d0, sizeof(d0), NULL) < 0 ||
                    nullb_create("t1", true, false, d1, sizeof(d1), NULL) < 0) {
                        fprintf(stderr, "cannot create null_blk disks\n");
                        return 1;
                }
                printf("%s %s\n", d0, d1);
                return 0;
        }
        if (argc == 3 && !strcmp(argv[1], "addbench")) {
                test_add_bench(atoi(argv[2]));
        } else if (argc == 3 && !strcmp(argv[1], "race-nrhwq")) {
                race_nrhwq(atoi(argv[2]));
        } else if (argc == 4 && !strcmp(argv[1], "measure")) {
                test_same(argv[2]);
                test_changes(argv[2]);
                test_add();
                test_shared(6);
                /* verify turns it off where the kernel oopses in it (6.12, README) */
                if (!getenv("KTEST_NO_NRHWQ"))
                        test_nrhwq(8);
                else
                        printf("KT info nrhwq skipped\n");
                test_iops(argv[3], "mq-deadline", 3);
                test_iops(argv[3], "none", 3);
        } else if (argc == 5 && !strcmp(argv[1], "stress")) {
                char *disks[2] = { argv[3], argv[4] };
                char *end;
                long seconds = strtol(argv[2], &end, 10);

                if (*end || seconds < 1 || seconds > 600)
                        return usage();
                test_stress(disks, 2, (int)seconds);
        } else {
                return usage();
        }
        printf("KT result %s %d\n", argv[1], failures);
        return failures ? 1 : 0;
}
