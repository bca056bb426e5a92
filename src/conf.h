/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "policy.h"

#define CONF_FILE_SIZE_MAX (1024 * 1024)
#define CONF_RULES_MAX 4096
#define CONF_ERRORS_MAX 20      /* errors reported per file; the file is ignored anyway */

/*
 * Every path is below a root ("/", or a test's tree), opened through the root's directory fd;
 * errors and provenance show it as ROOT/PATH. systemd's precedence: the main file is the first
 * of conf_main_files (the administrator's /etc/iosched.conf replaces the vendor's
 * /usr/lib/iosched.conf whole); then the drop-ins "*.conf" of conf_dropin_dirs, sorted by file
 * name across the directories, the earlier directory winning on equal names. A link to
 * /dev/null masks: a main file that is one leaves no main file; a drop-in, its name.
 */
extern const char *const conf_main_files[];     /* relative to the root, NULL-terminated */
extern const char *const conf_dropin_dirs[];    /* likewise */

/**
 * conf_files_list() - the files of the configuration, in the order they apply
 * @root: the root, NULL for "/"
 * @ret: ROOT/PATH of each: the main file (if any), then the drop-ins. A file that exists but
 *       cannot be examined (permission denied) is listed: loading it reports the error.
 *
 * Return: 0 or a negative errno (-ENOMEM, or of opening @root; none for an absent one).
 */
int conf_files_list(const char *root, char ***ret);

/**
 * conf_parse_text() - parse one file's text into rules
 * @text: the contents (need not be NUL-terminated)
 * @size: its length
 * @filename: named in errors and in each rule's provenance
 * @policy: rules are added only when the whole text is free of errors
 * @errors: each error is appended as "FILE:LINE: message"
 *
 * Return: 0 when the text was added, -EINVAL when it had errors (nothing added), -ENOMEM.
 */
int conf_parse_text(const char *text, size_t size, const char *filename, Policy *policy,
                    char ***errors);

/**
 * conf_load_file() - read and parse one file; see conf_parse_text()
 * Return: 0, -EINVAL (errors reported, file ignored), -ENOMEM.
 */
int conf_load_file(const char *path, Policy *policy, char ***errors);

/**
 * conf_load() - load a whole configuration
 * @root: the root of its files, NULL for "/"; an absent root has no configuration
 * @single_file: when set, read this file alone (no drop-ins); a path used as is, not below @root
 * @ret_policy: the rules of every file that had no error
 * @ret_errors: "FILE:LINE: message" for each problem; a file with an error is ignored whole.
 *              A drop-in directory that exists but cannot be read, or is no directory, is an
 *              error ("DIR:0: cannot read directory: ..."); an absent one is not.
 *
 * Return: 0 (even with errors, which are in @ret_errors) or -ENOMEM.
 */
int conf_load(const char *root, const char *single_file, Policy **ret_policy, char ***ret_errors);
