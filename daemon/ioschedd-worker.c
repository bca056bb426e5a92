/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>

#include "ioschedd-worker.h"
#include "log.h"

/*
 * Idle threads wait on a POSIX semaphore (wake), not on a condition variable: submit posts one
 * token per item, a waiting thread takes one token per sem_wait(). The
 * tokens are never fewer than the queued items: each item brings one, and a thread takes an
 * item only after it took a token or without taking one (it finished an item and found the
 * queue not empty), which leaves a spare token: a later read returns at once, the thread finds
 * the queue empty and waits again. So while an item is queued, a waiting thread gets through.
 * sem_post() wakes one waiter (FUTEX_WAKE of 1). An eventfd in semaphore mode, used here
 * before, wakes every thread blocked in read(2) for each token (its wait queue is not
 * exclusive): 32 wake-ups per queued item, 1,600 a second with a 1 s verify interval over 64
 * disks (bench/daemon-idle), where the semaphore costs about 130 (two per disk and pass).
 *
 * Why not a condition variable: glibc's has a lost-wakeup bug (sourceware bug 25847), and
 * Debian 12's glibc 2.36 lists no fix for it. After a lost signal, a later
 * pthread_cond_signal() can block for good waiting for the waiter that was never woken to
 * leave its group (__condvar_quiesce_and_switch_g1). Here the signaller is the event loop
 * holding the pool's lock, so every thread would end up in futex(2) for good: the state
 * daemon-faults-disk saw a few times under heavy load with strace stopping every syscall
 * (docs/reliability.md). A semaphore is one counter and a futex on it: sem_post() never waits
 * for a waiter, and a token posted is there until a sem_wait() takes it.
 */
/* Each thread's stack is ours (mmap), not glibc's: glibc keeps the stacks of ended threads in
 * a cache (40 MiB by default), their touched pages resident; ours are unmapped once the thread
 * is joined, so a thread that ends when idle gives its memory back. */
#define WORKER_STACK_SIZE (256 * 1024)  /* sysfs I/O and the core's small buffers */
#define WORKER_GUARD_SIZE 4096

typedef struct WorkerThread {
        pthread_t id;
        void *stack;            /* WORKER_GUARD_SIZE + WORKER_STACK_SIZE, the guard first */
} WorkerThread;

struct WorkerPool {
        pthread_mutex_t lock;
        sem_t wake;             /* one token per queued item */
        WorkItem *queue_head, *queue_tail;
        WorkItem *done_head, *done_tail;
        unsigned n_queued, n_running;
        unsigned n_threads, n_idle, max_threads;
        unsigned n_waiting;     /* threads in worker_pool_thread_wait() */
        WorkerThread *threads;  /* the n_threads running */
        WorkerThread *dead;     /* the n_dead that ended (before the pool), to be joined */
        unsigned n_dead;        /* n_threads + n_dead <= max_threads */
        unsigned n_end;         /* idle threads asked to end now (worker_pool_end_idle()) */
        sem_t ended;            /* one token per thread that ended so */
        bool stop;
        int efd;
        WorkerPoolOps ops;
        void *userdata;
};

static _Thread_local WorkerPool *thread_pool;   /* the pool of this thread, if any */

/* Called with the lock held, on a thread that ends before the pool does (its thread_init
 * failed, or it was idle for ops.idle_usec). */
static void thread_gone(WorkerPool *p, int error) {
        pthread_t self = pthread_self();

        /* Its place is given back once it is joined (the next submit, or the pool's end), so
         * that a later submit starts another thread. */
        for (unsigned i = 0; i < p->n_threads; i++)
                if (pthread_equal(p->threads[i].id, self)) {
                        p->dead[p->n_dead++] = p->threads[i];
                        p->threads[i] = p->threads[--p->n_threads];
                        break;
                }

        /* The other threads take what is queued. With none left, nothing would ever run it,
         * and whoever waits for it would wait forever: hand it back, not run. */
        if (p->n_threads == 0 && p->queue_head) {
                uint64_t one = 1;

                for (WorkItem *i = p->queue_head; i; i = i->next)
                        i->error = error;
                if (p->done_tail)
                        p->done_tail->next = p->queue_head;
                else
                        p->done_head = p->queue_head;
                p->done_tail = p->queue_tail;
                p->queue_head = p->queue_tail = NULL;
                p->n_queued = 0;
                (void) !write(p->efd, &one, sizeof(one));
        }
}

