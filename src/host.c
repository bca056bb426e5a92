/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "iocost.h"
#include "log.h"
#include "util.h"

/* Whether the hierarchy mounted at @rel (relative to the root) has the io controller. */
static int mount_has_io(int root_fd, const char *rel) {
        _cleanup_(freep) char *controllers = NULL, *path = NULL;

        path = strdup_printf("%s%scgroup.controllers", rel, *rel ? "/" : "");
        if (!path)
                return -ENOMEM;
        return read_file_bounded(root_fd, path, 4096, &controllers, NULL) >= 0 &&
               cgroup_controllers_have_io(controllers);
}

int host_cgroup_io_root(int root_fd, char **ret) {
        _cleanup_(strv_freep) char **mounts = NULL;
        _cleanup_(freep) char *text = NULL;
        int r;

        assert(root_fd >= 0 && ret);
        r = read_file_bounded(root_fd, "proc/self/mountinfo", 1 << 22, &text, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return -ENOENT;
        r = mountinfo_cgroup2_mounts(text, &mounts);
        if (r < 0)
                return r;
        for (char **m = mounts; *m; m++) {
                const char *rel = *m + strspn(*m, "/");
                char *c;

                /* A mount point from mountinfo, made relative: no ".." component. */
                if (!path_is_safe_relative(rel))
                        continue;
                r = mount_has_io(root_fd, rel);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                c = strdup(*rel ? rel : ".");
                if (!c)
                        return -ENOMEM;
                log_debug("cgroup v2 hierarchy with the io controller at /%s", rel);
                *ret = c;
                return 0;
        }
        log_debug("no cgroup v2 hierarchy with the io controller: iocost is not applicable");
        return -ENOENT;
}

char *host_kernel_release(int root_fd) {
        _cleanup_(freep) char *text = NULL;
        struct utsname u;

        assert(root_fd >= 0);
        if (read_file_bounded(root_fd, "proc/sys/kernel/osrelease", 256, &text, NULL) >= 0 &&
            string_is_printable(strstrip_inplace(text), 128) && *text)
                return TAKE_PTR(text);
        if (uname(&u) < 0)
                return NULL;
        return strdup(u.release);
}

unsigned host_hz(void) {
        struct timespec ts;

        /* The coarse clocks tick once a jiffy: their resolution tells CONFIG_HZ without a file. */
        if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) < 0 || ts.tv_sec != 0 || ts.tv_nsec <= 0)
                return 0;
        return (unsigned) ((1000000000L + ts.tv_nsec / 2) / ts.tv_nsec);
}

/* Whether lib/modules/@release/kernel/block/@module.ko* exists. */
static bool module_exists(int root_fd, const char *release, const char *module) {
        static const char *const suffixes[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };

        for (size_t j = 0; j < ELEMENTSOF(suffixes); j++) {
                char path[PATH_MAX];

                if (path_printf(path, sizeof(path), "lib/modules/%s/kernel/block/%s%s", release, module,
                                suffixes[j]) >= 0 &&
                    faccessat(root_fd, path, F_OK, 0) >= 0)
                        return true;
        }
        return false;
}

int host_scheduler_modules(int root_fd, const char *release, char ***ret) {
        static const struct {
                const char *name, *module;
        } modules[] = {
                { "mq-deadline", "mq-deadline" },
                { "kyber", "kyber-iosched" },
                { "bfq", "bfq" },
        };
        _cleanup_(strv_freep) char **l = NULL;

        assert(root_fd >= 0 && ret);
        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        /* A release is one path component: never "..", never a "/". */
        for (size_t i = 0; release && string_in_charset(release, CHARSET_ALNUM "._+-~", 128) &&
                           release[0] != '.' && i < ELEMENTSOF(modules); i++)
                if (module_exists(root_fd, release, modules[i].module) && strv_extend(&l, modules[i].name) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

int host_udev_db_read(int root_fd, const char *devnum, UdevProps **ret) {
        _cleanup_(freep) char *text = NULL;
        char path[64];
        unsigned maj, min;

        assert(root_fd >= 0 && devnum && ret);
        if (sscanf(devnum, "%u:%u", &maj, &min) != 2 ||
            path_printf(path, sizeof(path), "run/udev/data/b%u:%u", maj, min) < 0)
                return -EINVAL;
        if (read_file_bounded(root_fd, path, 1 << 20, &text, NULL) < 0) {
                *ret = NULL;
                return 0;
        }
        return udev_props_parse_db(text, ret);
}
