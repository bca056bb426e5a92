/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loopctl remove INDEX: remove a loop device with LOOP_CTL_REMOVE, so that the disk really
 * goes away (losetup can only detach). Retries for a while when the device is busy (udev may
 * hold it open for a moment). For the root tests only: they remove loop devices they made.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        const struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
        char *end;
        long idx;
        int fd;

        if (argc != 3 || strcmp(argv[1], "remove") != 0) {
                fprintf(stderr, "usage: %s remove INDEX\n", argv[0]);
                return 64;
        }
        errno = 0;
        idx = strtol(argv[2], &end, 10);
        if (errno || *end || end == argv[2] || idx < 0 || idx > (1 << 20)) {
                fprintf(stderr, "invalid index \"%s\"\n", argv[2]);
                return 64;
        }
        fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        if (fd < 0) {
                perror("/dev/loop-control");
                return 1;
        }
        for (int i = 0; i < 250; i++) {
                if (ioctl(fd, LOOP_CTL_REMOVE, (int) idx) >= 0 || errno == ENODEV)
                        return 0;
                if (errno != EBUSY)
                        break;
                nanosleep(&pause, NULL);
        }
        fprintf(stderr, "cannot remove loop%ld: %s\n", idx, strerror(errno));
        return 1;
}
