/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fuzzers know every config key: fuzz/fuzz-conf.dict lists each as a key_* entry, and the
 * seed fuzz/corpus/fuzz-conf/directives.conf sets each one with a valid value. Adding a key to
 * the attribute, tunable or match tables without adding it there fails here. match.property.NAME
 * is there as match.property.DM_UUID.
 */
#include <fcntl.h>
#include <stdio.h>

#include "conf.h"
#include "tests.h"
#include "util.h"

/* Every key the configuration takes, from the tables. */
static char **all_keys(void) {
        char **keys = NULL;

        assert_int_equal(setting_keys(&keys), 0);
        for (MatchField f = 0; f < _MATCH_MAX; f++)
                assert_int_equal(
                        strv_push(&keys, f == MATCH_PROPERTY ? strdup(MATCH_PROPERTY_PREFIX "DM_UUID") :
                                         strdup_printf(MATCH_KEY_PREFIX "%s", match_field_to_string(f))), 0);
        return keys;
}

static void expect_same_keys(char **expected, char **found, const char *where) {
        for (char **k = expected; *k; k++)
                if (!strv_contains(found, *k))
                        fail_msg("%s lacks the key \"%s\"", where, *k);
        for (char **k = found; *k; k++)
                if (!strv_contains(expected, *k))
                        fail_msg("%s has \"%s\", which is no config key", where, *k);
        assert_int_equal(strv_length(found), strv_length(expected));
}

TEST(dictionary) {
        _cleanup_(strv_freep) char **keys = all_keys(), **found = calloc(1, sizeof(char *));
        _cleanup_(freep) char *text = NULL;
        _cleanup_(strv_freep) char **lines = NULL;

        assert_non_null(found);
        assert_int_equal(read_file_bounded(AT_FDCWD, FUZZ_DIR "/fuzz-conf.dict", 1 << 20, &text, NULL), 0);
        assert_int_equal(strv_split(text, "\n", &lines), 0);
        for (char **l = lines; *l; l++) {
                const char *p = startswith(*l, "key_"), *q, *end;

                if (!p)
                        continue;
                q = strstr(p, "=\"");
                assert_non_null(q);
                q += 2;
                end = strchr(q, '"');
                assert_non_null(end);
                assert_string_equal(end, "\"");
                if (strv_contains(found, strndupa(q, end - q)))
                        fail_msg("fuzz-conf.dict lists \"%.*s\" twice", (int) (end - q), q);
                assert_int_equal(strv_push(&found, strndup(q, end - q)), 0);
        }
        expect_same_keys(keys, found, "fuzz/fuzz-conf.dict");
}

TEST(directives) {
        _cleanup_(strv_freep) char **keys = all_keys(), **found = calloc(1, sizeof(char *));
        _cleanup_(strv_freep) char **errors = calloc(1, sizeof(char *));
        _cleanup_(policy_freep) Policy *p = policy_new();
        const Rule *r;

        assert_non_null(p);
        assert_non_null(found);
        assert_int_equal(conf_load_file(FUZZ_DIR "/corpus/fuzz-conf/directives.conf", p, &errors), 0);
        if (!strv_isempty(errors))
                fail_msg("directives.conf: %s", errors[0]);
        assert_int_equal(p->n_rules, 1);
        r = p->rules[0];
        for (size_t i = 0; i < r->n_matches; i++)
                assert_int_equal(
                        strv_push(&found, r->matches[i].property ?
                                                   strdup_printf(MATCH_PROPERTY_PREFIX "%s", r->matches[i].property) :
                                                   strdup_printf(MATCH_KEY_PREFIX "%s",
                                                                 match_field_to_string(r->matches[i].field))),
                        0);
        for (size_t i = 0; i < r->n_settings; i++)
                assert_int_equal(strv_extend(&found, r->settings[i].key), 0);
        expect_same_keys(keys, found, "fuzz/corpus/fuzz-conf/directives.conf");
}

DEFINE_TEST_MAIN(NULL, NULL)
