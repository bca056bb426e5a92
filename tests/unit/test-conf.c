/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "conf.h"
#include "fake-kernel.h"
#include "tests.h"
#include "util.h"

/* Parse @text as file "t.conf"; return the error count, leave the policy in *ret. */
static int parse(const char *text, Policy **ret, char ***ret_errors) {
        Policy *p = policy_new();
        char **errors = calloc(1, sizeof(char *));
        int r, n;

        assert_non_null(p);
        r = conf_parse_text(text, strlen(text), "t.conf", p, &errors);
        assert_true(r == 0 || r == -EINVAL);
        assert_true((r == 0) == strv_isempty(errors));
        if (r < 0)
                assert_int_equal(p->n_rules, 0);        /* nothing half-applied */
        *ret = p;
        n = (int) strv_length(errors);
        if (ret_errors)
                *ret_errors = errors;
        else
                strv_free(errors);
        return n;
}

/* Expect exactly one error, starting with "t.conf:LINE:" and containing @what. */
static void expect_error(const char *text, unsigned line, const char *what) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_(strv_freep) char **errors = NULL;
        char prefix[32];

        parse(text, &p, &errors);
        if (strv_length(errors) != 1 || !startswith(errors[0], (snprintf(prefix, sizeof(prefix), "t.conf:%u:", line), prefix)) ||
            !strstr(errors[0], what))
                fail_msg("for %s\nexpected one error at line %u about \"%s\", got: %s", text, line, what,
                         errors && errors[0] ? errors[0] : "(none)");
}

TEST(every_key) {
        static const char *const lines[] = {
                "match.name = loop*|nbd*",
                "match.model = Samsung SSD*",
                "match.vendor = ATA",
                "match.serial = S3Z*",
                "match.wwn = naa.5*",
                "match.transport = nvme|virtio",
                "match.rotational = no",
                "match.removable = 0",
                "match.zoned = none|host-aware",
                "match.queues = single",
                "match.role = multipath-map|md",
                "match.dm = mpath|LVM",
                "match.property.DM_UUID = mpath-*",
                "scheduler = mq-deadline none",
                "wbt_lat_usec = default",
                "nr_requests = 64",
                "read_ahead_kb = 256",
                "max_sectors_kb = 512",
                "rq_affinity = 2",
                "nomerges = 1",
                "add_random = no",
                "iostats = yes",
                "iosched.read_expire = 100",
                "iosched.write_expire = 1000",
                "iosched.writes_starved = 2",
                "iosched.front_merges = 0",
                "iosched.fifo_batch = 8",
                "iosched.async_depth = 32",
                "iosched.prio_aging_expire = 5000",
                "iosched.read_lat_nsec = 1000000",
                "iosched.write_lat_nsec = 5000000",
                "iosched.low_latency = 0",
                "iosched.slice_idle = 0",
                "iosched.slice_idle_us = 0",
                "iosched.back_seek_max = 100",
                "iosched.back_seek_penalty = 2",
                "iosched.fifo_expire_async = 250",
                "iosched.fifo_expire_sync = 125",
                "iosched.max_budget = 0",
                "iosched.strict_guarantees = 1",
                "iosched.timeout_sync = 125",
        };
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_(freep) char *text = NULL;
        char buf[8192] = "[rule all-keys]\n";
        const Rule *r;

        for (size_t i = 0; i < ELEMENTSOF(lines); i++) {
                strcat(buf, lines[i]);
                strcat(buf, "\n");
        }
        assert_int_equal(parse(buf, &p, NULL), 0);
        assert_int_equal(p->n_rules, 1);
        r = p->rules[0];
        assert_string_equal(r->name, "all-keys");
        assert_int_equal(r->n_matches, _MATCH_MAX);
        assert_int_equal(r->n_matches + r->n_settings, ELEMENTSOF(lines));
        /* provenance: each setting knows its line */
        for (size_t i = 0; i < r->n_settings; i++)
                assert_int_equal(r->settings[i].line, 2 + _MATCH_MAX + i);
        assert_string_equal(r->settings[0].key, "scheduler");
        assert_string_equal(r->settings[0].text, "mq-deadline none");
        assert_string_equal(r->settings[1].text, "default");
}

