/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fake-kernel.h"
#include "iocost.h"
#include "util.h"

static int mkdir_p(const char *path) {
        char buf[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = 0;
                        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *p = '/';
                }
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int fake_write(FakeKernel *k, const char *path, const char *content) {
        char full[PATH_MAX], dir[PATH_MAX];
        FILE *f;

        snprintf(full, sizeof(full), "%s/%s", k->root, path);
        snprintf(dir, sizeof(dir), "%s", full);
        *strrchr(dir, '/') = 0;
        if (mkdir_p(dir) < 0)
                return -errno;
        f = fopen(full, "we");
        if (!f)
                return -errno;
        fprintf(f, "%s\n", content);
        fclose(f);
        return 0;
}

char *fake_read(FakeKernel *k, const char *path) {
        char full[PATH_MAX];
        char *text = NULL;

        snprintf(full, sizeof(full), "%s/%s", k->root, path);
        if (read_file_bounded(AT_FDCWD, full, 1 << 16, &text, NULL) < 0)
                return NULL;
        return strstrip_inplace(text);
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

FakeKernel *fake_kernel_new(void) {
        FakeKernel *k = calloc(1, sizeof(FakeKernel));
        char tmpl[] = "/tmp/iosched-test-XXXXXX";

        if (!k || !mkdtemp(tmpl)) {
                free(k);
                return NULL;
        }
        k->root = strdup(tmpl);
        return k;
}

void fake_kernel_free(FakeKernel *k) {
        if (!k)
                return;
        if (k->root)
                nftw(k->root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
        free(k->root);
        free(k->vanish_disk);
        free(k->cgroup);
        free(k);
}

static const struct {
        const char *scheduler, *name, *value;
} tunable_defaults[] = {
        { "mq-deadline", "read_expire", "500" },
        { "mq-deadline", "write_expire", "5000" },
        { "mq-deadline", "writes_starved", "2" },
        { "mq-deadline", "front_merges", "1" },
        { "mq-deadline", "fifo_batch", "16" },
        { "mq-deadline", "async_depth", "48" },
        { "mq-deadline", "prio_aging_expire", "10000" },
        { "kyber", "read_lat_nsec", "2000000" },
        { "kyber", "write_lat_nsec", "10000000" },
        { "bfq", "low_latency", "1" },
        { "bfq", "slice_idle", "8" },
        { "bfq", "slice_idle_us", "8000" },
        { "bfq", "back_seek_max", "16384" },
        { "bfq", "strict_guarantees", "0" },
};

static void set_tunables(FakeKernel *k, const char *disk, const char *scheduler) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "rm -rf '%s/sys/class/block/%s/queue/iosched'", k->root, disk);
        if (system(path) != 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(tunable_defaults); i++) {
                if (!scheduler || !streq(tunable_defaults[i].scheduler, scheduler))
                        continue;
                snprintf(path, sizeof(path), "sys/class/block/%s/queue/iosched/%s", disk,
                         tunable_defaults[i].name);
                fake_write(k, path, tunable_defaults[i].value);
        }
}

static void disk_file(char *buf, size_t size, const char *disk, const char *rel) {
        snprintf(buf, size, "sys/class/block/%s/%s", disk, rel);
}

static int disk_put(FakeKernel *k, const char *disk, const char *rel, const char *value) {
        char p[PATH_MAX];

        disk_file(p, sizeof(p), disk, rel);
        return fake_write(k, p, value);
}

/* Queue attributes that every fake disk has, with the kernel's defaults. */
static const char *const queue_defaults[][2] = {
        { "queue/read_ahead_kb", "128" }, { "queue/max_sectors_kb", "1280" },
        { "queue/max_hw_sectors_kb", "2048" }, { "queue/rq_affinity", "1" },
        { "queue/nomerges", "0" }, { "queue/add_random", "0" }, { "queue/iostats", "1" },
};

int fake_disk_add(FakeKernel *k, const FakeDiskSpec *spec) {
        const char *n = spec->name;
        char p[PATH_MAX], line[256];
        int rot = spec->rotational;

        disk_put(k, n, "dev", spec->devnum ?: "7:0");
        if (spec->diskseq) {
                disk_put(k, n, "diskseq", spec->diskseq);
        }
        disk_put(k, n, "size", "131072");
        disk_put(k, n, "removable", spec->removable ? "1" : "0");
        if (spec->partition) {
                disk_put(k, n, "partition", "1");
                return 0;
        }
        if (spec->has_device) {
                disk_put(k, n, "device/model", spec->model ?: "Fake Disk");
                disk_put(k, n, "device/vendor", spec->vendor ?: "FAKE");
                if (spec->serial) {
                        disk_put(k, n, "device/serial", spec->serial);
                }
        }
        disk_put(k, n, "queue/rotational", rot ? "1" : "0");
        disk_put(k, n, "queue/zoned", spec->zoned ?: "none");
        for (size_t i = 0; i < ELEMENTSOF(queue_defaults); i++)
                disk_put(k, n, queue_defaults[i][0], queue_defaults[i][1]);
        if (spec->no_scheduler_file)
                return 0;

        for (unsigned q = 0; q < (spec->queues ?: 1); q++) {
                snprintf(line, sizeof(line), "mq/%u/nr_tags", q);
                disk_put(k, n, line, "256");
        }
        disk_put(k, n, "queue/nr_requests", "256");
        disk_put(k, n, "queue/wbt_lat_usec", spec->wbt ?: (rot ? "75000" : "2000"));

        disk_file(p, sizeof(p), n, "queue/scheduler");
        if (!spec->scheduler)
                fake_write(k, p, "none");
        else {
                _cleanup_(strv_freep) char **l = NULL;
                char *o = line;

                strv_split(spec->schedulers ?: "none mq-deadline kyber bfq", " ", &l);
                line[0] = 0;
                for (char **s = l; *s; s++)
                        o += sprintf(o, streq(*s, spec->scheduler) ? "[%s] " : "%s ", *s);
                fake_write(k, p, line);
                set_tunables(k, n, spec->scheduler);
        }
        return 0;
}

int fake_disk_remove(FakeKernel *k, const char *name) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/sys/class/block/%s", k->root, name);
        return nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) < 0 ? -errno : 0;
}

