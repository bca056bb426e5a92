/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loopctl: create and remove the loop devices of the root tests and the benchmarks
 * (tests/lib/common.sh), and time hotplug storms (bench/storm).
 *
 *   loopctl add RECORD DIR COUNT SIZE_MB
 *       Create COUNT new loop devices (LOOP_CTL_ADD at indexes that do not exist yet, from
 *       LOOPCTL_FIRST, default 4000), each backed by a new sparse file DIR/loopN.img.
 *       Each name is appended to RECORD before it is configured, so that a cleanup trap finds
 *       it even if we die half-way. Prints the names, one per line.
 *   loopctl new RECORD INDEX [COUNT]
 *       Create loopINDEX .. loopINDEX+COUNT-1 (default 1) with nothing attached (disks of size
 *       0: their "add" uevents come now, in a burst); fails at the first that exists. Each is
 *       recorded like the above.
 *   loopctl storm RECORD DIR COUNT SIZE_MB [--events N] [--attr ATTR=VALUE] [--timeout S]
 *       The same as add, as fast as possible, then wait until udev has processed N events per
 *       new disk (a udev monitor opened before the first add) and/or every new disk's
 *       queue/ATTR reads VALUE (scheduler: the bracketed one). Prints
 *       "created_ms=... events_ms=... policy_ms=..." measured from just before the first add,
 *       then "creator_run_ms=... creator_wait_ms=...": of the creation, the time this process
 *       ran and the time it was runnable but waiting for a CPU (/proc/thread-self/schedstat);
 *       the rest it was blocked (in the kernel: locks, waiting for kdevtmpfs).
 *   loopctl del DIR NAME...
 *       Detach and remove loop devices, but only those whose backing file is in DIR (ours) or
 *       that have none (an index we created): each is removed right after its detach, and
 *       those still busy are tried again together until they go.
 *
 * Only devices whose backing file lies in DIR are ever detached, so a device that someone
 * else's LOOP_CTL_GET_FREE grabbed in the instant between our add and configure is left alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <libudev.h>
#include <linux/loop.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVS 4096

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

/* This thread's time on a CPU and waiting on a run queue, ms (0 if unknown). */
static void sched_times(double *ret_run_ms, double *ret_wait_ms) {
        unsigned long long run = 0, wait = 0;
        FILE *f = fopen("/proc/thread-self/schedstat", "re");

        if (f) {
                if (fscanf(f, "%llu %llu", &run, &wait) != 2)
                        run = wait = 0;
                fclose(f);
        }
        *ret_run_ms = run / 1e6;
        *ret_wait_ms = wait / 1e6;
}

/* The first line of a small file, without its newline. */
static int read_small(const char *path, char *buf, size_t size) {
        FILE *f = fopen(path, "re");

        if (!f)
                return -errno;
        if (!fgets(buf, (int) size, f))
                buf[0] = 0;
        fclose(f);
        buf[strcspn(buf, "\n")] = 0;
        return 0;
}

/* Create one loop device at a free index >= *next, back it with a new file, configure it. */
static int loop_add_one(int ctl, FILE *record, const char *dir, long long size_mb, int *next,
                        char *ret_name, size_t name_size) {
        char img[4096], dev[64];
        struct loop_config cfg = {};
        int idx, fd, lfd = -1, r;

        for (idx = *next;; idx++) {
                if (idx >= (1 << 20))
                        return -ENOSPC;
                if (ioctl(ctl, LOOP_CTL_ADD, idx) >= 0)
                        break;
                if (errno != EEXIST)
                        return -errno;
        }
        *next = idx + 1;
        snprintf(ret_name, name_size, "loop%d", idx);
        fprintf(record, "%s\n", ret_name);
        fflush(record);

        snprintf(img, sizeof img, "%s/%s.img", dir, ret_name);
        fd = open(img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, size_mb << 20) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        snprintf(dev, sizeof dev, "/dev/%s", ret_name);
        for (int i = 0; i < 200 && lfd < 0; i++) {
                lfd = open(dev, O_RDWR | O_CLOEXEC);
                if (lfd < 0 && errno != ENOENT) {
                        r = -errno;
                        close(fd);
                        return r;
                }
                if (lfd < 0)
                        sleep_ms(5);
        }
        if (lfd < 0) {
                close(fd);
                return -ENOENT;
        }
        cfg.fd = fd;
        /* Informational only (losetup shows it); the kernel keeps the path of the fd. */
        snprintf((char *) cfg.info.lo_file_name, LO_NAME_SIZE, "%.*s", LO_NAME_SIZE - 1, img);
        r = ioctl(lfd, LOOP_CONFIGURE, &cfg) < 0 ? -errno : 0;
        close(lfd);
        close(fd);
        return r;
}

