/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "util.h"

char **strv_free(char **l) {
        if (!l)
                return NULL;
        for (char **i = l; *i; i++)
                free(*i);
        free(l);
        return NULL;
}

size_t strv_length(char * const *l) {
        size_t n = 0;

        if (!l)
                return 0;
        while (l[n])
                n++;
        return n;
}

int strv_push(char ***l, char *value) {
        size_t n;
        char **c;

        assert(l);
        n = strv_length(*l);
        if (!value)
                return -ENOMEM;
        c = realloc(*l, sizeof(char *) * (n + 2));
        if (!c) {
                free(value);
                return -ENOMEM;
        }
        c[n] = value;
        c[n + 1] = NULL;
        *l = c;
        return 0;
}

int strv_extend(char ***l, const char *value) {
        assert(l);

        return strv_push(l, strdup(value));
}

bool strv_contains(char * const *l, const char *s) {
        for (char * const *i = l; i && *i; i++)
                if (streq(*i, s))
                        return true;
        return false;
}

bool strv_equal(char * const *a, char * const *b) {
        for (; !strv_isempty(a) && !strv_isempty(b); a++, b++)
                if (!streq(*a, *b))
                        return false;
        return strv_isempty(a) && strv_isempty(b);
}

char **strv_copy(char * const *l) {
        _cleanup_(strv_freep) char **c = NULL;

        c = calloc(strv_length(l) + 1, sizeof(char *));
        if (!c)
                return NULL;
        for (size_t i = 0; l && l[i]; i++) {
                c[i] = strdup(l[i]);
                if (!c[i])
                        return NULL;
        }
        return TAKE_PTR(c);
}

char *strv_join(char * const *l, const char *sep) {
        size_t n = 0, k = strlen(sep);
        char *r, *p;

        for (char * const *i = l; i && *i; i++)
                n += strlen(*i) + k;
        r = malloc(n + 1);
        if (!r)
                return NULL;
        p = r;
        for (char * const *i = l; i && *i; i++) {
                if (i != l)
                        p = stpcpy(p, sep);
                p = stpcpy(p, *i);
        }
        *p = 0;
        return r;
}

int strv_split(const char *s, const char *sep, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        const char *p = s;

        assert(s && sep && ret);
        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (;;) {
                size_t n;
                int r;

                p += strspn(p, sep);
                if (!*p)
                        break;
                n = strcspn(p, sep);
                r = strv_push(&l, strndup(p, n));
                if (r < 0)
                        return r;
                p += n;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int greedy_realloc(void **p, size_t *allocated, size_t need, size_t size) {
        size_t n;
        void *q;

        assert(p && allocated && size > 0);
        if (need <= *allocated && (*p || need == 0))
                return 0;
        n = need > SIZE_MAX / 2 / size ? need : need * 2;
        if (n < 4)
                n = 4;
        if (n > SIZE_MAX / size)
                return -ENOMEM;
        q = realloc(*p, n * size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *allocated = n;
        return 0;
}

int safe_atoi64(const char *s, int64_t min, int64_t max, int64_t *ret) {
        char *end = NULL;
        long long v;

        assert(ret);
        if (!s || !*s || isspace((unsigned char) *s))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno > 0)
                return -errno;
        if (!end || *end)
                return -EINVAL;
        if (v < min || v > max)
                return -ERANGE;
        if (ret)
                *ret = v;
        return 0;
}

int parse_boolean(const char *s) {
        if (!s)
                return -EINVAL;
        if (streq(s, "1") || streq(s, "yes") || streq(s, "true") || streq(s, "on"))
                return 1;
        if (streq(s, "0") || streq(s, "no") || streq(s, "false") || streq(s, "off"))
                return 0;
        return -EINVAL;
}

char *strstrip(char *s) {
        char *e;

        assert(s);
        while (isspace((unsigned char) *s))
                s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char) e[-1]))
                e--;
        *e = 0;
        return s;
}

char *strstrip_inplace(char *s) {
        char *t = strstrip(s);

        if (t != s)
                memmove(s, t, strlen(t) + 1);
        return s;
}

static int strverscmp_ptr(const void *a, const void *b) {
        return strverscmp(*(char * const *) a, *(char * const *) b);
}

void strv_sort(char **l) {
        qsort(l, strv_length(l), sizeof(char *), strverscmp_ptr);
}

