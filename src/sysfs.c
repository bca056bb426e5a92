/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "host.h"
#include "iocost.h"
#include "log.h"
#include "sysfs.h"
#include "util.h"

#define SYSFS_VALUE_MAX 4096

struct Sysfs {
        char *root;
        int root_fd;
        int block_fd;           /* sys/class/block, -1 in a tree without one */
        SysfsReadHook read_hook;
        SysfsWriteHook write_hook;
        void *hook_userdata;
        SysfsWaitHook wait_hook;
        unsigned long n_writes;
        unsigned hz;
        /* The disk being read (sysfs_pin_disk()): its directory, its queue/ (-1 for a disk
         * without one) and its name ("" when none is pinned). */
        int disk_fd;
        int queue_fd;
        char disk_name[32];
        /* Looked up once (host.h), or borrowed from @host (sysfs_new_sharing()). */
        const Sysfs *host;
        char *release;
        bool cgroup_probed;
        int cgroup_err;         /* 0, or -ENOENT: no cgroup v2 hierarchy with the io controller */
        char *cgroup_root;      /* relative to the root: "sys/fs/cgroup" */
        char **scheduler_modules;       /* NULL: not looked for yet */
};

int sysfs_new(const char *root, Sysfs **ret) {
        _cleanup_(sysfs_freep) Sysfs *s = NULL;

        assert(ret);
        s = calloc(1, sizeof(Sysfs));
        if (!s)
                return -ENOMEM;
        s->root_fd = -1;
        s->block_fd = -1;
        s->disk_fd = -1;
        s->queue_fd = -1;
        s->root = strdup(root ?: "/");
        if (!s->root)
                return -ENOMEM;
        s->root_fd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->root_fd < 0)
                return -errno;
        /* Held open: a disk's path is two components shorter (kernfs looks each one up). */
        s->block_fd = openat(s->root_fd, "sys/class/block", O_PATH | O_DIRECTORY | O_CLOEXEC);
        s->hz = host_hz();
        *ret = TAKE_PTR(s);
        return 0;
}

int sysfs_new_sharing(const Sysfs *host, Sysfs **ret) {
        int r;

        assert(host && ret);
        r = sysfs_new(host->root, ret);
        if (r < 0)
                return r;
        (*ret)->host = host;
        return 0;
}

int sysfs_probe_host(Sysfs *s) {
        char * const *modules;
        int r;

        assert(s && !s->host);
        r = sysfs_iocost_probe(s);
        if (r == -ENOMEM)
                return r;
        r = sysfs_scheduler_modules(s, &modules);
        return r == -ENOMEM ? r : 0;
}

Sysfs *sysfs_free(Sysfs *s) {
        if (!s)
                return NULL;
        sysfs_unpin_disk(s);
        if (s->root_fd >= 0)
                close(s->root_fd);
        if (s->block_fd >= 0)
                close(s->block_fd);
        free(s->root);
        free(s->release);
        free(s->cgroup_root);
        strv_free(s->scheduler_modules);
        free(s);
        return NULL;
}

void sysfs_set_hooks(Sysfs *s, SysfsReadHook read_hook, SysfsWriteHook write_hook, void *userdata) {
        assert(s);
        s->read_hook = read_hook;
        s->write_hook = write_hook;
        s->hook_userdata = userdata;
}

void sysfs_set_wait_hook(Sysfs *s, SysfsWaitHook hook) {
        assert(s);
        s->wait_hook = hook;
}

static void wait_begin(const Sysfs *s) {
        if (s->wait_hook)
                s->wait_hook(true);
}

static void wait_end(const Sysfs *s) {
        if (s->wait_hook)
                s->wait_hook(false);
}

unsigned long sysfs_get_n_writes(const Sysfs *s) {
        assert(s);
        return s->n_writes;
}

int sysfs_root_fd(const Sysfs *s) {
        assert(s);
        return s->root_fd;
}

unsigned sysfs_hz(const Sysfs *s) {
        assert(s);
        return s->hz;
}

/* "<disk>[/<rel>]" below sys/class/block held open, else "sys/class/block/<disk>[/<rel>]" below
 * the root; *ret_dirfd is the one. @rel is a path of this program's own below a disk. */