static int parse_count(const char *s, long long max, long long *ret) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno || end == s || *end || v < 0 || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int create_many(const char *record_path, const char *dir, long long count, long long size_mb,
                       char (*names)[32], bool print) {
        const char *first = getenv("LOOPCTL_FIRST");
        int next = 4000, ctl, r = 0;
        long long v;
        FILE *record;

        /* Loop minors have 20 bits. A bad value is an error, not 4000: the caller asked for
         * these numbers (its config names them). */
        if (first) {
                if (parse_count(first, (1 << 20) - 1, &v) < 0 || v + count > (1 << 20)) {
                        fprintf(stderr, "loopctl: LOOPCTL_FIRST=%s: not a loop number with %lld after it\n",
                                first, count);
                        return -EINVAL;
                }
                next = (int) v;
        }
        record = fopen(record_path, "ae");
        if (!record) {
                fprintf(stderr, "loopctl: %s: %m\n", record_path);
                return -errno;
        }
        ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        if (ctl < 0) {
                r = -errno;
                fprintf(stderr, "loopctl: /dev/loop-control: %m\n");
                fclose(record);
                return r;
        }
        for (long long i = 0; i < count; i++) {
                r = loop_add_one(ctl, record, dir, size_mb, &next, names[i], sizeof names[i]);
                if (r < 0) {
                        fprintf(stderr, "loopctl: creating loop device %lld: %s\n", i, strerror(-r));
                        break;
                }
                if (print) {
                        puts(names[i]);
                        fflush(stdout);
                }
        }
        close(ctl);
        fclose(record);
        return r;
}

static bool attr_matches(const char *name, const char *attr, const char *value) {
        char path[512], buf[512], *p, *q;

        snprintf(path, sizeof path, "/sys/block/%.32s/queue/%.200s", name, attr);
        if (read_small(path, buf, sizeof buf) < 0)
                return false;
        if (strcmp(attr, "scheduler") == 0) {
                p = strchr(buf, '[');
                q = p ? strchr(p, ']') : NULL;
                if (!p || !q)
                        return strcmp(buf, value) == 0;
                *q = 0;
                return strcmp(p + 1, value) == 0;
        }
        return strcmp(buf, value) == 0;
}

static int find_name(char (*names)[32], long long count, const char *name) {
        for (long long i = 0; i < count; i++)
                if (strcmp(names[i], name) == 0)
                        return (int) i;
        return -1;
}

