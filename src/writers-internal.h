/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What writers.c, writers-udev.c and writers-tuned.c share: the registry of a host's writers. */

#include "writers.h"

/* Bounds on what one host's files can make us keep: a file of junk must not grow the daemon. */
#define WRITERS_MAX 4096

/* Three-valued logic over Applies: NO < MAYBE < YES. */
static inline Applies tri_and(Applies a, Applies b) {
        return MIN(a, b);
}

static inline Applies tri_or(Applies a, Applies b) {
        return MAX(a, b);
}

static inline Applies tri_not(Applies a) {
        return APPLIES_YES - a;
}

static inline Applies tri_of(bool b) {
        return b ? APPLIES_YES : APPLIES_NO;
}

/* Room for one more element at the end of the array *@array of @n elements of @size: a pointer
 * to the new (uninitialized) element, or NULL on out of memory (the array stays as it was). */
static inline void *array_append(void *array, size_t n, size_t size) {
        void **p = array, *q;

        q = realloc(*p, (n + 1) * size);
        if (!q)
                return NULL;
        *p = q;
        return (char *) q + n * size;
}

typedef struct UdevFile UdevFile;

/* Which disks a writer's place reaches. */
typedef enum Scope {
        SCOPE_ALL,              /* every disk with a scheduler (elevator=) */
        SCOPE_UDEV,             /* a line of a udev rules file, run per disk */
        SCOPE_TUNED_DISK,       /* a TuneD [disk] unit */
        SCOPE_PATH,             /* a sysfs path, maybe a glob (TuneD [sysfs], sysfsutils) */
        SCOPE_NAME,             /* one kernel name (TLP); NULL: unknown, any disk */
} Scope;

typedef struct WriterEntry {
        Writer w;
        Scope scope;
        size_t file, line;      /* SCOPE_UDEV: indices into udev_files and its lines */
        bool other_device;      /* SCOPE_UDEV: a RUN whose path is not the event's device */
        size_t unit;            /* SCOPE_TUNED_DISK: index into tuned_units */
        char *pattern;          /* SCOPE_PATH: the device part of the path, "/sys/block/sd*" */
        char *name;             /* SCOPE_NAME */
        char *program;          /* a RUN writer's program, as the rule names it */
} WriterEntry;

typedef struct TunedUnit {
        char *devices;          /* devices= */
        bool udev_regex;        /* devices_udev_regex= set: cannot be evaluated here */
} TunedUnit;

struct Writers {
        WriterEntry *entries;
        size_t n_entries;
        UdevFile **udev_files;          /* those with a writer */
        size_t n_udev_files;
        TunedUnit *tuned_units;         /* [disk] units in TuneD's order of taking devices */
        size_t n_tuned_units;
        char *cmdline;                  /* NULL: unknown */
        char **udev_keys;               /* what the rules files match on, sorted (writers_udev_keys()) */
};

void writer_entry_done(WriterEntry *e);
/* Drop the entries from the @n-th on. */
void writers_truncate(Writers *w, size_t n);

/* A new entry; its strings are copied, @source NULL is the kind's own. Return: NULL on out of
 * memory or past WRITERS_MAX. */
WriterEntry *writers_push(Writers *w, WriterKind kind, uint32_t attrs, const char *tunable,
                          const char *value, const char *file, unsigned line, const char *source,
                          const char *when);

/* Our key in a path below a disk's directory: "queue/scheduler", "queue/iosched/low_latency",
 * "bdi/read_ahead_kb". Return: the attribute, or -ENOENT; *ret_tunable points into @rel. */
int key_of_relpath(const char *rel, const char **ret_tunable);

/* Split an absolute sysfs path (@prefix and @len bytes of @text) into the device part and our
 * key: "/sys/block/sd*" and scheduler. The key is found from the end: the last two components,
 * or three for a tunable. Return: the attribute, -ENOENT or -ENOMEM; *ret_dev is a new string. */
int split_key_path(const char *prefix, const char *text, size_t len, char **ret_dev,
                   char **ret_tunable);

/* writers-udev.c */
UdevFile *udev_file_free(UdevFile *f);

/**
 * udev_file_eval() - run the @file-th kept rules file for a disk's add and change events
 * @ret_add, @ret_change: per line of the file, whether its assignments are made
 * @values: per entry of @w, the value of the file's writers with udev's substitutions made
 *          (set only where they could be; the caller frees them)
 * Return: 0 or -ENOMEM.
 */
int udev_file_eval(const Writers *w, size_t file, const WriterTarget *t, Applies **ret_add,
                   Applies **ret_change, char **values);

/* The properties the file's lines match on, added to @keys. Return: 0 or -ENOMEM. */
int udev_file_keys(const UdevFile *f, char ***keys);

/* writers-tuned.c */

/* Whether each [disk] unit takes the disk: ret[u] for w->tuned_units[u]. Return: 0, -ENOMEM. */
int tuned_units_eval(const Writers *w, const WriterTarget *t, Applies *ret);
