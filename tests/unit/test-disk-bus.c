/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus API of a manager on a fake kernel, over a socket pair (no dbus-daemon): every
 * property is the list's of src/bus-names.h, in its order, with its signature; a disk's
 * Current is the attribute table's keys the kernel shows; GetManagedObjects lists each disk
 * with its one interface and the properties GetAll gives; the introspection data is the
 * shipped XML's.
 */
#include <fcntl.h>
#include <stdarg.h>

#include "bus-names.h"
#include "daemon-world.h"
#include "ioschedd-disk-bus.h"
#include "tests.h"
#include "util.h"

#define SETTINGS "scheduler = mq-deadline\niosched.fifo_batch = 8\nnr_requests = 64"

static char *dump(sd_bus_message *m) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        assert_non_null(f);
        assert_int_equal(sd_bus_message_dump(m, f, SD_BUS_MESSAGE_DUMP_SUBTREE_ONLY), 0);
        assert_int_equal(fclose(f), 0);
        return text;
}

/* An a{sv} of @object's properties, entered: each name is the list's next, with its
 * signature; the EXPLICIT ones left out. */
static void check_property_list(sd_bus_message *m, BusObject object) {
        for (BusPropertyId p = 0; p < _BUS_PROPERTY_MAX; p++) {
                const BusProperty *bp = bus_property(p);
                const char *name;

                if (bp->object != object || bp->change == BUS_PROPERTY_EXPLICIT)
                        continue;
                assert_int_equal(sd_bus_message_enter_container(m, 'e', "sv"), 1);
                assert_int_equal(sd_bus_message_read_basic(m, 's', &name), 1);
                assert_string_equal(name, bp->name);
                assert_int_equal(sd_bus_message_enter_container(m, 'v', bp->signature), 1);
                assert_int_equal(sd_bus_message_skip(m, bp->signature), 1);
                assert_int_equal(sd_bus_message_exit_container(m), 1);
                assert_int_equal(sd_bus_message_exit_container(m), 1);
        }
        assert_int_equal(sd_bus_message_at_end(m, false), 1);
}

static sd_bus_message *get_all(World *w, const char *path, const char *interface) {
        sd_bus_message *reply = world_call(w, path, "org.freedesktop.DBus.Properties", "GetAll", "s",
                                           interface);

        assert_false(sd_bus_message_is_method_error(reply, NULL));
        return reply;
}

TEST(property_lists) {
        World *w = world_ran(3, SETTINGS);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *manager = NULL, *disk = NULL;

        world_connect_bus(w);
        manager = get_all(w, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE);
        assert_int_equal(sd_bus_message_enter_container(manager, 'a', "{sv}"), 1);
        check_property_list(manager, BUS_OBJECT_MANAGER);
        disk = get_all(w, BUS_DISK_PATH_PREFIX "/loop1", BUS_DISK_INTERFACE);
        assert_int_equal(sd_bus_message_enter_container(disk, 'a', "{sv}"), 1);
        check_property_list(disk, BUS_OBJECT_DISK);
        world_free(w);
}

/* Current: the attribute table's keys that the kernel shows, in its order (the tunables in the
 * kernel's), spelt as the configuration spells them. */
