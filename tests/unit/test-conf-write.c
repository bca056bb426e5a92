/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SetPolicy's drop-ins: the identity a disk is matched by, the text, the atomic write. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "conf.h"
#include "ioschedd-conf-write.h"
#include "tests.h"
#include "util.h"

static Disk *mkdisk(const char *name, const char *wwn, const char *serial, const char *model) {
        Disk *d = disk_new(name);

        assert_non_null(d);
        d->wwn = wwn ? strdup(wwn) : NULL;
        d->serial = serial ? strdup(serial) : NULL;
        d->model = model ? strdup(model) : NULL;
        return d;
}

TEST(identity) {
        _cleanup_(disk_freep) Disk *w = mkdisk("sdb", "0x5000c500a1b2c3d4", "ZA1B2C3D", "ST4000NM");
        _cleanup_(disk_freep) Disk *s = mkdisk("sdc", "naa with space", "ZA1B2C3D", "Some Model");
        _cleanup_(disk_freep) Disk *n = mkdisk("loop3", NULL, "bad|serial", NULL);
        DropinId id = {};

        assert_int_equal(dropin_id_for_disk(w, DROPIN_ID_WWN, &id), 0);
        assert_int_equal(id.kind, DROPIN_ID_WWN);
        assert_string_equal(id.value, "0x5000c500a1b2c3d4");
        dropin_id_done(&id);

        /* Asked for no more than a serial: the WWN is not used. */
        assert_int_equal(dropin_id_for_disk(w, DROPIN_ID_SERIAL, &id), 0);
        assert_int_equal(id.kind, DROPIN_ID_SERIAL);
        assert_string_equal(id.value, "ZA1B2C3D");
        assert_string_equal(id.model, "ST4000NM");
        dropin_id_done(&id);

        /* A WWN that is not a literal glob falls to the serial; a model with a space is not
         * matched. */
        assert_int_equal(dropin_id_for_disk(s, DROPIN_ID_WWN, &id), 0);
        assert_int_equal(id.kind, DROPIN_ID_SERIAL);
        assert_null(id.model);
        dropin_id_done(&id);

        assert_int_equal(dropin_id_for_disk(n, DROPIN_ID_WWN, &id), 0);
        assert_int_equal(id.kind, DROPIN_ID_NAME);
        assert_string_equal(id.value, "loop3");
        dropin_id_done(&id);
}

TEST(file_name) {
        DropinId id = { .kind = DROPIN_ID_WWN, .value = (char *) "0x5000c500a1b2c3d4" };
        _cleanup_(freep) char *p = dropin_file_name(&id, false), *r = dropin_file_name(&id, true);

        assert_string_equal(p, "98-ioschedd-wwn-0x5000c500a1b2c3d4.conf");
        assert_string_equal(r, "99-ioschedd-wwn-0x5000c500a1b2c3d4.conf");
        /* The runtime drop-in sorts after the persistent one: its settings win. */
        assert_true(strcmp(p, r) < 0);
}

/* The rendered text loads with the config loader and matches exactly its disk. */
static void check_roundtrip(Disk *d, Disk *other) {
        _cleanup_(policy_freep) Policy *p = policy_new();
        _cleanup_(strv_freep) char **errors = calloc(1, sizeof(char *));
        _cleanup_(freep) char *text = NULL;
        _cleanup_(dropin_id_done) DropinId id = {};
        char *keys[] = { (char *) "scheduler", (char *) "nr_requests", NULL };
        char *values[] = { (char *) "mq-deadline bfq", (char *) "64", NULL };

        assert_int_equal(dropin_id_for_disk(d, DROPIN_ID_WWN, &id), 0);
        assert_int_equal(dropin_render(&id, keys, values, &text), 0);
        assert_int_equal(conf_parse_text(text, strlen(text), "x.conf", p, &errors), 0);
        assert_int_equal(p->n_rules, 1);
        assert_string_equal(p->rules[0]->name, DROPIN_RULE_NAME);
        assert_int_equal(p->rules[0]->n_settings, 2);
        assert_string_equal(p->rules[0]->settings[0].text, "mq-deadline bfq");
        assert_true(rule_matches(p->rules[0], d));
        assert_false(rule_matches(p->rules[0], other));
}

