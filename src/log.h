/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <syslog.h>

#include "macro.h"

typedef enum LogTarget {
        LOG_TARGET_CONSOLE,     /* stderr; "<N>" priority prefix when stderr is not a terminal */
        LOG_TARGET_SYSLOG,      /* syslog(3), for programs run by udevd; the kernel's log
                                 * (/dev/kmsg) where nothing listens on /dev/log */
        LOG_TARGET_KMSG,        /* what LOG_TARGET_SYSLOG becomes in an initramfs */
} LogTarget;

void log_set_max_level(int level);
int log_get_max_level(void);
void log_set_target(LogTarget target);
void log_set_prefix(const char *ident);
/* Console: -1 (default) "<N>" priority prefixes when stderr is not a terminal, 0 never, 1 always. */
void log_set_console_prefix(int mode);
int log_parse_level(const char *s);

/* Logs at @level and returns -abs(@error), so that callers can write
 * "return log_error_errno(r, ...)". @error is made available to %m. */
int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_full_errno(level, error, ...)                                               \
        ({                                                                              \
                int _l_ = (level), _e_ = (error);                                       \
                (log_get_max_level() >= _l_)                                            \
                        ? log_internal(_l_, _e_, __VA_ARGS__)                           \
                        : -abs(_e_);                                                    \
        })

#define log_debug(...)   (void) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)    (void) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_warning(...) (void) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)   (void) log_full_errno(LOG_ERR, 0, __VA_ARGS__)

#define log_debug_errno(e, ...)   log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, e, __VA_ARGS__)
#define log_oom()                 log_full_errno(LOG_ERR, ENOMEM, "Out of memory.")
