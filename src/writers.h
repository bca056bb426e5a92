/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "attr.h"
#include "disk.h"
#include "udev-props.h"

/*
 * Other writers: who else writes a key iosched manages, and where. udev rules that assign a
 * queue attribute or run a writer to /sys/block, TuneD's active profile, TLP, sysfsutils,
 * systemd-iocost, and a dead elevator= on the kernel command line.
 *
 * Pure: the parsers take text and give "who writes which key where, for which disks"; the
 * evaluation takes what is known of one disk and says, per writer, whether it writes that
 * disk's key (YES where the writer's own matching can be reproduced, MAYBE where it cannot).
 * writers-scan.c finds and reads the files.
 */

typedef enum WriterKind {
        WRITER_UDEV_RULE,       /* "udev-rules": ATTR{queue/...}= or a RUN writing /sys/block */
        WRITER_TUNED,           /* "tuned": [disk] elevator, readahead; [sysfs] paths */
        WRITER_TLP,             /* "tlp": DISK_IOSCHED */
        WRITER_SYSFSUTILS,      /* "sysfsutils": /etc/sysfs.conf, /etc/sysfs.d */
        WRITER_SYSTEMD_IOCOST,  /* "systemd-iocost": 90-iocost.rules' "iocost apply" */
        WRITER_CMDLINE,         /* "cmdline": elevator=, read by no kernel since 5.0 */
        _WRITER_KIND_MAX,
} WriterKind;

/* The names of owner.defer: "udev-rules", "tuned", ...; -EINVAL for others. */
const char *writer_kind_to_string(WriterKind k);
int writer_kind_from_string(const char *s);
#define WRITER_KIND_BIT(k) (UINT32_C(1) << (k))

typedef enum Applies {
        APPLIES_NO,
        APPLIES_MAYBE,          /* the writer's own matching cannot be reproduced here */
        APPLIES_YES,
} Applies;

const char *applies_to_string(Applies a);

/* One key written in one place. */
typedef struct Writer {
        WriterKind kind;
        uint32_t attrs;         /* ATTR_BIT()s written: one; systemd-iocost's all iocost keys */
        char *tunable;          /* with ATTR_BIT(ATTR_IOSCHED) */
        char *value;            /* as the writer writes it; NULL when it cannot be known */
        char *file;
        unsigned line;          /* 0: the file as a whole */
        char *source;           /* "TuneD profile balanced", "udev rule", ... for people */
        char *when;             /* "add|change", "boot", "profile apply, add" */
        bool dead;              /* writes nothing (elevator= on a kernel without it) */
        Applies applies;        /* in a disk's list: YES or MAYBE */
} Writer;

void writer_done(Writer *w);

/* What the evaluation knows of a disk. Unknown fields make the matches that use them MAYBE. */
typedef struct WriterTarget {
        const char *name;               /* kernel name; required */
        const char *devpath;            /* "/devices/...", NULL unknown */
        const char *devnum;             /* "MAJ:MIN", NULL unknown */
        Transport transport;            /* TRANSPORT_OTHER when unknown */
        int rotational, removable;      /* -1 unknown */
        int has_scheduler;              /* queue/scheduler exists: -1 unknown */
        const char *scheduler_text;     /* queue/scheduler as the kernel prints it, NULL unknown */
        const char *zoned;              /* queue/zoned: "none", "host-managed", NULL unknown */
        const UdevProps *udev;          /* udev's properties, may be NULL */
        bool udev_complete;             /* a key @udev lacks (all, when NULL) is unset; else unknown */
} WriterTarget;

typedef struct Writers Writers;

/**
 * writer_target_of() - what a disk's reading tells the evaluation
 * @d: the disk as read (its load says which fields are known)
 * @buf: room for queue/scheduler's text, made from the reading as the kernel prints it
 * @ret: the target; it points into @d and @buf
 */
void writer_target_of(const Disk *d, char *buf, size_t size, WriterTarget *ret);

/**
 * writers_disk_load() - what a disk's reading must hold for the writers to be evaluated
 * @w: the host's writers; NULL or none found: nothing more
 * @load: widened: identity (path), flags, the scheduler, and the udev properties the rules match
 *        on: load->udev_keys points into @w, stays as it was when it has them all already (a
 *        policy's match.property names), or else points to the union of both in *@keys
 * @keys: where the union is kept; freed and set only when it is made
 * Return: 0 or -ENOMEM.
 */
int writers_disk_load(const Writers *w, DiskLoad *load, char ***keys);

/* A disk's other writers: every writer that writes one of its keys, or may. */
typedef struct OtherWriters {
        Writer *writers;
        size_t n;
} OtherWriters;

void other_writers_done(OtherWriters *o);
OtherWriters *other_writers_free(OtherWriters *o);
DEFINE_TRIVIAL_CLEANUP_FUNC(OtherWriters *, other_writers_free);
int other_writers_copy(const OtherWriters *o, OtherWriters *ret);
bool other_writers_equal(const OtherWriters *a, const OtherWriters *b);     /* NULL is empty */

/* Whether @w writes @id (and @tunable, for ATTR_IOSCHED). */
bool writer_writes(const Writer *w, AttrId id, const char *tunable);

/**
 * writer_describe() - one writer for people
 * Return: "udev rule /etc/udev/rules.d/60-foo.rules:3 writes bfq on add|change (may apply)",
 *         a new string; NULL on out of memory.
 */
char *writer_describe(const Writer *w);

/* The key a writer writes, as the configuration spells it ("scheduler", "iosched.low_latency"),
 * or "iocost" for systemd-iocost's lines; a new string, NULL on out of memory. */
char *writer_key(const Writer *w);