static int disk_path(const Sysfs *s, const char *disk, const char *rel, char *buf, size_t size,
                     int *ret_dirfd) {
        if (!disk_name_is_valid(disk) || (rel && !path_is_safe_relative(rel)))
                return -EINVAL;
        *ret_dirfd = s->block_fd >= 0 ? s->block_fd : s->root_fd;
        return path_printf(buf, size, "%s%s%s%s", s->block_fd >= 0 ? "" : "sys/class/block/", disk,
                           rel ? "/" : "", rel ?: "");
}

/* Where to find @rel of @disk: *ret_dirfd and *ret_path for the *at() call. Below the pinned
 * directory of the disk being read (@rel itself: no copy; a file of queue/ below queue/, one
 * component looked up instead of two), else from the root (in @buf). */
static int disk_at(Sysfs *s, const char *disk, const char *rel, char *buf, size_t size,
                   int *ret_dirfd, const char **ret_path) {
        int r;

        assert(rel);
        if (s->disk_fd < 0 || !streq(s->disk_name, disk)) {
                r = disk_path(s, disk, rel, buf, size, ret_dirfd);
                if (r < 0)
                        return r;
                *ret_path = buf;
                return 0;
        }
        if (!path_is_safe_relative(rel))
                return -EINVAL;
        if (s->queue_fd >= 0 && startswith(rel, "queue/")) {
                *ret_dirfd = s->queue_fd;
                *ret_path = rel + sizeof("queue/") - 1;
                return 0;
        }
        *ret_dirfd = s->disk_fd;
        *ret_path = rel;
        return 0;
}

