/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "writers.h"

/* A TuneD profile file (tuned.conf), parsed: sections and keys with their lines. */
typedef struct TunedProfile TunedProfile;

/**
 * tuned_profile_parse() - parse a TuneD profile's tuned.conf
 * @name: the profile's name
 * @filename: named in the writers found
 * @ret: the profile
 *
 * Python's ConfigParser syntax as TuneD uses it: [section], key=value, "#" and ";" comments,
 * "#" also after a value. A line that is neither is skipped (TuneD would refuse the file: the
 * writers it would make are then wrong, but none is invented).
 *
 * Return: 0 or -ENOMEM.
 */
int tuned_profile_parse(const char *name, const char *filename, const char *text, size_t size,
                        TunedProfile **ret);
TunedProfile *tuned_profile_free(TunedProfile *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(TunedProfile *, tuned_profile_free);

/**
 * tuned_profile_includes() - the profiles [main] include= names, in order
 * Return: 0 or -ENOMEM; *ret is an empty list when there is none.
 */
int tuned_profile_includes(const TunedProfile *p, char ***ret);

/**
 * writers_add_tuned() - the writers of TuneD's merged profile
 * @chain: the profiles in TuneD's load order: each profile after the ones it includes,
 *         the active profiles in the order active_profile lists them
 * @n: how many
 *
 * Sections merge by name, a later one's keys winning (replace=1: the later one alone), as
 * TuneD's merger does; [variables] are substituted. [disk] units write elevator and
 * readahead (queue/read_ahead_kb) for the devices= they take (a disk is taken by the first
 * [disk] unit that matches it); [sysfs] keys write the paths they name.
 *
 * Return: 0 or -ENOMEM.
 */
int writers_add_tuned(Writers *w, TunedProfile * const *chain, size_t n);