TEST(current) {
        static const char *const want[] = {
                "scheduler", "mq-deadline",
                "iosched.read_expire", "500", "iosched.write_expire", "5000",
                "iosched.writes_starved", "2", "iosched.front_merges", "1", "iosched.fifo_batch", "8",
                "iosched.async_depth", "48", "iosched.prio_aging_expire", "10000",
                "nr_requests", "64", "wbt_lat_usec", "2000", "max_sectors_kb", "1280",
                "rq_affinity", "1", "nomerges", "0", "add_random", "0", "iostats", "1",
                "read_ahead_kb", "128",
        };
        World *w = world_ran(2, SETTINGS);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(strv_freep) char **got = NULL;
        const char *k, *v;

        world_connect_bus(w);
        reply = world_call(w, BUS_DISK_PATH_PREFIX "/loop0", "org.freedesktop.DBus.Properties", "Get", "ss",
                           BUS_DISK_INTERFACE, bus_property_name(BUS_DISK_CURRENT));
        assert_int_equal(sd_bus_message_enter_container(reply, 'v', "a{ss}"), 1);
        assert_int_equal(sd_bus_message_enter_container(reply, 'a', "{ss}"), 1);
        while (sd_bus_message_read(reply, "{ss}", &k, &v) > 0) {
                _cleanup_(freep) char *kv = strdup_printf("%s=%s", k, v);

                assert_int_equal(strv_extend(&got, kv), 0);
        }
        assert_int_equal(strv_length(got), ELEMENTSOF(want) / 2);
        for (size_t i = 0, t = 0; i < ELEMENTSOF(want); i += 2) {
                _cleanup_(freep) char *kv = strdup_printf("%s=%s", want[i], want[i + 1]);

                if (startswith(want[i], IOSCHED_KEY_PREFIX)) {
                        /* The tunables come together, after the scheduler. */
                        assert_true(strv_contains(got, kv));
                        assert_non_null(startswith(got[1 + t++], IOSCHED_KEY_PREFIX));
                } else
                        assert_string_equal(got[i / 2], kv);
        }
        /* Scheduler, in GetAll for a list of disks, is Current's scheduler. */
        sd_bus_message_unref(reply);
        reply = world_call(w, BUS_DISK_PATH_PREFIX "/loop0", "org.freedesktop.DBus.Properties", "Get", "ss",
                           BUS_DISK_INTERFACE, bus_property_name(BUS_DISK_SCHEDULER));
        assert_int_equal(sd_bus_message_read(reply, "v", "s", &v), 1);
        assert_string_equal(v, "mq-deadline");
        world_free(w);
}

/* Disk property P of loopI by Properties.Get, the reply entered into its variant. */
static sd_bus_message *loop_property(World *w, unsigned i, BusPropertyId p) {
        _cleanup_(freep) char *path = strdup_printf(BUS_DISK_PATH_PREFIX "/loop%u", i);
        sd_bus_message *reply;

        reply = world_call(w, path, "org.freedesktop.DBus.Properties", "Get", "ss", BUS_DISK_INTERFACE,
                           bus_property_name(p));
        assert_int_equal(sd_bus_message_enter_container(reply, 'v', bus_property(p)->signature), 1);
        return reply;
}

/* Whether an a{ss} entered in @m has @key; leaves @m at its end. */
static bool has_key(sd_bus_message *m, const char *key) {
        const char *k, *v;
        bool found = false;

        assert_int_equal(sd_bus_message_enter_container(m, 'a', "{ss}"), 1);
        while (sd_bus_message_read(m, "{ss}", &k, &v) > 0)
                found = found || streq(k, key);
        return found;
}

/* Keeps the first message it is called with (a reply, a signal). */
static int keep_first(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        sd_bus_message **kept = userdata;

        if (!*kept)
                *kept = sd_bus_message_ref(m);
        return 0;
}

/* Current's keys that no rule sets are read once a client asks: a full read leaves them out,
 * the first Get of a disk's Current waits for one read with them, the next is answered from
 * it; a disk gone before its read is NoSuchDisk. */
TEST(current_read_when_asked) {
        World *w = world_ran(2, SETTINGS);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        unsigned jobs;

        world_connect_bus(w);
        assert_false(world_disk(w, "loop0")->reading.disk->load.attrs & ATTR_BIT(ATTR_READ_AHEAD_KB));
        assert_true(world_disk(w, "loop0")->reading.disk->load.attrs & ATTR_BIT(ATTR_NR_REQUESTS));
        jobs = w->n_jobs;
        reply = loop_property(w, 0, BUS_DISK_CURRENT);
        assert_int_equal(w->n_jobs, jobs + 1);
        assert_true(has_key(reply, "read_ahead_kb"));
        reply = sd_bus_message_unref(reply);
        reply = loop_property(w, 0, BUS_DISK_CURRENT);
        assert_int_equal(w->n_jobs, jobs + 1);
        assert_true(has_key(reply, "read_ahead_kb"));
        reply = sd_bus_message_unref(reply);

        /* A full read after it (a change event) reads them again: still answered at once. */
        assert_int_equal(disk_object_queue(world_disk(w, "loop0"), JOB_APPLY, NULL, NULL), 0);
        assert_int_equal(world_run_all(w), 1);
        reply = loop_property(w, 0, BUS_DISK_CURRENT);
        assert_int_equal(w->n_jobs, jobs + 2);
        assert_true(has_key(reply, "read_ahead_kb"));
        reply = sd_bus_message_unref(reply);

        assert_true(sd_bus_call_method_async(w->client, NULL, NULL, BUS_DISK_PATH_PREFIX "/loop1",
                                             "org.freedesktop.DBus.Properties", "Get", keep_first, &reply, "ss",
                                             BUS_DISK_INTERFACE, bus_property_name(BUS_DISK_CURRENT)) >= 0);
        while (w->n_submitted == 0)
                assert_true(sd_event_run(w->m->event, UINT64_MAX) >= 0);
        assert_int_equal(fake_disk_remove(w->k, "loop1"), 0);
        world_run_all(w);
        while (!reply)
                assert_true(sd_event_run(w->m->event, UINT64_MAX) >= 0);
        assert_true(sd_bus_message_is_method_error(reply, BUS_ERROR_NO_SUCH_DISK));
        world_free(w);
}