static int do_storm(int argc, char *argv[]) {
        const char *attr = NULL, *value = NULL;
        long long count, size_mb, events = 0, timeout_s = 120;
        static char names[MAX_DEVS][32];
        static int seen[MAX_DEVS];
        static bool at_policy[MAX_DEVS];
        struct udev *udev = NULL;
        struct udev_monitor *mon = NULL;
        double t0, t_created, t_events = -1, t_policy = -1, deadline, run0, wait0, run1, wait1;
        long long events_left, policy_left;
        char attrbuf[256];
        int r;

        if (argc < 6 || parse_count(argv[4], MAX_DEVS, &count) < 0 ||
            parse_count(argv[5], 1 << 20, &size_mb) < 0) {
                fprintf(stderr, "loopctl storm: usage: RECORD DIR COUNT SIZE_MB [--events N] "
                                "[--attr ATTR=VALUE] [--timeout S]\n");
                return 64;
        }
        for (int i = 6; i < argc; i++) {
                if (strcmp(argv[i], "--events") == 0 && i + 1 < argc) {
                        if (parse_count(argv[++i], 16, &events) < 0)
                                return 64;
                } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
                        if (parse_count(argv[++i], 3600, &timeout_s) < 0)
                                return 64;
                } else if (strcmp(argv[i], "--attr") == 0 && i + 1 < argc) {
                        snprintf(attrbuf, sizeof attrbuf, "%s", argv[++i]);
                        value = strchr(attrbuf, '=');
                        if (!value || strchr(attrbuf, '/') || strstr(attrbuf, ".."))
                                return 64;
                        *(char *) value++ = 0;
                        attr = attrbuf;
                } else {
                        fprintf(stderr, "loopctl storm: unknown argument %s\n", argv[i]);
                        return 64;
                }
        }

        if (events > 0) {
                udev = udev_new();
                mon = udev ? udev_monitor_new_from_netlink(udev, "udev") : NULL;
                if (!mon || udev_monitor_filter_add_match_subsystem_devtype(mon, "block", "disk") < 0 ||
                    udev_monitor_set_receive_buffer_size(mon, 128 << 20) < 0 ||
                    udev_monitor_enable_receiving(mon) < 0) {
                        fprintf(stderr, "loopctl storm: cannot listen to udev events\n");
                        return 1;
                }
        }

        sched_times(&run0, &wait0);
        t0 = now_ms();
        r = create_many(argv[2], argv[3], count, size_mb, names, false);
        t_created = now_ms() - t0;
        sched_times(&run1, &wait1);
        if (r < 0)
                return 1;

        events_left = events > 0 ? count : 0;
        policy_left = attr ? count : 0;
        deadline = t0 + timeout_s * 1e3;
        while ((events_left > 0 || policy_left > 0) && now_ms() < deadline) {
                if (events_left > 0) {
                        struct pollfd pfd = { .fd = udev_monitor_get_fd(mon), .events = POLLIN };

                        if (poll(&pfd, 1, policy_left > 0 ? 5 : 100) > 0) {
                                struct udev_device *d;

                                while ((d = udev_monitor_receive_device(mon))) {
                                        int i = find_name(names, count, udev_device_get_sysname(d));

                                        if (i >= 0 && ++seen[i] == events && --events_left == 0)
                                                t_events = now_ms() - t0;
                                        udev_device_unref(d);
                                }
                        }
                } else
                        sleep_ms(5);
                if (policy_left > 0) {
                        for (long long i = 0; i < count; i++)
                                if (!at_policy[i] && attr_matches(names[i], attr, value)) {
                                        at_policy[i] = true;
                                        policy_left--;
                                }
                        if (policy_left == 0)
                                t_policy = now_ms() - t0;
                }
        }
        printf("created_ms=%.1f events_ms=%.1f policy_ms=%.1f creator_run_ms=%.1f creator_wait_ms=%.1f\n",
               t_created, t_events, t_policy, run1 - run0, wait1 - wait0);
        udev_monitor_unref(mon);
        udev_unref(udev);
        if (events_left > 0 || policy_left > 0) {
                fprintf(stderr, "loopctl storm: timed out: %lld disks without all events, %lld not at "
                                "policy\n", events_left, policy_left);
                return 2;
        }
        return 0;
}

/* Is loop device NAME's backing file in DIR? -1 if it has none (nothing attached). */
static int backed_by(const char *name, const char *dir) {
        char path[512], buf[4096];
        size_t dlen = strlen(dir);

        snprintf(path, sizeof path, "/sys/block/%s/loop/backing_file", name);
        if (read_small(path, buf, sizeof buf) < 0)
                return -1;
        return strncmp(buf, dir, dlen) == 0 && buf[dlen] == '/';
}

static int loop_index(const char *name) {
        long long v;

        if (strncmp(name, "loop", 4) != 0 || !name[4] || strspn(name + 4, "0123456789") != strlen(name + 4) ||
            parse_count(name + 4, (1 << 20) - 1, &v) < 0)
                return -EINVAL;
        return (int) v;
}

