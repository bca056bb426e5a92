/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>

#include "macro.h"

/* NULL-terminated string vectors. */
char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);
size_t strv_length(char * const *l);
static inline bool strv_isempty(char * const *l) { return !l || !*l; }
int strv_push(char ***l, char *value);   /* takes ownership, also on failure */
int strv_extend(char ***l, const char *value);
bool strv_contains(char * const *l, const char *s);
bool strv_equal(char * const *a, char * const *b);     /* NULL equals empty */
char **strv_copy(char * const *l);
char *strv_join(char * const *l, const char *sep);
int strv_split(const char *s, const char *sep, char ***ret);

/**
 * greedy_realloc() - make room for @need elements of @size bytes in *@p
 * @p: the array (may be NULL)
 * @allocated: how many elements *@p has room for; updated
 * @need: how many it must hold
 * @size: the size of one element
 *
 * Grows to twice what is needed, so that appending one element at a time costs amortised O(1)
 * (systemd's GREEDY_REALLOC()). Use GREEDY_REALLOC(array, allocated, need).
 *
 * Return: 0, or -ENOMEM (*@p is left as it was).
 */
int greedy_realloc(void **p, size_t *allocated, size_t need, size_t size);
#define GREEDY_REALLOC(array, allocated, need) \
        greedy_realloc((void **) &(array), &(allocated), (need), sizeof((array)[0]))

int safe_atoi64(const char *s, int64_t min, int64_t max, int64_t *ret);
int parse_boolean(const char *s);

char *strstrip(char *s);
char *strstrip_inplace(char *s);    /* strips and moves the text to the start */
void strv_sort(char **l);            /* version sort: loop2 before loop10 */
char *strdup_printf(const char *fmt, ...) _printf_(1, 2);
int free_and_strdup(char **p, const char *s);
#define CHARSET_LOWER_DIGITS "abcdefghijklmnopqrstuvwxyz0123456789"
#define CHARSET_ALNUM CHARSET_LOWER_DIGITS "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
/* Whether @s has 1 to @max characters, each one of @set. */
bool string_in_charset(const char *s, const char *set, size_t max);

/* Valid UTF-8 without control characters, at most @max characters. */
bool string_is_printable(const char *s, size_t max);

/* The length of the valid UTF-8 character at @s (1-4), 0 for a byte that starts none. */
size_t utf8_char_len(const char *s);
/* Whether all of @s is valid UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF). Config text must be: errors quote it, and they go on the bus. */
bool utf8_is_valid(const char *s);

/**
 * escape_for_log() - make an untrusted string safe to print in one log line
 * @s: the string (from a file, the command line, the kernel)
 * @max: characters of @s to show at most; longer strings end in "..."
 *
 * Control characters, DEL, backslash and bytes that are no valid UTF-8 become C escapes
 * (\n, \x1b, \xff, \\): a name with a newline cannot forge a second log line, nor binary
 * junk drive a terminal or break the journal's UTF-8.
 *
 * Return: a new string, NULL on out of memory.
 */
char *escape_for_log(const char *s, size_t max);

/* Whether @p is a relative path without a ".." component: it stays below the directory it is
 * taken relative to. */
bool path_is_safe_relative(const char *p);

/**
 * path_printf() - format a path into a buffer
 * Return: 0, or -ENAMETOOLONG when it does not fit (what snprintf() would have cut).
 */
int path_printf(char *buf, size_t size, const char *fmt, ...) _printf_(3, 4);

/* opendir() of @path relative to @dirfd (O_CLOEXEC). Return: 0 or a negative errno. */
int opendir_at(int dirfd, const char *path, DIR **ret);

int read_file_bounded(int dirfd, const char *path, size_t max, char **ret, size_t *ret_size);
int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_size);

/**
 * kernel_release_parse() - the version numbers of a kernel release
 * @release: uname's release: "6.16.3+deb14-amd64", "6.16-rc3", "6.16"
 * @ret_major, @ret_minor: "6", "16"
 * @ret_patch: the third number, 0 when there is none ("6.16-rc3", "6.16")
 *
 * Return: 0, or -EINVAL for NULL or a release that is not MAJOR.MINOR[.PATCH]...
 */
int kernel_release_parse(const char *release, unsigned *ret_major, unsigned *ret_minor,
                         unsigned *ret_patch);

uint64_t now_usec(void);
