/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "json.h"
#include "tests.h"
#include "util.h"

static void expect(const char *in, const char *out) {
        _cleanup_(freep) char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        json_string(f, in);
        fclose(f);
        assert_string_equal(buf, out);
}

TEST(escapes) {
        expect(NULL, "null");
        expect("", "\"\"");
        expect("mq-deadline", "\"mq-deadline\"");
        expect("a\"b\\c\nd\te", "\"a\\\"b\\\\c\\nd\\te\"");
        expect("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
}

/* Found by fuzz-sysfs-text (fuzz/corpus/fuzz-sysfs-text/non-utf8-scheduler): kernel text that
 * is not UTF-8 was copied into the JSON report, which then was no JSON. */
TEST(utf8) {
        expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe\"");
        expect("a\xff"
               "b",
               "\"a\\ufffdb\"");
        expect("\xc3", "\"\\ufffd\"");            /* truncated at the end */
        expect("\xc3(", "\"\\ufffd(\"");          /* bad continuation */
        expect("\xc0\xaf", "\"\\ufffd\\ufffd\""); /* overlong "/" */
        expect("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
        expect("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");            /* surrogate */
        expect("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
        expect("\xe2\x82", "\"\\ufffd\\ufffd\"");
}

DEFINE_TEST_MAIN(NULL, NULL)
