/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * exectime: wall time from fork to the child's exit, for short programs whose time is mostly
 * exec. A shell adds its own fork and exec; this measures the program alone.
 *
 *   exectime [-n RUNS] [-w WARMUP] [-q] -- PROGRAM [ARG...]
 *
 * Prints "runs=N median_us=... p10_us=... p90_us=... min_us=... mean_us=... cpu_us=... minflt=..."
 * (microseconds; cpu_us: the median user+system CPU time of the child, minflt: its median minor
 * page faults, both from wait4()).
 * The child's stdout and stderr go to /dev/null unless -v is given; a run whose child exits
 * non-zero is an error (the measurement would not be of the intended work).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static double now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double pct(const double *v, int n, double p) {
        double idx = p * (n - 1);
        int lo = (int) idx;

        return lo + 1 < n ? v[lo] + (v[lo + 1] - v[lo]) * (idx - lo) : v[lo];
}

int main(int argc, char *argv[]) {
        int runs = 200, warmup = 10, c;
        bool verbose = false;
        posix_spawn_file_actions_t fa;
        double *t, *cpu, *flt, sum = 0;

        while ((c = getopt(argc, argv, "+n:w:v")) >= 0)
                switch (c) {
                case 'n':
                        runs = atoi(optarg);
                        break;
                case 'w':
                        warmup = atoi(optarg);
                        break;
                case 'v':
                        verbose = true;
                        break;
                default:
                        return 64;
                }
        if (optind >= argc || runs < 1 || runs > 1000000 || warmup < 0) {
                fprintf(stderr, "usage: exectime [-n RUNS] [-w WARMUP] [-v] -- PROGRAM [ARG...]\n");
                return 64;
        }
        t = calloc(runs, sizeof *t);
        cpu = calloc(runs, sizeof *cpu);
        flt = calloc(runs, sizeof *flt);
        if (!t || !cpu || !flt)
                return 1;
        posix_spawn_file_actions_init(&fa);
        if (!verbose) {
                posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
                posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        }
        for (int i = -warmup; i < runs; i++) {
                double t0 = now_us();
                struct rusage ru;
                pid_t pid;
                int status, r;

                r = posix_spawn(&pid, argv[optind], &fa, NULL, argv + optind, environ);
                if (r != 0) {
                        fprintf(stderr, "exectime: %s: %s\n", argv[optind], strerror(r));
                        return 1;
                }
                while (wait4(pid, &status, 0, &ru) < 0)
                        if (errno != EINTR)
                                return 1;
                if (i >= 0) {
                        t[i] = now_us() - t0;
                        cpu[i] = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec +
                                 ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
                        flt[i] = ru.ru_minflt;
                }
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        fprintf(stderr, "exectime: %s exited with status %d\n", argv[optind],
                                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                        return 1;
                }
        }
        for (int i = 0; i < runs; i++)
                sum += t[i];
        qsort(t, runs, sizeof *t, cmp_double);
        qsort(cpu, runs, sizeof *cpu, cmp_double);
        qsort(flt, runs, sizeof *flt, cmp_double);
        printf("runs=%d median_us=%.0f p10_us=%.0f p90_us=%.0f min_us=%.0f mean_us=%.0f cpu_us=%.0f "
               "minflt=%.0f\n", runs, pct(t, runs, 0.5), pct(t, runs, 0.1), pct(t, runs, 0.9), t[0],
               sum / runs, pct(cpu, runs, 0.5), pct(flt, runs, 0.5));
        free(t);
        free(cpu);
        free(flt);
        return 0;
}
