/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "conf.h"
#include "policy.h"
#include "tests.h"
#include "util.h"

static Policy *load(const char *text) {
        Policy *p = policy_new();
        _cleanup_(strv_freep) char **errors = calloc(1, sizeof(char *));

        assert_int_equal(conf_parse_text(text, strlen(text), "p.conf", p, &errors), 0);
        return p;
}

static Disk *mkdisk(const char *name, Transport t, int rot, unsigned queues) {
        Disk *d = disk_new(name);

        assert_non_null(d);
        d->transport = t;
        d->rotational = rot;
        d->removable = 0;
        d->nr_hw_queues = queues;
        return d;
}

static bool matches(const char *match_lines, const Disk *d) {
        char text[1024];
        Policy *p;
        bool r;

        snprintf(text, sizeof(text), "[rule t]\n%s\nnr_requests = 1\n", match_lines);
        p = load(text);
        assert_int_equal(p->n_rules, 1);
        r = rule_matches(p->rules[0], d);
        policy_free(p);
        return r;
}

TEST(match) {
        _cleanup_(disk_freep) Disk *sda = mkdisk("sda", TRANSPORT_ATA, 1, 1);
        _cleanup_(disk_freep) Disk *nvme = mkdisk("nvme0n1", TRANSPORT_NVME, 0, 8);
        _cleanup_(disk_freep) Disk *dm = mkdisk("dm-0", TRANSPORT_DM, 0, 0);

        sda->model = strdup("Samsung_SSD_870");
        sda->model_sysfs = strdup("Samsung SSD 870");
        sda->vendor = strdup("ATA");
        sda->serial = strdup("S6PXNS0T123456");
        sda->wwn = strdup("0x5002538f00000001");
        sda->zoned = ZONED_HOST_MANAGED;

        assert_true(matches("match.name = sd*", sda));
        assert_false(matches("match.name = sd*", nvme));
        assert_true(matches("match.name = nvme*|sd[a-c]", sda));
        assert_true(matches("match.name = !nvme*", sda));
        assert_false(matches("match.name = !sd*", sda));
        /* model: udev's spelling or sysfs' */
        assert_true(matches("match.model = Samsung SSD*", sda));
        assert_true(matches("match.model = Samsung_SSD_*", sda));
        assert_false(matches("match.model = Crucial*", sda));
        /* a disk without the field never matches a positive pattern, always a negative one */
        assert_false(matches("match.model = *", nvme));
        assert_true(matches("match.model = !*", nvme));
        assert_true(matches("match.vendor = ATA", sda));
        assert_true(matches("match.serial = S6PX*", sda));
        assert_true(matches("match.wwn = 0x5002538f*", sda));
        assert_true(matches("match.transport = ata|scsi", sda));
        assert_false(matches("match.transport = nvme", sda));
        assert_true(matches("match.transport = !usb", sda));
        assert_true(matches("match.rotational = yes", sda));
        assert_true(matches("match.rotational = 0", nvme));
        assert_true(matches("match.removable = no", sda));
        assert_true(matches("match.zoned = host-managed", sda));
        assert_true(matches("match.zoned = none", nvme));
        assert_true(matches("match.queues = single", sda));
        assert_true(matches("match.queues = multi", nvme));
        /* bio-based queues are neither single nor multi */
        assert_false(matches("match.queues = single|multi", dm));
        /* all keys of a rule must match */
        assert_true(matches("match.name = sd*\nmatch.rotational = 1", sda));
        assert_false(matches("match.name = sd*\nmatch.rotational = 0", sda));

        sda->rotational = -1;
        assert_false(matches("match.rotational = 1", sda));
        assert_false(matches("match.rotational = 0", sda));
}

/* Literal names are compared by hash first, then in full: a list of names matches any of
 * them exactly, both spellings of a model, never a prefix or a longer name. */
TEST(match_literal) {
        _cleanup_(disk_freep) Disk *sda = mkdisk("sda", TRANSPORT_ATA, 1, 1);
        _cleanup_(disk_freep) Disk *loop = mkdisk("loop5017", TRANSPORT_LOOP, 0, 1);

        sda->model = strdup("Samsung_SSD_870");
        sda->model_sysfs = strdup("Samsung SSD 870");
        assert_true(matches("match.name = sdb|sda|nvme*", sda));
        assert_true(matches("match.name = sdb|nvme*|sda", sda));
        assert_false(matches("match.name = sd|sdaa|sdb", sda));
        assert_true(matches("match.name = !sd|sdaa|sdb", sda));
        assert_true(matches("match.model = Crucial|Samsung SSD 870", sda));
        assert_true(matches("match.model = Samsung_SSD_870|Crucial", sda));
        assert_false(matches("match.model = Samsung SSD|Samsung_SSD", sda));
        assert_true(matches("match.name = loop5000|loop5001|loop5016|loop5017|loop5018", loop));
        assert_false(matches("match.name = loop5000|loop5001|loop5016|loop5018|loop501", loop));
}

