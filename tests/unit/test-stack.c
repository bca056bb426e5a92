/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stack_classify() on the facts the kernel and udev showed in tests/system's guest (Debian's 6.1,
 * multipath-tools 0.9.4, lvm2, mdadm, QEMU NVMe subsystem with two controllers): the names,
 * dm uuids and paths below are the ones read there.
 */
#include "stack.h"
#include "tests.h"
#include "util.h"

static void check(const StackFacts *f, StackRole role, const char *kind, const char *upper) {
        Stack s = {};

        assert_int_equal(stack_classify(f, &s), 0);
        assert_string_equal(stack_role_to_string(s.role), stack_role_to_string(role));
        if (kind)
                assert_string_equal(s.dm_kind, kind);
        else
                assert_null(s.dm_kind);
        if (upper)
                assert_string_equal(s.upper, upper);
        else
                assert_null(s.upper);
        stack_done(&s);
}

TEST(role_names) {
        for (StackRole r = 0; r < _STACK_ROLE_MAX; r++) {
                assert_non_null(stack_role_to_string(r));
                assert_int_equal(stack_role_from_string(stack_role_to_string(r)), r);
        }
        assert_int_equal(stack_role_from_string("multipath"), -EINVAL);
        assert_int_equal(stack_role_from_string(""), -EINVAL);
        assert_null(stack_role_to_string(_STACK_ROLE_MAX));
}

