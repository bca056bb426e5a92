/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* Write @s as a JSON string (with quotes), or null. Control characters are escaped; bytes
 * that are not well-formed UTF-8 (sysfs and devices give bytes) become U+FFFD. */
void json_string(FILE *f, const char *s);

/* A member of a JSON object whose value is a string (or null). */
typedef struct JsonMember {
        const char *name;
        const char *value;
} JsonMember;

/* Write @n members as "name":value, separated by commas (no braces: the caller adds members
 * of other types around them). */
void json_members(FILE *f, const JsonMember *m, size_t n);