static void thread_join(WorkerThread t) {
        (void) pthread_join(t.id, NULL);
        (void) munmap(t.stack, WORKER_GUARD_SIZE + WORKER_STACK_SIZE);
}

/* Waits for a token, at most ops.idle_usec when set. Return: true when that time passed. */
static bool idle_wait(WorkerPool *p) {
        struct timespec until;

        if (p->ops.idle_usec == 0) {
                (void) sem_wait(&p->wake);
                return false;
        }
        (void) clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t) (p->ops.idle_usec / 1000000);
        until.tv_nsec += (long) (p->ops.idle_usec % 1000000) * 1000;
        if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
        }
        return sem_clockwait(&p->wake, CLOCK_MONOTONIC, &until) < 0 && errno == ETIMEDOUT;
}

static void *worker_main(void *arg) {
        WorkerPool *p = arg;
        void *thread_data = NULL;

        thread_pool = p;
        if (p->ops.thread_init) {
                int r = p->ops.thread_init(p->userdata, &thread_data);
                if (r < 0) {
                        log_error_errno(r, "Worker thread cannot start: %m");
                        pthread_mutex_lock(&p->lock);
                        p->n_idle--;
                        thread_gone(p, r);
                        pthread_mutex_unlock(&p->lock);
                        return NULL;
                }
        }

        pthread_mutex_lock(&p->lock);
        for (;;) {
                WorkItem *item;
                uint64_t one = 1;

                while (!p->stop && !p->queue_head) {
                        bool timed_out;

                        pthread_mutex_unlock(&p->lock);
                        /* Blocks until a token is there. All signals are blocked on this
                         * thread; EINTR (ptrace) just means: look again. */
                        timed_out = idle_wait(p);
                        pthread_mutex_lock(&p->lock);
                        /* Idle for long, or asked to end: end, taking no token (tokens
                         * stay >= items). What a submit queued meanwhile is seen here, under
                         * the lock. */
                        if ((timed_out || p->n_end > 0) && !p->stop && !p->queue_head) {
                                if (p->n_end > 0) {    /* timed out or not: one of them */
                                        p->n_end--;
                                        (void) sem_post(&p->ended);
                                }
                                p->n_idle--;
                                thread_gone(p, 0);
                                /* The loop's thread joins us (worker_pool_take_done) and
                                 * unmaps our stack. */
                                (void) !write(p->efd, &one, sizeof(one));
                                pthread_mutex_unlock(&p->lock);
                                goto done;
                        }
                }
                if (p->stop)
                        break;

                item = p->queue_head;
                p->queue_head = item->next;
                if (!p->queue_head)
                        p->queue_tail = NULL;
                item->next = NULL;
                p->n_queued--;
                p->n_running++;
                p->n_idle--;
                pthread_mutex_unlock(&p->lock);

                item->error = 0;
                item->run(item, thread_data);

                pthread_mutex_lock(&p->lock);
                p->n_running--;
                p->n_idle++;
                if (p->done_tail)
                        p->done_tail->next = item;
                else {
                        /* One wake for the items that finish before the loop takes them: a
                         * list that was not empty had its wake written, and the loop reads
                         * the eventfd before it takes the list (worker_pool_take_done()).
                         * Never fails short of a counter overflow. */
                        p->done_head = item;
                        (void) !write(p->efd, &one, sizeof(one));
                }
                p->done_tail = item;
        }
        p->n_idle--;
        pthread_mutex_unlock(&p->lock);
done:
        if (p->ops.thread_done)
                p->ops.thread_done(thread_data);
        return NULL;
}

