/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A disk's identity strings come from the device (sysfs) and from udev, and are bytes. They
 * are published on the bus and printed in JSON, which take UTF-8 only: one USB stick with a
 * model that is not UTF-8 made GetAll of its object, and GetManagedObjects of every disk, fail
 * (tests/integration/daemon-hostile.sh found it; main fixed it in string_is_printable()).
 */
#include <stdio.h>

#include "fake-kernel.h"
#include "fixture.h"
#include "tests.h"
#include "util.h"

TEST(utf8_is_valid) {
        assert_true(utf8_is_valid(""));
        assert_true(utf8_is_valid("Samsung SSD 980 \xe2\x80\x93 PRO \xf0\x9f\x92\xbe"));
        assert_false(utf8_is_valid("bad\xff"));
        assert_false(utf8_is_valid("\xc0\xaf"));         /* overlong */
        assert_false(utf8_is_valid("\xed\xa0\x80"));     /* surrogate */
        assert_false(utf8_is_valid("\xf4\x90\x80\x80")); /* past U+10FFFF */
        assert_false(utf8_is_valid("\xe2\x82"));         /* cut short */
}

/* Strings that are not UTF-8 are treated as absent (string_is_printable() requires UTF-8),
 * from sysfs device files and from udev's properties alike; valid UTF-8 is kept. */
TEST(identity_is_utf8) {
        static const FakeDiskSpec spec = {
                .name = "sdz",
                .devnum = "8:240",
                .scheduler = "mq-deadline",
                .has_device = true,
                .model = "WD\xff\xfe"
                         "Disk",
                .vendor = "AT\xc3",
                .serial = "S\xe2\x82N",
        };
        char *props[] = {(char *) "ID_MODEL=bad\xffmodel", (char *) "ID_SERIAL_SHORT=ser\xc3(ial",
                         (char *) "ID_VENDOR=caf\xc3\xa9", (char *) "ID_WWN=0x5000\x80", NULL};
        FakeKernel *k = fake_kernel_new();
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(udev_props_freep) UdevProps *u = fixture_props(props);
        _cleanup_(disk_freep) Disk *d = NULL, *e = NULL;

        assert_non_null(k);
        assert_int_equal(fake_disk_add(k, &spec), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);

        /* From sysfs alone. */
        assert_int_equal(sysfs_load_disk(s, "sdz", NULL, NULL, &d), 0);
        assert_null(d->model_sysfs);
        assert_null(d->model);
        assert_null(d->vendor_sysfs);
        assert_null(d->serial);

        /* udev's properties. */
        assert_int_equal(sysfs_load_disk(s, "sdz", u, NULL, &e), 0);
        assert_null(e->model);
        assert_null(e->serial);
        assert_null(e->wwn);
        assert_string_equal(e->vendor, "caf\xc3\xa9");
        fake_kernel_free(k);
}

/* udev's DEVPATH (an event's, a RUN program's environment) is the disk's place in the device
 * tree when it names the disk: the link in sys/class/block is not read then (a kernfs walk
 * under the lock the kernel creating disks takes). Another disk's, or none, and the link is. */
TEST(devpath_from_udev) {
        static const FakeDiskSpec spec = { .name = "sdy", .devnum = "8:224", .scheduler = "mq-deadline", .has_device = true };
        char *ours[] = { (char *) "DEVPATH=/devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sdy", NULL };
        char *other[] = { (char *) "DEVPATH=/devices/virtual/block/sdx", NULL };
        char *dots[] = { (char *) "DEVPATH=/devices/../block/sdy", NULL };
        _cleanup_(udev_props_freep) UdevProps *u = fixture_props(ours), *o = fixture_props(other),
                                              *x = fixture_props(dots);
        FakeKernel *k = fake_kernel_new();
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(disk_freep) Disk *link = NULL, *d = NULL, *e = NULL, *f = NULL;

        assert_non_null(k);
        assert_int_equal(fake_disk_add(k, &spec), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);
        assert_int_equal(sysfs_load_disk(s, "sdy", NULL, NULL, &link), 0);
        /* The fake kernel's disk is a directory, no link: no devpath without udev's. */
        assert_null(link->devpath);

        assert_int_equal(sysfs_load_disk(s, "sdy", u, NULL, &d), 0);
        assert_string_equal(d->devpath, ours[0] + strlen("DEVPATH="));
        assert_int_equal(d->transport, TRANSPORT_ATA);
        assert_int_equal(sysfs_load_disk(s, "sdy", o, NULL, &e), 0);
        assert_null(e->devpath);
        assert_int_equal(sysfs_load_disk(s, "sdy", x, NULL, &f), 0);
        assert_null(f->devpath);
        fake_kernel_free(k);
}

