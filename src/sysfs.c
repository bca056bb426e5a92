/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "iocost.h"
#include "log.h"
#include "sysfs.h"
#include "util.h"

#define SYSFS_VALUE_MAX 4096

struct Sysfs {
        char *root;
        int root_fd;
        SysfsReadHook read_hook;
        SysfsWriteHook write_hook;
        void *hook_userdata;
        unsigned long n_writes;
        unsigned hz;
        /* While sysfs_load_disk() reads a disk: its directory, so that each of the thirty-odd
         * files is one lookup below it, not a walk from the root through the class symlink
         * (path walks in kernfs are most of what reading a disk costs). */
        int disk_fd;
        const char *disk_name;
        char *release;          /* the kernel's, from proc/sys/kernel/osrelease (uname) */
        bool cgroup_probed;
        int cgroup_err;         /* 0, or -ENOENT: no cgroup v2 hierarchy with the io controller */
        char *cgroup_root;      /* relative to the root: "sys/fs/cgroup" */
        int systemd_iocost;     /* -1 not checked yet; 0 or 1: 90-iocost.rules is active */
};

/* The coarse clocks tick once a jiffy: their resolution tells CONFIG_HZ without a file. */
static unsigned kernel_hz(void) {
        struct timespec ts;

        if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) < 0 || ts.tv_sec != 0 || ts.tv_nsec <= 0)
                return 0;
        return (unsigned) ((1000000000L + ts.tv_nsec / 2) / ts.tv_nsec);
}

int sysfs_new(const char *root, Sysfs **ret) {
        _cleanup_(sysfs_freep) Sysfs *s = NULL;

        s = calloc(1, sizeof(Sysfs));
        if (!s)
                return -ENOMEM;
        s->root_fd = -1;
        s->disk_fd = -1;
        s->root = strdup(root ?: "/");
        if (!s->root)
                return -ENOMEM;
        s->root_fd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->root_fd < 0)
                return -errno;
        s->hz = kernel_hz();
        s->systemd_iocost = -1;
        *ret = TAKE_PTR(s);
        return 0;
}

Sysfs *sysfs_free(Sysfs *s) {
        if (!s)
                return NULL;
        if (s->root_fd >= 0)
                close(s->root_fd);
        free(s->root);
        free(s->release);
        free(s->cgroup_root);
        free(s);
        return NULL;
}

void sysfs_set_hooks(Sysfs *s, SysfsReadHook read_hook, SysfsWriteHook write_hook, void *userdata) {
        s->read_hook = read_hook;
        s->write_hook = write_hook;
        s->hook_userdata = userdata;
}

unsigned long sysfs_get_n_writes(const Sysfs *s) {
        return s->n_writes;
}

