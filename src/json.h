/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/* Write @s as a JSON string (with quotes), or null. Control characters are escaped; bytes
 * that are not well-formed UTF-8 (sysfs and devices give bytes) become U+FFFD. */
void json_string(FILE *f, const char *s);
