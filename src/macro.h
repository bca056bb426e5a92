/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _fallthrough_ __attribute__((fallthrough))

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                 \
        static inline void func##p(type *p) {                   \
                if (*p)                                         \
                        func(*p);                               \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

/* Take ownership of a pointer out of a _cleanup_ variable. */
#define TAKE_PTR(p)                             \
        ({                                      \
                __typeof__(p) _p_ = (p);        \
                (p) = NULL;                     \
                _p_;                            \
        })

#define TAKE_FD(fd)                             \
        ({                                      \
                int _fd_ = (fd);                \
                (fd) = -1;                      \
                _fd_;                           \
        })

#define streq(a, b) (strcmp((a), (b)) == 0)

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return streq(a, b);
}

static inline const char *strempty(const char *s) {
        return s ?: "";
}

static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

static inline const char *startswith(const char *s, const char *prefix) {
        size_t l = strlen(prefix);
        return strncmp(s, prefix, l) == 0 ? s + l : NULL;
}

#define ERRNO_IS_GONE(r) ((r) == -ENOENT || (r) == -ENODEV || (r) == -ENXIO)

/* name##_to_string() and name##_from_string() over a table of names indexed by the enum. */
#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, table, max)                    \
        const char *name##_to_string(type v) {                                         \
                return (unsigned) v < (unsigned) (max) ? table[v] : NULL;              \
        }
#define DEFINE_STRING_TABLE_LOOKUP(name, type, table, max)                              \
        DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type, table, max)                    \
        int name##_from_string(const char *s) {                                        \
                for (int i = 0; i < (int) (max); i++)                                   \
                        if (table[i] && streq(table[i], s))                             \
                                return i;                                               \
                return -EINVAL;                                                         \
        }

#define container_of(ptr, type, member) ((type *) ((char *) (ptr) - offsetof(type, member)))

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}
