/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A disk's identity strings come from the device (sysfs) and from udev, and are bytes. They
 * are published on the bus and printed in JSON, which take UTF-8 only: one USB stick with a
 * model that is not UTF-8 made GetAll of its object, and GetManagedObjects of every disk, fail
 * (tests/integration/daemon-hostile.sh found it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h> /* after the headers it needs */

#include "fake-kernel.h"
#include "policy.h"
#include "util.h"

static void test_utf8_helpers(void **state) {
        _cleanup_(freep) char *a = NULL, *b = NULL, *c = NULL;

        assert_true(utf8_is_valid(""));
        assert_true(utf8_is_valid("Samsung SSD 980 \xe2\x80\x93 PRO \xf0\x9f\x92\xbe"));
        assert_false(utf8_is_valid("bad\xff"));
        assert_false(utf8_is_valid("\xc0\xaf"));         /* overlong */
        assert_false(utf8_is_valid("\xed\xa0\x80"));     /* surrogate */
        assert_false(utf8_is_valid("\xf4\x90\x80\x80")); /* past U+10FFFF */
        assert_false(utf8_is_valid("\xe2\x82"));         /* cut short */
        a = utf8_make_valid("bad\xff\xfemodel");
        assert_string_equal(a, "bad\xef\xbf\xbd\xef\xbf\xbdmodel");
        b = utf8_make_valid("ser\xc3(ial");
        assert_string_equal(b, "ser\xef\xbf\xbd(ial");
        c = utf8_make_valid("caf\xc3\xa9");
        assert_string_equal(c, "caf\xc3\xa9");
}

static void test_identity_is_utf8(void **state) {
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
                         (char *) "ID_WWN=0x5000\x80", NULL};
        FakeKernel *k = fake_kernel_new();
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        _cleanup_(disk_freep) Disk *d = NULL, *e = NULL;
        Match m;

        assert_non_null(k);
        assert_int_equal(fake_disk_add(k, &spec), 0);
        assert_int_equal(sysfs_new(k->root, &s), 0);

        /* From sysfs alone. */
        assert_int_equal(sysfs_load_disk(s, "sdz", (char *[]){NULL}, NULL, &d), 0);
        assert_string_equal(d->model_sysfs, "WD\xef\xbf\xbd\xef\xbf\xbd"
                                            "Disk");
        assert_string_equal(d->model, d->model_sysfs);
        assert_string_equal(d->vendor_sysfs, "AT\xef\xbf\xbd");
        assert_string_equal(d->serial, "S\xef\xbf\xbd\xef\xbf\xbdN");

        /* udev's properties. */
        assert_int_equal(sysfs_load_disk(s, "sdz", props, NULL, &e), 0);
        assert_string_equal(e->model, "bad\xef\xbf\xbdmodel");
        assert_string_equal(e->serial, "ser\xef\xbf\xbd(ial");
        assert_string_equal(e->wwn, "0x5000\xef\xbf\xbd");
        assert_true(utf8_is_valid(e->model_sysfs) && utf8_is_valid(e->vendor_sysfs));

        /* Still matched by a glob around the unknown byte. */
        assert_int_equal(match_parse(MATCH_MODEL, "bad*model", &m, NULL), 0);
        assert_true(match_test(&m, e));
        match_done(&m);
        fake_kernel_free(k);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf8_helpers),
                cmocka_unit_test(test_identity_is_utf8),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
