/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * busprobe: measure ioschedd from a D-Bus client, over one connection (a busctl per call would
 * measure busctl's exec instead). The bus is the system bus, or $DBUS_SYSTEM_BUS_ADDRESS.
 *
 *   busprobe reads PERIOD_MS OUTFILE
 *       Until SIGTERM/SIGINT: every PERIOD_MS read the Manager's WritesDone property; append
 *       each call's latency in microseconds to OUTFILE ("-1" for a failed call), a line as
 *       each call returns.
 *   busprobe wait-applied SINCE_US TIMEOUT_S DISK...
 *       Poll (every 5 ms) until every DISK's LastApplied (CLOCK_REALTIME µs) is >= SINCE_US;
 *       print the latest of them minus SINCE_US, in ms. Exit 2 on timeout.
 *   busprobe apply DISK [COUNT PERIOD_MS]
 *       Call Manager.Apply(DISK) COUNT times (default 1), PERIOD_MS apart; print the count.
 *   busprobe now
 *       Print CLOCK_REALTIME in µs (the clock of LastApplied).
 *   busprobe wait-name SINCE_US TIMEOUT_S
 *       Poll (every 1 ms) until org.iosched1 has an owner; print the time since SINCE_US
 *       (CLOCK_REALTIME µs), in ms. Exit 2 on timeout.
 *   busprobe managed-objects COUNT
 *       Call ObjectManager.GetManagedObjects COUNT times; print "objects median_ms max_ms
 *       arrived_ms": the number of objects in the last reply, the call times (call to reply
 *       walked) and the median time to the reply's arrival (the daemon's and the bus's share;
 *       the rest is the client's library walking it).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bus-names.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        stop = 1;
}

static uint64_t now_us(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

static int open_bus(sd_bus **ret) {
        int r = sd_bus_open_system(ret);

        if (r < 0)
                fprintf(stderr, "busprobe: cannot connect to the system bus: %s\n", strerror(-r));
        return r;
}

/* Loop device names need no escaping in object paths; anything else is refused. */
static int disk_path(const char *disk, char *buf, size_t size) {
        if (!*disk || strspn(disk, "abcdefghijklmnopqrstuvwxyz0123456789") != strlen(disk))
                return -EINVAL;
        snprintf(buf, size, BUS_DISK_PATH_PREFIX "/%s", disk);
        return 0;
}

static int do_reads(long period_ms, const char *outfile) {
        sd_bus *bus = NULL;
        FILE *out;
        int r;

        if (open_bus(&bus) < 0)
                return 1;
        out = fopen(outfile, "ae");
        if (!out)
                return 1;
        /* A line per read as it is made: bench/storm counts them while the probe runs. */
        setvbuf(out, NULL, _IOLBF, 0);
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        while (!stop) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                uint64_t t0 = now_us(CLOCK_MONOTONIC), value;

                r = sd_bus_get_property_trivial(bus, BUS_SERVICE, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE,
                                                bus_property_name(BUS_MANAGER_WRITES_DONE),
                                                &error, 't', &value);
                /* Our own SIGTERM cut the last call short: not an answer the daemon failed to give. */
                if (r == -EINTR && stop) {
                        sd_bus_error_free(&error);
                        break;
                }
                fprintf(out, "%lld\n", r < 0 ? -1LL : (long long) (now_us(CLOCK_MONOTONIC) - t0));
                if (r < 0)
                        fprintf(stderr, "busprobe: reading WritesDone: %s\n", error.message ?: strerror(-r));
                sd_bus_error_free(&error);
                if (period_ms > 0)
                        sleep_ms(period_ms);
        }
        fclose(out);
        sd_bus_unref(bus);
        return 0;
}

static int do_wait_applied(uint64_t since, long timeout_s, char **disks, int n) {
        uint64_t deadline = now_us(CLOCK_MONOTONIC) + (uint64_t) timeout_s * 1000000, latest = 0;
        bool *done = calloc(n, sizeof *done);
        sd_bus *bus = NULL;
        int left = n, r;

        if (!done || open_bus(&bus) < 0)
                return 1;
        while (left > 0 && now_us(CLOCK_MONOTONIC) < deadline) {
                for (int i = 0; i < n; i++) {
                        sd_bus_error error = SD_BUS_ERROR_NULL;
                        sd_bus_message *reply = NULL;
                        char path[256];
                        uint64_t t;

                        if (done[i])
                                continue;
                        if (disk_path(disks[i], path, sizeof path) < 0)
                                return 1;
                        r = sd_bus_get_property(bus, BUS_SERVICE, path, BUS_DISK_INTERFACE,
                                                bus_property_name(BUS_DISK_LAST_APPLIED), &error,
                                                &reply, "t");
                        if (r >= 0 && sd_bus_message_read(reply, "t", &t) >= 0 && t >= since) {
                                done[i] = true;
                                left--;
                                if (t > latest)
                                        latest = t;
                        }
                        sd_bus_message_unref(reply);
                        sd_bus_error_free(&error);
                }
                if (left > 0)
                        sleep_ms(5);
        }
        if (left > 0) {
                fprintf(stderr, "busprobe: %d disks not applied since %llu\n", left, (unsigned long long) since);
                return 2;
        }
        printf("%.1f\n", (latest - since) / 1000.0);
        free(done);
        sd_bus_unref(bus);
        return 0;
}