/* The daemon's uevent jobs read in part (what the policy looks at and sets) and keep the rest
 * from the last full reading: what was read is the kernel's now, what was not is the old
 * reading's, and the mask says which fields were taken (PropertiesChanged must not count them
 * as changed). Tunables belong to the scheduler: kept only while it is the same. */
TEST(keep_unloaded) {
        static const FakeDiskSpec spec = {
                .name = "sda", .devnum = "8:0", .schedulers = "none mq-deadline",
                .scheduler = "mq-deadline", .queues = 2, .model = "Fake SSD", .has_device = true,
                .rotational = 1,
        };
        const DiskLoad part = { .attrs = ATTR_BIT(ATTR_SCHEDULER) | ATTR_BIT(ATTR_NR_REQUESTS) };
        FakeKernel *k = fake_kernel_new();
        Disk *old = NULL, *d = NULL;
        const char *old_devpath;
        Sysfs *s = NULL;
        uint64_t taken;

        assert_non_null(k);
        assert_int_equal(fake_disk_add(k, &spec), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);
        assert_int_equal(sysfs_load_disk(s, "sda", NULL, NULL, &old), 0);
        assert_int_equal(DISK_ATTR(old, ATTR_READ_AHEAD_KB).value.num, 128);
        assert_true(old->n_tunables > 0);

        assert_int_equal(fake_write(k, "sys/class/block/sda/queue/read_ahead_kb", "512"), 0);
        assert_int_equal(fake_write(k, "sys/class/block/sda/queue/nr_requests", "32"), 0);
        assert_int_equal(sysfs_load_disk(s, "sda", NULL, &part, &d), 0);
        assert_null(d->model);
        assert_int_equal(d->n_tunables, 0);
        assert_null(d->devpath);                /* no link read, no flag */
        assert_int_equal(d->rotational, -1);
        assert_int_equal(old->rotational, 1);
        old_devpath = old->devpath;

        taken = disk_keep_unloaded(d, old);
        assert_string_equal(d->model, "Fake SSD");
        assert_ptr_equal(d->devpath, old_devpath);
        assert_int_equal(d->transport, old->transport);
        assert_int_equal(d->rotational, 1);
        assert_int_equal(d->removable, old->removable);
        assert_true(taken & DISK_FIELD_BIT(DISK_FIELD_ROTATIONAL));
        assert_int_equal(d->nr_hw_queues, 2);
        assert_int_equal(DISK_ATTR(d, ATTR_NR_REQUESTS).value.num, 32);    /* read now */
        assert_int_equal(DISK_ATTR(d, ATTR_READ_AHEAD_KB).value.num, 128); /* the old reading's */
        assert_true(d->n_tunables > 0);
        assert_true(taken & DISK_FIELD_BIT(DISK_FIELD_MODEL));
        assert_true(taken & DISK_FIELD_BIT(DISK_FIELD_ATTR + ATTR_READ_AHEAD_KB));
        assert_true(taken & DISK_FIELD_BIT(DISK_FIELD_TUNABLES));
        assert_false(taken & DISK_FIELD_BIT(DISK_FIELD_ATTR + ATTR_NR_REQUESTS));
        /* What was read and differs is a change; what was taken is not counted. */
        assert_true(disk_diff(old, d) & ~taken & DISK_FIELD_BIT(DISK_FIELD_ATTR + ATTR_NR_REQUESTS));
        disk_free(old);
        disk_free(d);

        /* Another scheduler now: the old reading's tunables are not this one's. */
        assert_int_equal(sysfs_load_disk(s, "sda", NULL, NULL, &old), 0);
        assert_int_equal(fake_write(k, "sys/class/block/sda/queue/scheduler", "[none] mq-deadline"), 0);
        assert_int_equal(sysfs_load_disk(s, "sda", NULL, &part, &d), 0);
        taken = disk_keep_unloaded(d, old);
        assert_int_equal(d->n_tunables, 0);
        assert_false(taken & DISK_FIELD_BIT(DISK_FIELD_TUNABLES));
        disk_free(old);
        disk_free(d);
        sysfs_free(s);
        fake_kernel_free(k);
}

