/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * exectime: wall time from fork to the child's exit, for short programs whose time is mostly
 * exec. A shell adds its own fork and exec; this measures the program alone.
 *
 *   exectime [-n RUNS] [-w WARMUP] [-v] -- PROGRAM [ARG...] [::: PROGRAM [ARG...]]...
 *
 * Several programs (separated by ":::") are run in turn, one run each, RUNS times over, so
 * that they share the same machine load: on a shared, noisy machine, comparing two programs
 * measured one after the other compares two different loads.
 * Prints one line per program, in order:
 *   "runs=N median_us=... p10_us=... p90_us=... min_us=... mean_us=... cpu_us=... minflt=..."
 * (microseconds; cpu_us: the median user+system CPU time of the child, minflt: its median minor
 * page faults, both from wait4()). stdout and stderr of the children go to /dev/null unless -v;
 * a child that exits non-zero is an error (the measurement would not be of the intended work).
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

#define MAX_PROGS 8

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

typedef struct {
        char **argv;
        double *t, *cpu, *flt;
} Prog;

static int run_once(Prog *p, posix_spawn_file_actions_t *fa, int i) {
        double t0 = now_us();
        struct rusage ru;
        pid_t pid;
        int status, r;

        r = posix_spawn(&pid, p->argv[0], fa, NULL, p->argv, environ);
        if (r != 0) {
                fprintf(stderr, "exectime: %s: %s\n", p->argv[0], strerror(r));
                return -r;
        }
        while (wait4(pid, &status, 0, &ru) < 0)
                if (errno != EINTR)
                        return -errno;
        if (i >= 0) {
                p->t[i] = now_us() - t0;
                p->cpu[i] = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 +
                            ru.ru_stime.tv_usec;
                p->flt[i] = ru.ru_minflt;
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "exectime: %s exited with status %d\n", p->argv[0],
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                return -ECHILD;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        int runs = 200, warmup = 10, n = 0, c;
        posix_spawn_file_actions_t fa;
        bool verbose = false;
        Prog progs[MAX_PROGS] = {};

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
        if (optind >= argc || runs < 1 || runs > 1000000 || warmup < 0 || warmup > 1000000) {
                fprintf(stderr, "usage: exectime [-n RUNS] [-w WARMUP] [-v] -- PROGRAM [ARG...] [::: PROGRAM [ARG...]]...\n");
                return 64;
        }
        /* Split argv at ":::" (in place: each separator becomes the NULL ending a program's argv). */
        for (int i = optind; i < argc; i++) {
                if (i == optind || strcmp(argv[i - 1], ":::") == 0) {
                        if (n == MAX_PROGS || strcmp(argv[i], ":::") == 0) {
                                fprintf(stderr, "exectime: empty program or more than %d\n", MAX_PROGS);
                                return 64;
                        }
                        progs[n++].argv = argv + i;
                }
        }
        for (int i = optind; i < argc; i++)
                if (strcmp(argv[i], ":::") == 0)
                        argv[i] = NULL;
        for (int k = 0; k < n; k++) {
                if (!progs[k].argv[0]) {
                        fprintf(stderr, "exectime: empty program\n");
                        return 64;
                }
                progs[k].t = calloc(runs, sizeof(double));
                progs[k].cpu = calloc(runs, sizeof(double));
                progs[k].flt = calloc(runs, sizeof(double));
                if (!progs[k].t || !progs[k].cpu || !progs[k].flt)
                        return 1;
        }

        posix_spawn_file_actions_init(&fa);
        if (!verbose) {
                posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
                posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        }
        for (int i = -warmup; i < runs; i++)
                for (int k = 0; k < n; k++)
                        if (run_once(&progs[k], &fa, i) < 0) {
                                posix_spawn_file_actions_destroy(&fa);
                                return 1;
                        }
        posix_spawn_file_actions_destroy(&fa);

        for (int k = 0; k < n; k++) {
                Prog *p = &progs[k];
                double sum = 0;

                for (int i = 0; i < runs; i++)
                        sum += p->t[i];
                qsort(p->t, runs, sizeof(double), cmp_double);
                qsort(p->cpu, runs, sizeof(double), cmp_double);
                qsort(p->flt, runs, sizeof(double), cmp_double);
                printf("runs=%d median_us=%.0f p10_us=%.0f p90_us=%.0f min_us=%.0f mean_us=%.0f cpu_us=%.0f "
                       "minflt=%.0f\n", runs, pct(p->t, runs, 0.5), pct(p->t, runs, 0.1),
                       pct(p->t, runs, 0.9), p->t[0], sum / runs, pct(p->cpu, runs, 0.5),
                       pct(p->flt, runs, 0.5));
                free(p->t);
                free(p->cpu);
                free(p->flt);
        }
        return 0;
}
