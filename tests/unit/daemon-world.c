/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <sys/socket.h>

#include "daemon-world.h"
#include "ioschedd-manager-bus.h"
#include "log.h"
#include "tests.h"
#include "util.h"

static World the_world, *world;

static int fake_submit(Manager *m, Job *j) {
        World *w = world;

        if (w->n_submitted == w->n_allocated) {
                size_t n = MAX(w->n_allocated * 2, (size_t) 64);
                Job **a = reallocarray(w->submitted, n, sizeof(Job *));

                assert_non_null(a);
                w->submitted = a;
                w->n_allocated = n;
        }
        w->submitted[w->n_submitted++] = j;
        w->n_jobs++;
        return 0;
}

static uint64_t fake_now(Manager *m, clockid_t clock) {
        return clock == CLOCK_REALTIME ? world->real : world->mono;
}

void world_tick(World *w, uint64_t usec) {
        w->mono += usec;
        w->real += usec;
}

static void world_add_disks(World *w, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                char name[16], devnum[16];

                snprintf(name, sizeof(name), "loop%u", i);
                snprintf(devnum, sizeof(devnum), "7:%u", i);
                assert_int_equal(fake_disk_add(w->k, &(FakeDiskSpec) { .name = name, .devnum = devnum,
                                                                       .scheduler = "none" }), 0);
        }
}

World *world_new(unsigned n_disks, const char *settings) {
        World *w = &the_world;
        FILE *f;

        /* A test that failed (cmocka jumped out of it) left its world: end it first. */
        if (world)
                world_free(world);
        *w = (World) { .mono = 1000000 * WORLD_MS, .real = 1700000000ULL * 1000000 };
        world = w;
        log_set_max_level(LOG_WARNING);        /* not a line per write of every disk */
        w->k = fake_kernel_new();
        assert_non_null(w->k);
        world_add_disks(w, n_disks);
        assert_int_equal(sysfs_new(w->k->root, &w->s), 0);
        fake_kernel_attach(w->k, w->s);
        w->config = strdup_printf("%s/test.conf", w->k->root);
        assert_non_null(w->config);
        f = fopen(w->config, "we");
        assert_non_null(f);
        fprintf(f, "[rule all]\nmatch.name = loop*\n%s\n", settings);
        fclose(f);

        assert_int_equal(manager_new(&w->m), 0);
        w->m->sysfs_root = w->k->root;
        w->m->config_file = w->config;
        w->m->config_root = w->k->root;       /* the other writers' files: the fake root's, not the host's */
        w->m->monitor_enabled = false;
        w->m->runtime_dir = NULL;
        w->m->submit = fake_submit;
        w->m->now = fake_now;
        assert_int_equal(manager_start(w->m), 0);
        assert_int_equal(w->m->n_disks, n_disks);
        return w;
}

World *world_ran(unsigned n_disks, const char *settings) {
        World *w = world_new(n_disks, settings);

        world_run_all(w);
        return w;
}

void world_free(World *w) {
        /* Jobs the test left unrun finish as if the pool handed them back at exit. */
        while (w->n_submitted > 0) {
                Job *j = w->submitted[--w->n_submitted];

                j->error = -ECANCELED;
                manager_job_done(w->m, j);
        }
        w->client = sd_bus_flush_close_unref(w->client);
        w->m = manager_free(w->m);
        free(w->submitted);
        free(w->config);
        sysfs_free(w->s);
        fake_kernel_free(w->k);
        world = NULL;
}

void world_run_one(World *w) {
        Job *j;

        assert_true(w->n_submitted > 0);
        j = w->submitted[0];
        memmove(w->submitted, w->submitted + 1, --w->n_submitted * sizeof(Job *));
        j->item.run(&j->item, w->s);
        manager_job_done(w->m, j);
}

unsigned world_run_all(World *w) {
        unsigned n = 0;

        while (w->n_submitted > 0) {
                world_run_one(w);
                n++;
        }
        return n;
}

DiskObject *world_disk(World *w, const char *name) {
        DiskObject *d = manager_find_disk(w->m, name);

        assert_non_null(d);
        return d;
}

static void waiter_job_done(Completion *c, const JobResult *res) {
        Waiter *w = container_of(c, Waiter, c);

        w->jobs++;
        w->gone += res->error == -ENODEV;
}

static void waiter_done(Completion *c) {
        container_of(c, Waiter, c)->done++;
}

Waiter *waiter_init(Waiter *w) {
        static const CompletionOps ops = { .job_done = waiter_job_done, .done = waiter_done };

        *w = (Waiter) {};
        completion_init(&w->c, &ops);
        return w;
}

void world_connect_bus(World *w) {
        sd_id128_t id;
        int fds[2];

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
        assert_int_equal(sd_id128_randomize(&id), 0);
        assert_int_equal(sd_bus_new(&w->m->bus), 0);
        assert_int_equal(sd_bus_set_fd(w->m->bus, fds[0], fds[0]), 0);
        assert_int_equal(sd_bus_set_server(w->m->bus, 1, id), 0);
        assert_int_equal(sd_bus_set_anonymous(w->m->bus, 1), 0);
        assert_int_equal(sd_bus_start(w->m->bus), 0);
        assert_int_equal(manager_connect_bus(w->m), 0);

        assert_int_equal(sd_bus_new(&w->client), 0);
        assert_int_equal(sd_bus_set_fd(w->client, fds[1], fds[1]), 0);
        assert_int_equal(sd_bus_set_anonymous(w->client, 1), 0);
        assert_int_equal(sd_bus_start(w->client), 0);
        assert_int_equal(sd_bus_attach_event(w->client, w->m->event, 0), 0);
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        *(sd_bus_message **) userdata = sd_bus_message_ref(reply);
        return 0;
}

sd_bus_message *world_call(World *w, const char *path, const char *interface, const char *member,
                           const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        sd_bus_message *reply = NULL;
        va_list ap;

        assert_int_equal(sd_bus_message_new_method_call(w->client, &call, NULL, path, interface, member), 0);
        if (types) {
                va_start(ap, types);
                assert_true(sd_bus_message_appendv(call, types, ap) >= 0);
                va_end(ap);
        }
        assert_true(sd_bus_call_async(w->client, NULL, call, on_reply, &reply, 0) >= 0);
        /* A call that waits for a job (a Get of Current not read yet) has it run. */
        while (!reply)
                if (w->n_submitted > 0)
                        world_run_all(w);
                else
                        assert_true(sd_event_run(w->m->event, UINT64_MAX) >= 0);
        return reply;
}