/* The keys of systemd-iocost's lines: every key of io.cost.qos and io.cost.model. */
uint32_t writer_iocost_attrs(void);

/**
 * writer_from_record() - a writer as a client reads it from the bus (OtherWriters)
 * @key: writer_key()'s; @owner: writer_kind_to_string()'s; @value, @when: "" is none
 * @ret: the writer; writer_done() frees it
 *
 * Return: 0; -EINVAL for a key or owner this program does not know; -ENOMEM.
 */
int writer_from_record(const char *key, const char *owner, const char *source, const char *file,
                       unsigned line, const char *value, const char *when, bool certain, Writer *ret);

/* "FILE:LINE" (or "FILE" for line 0), a new string. */
char *writer_where(const Writer *w);

/**
 * other_writers_of_key() - where else a key is written, for a log line
 * @o: the disk's writers; NULL is none
 * @kinds: WRITER_KIND_BIT()s to list; UINT32_MAX for all
 *
 * Dead writers are left out: they write nothing.
 *
 * Return: "/usr/lib/udev/rules.d/60-foo.rules:3, /etc/tuned/x/tuned.conf:5 (may apply)", a new
 *         string; NULL when nobody else writes the key (or on out of memory: check errno).
 */
char *other_writers_of_key(const OtherWriters *o, AttrId id, const char *tunable, uint32_t kinds);

/* The writers of one key of @kinds that are not dead: the first one, or NULL. */
const Writer *other_writers_find(const OtherWriters *o, AttrId id, const char *tunable,
                                 uint32_t kinds);

Writers *writers_new(void);
Writers *writers_free(Writers *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(Writers *, writers_free);

/* How many writers were found on the host (each key of each place counts once). */
size_t writers_count(const Writers *w);
/* The i-th, host-wide (applies says whether its scope is known: YES, or MAYBE). */
const Writer *writers_get(const Writers *w, size_t i);

/**
 * writers_set_cmdline() - the kernel command line: a dead elevator= is a writer, and udev
 * rules may IMPORT{cmdline} it
 * @cmdline: /proc/cmdline's text; NULL: unknown (IMPORT{cmdline} matches are MAYBE)
 * Return: 0 or -ENOMEM.
 */
int writers_set_cmdline(Writers *w, const char *cmdline);

/**
 * writers_add_udev_rules() - parse one udev rules file
 * @filename: named in the writers found (the path as udev reads it)
 * @text: the file's contents, @size bytes
 *
 * udev's syntax: KEY{attr}OP"value" tokens, continued lines (the rule's line is its first),
 * GOTO and LABEL, e"" and i"" strings. A line udev would refuse (unknown key, bad syntax) is
 * ignored, as udev does. Only files with a writer are kept.
 *
 * Return: the number of writers found in the file, or -ENOMEM.
 */
int writers_add_udev_rules(Writers *w, const char *filename, const char *text, size_t size);

/* TLP's configuration: the variables of every file, the last definition winning. */
typedef struct TlpConf TlpConf;

TlpConf *tlp_conf_new(void);
TlpConf *tlp_conf_free(TlpConf *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(TlpConf *, tlp_conf_free);

/**
 * tlp_conf_parse() - add one TLP file (defaults.conf, then tlp.d/ sorted, then tlp.conf)
 * Return: 0 or -ENOMEM.
 */
int tlp_conf_parse(TlpConf *c, const char *filename, const char *text, size_t size);

/* The disk of a /dev/disk/by-id name in DISK_DEVICES (a new string), or NULL when it is none. */
typedef char *(*TlpResolveId)(const char *id, void *userdata);

/**
 * writers_add_tlp() - DISK_IOSCHED's writers: the i-th scheduler for the i-th DISK_DEVICES
 * entry ("keep" and "_" write nothing); TLP_ENABLE=0 disables all
 * @resolve: turns by-id names into kernel names; NULL: such an entry may be any disk
 * Return: 0 or -ENOMEM.
 */
int writers_add_tlp(Writers *w, const TlpConf *c, TlpResolveId resolve, void *userdata);

/**
 * writers_add_sysfs_conf() - one file of sysfsutils ("block/sda/queue/scheduler = bfq",
 * paths relative to /sys, at boot); "mode" and "owner" lines write nothing
 * Return: the number of writers found, or -ENOMEM.
 */
int writers_add_sysfs_conf(Writers *w, const char *filename, const char *text, size_t size);

/**
 * writers_filter_programs() - drop the writers of udev rules whose RUN program is not there
 * @exists: whether a program, as a rule names it ("iocost", "/bin/sh"), is installed
 *
 * udevd fails to run what is absent: such a rule writes nothing (90-iocost.rules without
 * systemd's iocost helper).
 */
void writers_filter_programs(Writers *w, bool (*exists)(const char *program, void *userdata),
                             void *userdata);

/**
 * writers_udev_keys() - the udev properties the rules match on (ENV{KEY}), sorted
 * Return: 0 or -ENOMEM; a disk's loader fetches these so that the matches can be evaluated.
 */
int writers_udev_keys(const Writers *w, char ***ret);

/**
 * writers_for_disk() - which writers write a disk's keys
 * @w: the host's writers; NULL is none
 * @t: what is known of the disk
 * @ret: the writers with applies YES or MAYBE, in the order found; each a copy
 *
 * udev rules are run as udevd would run them for the disk's add and change events: GOTO and
 * LABEL, IMPORT{cmdline}, ENV assignments within the file. A match on something the target
 * does not know (ATTRS, PROGRAM, an unknown property) is MAYBE, and so is every line it
 * guards.
 *
 * Return: 0 or -ENOMEM.
 */
int writers_for_disk(const Writers *w, const WriterTarget *t, OtherWriters *ret);