/* A read held up (the test runs no job): the wait runs out and the reply has the keys read so far,
 * the rules' and the scheduler; once the read lands, Current is invalidated and the next Get
 * has every key at once. */
TEST(current_wait_runs_out) {
        World *w = world_ran(1, SETTINGS);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL, *sig = NULL;
        _cleanup_(strv_freep) char **invalidated = NULL;
        const char *k, *v;
        bool scheduler = false, nr_requests = false, read_ahead = false;
        unsigned jobs;

        world_connect_bus(w);
        w->m->announcing = true;        /* signals are sent once the name is ours */
        assert_true(sd_bus_match_signal(w->client, NULL, NULL, BUS_DISK_PATH_PREFIX "/loop0",
                                        "org.freedesktop.DBus.Properties", "PropertiesChanged", keep_first, &sig) >= 0);
        /* The wait's end on the loop's clock, which is ahead of the world's fake one. */
        w->mono = 0;
        jobs = w->n_jobs;
        assert_true(sd_bus_call_method_async(w->client, NULL, NULL, BUS_DISK_PATH_PREFIX "/loop0",
                                             "org.freedesktop.DBus.Properties", "Get", keep_first, &reply, "ss",
                                             BUS_DISK_INTERFACE, bus_property_name(BUS_DISK_CURRENT)) >= 0);
        while (!reply)
                assert_true(sd_event_run(w->m->event, UINT64_MAX) >= 0);
        assert_int_equal(w->n_jobs, jobs + 1);
        assert_int_equal(w->n_submitted, 1);
        assert_int_equal(sd_bus_message_enter_container(reply, 'v', "a{ss}"), 1);
        assert_int_equal(sd_bus_message_enter_container(reply, 'a', "{ss}"), 1);
        while (sd_bus_message_read(reply, "{ss}", &k, &v) > 0) {
                scheduler = scheduler || streq(k, "scheduler");
                nr_requests = nr_requests || streq(k, "nr_requests");
                read_ahead = read_ahead || streq(k, "read_ahead_kb");
        }
        assert_true(scheduler && nr_requests && !read_ahead);
        reply = sd_bus_message_unref(reply);

        world_run_all(w);
        while (!sig)
                assert_true(sd_event_run(w->m->event, UINT64_MAX) >= 0);
        assert_int_equal(sd_bus_message_skip(sig, "sa{sv}"), 1);
        assert_int_equal(sd_bus_message_read_strv(sig, &invalidated), 1);
        assert_true(strv_contains(invalidated, bus_property_name(BUS_DISK_CURRENT)));
        reply = loop_property(w, 0, BUS_DISK_CURRENT);
        assert_int_equal(w->n_jobs, jobs + 1);
        assert_true(has_key(reply, "read_ahead_kb"));
        world_free(w);
}

/* OtherWriters: a udev rule of the root that writes loop1's scheduler is on loop1's list with
 * its file:line and value (each field where the signature puts it), and on no other disk's. */
