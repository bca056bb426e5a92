/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The unit tests' frame, after systemd's src/shared/tests.h: TEST(id) { ... } defines
 * test_id() and registers it under that name, and DEFINE_TEST_MAIN() runs every test the file
 * registered, in the order of the file. No file keeps a list of its tests, so a new test cannot
 * be left out of one, and no file repeats cmocka's main(). */

#include <errno.h>
/* cmocka.h uses jmp_buf, va_list and size_t and includes none of their headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

typedef struct TestEntry {
        const char *name;
        CMUnitTestFunction func;
        unsigned line;
} TestEntry;

/* Each TEST() puts one TestEntry into the section IOSCHED_TEST_TABLE, and the linker delimits
 * the section with __start_IOSCHED_TEST_TABLE and __stop_IOSCHED_TEST_TABLE (it does so for a
 * section whose name is a C identifier). The entries must lie in it one after the other, like
 * an array:
 * - aligned to a pointer, as the struct is: a global may otherwise be given a larger alignment,
 *   and the padding would stand between two entries;
 * - used and retain: nothing names an entry, and neither the compiler nor the linker's
 *   --gc-sections may drop one as unreferenced;
 * - AddressSanitizer pads each global it instruments with a redzone, which would stand between
 *   two entries: gcc leaves globals in a named section alone, and so does clang 14 with a
 *   section named like a C identifier, but on clang the attribute makes it sure. */
#if defined(__has_attribute)
#  if __has_attribute(retain)
#    define _TEST_RETAIN_ __attribute__((retain))
#  endif
#endif
#ifndef _TEST_RETAIN_
#  define _TEST_RETAIN_
#endif
#if defined(__clang__)
#  define _TEST_NO_SANITIZE_ADDRESS_ __attribute__((no_sanitize("address")))
#else
#  define _TEST_NO_SANITIZE_ADDRESS_
#endif

#define TEST(id)                                                                        \
        static void test_##id(void **state);                                            \
        static const TestEntry test_entry_##id                                          \
                __attribute__((section("IOSCHED_TEST_TABLE"), used, aligned(sizeof(void *)))) \
                _TEST_RETAIN_ _TEST_NO_SANITIZE_ADDRESS_ = {                            \
                        .name = "test_" #id,                                            \
                        .func = test_##id,                                              \
                        .line = __LINE__,                                               \
                };                                                                      \
        static void test_##id(void **state)

/* Weak: a file without a single TEST() still links, and fails when it runs (tests_run()). */
extern const TestEntry __start_IOSCHED_TEST_TABLE[] __attribute__((weak, visibility("hidden")));
extern const TestEntry __stop_IOSCHED_TEST_TABLE[] __attribute__((weak, visibility("hidden")));

static inline int test_entry_compare(const void *a, const void *b) {
        const TestEntry *x = a, *y = b;

        return (x->line > y->line) - (x->line < y->line);
}

/* The linker promises no order of the entries: sorted by line, the tests run in the order they
 * stand in the file, in every build. */
static inline int tests_run(const char *group, CMFixtureFunction setup, CMFixtureFunction teardown) {
        size_t n = __stop_IOSCHED_TEST_TABLE - __start_IOSCHED_TEST_TABLE;
        TestEntry *entries;
        struct CMUnitTest *tests;
        int r;

        /* A table that came out empty (a section dropped or renamed) must not pass as "0 tests". */
        if (n == 0) {
                fprintf(stderr, "%s: no tests registered (TEST() in section IOSCHED_TEST_TABLE)\n", group);
                return 1;
        }
        entries = calloc(n, sizeof(*entries));
        tests = calloc(n, sizeof(*tests));
        if (!entries || !tests) {
                free(entries);
                free(tests);
                fprintf(stderr, "%s: out of memory\n", group);
                return 1;
        }
        for (size_t i = 0; i < n; i++)
                entries[i] = __start_IOSCHED_TEST_TABLE[i];
        qsort(entries, n, sizeof(*entries), test_entry_compare);
        for (size_t i = 0; i < n; i++)
                tests[i] = (struct CMUnitTest) { .name = entries[i].name, .test_func = entries[i].func };

        /* cmocka_run_group_tests_name() is a macro that counts a fixed array; this array is not. */
        r = _cmocka_run_group_tests(group, tests, n, setup, teardown);
        free(entries);
        free(tests);
        return r;
}

/* The group setup and teardown run once, before the first test and after the last; either may
 * be NULL. */
#define DEFINE_TEST_MAIN(setup, teardown)                                               \
        int main(void) {                                                                \
                return tests_run(program_invocation_short_name, setup, teardown);       \
        }
