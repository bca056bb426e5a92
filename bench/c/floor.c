/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * floor: the least a first pass can cost. Reads each matching disk's sysfs files and udev
 * entry, with no logic: what ioschedd's first pass reads of a disk to know it in full, opened
 * as it opens them (relative to the disk's directory, one read(2) each), parsed not at all.
 * bench/scale compares the daemon's first pass with it.
 *
 *   floor ROOT GLOB   prints "DISKS USEC": the disks read and the microseconds it took
 */
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const files[] = {
        "dev", "diskseq", "removable", "size",
        "queue/rotational", "queue/max_hw_sectors_kb", "queue/zoned", "queue/scheduler",
        "queue/nr_requests", "queue/wbt_lat_usec", "queue/max_sectors_kb", "queue/rq_affinity",
        "queue/nomerges", "queue/add_random", "queue/iostats", "queue/read_ahead_kb",
};

static char buf[4097];

/* One read(2) of @rel below @dirfd; the length read, -1 when it cannot be. */
static ssize_t slurp(int dirfd, const char *rel) {
        int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t k;

        if (fd < 0)
                return -1;
        k = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (k >= 0)
                buf[k] = 0;
        return k;
}

/* Each entry of @rel below @parent, read too when @read_each. */
static void walk(int parent, const char *rel, int read_each) {
        int fd = openat(parent, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;

        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));)
                if (read_each && de->d_name[0] != '.')
                        (void) slurp(dirfd(d), de->d_name);
        closedir(d);
}

static void read_disk(int root, const char *name) {
        char path[512], link[4096];
        unsigned maj, min;
        int dfd;

        snprintf(path, sizeof(path), "sys/class/block/%s", name);
        if (readlinkat(root, path, link, sizeof(link)) < 0)
                return;
        dfd = openat(root, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return;
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                if (slurp(dfd, files[i]) > 0 && i == 0 && sscanf(buf, "%u:%u", &maj, &min) == 2) {
                        snprintf(path, sizeof(path), "run/udev/data/b%u:%u", maj, min);
                        (void) slurp(root, path);
                }
        walk(dfd, "mq", 0);
        walk(dfd, "queue/iosched", 1);
        close(dfd);
}

int main(int argc, char *argv[]) {
        struct timespec a, b;
        unsigned n = 0;
        DIR *d;
        int root;

        if (argc != 3) {
                fprintf(stderr, "usage: floor ROOT GLOB\n");
                return 64;
        }
        root = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) {
                perror(argv[1]);
                return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &a);
        d = fdopendir(openat(root, "sys/class/block", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!d) {
                perror("sys/class/block");
                return 1;
        }
        for (struct dirent *de; (de = readdir(d));)
                if (fnmatch(argv[2], de->d_name, 0) == 0) {
                        read_disk(root, de->d_name);
                        n++;
                }
        closedir(d);
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("%u %lld\n", n, (long long) (b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000);
        return 0;
}