TEST(schedulers_shared) {
        static const FakeDiskSpec a = { .name = "sda", .devnum = "8:0", .schedulers = "none mq-deadline kyber", .scheduler = "none" };
        static const FakeDiskSpec b = { .name = "sdb", .devnum = "8:16", .schedulers = "none mq-deadline kyber", .scheduler = "none" };
        static const FakeDiskSpec c = { .name = "sdc", .devnum = "8:32", .schedulers = "none bfq", .scheduler = "bfq" };
        FakeKernel *k = fake_kernel_new();
        Disk *da = NULL, *db = NULL, *dc = NULL;
        Sysfs *s = NULL;

        assert_non_null(k);
        assert_int_equal(fake_disk_add(k, &a), 0);
        assert_int_equal(fake_disk_add(k, &b), 0);
        assert_int_equal(fake_disk_add(k, &c), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);
        assert_int_equal(sysfs_load_disk(s, "sda", NULL, NULL, &da), 0);
        assert_int_equal(sysfs_load_disk(s, "sdb", NULL, NULL, &db), 0);
        assert_int_equal(sysfs_load_disk(s, "sdc", NULL, NULL, &dc), 0);
        /* One list for the same names, kept apart from another set; each disk frees its own
         * rest (the ASan run would see a double free). */
        assert_true(da->schedulers_shared && db->schedulers_shared && dc->schedulers_shared);
        assert_ptr_equal(da->schedulers, db->schedulers);
        assert_ptr_not_equal(da->schedulers, dc->schedulers);
        assert_true(strv_equal(dc->schedulers, (char *[]) { (char *) "none", (char *) "bfq", NULL }));
        /* Read again after a change: the disk's list follows the kernel's. */
        assert_int_equal(fake_write(k, "sys/class/block/sda/queue/scheduler", "[none] bfq"), 0);
        assert_int_equal(sysfs_reload_settings(s, da), 0);
        assert_ptr_equal(da->schedulers, dc->schedulers);
        disk_free(da);
        disk_free(db);
        disk_free(dc);
        sysfs_free(s);
        fake_kernel_free(k);
}

DEFINE_TEST_MAIN(NULL, NULL)

/* A directory is read to its end when it takes more than one buffer (sysfs_disk_foreach()
 * stops without the call that returns nothing only when the buffer had room left), and a
 * queue at "none" has no elevator, so queue/iosched/ is not looked for. */
TEST(directories_read_whole) {
        static const FakeDiskSpec spec = {
                .name = "nvme0n1", .devnum = "259:0", .schedulers = "none mq-deadline",
                .scheduler = "none", .queues = 200,
        };
        FakeKernel *k = fake_kernel_new();
        Disk *d = NULL;
        Sysfs *s = NULL;

        assert_non_null(k);
        assert_int_equal(fake_disk_add(k, &spec), 0);
        /* Left behind as if by an elevator: not read while the queue says "none". */
        assert_int_equal(fake_write(k, "sys/class/block/nvme0n1/queue/iosched/fifo_batch", "16"), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);
        assert_int_equal(sysfs_load_disk(s, "nvme0n1", NULL, NULL, &d), 0);
        assert_int_equal(d->nr_hw_queues, 200);
        assert_int_equal(d->n_tunables, 0);
        disk_free(d);
        sysfs_free(s);
        fake_kernel_free(k);
}

/* A disk pinned with its queue/ is no partition, known without a look-up of "partition"; a
 * partition, pinned, has none. */
TEST(pinned_with_queue) {
        static const FakeDiskSpec disk = { .name = "sda", .devnum = "8:0", .scheduler = "none" };
        static const FakeDiskSpec part = { .name = "sda1", .devnum = "8:1", .partition = true };
        FakeKernel *k = fake_kernel_new();
        Disk *d = NULL;
        Sysfs *s = NULL;

        assert_non_null(k);
        assert_int_equal(fake_disk_add(k, &disk), 0);
        assert_int_equal(fake_disk_add(k, &part), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);
        assert_false(sysfs_disk_pinned_with_queue(s, "sda"));
        assert_int_equal(sysfs_pin_disk(s, "sda"), 0);
        assert_true(sysfs_disk_pinned_with_queue(s, "sda"));
        assert_false(sysfs_disk_pinned_with_queue(s, "sda1"));
        assert_int_equal(sysfs_load_disk(s, "sda", NULL, NULL, &d), 0);
        assert_false(d->partition);
        d = disk_free(d);
        sysfs_unpin_disk(s);
        assert_int_equal(sysfs_pin_disk(s, "sda1"), 0);
        assert_false(sysfs_disk_pinned_with_queue(s, "sda1"));
        assert_int_equal(sysfs_load_disk(s, "sda1", NULL, NULL, &d), 0);
        assert_true(d->partition);
        disk_free(d);
        sysfs_unpin_disk(s);
        sysfs_free(s);
        fake_kernel_free(k);
}