TEST(other_writers) {
        World *w = world_ran(2, SETTINGS);
        const char *key, *owner, *source, *file, *value, *when;
        uint32_t line;
        int certain;

        assert_int_equal(fake_write(w->k, "etc/udev/rules.d/60-test.rules",
                                    "# a distribution's rule\n"
                                    "ACTION==\"add|change\", KERNEL==\"loop1\", ATTR{queue/scheduler}=\"kyber\""),
                         0);
        assert_int_equal(manager_reload(w->m, NULL, NULL), 0);
        world_run_all(w);
        world_connect_bus(w);
        for (unsigned i = 0; i < 2; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const char *sig = bus_property(BUS_DISK_OTHER_WRITERS)->signature;

                reply = loop_property(w, i, BUS_DISK_OTHER_WRITERS);
                assert_int_equal(sd_bus_message_enter_container(reply, 'a', sig + 1), 1);
                if (i == 0) {
                        assert_int_equal(sd_bus_message_at_end(reply, false), 1);
                        continue;
                }
                assert_int_equal(sd_bus_message_read(reply, sig + 1, &key, &owner, &source, &file, &line, &value,
                                                     &when, &certain),
                                 1);
                assert_string_equal(key, "scheduler");
                assert_string_equal(owner, "udev-rules");
                assert_string_equal(file, "/etc/udev/rules.d/60-test.rules");
                assert_int_equal(line, 2);
                assert_string_equal(value, "kyber");
                assert_string_equal(when, "add|change");
                assert_true(certain);
                assert_int_equal(sd_bus_message_at_end(reply, false), 1);
        }
        world_free(w);
}

/* Each EXPLICIT property, left out of GetAll and GetManagedObjects, is read by Get with its
 * signature. */
TEST(explicit_properties) {
        World *w = world_ran(1, SETTINGS);
        unsigned n = 0;

        world_connect_bus(w);
        for (BusPropertyId p = 0; p < _BUS_PROPERTY_MAX; p++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

                if (bus_property(p)->object != BUS_OBJECT_DISK || bus_property(p)->change != BUS_PROPERTY_EXPLICIT)
                        continue;
                reply = loop_property(w, 0, p);
                assert_int_equal(sd_bus_message_skip(reply, bus_property(p)->signature), 1);
                n++;
        }
        assert_int_equal(n, 17);       /* the identity, and the details a list of disks does not show */
        world_free(w);
}

/* Device has what Transport, Rotational, Queues and Stack have, each read by Get; Stack: loop1
 * below a multipath map is a path of it, loop0 a whole disk. */
TEST(device) {
        World *w = world_ran(2, SETTINGS);

        assert_int_equal(fake_write(w->k, "sys/class/block/loop1/holders/dm-7", ""), 0);
        assert_int_equal(fake_write(w->k, "sys/class/block/dm-7/dm/uuid", "mpath-3600a0b80"), 0);
        assert_int_equal(manager_reload(w->m, NULL, NULL), 0);
        world_run_all(w);
        world_connect_bus(w);
        for (unsigned i = 0; i < 2; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *device = loop_property(w, i, BUS_DISK_DEVICE);
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *stack = loop_property(w, i, BUS_DISK_STACK);
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *transport = loop_property(w, i, BUS_DISK_TRANSPORT);
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *rotational = loop_property(w, i, BUS_DISK_ROTATIONAL);
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *queues = loop_property(w, i, BUS_DISK_QUEUES);
                const char *t, *role, *kind, *upper, *t2, *role2, *kind2, *upper2;
                int rot, rot2;
                uint32_t q, q2;

                assert_int_equal(sd_bus_message_read(device, "(sbu(sss))", &t, &rot, &q, &role, &kind, &upper), 1);
                assert_int_equal(sd_bus_message_read(stack, "(sss)", &role2, &kind2, &upper2), 1);
                assert_int_equal(sd_bus_message_read(transport, "s", &t2), 1);
                assert_int_equal(sd_bus_message_read(rotational, "b", &rot2), 1);
                assert_int_equal(sd_bus_message_read(queues, "u", &q2), 1);
                assert_string_equal(t, "loop");
                assert_string_equal(t, t2);
                assert_int_equal(rot, rot2);
                assert_int_equal(q, q2);
                assert_string_equal(role, i == 0 ? "disk" : "multipath-path");
                assert_string_equal(role, role2);
                assert_string_equal(kind, kind2);
                assert_string_equal(upper, upper2);
        }
        world_free(w);
}

