/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>

#include "hashmap.h"
#include "tests.h"
#include "util.h"

TEST(basic) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        int a, b;

        assert_non_null(h);
        assert_null(hashmap_get(h, "loop0"));
        assert_null(hashmap_remove(h, "loop0"));
        assert_int_equal(hashmap_put(h, "loop0", &a), 0);
        assert_int_equal(hashmap_put(h, "loop0", &b), -EEXIST);
        assert_ptr_equal(hashmap_get(h, "loop0"), &a);
        assert_null(hashmap_get(h, "loop1"));
        assert_int_equal(hashmap_size(h), 1);
        assert_ptr_equal(hashmap_remove(h, "loop0"), &a);
        assert_null(hashmap_get(h, "loop0"));
        assert_int_equal(hashmap_size(h), 0);
        assert_null(hashmap_get(NULL, "x"));
}

/* Random puts and removes against a plain array: every key is found exactly while it is in,
 * across growth and backward-shift deletions. */
#define N 5000
TEST(against_array) {
        _cleanup_(hashmap_freep) Hashmap *h = hashmap_new();
        static char names[N][16];
        static bool in[N];
        size_t n_in = 0;

        assert_non_null(h);
        srand(1);
        for (size_t i = 0; i < N; i++)
                snprintf(names[i], sizeof(names[i]), "sd%zu", i);
        for (unsigned step = 0; step < 200000; step++) {
                size_t k = (size_t) rand() % N;

                if (in[k]) {
                        assert_ptr_equal(hashmap_remove(h, names[k]), names[k]);
                        in[k] = false;
                        n_in--;
                } else {
                        assert_int_equal(hashmap_put(h, names[k], names[k]), 0);
                        in[k] = true;
                        n_in++;
                }
                if (step % 10000 == 0)
                        for (size_t i = 0; i < N; i++)
                                assert_ptr_equal(hashmap_get(h, names[i]), in[i] ? names[i] : NULL);
        }
        assert_int_equal(hashmap_size(h), n_in);
        for (size_t i = 0; i < N; i++)
                assert_ptr_equal(hashmap_get(h, names[i]), in[i] ? names[i] : NULL);
}

DEFINE_TEST_MAIN(NULL, NULL)
