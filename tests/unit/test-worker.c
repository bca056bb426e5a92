/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker pool: every item runs once, on at most max threads, and comes back through
 * the eventfd; unrun items are handed back at free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <poll.h>
#include <pthread.h>

#include "ioschedd-worker.h"
#include "util.h"

typedef struct Item {
        WorkItem item;          /* first: a WorkItem * is an Item * */
        int runs;
        void *thread_data;
} Item;

static int n_init;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void run(WorkItem *w, void *thread_data) {
        Item *it = (Item *) w;

        usleep(1000);
        it->runs++;
        it->thread_data = thread_data;
}

static int thread_init(void *userdata, void **ret) {
        pthread_mutex_lock(&lock);
        *ret = (void *) (intptr_t) ++n_init;
        pthread_mutex_unlock(&lock);
        return 0;
}

/* Waits for @n items to come back (10 s at most: a lost item fails the test). */
static void take_n(WorkerPool *p, unsigned n) {
        unsigned done = 0;

        while (done < n) {
                struct pollfd pfd = { .fd = worker_pool_get_fd(p), .events = POLLIN };

                assert_true(poll(&pfd, 1, 10000) > 0);
                for (WorkItem *w = worker_pool_take_done(p); w; w = w->next)
                        done++;
        }
        assert_int_equal(done, n);
}

static void test_runs_all(void **state) {
        static const WorkerPoolOps ops = { .thread_init = thread_init };
        enum { N = 200 };
        Item items[N] = {};
        WorkerPool *p;

        n_init = 0;
        assert_int_equal(worker_pool_new(4, &ops, NULL, &p), 0);
        for (int i = 0; i < N; i++) {
                items[i].item.run = run;
                assert_int_equal(worker_pool_submit(p, &items[i].item), 0);
        }
        assert_true(worker_pool_get_n_threads(p) <= 4);

        take_n(p, N);
        assert_int_equal(worker_pool_get_busy(p), 0);
        for (int i = 0; i < N; i++) {
                assert_int_equal(items[i].runs, 1);
                /* Each ran with the data its thread made. */
                assert_true((intptr_t) items[i].thread_data >= 1 && (intptr_t) items[i].thread_data <= 4);
        }
        assert_true(n_init >= 1 && n_init <= 4);
        assert_null(worker_pool_free(p, NULL));
}

static volatile int started;