TEST(errors) {
        expect_error("[rule a]\nmatch.name = x\nfrobnicate = 1\n", 3, "unknown key \"frobnicate\"");
        expect_error("[rule a]\nmatch.name = x\niosched.nope = 1\n", 3, "unknown key");
        expect_error("[rule a]\nmatch.colour = x\n", 2, "unknown key");
        expect_error("[rule a]\nmatch.name = x\nnr_requests = lots\n", 3, "invalid value \"lots\" for nr_requests");
        expect_error("[rule a]\nmatch.name = x\nnr_requests = 0\n", 3, "out of range");
        expect_error("[rule a]\nmatch.name = x\nwbt_lat_usec = -5\n", 3, "wbt_lat_usec");
        expect_error("[rule a]\nmatch.name = x\nscheduler = ../../etc\n", 3, "invalid scheduler name");
        expect_error("[rule a]\nmatch.name = x\nadd_random = maybe\n", 3, "boolean");
        expect_error("[rule a]\nmatch.name = x\niocost.rpct = 100.01\n", 3, "invalid value \"100.01\" for iocost.rpct: value out of range (0-100)");
        expect_error("[rule a]\nmatch.name = x\niocost.wpct = -1\n", 3, "not a percentage");
        expect_error("[rule a]\nmatch.name = x\niocost.min = 5%\n", 3, "not a percentage");
        expect_error("[rule a]\nmatch.name = x\niocost.ctrl = manual\n", 3, "\"auto\" or \"user\"");
        expect_error("[rule a]\nmatch.name = x\niocost.rlat = 4294967296\n", 3, "out of range");
        expect_error("[rule a]\nmatch.name = x\niocost.model.rbps = -1\n", 3, "iocost.model.rbps");
        expect_error("[rule a]\nmatch.name = x\niocost.enable = 2\n", 3, "boolean");
        expect_error("[rule a]\nmatch.name = x\niocost.solution = a/b\n", 3, "not a name");
        expect_error("[rule a]\nmatch.name = sd[ab\n", 2, "invalid glob");
        expect_error("[rule a]\nmatch.name = sd\\\n", 2, "invalid glob");
        expect_error("[rule a]\nmatch.transport = firewire\n", 2, "unknown transport");
        expect_error("[rule a]\nmatch.zoned = sometimes\n", 2, "zoned");
        expect_error("[rule a]\nmatch.queues = many\n", 2, "single");
        expect_error("[rule a]\nmatch.rotational = spinning\n", 2, "boolean");
        expect_error("[rule a]\nmatch.role = multipath\n", 2, "unknown role (disk, multipath-map");
        expect_error("[rule a]\nmatch.role = disk|mpath-map\n", 2, "unknown role");
        expect_error("[rule a]\nmatch.dm = LVM[\n", 2, "invalid glob");
        expect_error("[rule a]\nmatch.property.dm_uuid = x\n", 2, "unknown key \"match.property.dm_uuid\"");
        expect_error("[rule a]\nmatch.property. = x\n", 2, "unknown key");
        expect_error("[rule a]\nmatch.property = x\n", 2, "unknown key \"match.property\"");
        expect_error("[rule a]\nmatch.property.DM-UUID = x\n", 2, "unknown key");
        expect_error("[rule a]\nmatch.property.DM_UUID = \n", 2, "empty");
        expect_error("[rule a]\nmatch.property.DM_UUID = x\nmatch.property.DM_UUID = y\n", 3, "set twice");
        expect_error("[rule a]\nmatch.name = \n", 2, "");
        expect_error("[rule a]\nmatch.name = x\nmatch.name = y\n", 3, "set twice");
        expect_error("[rule a]\nmatch.name = x\nscheduler = none\nscheduler = bfq\n", 4, "set twice");
        expect_error("[rule a]\nmatch.name = x\n[rule a]\nmatch.name = y\n", 3, "defined twice");
        expect_error("[rule a]\nscheduler = none\n", 1, "no match.* key");
        expect_error("[global]\nscheduler = none\n", 1, "unknown section [global]");
        expect_error("[rule]\nscheduler = none\n", 1, "unknown section");
        expect_error("[rule a/b]\nmatch.name = x\n", 1, "invalid rule name");
        expect_error("scheduler = none\n[rule a]\nmatch.name = x\n", 1, "outside of a [rule NAME]");
        expect_error("[rule a]\nmatch.name = x\nthis line has no equals sign\n", 3, "syntax error");
        /* Within one rule, whatever the disk: the kernel refuses min above max. */
        expect_error("[rule a]\nmatch.name = x\niocost.max = 80\niocost.min = 90.5\n", 4,
                     "iocost.min = 90.50 (line 4) is above iocost.max = 80.00 (line 3) in [rule a]");
        expect_error("[rule a]\nmatch.name = x\niocost.min = 200\nrq_affinity = 1\niocost.max = 150\n", 5,
                     "is above iocost.max");
        expect_error("[rule a\nmatch.name = x\n", 1, "syntax error");
        expect_error("[rule a]\nmatch.name = x\nscheduler = none # comment\n", 3, "invalid");
}

