/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

/* What the programs' command lines share: --help, --version, the usage exit status, the paths
 * iosched-apply and ioschedd both take, and the check of a numeric option. */
#define EXIT_USAGE 64

enum {
        CLI_ARG_VERSION = 0x100,
        CLI_ARG_ROOT,
        CLI_ARG_CONFIG,
        CLI_ARG_RUNTIME_DIR,
        _CLI_ARG_FIRST,         /* a program's own long options start here */
};

#define CLI_OPTIONS_COMMON                                      \
        { "help", no_argument, NULL, 'h' },                     \
        { "version", no_argument, NULL, CLI_ARG_VERSION }

#define CLI_CASES_COMMON(help)                                  \
        case 'h':                                               \
                help();                                         \
                return 0;                                       \
        case CLI_ARG_VERSION:                                   \
                puts("iosched " IOSCHED_VERSION);               \
                return 0

/* --root=DIR, --config=FILE and --runtime-dir=DIR: the same meaning in iosched-apply and
 * ioschedd. @a is the program's argument struct, with the fields root, config, runtime_dir. */
#define CLI_OPTIONS_PATHS                                               \
        { "root", required_argument, NULL, CLI_ARG_ROOT },              \
        { "config", required_argument, NULL, CLI_ARG_CONFIG },          \
        { "runtime-dir", required_argument, NULL, CLI_ARG_RUNTIME_DIR }

#define CLI_CASES_PATHS(a)                                      \
        case CLI_ARG_ROOT:                                      \
                (a).root = optarg;                              \
                break;                                          \
        case CLI_ARG_CONFIG:                                    \
                (a).config = optarg;                            \
                break;                                          \
        case CLI_ARG_RUNTIME_DIR:                               \
                (a).runtime_dir = optarg;                       \
                break

/**
 * cli_parse_range() - Parse the argument of a numeric option.
 * @option: the option with its dashes ("--workers"), for the error message
 * @s: the argument
 * @min: the smallest value accepted
 * @max: the largest value accepted
 * @unit: what the number counts ("seconds"), for the error message, or NULL
 * @ret: the value; not written on failure
 *
 * A value that is not a whole number from @min to @max is logged as an error that names the
 * option, the argument and the range.
 *
 * Return: 0, or -EINVAL.
 */
int cli_parse_range(const char *option, const char *s, int64_t min, int64_t max, const char *unit,
                    int64_t *ret);
