/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "macro.h"

/* NULL-terminated string vectors. */
char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
size_t strv_length(char * const *l);
static inline bool strv_isempty(char * const *l) { return !l || !*l; }
int strv_push(char ***l, char *value);   /* takes ownership, also on failure */
int strv_extend(char ***l, const char *value);
bool strv_contains(char * const *l, const char *s);
char **strv_copy(char * const *l);
char *strv_join(char * const *l, const char *sep);
int strv_split(const char *s, const char *sep, char ***ret);

int safe_atoi64(const char *s, int64_t min, int64_t max, int64_t *ret);
int parse_boolean(const char *s);

char *strstrip(char *s);
char *strstrip_inplace(char *s);    /* strips and moves the text to the start */
void strv_sort(char **l);            /* version sort: loop2 before loop10 */
char *strdup_printf(const char *fmt, ...) _printf_(1, 2);
int free_and_strdup(char **p, const char *s);
bool string_is_printable(const char *s, size_t max);

/* The length of the well-formed UTF-8 sequence at @s (1 for ASCII), or 0 for a byte that starts
 * none: a stray continuation byte, an overlong form, a surrogate, a code point past U+10FFFF, or
 * a sequence cut short (also by the NUL). */
size_t utf8_sequence_len(const char *s);
bool utf8_is_valid(const char *s);
/* A copy of @s with each byte that starts no well-formed sequence replaced by U+FFFD; NULL
 * when out of memory. Text from devices and sysfs is bytes; D-Bus and JSON take UTF-8 only. */
char *utf8_make_valid(const char *s);

int read_file_bounded(int dirfd, const char *path, size_t max, char **ret, size_t *ret_size);
int read_fd_bounded(int fd, size_t max, char **ret, size_t *ret_size);

uint64_t now_usec(void);
