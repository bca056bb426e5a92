/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "ioschedd-disk-bus.h"
#include "ioschedd-hold.h"
#include "ioschedd-manager.h"
#include "log.h"
#include "util.h"

#define HOLDS_FILE_MAX (1024 * 1024)

struct HoldEntry {
        Manager *manager;
        Hold *hold;
        DiskObject *disk;
        sd_bus_track *track;    /* the holder's connection */
        char *sender;           /* its unique name */
};

static HoldEntry *hold_entry_free(HoldEntry *e) {
        if (!e)
                return NULL;
        sd_bus_track_unref(e->track);
        hold_unref(e->hold);
        free(e->sender);
        return mfree(e);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(HoldEntry *, hold_entry_free);

static ssize_t entry_index(Manager *m, uint32_t id) {
        for (size_t i = 0; i < m->n_holds; i++)
                if (m->holds[i]->hold->id == id)
                        return i;
        return -1;
}

uint32_t manager_hold_next_id(Manager *m) {
        do
                m->last_hold_id++;
        while (m->last_hold_id == 0 || entry_index(m, m->last_hold_id) >= 0);
        return m->last_hold_id;
}

const Hold *manager_hold_find(Manager *m, uint32_t id, const char **ret_sender) {
        ssize_t i = entry_index(m, id);

        if (i < 0)
                return NULL;
        if (ret_sender)
                *ret_sender = m->holds[i]->sender;
        return m->holds[i]->hold;
}

/* The registry as RUNTIME_DIR/holds, one hold a line: handle, disk, settings, holder, reason,
 * separated by tabs (holder and reason are escaped: no tab, no newline). No hold: no file. */
static void holds_save(Manager *m) {
        _cleanup_(freep) char *path = NULL, *tmp = NULL;
        FILE *f;
        int fd;

        if (!m->runtime_dir)
                return;
        path = strdup_printf("%s/" HOLDS_FILE, m->runtime_dir);
        tmp = strdup_printf("%s/." HOLDS_FILE ".tmp", m->runtime_dir);
        if (!path || !tmp) {
                log_oom();
                return;
        }
        if (m->n_holds == 0) {
                if (unlink(path) < 0 && errno != ENOENT)
                        log_warning_errno(errno, "Cannot remove %s: %m", path);
                return;
        }
        (void) mkdir(m->runtime_dir, 0755);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
                if (fd >= 0)
                        close(fd);
                log_warning_errno(errno, "Cannot write %s: %m; a restart would drop the holds without naming them", tmp);
                return;
        }
        for (size_t i = 0; i < m->n_holds; i++) {
                const Hold *h = m->holds[i]->hold;
                _cleanup_(freep) char *settings = hold_settings_text(h);

                fprintf(f, "%" PRIu32 "\t%s\t%s\t%s\t%s\n", h->id, h->disk, strempty(settings), h->holder,
                        h->reason);
        }
        if (fclose(f) != 0 || rename(tmp, path) < 0) {
                log_warning_errno(errno, "Cannot write %s: %m", path);
                (void) unlink(tmp);
        }
}

static int disk_holds_remove(DiskObject *d, const Hold *h) {
        for (size_t i = 0; i < d->n_holds; i++)
                if (d->holds[i] == h) {
                        hold_unref(d->holds[i]);
                        memmove(d->holds + i, d->holds + i + 1, (d->n_holds - i - 1) * sizeof(Hold *));
                        d->n_holds--;
                        d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_HOLDS);
                        return 0;
                }
        return -ENOENT;
}

/* Out of the registry and off its disk; the entry is the caller's to free. */
static HoldEntry *entry_take(Manager *m, size_t i) {
        HoldEntry *e = m->holds[i];

        memmove(m->holds + i, m->holds + i + 1, (m->n_holds - i - 1) * sizeof(HoldEntry *));
        m->n_holds--;
        if (e->disk)
                (void) disk_holds_remove(e->disk, e->hold);
        holds_save(m);
        return e;
}

static int on_holder_gone(sd_bus_track *t, void *userdata) {
        HoldEntry *e = userdata;

        /* sd-bus keeps the track alive while this runs: releasing frees it safely. */
        (void) manager_hold_release(e->manager, e->hold->id, "its holder's bus connection closed", NULL);
        return 0;
}