/* "sys/class/block/<disk>/<rel>". @rel comes from this module or the attribute table. */
static int disk_path(const char *disk, const char *rel, char *buf, size_t size) {
        int n;

        if (!disk_name_is_valid(disk))
                return -EINVAL;
        n = snprintf(buf, size, "sys/class/block/%s%s%s", disk, rel ? "/" : "", rel ?: "");
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

/* Where to find @rel of @disk: *ret_dirfd and @buf for the *at() call. Below the pinned
 * directory of the disk being loaded, else from the root. */
static int disk_at(Sysfs *s, const char *disk, const char *rel, char *buf, size_t size,
                   int *ret_dirfd) {
        int n;

        assert(rel);
        if (s->disk_fd < 0 || !streq(s->disk_name, disk)) {
                *ret_dirfd = s->root_fd;
                return disk_path(disk, rel, buf, size);
        }
        n = snprintf(buf, size, "%s", rel);
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        *ret_dirfd = s->disk_fd;
        return 0;
}

static void disk_unpin(Sysfs **s) {
        if ((*s)->disk_fd >= 0)
                close((*s)->disk_fd);
        (*s)->disk_fd = -1;
        (*s)->disk_name = NULL;
}

static int setting_relpath(const AttrInfo *a, const char *tunable, char *buf, size_t size) {
        int n;

        if (a->id != ATTR_IOSCHED) {
                n = snprintf(buf, size, "%s", a->path);
        } else {
                if (!tunable_name_is_valid(tunable))
                        return -EINVAL;
                n = snprintf(buf, size, "queue/iosched/%s", tunable);
        }
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static int read_disk_file(Sysfs *s, const char *disk, const char *rel, char **ret) {
        _cleanup_(closep) int fd = -1;
        char path[PATH_MAX], buf[SYSFS_VALUE_MAX + 1];
        char *text;
        ssize_t k;
        int r, dfd;

        r = disk_at(s, disk, rel, path, sizeof(path), &dfd);
        if (r < 0)
                return r;
        if (s->read_hook) {
                r = s->read_hook(s, disk, rel, s->hook_userdata);
                if (r < 0)
                        return r;
        }
        fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
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

static int read_disk_number(Sysfs *s, const char *disk, const char *rel, int64_t *ret) {
        _cleanup_(freep) char *text = NULL;
        int r;

        r = read_disk_file(s, disk, rel, &text);
        if (r < 0)
                return r;
        return safe_atoi64(text, INT64_MIN, INT64_MAX, ret);
}

int sysfs_read_setting(Sysfs *s, const char *disk, const AttrInfo *a, const char *tunable,
                       AttrState *st) {
        char rel[128];
        int r;

        attr_state_done(st);
        r = setting_relpath(a, tunable, rel, sizeof(rel));
        if (r < 0)
                return (st->err = r);
        r = read_disk_file(s, disk, rel, &st->raw);
        if (r < 0)
                return (st->err = r);
        return attr_state_parse(a, st);
}

static const char *iocost_file_name(AttrFile f) {
        return f == ATTR_FILE_IOCOST_QOS ? "io.cost.qos" : f == ATTR_FILE_IOCOST_MODEL ? "io.cost.model" : NULL;
}

static bool relpath_is_safe(const char *p) {
        /* A mount point from mountinfo, made relative: no ".." component. */
        for (const char *c = p; *c;) {
                size_t n = strcspn(c, "/");

                if (n == 2 && c[0] == '.' && c[1] == '.')
                        return false;
                c += n;
                c += strspn(c, "/");
        }
        return true;
}

int sysfs_iocost_probe(Sysfs *s) {
        _cleanup_(strv_freep) char **mounts = NULL;
        _cleanup_(freep) char *text = NULL;
        int r;

        if (s->cgroup_probed)
                return s->cgroup_err;
        s->cgroup_probed = true;
        s->cgroup_err = -ENOENT;

        r = read_file_bounded(s->root_fd, "proc/self/mountinfo", 1 << 22, &text, NULL);
        if (r == -ENOMEM)
                return (s->cgroup_err = r);
        if (r < 0)
                return s->cgroup_err;
        r = mountinfo_cgroup2_mounts(text, &mounts);
        if (r < 0)
                return (s->cgroup_err = r);
        for (char **m = mounts; *m; m++) {
                _cleanup_(freep) char *controllers = NULL, *path = NULL;
                const char *rel = *m + strspn(*m, "/");

                if (!relpath_is_safe(rel))
                        continue;
                path = strdup_printf("%s%scgroup.controllers", rel, *rel ? "/" : "");
                if (!path)
                        return (s->cgroup_err = -ENOMEM);
                if (read_file_bounded(s->root_fd, path, 4096, &controllers, NULL) < 0 ||
                    !cgroup_controllers_have_io(controllers))
                        continue;
                s->cgroup_root = strdup(*rel ? rel : ".");
                if (!s->cgroup_root)
                        return (s->cgroup_err = -ENOMEM);
                log_debug("cgroup v2 hierarchy with the io controller at /%s", rel);
                return (s->cgroup_err = 0);
        }
        log_debug("no cgroup v2 hierarchy with the io controller: iocost is not applicable");
        return s->cgroup_err;
}

bool sysfs_systemd_iocost_active(Sysfs *s) {
        /* udev's rules directories, the first one with the name wins; a link to /dev/null or
         * an empty file there masks the rule. */
        static const char *const dirs[] = {
                "etc/udev/rules.d", "run/udev/rules.d", "usr/local/lib/udev/rules.d",
                "usr/lib/udev/rules.d", "lib/udev/rules.d",
        };

        if (s->systemd_iocost >= 0)
                return s->systemd_iocost;
        s->systemd_iocost = 0;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                char path[PATH_MAX], link[64];
                struct stat st;
                ssize_t k;

                snprintf(path, sizeof(path), "%s/90-iocost.rules", dirs[i]);
                if (fstatat(s->root_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                k = readlinkat(s->root_fd, path, link, sizeof(link) - 1);
                if (k > 0) {
                        link[k] = 0;
                        if (streq(link, "/dev/null"))
                                break;
                        if (fstatat(s->root_fd, path, &st, 0) < 0)
                                break;
                }
                if (st.st_size == 0)
                        break;
                /* The rule runs systemd's helper; without it, it writes nothing. */
                s->systemd_iocost = faccessat(s->root_fd, "usr/lib/udev/iocost", X_OK, 0) >= 0 ||
                                    faccessat(s->root_fd, "lib/udev/iocost", X_OK, 0) >= 0;
                break;
        }
        return s->systemd_iocost;
}

const char *sysfs_kernel_release(Sysfs *s) {
        _cleanup_(freep) char *text = NULL;
        struct utsname u;

        if (s->release)
                return s->release;
        if (read_file_bounded(s->root_fd, "proc/sys/kernel/osrelease", 256, &text, NULL) >= 0 &&
            string_is_printable(strstrip_inplace(text), 128) && *text)
                s->release = TAKE_PTR(text);
        else if (uname(&u) >= 0)
                s->release = strdup(u.release);
        return s->release;
}

static int iocost_path(Sysfs *s, AttrFile f, char *buf, size_t size) {
        int r, n;

        r = sysfs_iocost_probe(s);
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s/%s", s->cgroup_root, iocost_file_name(f));
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

static int read_iocost(Sysfs *s, Disk *d, AttrFile f) {
        _cleanup_(freep) char *text = NULL;
        IocostState *st = &d->iocost[f];
        char path[PATH_MAX];
        int r;

        iocost_state_done(st);
        r = iocost_path(s, f, path, sizeof(path));
        if (r < 0)
                return (st->err = r);
        if (s->read_hook) {
                r = s->read_hook(s, d->name, iocost_file_name(f), s->hook_userdata);
                if (r < 0)
                        return (st->err = r);
        }
        r = read_file_bounded(s->root_fd, path, 1 << 22, &text, NULL);
        if (r < 0)
                return (st->err = r);
        return iocost_find(f, text, d->devnum, st);
}

/* One write(2) of @value to @path (below the root; @disk's file @name, for the hook). */
static int write_value(Sysfs *s, const char *path, const char *disk, const char *name,
                       const char *value) {
        _cleanup_(closep) int fd = -1;
        size_t len = strlen(value);
        ssize_t k;

        fd = openat(s->root_fd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        s->n_writes++;
        if (s->write_hook)
                return s->write_hook(s, fd, disk, name, value, s->hook_userdata);
        k = write(fd, value, len);
        if (k < 0)
                return -errno;
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
        r = read_disk_file(s, disk, "dev", &devnum);
        if (r < 0)
                return r;
        l = strlen(devnum);
        if (strncmp(line, devnum, l) != 0 || line[l] != ' ' || strchr(line, '\n'))
                return -EINVAL;
        r = iocost_path(s, f, path, sizeof(path));
        if (r < 0)
                return r;
        return write_value(s, path, disk, iocost_file_name(f), line);
}

int sysfs_write_setting(Sysfs *s, const char *disk, const AttrInfo *a, const char *tunable,
                        const char *value) {
        char rel[128], path[PATH_MAX];
        int r;

        if (a->file == ATTR_FILE_IOCOST_QOS || a->file == ATTR_FILE_IOCOST_MODEL)
                return write_iocost(s, disk, a->file, value);
        if (a->file != ATTR_FILE_QUEUE)
                return -EINVAL;
        r = setting_relpath(a, tunable, rel, sizeof(rel));
        if (r < 0)
                return r;
        r = disk_path(disk, rel, path, sizeof(path));
        if (r < 0)
                return r;

        return write_value(s, path, disk, rel, value);
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
        int n;

        *ret_fd = -1;
        if (!disk_name_is_valid(d->name) || !d->devnum || sscanf(d->devnum, "%u:%u", &maj, &min) != 2)
                return -EINVAL;
        /* The node's name is the kernel's with '!' for '/' (cciss!c0d0: /dev/cciss/c0d0). */
        n = snprintf(path, sizeof(path), "dev/%s", d->name);
        if (n < 0 || (size_t) n >= sizeof(path))
                return -ENAMETOOLONG;
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
                (void) usleep((useconds_t) delay);
                waited += delay;
                delay = MIN(delay * 2, (uint64_t) 20000);
        }
        *ret_fd = TAKE_FD(fd);
        return 1;
}

int sysfs_list_disks(Sysfs *s, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        _cleanup_(closep) int fd = -1;
        DIR *dir;
        int r = 0;

        fd = openat(s->root_fd, "sys/class/block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        dir = fdopendir(fd);
        if (!dir)
                return -errno;
        TAKE_FD(fd);

        l = calloc(1, sizeof(char *));
        if (!l) {
                closedir(dir);
                return -ENOMEM;
        }
        for (struct dirent *de; (de = readdir(dir));) {
                char path[PATH_MAX];
                struct stat st;

                if (!disk_name_is_valid(de->d_name))
                        continue;
                if (disk_path(de->d_name, "partition", path, sizeof(path)) < 0)
                        continue;
                if (fstatat(s->root_fd, path, &st, 0) >= 0)
                        continue;       /* partitions are never tuned */
                r = strv_extend(&l, de->d_name);
                if (r < 0)
                        break;
        }
        closedir(dir);
        if (r < 0)
                return r;

        strv_sort(l);
        *ret = TAKE_PTR(l);
        return 0;
}

bool sysfs_disk_exists(Sysfs *s, const char *name) {
        char path[PATH_MAX];

        if (disk_path(name, "dev", path, sizeof(path)) < 0)
                return false;
        return faccessat(s->root_fd, path, F_OK, 0) >= 0;
}

static int dup_identity(char **dst, const char *v) {
        return v ? free_and_strdup(dst, v) : 0;
}

static bool is_iocost_prop(const char *name) {
        return startswith(name, "IOCOST_");
}

static int read_optional(Sysfs *s, const char *disk, const char *rel, char **dst) {
        _cleanup_(freep) char *v = NULL;
        int r;

        r = read_disk_file(s, disk, rel, &v);
        if (r < 0)
                return ERRNO_IS_GONE(r) || r == -EACCES || r == -EIO || r == -EINVAL ? 0 : r;
        if (!*v || !string_is_printable(v, 256))
                return 0;
        free(*dst);
        *dst = TAKE_PTR(v);
        return 0;
}

static unsigned count_hw_queues(Sysfs *s, const char *disk) {
        _cleanup_(closep) int fd = -1;
        char path[PATH_MAX];
        unsigned n = 0;
        DIR *dir;
        int dfd;

        if (disk_at(s, disk, "mq", path, sizeof(path), &dfd) < 0)
                return 0;
        fd = openat(dfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        dir = fdopendir(fd);
        if (!dir)
                return 0;
        TAKE_FD(fd);
        for (struct dirent *de; (de = readdir(dir));)
                if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
                        n++;
        closedir(dir);
        return n;
}

/* Scheduler modules that exist on disk but are not registered yet: the kernel loads them on
 * the first write of their name, so a policy may ask for them. */
static int find_loadable_schedulers(Sysfs *s, Disk *d) {
        static const struct {
                const char *name, *module;
        } modules[] = {
                { "mq-deadline", "mq-deadline" },
                { "kyber", "kyber-iosched" },
                { "bfq", "bfq" },
        };
        static const char *const suffixes[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
        struct utsname u = {};

        for (size_t i = 0; i < ELEMENTSOF(modules); i++) {
                if (strv_contains(d->schedulers, modules[i].name))
                        continue;
                if (!u.release[0] && uname(&u) < 0)
                        return -errno;
                for (size_t j = 0; j < ELEMENTSOF(suffixes); j++) {
                        char path[PATH_MAX];
                        int r;

                        snprintf(path, sizeof(path), "lib/modules/%s/kernel/block/%s%s",
                                 u.release, modules[i].module, suffixes[j]);
                        if (faccessat(s->root_fd, path, F_OK, 0) < 0)
                                continue;
                        r = strv_extend(&d->schedulers_loadable, modules[i].name);
                        if (r < 0)
                                return r;
                        break;
                }
        }
        return 0;
}

static int load_tunables(Sysfs *s, Disk *d) {
        _cleanup_(closep) int fd = -1;
        char path[PATH_MAX];
        DIR *dir;
        int r = 0, dfd;

        for (size_t i = 0; i < d->n_tunables; i++) {
                free(d->tunables[i].name);
                attr_state_done(&d->tunables[i].state);
        }
        d->tunables = mfree(d->tunables);
        d->n_tunables = 0;

        r = disk_at(s, d->name, "queue/iosched", path, sizeof(path), &dfd);
        if (r < 0)
                return r;
        fd = openat(dfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        dir = fdopendir(fd);
        if (!dir)
                return -errno;
        TAKE_FD(fd);

        for (struct dirent *de; (de = readdir(dir));) {
                Tunable *t;

                if (!tunable_name_is_valid(de->d_name))
                        continue;
                if (d->n_tunables >= 64)
                        break;
                t = realloc(d->tunables, sizeof(Tunable) * (d->n_tunables + 1));
                if (!t) {
                        r = -ENOMEM;
                        break;
                }
                d->tunables = t;
                t = &d->tunables[d->n_tunables];
                *t = (Tunable) {};
                t->name = strdup(de->d_name);
                if (!t->name) {
                        r = -ENOMEM;
                        break;
                }
                d->n_tunables++;
                (void) sysfs_read_setting(s, d->name, attr_get(ATTR_IOSCHED), t->name, &t->state);
        }
        closedir(dir);
        return r;
}

int sysfs_reload_settings(Sysfs *s, Disk *d) {
        AttrState sched = {};
        int r;

        /* The scheduler is always read: the guards depend on it. Its line also carries the
         * list of schedulers: parse it fully here. */
        r = sysfs_read_setting(s, d->name, attr_get(ATTR_SCHEDULER), NULL, &sched);
        d->scheduler = mfree(d->scheduler);
        if (!d->schedulers_shared)
                strv_free(d->schedulers);
        d->schedulers = NULL;
        d->schedulers_shared = false;
        d->schedulers_loadable = strv_free(d->schedulers_loadable);
        d->has_scheduler_file = r != -ENOENT;
        if (r >= 0) {
                r = scheduler_parse(sched.raw, &d->scheduler, &d->schedulers);
                if (r == -ENOMEM) {
                        attr_state_done(&sched);
                        return r;
                }
                if (r >= 0) {
                        (void) find_loadable_schedulers(s, d);
                        d->schedulers_shared = scheduler_list_intern(&d->schedulers) > 0;
                }
        } else if (r == -ENODEV) {
                attr_state_done(&sched);
                return r;
        }
        /* d->scheduler and d->schedulers are what is used of the line: its text stays only for
         * a queue without a choice (the planner quotes it), not in each of thousands of
         * readings a daemon keeps. */
        value_done(&sched.value);
        if (d->scheduler)
                sched.raw = mfree(sched.raw);
        attr_state_done(&DISK_ATTR(d, ATTR_SCHEDULER));
        DISK_ATTR(d, ATTR_SCHEDULER) = sched;

        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                if (id == ATTR_SCHEDULER || id == ATTR_IOSCHED || !(d->load.attrs & ATTR_BIT(id)) ||
                    attr_get(id)->file != ATTR_FILE_QUEUE)
                        continue;
                (void) sysfs_read_setting(s, d->name, attr_get(id), NULL, &DISK_ATTR(d, id));
        }

        if (d->load.attrs & ATTR_IOCOST_BITS_MASK)
                for (AttrFile f = ATTR_FILE_IOCOST_MODEL; f <= ATTR_FILE_IOCOST_QOS; f++)
                        if (read_iocost(s, d, f) == -ENOMEM)
                                return -ENOMEM;

        if (d->load.attrs & ATTR_BIT(ATTR_IOSCHED)) {
                r = load_tunables(s, d);
                if (r < 0)
                        return r;
        }

        /* The disk may have gone away while we read: tell the caller rather than planning on
         * a half-read disk. del_gendisk() removes queue/ first and "dev" last: a disk with
         * "dev" but without queue/ is being deleted. */
        {
                char path[PATH_MAX];

                static const char *const last[] = { "queue", "dev" };

                for (size_t i = 0; i < ELEMENTSOF(last); i++) {
                        int dfd;

                        r = disk_at(s, d->name, last[i], path, sizeof(path), &dfd);
                        if (r < 0)
                                return r;
                        if (faccessat(dfd, path, F_OK, 0) < 0)
                                return -ENODEV;
                }
        }
        return 0;
}

int sysfs_load_disk(Sysfs *s, const char *name, const UdevProps *udev, const DiskLoad *what,
                    Disk **ret) {
        _cleanup_(disk_unpin) Sysfs *pinned = s;
        _cleanup_(disk_freep) Disk *d = NULL;
        _cleanup_(udev_props_freep) UdevProps *db_props = NULL;
        const UdevProps *props = udev;
        char path[PATH_MAX], link[PATH_MAX];
        int64_t v;
        ssize_t k;
        int r, dfd;

        if (!disk_name_is_valid(name))
                return -EINVAL;
        r = disk_path(name, NULL, path, sizeof(path));
        if (r < 0)
                return r;
        /* Pinned until we return; a disk that goes away meanwhile fails the reads below. */
        assert(s->disk_fd < 0);
        s->disk_fd = openat(s->root_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->disk_fd < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
        s->disk_name = name;

        d = disk_new(name);
        if (!d)
                return -ENOMEM;
        d->load = what ? *what : DISK_LOAD_ALL;
        d->hz = s->hz;

        r = read_disk_file(s, name, "dev", &d->devnum);
        if (r < 0)
                return r == -ENOENT ? -ENODEV : r;
        /* A disk removed and made again (a loop device) may get the same name and number;
         * diskseq tells the instances apart. */
        if (read_disk_number(s, name, "diskseq", &d->diskseq) < 0 || d->diskseq < 0)
                d->diskseq = 0;

        r = disk_path(name, NULL, path, sizeof(path));
        if (r < 0)
                return r;
        /* The link's target only tells the transport (a kernfs walk per call: skipped when
         * only the policy's attributes are read). */
        k = d->load.identity ? readlinkat(s->root_fd, path, link, sizeof(link) - 1) : -1;
        if (k > 0) {
                const char *p;

                link[k] = 0;
                p = strstr(link, "/devices/");
                d->devpath = strdup(p ?: link);
                if (!d->devpath)
                        return -ENOMEM;
        }

        r = disk_at(s, name, "partition", path, sizeof(path), &dfd);
        if (r < 0)
                return r;
        d->partition = faccessat(dfd, path, F_OK, 0) >= 0;

        if (!props && d->load.identity) {
                _cleanup_(freep) char *text = NULL;
                unsigned maj, min;

                if (sscanf(d->devnum, "%u:%u", &maj, &min) == 2) {
                        snprintf(path, sizeof(path), "run/udev/data/b%u:%u", maj, min);
                        if (read_file_bounded(s->root_fd, path, 1 << 20, &text, NULL) >= 0) {
                                r = udev_props_parse_db(text, &db_props);
                                if (r < 0)
                                        return r;
                        }
                }
                props = db_props;
        }

        if (d->load.identity) {
                bool has_device;

                r = disk_at(s, name, "device", path, sizeof(path), &dfd);
                if (r < 0)
                        return r;
                /* Virtual disks (loop, zram, dm, ...) have no device: spare the reads. */
                has_device = faccessat(dfd, path, F_OK, 0) >= 0;

                r = dup_identity(&d->model, props ? props->model : NULL);
                if (r >= 0)
                        r = dup_identity(&d->vendor, props ? props->vendor : NULL);
                if (r >= 0)
                        r = dup_identity(&d->serial, props ? props->serial : NULL);
                if (r >= 0)
                        r = dup_identity(&d->wwn, props ? props->wwn : NULL);
                if (r >= 0 && has_device)
                        r = read_optional(s, name, "device/model", &d->model_sysfs);
                if (r >= 0 && has_device)
                        r = read_optional(s, name, "device/vendor", &d->vendor_sysfs);
                if (r >= 0 && has_device && !d->serial)
                        r = read_optional(s, name, "device/serial", &d->serial);
                if (r >= 0 && has_device && !d->wwn)
                        r = read_optional(s, name, "wwid", &d->wwn);
                if (r >= 0 && has_device && !d->wwn)
                        r = read_optional(s, name, "device/wwid", &d->wwn);
                if (r < 0)
                        return r;
                if (!d->model && d->model_sysfs && free_and_strdup(&d->model, d->model_sysfs) < 0)
                        return -ENOMEM;
                if (!d->vendor && d->vendor_sysfs && free_and_strdup(&d->vendor, d->vendor_sysfs) < 0)
                        return -ENOMEM;
        }

        if (d->load.attrs & ATTR_IOCOST_BITS_MASK) {
                d->rqos_static_key = kernel_has_rqos_static_key(sysfs_kernel_release(s));
                if (udev_props_copy_matching(props, is_iocost_prop, &d->udev) < 0)
                        return -ENOMEM;
                /* 90-iocost.rules runs "iocost apply" for disks with IOCOST_SOLUTIONS. */
                d->iocost_other_writer = d->udev && d->udev->iocost_solutions &&
                                         d->udev->iocost_solutions[strspn(d->udev->iocost_solutions, " \t")] &&
                                         sysfs_systemd_iocost_active(s);
        }

        d->transport = transport_classify(name, d->devpath, props ? props->bus : NULL);

        if (d->load.flags && read_disk_number(s, name, "queue/rotational", &v) >= 0)
                d->rotational = v != 0;
        if (d->load.flags && read_disk_number(s, name, "removable", &v) >= 0)
                d->removable = v != 0;
        if (d->load.details || (d->load.attrs & ATTR_BIT(ATTR_MAX_SECTORS_KB))) {
                if (read_disk_number(s, name, "size", &v) >= 0 && v >= 0)
                        d->size_bytes = (uint64_t) v * 512;
                if (read_disk_number(s, name, "queue/max_hw_sectors_kb", &v) >= 0)
                        d->max_hw_sectors_kb = v;
        }
        {
                _cleanup_(freep) char *z = NULL;

                if (read_disk_file(s, name, "queue/zoned", &z) >= 0 && zoned_from_string(z) >= 0)
                        d->zoned = zoned_from_string(z);
        }
        if (d->load.queues)
                d->nr_hw_queues = count_hw_queues(s, name);

        if (!d->partition) {
                r = sysfs_reload_settings(s, d);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(d);
        return 0;
}
