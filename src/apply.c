/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
static int confirm(Sysfs *s, Disk *d, const Resolved *res, const ResolvedSetting *rs, Action *a) {
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
        r = plan_decide(d, res, rs, NULL, &again);
        if (r < 0)
                return r;
        free(a->result);
        a->result = again.current ? strdup(again.current) : NULL;
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

static Outcome outcome_of(ActionType t) {
        switch (t) {
        case ACTION_SKIP:
                return OUTCOME_SKIPPED;
        case ACTION_UNSUPPORTED:
                return OUTCOME_UNSUPPORTED;
        case ACTION_REFUSED:
                return OUTCOME_REFUSED;
        default:
                return OUTCOME_PLANNED;
        }
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
        line = iocost_write_line(d->devnum, plan->actions + first, end - first, f);
        if (!line)
                return -ENOMEM;

        k = write_retrying(s, d->name, plan->actions[first].attr, NULL, line);
        if (k == -ENOMEM)
                return k;
        if (k >= 0)
                reload = sysfs_reload_settings(s, d);
        if (reload == -ENOMEM)
                return reload;
        if ((k < 0 && ERRNO_IS_GONE(k) && disk_is_gone(s, d)) || reload < 0)
                *gone = true;

        for (size_t i = first; i < end; i++) {
                const ResolvedSetting *rs = &r->settings[i];
                _cleanup_(action_done) Action again = {};
                Action *a = &plan->actions[i];

                if (a->type != ACTION_WRITE) {
                        a->outcome = outcome_of(a->type);
                        continue;
                }
                if (*gone) {
                        a->outcome = OUTCOME_GONE;
                        a->error = k < 0 ? k : reload;
                        continue;
                }
                if (k < 0) {
                        if (action_set_failure(a, OUTCOME_FAILED, k, "writing \"%s\" failed: %s", line,
                                               strerror(-k)) < 0)
                                return -ENOMEM;
                        continue;
                }
                if (plan_decide(d, r, rs, NULL, &again) < 0)
                        return -ENOMEM;
                if (free_and_strdup(&a->result, again.current) < 0)
                        return -ENOMEM;
                if (again.type == ACTION_SKIP)
                        a->outcome = OUTCOME_WRITTEN;
                else if (action_set_failure(a, OUTCOME_FAILED, -EIO, "wrote \"%s\", but the kernel reads back \"%s\"",
                                            line, strna(again.current)) < 0)
                        return -ENOMEM;
        }
        log_debug("%s: wrote \"%s\"", d->name, line);
        return 0;
}

/* A write can change other attributes: a scheduler switch resets the tunables and
 * nr_requests and may change wbt; a queue limit raises read_ahead_kb; iocost's enable turns
 * the default wbt off. The disk was read again: decide what follows on the values read now. */
static int replan_rest(const Disk *d, const Resolved *r, Plan *plan, size_t from) {
        _cleanup_(plan_freep) Plan *again = NULL;
        int k;

        k = plan_build(d, r, &again);
        if (k < 0)
                return k;
        for (size_t j = from; j < plan->n_actions; j++) {
                action_done(&plan->actions[j]);
                plan->actions[j] = again->actions[j];
                again->actions[j] = (Action) {};
        }
        return 0;
}

static int report_append(Plan *report, Action *a) {
        Action *n = realloc(report->actions, sizeof(Action) * (report->n_actions + 1));

        if (!n)
                return -ENOMEM;
        report->actions = n;
        report->actions[report->n_actions++] = *a;
        *a = (Action) {};
        return 0;
}

static void count(ApplyStats *st, const Action *a) {
        unsigned *counter;

        if (!st || a->outcome < 0 || a->outcome >= _OUTCOME_MAX)
                return;
        counter = (unsigned *const[_OUTCOME_MAX]) {
                [OUTCOME_WRITTEN] = &st->written, [OUTCOME_SKIPPED] = &st->skipped,
                [OUTCOME_FAILED] = &st->failed, [OUTCOME_UNSUPPORTED] = &st->unsupported,
                [OUTCOME_REFUSED] = &st->unsupported, [OUTCOME_GONE] = &st->gone,
                [OUTCOME_DRY_RUN] = &st->would_write,
        }[a->outcome];
        if (counter)
                (*counter)++;
}

int apply_disk(Sysfs *s, Disk *d, const Resolved *r, ApplyFlags flags, Plan **ret_report,
               ApplyStats *stats) {
        _cleanup_(plan_freep) Plan *plan = NULL, *report = NULL;
        bool gone = false;
        size_t i = 0;
        int k;

        k = plan_build(d, r, &plan);
        if (k < 0)
                return k;
        report = calloc(1, sizeof(Plan));
        if (!report || !(report->disk = strdup(d->name)))
                return -ENOMEM;

        while (i < plan->n_actions) {
                Action *a = &plan->actions[i];
                const ResolvedSetting *rs = &r->settings[i];
                bool changed = false;

                if (!gone && a->type == ACTION_WRITE && !(flags & APPLY_DRY_RUN) &&
                    (a->attr->file == ATTR_FILE_IOCOST_QOS || a->attr->file == ATTR_FILE_IOCOST_MODEL)) {
                        size_t end;

                        k = apply_iocost(s, d, r, plan, i, &end, &gone);
                        if (k < 0)
                                return k;
                        for (; i < end; i++) {
                                count(stats, &plan->actions[i]);
                                k = report_append(report, &plan->actions[i]);
                                if (k < 0)
                                        return k;
                        }
                        if (!gone) {
                                k = replan_rest(d, r, plan, i);
                                if (k < 0)
                                        return k;
                        }
                        continue;
                }

                if (gone) {
                        a->outcome = OUTCOME_GONE;
                } else if (a->type == ACTION_SKIP) {
                        a->outcome = OUTCOME_SKIPPED;
                } else if (a->type == ACTION_UNSUPPORTED) {
                        a->outcome = OUTCOME_UNSUPPORTED;
                } else if (a->type == ACTION_REFUSED) {
                        a->outcome = OUTCOME_REFUSED;
                } else if (flags & APPLY_DRY_RUN) {
                        a->outcome = OUTCOME_DRY_RUN;
                } else {
                        if (a->attr->id == ATTR_SCHEDULER) {
                                /* Only for the switch: an open node keeps a loop device from
                                 * being deleted (LOOP_CTL_REMOVE fails with EBUSY). */
                                _cleanup_(closep) int lock_fd = -1;

                                k = 0;
                                if (flags & APPLY_LOCK)
                                        k = sysfs_lock_disk(s, d, APPLY_LOCK_TIMEOUT_USEC, &lock_fd);
                                if (k < 0 && k != -EWOULDBLOCK)
                                        log_debug_errno(k, "%s: cannot take udev's lock on the device node, "
                                                        "switching without it: %m", d->name);
                                if (k == -EWOULDBLOCK) {
                                        k = action_set_failure(a, OUTCOME_FAILED, -EWOULDBLOCK,
                                                               "not written: another program held the disk's "
                                                               "lock (its /dev node) for over %llu s",
                                                               APPLY_LOCK_TIMEOUT_USEC / 1000000);
                                        if (k < 0)
                                                return k;
                                        goto next;
                                }
                                k = apply_scheduler(s, d, a);
                        } else
                                k = write_retrying(s, d->name, a->attr, a->tunable, a->write);
                        if (k == -ENOMEM)
                                return k;
                        if (k < 0 && ERRNO_IS_GONE(k) && (write_proves_gone(a, k) || disk_is_gone(s, d))) {
                                gone = true;
                                a->outcome = OUTCOME_GONE;
                                a->error = k;
                        } else if (k < 0) {
                                k = action_set_failure(a, OUTCOME_FAILED, k, "writing \"%s\" failed: %s",
                                                       a->write, strerror(-k));
                                if (k < 0)
                                        return k;
                        } else {
                                k = confirm(s, d, r, rs, a);
                                if (k >= 0 && a->outcome == OUTCOME_FAILED && disk_is_gone(s, d))
                                        /* What was read back is another device's value: ours
                                         * went away after the write, and a new one took its
                                         * name (and number). Nothing is written to that one. */
                                        k = -ENODEV;
                                else if (k >= 0 && a->outcome == OUTCOME_FAILED &&
                                         a->attr->id != ATTR_SCHEDULER) {
                                        /* The value changed again right after the write:
                                         * another writer (a tool, or the kernel itself, as
                                         * when a loop device is detached) came in between.
                                         * One more write; a value the kernel does not keep
                                         * fails again. */
                                        log_debug("%s: %s reads back \"%s\" after the write; writing it once more",
                                                  d->name, a->key, strna(a->result));
                                        k = write_retrying(s, d->name, a->attr, a->tunable, a->write);
                                        if (k >= 0)
                                                k = confirm(s, d, r, rs, a);
                                        else if (ERRNO_IS_GONE(k) && (write_proves_gone(a, k) || disk_is_gone(s, d)))
                                                k = -ENODEV;
                                        else if (k != -ENOMEM) {
                                                k = action_set_failure(a, OUTCOME_FAILED, k,
                                                                       "writing \"%s\" failed: %s",
                                                                       a->write, strerror(-k));
                                        }
                                }
                                if (k == -ENOMEM)
                                        return k;
                                if (k < 0) {
                                        gone = true;
                                        a->outcome = OUTCOME_GONE;
                                        a->error = k;
                                }
                                changed = a->outcome == OUTCOME_WRITTEN;
                        }
                }

        next:
                count(stats, a);
                k = report_append(report, a);
                if (k < 0)
                        return k;
                i++;

                if (changed) {
                        /* confirm() read the disk again. */
                        k = replan_rest(d, r, plan, i);
                        if (k < 0)
                                return k;
                }
        }

        *ret_report = TAKE_PTR(report);
        return 0;
}