/* The next {sv} of @m, entered, dumped and left: its name in @ret_name, NULL at the end. */
static char *next_property(sd_bus_message *m, const char **ret_name, bool *ret_empty) {
        const char *contents;
        char type, *text;

        if (sd_bus_message_enter_container(m, 'e', "sv") <= 0) {
                *ret_name = NULL;
                return NULL;
        }
        assert_int_equal(sd_bus_message_read_basic(m, 's', ret_name), 1);
        assert_int_equal(sd_bus_message_peek_type(m, &type, &contents), 1);
        assert_int_equal(sd_bus_message_enter_container(m, 'v', contents), 1);
        if (contents[0] == 'a') {
                assert_int_equal(sd_bus_message_enter_container(m, 'a', contents + 1), 1);
                *ret_empty = sd_bus_message_at_end(m, false) > 0;
                while (sd_bus_message_skip(m, contents + 1) > 0)
                        ;
                assert_int_equal(sd_bus_message_exit_container(m), 1);
        } else if (streq(contents, "s")) {
                const char *v;

                assert_int_equal(sd_bus_message_read_basic(m, 's', &v), 1);
                *ret_empty = !*v;
        } else
                *ret_empty = false;
        assert_true(sd_bus_message_rewind(m, false) > 0);     /* the variant, again */
        text = dump(m);
        assert_int_equal(sd_bus_message_exit_container(m), 1);  /* v */
        assert_int_equal(sd_bus_message_exit_container(m), 1);  /* {sv} */
        return text;
}

/* An object's a{sv} in GetManagedObjects (@listed, entered) against its GetAll (@all, entered):
 * the same properties in the same order with the same values, but for an empty array or string:
 * left out of @listed. Return: how many were left out. */
static unsigned check_listed(sd_bus_message *listed, sd_bus_message *all) {
        const char *name, *listed_name;
        unsigned left_out = 0;
        bool empty, listed_empty;
        _cleanup_(freep) char *listed_text = next_property(listed, &listed_name, &listed_empty);

        for (;;) {
                _cleanup_(freep) char *text = next_property(all, &name, &empty);

                if (!name)
                        break;
                if (empty) {
                        left_out++;
                        assert_true(!listed_name || !streq(listed_name, name));
                        continue;
                }
                assert_non_null(listed_name);
                assert_string_equal(listed_name, name);
                assert_string_equal(listed_text, text);
                free(listed_text);
                listed_text = next_property(listed, &listed_name, &listed_empty);
        }
        assert_null(listed_name);
        return left_out;
}

/* GetManagedObjects: each published disk with its one interface, the properties of sd-bus's own
 * GetAll (names, order, types, values) but for the empty ones: a disk at its policy has no
 * other writers, mismatches, error or holds, and its rule changed nothing on the last pass. */
TEST(managed_objects) {
        World *w = world_ran(5, SETTINGS);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *path, *interface;
        unsigned n = 0;

        world_connect_bus(w);
        reply = world_call(w, BUS_MANAGER_PATH, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
                           NULL);
        assert_int_equal(sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}"), 1);
        while (sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}") > 0) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *all = NULL;

                assert_int_equal(sd_bus_message_read_basic(reply, 'o', &path), 1);
                assert_int_equal(sd_bus_message_enter_container(reply, 'a', "{sa{sv}}"), 1);
                assert_int_equal(sd_bus_message_enter_container(reply, 'e', "sa{sv}"), 1);
                assert_int_equal(sd_bus_message_read_basic(reply, 's', &interface), 1);
                assert_string_equal(interface, BUS_DISK_INTERFACE);
                assert_int_equal(sd_bus_message_enter_container(reply, 'a', "{sv}"), 1);
                all = get_all(w, path, BUS_DISK_INTERFACE);
                assert_int_equal(sd_bus_message_enter_container(all, 'a', "{sv}"), 1);
                assert_int_equal(check_listed(reply, all), 4);
                assert_int_equal(sd_bus_message_exit_container(reply), 1);      /* a{sv} */
                assert_int_equal(sd_bus_message_exit_container(reply), 1);      /* {sa{sv}} */
                assert_int_equal(sd_bus_message_at_end(reply, false), 1);      /* one interface */
                assert_int_equal(sd_bus_message_exit_container(reply), 1);
                assert_int_equal(sd_bus_message_exit_container(reply), 1);
                n++;
        }
        assert_int_equal(n, 5);
        world_free(w);
}

/* The interface blocks of dbus/org.iosched1.xml are what the live objects introspect as. */
static void check_introspection(World *w, const char *path, const char *interface) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(freep) char *shipped = NULL, *open_tag = NULL;
        const char *xml, *a, *b, *end;

        reply = world_call(w, path, "org.freedesktop.DBus.Introspectable", "Introspect", NULL);
        assert_int_equal(sd_bus_message_read(reply, "s", &xml), 1);
        assert_int_equal(read_file_bounded(AT_FDCWD, DBUS_DIR "/org.iosched1.xml", 1 << 20, &shipped, NULL), 0);
        open_tag = strdup_printf(" <interface name=\"%s\">\n", interface);
        a = strstr(shipped, open_tag);
        b = strstr(xml, open_tag);
        assert_non_null(a);
        assert_non_null(b);
        end = strstr(a, " </interface>");
        assert_non_null(end);
        assert_int_equal(strncmp(a, b, end - a), 0);
}

