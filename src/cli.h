/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <getopt.h>
#include <stdio.h>

/* What the programs' command lines share: --help, --version, the usage exit status. */
#define EXIT_USAGE 64

enum {
        CLI_ARG_VERSION = 0x100,
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
