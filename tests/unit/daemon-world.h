/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon in a test: a manager on a fake kernel of N loop devices, without a uevent socket,
 * a worker thread or a clock of its own. Its jobs go to a fake pool that runs them (the real
 * job_run() on the fake kernel) when the test says so; its clock moves when the test says so.
 * On request, a client bus connected to the manager's over a socket pair (no dbus-daemon).
 * One world at a time; a test that failed left its world, which the next world_new() ends.
 */
#include <systemd/sd-bus.h>

#include "fake-kernel.h"
#include "ioschedd-manager.h"

#define WORLD_MS 1000ULL

/* A completion that counts what it hears. */
typedef struct Waiter {
        Completion c;
        unsigned jobs, gone, done;
} Waiter;

typedef struct World {
        FakeKernel *k;
        Sysfs *s;
        Manager *m;
        char *config;
        Job **submitted;        /* the fake pool: jobs submitted, not run yet, in order */
        size_t n_submitted, n_allocated;
        unsigned n_jobs;        /* submitted since the start */
        uint64_t mono, real;    /* the fake clock */
        Waiter a, b;            /* here, not on a test's stack: the disks may still point at them */
        sd_bus *client;
} World;

/* A world of @n_disks loop devices (loop0, loop1, ...) without a scheduler, and one rule for
 * all of them of the @settings lines; the manager started, its first pass queued, not run. */
World *world_new(unsigned n_disks, const char *settings);
/* The same, with the first pass run: every disk read and at its policy. */
World *world_ran(unsigned n_disks, const char *settings);
void world_free(World *w);

void world_tick(World *w, uint64_t usec);
/* Runs the oldest submitted job and hands it back to the manager. */
void world_run_one(World *w);
/* Runs jobs until none is left, also those that finishing jobs submit. Return: how many. */
unsigned world_run_all(World *w);

DiskObject *world_disk(World *w, const char *name);
Waiter *waiter_init(Waiter *w);

/* The manager serves its bus on one end of a socket pair; w->client is the other end. */
void world_connect_bus(World *w);
/* A method call from the client, answered by the manager's loop (which runs the jobs the
 * answer waits for): the reply or error. */
sd_bus_message *world_call(World *w, const char *path, const char *interface, const char *member,
                           const char *types, ...);
