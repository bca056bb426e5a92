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
        CLI_ARG_CONFIG_ROOT,
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

/*
 * The paths iosched-apply and ioschedd take, with one meaning in both:
 *   --root=DIR         the root of every path the program uses: /sys, /proc, /dev, /run/udev,
 *                      /lib/modules, the configuration (/etc, /run, /usr/lib) and the runtime
 *                      directory (default "/")
 *   --config-root=DIR  the root of the configuration alone (default: --root)
 *   --config=FILE      that file alone, as given: no main file, no drop-ins
 *   --runtime-dir=DIR  where ioschedd announces that it handles udev events (default:
 *                      ROOT/run/ioschedd)
 * @a is the program's argument struct, with the fields root, config, config_root, runtime_dir.
 */
#define CLI_OPTIONS_PATHS                                               \
        { "root", required_argument, NULL, CLI_ARG_ROOT },              \
        { "config", required_argument, NULL, CLI_ARG_CONFIG },          \
        { "config-root", required_argument, NULL, CLI_ARG_CONFIG_ROOT }, \
        { "runtime-dir", required_argument, NULL, CLI_ARG_RUNTIME_DIR }

#define CLI_CASES_PATHS(a)                                      \
        case CLI_ARG_ROOT:                                      \
                (a).root = optarg;                              \
                break;                                          \
        case CLI_ARG_CONFIG:                                    \
                (a).config = optarg;                            \
                break;                                          \
        case CLI_ARG_CONFIG_ROOT:                               \
                (a).config_root = optarg;                       \
                break;                                          \
        case CLI_ARG_RUNTIME_DIR:                               \
                (a).runtime_dir = optarg;                       \
                break

/* The help text of the paths, for the programs' --help. */
#define CLI_HELP_PATHS                                                                          \
        "     --root=DIR             Use DIR as the root of every path: /sys, /proc, /dev,\n"    \
        "                            /run, the configuration (/etc, /usr/lib)\n"                 \
        "     --config-root=DIR      Read the configuration below DIR (default: --root)\n"       \
        "     --config=FILE          Read FILE alone, no main file and no drop-ins\n"            \
        "     --runtime-dir=DIR      Where ioschedd announces that it handles udev events\n"     \
        "                            (default ROOT/run/ioschedd)\n"

/**
 * cli_paths_finish() - the defaults of the paths, once the command line is parsed
 * @root: --root; NULL becomes "/"
 * @config: --config
 * @config_root: --config-root; NULL becomes *@root
 * @runtime_dir: --runtime-dir; NULL becomes ROOT/run/ioschedd, in *@ret_runtime_dir_buf
 * @ret_runtime_dir_buf: what to free at exit (NULL when nothing was allocated)
 *
 * --config with --config-root is an error, logged.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int cli_paths_finish(const char **root, const char *config, const char **config_root,
                     const char **runtime_dir, char **ret_runtime_dir_buf);

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
