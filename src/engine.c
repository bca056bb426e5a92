/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "engine.h"
#include "util.h"

static char *marker_path(const char *dir, const char *suffix) {
        return strdup_printf("%s/%s%s", dir, ENGINE_MARKER, suffix);
}

int engine_marker_write(const char *dir) {
        _cleanup_(freep) char *path = NULL, *tmp = NULL;
        _cleanup_(closep) int fd = -1;
        char text[32];
        int n;

        assert(dir);
        path = marker_path(dir, "");
        tmp = marker_path(dir, ".tmp");
        if (!path || !tmp)
                return -ENOMEM;
        n = snprintf(text, sizeof(text), "%d\n", (int) getpid());
        /* systemd makes it (RuntimeDirectory=); without systemd we do. */
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        if (write(fd, text, (size_t) n) != n)
                return unlink(tmp), -EIO;
        if (rename(tmp, path) < 0)
                return unlink(tmp), -errno;
        return 0;
}

static int marker_read_pid(const char *dir, pid_t *ret) {
        _cleanup_(freep) char *path = NULL, *text = NULL;
        int64_t v;
        int r;

        path = marker_path(dir, "");
        if (!path)
                return -ENOMEM;
        r = read_file_bounded(AT_FDCWD, path, 32, &text, NULL);
        if (r == -ENOENT)
                return *ret = 0, 0;
        if (r < 0)
                return r;
        if (safe_atoi64(strstrip(text), 1, INT_MAX, &v) < 0)
                return *ret = 0, 0;     /* not ours to judge: no daemon announced itself */
        *ret = (pid_t) v;
        return 0;
}

int engine_marker_remove(const char *dir) {
        _cleanup_(freep) char *path = NULL;
        pid_t pid;
        int r;

        assert(dir);
        r = marker_read_pid(dir, &pid);
        if (r < 0 || pid != getpid())
                return r < 0 ? r : 0;
        path = marker_path(dir, "");
        if (!path)
                return -ENOMEM;
        return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

pid_t engine_daemon_pid(const char *dir) {
        _cleanup_(freep) char *comm = NULL;
        char proc[64];
        pid_t pid;
        int r;

        assert(dir);
        r = marker_read_pid(dir, &pid);
        if (r < 0 || pid == 0)
                return r;
        (void) snprintf(proc, sizeof(proc), "/proc/%d/comm", (int) pid);
        r = read_file_bounded(AT_FDCWD, proc, 64, &comm, NULL);
        if (r < 0)
                return 0;       /* no such process: the daemon is gone */
        return streq(strstrip(comm), ENGINE_DAEMON_COMM) ? pid : 0;
}