int manager_hold_add(Manager *m, DiskObject *d, Hold *h, sd_bus_message *call, Completion *c) {
        _cleanup_(hold_entry_freep) HoldEntry *e = NULL;
        _cleanup_(freep) char *settings = NULL;
        HoldEntry **a;
        Hold **dh;
        int r;

        assert(m && d && h && call && streq(h->disk, d->name));
        if (m->n_holds >= HOLDS_MAX || d->n_holds >= HOLDS_PER_DISK_MAX)
                return -E2BIG;
        e = calloc(1, sizeof(HoldEntry));
        if (!e)
                return -ENOMEM;
        *e = (HoldEntry) { .manager = m, .hold = hold_ref(h), .disk = d };
        e->sender = strdup(strempty(sd_bus_message_get_sender(call)));
        settings = hold_settings_text(h);
        if (!e->sender || !settings)
                return -ENOMEM;
        if (m->bus) {
                r = sd_bus_track_new(m->bus, &e->track, on_holder_gone, e);
                if (r >= 0)
                        r = sd_bus_track_add_sender(e->track, call);
                if (r < 0)
                        return r;
        }
        a = reallocarray(m->holds, m->n_holds + 1, sizeof(HoldEntry *));
        if (!a)
                return -ENOMEM;
        m->holds = a;
        dh = reallocarray(d->holds, d->n_holds + 1, sizeof(Hold *));
        if (!dh)
                return -ENOMEM;
        d->holds = dh;
        d->holds[d->n_holds++] = hold_ref(h);
        d->dirty |= DISK_FIELD_BIT(DISK_OBJECT_HOLDS);
        m->holds[m->n_holds++] = TAKE_PTR(e);
        holds_save(m);
        log_info("%s: hold %" PRIu32 " by %s: %s (%s).", d->name, h->id, h->holder, settings, h->reason);
        /* Applied now: the reply waits for it, so a holder's command starts with the values. */
        return disk_object_queue(d, JOB_APPLY, NULL, c);
}

int manager_hold_release(Manager *m, uint32_t id, const char *why, Completion *c) {
        _cleanup_(hold_entry_freep) HoldEntry *e = NULL;
        ssize_t i = entry_index(m, id);
        DiskObject *d;

        if (i < 0)
                return -ENOENT;
        e = entry_take(m, i);
        d = e->disk;
        log_info("%s: hold %" PRIu32 " ended: %s; what is below it applies again.", e->hold->disk, id, why);
        if (!d)
                return 0;
        return disk_object_queue(d, JOB_APPLY, NULL, c);
}

void manager_holds_drop_disk(Manager *m, DiskObject *d) {
        for (size_t i = m->n_holds; i > 0; i--) {
                _cleanup_(hold_entry_freep) HoldEntry *e = NULL;

                if (m->holds[i - 1]->disk != d)
                        continue;
                e = entry_take(m, i - 1);
                log_info("%s: hold %" PRIu32 " ended: the disk went away.", d->name, e->hold->id);
        }
}

void manager_holds_report_dropped(Manager *m) {
        _cleanup_(freep) char *path = NULL, *text = NULL;
        unsigned n = 0;
        int r;

        if (!m->runtime_dir)
                return;
        path = strdup_printf("%s/" HOLDS_FILE, m->runtime_dir);
        if (!path) {
                log_oom();
                return;
        }
        r = read_file_bounded(AT_FDCWD, path, HOLDS_FILE_MAX, &text, NULL);
        if (r == -ENOENT)
                return;
        if (r < 0)
                log_warning_errno(r, "Cannot read %s: %m; holds of the previous ioschedd were dropped, "
                                  "the policy stands", path);
        for (char *line = text, *next; line && *line; line = next) {
                char *f[5] = { (char *) "?", (char *) "?", (char *) "?", (char *) "?", (char *) "?" };
                char *shown[5] = {};

                next = line + strcspn(line, "\n");
                if (*next)
                        *next++ = 0;
                for (size_t k = 0; k < ELEMENTSOF(f) && line; k++) {
                        f[k] = line;
                        line = strchr(line, '\t');
                        if (line)
                                *line++ = 0;
                }
                /* The file is ours, in a directory only root writes; still, nothing raw in a log. */
                for (size_t k = 0; k < ELEMENTSOF(f); k++)
                        shown[k] = escape_for_log(f[k], HOLD_REASON_MAX);
                log_warning("%s: hold %s (%s, by %s: %s) was dropped: ioschedd restarted; the policy "
                            "stands.", strna(shown[1]), strna(shown[0]), strna(shown[2]), strna(shown[3]),
                            strna(shown[4]));
                for (size_t k = 0; k < ELEMENTSOF(f); k++)
                        free(shown[k]);
                n++;
        }
        if (unlink(path) < 0 && errno != ENOENT)
                log_warning_errno(errno, "Cannot remove %s: %m", path);
        if (n > 0)
                log_info("%u hold(s) of the previous ioschedd dropped.", n);
}

void manager_holds_free(Manager *m) {
        for (size_t i = 0; i < m->n_holds; i++)
                hold_entry_free(m->holds[i]);
        m->holds = mfree(m->holds);
        m->n_holds = 0;
}
