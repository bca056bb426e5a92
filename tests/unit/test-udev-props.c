/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * udev's properties, typed at the edge (udev-props.h): from the environment of a RUN program,
 * from udev's database, property by property (libudev); and the disk loader's use of them.
 */
#include "fake-kernel.h"
#include "fixture.h"
#include "tests.h"
#include "udev-props.h"
#include "util.h"

TEST(typed) {
        _cleanup_(udev_props_freep) UdevProps *p = NULL;

        p = fixture_props((char *[]) {
                "ID_MODEL=Fake_SSD", "ID_VENDOR=ACME", "ID_SERIAL=ACME_Fake_SSD_S123",
                "ID_SERIAL_SHORT=S123", "ID_WWN=0x5000", "ID_BUS=ata", "DEVTYPE=disk",
                "IOCOST_SOLUTIONS=naive", "not an assignment", NULL });
        assert_string_equal(p->model, "Fake_SSD");
        assert_string_equal(p->vendor, "ACME");
        assert_string_equal(p->serial, "S123");         /* the short one wins */
        assert_string_equal(p->wwn, "0x5000");          /* no ID_WWN_WITH_EXTENSION */
        assert_string_equal(p->bus, "ata");
        assert_string_equal(p->iocost_solutions, "naive");
        assert_string_equal(udev_props_get(p, "DEVTYPE"), "disk");
        assert_string_equal(udev_props_get(p, "ID_SERIAL"), "ACME_Fake_SSD_S123");
        assert_null(udev_props_get(p, "not an assignment"));
        assert_int_equal(p->n_props, 8);

        /* Sorted by name, whatever the order they came in. */
        for (size_t i = 1; i < p->n_props; i++)
                assert_true(strcmp(p->props[i - 1].name, p->props[i].name) < 0);

        /* A name again: the new value, and the typed field follows it. */
        assert_int_equal(udev_props_add(p, "ID_WWN_WITH_EXTENSION", "0x5000abc"), 1);
        assert_string_equal(p->wwn, "0x5000abc");
        assert_int_equal(udev_props_add(p, "ID_MODEL", "Other"), 1);
        assert_string_equal(p->model, "Other");
        assert_int_equal(p->n_props, 9);
}

/* What udev could set but the core must not take: invalid names, values that are no printable
 * UTF-8, empty ones (udev's unset), too many. */
TEST(refused) {
        _cleanup_(udev_props_freep) UdevProps *p = udev_props_new();
        char name[32];

        assert_non_null(p);
        assert_int_equal(udev_props_add(p, "ID_MODEL", "bad\xffmodel"), 0);
        assert_int_equal(udev_props_add(p, "ID_VENDOR", "esc\x1b[31m"), 0);
        assert_int_equal(udev_props_add(p, "ID_SERIAL", ""), 0);
        assert_int_equal(udev_props_add(p, "A/B", "x"), 0);
        assert_int_equal(udev_props_add(p, "", "x"), 0);
        assert_int_equal(p->n_props, 0);
        assert_null(p->model);
        assert_null(p->vendor);

        /* A tab is kept in a value, not in the identity shown on the bus. */
        assert_int_equal(udev_props_add(p, "IOCOST_SOLUTIONS", "a\tb"), 1);
        assert_int_equal(udev_props_add(p, "ID_MODEL", "a\tb"), 1);
        assert_null(p->model);
        assert_string_equal(udev_props_get(p, "ID_MODEL"), "a\tb");

        for (unsigned i = 0; i < UDEV_PROPS_MAX + 10; i++) {
                snprintf(name, sizeof(name), "P%u", i);
                assert_true(udev_props_add(p, name, "1") >= 0);
        }
        assert_int_equal(p->n_props, UDEV_PROPS_MAX);
        /* A property already there still takes a new value. */
        assert_int_equal(udev_props_add(p, "P0", "2"), 1);
        assert_string_equal(udev_props_get(p, "P0"), "2");
}

TEST(parse_db) {
        _cleanup_(udev_props_freep) UdevProps *p = NULL;
        static const char db[] = "S:disk/by-id/ata-Fake\n"
                                 "I:123456\n"
                                 "E:ID_MODEL=Fake_SSD\n"
                                 "E:ID_BUS=ata\n"
                                 "E:NOEQUALS\n"
                                 "G:systemd\n"
                                 "E:ID_SERIAL_SHORT=S9";

        assert_int_equal(udev_props_parse_db(db, &p), 0);
        assert_int_equal(p->n_props, 3);
        assert_string_equal(p->model, "Fake_SSD");
        assert_string_equal(p->bus, "ata");
        assert_string_equal(p->serial, "S9");
}

static bool is_iocost(const char *name) {
        return startswith(name, "IOCOST_");
}

static bool is_id(const char *name) {
        return startswith(name, "ID_");
}

TEST(copy_matching) {
        _cleanup_(udev_props_freep) UdevProps *p = NULL, *c = NULL, *none = NULL;

        p = fixture_props((char *[]) { "ID_MODEL=m", "IOCOST_SOLUTIONS=naive", "IOCOST_QOS_NAIVE=rlat=1", NULL });
        assert_int_equal(udev_props_copy_matching(p, is_iocost, &c), 0);
        assert_int_equal(c->n_props, 2);
        assert_null(c->model);
        assert_string_equal(c->iocost_solutions, "naive");
        assert_string_equal(udev_props_get(c, "IOCOST_QOS_NAIVE"), "rlat=1");

        /* Nothing taken: no list at all (a disk keeps none). */
        assert_int_equal(udev_props_copy_matching(c, is_id, &none), 0);
        assert_null(none);
        assert_int_equal(udev_props_copy_matching(NULL, is_iocost, &none), 0);
        assert_null(none);
}

/* The loader: udev's database when no properties come with the call, never both. */
TEST(load_from_db) {
        static const FakeDiskSpec spec = {
                .name = "sdz", .devnum = "8:240", .scheduler = "mq-deadline", .has_device = true,
                .model = "sysfs model",
        };
        _cleanup_(udev_props_freep) UdevProps *u = fixture_props((char *[]) { "ID_MODEL=from_env", NULL });
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        Disk *d = NULL;
        FakeKernel *k = fake_kernel_new();

        assert_non_null(k);
        assert_int_equal(fake_disk_add(k, &spec), 0);
        assert_int_equal(fake_write(k, "run/udev/data/b8:240",
                                    "E:ID_MODEL=from_db\nE:ID_SERIAL=db_serial\nE:ID_BUS=usb\n"), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);

        assert_int_equal(sysfs_load_disk(s, "sdz", NULL, NULL, &d), 0);
        assert_string_equal(d->model, "from_db");
        assert_string_equal(d->model_sysfs, "sysfs model");
        assert_string_equal(d->serial, "db_serial");
        assert_int_equal(d->transport, TRANSPORT_USB);
        d = disk_free(d);

        assert_int_equal(sysfs_load_disk(s, "sdz", u, NULL, &d), 0);
        assert_string_equal(d->model, "from_env");
        assert_null(d->serial);                 /* not the database's */
        assert_int_equal(d->transport, TRANSPORT_SCSI);
        d = disk_free(d);

        /* A load that needs no identity reads no database. */
        assert_int_equal(sysfs_load_disk(s, "sdz", NULL, &(DiskLoad) { .attrs = ATTR_BIT(ATTR_SCHEDULER) }, &d), 0);
        assert_null(d->model);
        d = disk_free(d);
        fake_kernel_free(k);
}

DEFINE_TEST_MAIN(NULL, NULL)