static int write_file_fd(int fd, const char *value) {
        if (ftruncate(fd, 0) < 0)
                return -errno;
        if (dprintf(fd, "%s\n", value) < 0)
                return -EIO;
        return 0;
}

static void raise_read_ahead(FakeKernel *k, const char *disk) {
        _cleanup_(freep) char *rot = NULL, *ra = NULL, *ms = NULL;
        char p[PATH_MAX], buf[32];
        int64_t r = 0, m = 0;

        disk_file(p, sizeof(p), disk, "queue/rotational");
        rot = fake_read(k, p);
        disk_file(p, sizeof(p), disk, "queue/max_sectors_kb");
        ms = fake_read(k, p);
        disk_file(p, sizeof(p), disk, "queue/read_ahead_kb");
        ra = fake_read(k, p);
        if (!rot || !streq(rot, "1") || !ms || !ra || safe_atoi64(ra, 0, INT64_MAX, &r) < 0 ||
            safe_atoi64(ms, 0, INT64_MAX, &m) < 0 || r >= 2 * m)
                return;
        snprintf(buf, sizeof(buf), "%" PRIi64, 2 * m);
        fake_write(k, p, buf);
}

static int iocost_write(FakeKernel *k, const char *disk, const char *file, const char *value);

int fake_kernel_write_hook(Sysfs *s, int fd, const char *disk, const char *rel, const char *value,
                     void *userdata) {
        FakeKernel *k = userdata;
        char p[PATH_MAX];
        size_t l = strlen(k->log);

        k->n_writes++;
        snprintf(k->log + l, sizeof(k->log) - l, "%s:%s=%s\n", disk, rel, value);

        if (k->busy > 0) {
                k->busy--;
                return -EBUSY;
        }
        if (k->fail_next < 0) {
                int r = k->fail_next;

                k->fail_next = 0;
                return r;
        }
        if (k->vanish_after > 0 && --k->vanish_after == 0) {
                if (k->vanish_after_success) {
                        /* The write went through; the disk is removed (and made again)
                         * before the writer reads it back. */
                        fake_disk_remove(k, k->vanish_disk ?: disk);
                        if (k->vanish_readd)
                                fake_disk_add(k, k->vanish_readd);
                        return 0;
                }
                if (k->vanish_queue_only) {
                        char q[PATH_MAX];

                        snprintf(q, sizeof(q), "%s/sys/class/block/%s/queue", k->root,
                                 k->vanish_disk ?: disk);
                        nftw(q, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
                        return 0;       /* the write itself went through */
                }
                fake_disk_remove(k, k->vanish_disk ?: disk);
                if (k->vanish_readd)
                        fake_disk_add(k, k->vanish_readd);
                return -ENODEV;
        }

        if (streq(rel, "io.cost.qos") || streq(rel, "io.cost.model")) {
                k->iocost_writes++;
                return iocost_write(k, disk, rel, value);
        }

        if (streq(rel, "queue/scheduler")) {
                _cleanup_(freep) char *cur = NULL, *rotational = NULL, *text = NULL;
                _cleanup_(strv_freep) char **avail = NULL;
                const char *name = scheduler_canonical(value);
                char line[256], *o = line;

                disk_file(p, sizeof(p), disk, "queue/scheduler");
                text = fake_read(k, p);
                if (!text || scheduler_parse(text, &cur, &avail) < 0 || !strv_contains(avail, name))
                        return -EINVAL;
                line[0] = 0;
                for (char **a = avail; *a; a++)
                        o += sprintf(o, streq(*a, name) ? "[%s] " : "%s ", *a);
                if (write_file_fd(fd, line) < 0)
                        return -EIO;
                set_tunables(k, disk, streq(name, "none") ? NULL : name);
                disk_put(k, disk, "queue/nr_requests", streq(name, "none") ? "256" : "64");
                disk_file(p, sizeof(p), disk, "queue/rotational");
                rotational = fake_read(k, p);
                disk_file(p, sizeof(p), disk, "queue/wbt_lat_usec");
                if (streq(name, "bfq"))
                        fake_write(k, p, "0");
                else if (cur && streq(cur, "bfq"))
                        fake_write(k, p, rotational && streq(rotational, "1") ? "75000" : "2000");
                return 0;
        }

        if (streq(rel, "queue/wbt_lat_usec")) {
                _cleanup_(freep) char *rotational = NULL;
                int64_t v;

                if (safe_atoi64(value, -1, INT64_MAX, &v) < 0)
                        return -EINVAL;
                if (v == -1) {
                        disk_file(p, sizeof(p), disk, "queue/rotational");
                        rotational = fake_read(k, p);
                        return write_file_fd(fd, rotational && streq(rotational, "1") ? "75000" : "2000");
                }
                return write_file_fd(fd, value);
        }

        {
                int64_t v;
                int r;

                if (safe_atoi64(value, 0, INT64_MAX, &v) < 0)
                        return -EINVAL;
                r = write_file_fd(fd, value);
                if (r < 0)
                        return r;
        }
        if (streq(rel, "queue/max_sectors_kb") || streq(rel, "queue/add_random") ||
            streq(rel, "queue/iostats"))
                /* These commit the queue limits, and blk_apply_bdi_limits() raises the
                 * read-ahead of a rotational disk to twice the largest request. */
                raise_read_ahead(k, disk);
        return 0;
}

/* wbt_lat_usec holding "EINVAL" reads like a queue whose wbt is not set up. */
static int fake_read_hook(Sysfs *s, const char *disk, const char *rel, void *userdata) {
        _cleanup_(freep) char *text = NULL;
        FakeKernel *k = userdata;
        char p[PATH_MAX];

        if (!streq(rel, "queue/wbt_lat_usec"))
                return 0;
        disk_file(p, sizeof(p), disk, rel);
        text = fake_read(k, p);
        return text && streq(text, "EINVAL") ? -EINVAL : 0;
}

void fake_kernel_attach(FakeKernel *k, Sysfs *s) {
        sysfs_set_hooks(s, fake_read_hook, fake_kernel_write_hook, k);
}

void fake_kernel_forget_writes(FakeKernel *k) {
        k->log[0] = 0;
        k->n_writes = 0;
        k->iocost_writes = 0;
}

int fake_cgroup2_add(FakeKernel *k, const char *mountpoint, bool io, const char *release) {
        char p[PATH_MAX], line[512];
        int r;

        free(k->cgroup);
        k->cgroup = strdup(mountpoint + 1);
        if (!k->cgroup)
                return -ENOMEM;
        snprintf(line, sizeof(line),
                 "22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
                 "30 24 0:26 / %s rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
                 "31 24 0:27 /init.scope /mnt/nested rw shared:10 - cgroup2 cgroup2 rw",
                 mountpoint);
        r = fake_write(k, "proc/self/mountinfo", line);
        if (r < 0)
                return r;
        snprintf(p, sizeof(p), "%s/cgroup.controllers", k->cgroup);
        r = fake_write(k, p, io ? "cpuset cpu io memory pids" : "cpuset cpu memory pids");
        if (r < 0)
                return r;
        /* The nested mount's root is no hierarchy root: never used, though it has io. */
        r = fake_write(k, "mnt/nested/cgroup.controllers", "io");
        if (r < 0)
                return r;
        if (io) {
                snprintf(p, sizeof(p), "%s/io.cost.qos", k->cgroup);
                if ((r = fake_write(k, p, "")) < 0)
                        return r;
                snprintf(p, sizeof(p), "%s/io.cost.model", k->cgroup);
                if ((r = fake_write(k, p, "")) < 0)
                        return r;
        }
        if (release)
                return fake_write(k, "proc/sys/kernel/osrelease", release);
        return 0;
}

/* Replace (or add) the line of @devnum in the cgroup file @file. */
static int iocost_store(FakeKernel *k, const char *file, const char *devnum, const char *line) {
        _cleanup_(strv_freep) char **lines = NULL;
        _cleanup_(freep) char *text = NULL, *joined = NULL;
        char p[PATH_MAX];
        size_t l = strlen(devnum);
        bool done = false;
        int r;

        snprintf(p, sizeof(p), "%s/%s", k->cgroup, file);
        text = fake_read(k, p);
        if (!text)
                return -ENOENT;
        r = strv_split(text, "\n", &lines);
        if (r < 0)
                return r;
        for (char **x = lines; *x; x++)
                if (strncmp(*x, devnum, l) == 0 && (*x)[l] == ' ') {
                        free(*x);
                        *x = strdup(line);
                        done = true;
                }
        if (!done && strv_extend(&lines, line) < 0)
                return -ENOMEM;
        joined = strv_join(lines, "\n");
        if (!joined)
                return -ENOMEM;
        return fake_write(k, p, joined);
}

int fake_iocost_set(FakeKernel *k, const char *file, const char *line) {
        char devnum[32];

        if (sscanf(line, "%31s", devnum) != 1)
                return -EINVAL;
        return iocost_store(k, file, devnum, line);
}

static void iocost_print(const char *devnum, AttrFile f, const int64_t *v, char *buf, size_t size) {
        if (f == ATTR_FILE_IOCOST_QOS)
                snprintf(buf, size,
                         "%s enable=%d ctrl=%s rpct=%u.%02u rlat=%u wpct=%u.%02u wlat=%u min=%u.%02u max=%u.%02u",
                         devnum, (int) v[ATTR_IOCOST_ENABLE], v[ATTR_IOCOST_CTRL] ? "user" : "auto",
                         (unsigned) (v[ATTR_IOCOST_RPCT] / 100), (unsigned) (v[ATTR_IOCOST_RPCT] % 100),
                         (unsigned) v[ATTR_IOCOST_RLAT],
                         (unsigned) (v[ATTR_IOCOST_WPCT] / 100), (unsigned) (v[ATTR_IOCOST_WPCT] % 100),
                         (unsigned) v[ATTR_IOCOST_WLAT],
                         (unsigned) (v[ATTR_IOCOST_MIN] / 100), (unsigned) (v[ATTR_IOCOST_MIN] % 100),
                         (unsigned) (v[ATTR_IOCOST_MAX] / 100), (unsigned) (v[ATTR_IOCOST_MAX] % 100));
        else
                snprintf(buf, size,
                         "%s ctrl=%s model=linear rbps=%" PRIi64 " rseqiops=%" PRIi64 " rrandiops=%" PRIi64
                         " wbps=%" PRIi64 " wseqiops=%" PRIi64 " wrandiops=%" PRIi64,
                         devnum, v[ATTR_IOCOST_MODEL_CTRL] ? "user" : "auto", v[ATTR_IOCOST_MODEL_RBPS],
                         v[ATTR_IOCOST_MODEL_RSEQIOPS], v[ATTR_IOCOST_MODEL_RRANDIOPS],
                         v[ATTR_IOCOST_MODEL_WBPS], v[ATTR_IOCOST_MODEL_WSEQIOPS],
                         v[ATTR_IOCOST_MODEL_WRANDIOPS]);
}

static int iocost_write(FakeKernel *k, const char *disk, const char *file, const char *value) {
        _cleanup_(iocost_state_done) IocostState qos = {}, model = {};
        _cleanup_(freep) char *qtext = NULL, *mtext = NULL, *wbt = NULL, *rot = NULL;
        _cleanup_(strv_freep) char **words = NULL;
        AttrFile f = streq(file, "io.cost.qos") ? ATTR_FILE_IOCOST_QOS : ATTR_FILE_IOCOST_MODEL;
        IocostState *st = f == ATTR_FILE_IOCOST_QOS ? &qos : &model;
        int64_t v[_ATTR_MAX];
        char p[PATH_MAX], line[512];
        const char *devnum;
        int r;

        if (strv_split(value, " \t\n", &words) < 0 || !words[0])
                return -EINVAL;
        devnum = words[0];
        snprintf(p, sizeof(p), "%s/io.cost.qos", k->cgroup);
        qtext = fake_read(k, p);
        snprintf(p, sizeof(p), "%s/io.cost.model", k->cgroup);
        mtext = fake_read(k, p);
        if (!qtext || !mtext)
                return -ENOENT;
        if (iocost_find(ATTR_FILE_IOCOST_QOS, qtext, devnum, &qos) == -ENODATA) {
                /* blk_iocost_init(): the kernel's parameters for an SSD, ctrl=auto */
                static const char *const init_qos =
                        " enable=0 ctrl=auto rpct=0.00 rlat=25000 wpct=0.00 wlat=25000 min=1.00 max=10000.00";
                static const char *const init_model =
                        " ctrl=auto model=linear rbps=488636629 rseqiops=8932 rrandiops=8518 wbps=427891549 "
                        "wseqiops=28755 wrandiops=21940";

                snprintf(line, sizeof(line), "%s%s", devnum, init_qos);
                if (iocost_store(k, "io.cost.qos", devnum, line) < 0 ||
                    iocost_parse_line(ATTR_FILE_IOCOST_QOS, line, NULL, &qos) < 0)
                        return -EIO;
                snprintf(line, sizeof(line), "%s%s", devnum, init_model);
                if (iocost_store(k, "io.cost.model", devnum, line) < 0 ||
                    iocost_parse_line(ATTR_FILE_IOCOST_MODEL, line, NULL, &model) < 0)
                        return -EIO;
        } else if (iocost_find(ATTR_FILE_IOCOST_MODEL, mtext, devnum, &model) < 0)
                return -EIO;

        memcpy(v, st->num, sizeof(v));
        for (char **w = words + 1; *w; w++) {
                char *eq = strchr(*w, '=');
                const AttrInfo *a;
                int64_t n;

                if (!eq)
                        return -EINVAL;
                *eq = 0;
                if (f == ATTR_FILE_IOCOST_MODEL && streq(*w, "model")) {
                        if (!streq(eq + 1, "linear"))
                                return -EINVAL;
                        continue;
                }
                a = attr_from_token(f, *w);
                if (!a)
                        return -EINVAL;
                switch (a->kind) {
                case ATTR_KIND_CTRL:
                        if (!streq(eq + 1, "auto") && !streq(eq + 1, "user"))
                                return -EINVAL;
                        v[a->id] = streq(eq + 1, "user");
                        continue;
                case ATTR_KIND_BOOL:
                        if (safe_atoi64(eq + 1, 0, INT64_MAX, &n) < 0)
                                return -EINVAL;
                        v[a->id] = n != 0;
                        continue;
                case ATTR_KIND_PERCENT:
                        if (percent_parse(eq + 1, &n) < 0 || (!a->clamp && n > 10000))
                                return -EINVAL;
                        v[a->id] = n < a->min ? a->min : n > a->max ? a->max : n;
                        break;
                default:
                        if (safe_atoi64(eq + 1, 0, INT64_MAX, &n) < 0)
                                return -EINVAL;
                        v[a->id] = a->max == UINT32_MAX ? (int64_t) (uint32_t) n : n;
                }
                v[f == ATTR_FILE_IOCOST_QOS ? ATTR_IOCOST_CTRL : ATTR_IOCOST_MODEL_CTRL] = 1;
        }
        if (f == ATTR_FILE_IOCOST_QOS && v[ATTR_IOCOST_MIN] > v[ATTR_IOCOST_MAX])
                return -EINVAL;

        iocost_print(devnum, f, v, line, sizeof(line));
        r = iocost_store(k, file, devnum, line);
        if (r < 0)
                return r;

        if (f == ATTR_FILE_IOCOST_QOS && v[ATTR_IOCOST_ENABLE]) {
                /* wbt_disable_default(): a wbt the user did not set goes off. */
                disk_file(p, sizeof(p), disk, "queue/rotational");
                rot = fake_read(k, p);
                disk_file(p, sizeof(p), disk, "queue/wbt_lat_usec");
                wbt = fake_read(k, p);
                if (wbt && streq(wbt, rot && streq(rot, "1") ? "75000" : "2000"))
                        fake_write(k, p, "0");
        }
        return 0;
}
