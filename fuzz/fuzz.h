/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the fuzz targets. Each target defines LLVMFuzzerTestOneInput(); it is linked
 * either with libFuzzer (meson -Dfuzzer=true, clang) or with fuzz-main.c, which replays the
 * files of a corpus through it (the "fuzz-*" unit tests of every normal build).
 *
 * Targets check invariants with fuzz_check(), never assert(): a release build must not
 * compile the checks out.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "disk.h"
#include "policy.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_check(cond)                                                                               \
        do {                                                                                           \
                if (!(cond)) {                                                                         \
                        fprintf(stderr, "%s:%d: invariant violated: %s\n", __FILE__, __LINE__, #cond); \
                        abort();                                                                       \
                }                                                                                      \
        } while (0)

/* Out of memory is not a finding: ASan aborts on huge allocations before we see NULL. */
#define fuzz_oom_check(p) fuzz_check((p) != NULL)

/* A NUL-terminated copy of @size bytes; an embedded NUL ends the string as in C. */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* The next line of the input (without its "\n"), newly allocated; NULL at the end. */
char *fuzz_next_line(const uint8_t **p, size_t *left);

/* True when @s is free of bytes below 0x20 and of DEL (what JSON and terminals take raw). */
bool fuzz_no_control_chars(const char *s, size_t n);

/* True when @s is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF). */
bool fuzz_utf8_is_valid(const char *s, size_t n);

/* A policy parsed from @text ("p.conf"), which must parse without errors. */
Policy *fuzz_policy_parse(const char *text);

/*
 * Disks of several kinds, built in memory as sysfs_load_disk() would have read them:
 * 0 loop0 (none, non-rotational, wbt not set up), 1 sda (ATA, rotational, mq-deadline with its
 * tunables), 2 nvme0n1 (host-managed zoned, 4 queues), 3 dm-0 (bio-based), 4 sdb1 (partition),
 * 5 vdb (virtio, bfq, wbt off).
 */
#define FUZZ_N_DISKS 6
Disk *fuzz_disk_new(unsigned which);