int sysfs_pin_disk(Sysfs *s, const char *name) {
        char path[PATH_MAX];
        int r, dfd;

        assert(s && !s->disk_name[0]);  /* one disk at a time, pinned once (disk_run()) */
        r = disk_path(s, name, NULL, path, sizeof(path), &dfd);
        if (r < 0)
                return r;
        s->disk_fd = openat(dfd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->disk_fd < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
        /* A partition has none; a disk whose queue/ is gone is being deleted (the reads tell). */
        s->queue_fd = openat(s->disk_fd, "queue", O_PATH | O_DIRECTORY | O_CLOEXEC);
        strcpy(s->disk_name, name);     /* valid: at most 31 characters */
        return 0;
}

void sysfs_unpin_disk(Sysfs *s) {
        assert(s);
        if (s->disk_fd >= 0)
                close(s->disk_fd);
        if (s->queue_fd >= 0)
                close(s->queue_fd);
        s->disk_fd = s->queue_fd = -1;
        s->disk_name[0] = 0;
}

int sysfs_read_disk_text(Sysfs *s, const char *disk, const char *rel, char **ret) {
        _cleanup_(closep) int fd = -1;
        char path[PATH_MAX], buf[SYSFS_VALUE_MAX + 1];
        const char *p;
        char *text;
        ssize_t k;
        int r, dfd;

        assert(s && ret);
        r = disk_at(s, disk, rel, path, sizeof(path), &dfd, &p);
        if (r < 0)
                return r;
        if (s->read_hook) {
                r = s->read_hook(s, disk, rel, s->hook_userdata);
                if (r < 0)
                        return r;
        }
        fd = openat(dfd, p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        /* A sysfs attribute is at most a page and comes whole in one read(2): no second read
         * for the end of file (syscalls are what a udev helper spends its time on). */
        do
                k = read(fd, buf, sizeof(buf) - 1);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        buf[k] = 0;
        text = strdup(buf);
        if (!text)
                return -ENOMEM;
        *ret = strstrip_inplace(text);
        return 0;
}

int sysfs_read_disk_number(Sysfs *s, const char *disk, const char *rel, int64_t *ret) {
        _cleanup_(freep) char *text = NULL;
        int r;

        assert(s && ret);
        r = sysfs_read_disk_text(s, disk, rel, &text);
        if (r < 0)
                return r;
        return safe_atoi64(text, INT64_MIN, INT64_MAX, ret);
}

bool sysfs_disk_has(Sysfs *s, const char *disk, const char *rel) {
        char path[PATH_MAX];
        const char *p;
        int dfd;

        assert(s);
        return disk_at(s, disk, rel, path, sizeof(path), &dfd, &p) >= 0 &&
               faccessat(dfd, p, F_OK, 0) >= 0;
}

bool sysfs_disk_pinned_with_queue(const Sysfs *s, const char *disk) {
        assert(s && disk);
        return s->queue_fd >= 0 && streq(s->disk_name, disk);
}

int sysfs_disk_devpath(Sysfs *s, const char *disk, char **ret) {
        char path[PATH_MAX], link[PATH_MAX];
        const char *p;
        ssize_t k;
        char *c;
        int r, dfd;

        assert(s && ret);
        r = disk_path(s, disk, NULL, path, sizeof(path), &dfd);
        if (r < 0)
                return r;
        k = readlinkat(dfd, path, link, sizeof(link) - 1);
        if (k < 0)
                return -errno;
        link[k] = 0;
        p = strstr(link, "/devices/");
        c = strdup(p ?: link);
        if (!c)
                return -ENOMEM;
        *ret = c;
        return 0;
}

/* A disk's directories (mq/, holders/, queue/iosched/) hold a few short names: read with
 * getdents64() into a buffer on the stack, not with opendir(), whose DIR is a 32 KiB heap block
 * per call. The daemon's workers read three per disk while the disk's reading, which the loop
 * keeps, is allocated around them: the blocks freed left holes that held a few long-lived
 * chunks each, more than half of the heap's pages at rest after a first pass over 256 disks. */
int sysfs_disk_foreach(Sysfs *s, const char *disk, const char *rel,
                       int (*cb)(const char *name, void *userdata), void *userdata) {
        _cleanup_(closep) int fd = -1;
        char path[PATH_MAX];
        const char *p;
        int r, dfd;

        assert(s && cb);
        r = disk_at(s, disk, rel, path, sizeof(path), &dfd, &p);
        if (r < 0)
                return r;
        fd = openat(dfd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (;;) {
                _Alignas(struct dirent64) char buf[1024];
                ssize_t n = getdents64(fd, buf, sizeof(buf));

                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                for (ssize_t i = 0; i < n;) {
                        const struct dirent64 *de = (const struct dirent64 *) (buf + i);

                        i += de->d_reclen;
                        if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                                continue;
                        r = cb(de->d_name, userdata);
                        if (r < 0)
                                return r;
                }
                /* sysfs (kernfs) fills the buffer while the next entry fits: room left for the
                 * longest one means the end, and a call to be told so is one more taking
                 * kernfs's lock (holders/ and mq/ of each disk of a storm). */
                if ((size_t) n <= sizeof(buf) - sizeof(struct dirent64))
                        return 0;
        }
}

/* The file of a setting, relative to its disk: the table's path, or a tunable's in @buf (not
 * by printf: this runs for every file of every disk read). */
static int setting_relpath(const AttrInfo *a, const char *tunable, char *buf, size_t size,
                           const char **ret) {
        static const char dir[] = "queue/iosched/";
        size_t n;

        if (a->id != ATTR_IOSCHED) {
                *ret = a->path;
                return 0;
        }
        if (!tunable_name_is_valid(tunable))
                return -EINVAL;
        n = strlen(tunable);
        if (sizeof(dir) + n > size)
                return -ENAMETOOLONG;
        memcpy(mempcpy(buf, dir, sizeof(dir) - 1), tunable, n + 1);
        *ret = buf;
        return 0;
}

int sysfs_read_setting(Sysfs *s, const char *disk, const AttrInfo *a, const char *tunable,
                       AttrState *st) {
        char buf[128];
        const char *rel;
        int r;

        assert(s && a && st);
        attr_state_done(st);
        r = setting_relpath(a, tunable, buf, sizeof(buf), &rel);
        if (r < 0)
                return (st->err = r);
        r = sysfs_read_disk_text(s, disk, rel, &st->raw);
        if (r < 0)
                return (st->err = r);
        return attr_state_parse(a, st);
}

int sysfs_list_disks(Sysfs *s, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        _cleanup_(closedirp) DIR *dir = NULL;
        int r;

        assert(s && ret);
        r = opendir_at(s->root_fd, "sys/class/block", &dir);
        if (r < 0)
                return r;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (struct dirent *de; (de = readdir(dir));) {
                if (!disk_name_is_valid(de->d_name) || sysfs_disk_has(s, de->d_name, "partition"))
                        continue;       /* partitions are never tuned */
                r = strv_extend(&l, de->d_name);
                if (r < 0)
                        return r;
        }
        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

/* "nvme<A>" + the rest, A a number with nothing before it: A, or -1. */
static int nvme_number(const char *s, const char *rest) {
        unsigned a;
        int n = -1;

        if (sscanf(s, "nvme%u%n", &a, &n) != 1 || n < 0 || !streq(s + n, rest) || a > INT_MAX)
                return -1;
        return (int) a;
}

int sysfs_nvme_head_paths(Sysfs *s, const char *head, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        _cleanup_(closedirp) DIR *dir = NULL;
        char path[PATH_MAX], name[32];     /* a disk name is at most 31 characters */
        unsigned sub, ns;
        int n = -1, r;

        assert(s && head && ret);
        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        if (sscanf(head, "nvme%un%u%n", &sub, &ns, &n) != 2 || n < 0 || head[n] ||
            path_printf(path, sizeof(path), "sys/class/nvme-subsystem/nvme-subsys%u", sub) < 0 ||
            opendir_at(s->root_fd, path, &dir) < 0) {
                *ret = TAKE_PTR(l);
                return 0;
        }
        for (struct dirent *de; (de = readdir(dir));) {
                int c = nvme_number(de->d_name, "");

                if (c < 0 || (size_t) snprintf(name, sizeof(name), "nvme%uc%dn%u", sub, c, ns) >= sizeof(name) ||
                    !disk_name_is_valid(name) || !sysfs_disk_exists(s, name))
                        continue;
                r = strv_extend(&l, name);
                if (r < 0)
                        return r;
        }
        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

bool sysfs_disk_exists(Sysfs *s, const char *name) {
        int64_t hidden;

        assert(s);
        return sysfs_disk_has(s, name, "dev") ||
               (sysfs_read_disk_number(s, name, "hidden", &hidden) >= 0 && hidden == 1 &&
                sysfs_disk_has(s, name, "queue"));
}

/* The cgroup tree. */

int sysfs_iocost_probe(Sysfs *s) {
        assert(s);
        if (s->host && s->host->cgroup_probed)
                return s->host->cgroup_err;
        if (!s->cgroup_probed) {
                s->cgroup_err = host_cgroup_io_root(s->root_fd, &s->cgroup_root);
                /* Out of memory is not an answer: ask again next time. */
                s->cgroup_probed = s->cgroup_err != -ENOMEM;
        }
        return s->cgroup_err;
}

const char *sysfs_kernel_release(Sysfs *s) {
        assert(s);
        if (s->host && s->host->release)
                return s->host->release;
        if (!s->release)
                s->release = host_kernel_release(s->root_fd);
        return s->release;
}

int sysfs_scheduler_modules(Sysfs *s, char * const **ret) {
        int r;

        assert(s && ret);
        if (s->host && s->host->scheduler_modules) {
                *ret = s->host->scheduler_modules;
                return 0;
        }
        if (!s->scheduler_modules) {
                r = host_scheduler_modules(s->root_fd, sysfs_kernel_release(s), &s->scheduler_modules);
                if (r < 0)
                        return r;
        }
        *ret = s->scheduler_modules;
        return 0;
}

static const char *iocost_file_name(AttrFile f) {
        return f == ATTR_FILE_IOCOST_QOS ? "io.cost.qos" : f == ATTR_FILE_IOCOST_MODEL ? "io.cost.model" : NULL;
}

static int iocost_path(Sysfs *s, AttrFile f, char *buf, size_t size) {
        int r;

        r = sysfs_iocost_probe(s);
        if (r < 0)
                return r;
        return path_printf(buf, size, "%s/%s", s->host && s->host->cgroup_probed ? s->host->cgroup_root : s->cgroup_root,
                           iocost_file_name(f));
}

int sysfs_read_iocost(Sysfs *s, const char *disk, const char *devnum, AttrFile f, IocostState *st) {
        _cleanup_(freep) char *text = NULL;
        char path[PATH_MAX];
        int r;

        assert(s && devnum && st);
        assert(f == ATTR_FILE_IOCOST_QOS || f == ATTR_FILE_IOCOST_MODEL);
        iocost_state_done(st);
        r = iocost_path(s, f, path, sizeof(path));
        if (r < 0)
                return (st->err = r);
        if (s->read_hook) {
                r = s->read_hook(s, disk, iocost_file_name(f), s->hook_userdata);
                if (r < 0)
                        return (st->err = r);
        }
        r = read_file_bounded(s->root_fd, path, 1 << 22, &text, NULL);
        if (r < 0)
                return (st->err = r);
        return iocost_find(f, text, devnum, st);
}

/* Writes. */

/* One write(2) of @value to @path (below @dirfd; @disk's file @name, for the hook). */
static int write_value(Sysfs *s, int dirfd, const char *path, const char *disk, const char *name,
                       const char *value) {
        _cleanup_(closep) int fd = -1;
        size_t len = strlen(value);
        ssize_t k;

        fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        s->n_writes++;
        if (s->write_hook)
                return s->write_hook(s, fd, disk, name, value, s->hook_userdata);
        wait_begin(s);
        k = write(fd, value, len);
        if (k < 0)
                k = -errno;
        wait_end(s);
        if (k < 0)
                return (int) k;
        if ((size_t) k != len)
                return -EIO;
        return 0;
}

static int write_iocost(Sysfs *s, const char *disk, AttrFile f, const char *line) {
        _cleanup_(freep) char *devnum = NULL;
        char path[PATH_MAX];
        size_t l;
        int r;

        /* Only the line of the disk asked for. */
        r = sysfs_read_disk_text(s, disk, "dev", &devnum);
        if (r < 0)
                return r;
        l = strlen(devnum);
        if (strncmp(line, devnum, l) != 0 || line[l] != ' ' || strchr(line, '\n'))
                return -EINVAL;
        r = iocost_path(s, f, path, sizeof(path));
        if (r < 0)
                return r;
        return write_value(s, s->root_fd, path, disk, iocost_file_name(f), line);
}

int sysfs_write_setting(Sysfs *s, const char *disk, const AttrInfo *a, const char *tunable,
                        const char *value) {
        char buf[128], path[PATH_MAX];
        const char *rel, *p;
        int r, dfd;

        assert(s && a && value);
        if (a->file == ATTR_FILE_IOCOST_QOS || a->file == ATTR_FILE_IOCOST_MODEL)
                return write_iocost(s, disk, a->file, value);
        if (a->file != ATTR_FILE_QUEUE)
                return -EINVAL;
        r = setting_relpath(a, tunable, buf, sizeof(buf), &rel);
        if (r < 0)
                return r;
        r = disk_at(s, disk, rel, path, sizeof(path), &dfd, &p);
        if (r < 0)
                return r;

        return write_value(s, dfd, p, disk, rel, value);
}

/*
 * udev's lock on a block device (systemd.io/BLOCK_DEVICE_LOCKING): udevd holds a shared BSD
 * lock on the whole disk's node while it runs its rules for the disk's event, and postpones
 * the event while another program holds it exclusively. Taking it exclusively around a
 * scheduler switch keeps a rule's own scheduler write out of ours: on 6.18 (seen on 6.18.44)
 * two switches of one queue at once can oops the kernel (elevator_change_done() runs outside
 * the elevator lock under the read side of update_nr_hwq_lock; 7.3 takes its write side),
 * leaving the writer dead in the kernel with the tag set's lock held and the disk never
 * deletable (del_gendisk() waits for that lock for ever).
 */
int sysfs_lock_disk(Sysfs *s, const Disk *d, uint64_t timeout_usec, int *ret_fd) {
        _cleanup_(closep) int fd = -1;
        char path[PATH_MAX];
        unsigned maj, min;
        struct stat st;
        uint64_t waited = 0, delay = 1000;
        int r;

        assert(s && d && ret_fd);
        *ret_fd = -1;
        if (d->hidden && !d->devnum)
                return 0;       /* no node: nobody can take its lock */
        if (!disk_name_is_valid(d->name) || !d->devnum || sscanf(d->devnum, "%u:%u", &maj, &min) != 2)
                return -EINVAL;
        /* The node's name is the kernel's with '!' for '/' (cciss!c0d0: /dev/cciss/c0d0). */
        r = path_printf(path, sizeof(path), "dev/%s", d->name);
        if (r < 0)
                return r;
        for (char *p = path; *p; p++)
                if (*p == '!')
                        *p = '/';
        /* Read-only and non-blocking, as udevd opens it: no media wait, no change event. */
        fd = openat(s->root_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                /* No node (a tree without /dev, a private /dev): nobody can take the lock
                 * there either. A disk without media or going away: udevd does not lock it. */
                return errno == ENOENT || errno == ENXIO || errno == ENODEV || errno == ENOMEDIUM ? 0 : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode) || st.st_rdev != makedev(maj, min))
                return 0;       /* another device's node: not this disk's lock */
        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK && errno != EINTR)
                        return -errno;
                if (waited >= timeout_usec)
                        return -EWOULDBLOCK;
                wait_begin(s);
                (void) usleep((useconds_t) delay);
                wait_end(s);
                waited += delay;
                delay = MIN(delay * 2, (uint64_t) 20000);
        }
        *ret_fd = TAKE_FD(fd);
        return 1;
}