TEST(hostile) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_(strv_freep) char **errors = NULL;
        char *big, line[400];

        /* a line longer than Debian's inih took (199 characters) is read whole: its value is
         * judged, not a part of it, and the next line keeps its number */
        memset(line, 'a', sizeof(line));
        memcpy(line, "[rule a]\nmatch.name = ", 22);
        memcpy(line + sizeof(line) - 12, "\nbogus = 1\n", 12);
        line[sizeof(line) - 1] = 0;
        {
                _cleanup_(policy_freep) Policy *q = NULL;
                _cleanup_(strv_freep) char **e = NULL;

                assert_int_equal(parse(line, &q, &e), 2);
                assert_non_null(strstr(e[0], "t.conf:2: invalid value \"aaaa"));
                assert_non_null(strstr(e[0], "longer than 256"));
                assert_non_null(strstr(e[1], "t.conf:3: unknown key \"bogus\""));
        }

        /* a rule name up to the limit, and one past it; inih keeps 49 characters of a
         * section, so a longer one must not come through cut to a valid one */
        {
                _cleanup_(policy_freep) Policy *q = NULL;

                assert_int_equal(parse("[rule abcdefghijabcdefghijabcdefghijabcdefghijabc]\nmatch.name = x\n", &q, NULL), 0);
                assert_int_equal(strlen(q->rules[0]->name), RULE_NAME_MAX);
        }
        expect_error("[rule abcdefghijabcdefghijabcdefghijabcdefghijabcd]\nmatch.name = x\n", 1,
                     "invalid rule name");
        expect_error("[rule abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij]\nmatch.name = x\n", 1,
                     "invalid rule name");

        /* inih's own syntax error ends the parse: the broken header's keys are not taken
         * for the rule before it */
        expect_error("[rule a]\nmatch.name = x\n[rule b\nmatch.name = y\nbogus = 1\n", 3, "syntax error");

        /* a NUL in the middle of a line */
        {
                static const char text[] = "[rule a]\nmatch.name = x\x00y\n";
                Policy *q = policy_new();
                char **e = calloc(1, sizeof(char *));

                assert_int_equal(conf_parse_text(text, sizeof(text) - 1, "t.conf", q, &e), -EINVAL);
                assert_int_equal(strv_length(e), 1);
                assert_non_null(strstr(e[0], "t.conf:2: line contains a NUL"));
                assert_int_equal(q->n_rules, 0);
                policy_free(q);
                strv_free(e);
        }

        /* binary junk: errors, never a crash, nothing added */
        {
                unsigned char junk[4096];
                unsigned seed = 1;

                for (int round = 0; round < 50; round++) {
                        Policy *q = policy_new();
                        char **e = calloc(1, sizeof(char *));

                        for (size_t i = 0; i < sizeof(junk); i++)
                                junk[i] = (unsigned char) (rand_r(&seed) & 0xff);
                        (void) conf_parse_text((const char *) junk, sizeof(junk), "junk", q, &e);
                        assert_int_equal(q->n_rules, 0);
                        /* reported in printable, valid UTF-8 lines, and not without end */
                        assert_true(strv_length(e) <= CONF_ERRORS_MAX + 1);
                        for (char **l = e; *l; l++) {
                                assert_true(string_is_printable(*l, 4096));
                                for (const char *c = *l; *c; c += utf8_char_len(c))
                                        assert_true(utf8_char_len(c) > 0);
                        }
                        policy_free(q);
                        strv_free(e);
                }
        }

        /* a file too large */
        big = malloc(CONF_FILE_SIZE_MAX + 2);
        assert_non_null(big);
        memset(big, '#', CONF_FILE_SIZE_MAX + 1);
        big[CONF_FILE_SIZE_MAX + 1] = 0;
        p = policy_new();
        errors = calloc(1, sizeof(char *));
        assert_int_equal(conf_parse_text(big, CONF_FILE_SIZE_MAX + 1, "big", p, &errors), -EINVAL);
        assert_non_null(strstr(errors[0], "larger than"));
        free(big);
}

