/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "disk-run.h"
#include "log.h"
#include "util.h"

static const char *props_get(const char *key, void *userdata) {
        return udev_props_get(userdata, key);
}

bool disk_event_changes_nothing(const char *name, const UdevProps *props) {
        const char *why;

        assert(name);
        if (!props || !startswith(name, "dm-") ||
            !stack_event_is_no_change(props_get, (void *) props, &why))
                return false;
        log_debug("%s: change event left alone: %s.", name, why);
        return true;
}

DiskRun *disk_run_free(DiskRun *run) {
        if (!run)
                return NULL;
        plan_free(run->plan);
        resolved_free(run->resolved);
        disk_free(run->disk);
        free(run);
        return NULL;
}

/* Resolve, plan and, unless it is a dry run, apply. */
static int run_policy(Sysfs *s, const Policy *policy, DiskRunFlags flags, DiskRun *run) {
        int r;

        r = policy_resolve(policy, run->disk, &run->resolved);
        if (r < 0)
                return r;
        r = plan_build(run->disk, run->resolved, &run->plan);
        if (r < 0)
                return r;
        if (!(flags & DISK_RUN_DRY_RUN)) {
                r = apply_plan(s, run->disk, run->resolved, run->plan,
                               flags & DISK_RUN_LOCK ? APPLY_LOCK : 0);
                if (r < 0)
                        return r;
        }
        report_summarize(run->plan, &run->summary);
        run->notes = report_notes(run->disk, run->plan);
        if (run->summary.gone > 0)
                run->state = DISK_RUN_GONE;
        return 0;
}

int disk_run_find_writers(DiskRun *run, const Writers *writers) {
        _cleanup_(other_writers_freep) OtherWriters *o = NULL;
        char text[256];
        WriterTarget t;
        int r;

        assert(run && run->disk);
        o = calloc(1, sizeof(OtherWriters));
        if (!o)
                return -ENOMEM;
        writer_target_of(run->disk, text, sizeof(text), &t);
        r = writers_for_disk(writers, &t, o);
        if (r < 0)
                return r;
        other_writers_free(run->disk->writers);
        run->disk->writers = o->n > 0 ? TAKE_PTR(o) : NULL;
        return 0;
}

int disk_run(Sysfs *s, const Policy *policy, const Writers *writers, const char *name, const UdevProps *udev,
             const DiskLoad *load, DiskRunFlags flags, DiskRun **ret) {
        _cleanup_(sysfs_unpin_diskp) Sysfs *pinned = NULL;
        _cleanup_(disk_run_freep) DiskRun *run = NULL;
        _cleanup_(strv_freep) char **keys = NULL;
        DiskLoad widened;
        int r;

        assert(s && policy && name && ret);
        if (!disk_name_is_valid(name))
                return -EINVAL;
        run = calloc(1, sizeof(DiskRun));
        if (!run)
                return -ENOMEM;

        if (writers) {
                widened = load ? *load : DISK_LOAD_ALL;
                r = writers_disk_load(writers, &widened, &keys);
                if (r < 0)
                        return r;
                load = &widened;
        }
        /* The disk's directory held for the read and the writes after it: each file is looked
         * up below it, not walked to from the root (kernfs path walks are most of the cost). */
        r = sysfs_pin_disk(s, name);
        if (r >= 0) {
                pinned = s;
                r = sysfs_load_disk(s, name, udev, load, &run->disk);
        }
        if (r >= 0 && keys)
                run->disk->load.udev_keys = NULL;       /* they were this call's */
        if (ERRNO_IS_GONE(r))
                run->state = DISK_RUN_GONE;
        else if (r < 0)
                return r;
        else if (run->disk->partition)
                run->state = DISK_RUN_PARTITION;
        else {
                r = writers ? disk_run_find_writers(run, writers) : 0;
                if (r >= 0)
                        r = run_policy(s, policy, flags, run);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(run);
        return 0;
}