int worker_pool_new(unsigned max_threads, const WorkerPoolOps *ops, void *userdata, WorkerPool **ret) {
        WorkerPool *p;

        if (max_threads < 1 || max_threads > 1024)
                return -EINVAL;
        p = calloc(1, sizeof(WorkerPool));
        if (!p)
                return -ENOMEM;
        p->threads = calloc(max_threads, sizeof(WorkerThread));
        p->dead = calloc(max_threads, sizeof(WorkerThread));
        if (!p->threads || !p->dead) {
                free(p->threads);
                free(p->dead);
                free(p);
                return -ENOMEM;
        }
        p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (p->efd < 0) {
                int r = -errno;
                free(p->threads);
                free(p->dead);
                free(p);
                return r;
        }
        if (sem_init(&p->wake, 0, 0) < 0 || sem_init(&p->ended, 0, 0) < 0) {
                int r = -errno;
                close(p->efd);
                free(p->threads);
                free(p->dead);
                free(p);
                return r;
        }
        pthread_mutex_init(&p->lock, NULL);
        p->max_threads = max_threads;
        if (ops)
                p->ops = *ops;
        p->userdata = userdata;
        *ret = p;
        return 0;
}

WorkerPool *worker_pool_free(WorkerPool *p, WorkItem **ret_unrun) {
        if (!p)
                return NULL;

        pthread_mutex_lock(&p->lock);
        p->stop = true;
        /* A token for every thread: each one that waits wakes up and sees stop. */
        for (unsigned i = 0; i < p->n_threads; i++)
                (void) sem_post(&p->wake);
        pthread_mutex_unlock(&p->lock);
        /* A thread may still move from threads[] to dead[] meanwhile: take both under the lock,
         * joining outside it. */
        for (;;) {
                WorkerThread t;

                pthread_mutex_lock(&p->lock);
                if (p->n_dead > 0)
                        t = p->dead[--p->n_dead];
                else if (p->n_threads > 0)
                        t = p->threads[--p->n_threads];
                else {
                        pthread_mutex_unlock(&p->lock);
                        break;
                }
                pthread_mutex_unlock(&p->lock);
                thread_join(t);
        }

        if (ret_unrun) {
                /* Unrun items first, then finished ones nobody took. */
                if (p->queue_tail)
                        p->queue_tail->next = p->done_head;
                else
                        p->queue_head = p->done_head;
                *ret_unrun = p->queue_head;
        }
        pthread_mutex_destroy(&p->lock);
        sem_destroy(&p->wake);
        sem_destroy(&p->ended);
        close(p->efd);
        free(p->threads);
        free(p->dead);
        free(p);
        return NULL;
}

int worker_pool_get_fd(const WorkerPool *p) {
        return p->efd;
}

/* Called with the lock held. */
static int start_thread(WorkerPool *p) {
        WorkerThread *t = &p->threads[p->n_threads];
        pthread_attr_t attr;
        sigset_t all, saved;
        int r;

        /* 256 KiB is plenty; 32 threads with the default 8 MiB would reserve 256 MiB. */
        t->stack = mmap(NULL, WORKER_GUARD_SIZE + WORKER_STACK_SIZE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
        if (t->stack == MAP_FAILED)
                return -errno;
        if (mprotect(t->stack, WORKER_GUARD_SIZE, PROT_NONE) < 0) {
                r = -errno;
                (void) munmap(t->stack, WORKER_GUARD_SIZE + WORKER_STACK_SIZE);
                return r;
        }
        pthread_attr_init(&attr);
        pthread_attr_setstack(&attr, (char *) t->stack + WORKER_GUARD_SIZE, WORKER_STACK_SIZE);
        /* Signals belong to the event loop's thread (sd_event_add_signal). */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &saved);
        r = -pthread_create(&t->id, &attr, worker_main, p);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                (void) munmap(t->stack, WORKER_GUARD_SIZE + WORKER_STACK_SIZE);
                return r;
        }
        p->n_threads++;
        p->n_idle++;
        return 0;
}