static int do_del(const char *dir, int n, char *names[]) {
        char path[512], img[4096];
        int ctl, left = 0, *idx;

        ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        if (ctl < 0) {
                fprintf(stderr, "loopctl: /dev/loop-control: %m\n");
                return 1;
        }
        idx = calloc(n, sizeof *idx);
        if (!idx) {
                close(ctl);
                return 1;
        }
        for (int i = 0; i < n; i++) {
                int b;

                idx[i] = loop_index(names[i]);
                if (idx[i] < 0) {
                        fprintf(stderr, "loopctl del: invalid name %s\n", names[i]);
                        continue;
                }
                snprintf(img, sizeof img, "%s/%s.img", dir, names[i]);
                b = backed_by(names[i], dir);
                if (b == 0) {
                        /* Bound to someone else's file: not ours (any more). */
                        unlink(img);
                        idx[i] = -1;
                        continue;
                }
                if (b > 0) {
                        snprintf(path, sizeof path, "/dev/%s", names[i]);
                        int fd = open(path, O_RDONLY | O_CLOEXEC);

                        if (fd >= 0) {
                                (void) ioctl(fd, LOOP_CLR_FD, 0);
                                close(fd);
                        }
                }
                unlink(img);
                /* At once: a detached disk that still exists changes under whoever uses it. */
                if (ioctl(ctl, LOOP_CTL_REMOVE, idx[i]) >= 0 || errno != EBUSY)
                        idx[i] = -1;
                else
                        left++;
        }
        /* A detach completes when the last opener (often udev's blkid) closes the device. */
        for (int round = 0; round < 1000 && left > 0; round++) {
                if (round > 0)
                        sleep_ms(10);
                for (int i = 0; i < n; i++) {
                        if (idx[i] < 0)
                                continue;
                        if (ioctl(ctl, LOOP_CTL_REMOVE, idx[i]) < 0 && errno == EBUSY &&
                            backed_by(names[i], dir) != 0)
                                continue;       /* still busy, and not someone else's now */
                        idx[i] = -1;
                        left--;
                }
        }
        for (int i = 0; i < n; i++)
                if (idx[i] >= 0)
                        fprintf(stderr, "loopctl del: cannot remove %s: busy\n", names[i]);
        free(idx);
        close(ctl);
        return left > 0;
}

static int do_new(const char *record_path, const char *index, const char *count_arg) {
        long long first, count = 1;
        FILE *record;
        int ctl, r = 0;

        if (parse_count(index, (1 << 20) - 1, &first) < 0 ||
            (count_arg && parse_count(count_arg, MAX_DEVS, &count) < 0)) {
                fprintf(stderr, "loopctl new: usage: RECORD INDEX [COUNT]\n");
                return 64;
        }
        record = fopen(record_path, "ae");
        if (!record) {
                fprintf(stderr, "loopctl: %s: %m\n", record_path);
                return 1;
        }
        ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        if (ctl < 0) {
                fprintf(stderr, "loopctl: /dev/loop-control: %m\n");
                fclose(record);
                return 1;
        }
        for (long long i = first; i < first + count; i++) {
                if (ioctl(ctl, LOOP_CTL_ADD, (int) i) < 0) {
                        r = -errno;
                        fprintf(stderr, "loopctl new: cannot create loop%lld: %s\n", i, strerror(-r));
                        break;
                }
                fprintf(record, "loop%lld\n", i);
                fflush(record);
        }
        close(ctl);
        fclose(record);
        return r < 0;
}

int main(int argc, char *argv[]) {
        static char names[MAX_DEVS][32];
        long long count, size_mb;

        if (argc >= 2 && strcmp(argv[1], "add") == 0) {
                if (argc != 6 || parse_count(argv[4], MAX_DEVS, &count) < 0 ||
                    parse_count(argv[5], 1 << 20, &size_mb) < 0) {
                        fprintf(stderr, "loopctl add: usage: RECORD DIR COUNT SIZE_MB\n");
                        return 64;
                }
                return create_many(argv[2], argv[3], count, size_mb, names, true) < 0;
        }
        if ((argc == 4 || argc == 5) && strcmp(argv[1], "new") == 0)
                return do_new(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
        if (argc >= 2 && strcmp(argv[1], "storm") == 0)
                return do_storm(argc, argv);
        if (argc >= 3 && strcmp(argv[1], "del") == 0)
                return do_del(argv[2], argc - 3, argv + 3);
        fprintf(stderr, "usage: loopctl add|new|storm|del ...\n");
        return 64;
}
