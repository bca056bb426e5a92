/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GetManagedObjects in-process: the daemon's manager on a fake kernel of N loop devices at
 * their policy (a scheduler without tunables, read_ahead_kb: bench/scale's policy), its bus on
 * one end of a socket pair, a client on the other, in one process and thread (no dbus-daemon).
 * Prints "objects elements build_ms walk_ms": the D-Bus elements (containers and values) of
 * one object's entry, and the medians, over ROUNDS calls, of the CPU time from the
 * call until its reply is in (the daemon building and sending it, the client receiving it) and
 * of the client walking it. CPU time of the one thread: what other processes do on the machine
 * does not count.
 *
 *   bench-objects N [ROUNDS]
 */
#include <time.h>

#include "bus-names.h"
#include "daemon-world.h"
#include "tests.h"
#include "util.h"

static double ms_since(const struct timespec *t0) {
        struct timespec t;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

/* The elements of the rest of the current container: each value and each container, entered. */
static unsigned count_elements(sd_bus_message *m) {
        const char *contents;
        unsigned n = 0;
        char type;

        while (sd_bus_message_peek_type(m, &type, &contents) > 0) {
                n++;
                if (strchr("arve", type)) {
                        assert_true(sd_bus_message_enter_container(m, type, contents) > 0);
                        n += count_elements(m);
                        assert_true(sd_bus_message_exit_container(m) > 0);
                } else
                        assert_true(sd_bus_message_skip(m, (char[]) { type, 0 }) > 0);
        }
        return n;
}

/* The elements of the first object's entry {oa{sa{sv}}} of a GetManagedObjects reply. */
static unsigned elements_per_object(sd_bus_message *reply) {
        unsigned n;

        assert_true(sd_bus_message_rewind(reply, true) > 0);
        assert_true(sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}") > 0);
        assert_true(sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}") > 0);
        n = 1 + count_elements(reply);
        assert_true(sd_bus_message_rewind(reply, true) > 0);
        return n;
}

static void bench(unsigned n, unsigned rounds) {
        World *w = world_ran(n, "scheduler = none\nread_ahead_kb = 128");
        double build[100], walk[100];
        unsigned elements = 0;
        long objects = 0;

        world_connect_bus(w);
        for (unsigned i = 0; i < rounds; i++) {
                sd_bus_message *reply;
                struct timespec t0;
                int r;

                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
                reply = world_call(w, BUS_MANAGER_PATH, "org.freedesktop.DBus.ObjectManager",
                                   "GetManagedObjects", NULL);
                build[i] = ms_since(&t0);
                if (i == 0)
                        elements = elements_per_object(reply);
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
                objects = 0;
                r = sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}");
                while (r > 0 && (r = sd_bus_message_skip(reply, "{oa{sa{sv}}}")) > 0)
                        objects++;
                walk[i] = ms_since(&t0);
                sd_bus_message_unref(reply);
                assert_true(r >= 0);
        }
        qsort(build, rounds, sizeof(double), cmp_double);
        qsort(walk, rounds, sizeof(double), cmp_double);
        printf("%ld %u %.2f %.2f\n", objects, elements, build[(rounds - 1) / 2], walk[(rounds - 1) / 2]);
        world_free(w);
}

int main(int argc, char *argv[]) {
        unsigned n = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 4096;
        unsigned rounds = argc > 2 ? (unsigned) strtoul(argv[2], NULL, 10) : 5;

        if (n < 1 || n > 100000 || rounds < 1 || rounds > 100) {
                fprintf(stderr, "usage: bench-objects N [ROUNDS (1-100)]\n");
                return 64;
        }
        bench(n, rounds);
        return 0;
}