static void block_run(WorkItem *w, void *thread_data) {
        __atomic_store_n(&started, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_lock(&lock);      /* held by the test until it frees the pool */
        pthread_mutex_unlock(&lock);
        ((Item *) w)->runs++;
}

static void test_free_returns_unrun(void **state) {
        Item items[3] = {};
        WorkItem *l;
        WorkerPool *p;
        int n = 0, ran = 0;

        assert_int_equal(worker_pool_new(1, NULL, NULL, &p), 0);
        pthread_mutex_lock(&lock);
        for (int i = 0; i < 3; i++) {
                items[i].item.run = block_run;
                assert_int_equal(worker_pool_submit(p, &items[i].item), 0);
        }
        /* Let the one thread take the first item, then stop the pool while it waits. */
        while (!__atomic_load_n(&started, __ATOMIC_SEQ_CST))
                usleep(1000);
        pthread_mutex_unlock(&lock);
        assert_null(worker_pool_free(p, &l));
        n = 0;
        for (; l; l = l->next)
                n++;
        for (int i = 0; i < 3; i++)
                ran += items[i].runs;
        /* None was taken: every one comes back, the one that ran and those that did not. */
        assert_int_equal(n, 3);
        assert_true(ran >= 1);
}

static int n_fail;      /* thread_init fails this many more times */

static int failing_init(void *userdata, void **ret) {
        int r = 0;

        pthread_mutex_lock(&lock);
        if (n_fail > 0) {
                n_fail--;
                r = -EMFILE;
        } else
                *ret = (void *) (intptr_t) ++n_init;
        pthread_mutex_unlock(&lock);
        return r;
}

static void test_thread_init_fails(void **state) {
        static const WorkerPoolOps ops = { .thread_init = failing_init };
        Item items[6] = {};
        WorkerPool *p;

        for (int i = 0; i < 6; i++)
                items[i].item.run = run;

        /* The only thread cannot start: its item used to stay queued forever, the thread's
         * place taken, and no other thread ever started. It comes back, not run. */
        n_init = 0;
        n_fail = 1;
        assert_int_equal(worker_pool_new(1, &ops, NULL, &p), 0);
        assert_int_equal(worker_pool_submit(p, &items[0].item), 0);
        take_n(p, 1);
        assert_int_equal(items[0].runs, 0);
        assert_int_equal(items[0].item.error, -EMFILE);
        /* The place is free again: the next item gets a thread that starts, and runs. */
        assert_int_equal(worker_pool_submit(p, &items[1].item), 0);
        take_n(p, 1);
        assert_int_equal(items[1].runs, 1);
        assert_int_equal(items[1].item.error, 0);
        assert_int_equal(n_init, 1);
        assert_int_equal(worker_pool_get_busy(p), 0);
        assert_null(worker_pool_free(p, NULL));

        /* Several threads, the first three fail to start: every item still runs, on the
         * threads started after them, within the limit. */
        n_init = 0;
        n_fail = 3;
        assert_int_equal(worker_pool_new(2, &ops, NULL, &p), 0);
        for (int i = 2; i < 6; i++)
                assert_int_equal(worker_pool_submit(p, &items[i].item), 0);
        /* Items handed back not run are submitted again, as ioschedd's next request would. */
        for (unsigned left = 4; left > 0;) {
                struct pollfd pfd = { .fd = worker_pool_get_fd(p), .events = POLLIN };

                assert_true(poll(&pfd, 1, 10000) > 0);
                for (WorkItem *w = worker_pool_take_done(p), *next; w; w = next) {
                        next = w->next;
                        if (w->error < 0) {
                                assert_int_equal(w->error, -EMFILE);
                                assert_int_equal(worker_pool_submit(p, w), 0);
                        } else
                                left--;
                }
        }
        for (int i = 2; i < 6; i++)
                assert_int_equal(items[i].runs, 1);
        assert_true(worker_pool_get_n_threads(p) <= 2);
        assert_true(n_init >= 1 && n_init <= 2);
        assert_null(worker_pool_free(p, NULL));
}

static void run_fast(WorkItem *w, void *thread_data) {
        ((Item *) w)->runs++;
}

/* Waves of items on many threads, each wave taken back before the next: threads go idle and
 * are woken again and again (the waits and wake-ups of a daemon between bursts of events), and
 * threads that finish find work queued without waiting. Every item runs exactly once. */
static void test_waves(void **state) {
        enum { N = 4000 };
        static Item items[N];
        WorkerPool *p;
        unsigned next = 0, seed = 1;

        memset(items, 0, sizeof(items));
        assert_int_equal(worker_pool_new(32, NULL, NULL, &p), 0);
        while (next < N) {
                unsigned wave = 1 + rand_r(&seed) % 64;

                if (wave > N - next)
                        wave = N - next;
                for (unsigned i = 0; i < wave; i++) {
                        items[next + i].item.run = run_fast;
                        assert_int_equal(worker_pool_submit(p, &items[next + i].item), 0);
                }
                take_n(p, wave);
                next += wave;
        }
        assert_int_equal(worker_pool_get_busy(p), 0);
        for (unsigned i = 0; i < N; i++)
                assert_int_equal(items[i].runs, 1);
        assert_true(worker_pool_get_n_threads(p) <= 32);
        assert_null(worker_pool_free(p, NULL));
}

static void test_bounds(void **state) {
        WorkerPool *p;

        assert_int_equal(worker_pool_new(0, NULL, NULL, &p), -EINVAL);
        assert_int_equal(worker_pool_new(1025, NULL, NULL, &p), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_runs_all),
                cmocka_unit_test(test_free_returns_unrun),
                cmocka_unit_test(test_thread_init_fails),
                cmocka_unit_test(test_waves),
                cmocka_unit_test(test_bounds),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
