/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static int max_level = LOG_INFO;
static LogTarget target = LOG_TARGET_CONSOLE;
static const char *prefix = NULL;
static int console_prefix = -1;
static int kmsg_fd = -1;

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

void log_set_target(LogTarget t) {
        target = t;
        if (t != LOG_TARGET_SYSLOG)
                return;
        /* In an initramfs made by initramfs-tools nothing listens on /dev/log, and syslog(3)
         * drops every line; the kernel's log keeps them, and the journal takes them over after
         * the switch to the real root (with the identifier, which it parses out of the line). */
        if (access("/dev/log", F_OK) < 0 && kmsg_fd < 0)
                kmsg_fd = open("/dev/kmsg", O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (kmsg_fd >= 0)
                target = LOG_TARGET_KMSG;
        else
                openlog(prefix, LOG_PID, LOG_DAEMON);
}

void log_set_prefix(const char *ident) {
        prefix = ident;
}

void log_set_console_prefix(int mode) {
        console_prefix = mode < 0 ? -1 : !!mode;
}

int log_parse_level(const char *s) {
        static const char *const names[] = {
                "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (streq(s, names[i]))
                        return (int) i;
        if (s[0] >= '0' && s[0] <= '7' && !s[1])
                return s[0] - '0';
        return -EINVAL;
}

int log_internal(int level, int error, const char *fmt, ...) {
        char buf[2048];
        va_list ap;
        int saved = errno;

        errno = abs(error);
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);

        if (target == LOG_TARGET_SYSLOG)
                syslog(level, "%s", buf);
        else if (target == LOG_TARGET_KMSG) {
                char line[sizeof(buf) + 64];
                int n;

                /* One write, one record of the kernel's log. (Not dprintf(): glibc's gives up
                 * on the failed lseek() of /dev/kmsg and writes nothing.) */
                n = snprintf(line, sizeof(line), "<%d>%s[%d]: %s\n", LOG_DAEMON | level,
                             strempty(prefix), (int) getpid(), buf);
                if (n > 0)
                        (void) !write(kmsg_fd, line, MIN((size_t) n, sizeof(line) - 1));
        } else {
                if (console_prefix < 0)
                        /* journald (and systemd's stderr capture) read "<N>" as the
                         * priority of the line; a person at a terminal does not want it. */
                        console_prefix = !isatty(STDERR_FILENO) || getenv("JOURNAL_STREAM");
                if (console_prefix)
                        fprintf(stderr, "<%d>%s\n", level, buf);
                else
                        fprintf(stderr, "%s\n", buf);
        }
        errno = saved;
        return -abs(error);
}