TEST(match_stack) {
        _cleanup_(disk_freep) Disk *sdb = mkdisk("sdb", TRANSPORT_SCSI, 1, 1);
        _cleanup_(disk_freep) Disk *map = mkdisk("dm-0", TRANSPORT_DM, 1, 1);
        _cleanup_(disk_freep) Disk *lv = mkdisk("dm-1", TRANSPORT_DM, 0, 0);
        _cleanup_(disk_freep) Disk *vda = mkdisk("vda", TRANSPORT_VIRTIO, 1, 1);

        sdb->stack = (Stack) { .role = STACK_ROLE_MULTIPATH_PATH, .upper = strdup("dm-0") };
        map->stack = (Stack) { .role = STACK_ROLE_MULTIPATH_MAP, .dm_kind = strdup("mpath") };
        lv->stack = (Stack) { .role = STACK_ROLE_DM, .dm_kind = strdup("LVM") };
        assert_non_null(sdb->udev = udev_props_new());
        assert_int_equal(udev_props_add(sdb->udev, "DM_MULTIPATH_DEVICE_PATH", "1"), 1);
        assert_int_equal(udev_props_add(sdb->udev, "ID_SCSI_SERIAL", "QM00001 x"), 1);

        assert_true(matches("match.role = multipath-path", sdb));
        assert_false(matches("match.role = multipath-path", map));
        assert_true(matches("match.role = multipath-map|md", map));
        assert_true(matches("match.role = disk", vda));
        assert_true(matches("match.role = !multipath-path", vda));
        assert_false(matches("match.role = !multipath-path", sdb));
        assert_true(matches("match.dm = mpath", map));
        assert_true(matches("match.dm = LV*|CRYPT", lv));
        assert_false(matches("match.dm = *", vda));     /* no dm device: no kind */
        assert_true(matches("match.dm = !*", vda));
        assert_true(matches("match.property.DM_MULTIPATH_DEVICE_PATH = 1", sdb));
        assert_true(matches("match.property.ID_SCSI_SERIAL = QM* x", sdb));
        assert_false(matches("match.property.DM_MULTIPATH_DEVICE_PATH = 1", vda));
        assert_true(matches("match.property.DM_MULTIPATH_DEVICE_PATH = !1", vda));
        /* two properties in one rule: both must match */
        assert_false(matches("match.property.DM_MULTIPATH_DEVICE_PATH = 1\nmatch.property.ID_SCSI_SERIAL = Z*", sdb));
        assert_true(matches("match.property.DM_MULTIPATH_DEVICE_PATH = 1\nmatch.property.ID_SCSI_SERIAL = Q*", sdb));
}

TEST(resolve) {
        _cleanup_(policy_freep) Policy *p = load(
                "[rule base]\n"                         /* 1 */
                "match.name = *\n"                      /* 2 */
                "scheduler = mq-deadline\n"             /* 3 */
                "nr_requests = 128\n"                   /* 4 */
                "read_ahead_kb = 128\n"                 /* 5 */
                "[rule ssd]\n"                          /* 6 */
                "match.rotational = 0\n"                /* 7 */
                "scheduler = none\n"                    /* 8 */
                "wbt_lat_usec = off\n"                  /* 9 */
                "[rule other]\n"                        /* 10 */
                "match.name = nothing-matches-this\n"   /* 11 */
                "read_ahead_kb = 4096\n");              /* 12 */
        _cleanup_(disk_freep) Disk *ssd = mkdisk("sdb", TRANSPORT_ATA, 0, 1);
        _cleanup_(disk_freep) Disk *hdd = mkdisk("sdc", TRANSPORT_ATA, 1, 1);
        _cleanup_(resolved_freep) Resolved *r = NULL, *h = NULL;
        const ResolvedSetting *rs;

        assert_int_equal(policy_resolve(p, ssd, &r), 0);
        assert_int_equal(r->n_rules, 2);
        assert_int_equal(r->n_settings, 4);
        /* in attribute order, each with the rule and line that set it last */
        assert_int_equal(r->settings[0].setting->attr->id, ATTR_SCHEDULER);
        assert_string_equal(r->settings[0].setting->text, "none");
        assert_string_equal(r->settings[0].rule->name, "ssd");
        assert_int_equal(r->settings[0].setting->line, 8);
        assert_int_equal(r->settings[1].setting->attr->id, ATTR_NR_REQUESTS);
        assert_string_equal(r->settings[1].rule->name, "base");
        assert_int_equal(r->settings[2].setting->attr->id, ATTR_WBT_LAT_USEC);
        assert_int_equal(r->settings[3].setting->attr->id, ATTR_READ_AHEAD_KB);
        assert_int_equal(r->settings[3].setting->value.num, 128);
        rs = resolved_find(r, ATTR_WBT_LAT_USEC, NULL);
        assert_non_null(rs);
        assert_string_equal(rs->rule->file, "p.conf");

        assert_int_equal(policy_resolve(p, hdd, &h), 0);
        assert_int_equal(h->n_rules, 1);
        assert_string_equal(h->settings[0].setting->text, "mq-deadline");
        assert_null(resolved_find(h, ATTR_WBT_LAT_USEC, NULL));
}