/* Called with the lock held: whether @n_queued items want another thread. */
static bool want_thread(const WorkerPool *p, unsigned n_queued) {
        return p->n_idle < n_queued && p->n_threads < p->max_threads &&
               (p->ops.max_running == 0 || p->n_threads - p->n_waiting < p->ops.max_running);
}

int worker_pool_submit(WorkerPool *p, WorkItem *item) {
        int r = 0;

        item->next = NULL;
        pthread_mutex_lock(&p->lock);
        /* Threads that ended: they left the lock before we got it, so they are just returning. */
        while (p->n_dead > 0)
                thread_join(p->dead[--p->n_dead]);
        if (want_thread(p, p->n_queued + 1)) {
                r = start_thread(p);
                if (r < 0 && p->n_threads > 0)
                        r = 0;  /* the threads we have will get to it */
        }
        if (r >= 0) {
                if (p->queue_tail)
                        p->queue_tail->next = item;
                else
                        p->queue_head = item;
                p->queue_tail = item;
                p->n_queued++;
                /* Cannot fail: the counter would need SEM_VALUE_MAX tokens, and items are
                 * bounded far below (one job per disk at a time). */
                (void) sem_post(&p->wake);
        }
        pthread_mutex_unlock(&p->lock);
        return r;
}

WorkItem *worker_pool_take_done(WorkerPool *p) {
        WorkItem *l;
        uint64_t n;

        (void) !read(p->efd, &n, sizeof(n));
        pthread_mutex_lock(&p->lock);
        l = p->done_head;
        p->done_head = p->done_tail = NULL;
        /* Threads that ended: they left the lock before we got it, so they are just returning. */
        while (p->n_dead > 0)
                thread_join(p->dead[--p->n_dead]);
        pthread_mutex_unlock(&p->lock);
        return l;
}

void worker_pool_end_idle(WorkerPool *p) {
        unsigned n;

        assert(p);
        pthread_mutex_lock(&p->lock);
        /* Only the loop's thread submits: none of these threads gets work meanwhile. */
        n = p->queue_head ? 0 : p->n_idle;
        p->n_end = n;
        for (unsigned i = 0; i < n; i++)
                (void) sem_post(&p->wake);
        pthread_mutex_unlock(&p->lock);
        /* A thread that finishes its item meanwhile may end in an idle one's place: n end. */
        for (unsigned i = 0; i < n; i++)
                while (sem_wait(&p->ended) < 0 && errno == EINTR)
                        ;
        pthread_mutex_lock(&p->lock);
        while (p->n_dead > 0)
                thread_join(p->dead[--p->n_dead]);
        pthread_mutex_unlock(&p->lock);
}

unsigned worker_pool_get_busy(const WorkerPool *p) {
        WorkerPool *q = (WorkerPool *) p;
        unsigned n;

        pthread_mutex_lock(&q->lock);
        n = q->n_queued + q->n_running;
        pthread_mutex_unlock(&q->lock);
        return n;
}

unsigned worker_pool_get_n_threads(const WorkerPool *p) {
        return p->n_threads;
}

void worker_pool_thread_wait(bool begin) {
        WorkerPool *p = thread_pool;

        if (!p)
                return;
        pthread_mutex_lock(&p->lock);
        if (begin) {
                p->n_waiting++;
                /* Failing is no error: the threads there are get to the items later. */
                if (!p->stop && want_thread(p, p->n_queued))
                        (void) start_thread(p);
        } else {
                assert(p->n_waiting > 0);
                p->n_waiting--;
        }
        pthread_mutex_unlock(&p->lock);
}
