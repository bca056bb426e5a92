/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/* Write @s as a JSON string (with quotes), or null. */
void json_string(FILE *f, const char *s);
