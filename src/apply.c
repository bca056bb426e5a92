/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "apply.h"
#include "log.h"
#include "util.h"

static void sleep_usec(uint64_t usec) {
        struct timespec ts = {
                .tv_sec = usec / 1000000,
                .tv_nsec = (usec % 1000000) * 1000,
        };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* On 6.18 concurrent writers to one queue get EBUSY (update_nr_hwq_lock is a trylock). */
static int write_retrying(Sysfs *s, const char *disk, const AttrInfo *a, const char *tunable,
                          const char *value) {
        uint64_t delay = APPLY_BUSY_DELAY_USEC;
        int r = -EBUSY;

        for (unsigned i = 0; i < APPLY_BUSY_TRIES; i++) {
                r = sysfs_write_setting(s, disk, a, tunable, value);
                if (r != -EBUSY && r != -EAGAIN && r != -EINTR)
                        return r;
                log_debug("%s: writing %s got %s, retrying in %llu us", disk,
                          tunable ?: a->key, strerror(-r), (unsigned long long) delay);
                sleep_usec(delay);
                delay = delay * 2 > APPLY_BUSY_DELAY_MAX_USEC ? APPLY_BUSY_DELAY_MAX_USEC : delay * 2;
        }
        return r;
}

/* The disk asked for is not there any more: no such name, or another device has it. */
static bool disk_is_gone(Sysfs *s, const Disk *d) {
        _cleanup_(disk_freep) Disk *probe = NULL;
        int r;

        r = sysfs_load_disk(s, d->name, NULL, &(DiskLoad) {}, &probe);
        if (r == -ENODEV || r == -ENOENT)
                return true;
        /* Same name, other device (another number, or the same number and another
         * diskseq): the old one is gone. */
        return r >= 0 && (!streq_ptr(probe->devnum, d->devnum) ||
                          (probe->diskseq > 0 && d->diskseq > 0 && probe->diskseq != d->diskseq));
}

/* ENODEV from a write to an open queue attribute: kernfs deactivated the file, which happens
 * only when the disk it belongs to is deleted. Looking the name up again could find a new
 * disk of the same name and number (a loop device made again at once), which is not ours.
 * Tunables are different: their store returns ENODEV while the elevator is being switched. */
static bool write_proves_gone(const Action *a, int error) {
        return error == -ENODEV && a->attr->id != ATTR_IOSCHED;
}

_printf_(4, 5) static int action_set_failure(Action *a, Outcome o, int error, const char *fmt, ...) {
        va_list ap;
        int r;

        a->outcome = o;
        a->error = error;
        va_start(ap, fmt);
        r = action_set_reasonv(a, fmt, ap);
        va_end(ap);
        return r;
}

/* Read the attribute back and decide it again: a confirmed write decides as "skip". */
static int confirm(Sysfs *s, Disk *d, const Resolved *res, Action *a) {
        _cleanup_(action_done) Action again = {};
        int r;

        r = sysfs_reload_settings(s, d);
        if (r < 0)
                return r;
        if (a->attr->id == ATTR_SCHEDULER) {
                /* The written one may be a fallback of the list: compare with it. */
                if (free_and_strdup(&a->result, d->scheduler) < 0)
                        return -ENOMEM;
                if (streq_ptr(d->scheduler, a->write)) {
                        a->outcome = OUTCOME_WRITTEN;
                        return 0;
                }
                return action_set_failure(a, OUTCOME_FAILED, -EIO,
                                          "written, but the kernel reads back \"%s\"",
                                          strna(d->scheduler));
        }
        r = plan_decide(d, res, a->setting, NULL, &again);
        if (r < 0)
                return r;
        if (free_and_strdup(&a->result, again.current) < 0)
                return -ENOMEM;
        if (again.type == ACTION_SKIP) {
                a->outcome = OUTCOME_WRITTEN;
                return 0;
        }
        if (!again.current)
                return action_set_failure(a, OUTCOME_FAILED, -EIO, "written, but reading it back failed: %s",
                                          strna(again.reason));
        return action_set_failure(a, OUTCOME_FAILED, -EIO, "written, but the kernel reads back \"%s\"",
                                  strna(again.current));
}

static int apply_scheduler(Sysfs *s, Disk *d, Action *a) {
        int r;

        for (size_t i = 0;; i++) {
                const char *name = i == 0 ? a->write : a->fallbacks[i - 1];

                if (!name)
                        break;
                r = write_retrying(s, d->name, a->attr, NULL, name);
                if (r >= 0) {
                        if (i > 0 && free_and_strdup(&a->write, name) < 0)
                                return -ENOMEM;
                        return 0;
                }
                if (r != -EINVAL)
                        return r;
                /* EINVAL: unknown or unloadable here; the policy lists what to try next. */
                if (!a->fallbacks)
                        break;
        }
        return -EINVAL;
}

/* Switch the scheduler, under udev's lock when asked, held for the switch alone: an open node
 * keeps a loop device from being deleted (LOOP_CTL_REMOVE fails with EBUSY).
 * Return: as apply_scheduler(); 1 when another program held the lock (the failure is set). */
static int switch_scheduler(Sysfs *s, Disk *d, Action *a, ApplyFlags flags) {
        _cleanup_(closep) int lock_fd = -1;
        int k = 0;

        if (flags & APPLY_LOCK)
                k = sysfs_lock_disk(s, d, APPLY_LOCK_TIMEOUT_USEC, &lock_fd);
        if (k == -EWOULDBLOCK) {
                k = action_set_failure(a, OUTCOME_FAILED, -EWOULDBLOCK,
                                       "not written: another program held the disk's lock (its /dev node) "
                                       "for over %llu s", APPLY_LOCK_TIMEOUT_USEC / 1000000);
                return k < 0 ? k : 1;
        }
        if (k < 0)
                log_debug_errno(k, "%s: cannot take udev's lock on the device node, switching without it: %m",
                                d->name);
        return apply_scheduler(s, d, a);
}

static void set_gone(Action *a, int error, bool *gone) {
        a->outcome = OUTCOME_GONE;
        a->error = error;
        *gone = true;
}

static bool write_error_proves_gone(Sysfs *s, const Disk *d, const Action *a, int error) {
        return ERRNO_IS_GONE(error) && (write_proves_gone(a, error) || disk_is_gone(s, d));
}

/* Written, but read back otherwise.
 * Return: 0 (the outcome is set), -ENODEV when the disk is gone, -ENOMEM. */
static int confirm_failed(Sysfs *s, Disk *d, const Resolved *r, Action *a) {
        int k;

        if (disk_is_gone(s, d))
                /* What was read back is another device's value: ours went away after the write,
                 * and a new one took its name (and number). Nothing is written to that one. */
                return -ENODEV;
        if (a->attr->id == ATTR_SCHEDULER)
                return 0;
        /* The value changed again right after the write: another writer (a tool, or the kernel
         * itself, as when a loop device is detached) came in between. One more write; a value
         * the kernel does not keep fails again. */
        log_debug("%s: %s reads back \"%s\" after the write; writing it once more", d->name, a->key,
                  strna(a->result));
        k = write_retrying(s, d->name, a->attr, a->tunable, a->write);
        if (k >= 0)
                return confirm(s, d, r, a);
        if (write_error_proves_gone(s, d, a, k))
                return -ENODEV;
        if (k == -ENOMEM)
                return k;
        return action_set_failure(a, OUTCOME_FAILED, k, "writing \"%s\" failed: %s", a->write, strerror(-k));
}

/* One attribute of the queue: write, read back, once more if another writer came in between. */
static int apply_action(Sysfs *s, Disk *d, const Resolved *r, Action *a, ApplyFlags flags, bool *gone) {
        int k;

        if (a->attr->id == ATTR_SCHEDULER)
                k = switch_scheduler(s, d, a, flags);
        else
                k = write_retrying(s, d->name, a->attr, a->tunable, a->write);
        if (k == -ENOMEM)
                return k;
        if (k > 0)
                return 0;
        if (k < 0) {
                if (write_error_proves_gone(s, d, a, k)) {
                        set_gone(a, k, gone);
                        return 0;
                }
                return action_set_failure(a, OUTCOME_FAILED, k, "writing \"%s\" failed: %s", a->write,
                                          strerror(-k));
        }
        k = confirm(s, d, r, a);
        if (k >= 0 && a->outcome == OUTCOME_FAILED)
                k = confirm_failed(s, d, r, a);
        if (k == -ENOMEM)
                return k;
        if (k < 0)
                set_gone(a, k, gone);
        return 0;
}

/* One key of an io.cost.* line after the line was written (@write_error: its error) and the
 * disk read again (@gone_error: the disk went away). */
static int iocost_outcome(const Disk *d, const Resolved *r, Action *a, const char *line, int write_error,
                          int gone_error) {
        _cleanup_(action_done) Action again = {};

        if (a->outcome != OUTCOME_WOULD_WRITE)
                return 0;
        if (gone_error < 0) {
                a->outcome = OUTCOME_GONE;
                a->error = gone_error;
                return 0;
        }
        if (write_error < 0)
                return action_set_failure(a, OUTCOME_FAILED, write_error, "writing \"%s\" failed: %s", line,
                                          strerror(-write_error));
        if (plan_decide(d, r, a->setting, NULL, &again) < 0 || free_and_strdup(&a->result, again.current) < 0)
                return -ENOMEM;
        if (again.type == ACTION_SKIP) {
                a->outcome = OUTCOME_WRITTEN;
                return 0;
        }
        return action_set_failure(a, OUTCOME_FAILED, -EIO, "wrote \"%s\", but the kernel reads back \"%s\"",
                                  line, strna(again.current));
}

/* The keys of one io.cost.* file (consecutive in plan order, from @first): one write of the
 * line with every one that differs, then each read back and decided again. */
static int apply_iocost(Sysfs *s, Disk *d, const Resolved *r, Plan *plan, size_t first,
                        size_t *ret_end, bool *gone) {
        AttrFile f = plan->actions[first].attr->file;
        _cleanup_(freep) char *line = NULL;
        size_t end = first;
        int k, reload = 0;

        while (end < plan->n_actions && plan->actions[end].attr->file == f)
                end++;
        *ret_end = end;
        k = iocost_write_line(d->devnum, plan->actions + first, end - first, f, &line);
        if (k < 0)
                return k;
        assert(line);   /* @first is a write of @f */

        k = write_retrying(s, d->name, plan->actions[first].attr, NULL, line);
        if (k == -ENOMEM)
                return k;
        if (k >= 0)
                reload = sysfs_reload_settings(s, d);
        if (reload == -ENOMEM)
                return reload;
        if ((k < 0 && ERRNO_IS_GONE(k) && disk_is_gone(s, d)) || reload < 0)
                *gone = true;

        for (size_t i = first; i < end; i++)
                if (iocost_outcome(d, r, &plan->actions[i], line, k, *gone ? (k < 0 ? k : reload) : 0) < 0)
                        return -ENOMEM;
        log_debug("%s: wrote \"%s\"", d->name, line);
        return 0;
}

static bool attr_is_iocost(const AttrInfo *a) {
        return a->file == ATTR_FILE_IOCOST_QOS || a->file == ATTR_FILE_IOCOST_MODEL;
}

int apply_plan(Sysfs *s, Disk *d, const Resolved *r, Plan *plan, ApplyFlags flags) {
        bool gone = false;
        size_t i = 0;
        int k;

        assert(s && d && r && plan);
        while (i < plan->n_actions) {
                Action *a = &plan->actions[i];
                size_t next = i + 1;
                bool changed = false;

                if (gone)
                        a->outcome = OUTCOME_GONE;
                else if (a->outcome != OUTCOME_WOULD_WRITE)
                        ;       /* decided: already right, unsupported or refused */
                else if (attr_is_iocost(a->attr)) {
                        k = apply_iocost(s, d, r, plan, i, &next, &gone);
                        if (k < 0)
                                return k;
                        changed = !gone;
                } else {
                        k = apply_action(s, d, r, a, flags, &gone);
                        if (k < 0)
                                return k;
                        changed = a->outcome == OUTCOME_WRITTEN;
                }
                i = next;

                /* The disk was read again after the write: decide what follows on the values
                 * read now (a scheduler switch resets the tunables and nr_requests and may change
                 * wbt; a queue limit raises read_ahead_kb; iocost's enable turns the default wbt
                 * off). */
                if (changed) {
                        k = plan_decide_rest(d, r, plan, i);
                        if (k < 0)
                                return k;
                }
        }
        return 0;
}