TEST(introspection) {
        World *w = world_ran(1, SETTINGS);

        world_connect_bus(w);
        check_introspection(w, BUS_MANAGER_PATH, BUS_MANAGER_INTERFACE);
        check_introspection(w, BUS_DISK_PATH_PREFIX "/loop0", BUS_DISK_INTERFACE);
        world_free(w);
}

DEFINE_TEST_MAIN(NULL, NULL);

/* The text of property @name in a GetAll reply. */
static char *all_property(sd_bus_message *all, const char *name) {
        const char *n;
        bool empty;

        assert_int_equal(sd_bus_message_rewind(all, true), 1);
        assert_int_equal(sd_bus_message_enter_container(all, 'a', "{sv}"), 1);
        for (;;) {
                char *text = next_property(all, &n, &empty);

                assert_non_null(n);
                if (streq(n, name))
                        return text;
                free(text);
        }
}

/* PropertiesChanged (built by the daemon, not by sd-bus's walk of its object tree): the EMITS
 * properties whose fields changed, with GetAll's values, and the EXPLICIT ones among the
 * invalidated, each list in the order of BUS_PROPERTIES; nothing when no property's field is
 * dirty. */
TEST(properties_changed) {
        static const char *const changed[] = { "Device", "LastApplied" };
        World *w = world_ran(2, SETTINGS);
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL, *all = NULL;
        const char *s, *name;
        DiskObject *d;
        bool empty;

        world_connect_bus(w);
        w->m->announcing = true;
        assert_true(sd_bus_add_match(w->client, NULL,
                                     "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
                                     keep_first, &sig) >= 0);
        d = world_disk(w, "loop1");
        d->dirty = DISK_FIELD_BIT(DISK_FIELD_ROTATIONAL) | DISK_FIELD_BIT(DISK_OBJECT_LAST_APPLIED);
        disk_bus_emit_changed(d);
        assert_int_equal(d->dirty, 0);
        while (!sig)
                assert_true(sd_event_run(w->m->event, UINT64_MAX) >= 0);

        assert_string_equal(sd_bus_message_get_path(sig), BUS_DISK_PATH_PREFIX "/loop1");
        assert_int_equal(sd_bus_message_read_basic(sig, 's', &s), 1);
        assert_string_equal(s, BUS_DISK_INTERFACE);
        all = get_all(w, BUS_DISK_PATH_PREFIX "/loop1", BUS_DISK_INTERFACE);
        assert_int_equal(sd_bus_message_enter_container(sig, 'a', "{sv}"), 1);
        for (size_t i = 0; i < ELEMENTSOF(changed); i++) {
                _cleanup_(freep) char *text = next_property(sig, &name, &empty), *want = NULL;

                assert_non_null(name);
                assert_string_equal(name, changed[i]);
                want = all_property(all, name);
                assert_string_equal(text, want);
        }
        assert_int_equal(sd_bus_message_at_end(sig, false), 1);
        assert_int_equal(sd_bus_message_exit_container(sig), 1);
        assert_int_equal(sd_bus_message_enter_container(sig, 'a', "s"), 1);
        assert_int_equal(sd_bus_message_read_basic(sig, 's', &s), 1);
        assert_string_equal(s, "Rotational");
        assert_int_equal(sd_bus_message_at_end(sig, false), 1);

        /* A dirty mask that no property shows: no signal. */
        sig = sd_bus_message_unref(sig);
        d->dirty = 0;
        disk_bus_emit_changed(d);
        d->dirty = DISK_FIELD_BIT(DISK_OBJECT_LAST_APPLIED);
        disk_bus_emit_changed(d);
        while (!sig)
                assert_true(sd_event_run(w->m->event, UINT64_MAX) >= 0);
        assert_int_equal(sd_bus_message_read_basic(sig, 's', &s), 1);
        assert_int_equal(sd_bus_message_enter_container(sig, 'a', "{sv}"), 1);
        {
                _cleanup_(freep) char *text = next_property(sig, &name, &empty);

                assert_string_equal(name, "LastApplied");
        }
        world_free(w);
}