TEST(resolve_tunables) {
        _cleanup_(policy_freep) Policy *p = load(
                "[rule a]\nmatch.name = sd*\niosched.read_expire = 100\niosched.fifo_batch = 4\n"
                "[rule b]\nmatch.name = sda\niosched.read_expire = 50\n");
        _cleanup_(disk_freep) Disk *d = mkdisk("sda", TRANSPORT_ATA, 0, 1);
        _cleanup_(resolved_freep) Resolved *r = NULL;

        assert_int_equal(policy_resolve(p, d, &r), 0);
        assert_int_equal(r->n_settings, 2);
        assert_string_equal(r->settings[0].setting->tunable, "fifo_batch");
        assert_string_equal(r->settings[1].setting->tunable, "read_expire");
        assert_int_equal(r->settings[1].setting->value.num, 50);
        assert_string_equal(r->settings[1].rule->name, "b");
}

TEST(disk_load_mask) {
        _cleanup_(policy_freep) Policy *p = load(
                "[rule a]\nmatch.name = sd*\nscheduler = none\n"
                "[rule b]\nmatch.queues = single\nnr_requests = 4\n");
        _cleanup_(policy_freep) Policy *q = load("[rule a]\nmatch.model = X*\nwbt_lat_usec = off\n");
        _cleanup_(policy_freep) Policy *f = load("[rule a]\nmatch.rotational = yes\nscheduler = bfq\n");
        DiskLoad l;

        policy_disk_load(f, &l);
        assert_true(l.flags);
        assert_false(l.identity);
        policy_disk_load(p, &l);
        assert_false(l.identity);
        assert_false(l.flags);
        assert_true(l.queues);
        assert_int_equal(l.attrs, (1u << ATTR_SCHEDULER) | (1u << ATTR_NR_REQUESTS));
        policy_disk_load(q, &l);
        assert_true(l.flags);           /* wbt's default depends on rotational */
        assert_true(l.identity);
        assert_false(l.queues);
        assert_int_equal(l.attrs, 1u << ATTR_WBT_LAT_USEC);
        assert_null(l.udev_keys);
}

TEST(udev_keys) {
        _cleanup_(policy_freep) Policy *p = load(
                "[rule a]\nmatch.property.ID_PATH = pci-*\nmatch.property.DM_UUID = mpath-*\nscheduler = none\n"
                "[rule b]\nmatch.property.DM_UUID = LVM-*\nnr_requests = 4\n"
                "[rule c]\nmatch.role = md\nnr_requests = 4\n");
        _cleanup_(policy_freep) Policy *q = load("[rule c]\nmatch.role = md|dm\nnr_requests = 4\n");
        _cleanup_(policy_freep) Policy *r = load("[rule c]\nmatch.role = multipath-path\nnr_requests = 4\n");
        DiskLoad l;

        policy_disk_load(p, &l);
        assert_int_equal(strv_length(l.udev_keys), 2);
        assert_string_equal(l.udev_keys[0], "DM_UUID");
        assert_string_equal(l.udev_keys[1], "ID_PATH");
        assert_true(policy_needs_udev(p));
        /* A role is sysfs' but for a path added again, which udev's rules know first. */
        assert_false(policy_needs_udev(q));
        assert_true(policy_needs_udev(r));
}

DEFINE_TEST_MAIN(NULL, NULL)