char *strdup_printf(const char *fmt, ...) {
        va_list ap;
        char *s;
        int r;

        assert(fmt);
        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

int free_and_strdup(char **p, const char *s) {
        char *c = NULL;

        assert(p);
        if (s) {
                c = strdup(s);
                if (!c)
                        return -ENOMEM;
        }
        free(*p);
        *p = c;
        return 0;
}

bool string_is_printable(const char *s, size_t max) {
        size_t n = 0;

        assert(s);
        while (*s) {
                size_t k;

                if (n++ >= max)
                        return false;
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return false;
                /* Text from udev and sysfs goes onto D-Bus and into JSON: both need UTF-8. */
                k = utf8_char_len(s);
                if (k == 0)
                        return false;
                s += k;
        }
        return true;
}

size_t utf8_char_len(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        size_t n;
        uint32_t c;

        assert(s);
        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                n = 2, c = p[0] & 0x1f;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
                n = 3, c = p[0] & 0x0f;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
                n = 4, c = p[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                c = (c << 6) | (p[i] & 0x3f);
        }
        /* no overlong forms, no surrogates, nothing above U+10FFFF */
        if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
            (c >= 0xd800 && c <= 0xdfff))
                return 0;
        return n;
}

bool utf8_is_valid(const char *s) {
        assert(s);

        for (size_t n; *s; s += n) {
                n = utf8_char_len(s);
                if (n == 0)
                        return false;
        }
        return true;
}

char *escape_for_log(const char *s, size_t max) {
        size_t len = strlen(s), shown = 0;
        char *buf, *o;

        assert(s);
        /* at most 4 output bytes per input byte, "..." and the NUL */
        buf = malloc((len < max ? len : max) * 4 + 8);
        if (!buf)
                return NULL;
        o = buf;
        while (*s) {
                unsigned char c = (unsigned char) *s;
                size_t n = utf8_char_len(s);

                if (shown >= max) {
                        o = stpcpy(o, "...");
                        break;
                }
                shown++;
                if (c == '\\') {
                        *o++ = '\\';
                        *o++ = (char) c;
                        s++;
                } else if (c == '\n' || c == '\t') {
                        *o++ = '\\';
                        *o++ = c == '\n' ? 'n' : 't';
                        s++;
                } else if (c < 0x20 || c == 0x7f || n == 0) {
                        o += sprintf(o, "\\x%02x", c);
                        s++;
                } else {
                        memcpy(o, s, n);
                        o += n;
                        s += n;
                }
        }
        *o = 0;
        return buf;
}

int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_size) {
        _cleanup_(freep) char *buf = NULL;
        size_t n = 0, alloc = 0;

        assert(ret);
        for (;;) {
                ssize_t k;

                if (n + 1 >= alloc) {
                        size_t want = alloc ? alloc * 2 : 4096;
                        char *b;

                        if (want > max + 2)
                                want = max + 2;
                        if (want <= n + 1)
                                return -EFBIG;
                        b = realloc(buf, want);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        alloc = want;
                }
                k = read(fd, buf + n, alloc - n - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                n += k;
                if (n > max)
                        return -EFBIG;
        }
        if (!buf) {
                buf = malloc(1);
                if (!buf)
                        return -ENOMEM;
        }
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = n;
        return 0;
}

bool path_is_safe_relative(const char *p) {
        if (!p || p[0] == '/')
                return false;
        for (const char *c = p; *c;) {
                size_t n = strcspn(c, "/");

                if (n == 2 && c[0] == '.' && c[1] == '.')
                        return false;
                c += n;
                c += strspn(c, "/");
        }
        return true;
}

int path_printf(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int n;

        assert(buf && size > 0);
        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int opendir_at(int dirfd, const char *path, DIR **ret) {
        _cleanup_(closep) int fd = -1;
        DIR *d;

        assert(path && ret);
        fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        TAKE_FD(fd);
        *ret = d;
        return 0;
}

int read_file_bounded(int dirfd, const char *path, size_t max, char **ret, size_t *ret_size) {
        _cleanup_(closep) int fd = -1;

        assert(path && ret);
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_fd_bounded(fd, max, ret, ret_size);
}

int kernel_release_parse(const char *release, unsigned *ret_major, unsigned *ret_minor,
                         unsigned *ret_patch) {
        unsigned major, minor, patch = 0;
        int n = 0;

        assert(ret_major && ret_minor && ret_patch);
        if (!release || sscanf(release, "%u.%u%n", &major, &minor, &n) != 2)
                return -EINVAL;
        if (release[n] == '.' && sscanf(release + n, ".%u", &patch) != 1)
                return -EINVAL;
        *ret_major = major;
        *ret_minor = minor;
        *ret_patch = patch;
        return 0;
}

uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

bool string_in_charset(const char *s, const char *set, size_t max) {
        size_t n;

        if (!s)
                return false;
        n = strspn(s, set);
        return n > 0 && n <= max && s[n] == 0;
}
