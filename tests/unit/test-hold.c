/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Holds (src/hold.c): layered after the configuration's rules, the newest winning key by key;
 * taking one away brings back what is below it.
 */
#include <stdio.h>

#include "conf.h"
#include "hold.h"
#include "tests.h"
#include "util.h"

static Policy *policy(void) {
        static const char text[] =
                "[rule all]\n"
                "match.name = *\n"
                "scheduler = mq-deadline\n"
                "read_ahead_kb = 128\n";
        _cleanup_(strv_freep) char **errors = NULL;
        Policy *p = policy_new();

        assert_non_null(p);
        assert_int_equal(conf_parse_text(text, strlen(text), "/etc/iosched.conf", p, &errors), 0);
        return p;
}

static Hold *hold(uint32_t id, const char *disk, const char *settings) {
        _cleanup_(strv_freep) char **kv = NULL;
        Hold *h = NULL;

        assert_int_equal(hold_new(id, disk, "ioschedctl (pid 42, uid 0)", "bulk copy", 1, &h), 0);
        assert_int_equal(strv_split(settings, " ", &kv), 0);
        for (char **p = kv; *p; p++) {
                char *eq = strchr(*p, '=');

                *eq = 0;
                assert_int_equal(hold_add_setting(h, *p, eq + 1, NULL), 0);
        }
        return h;
}

/* "KEY=VALUE@RULE ..." of what resolves for @disk with @holds on top of the policy. */
static char *resolve(const Policy *p, Hold *const *holds, size_t n, const char *name) {
        _cleanup_(policy_free_borrowedp) Policy *b = NULL;
        _cleanup_(resolved_freep) Resolved *r = NULL;
        _cleanup_(disk_freep) Disk *d = disk_new(name);
        _cleanup_(strv_freep) char **l = calloc(1, sizeof(char *));

        assert_non_null(d);
        assert_int_equal(policy_with_holds(p, holds, n, &b), 0);
        assert_int_equal(policy_resolve(b, d, &r), 0);
        for (size_t i = 0; i < r->n_settings; i++)
                assert_int_equal(strv_push(&l, strdup_printf("%s=%s@%s", r->settings[i].setting->key,
                                                             r->settings[i].setting->text,
                                                             r->settings[i].rule->name)),
                                 0);
        return strv_join(l, " ");
}

#define assert_resolves(p, holds, n, name, expected)                           \
        do {                                                                    \
                _cleanup_(freep) char *_s = resolve(p, holds, n, name);         \
                assert_string_equal(_s, expected);                              \
        } while (0)

TEST(stacked) {
        _cleanup_(policy_freep) Policy *p = policy();
        _cleanup_(hold_unrefp) Hold *a = hold(1, "sda", "scheduler=none read_ahead_kb=4096");
        _cleanup_(hold_unrefp) Hold *b = hold(2, "sda", "scheduler=bfq iosched.low_latency=0");
        Hold *both[] = { a, b }, *only_a[] = { a }, *only_b[] = { b };

        assert_resolves(p, NULL, 0, "sda", "scheduler=mq-deadline@all read_ahead_kb=128@all");
        /* The newest wins key by key; what it does not set comes from below. */
        assert_resolves(p, both, 2, "sda",
                        "scheduler=bfq@hold-2 iosched.low_latency=0@hold-2 read_ahead_kb=4096@hold-1");
        /* Released in either order, the other one and then the policy are back. */
        assert_resolves(p, only_a, 1, "sda", "scheduler=none@hold-1 read_ahead_kb=4096@hold-1");
        assert_resolves(p, only_b, 1, "sda",
                        "scheduler=bfq@hold-2 iosched.low_latency=0@hold-2 read_ahead_kb=128@all");
        /* A hold is for its disk only. */
        assert_resolves(p, both, 2, "sdb", "scheduler=mq-deadline@all read_ahead_kb=128@all");
        /* Without any rule of the configuration. */
        assert_resolves(NULL, only_a, 1, "sda", "scheduler=none@hold-1 read_ahead_kb=4096@hold-1");
}

TEST(provenance) {
        _cleanup_(hold_unrefp) Hold *h = NULL;
        _cleanup_(freep) char *text = NULL;

        assert_int_equal(hold_new(7, "nvme0n1", "evil\ncomm (pid 1, uid 1000)", "copy\x1b[2J", 5, &h), 0);
        assert_string_equal(h->rule->name, "hold-7");
        assert_string_equal(h->rule->file, "hold 7 by evil\\ncomm (pid 1, uid 1000): copy\\x1b[2J");
        assert_int_equal(hold_add_setting(h, "scheduler", "deadline bfq", NULL), 0);
        assert_int_equal(hold_add_setting(h, "wbt_lat_usec", "off", NULL), 0);
        text = hold_settings_text(h);
        assert_string_equal(text, "scheduler=mq-deadline bfq wbt_lat_usec=off");
}

TEST(refused) {
        _cleanup_(hold_unrefp) Hold *h = NULL;
        const char *error = NULL;

        assert_int_equal(hold_new(1, "../sda", "x", "y", 0, &h), -EINVAL);
        assert_null(h);
        assert_int_equal(hold_new(1, "sda", NULL, NULL, 0, &h), 0);
        assert_int_equal(hold_add_setting(h, "match.name", "sdb", &error), -EINVAL);
        assert_non_null(error);
        assert_int_equal(hold_add_setting(h, "no_such_key", "1", NULL), -ENOENT);
        error = NULL;
        assert_int_equal(hold_add_setting(h, "nr_requests", "0", &error), -ERANGE);
        assert_non_null(error);
        assert_int_equal(hold_add_setting(h, "nr_requests", "64", NULL), 0);
        assert_int_equal(hold_add_setting(h, "nr_requests", "32", NULL), -EEXIST);
        assert_int_equal(h->rule->n_settings, 1);
}

DEFINE_TEST_MAIN(NULL, NULL)