static int do_apply(const char *disk, long count, long period_ms) {
        sd_bus *bus = NULL;
        long n = 0;
        int r;

        if (open_bus(&bus) < 0)
                return 1;
        signal(SIGTERM, on_signal);
        for (; n < count && !stop; n++) {
                sd_bus_error error = SD_BUS_ERROR_NULL;

                r = sd_bus_call_method(bus, BUS_SERVICE, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE, BUS_METHOD_APPLY,
                                       &error, NULL, "s", disk);
                if (r < 0) {
                        fprintf(stderr, "busprobe: Apply(%s): %s\n", disk, error.message ?: strerror(-r));
                        sd_bus_error_free(&error);
                        return 1;
                }
                if (period_ms > 0 && n + 1 < count)
                        sleep_ms(period_ms);
        }
        printf("%ld\n", n);
        sd_bus_unref(bus);
        return 0;
}

static int do_wait_name(uint64_t since, long timeout_s) {
        sd_bus *bus = NULL;
        uint64_t end = now_us(CLOCK_MONOTONIC) + (uint64_t) timeout_s * 1000000;
        int r;

        r = open_bus(&bus);
        if (r < 0)
                return 1;
        while (now_us(CLOCK_MONOTONIC) < end) {
                sd_bus_message *reply = NULL;
                int has = 0;

                r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                       "org.freedesktop.DBus", "NameHasOwner", NULL, &reply, "s",
                                       BUS_SERVICE);
                if (r >= 0)
                        r = sd_bus_message_read(reply, "b", &has);
                sd_bus_message_unref(reply);
                if (r >= 0 && has) {
                        printf("%.1f\n", (double) (now_us(CLOCK_REALTIME) - since) / 1000);
                        sd_bus_unref(bus);
                        return 0;
                }
                sleep_ms(1);
        }
        sd_bus_unref(bus);
        fprintf(stderr, "busprobe: %s has no owner after %ld s\n", BUS_SERVICE, timeout_s);
        return 2;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static int do_managed_objects(long count) {
        double ms[1000], arrived[1000];
        sd_bus *bus = NULL;
        long objects = 0;
        int r;

        if (count < 1 || count > 1000)
                return 64;
        r = open_bus(&bus);
        if (r < 0)
                return 1;
        for (long i = 0; i < count; i++) {
                sd_bus_error error = SD_BUS_ERROR_NULL;
                sd_bus_message *reply = NULL;
                uint64_t t0 = now_us(CLOCK_MONOTONIC);

                r = sd_bus_call_method(bus, BUS_SERVICE, BUS_MANAGER_PATH, "org.freedesktop.DBus.ObjectManager",
                                       "GetManagedObjects", &error, &reply, NULL);
                arrived[i] = (double) (now_us(CLOCK_MONOTONIC) - t0) / 1000;
                if (r < 0) {
                        fprintf(stderr, "busprobe: GetManagedObjects: %s\n", error.message ?: strerror(-r));
                        sd_bus_error_free(&error);
                        sd_bus_unref(bus);
                        return 1;
                }
                /* Walk the whole reply, as a client that uses it must. */
                objects = 0;
                r = sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}");
                while (r > 0 && (r = sd_bus_message_skip(reply, "{oa{sa{sv}}}")) > 0)
                        objects++;
                sd_bus_message_unref(reply);
                if (r < 0) {
                        fprintf(stderr, "busprobe: cannot parse GetManagedObjects: %s\n", strerror(-r));
                        sd_bus_unref(bus);
                        return 1;
                }
                ms[i] = (double) (now_us(CLOCK_MONOTONIC) - t0) / 1000;
        }
        sd_bus_unref(bus);
        qsort(ms, (size_t) count, sizeof(double), cmp_double);
        qsort(arrived, (size_t) count, sizeof(double), cmp_double);
        printf("%ld %.2f %.2f %.2f\n", objects, ms[(count - 1) / 2], ms[count - 1], arrived[(count - 1) / 2]);
        return 0;
}

static long num(const char *s, long max) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 0 || v > max) {
                fprintf(stderr, "busprobe: invalid number \"%s\"\n", s);
                exit(64);
        }
        return v;
}

int main(int argc, char *argv[]) {
        if (argc == 4 && strcmp(argv[1], "reads") == 0)
                return do_reads(num(argv[2], 60000), argv[3]);
        if (argc >= 5 && strcmp(argv[1], "wait-applied") == 0)
                return do_wait_applied(strtoull(argv[2], NULL, 10), num(argv[3], 3600), argv + 4, argc - 4);
        if ((argc == 3 || argc == 5) && strcmp(argv[1], "apply") == 0)
                return do_apply(argv[2], argc == 5 ? num(argv[3], 100000000) : 1,
                                argc == 5 ? num(argv[4], 60000) : 0);
        if (argc == 2 && strcmp(argv[1], "now") == 0) {
                printf("%llu\n", (unsigned long long) now_us(CLOCK_REALTIME));
                return 0;
        }
        if (argc == 4 && strcmp(argv[1], "wait-name") == 0)
                return do_wait_name(strtoull(argv[2], NULL, 10), num(argv[3], 3600));
        if (argc == 3 && strcmp(argv[1], "managed-objects") == 0)
                return do_managed_objects(num(argv[2], 1000));
        fprintf(stderr, "usage: busprobe reads PERIOD_MS OUTFILE | wait-applied SINCE_US TIMEOUT_S "
                        "DISK... | apply DISK [COUNT PERIOD_MS] | now | wait-name SINCE_US TIMEOUT_S | "
                        "managed-objects COUNT\n");
        return 64;
}
