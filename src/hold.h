/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "policy.h"

/*
 * A hold: settings a caller asked for one disk, for as long as it holds them (ioschedd drops a
 * hold when Release() is called or the caller's bus connection closes). Holds are layered
 * between the policy and the plan: a disk's holds are rules after every rule of the
 * configuration, the oldest first, so the newest hold wins key by key and releasing one
 * brings back what is below it: an older hold, or the policy.
 *
 * Pure: the daemon keeps the holds, tracks their holders and publishes them.
 */
typedef struct Hold {
        unsigned n_ref;
        uint32_t id;            /* the handle, > 0 */
        char *disk;
        char *holder;           /* for people: "ioschedctl (pid 4242, uid 0)" */
        char *reason;
        uint64_t since;         /* CLOCK_REALTIME usec */
        Rule *rule;             /* the settings, as a rule that matches the disk by name */
} Hold;

#define HOLD_REASON_MAX 256
#define HOLD_HOLDER_MAX 256

/**
 * hold_new() - a hold without settings yet
 * @id: its handle
 * @disk: the disk's kernel name; must be valid (disk_name_is_valid())
 * @holder: who holds it, for people; cut to HOLD_HOLDER_MAX, escaped for logs
 * @reason: why; cut to HOLD_REASON_MAX, escaped for logs
 *
 * The hold's rule is named "hold-ID" and its provenance is "hold ID by HOLDER: REASON", so
 * that a value a hold set shows where it came from like any other.
 *
 * Return: 0, -EINVAL for an invalid disk name, -ENOMEM.
 */
int hold_new(uint32_t id, const char *disk, const char *holder, const char *reason, uint64_t since,
             Hold **ret);
Hold *hold_ref(Hold *h);
Hold *hold_unref(Hold *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(Hold *, hold_unref);

/**
 * hold_add_setting() - add a setting, parsed as the configuration parses it
 * Return: see rule_add_setting(); match.* keys are refused (-EINVAL).
 */
int hold_add_setting(Hold *h, const char *key, const char *value, const char **ret_error);

/* "scheduler=none read_ahead_kb=4096", a new string; NULL on out of memory. */
char *hold_settings_text(const Hold *h);

/**
 * policy_with_holds() - a policy whose rules are @p's, then @holds' in the order given
 * @p: the configuration's policy; NULL is none
 * @holds: the holds of one disk, oldest first
 * @ret: a policy that borrows every rule: free it with policy_free_borrowed()
 *
 * Return: 0 or -ENOMEM.
 */
int policy_with_holds(const Policy *p, Hold *const *holds, size_t n, Policy **ret);
Policy *policy_free_borrowed(Policy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Policy *, policy_free_borrowed);
