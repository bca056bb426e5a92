/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The worker pool: every item runs once, on at most max threads, and comes back through
 * the eventfd; unrun items are handed back at free. */
#include <poll.h>
#include <pthread.h>

#include "ioschedd-worker.h"
#include "tests.h"
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

TEST(runs_all) {
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

/* Threads that only use the CPU are no more than max_running, however many items wait. */
TEST(max_running) {
        static const WorkerPoolOps ops = { .thread_init = thread_init, .max_running = 2 };
        enum { N = 50 };
        Item items[N] = {};
        WorkerPool *p;

        assert_int_equal(worker_pool_new(8, &ops, NULL, &p), 0);
        for (int i = 0; i < N; i++) {
                items[i].item.run = run;
                assert_int_equal(worker_pool_submit(p, &items[i].item), 0);
                assert_true(worker_pool_get_n_threads(p) <= 2);
        }
        take_n(p, N);
        for (int i = 0; i < N; i++)
                assert_int_equal(items[i].runs, 1);
        assert_null(worker_pool_free(p, NULL));
}

static unsigned n_in_wait;

/* Waits (as a write would) until all 8 items wait at once, 10 s at most. */
static void wait_run(WorkItem *w, void *thread_data) {
        Item *it = (Item *) w;

        worker_pool_thread_wait(true);
        __atomic_add_fetch(&n_in_wait, 1, __ATOMIC_SEQ_CST);
        for (int i = 0; i < 10000 && __atomic_load_n(&n_in_wait, __ATOMIC_SEQ_CST) < 8; i++)
                usleep(1000);
        it->runs = __atomic_load_n(&n_in_wait, __ATOMIC_SEQ_CST) >= 8 ? 1 : -1;
        worker_pool_thread_wait(false);
}

/* A thread that waits makes room for another: 8 items that wait run at once with
 * max_running 1 (8 threads), none is left queued behind a waiting one. */
TEST(waiting_threads_make_room) {
        static const WorkerPoolOps ops = { .thread_init = thread_init, .max_running = 1 };
        Item items[8] = {};
        WorkerPool *p;

        n_in_wait = 0;
        worker_pool_thread_wait(true);  /* not a pool's thread: nothing */
        worker_pool_thread_wait(false);
        assert_int_equal(worker_pool_new(8, &ops, NULL, &p), 0);
        for (int i = 0; i < 8; i++) {
                items[i].item.run = wait_run;
                assert_int_equal(worker_pool_submit(p, &items[i].item), 0);
        }
        take_n(p, 8);
        for (int i = 0; i < 8; i++)
                assert_int_equal(items[i].runs, 1);
        assert_int_equal(worker_pool_get_n_threads(p), 8);
        assert_null(worker_pool_free(p, NULL));
}

static volatile int started;

static void block_run(WorkItem *w, void *thread_data) {
        __atomic_store_n(&started, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_lock(&lock);      /* held by the test until it frees the pool */
        pthread_mutex_unlock(&lock);
        ((Item *) w)->runs++;
}

TEST(free_returns_unrun) {
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

TEST(thread_init_fails) {
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

/* Submits @n items in waves of 1..@max_wave, each taken back before the next; then every
 * item has run exactly once. */
static void run_waves(WorkerPool *p, Item *items, unsigned n, unsigned max_wave, unsigned seed) {
        unsigned next = 0;

        while (next < n) {
                unsigned wave = 1 + rand_r(&seed) % max_wave;

                if (wave > n - next)
                        wave = n - next;
                for (unsigned i = 0; i < wave; i++) {
                        items[next + i].item.run = run_fast;
                        assert_int_equal(worker_pool_submit(p, &items[next + i].item), 0);
                }
                take_n(p, wave);
                next += wave;
        }
        for (unsigned i = 0; i < n; i++)
                assert_int_equal(items[i].runs, 1);
}

/* Waves of items on many threads, each wave taken back before the next: threads go idle and
 * are woken again and again (the waits and wake-ups of a daemon between bursts of events), and
 * threads that finish find work queued without waiting. Every item runs exactly once. */
TEST(waves) {
        enum { N = 4000 };
        static Item items[N];
        WorkerPool *p;

        memset(items, 0, sizeof(items));
        assert_int_equal(worker_pool_new(32, NULL, NULL, &p), 0);
        run_waves(p, items, N, 64, 1);
        assert_int_equal(worker_pool_get_busy(p), 0);
        assert_true(worker_pool_get_n_threads(p) <= 32);
        assert_null(worker_pool_free(p, NULL));
}

static int n_done;

static void thread_done(void *thread_data) {
        pthread_mutex_lock(&lock);
        n_done++;
        pthread_mutex_unlock(&lock);
}

/* Threads that end when idle (1 µs: at nearly every empty queue, racing the next submit):
 * every item still runs exactly once, each ended thread is done once, none is left at rest. */
TEST(idle_exit) {
        static const WorkerPoolOps ops = { .thread_init = thread_init, .thread_done = thread_done,
                                           .idle_usec = 1 };
        enum { N = 2000 };
        static Item items[N];
        WorkerPool *p;

        memset(items, 0, sizeof(items));
        n_init = n_done = 0;
        assert_int_equal(worker_pool_new(8, &ops, NULL, &p), 0);
        run_waves(p, items, N, 16, 2);
        /* 10 s at most for the last ones to see their time pass. */
        for (int i = 0; i < 10000 && worker_pool_get_n_threads(p) > 0; i++)
                usleep(1000);
        assert_int_equal(worker_pool_get_n_threads(p), 0);
        assert_null(worker_pool_free(p, NULL));
        assert_true(n_init > 1);        /* threads were started again after others ended */
        assert_int_equal(n_done, n_init);
}

static void slow_run(WorkItem *w, void *thread_data) {
        usleep(20000);
        run(w, thread_data);
}

/* worker_pool_end_idle(): the idle threads are gone when it returns, each one done once; one
 * running meanwhile finishes its item; a later submit starts threads again. With idle_usec = 1
 * the threads also end by their own timeout at the same time: it must not wait for them. */
TEST(end_idle) {
        static const WorkerPoolOps ops_long = { .thread_init = thread_init, .thread_done = thread_done,
                                                .idle_usec = 60 * 1000000ULL };
        static const WorkerPoolOps ops_short = { .thread_init = thread_init, .thread_done = thread_done,
                                                 .idle_usec = 1 };
        const WorkerPoolOps *ops[] = { &ops_long, &ops_short };
        enum { N = 64 };
        static Item items[N];

        for (size_t k = 0; k < ELEMENTSOF(ops); k++) {
                Item slow = { .item.run = slow_run };
                WorkerPool *p;

                memset(items, 0, sizeof(items));
                n_init = n_done = 0;
                assert_int_equal(worker_pool_new(8, ops[k], NULL, &p), 0);
                run_waves(p, items, N, N, 1);
                if (k == 0)
                        assert_true(worker_pool_get_n_threads(p) > 1);
                worker_pool_end_idle(p);
                assert_int_equal(worker_pool_get_n_threads(p), 0);
                assert_int_equal(n_done, n_init);

                /* Threads again; one busy while the others are asked to end. */
                memset(items, 0, sizeof(items));
                run_waves(p, items, N, N, 1);
                assert_int_equal(worker_pool_submit(p, &slow.item), 0);
                usleep(5000);
                worker_pool_end_idle(p);
                assert_true(worker_pool_get_n_threads(p) <= 1);
                take_n(p, 1);
                assert_int_equal(slow.runs, 1);
                assert_null(worker_pool_free(p, NULL));
                assert_int_equal(n_done, n_init);
        }
}

/* Items that finish before the loop takes them share one wake: the eventfd counts 1 for all
 * of them, and one take returns every one. */
TEST(one_wake_for_several_done) {
        enum { N = 8 };
        Item items[N] = {};
        WorkerPool *p;
        uint64_t wakes = 0;
        unsigned done = 0;

        assert_int_equal(worker_pool_new(1, NULL, NULL, &p), 0);
        for (int i = 0; i < N; i++) {
                items[i].item.run = run;
                assert_int_equal(worker_pool_submit(p, &items[i].item), 0);
        }
        /* Until the one thread has finished all of them (10 s at most). */
        for (int i = 0; i < 10000 && worker_pool_get_busy(p) > 0; i++)
                usleep(1000);
        assert_int_equal(worker_pool_get_busy(p), 0);
        assert_int_equal(read(worker_pool_get_fd(p), &wakes, sizeof(wakes)), sizeof(wakes));
        assert_int_equal(wakes, 1);
        for (WorkItem *w = worker_pool_take_done(p); w; w = w->next)
                done++;
        assert_int_equal(done, N);
        assert_null(worker_pool_free(p, NULL));
}

TEST(bounds) {
        WorkerPool *p;

        assert_int_equal(worker_pool_new(0, NULL, NULL, &p), -EINVAL);
        assert_int_equal(worker_pool_new(1025, NULL, NULL, &p), -EINVAL);
}

DEFINE_TEST_MAIN(NULL, NULL)