TEST(render) {
        _cleanup_(disk_freep) Disk *w = mkdisk("sdb", "0x5000c500a1b2c3d4", "S1", "M1");
        _cleanup_(disk_freep) Disk *w2 = mkdisk("sdb", "0x5000c500a1b2c3d5", "S1", "M1");
        _cleanup_(disk_freep) Disk *s = mkdisk("sdc", NULL, "S1", "M1");
        _cleanup_(disk_freep) Disk *s2 = mkdisk("sdc", NULL, "S1", "M2");
        _cleanup_(disk_freep) Disk *n = mkdisk("loop3", NULL, NULL, NULL);
        _cleanup_(disk_freep) Disk *n2 = mkdisk("loop33", NULL, NULL, NULL);
        _cleanup_(disk_freep) Disk *bang = mkdisk("!odd", NULL, NULL, NULL);
        _cleanup_(disk_freep) Disk *plain = mkdisk("odd", NULL, NULL, NULL);

        check_roundtrip(w, w2);         /* the WWN decides, not the name */
        check_roundtrip(s, s2);         /* serial and model */
        check_roundtrip(n, n2);         /* a name is not a prefix */
        check_roundtrip(bang, plain);   /* a leading "!" is a character, not a negation */
}

static char tmpdir[] = "/tmp/test-conf-write.XXXXXX";

static int count_entries(const char *dir) {
        DIR *d = opendir(dir);
        int n = 0;

        assert_non_null(d);
        for (struct dirent *de; (de = readdir(d));)
                n += de->d_name[0] != '.' || (de->d_name[1] && strcmp(de->d_name, ".."));
        closedir(d);
        return n;
}

TEST(write_atomic) {
        _cleanup_(freep) char *dir = strdup_printf("%s/etc/iosched.d", tmpdir);
        _cleanup_(freep) char *path = strdup_printf("%s/a.conf", dir), *text = NULL;
        struct stat st;

        /* Creates the directory and its parents. */
        assert_int_equal(dropin_write_atomic(dir, "a.conf", "one\n"), 0);
        assert_int_equal(read_file_bounded(AT_FDCWD, path, 100, &text, NULL), 0);
        assert_string_equal(text, "one\n");
        text = mfree(text);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);

        /* Replaces, and leaves no temporary file behind. */
        assert_int_equal(dropin_write_atomic(dir, "a.conf", "two\n"), 0);
        assert_int_equal(read_file_bounded(AT_FDCWD, path, 100, &text, NULL), 0);
        assert_string_equal(text, "two\n");
        assert_int_equal(count_entries(dir), 1);

        /* Names that are not one file name are refused. */
        assert_int_equal(dropin_write_atomic(dir, "../x.conf", "x"), -EINVAL);
        assert_int_equal(dropin_write_atomic(dir, "a/b.conf", "x"), -EINVAL);
        assert_int_equal(dropin_write_atomic(dir, ".hidden.conf", "x"), -EINVAL);
        assert_int_equal(dropin_write_atomic(dir, "", "x"), -EINVAL);
        assert_int_equal(count_entries(dir), 1);

        assert_int_equal(dropin_remove(dir, "a.conf"), 1);
        assert_int_equal(dropin_remove(dir, "a.conf"), 0);
        assert_int_equal(dropin_remove(dir, "../a.conf"), -EINVAL);
        assert_int_equal(count_entries(dir), 0);
}

static int setup(void **state) {
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
        _cleanup_(freep) char *cmd = strdup_printf("rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

DEFINE_TEST_MAIN(setup, teardown)
