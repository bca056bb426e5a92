/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "disk.h"
#include "policy.h"

/*
 * Drop-ins written by SetPolicy: one file per disk and kind, holding one rule.
 *
 *   persistent: /etc/iosched.d/98-ioschedd-<id>.conf
 *   runtime:    /run/iosched.d/99-ioschedd-<id>.conf
 *
 * Drop-ins apply in file-name order across the directories, so a runtime setting overrides a
 * persistent one of the same key, and both override the main file and lower-numbered drop-ins.
 *
 * <id> names the disk the way that survives a rename: "wwn-<WWN>" when the disk has a WWN,
 * else "serial-<SERIAL>" (matched together with the model when known), else "name-<kernel
 * name>". A WWN or serial is used only when it is made of letters, digits and "_.:+-" (at most
 * 64): anything else could not be matched literally by a glob, and the name is used instead.
 * Loop, zram, nbd and most virtual disks have neither, so their drop-ins follow the name.
 */

typedef enum DropinIdKind {
        DROPIN_ID_WWN,
        DROPIN_ID_SERIAL,
        DROPIN_ID_NAME,
        _DROPIN_ID_MAX,
} DropinIdKind;

#define DROPIN_PREFIX_PERSISTENT "98-ioschedd-"
#define DROPIN_PREFIX_RUNTIME "99-ioschedd-"
#define DROPIN_DIR_PERSISTENT "/etc/iosched.d"
#define DROPIN_DIR_RUNTIME "/run/iosched.d"
#define DROPIN_RULE_NAME "ioschedd"

typedef struct DropinId {
        DropinIdKind kind;
        char *value;            /* the WWN, serial or name */
        char *model;            /* DROPIN_ID_SERIAL: matched too when known and simple */
} DropinId;

void dropin_id_done(DropinId *id);

/**
 * dropin_id_for_disk() - choose how a drop-in names a disk
 * @d: the disk, loaded with its identity
 * @kind: the most stable kind to consider; a kind the disk cannot use falls to the next
 * @ret: the identity
 *
 * Return: 0, -ENOMEM, -EINVAL for a disk without a valid name.
 */
int dropin_id_for_disk(const Disk *d, DropinIdKind kind, DropinId *ret);

/**
 * dropin_file_name() - "98-ioschedd-wwn-0x5000c500a1b2c3d4.conf"
 * Return: a new string, or NULL on ENOMEM.
 */
char *dropin_file_name(const DropinId *id, bool runtime);

/**
 * dropin_render() - the text of a drop-in: a comment and one [rule] with matches and settings
 * @id: the disk
 * @keys, @values: settings as key and value text, in the same order; already validated
 * @ret: the text
 *
 * Return: 0, -ENOMEM.
 */
int dropin_render(const DropinId *id, char * const *keys, char * const *values, char **ret);

/**
 * dropin_write_atomic() - replace a file in a directory: temporary file in the same
 * directory, write, fsync, rename over the target, fsync the directory
 * @dir: the directory; created (0755, with its parents) if missing
 * @name: a file name without "/"
 * @text: the contents
 *
 * Return: 0 or a negative errno; on failure the old file, if any, is intact.
 */
int dropin_write_atomic(const char *dir, const char *name, const char *text);

/**
 * dropin_remove() - remove a file from a directory and fsync the directory
 * Return: 1 removed, 0 there was none, or a negative errno.
 */
int dropin_remove(const char *dir, const char *name);

/**
 * dropin_dir() - the drop-in directory SetPolicy writes to
 * @config_root: "/" or a test's root
 * @runtime: /run/iosched.d rather than /etc/iosched.d
 *
 * Return: a new string, NULL on ENOMEM.
 */
char *dropin_dir(const char *config_root, bool runtime);

/**
 * dropin_persist() - save settings for a disk: its drop-in with the settings it has,
 * overridden by @keys, less @remove; removed when nothing is left
 * @dir: the drop-in directory (dropin_dir())
 * @d: the disk, loaded with its identity
 * @keys, @values: the settings to set, already validated (same order)
 * @remove: the keys to take out
 * @runtime: a runtime drop-in (99-ioschedd-...), else a persistent one
 * @ret_path: the file written or removed
 *
 * A drop-in edited into errors by hand is replaced. What is written is checked with the
 * loader itself first.
 *
 * Return: 0; -ENOEXEC when the result would not load; -ENOMEM; another negative errno when
 * the file cannot be written or removed (the old one, if any, is intact).
 */
int dropin_persist(const char *dir, const Disk *d, char * const *keys, char * const *values,
                   char * const *remove, bool runtime, char **ret_path);

/**
 * dropin_reset() - remove a disk's drop-ins of one kind, whichever identity each was written
 * with (the disk may have shown its WWN only later)
 * @dir: the drop-in directory
 * @d: the disk
 * @runtime: the runtime drop-ins, else the persistent ones
 * @ret_removed: the last file removed; untouched when none was there
 *
 * Return: 1 something was removed, 0 nothing was there, or a negative errno.
 */
int dropin_reset(const char *dir, const Disk *d, bool runtime, char **ret_removed);

/**
 * mkdir_parents() - mkdir -p
 * Return: 0 or a negative errno.
 */
int mkdir_parents(const char *path, mode_t mode);
