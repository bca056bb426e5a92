/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iocost-cost: what one unchanged disk costs, two ways, in turn so both share the same load:
 *   write:   a same-value write to io.cost.qos ("MAJ:MIN rlat=<the current rlat>"), as a blind
 *            writer (systemd-iocost) does on every event: open, write, close;
 *   compare: what iosched does instead: read io.cost.qos and io.cost.model whole, find and parse
 *            the disk's lines with iosched's own parser (iocost_find()) and compare every value
 *            with the wanted one (taken from the first read): open, read, close, parse, compare.
 *
 *   iocost-cost CGROUP2_ROOT MAJ:MIN [ROUNDS]      (ROUNDS: default 20)
 *
 * Prints, in microseconds of wall time (CLOCK_MONOTONIC):
 *   "write median_us=... min_us=... max_us=..."
 *   "compare median_us=... min_us=... max_us=..."
 *   "ratio write/compare (medians)=..."
 * Exit 1 when a value ever differs from the first read (the disk changed under the measure) or
 * a write fails. Linked statically like iosched-apply: it runs in busybox initramfs guests.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attr.h"
#include "iocost.h"

#define MAX_ROUNDS 1000

static double now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static int read_all(const char *path, char *buf, size_t size) {
        size_t n = 0;
        ssize_t k;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        while (n + 1 < size && (k = read(fd, buf + n, size - 1 - n)) > 0)
                n += (size_t) k;
        close(fd);
        buf[n] = '\0';
        return 0;
}

/* Read, parse and compare one file: 0 when the disk's values are @want's, 1 when not. */
static int compare_file(const char *path, AttrFile f, const char *devnum, const IocostState *want) {
        char buf[65536];
        IocostState st = {};
        int r;

        r = read_all(path, buf, sizeof(buf));
        if (r < 0)
                return r;
        r = iocost_find(f, buf, devnum, &st);
        if (r >= 0)
                for (int i = 0; i < _ATTR_MAX; i++)
                        if (attr_get(i)->file == f && st.num[i] != want->num[i])
                                r = 1;
        iocost_state_done(&st);
        return r;
}

/* Sorts @v; prints and returns its median. */
static double print_stats(const char *what, double *v, int n) {
        double m;

        qsort(v, n, sizeof(*v), cmp_double);
        m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        printf("%s median_us=%.1f min_us=%.1f max_us=%.1f\n", what, m, v[0], v[n - 1]);
        return m;
}

int main(int argc, char **argv) {
        static double w[MAX_ROUNDS], c[MAX_ROUNDS];
        double mw, mc;
        char qos[4096], model[4096], buf[65536], line[128];
        IocostState want_qos = {}, want_model = {};
        const char *rlat;
        int rounds = argc > 3 ? atoi(argv[3]) : 20, len;

        if (argc < 3 || rounds < 1 || rounds > MAX_ROUNDS) {
                fprintf(stderr, "usage: iocost-cost CGROUP2_ROOT MAJ:MIN [ROUNDS]\n");
                return 2;
        }
        snprintf(qos, sizeof(qos), "%s/io.cost.qos", argv[1]);
        snprintf(model, sizeof(model), "%s/io.cost.model", argv[1]);
        if (read_all(qos, buf, sizeof(buf)) < 0 || iocost_find(ATTR_FILE_IOCOST_QOS, buf, argv[2], &want_qos) < 0 ||
            read_all(model, buf, sizeof(buf)) < 0 ||
            iocost_find(ATTR_FILE_IOCOST_MODEL, buf, argv[2], &want_model) < 0) {
                fprintf(stderr, "iocost-cost: no parsable io.cost.qos and io.cost.model line for %s\n", argv[2]);
                return 1;
        }
        rlat = strstr(want_qos.raw, " rlat=");
        if (!rlat) {
                fprintf(stderr, "iocost-cost: no rlat in '%s'\n", want_qos.raw);
                return 1;
        }
        len = snprintf(line, sizeof(line), "%s rlat=%ld", argv[2], strtol(rlat + 6, NULL, 10));

        for (int i = 0; i < rounds; i++) {
                double t0 = now_us();
                int fd = open(qos, O_WRONLY | O_CLOEXEC);

                if (fd < 0 || write(fd, line, len) != len) {
                        fprintf(stderr, "iocost-cost: writing '%s' to %s: %m\n", line, qos);
                        return 1;
                }
                close(fd);
                w[i] = now_us() - t0;

                t0 = now_us();
                if (compare_file(qos, ATTR_FILE_IOCOST_QOS, argv[2], &want_qos) != 0 ||
                    compare_file(model, ATTR_FILE_IOCOST_MODEL, argv[2], &want_model) != 0) {
                        fprintf(stderr, "iocost-cost: %s changed under the measure\n", argv[2]);
                        return 1;
                }
                c[i] = now_us() - t0;
        }
        printf("line '%s', %d rounds\n", line, rounds);
        mw = print_stats("write", w, rounds);
        mc = print_stats("compare", c, rounds);
        printf("ratio write/compare (medians)=%.1f\n", mw / mc);
        iocost_state_done(&want_qos);
        iocost_state_done(&want_model);
        return 0;
}