TEST(dm_kind) {
        static const struct {
                const char *uuid, *kind;
        } cases[] = {
                { "mpath-35000c50015ea7100", "mpath" },
                { "LVM-nBUnxiAfr4MNfhFBSd8IEvrh0xaeUZ7V1nGeSj0mJNhC2T8j9se3atJrRtVOrQjf", "LVM" },
                { "CRYPT-LUKS2-0f1e2d3c4b5a69788796a5b4c3d2e1f0-luks", "CRYPT" },
                { "part1-mpath-35000c50015ea7100", "part" },
                { "part12-LVM-abc", "part" },
                { "partx-foo", "partx" },      /* not kpartx's: "part" and digits only */
                { "part-foo", "part" },
                { "stratis-1-private", "stratis" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(freep) char *k = stack_dm_kind(cases[i].uuid);

                assert_string_equal(k, cases[i].kind);
        }
        /* No uuid (dmsetup create without -u), none with a kind, a leading dash. */
        assert_null(stack_dm_kind(NULL));
        assert_int_equal(errno, 0);
        assert_null(stack_dm_kind(""));
        assert_null(stack_dm_kind("nodash"));
        assert_null(stack_dm_kind("-mpath"));
        assert_int_equal(errno, 0);
}

TEST(whole_disks) {
        /* vda, the root; a SATA HDD; an NVMe namespace without a multipath subsystem. */
        check(&(StackFacts) { .name = "vda", .devpath = "/devices/pci0000:00/0000:00:03.0/virtio2/block/vda" },
              STACK_ROLE_DISK, NULL, NULL);
        check(&(StackFacts) { .name = "nvme0n1",
                              .devpath = "/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1",
                              .multipath_device_path = "0" },
              STACK_ROLE_DISK, NULL, NULL);
        /* An LVM physical volume: its queue schedules what the linear target sends it. */
        check(&(StackFacts) { .name = "sde",
                              .holders = (StackHolder[]) { { .name = "dm-1", .dm_uuid = "LVM-nBUnxiAfr4MNf" } },
                              .n_holders = 1, .multipath_device_path = "0" },
              STACK_ROLE_DISK, NULL, NULL);
}

TEST(multipath) {
        /* The map multipath-tools made of one SCSI disk seen through two controllers. */
        check(&(StackFacts) { .name = "dm-0", .devpath = "/devices/virtual/block/dm-0", .dm = true,
                              .dm_uuid = "mpath-35000c50015ea7100" },
              STACK_ROLE_MULTIPATH_MAP, "mpath", NULL);
        /* A path, by holders/: udev still said 0 (the WWID was added after its last event). */
        check(&(StackFacts) { .name = "sdb",
                              .holders = (StackHolder[]) { { .name = "dm-0", .dm_uuid = "mpath-35000c50015ea7100" } },
                              .n_holders = 1, .multipath_device_path = "0" },
              STACK_ROLE_MULTIPATH_PATH, NULL, "dm-0");
        /* A path added again: udev's rules know it, the map does not hold it yet. */
        check(&(StackFacts) { .name = "sdf", .multipath_device_path = "1" }, STACK_ROLE_MULTIPATH_PATH, NULL,
              NULL);
        /* A dmsetup map over a loop device, and the loop device below it. */
        check(&(StackFacts) { .name = "dm-2", .dm = true, .dm_uuid = "mpath-iosdmmp" },
              STACK_ROLE_MULTIPATH_MAP, "mpath", NULL);
        check(&(StackFacts) { .name = "loop0",
                              .holders = (StackHolder[]) { { .name = "dm-2", .dm_uuid = "mpath-iosdmmp" } },
                              .n_holders = 1 },
              STACK_ROLE_MULTIPATH_PATH, NULL, "dm-2");
        /* kpartx's partition of a map is another dm device (linear), not a map. */
        check(&(StackFacts) { .name = "dm-5", .dm = true, .dm_uuid = "part1-mpath-35000c50015ea7100" },
              STACK_ROLE_DM, "part", NULL);
}

TEST(device_mapper) {
        check(&(StackFacts) { .name = "dm-1", .dm = true,
                              .dm_uuid = "LVM-nBUnxiAfr4MNfhFBSd8IEvrh0xaeUZ7V1nGeSj0mJNhC2T8j9se3atJrRtVOrQjf" },
              STACK_ROLE_DM, "LVM", NULL);
        /* dmsetup create without a uuid. */
        check(&(StackFacts) { .name = "dm-3", .dm = true, .dm_uuid = "" }, STACK_ROLE_DM, NULL, NULL);
        /* Known by udev alone (systemd 259's ID_BLOCK_SUBSYSTEM), sysfs without dm/. */
        check(&(StackFacts) { .name = "dm-4", .block_subsystem = "dm" }, STACK_ROLE_DM, NULL, NULL);
}

TEST(md) {
        check(&(StackFacts) { .name = "md127", .devpath = "/devices/virtual/block/md127", .md = true },
              STACK_ROLE_MD, NULL, NULL);
        check(&(StackFacts) { .name = "md0", .block_subsystem = "md" }, STACK_ROLE_MD, NULL, NULL);
        check(&(StackFacts) { .name = "sdc",
                              .holders = (StackHolder[]) { { .name = "md127", .md = true } },
                              .n_holders = 1, .multipath_device_path = "0" },
              STACK_ROLE_MD_MEMBER, NULL, "md127");
        /* An md array on multipath paths would hold them too: the map's claim wins, whatever
         * the order holders/ lists them in. */
        check(&(StackFacts) { .name = "sdx",
                              .holders = (StackHolder[]) { { .name = "md1", .md = true },
                                                           { .name = "dm-7", .dm_uuid = "mpath-3600" } },
                              .n_holders = 2 },
              STACK_ROLE_MULTIPATH_PATH, NULL, "dm-7");
        check(&(StackFacts) { .name = "sdy",
                              .holders = (StackHolder[]) { { .name = "md1", .md = true } },
                              .n_holders = 1, .multipath_device_path = "1" },
              STACK_ROLE_MULTIPATH_PATH, NULL, NULL);
}

TEST(nvme_multipath) {
        /* The head, below the subsystem; bio-based. */
        check(&(StackFacts) { .name = "nvme3n1", .devpath = "/devices/virtual/nvme-subsystem/nvme-subsys3/nvme3n1",
                              .multipath_device_path = "0" },
              STACK_ROLE_NVME_HEAD, NULL, NULL);
        /* Its paths, one per controller, hidden. */
        check(&(StackFacts) { .name = "nvme3c2n1", .devpath = "/devices/pci0000:00/0000:00:0a.0/nvme/nvme2/nvme3c2n1" },
              STACK_ROLE_NVME_PATH, NULL, NULL);
        check(&(StackFacts) { .name = "nvme3c3n1" }, STACK_ROLE_NVME_PATH, NULL, NULL);
        /* Names that only look like it. */
        check(&(StackFacts) { .name = "nvme3c2n1p1" }, STACK_ROLE_DISK, NULL, NULL);
        check(&(StackFacts) { .name = "nvme3cn1" }, STACK_ROLE_DISK, NULL, NULL);
        check(&(StackFacts) { .name = "nvme3c2n1", .devpath = "/devices/virtual/block/nvme3c2n1" },
              STACK_ROLE_DISK, NULL, NULL);
}

TEST(multipath_guard_roles) {
        for (StackRole r = 0; r < _STACK_ROLE_MAX; r++)
                assert_int_equal(stack_role_is_multipath(r),
                                 r == STACK_ROLE_MULTIPATH_MAP || r == STACK_ROLE_MULTIPATH_PATH);
}

/* The events' properties as udevd sent them in the guest (udevadm monitor --udev --property). */
static const char *get_env(const char *key, void *userdata) {
        for (char **p = userdata; *p; p++) {
                const char *v = startswith(*p, key);

                if (v && *v == '=')
                        return v + 1;
        }
        return NULL;
}

TEST(event_no_change) {
        /* The map's first usable event (DM_ACTIVATION=1): a change to act on. */
        char *activation[] = { (char *) "DM_ACTIVATION=1", (char *) "DM_UUID=mpath-35000c50015ea7100",
                               (char *) "DM_SUSPENDED=0", (char *) "MPATH_DEVICE_READY=1", NULL };
        /* multipathd's fail path / reinstate path, and its reload after a path was removed. */
        char *path_failed[] = { (char *) "DM_ACTION=PATH_FAILED", (char *) "DM_NR_VALID_PATHS=1",
                                (char *) "DM_SUSPENDED=0", (char *) "MPATH_DEVICE_READY=1",
                                (char *) "MPATH_UNCHANGED=1", NULL };
        /* The add event of a dm device (no table yet). */
        char *dm_add[] = { (char *) "DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG=1",
                           (char *) "DM_UDEV_DISABLE_DISK_RULES_FLAG=1",
                           (char *) "DM_UDEV_DISABLE_OTHER_RULES_FLAG=1", (char *) "SYSTEMD_READY=0", NULL };
        /* A map without a usable path, as 56-dm-mpath.rules marks it. */
        char *not_ready[] = { (char *) "DM_UUID=mpath-iosdmmp", (char *) "MPATH_DEVICE_READY=0", NULL };
        char *suspended[] = { (char *) "DM_SUSPENDED=1", NULL };
        /* multipath-tools before 0.8.8: a reinstated path without MPATH_UNCHANGED. */
        char *reinstated[] = { (char *) "DM_ACTION=PATH_REINSTATED", (char *) "MPATH_DEVICE_READY=1", NULL };
        char *other_action[] = { (char *) "DM_ACTION=RESIZE", NULL };
        /* A path's own event, and an LVM volume's. */
        char *path_add[] = { (char *) "DM_MULTIPATH_DEVICE_PATH=1", (char *) "SYSTEMD_READY=0", NULL };
        char *lv[] = { (char *) "DM_UUID=LVM-x", (char *) "DM_SUSPENDED=0", (char *) "DM_UDEV_RULES=1", NULL };
        char *none[] = { NULL };
        const char *why = NULL;

        assert_false(stack_event_is_no_change(get_env, activation, &why));
        assert_null(why);
        assert_false(stack_event_is_no_change(get_env, path_add, NULL));
        assert_false(stack_event_is_no_change(get_env, lv, NULL));
        assert_false(stack_event_is_no_change(get_env, none, NULL));
        assert_true(stack_event_is_no_change(get_env, path_failed, &why));
        assert_non_null(strstr(why, "changes nothing"));
        assert_true(stack_event_is_no_change(get_env, dm_add, &why));
        assert_non_null(strstr(why, "device-mapper"));
        assert_true(stack_event_is_no_change(get_env, not_ready, &why));
        assert_non_null(strstr(why, "no usable path"));
        assert_true(stack_event_is_no_change(get_env, suspended, &why));
        assert_non_null(strstr(why, "suspended"));
        assert_true(stack_event_is_no_change(get_env, reinstated, &why));
        assert_non_null(strstr(why, "came back"));
        assert_false(stack_event_is_no_change(get_env, other_action, NULL));
}

DEFINE_TEST_MAIN(NULL, NULL)