TEST(escaped_and_bounded) {
        _cleanup_(strv_freep) char **errors = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_(freep) char *many = NULL;
        char *o;

        /* an escape sequence and a lone UTF-8 byte in a value become visible escapes */
        expect_error("[rule a]\nmatch.name = x\nnr_requests = 3\x1b[31m\xff\n", 3,
                     "\"3\\x1b[31m\\xff\" for nr_requests");
        /* valid UTF-8 stays as it is */
        expect_error("[rule a]\nmatch.name = x\nnr_requests = d\xc3\xa9j\xc3\xa0\n", 3, "\"d\xc3\xa9j\xc3\xa0\"");

        /* 50 bad keys: the first CONF_ERRORS_MAX, then one line that says it stopped */
        many = malloc(64 * 60);
        assert_non_null(many);
        o = stpcpy(many, "[rule a]\nmatch.name = x\n");
        for (int i = 0; i < 50; i++)
                o += sprintf(o, "bogus%d = 1\n", i);
        assert_int_equal(parse(many, &p, &errors), CONF_ERRORS_MAX + 1);
        assert_non_null(strstr(errors[CONF_ERRORS_MAX], "too many errors"));
        assert_int_equal(p->n_rules, 0);
}

TEST(escape_for_log) {
        static const struct {
                const char *in, *out;
                size_t max;
        } cases[] = {
                { "loop0", "loop0", 64 },
                { "a\nb", "a\\nb", 64 },
                { "\x1b[2J", "\\x1b[2J", 64 },
                { "back\\slash", "back\\\\slash", 64 },
                { "\xff\xfe", "\\xff\\xfe", 64 },
                { "\xc3\xa9", "\xc3\xa9", 64 },             /* é */
                { "\xc0\xaf", "\\xc0\\xaf", 64 },         /* overlong "/" */
                { "\xed\xa0\x80", "\\xed\\xa0\\x80", 64 }, /* a surrogate */
                { "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 64 }, /* U+1F600 */
                { "\xe2\x82", "\\xe2\\x82", 64 },         /* cut short */
                { "abcdef", "abc...", 3 },
                { "\x01\x02\x03\x04", "\\x01\\x02...", 2 },
                { "", "", 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(freep) char *e = escape_for_log(cases[i].in, cases[i].max);

                assert_non_null(e);
                assert_string_equal(e, cases[i].out);
        }
}

/* min and max in different rules, or equal: for the planner and the disk to judge. */
TEST(iocost_min_max_apart) {
        _cleanup_(policy_freep) Policy *p = NULL;

        assert_int_equal(parse("[rule a]\nmatch.name = x\niocost.min = 90\n"
                               "[rule b]\nmatch.name = x\niocost.max = 80\n", &p, NULL), 0);
        assert_int_equal(p->n_rules, 2);
        p = policy_free(p);
        assert_int_equal(parse("[rule a]\nmatch.name = x\niocost.min = 90\niocost.max = 90\n", &p, NULL), 0);
}

TEST(syntax_friendly) {
        _cleanup_(policy_freep) Policy *p = NULL;

        /* indented keys, comments, blank lines, CRLF, spaces around "=" */
        assert_int_equal(parse("# comment\n; comment\n\n[rule a]\r\n    match.name=loop*\r\n\tscheduler =  none \n"
                               "  nr_requests = 32 ; inline comment\n", &p, NULL), 0);
        assert_int_equal(p->n_rules, 1);
        assert_int_equal(p->rules[0]->n_settings, 2);
        assert_int_equal(p->rules[0]->settings[1].value.num, 32);
        assert_int_equal(p->rules[0]->settings[1].line, 7);
        assert_int_equal(p->rules[0]->line, 4);
        policy_free(TAKE_PTR(p));

        /* a UTF-8 byte order mark at the start of the file, as some editors write; elsewhere
         * it is text like any other */
        assert_int_equal(parse("\xef\xbb\xbf[rule a]\nmatch.name = loop*\nnr_requests = 32\n", &p, NULL), 0);
        assert_int_equal(p->n_rules, 1);
        assert_int_equal(p->rules[0]->settings[0].line, 3);
        policy_free(TAKE_PTR(p));
        assert_int_equal(parse("[rule a]\n\xef\xbb\xbfmatch.name = loop*\n", &p, NULL), 1);
}

/* ---- files, directories, precedence ---- */

static void put(FakeKernel *k, const char *path, const char *text) {
        assert_int_equal(fake_write(k, path, text), 0);
}

TEST(precedence) {
        FakeKernel *k = fake_kernel_new();
        _cleanup_(strv_freep) char **files = NULL, **errors = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        char path[512], link[512];

        assert_non_null(k);
        put(k, "etc/iosched.conf", "[rule main]\nmatch.name = x\nnr_requests = 1\n");
        put(k, "usr/lib/iosched.d/10-vendor.conf", "[rule vendor]\nmatch.name = x\nnr_requests = 2\n");
        put(k, "usr/lib/iosched.d/20-shadowed.conf", "[rule shadowed-usr]\nmatch.name = x\n");
        put(k, "run/iosched.d/20-shadowed.conf", "[rule shadowed-run]\nmatch.name = x\n");
        put(k, "etc/iosched.d/20-shadowed.conf", "[rule shadowed-etc]\nmatch.name = x\n");
        put(k, "run/iosched.d/15-runtime.conf", "[rule runtime]\nmatch.name = x\n");
        put(k, "usr/lib/iosched.d/30-masked.conf", "[rule masked]\nmatch.name = x\n");
        put(k, "run/iosched.d/40-broken.conf", "[rule broken]\nmatch.name = x\nnr_requests = many\n");
        put(k, "etc/iosched.d/50-last.conf", "[rule last]\nmatch.name = x\n");
        put(k, "etc/iosched.d/README", "not a .conf file");
        put(k, "etc/iosched.d/.hidden.conf", "[rule hidden]\nmatch.name = x\n");
        snprintf(link, sizeof(link), "%s/etc/iosched.d/30-masked.conf", k->root);
        assert_int_equal(symlink("/dev/null", link), 0);
        snprintf(link, sizeof(link), "%s/etc/iosched.d/60-dangling.conf", k->root);
        assert_int_equal(symlink("/nonexistent/file.conf", link), 0);

        assert_int_equal(conf_files_list(k->root, &files), 0);
        assert_int_equal(strv_length(files), 7);
        snprintf(path, sizeof(path), "%s/etc/iosched.conf", k->root);
        assert_string_equal(files[0], path);
        assert_non_null(strstr(files[1], "/usr/lib/iosched.d/10-vendor.conf"));
        assert_non_null(strstr(files[2], "/run/iosched.d/15-runtime.conf"));
        assert_non_null(strstr(files[3], "/etc/iosched.d/20-shadowed.conf"));
        assert_non_null(strstr(files[4], "/run/iosched.d/40-broken.conf"));
        assert_non_null(strstr(files[5], "/etc/iosched.d/50-last.conf"));
        assert_non_null(strstr(files[6], "/etc/iosched.d/60-dangling.conf"));

        assert_int_equal(conf_load(k->root, NULL, &p, &errors), 0);
        /* the broken and the dangling file are reported and ignored, the rest apply */
        assert_int_equal(strv_length(errors), 2);
        assert_non_null(strstr(errors[0], "40-broken.conf:3: invalid value \"many\""));
        assert_non_null(strstr(errors[1], "60-dangling.conf:0: cannot read"));
        assert_int_equal(p->n_rules, 5);
        assert_string_equal(p->rules[0]->name, "main");
        assert_string_equal(p->rules[1]->name, "vendor");
        assert_string_equal(p->rules[2]->name, "runtime");
        assert_string_equal(p->rules[3]->name, "shadowed-etc");
        assert_string_equal(p->rules[4]->name, "last");

        /* --config FILE: that file alone */
        policy_free(p);
        strv_free(errors);
        snprintf(path, sizeof(path), "%s/usr/lib/iosched.d/10-vendor.conf", k->root);
        assert_int_equal(conf_load(k->root, path, &p, &errors), 0);
        assert_int_equal(p->n_rules, 1);
        assert_string_equal(p->rules[0]->name, "vendor");
        assert_true(strv_isempty(errors));

        /* a missing root: no files, no errors */
        policy_free(p);
        strv_free(errors);
        assert_int_equal(conf_load("/nonexistent-root", NULL, &p, &errors), 0);
        assert_int_equal(p->n_rules, 0);
        assert_true(strv_isempty(errors));
        /* a missing single file is an error */
        policy_free(p);
        strv_free(errors);
        assert_int_equal(conf_load(NULL, "/nonexistent.conf", &p, &errors), 0);
        assert_int_equal(strv_length(errors), 1);
        assert_non_null(strstr(errors[0], "/nonexistent.conf:0: cannot read"));
        /* a directory given as the file */
        policy_free(p);
        strv_free(errors);
        assert_int_equal(conf_load(NULL, k->root, &p, &errors), 0);
        assert_non_null(strstr(errors[0], "not a regular file"));

        /* masking the main file */
        strv_free(files);
        snprintf(path, sizeof(path), "%s/etc/iosched.conf", k->root);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(symlink("/dev/null", path), 0);
        assert_int_equal(conf_files_list(k->root, &files), 0);
        assert_int_equal(strv_length(files), 6);
        fake_kernel_free(k);
}

/* The vendor's policy is /usr/lib/iosched.conf; the administrator's /etc/iosched.conf replaces
 * it whole, a link to /dev/null there leaves none, and drop-ins apply after either. */
TEST(vendor_main_file) {
        FakeKernel *k = fake_kernel_new();
        _cleanup_(strv_freep) char **files = NULL, **errors = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        char path[512];

        assert_non_null(k);
        put(k, "usr/lib/iosched.conf", "[rule vendor]\nmatch.name = x\nnr_requests = 2\n");
        put(k, "usr/lib/iosched.d/10-more.conf", "[rule more]\nmatch.name = x\n");
        assert_int_equal(conf_files_list(k->root, &files), 0);
        assert_int_equal(strv_length(files), 2);
        snprintf(path, sizeof(path), "%s/usr/lib/iosched.conf", k->root);
        assert_string_equal(files[0], path);
        assert_int_equal(conf_load(k->root, NULL, &p, &errors), 0);
        assert_int_equal(p->n_rules, 2);
        assert_string_equal(p->rules[0]->name, "vendor");
        assert_string_equal(p->rules[0]->file, path);     /* provenance: ROOT/PATH */
        policy_free(TAKE_PTR(p));
        strv_free(TAKE_PTR(errors));
        files = strv_free(files);

        /* /run's comes before /usr/lib's, /etc's before both */
        put(k, "run/iosched.conf", "[rule runtime]\nmatch.name = x\n");
        assert_int_equal(conf_files_list(k->root, &files), 0);
        assert_non_null(strstr(files[0], "/run/iosched.conf"));
        files = strv_free(files);
        put(k, "etc/iosched.conf", "[rule admin]\nmatch.name = x\n");
        assert_int_equal(conf_load(k->root, NULL, &p, &errors), 0);
        assert_int_equal(p->n_rules, 2);
        assert_string_equal(p->rules[0]->name, "admin");
        assert_string_equal(p->rules[1]->name, "more");
        policy_free(TAKE_PTR(p));
        strv_free(TAKE_PTR(errors));

        /* masked in /etc: no main file at all, the drop-ins still apply */
        snprintf(path, sizeof(path), "%s/etc/iosched.conf", k->root);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(symlink("/dev/null", path), 0);
        assert_int_equal(conf_load(k->root, NULL, &p, &errors), 0);
        assert_int_equal(p->n_rules, 1);
        assert_string_equal(p->rules[0]->name, "more");
        assert_true(strv_isempty(errors));
        fake_kernel_free(k);
}

/* A drop-in directory that cannot be read loses its rules: that must be an error, not a
 * silently smaller policy (tests/integration/faults-apply.sh found it). */
TEST(unreadable_dropin_dir) {
        FakeKernel *k = fake_kernel_new();
        _cleanup_(strv_freep) char **errors = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        char path[512];
        pid_t pid;
        int status;

        assert_non_null(k);
        put(k, "etc/iosched.conf", "[rule main]\nmatch.name = x\nnr_requests = 1\n");
        put(k, "etc/iosched.d/10-a.conf", "[rule a]\nmatch.name = x\n");
        put(k, "usr/lib/iosched.d/20-b.conf", "[rule b]\nmatch.name = x\n");

        /* A file where a directory should be: ENOTDIR, also for root. */
        snprintf(path, sizeof(path), "%s/run/iosched.d", k->root);
        assert_int_equal(mkdir(path, 0755) < 0 ? -errno : 0, -ENOENT);
        put(k, "run/iosched.d", "not a directory");
        assert_int_equal(conf_load(k->root, NULL, &p, &errors), 0);
        assert_int_equal(strv_length(errors), 1);
        assert_non_null(strstr(errors[0], "/run/iosched.d:0: cannot read directory: Not a directory"));
        assert_int_equal(p->n_rules, 3);        /* the others still load */
        policy_free(TAKE_PTR(p));
        errors = strv_free(errors);

        /* Unreadable (mode 000): root reads through modes, so check as nobody. */
        assert_int_equal(chmod(k->root, 0755), 0);
        snprintf(path, sizeof(path), "%s/etc/iosched.d", k->root);
        assert_int_equal(chmod(path, 0), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                Policy *q = NULL;
                char **e = NULL;

                if (geteuid() == 0 && (setresgid(65534, 65534, 65534) < 0 ||
                                       setresuid(65534, 65534, 65534) < 0))
                        _exit(10);
                if (conf_load(k->root, NULL, &q, &e) < 0)
                        _exit(11);
                /* run/iosched.d is still a file: two errors, etc/iosched.d's first. */
                if (strv_length(e) != 2 ||
                    !strstr(e[0], "/etc/iosched.d:0: cannot read directory: Permission denied"))
                        _exit(12);
                if (q->n_rules != 2)
                        _exit(13);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_int_equal(chmod(path, 0755), 0);
        fake_kernel_free(k);
}

/* Errors and file names end up on the bus (ConfigErrors, ConfigFiles, Reload's reply), which
 * takes UTF-8 only: a value that was not UTF-8 left Reload without an answer (errors are
 * escaped now), and a drop-in whose name is not UTF-8 made ConfigFiles unreadable. */
TEST(not_utf8) {
        _cleanup_(strv_freep) char **errors = NULL;
        _cleanup_(policy_freep) Policy *p = NULL;
        FakeKernel *k;

        /* Bytes that are not UTF-8 in a value or a glob: errors, in UTF-8 themselves. */
        assert_int_equal(parse("[rule a]\nmatch.name = x\nnr_requests = 3\xff\n", &p, &errors), 1);
        assert_true(utf8_is_valid(errors[0]));
        policy_free(TAKE_PTR(p));
        errors = strv_free(errors);
        assert_int_equal(parse("[rule a]\nmatch.model = caf\xe9*\n", &p, &errors), 1);
        assert_true(utf8_is_valid(errors[0]));
        policy_free(TAKE_PTR(p));
        errors = strv_free(errors);
        /* Valid UTF-8 is fine, in comments and in globs. */
        assert_int_equal(parse("# caf\xc3\xa9\n[rule a]\nmatch.model = caf\xc3\xa9*\n", &p, NULL), 0);
        policy_free(TAKE_PTR(p));

        /* A drop-in whose name is not UTF-8 is reported (without the name) and ignored. */
        k = fake_kernel_new();
        assert_non_null(k);
        put(k, "etc/iosched.d/10-caf\xe9.conf", "[rule latin1]\nmatch.name = x\n");
        put(k, "etc/iosched.d/20-ok.conf", "[rule ok]\nmatch.name = x\n");
        assert_int_equal(conf_load(k->root, NULL, &p, &errors), 0);
        assert_int_equal(strv_length(errors), 1);
        assert_non_null(strstr(errors[0], "/etc/iosched.d:0: ignoring a drop-in whose name is not valid UTF-8"));
        assert_int_equal(p->n_rules, 1);
        assert_string_equal(p->rules[0]->name, "ok");
        for (char **e = errors; *e; e++)
                assert_true(utf8_is_valid(*e));
        fake_kernel_free(k);
}

DEFINE_TEST_MAIN(NULL, NULL)
