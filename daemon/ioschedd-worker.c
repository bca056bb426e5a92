/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>

#include "ioschedd-worker.h"
#include "log.h"

struct WorkerPool {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        WorkItem *queue_head, *queue_tail;
        WorkItem *done_head, *done_tail;
        unsigned n_queued, n_running;
        unsigned n_threads, n_idle, max_threads;
        pthread_t *threads;     /* the n_threads started and not gone (see worker_main) */
        bool stop;
        int efd;
        WorkerPoolOps ops;
        void *userdata;
};

/* Called with the lock held, on a thread whose thread_init failed, before it ends. */
static void thread_gone(WorkerPool *p, int error) {
        pthread_t self = pthread_self();

        /* Give its place back, so that a later submit starts another thread, and let it end
         * without a join. */
        for (unsigned i = 0; i < p->n_threads; i++)
                if (pthread_equal(p->threads[i], self)) {
                        p->threads[i] = p->threads[--p->n_threads];
                        break;
                }
        (void) pthread_detach(self);

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

static void *worker_main(void *arg) {
        WorkerPool *p = arg;
        void *thread_data = NULL;

        if (p->ops.thread_init) {
                int r = p->ops.thread_init(p->userdata, &thread_data);
                if (r < 0) {
                        log_error_errno(r, "Worker thread cannot start: %m");
                        pthread_mutex_lock(&p->lock);
                        p->n_idle--;
                        if (!p->stop)
                                thread_gone(p, r);
                        /* else worker_pool_free() joins it */
                        pthread_mutex_unlock(&p->lock);
                        return NULL;
                }
        }

        pthread_mutex_lock(&p->lock);
        for (;;) {
                WorkItem *item;
                uint64_t one = 1;

                while (!p->stop && !p->queue_head)
                        pthread_cond_wait(&p->cond, &p->lock);
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
                else
                        p->done_head = item;
                p->done_tail = item;
                /* Never fails short of a counter overflow, which 2^64 items will not reach. */
                (void) !write(p->efd, &one, sizeof(one));
        }
        p->n_idle--;
        pthread_mutex_unlock(&p->lock);

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
        p->threads = calloc(max_threads, sizeof(pthread_t));
        if (!p->threads) {
                free(p);
                return -ENOMEM;
        }
        p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (p->efd < 0) {
                int r = -errno;
                free(p->threads);
                free(p);
                return r;
        }
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->cond, NULL);
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
        pthread_cond_broadcast(&p->cond);
        /* From now on no thread leaves threads[] (thread_gone() is not called once stopping). */
        pthread_mutex_unlock(&p->lock);
        for (unsigned i = 0; i < p->n_threads; i++)
                pthread_join(p->threads[i], NULL);

        if (ret_unrun) {
                /* Unrun items first, then finished ones nobody took. */
                if (p->queue_tail)
                        p->queue_tail->next = p->done_head;
                else
                        p->queue_head = p->done_head;
                *ret_unrun = p->queue_head;
        }
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        close(p->efd);
        free(p->threads);
        free(p);
        return NULL;
}

int worker_pool_get_fd(const WorkerPool *p) {
        return p->efd;
}

/* Called with the lock held. */
static int start_thread(WorkerPool *p) {
        pthread_attr_t attr;
        sigset_t all, saved;
        int r;

        pthread_attr_init(&attr);
        /* sysfs I/O and the core's small buffers: 256 KiB of stack is plenty, and 32 threads
         * with the default 8 MiB would reserve 256 MiB of address space. */
        pthread_attr_setstacksize(&attr, 256 * 1024);
        /* Signals belong to the event loop's thread (sd_event_add_signal). */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &saved);
        r = -pthread_create(&p->threads[p->n_threads], &attr, worker_main, p);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        pthread_attr_destroy(&attr);
        if (r < 0)
                return r;
        p->n_threads++;
        p->n_idle++;
        return 0;
}

int worker_pool_submit(WorkerPool *p, WorkItem *item) {
        int r = 0;

        item->next = NULL;
        pthread_mutex_lock(&p->lock);
        if (p->n_idle <= p->n_queued && p->n_threads < p->max_threads) {
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
                pthread_cond_signal(&p->cond);
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
        pthread_mutex_unlock(&p->lock);
        return l;
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
