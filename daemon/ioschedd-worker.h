/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

/*
 * A bounded pool of threads for blocking sysfs work. Writes on 6.11+ kernels wait for RCU
 * grace periods (tens of milliseconds) without using the CPU, so many run in parallel; the
 * event loop never waits for one. Finished items are handed back through an eventfd that
 * the loop watches. Threads are started on demand up to the limit (beyond max_running only
 * while others wait) and end when idle.
 *
 * The pool knows nothing of disks: the caller embeds a WorkItem in its own job and keeps
 * at most one job per disk in the pool, which serialises the work of one disk.
 */
typedef struct WorkerPool WorkerPool;

typedef struct WorkItem WorkItem;
struct WorkItem {
        WorkItem *next;
        /* Runs on a worker thread; @thread_data is what thread_init returned for it. */
        void (*run)(WorkItem *item, void *thread_data);
        /* Set by the pool: 0 when run() ran; the negative errno of thread_init when the item
         * comes back from worker_pool_take_done() without running because no thread could
         * start. */
        int error;
};

typedef struct WorkerPoolOps {
        /* Called on each new thread; a negative errno stops the thread (it frees its place:
         * a later submit starts another). When no thread is left to run the queued items,
         * they are handed back not run, with the error in WorkItem.error. */
        int (*thread_init)(void *userdata, void **ret_thread_data);
        void (*thread_done)(void *thread_data);
        /* A thread idle this long ends (its stack goes back to the kernel); a later submit
         * starts another. 0: threads live as long as the pool. */
        uint64_t idle_usec;
        /* At most this many threads that are not waiting (worker_pool_thread_wait()): a thread
         * beyond them starts only while others wait. 0: max_threads. Threads that only use the
         * CPU gain nothing from outnumbering it, and each one's allocations stay spread over
         * the heap between what the loop keeps. */
        unsigned max_running;
} WorkerPoolOps;

/**
 * worker_pool_new() - create a pool
 * @max_threads: at most this many threads (1..1024)
 * @ops: per-thread setup, may be NULL
 * @userdata: passed to ops->thread_init
 * @ret: the pool
 *
 * Return: 0, -EINVAL, -ENOMEM or the errno of eventfd().
 */
int worker_pool_new(unsigned max_threads, const WorkerPoolOps *ops, void *userdata, WorkerPool **ret);

/* Stops the threads after the items they run now; queued items are not run. Every item not
 * taken with worker_pool_take_done(), run or not, is handed back in @ret_unrun (the caller
 * frees them; with NULL they are left to the caller's own bookkeeping). */
WorkerPool *worker_pool_free(WorkerPool *p, WorkItem **ret_unrun);

/* On a pool's thread, around a call that waits without using the CPU: true before it (another
 * thread may start for the queued items), false after it. Elsewhere, nothing. */
void worker_pool_thread_wait(bool begin);

/* The fd to watch for EPOLLIN: readable when finished items are waiting. */
int worker_pool_get_fd(const WorkerPool *p);

/**
 * worker_pool_submit() - queue an item to run on a thread
 * Return: 0, or -ENOMEM/-EAGAIN when no thread exists and none could be started.
 */
int worker_pool_submit(WorkerPool *p, WorkItem *item);

/* Takes every finished item, in the order they finished; clears the eventfd. */
WorkItem *worker_pool_take_done(WorkerPool *p);

/* With nothing queued, ends the threads that are idle now and waits until they are gone: their
 * stacks and malloc's caches go back at once, not after ops.idle_usec. A later submit starts
 * threads again. */
void worker_pool_end_idle(WorkerPool *p);

/* Items queued or running. */
unsigned worker_pool_get_busy(const WorkerPool *p);
unsigned worker_pool_get_n_threads(const WorkerPool *p);
