/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "conf.h"
#include "log.h"
#include "util.h"

const char *const conf_main_files[] = {
        "etc/iosched.conf",
        "run/iosched.conf",
        "usr/local/lib/iosched.conf",
        "usr/lib/iosched.conf",
        NULL,
};

const char *const conf_dropin_dirs[] = {
        "etc/iosched.d",
        "run/iosched.d",
        "usr/local/lib/iosched.d",
        "usr/lib/iosched.d",
        NULL,
};

typedef struct Parser {
        const char *filename;
        bool in_section;        /* a section header was seen: keys are not "outside" */
        Rule *rule;             /* the rule of the current section; NULL when it is a bad one */
        bool rule_failed;       /* the current rule had an error: it is not added */
        Policy *staged;
        char ***errors;
        unsigned n_errors;
        int oom;
} Parser;

_printf_(3, 4) static void parser_error(Parser *p, unsigned line, const char *fmt, ...) {
        _cleanup_(freep) char *msg = NULL, *full = NULL;
        va_list ap;
        int r;

        /* The file is ignored whole after its first error; the rest is reported up to a
         * point: a binary file must not flood the journal on every udev event. */
        if (++p->n_errors > CONF_ERRORS_MAX) {
                if (p->n_errors == CONF_ERRORS_MAX + 1)
                        fmt = "too many errors, the rest of the file is not checked";
                else
                        return;
        }
        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r >= 0)
                full = strdup_printf("%s:%u: %s", p->filename, line, msg);
        /* Keys and values come from the file: no control characters in a log line. */
        if (!full || strv_push(p->errors, escape_for_log(full, 1024)) < 0)
                p->oom = -ENOMEM;
}

static int parser_finish_rule(Parser *p) {
        Rule *r = TAKE_PTR(p->rule);
        _cleanup_(freep) char *error = NULL;
        unsigned line;
        int q;

        if (!r)
                return 0;
        if (p->rule_failed) {
                rule_free(r);
                return 0;
        }
        q = rule_check(r, &line, &error);
        if (q == -ENOMEM) {
                rule_free(r);
                return q;
        }
        if (q < 0) {
                parser_error(p, line, "%s", error);
                rule_free(r);
                return 0;
        }
        if (r->n_matches == 0) {
                parser_error(p, r->line,
                             "[rule %s] has no match.* key; use match.name=* to match every disk",
                             r->name);
                rule_free(r);
                return 0;
        }
        return policy_add_rule(p->staged, r);
}

/* A "[section]" header: the previous rule is complete, a new one starts (or a bad section,
 * whose keys are ignored: the header's error says it all). */
static void parser_section(Parser *p, const char *section, unsigned line) {
        const char *rule_name;

        if (parser_finish_rule(p) < 0) {
                p->oom = -ENOMEM;
                return;
        }
        p->in_section = true;
        p->rule_failed = false;
        rule_name = startswith(section, "rule ");
        if (!rule_name)
                return parser_error(p, line, "unknown section [%s]; sections are [rule NAME]", section);
        rule_name += strspn(rule_name, " ");
        /* inih keeps 49 characters of a section: a longer name comes here cut to 44, which is
         * one too many for a rule's name, never a shorter valid one. */
        if (!rule_name_is_valid(rule_name))
                return parser_error(p, line,
                                    "invalid rule name \"%s\" (letters, digits, \"-_.:@\", at most %d)",
                                    rule_name, RULE_NAME_MAX);
        for (size_t i = 0; i < p->staged->n_rules; i++)
                if (streq(p->staged->rules[i]->name, rule_name))
                        return parser_error(p, line, "rule \"%s\" is defined twice in this file",
                                            rule_name);
        p->rule = rule_new(rule_name, p->filename, line);
        if (!p->rule)
                p->oom = -ENOMEM;
}

static void parser_key(Parser *p, const char *name, const char *value, unsigned line) {
        const char *error = NULL;
        int r;

        if (startswith(name, MATCH_KEY_PREFIX))
                r = rule_add_match(p->rule, name, value, line, &error);
        else
                r = rule_add_setting(p->rule, name, value, line, &error);
        if (r < 0)
                p->rule_failed = true;
        switch (r) {
        case 0:
                return;
        case -ENOENT:
                return parser_error(p, line, "unknown key \"%s\"", name);
        case -EEXIST:
                return parser_error(p, line, "key \"%s\" is set twice in [rule %s]", name, p->rule->name);
        case -ENOMEM:
                p->oom = -ENOMEM;
                return;
        default:
                return parser_error(p, line, "invalid value \"%s\" for %s: %s", value, name,
                                    error ?: "invalid value");
        }
}

/* inih's handler (built with report_line_numbers and call_handler_on_new_section): a section
 * header comes without a name. It records its own errors and always goes on, so that inih's
 * return is inih's own syntax error alone (which ends the parse: stop_on_first_error). */
static int parser_handler(void *userdata, const char *section, const char *name, const char *value,
                          int lineno) {
        Parser *p = userdata;
        unsigned line = lineno > 0 ? (unsigned) lineno : 0;

        if (p->oom || p->n_errors > CONF_ERRORS_MAX)
                return 1;
        if (!name)
                parser_section(p, section, line);
        else if (!p->in_section)
                parser_error(p, line, "key \"%s\" outside of a [rule NAME] section", name);
        else if (p->rule)
                parser_key(p, name, value, line);
        return 1;
}

/* The line of the first NUL byte of @text, 0 when there is none: inih takes text to the first
 * NUL of a line and would drop the rest unseen. */
static unsigned nul_line(const char *text, size_t size) {
        const char *nul = memchr(text, 0, size);
        unsigned line = 1;

        if (!nul)
                return 0;
        for (const char *c = text; c < nul; c++)
                line += *c == '\n';
        return line;
}

static int parse_staged(const char *text, size_t size, Parser *p) {
        _cleanup_(freep) char *copy = NULL;
        unsigned line;
        int r;

        if (size > CONF_FILE_SIZE_MAX) {
                parser_error(p, 0, "file larger than %d bytes", CONF_FILE_SIZE_MAX);
                return 0;
        }
        line = nul_line(text, size);
        if (line > 0) {
                parser_error(p, line, "line contains a NUL byte");
                return 0;
        }
        /* not strndup(): @text has no NUL within @size and may have none after it */
        copy = malloc(size + 1);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, text, size);
        copy[size] = 0;
        r = ini_parse_string(copy, parser_handler, p);
        if (r == -2)
                return -ENOMEM;
        if (p->oom)
                return p->oom;
        if (r > 0)
                /* inih's own, which ended the parse: a line without "=", a "[" without "]" */
                parser_error(p, (unsigned) r, "syntax error (expected [rule NAME] or KEY = VALUE)");
        else if (parser_finish_rule(p) < 0)
                return -ENOMEM;
        return p->oom;
}

int conf_parse_text(const char *text, size_t size, const char *filename, Policy *policy,
                    char ***errors) {
        _cleanup_(policy_freep) Policy *staged = NULL;
        Parser p = {
                .filename = filename,
                .errors = errors,
        };
        int r;

        assert(text && filename && policy && errors);
        staged = policy_new();
        if (!staged)
                return -ENOMEM;
        p.staged = staged;

        r = parse_staged(text, size, &p);
        rule_free(p.rule);
        if (r < 0)
                return r;
        if (p.n_errors > 0)
                return -EINVAL;
        if (policy->n_rules + staged->n_rules > CONF_RULES_MAX) {
                parser_error(&p, 0, "more than %d rules in all", CONF_RULES_MAX);
                return p.oom ?: -EINVAL;
        }

        for (size_t i = 0; i < staged->n_rules; i++) {
                r = policy_add_rule(policy, TAKE_PTR(staged->rules[i]));
                if (r < 0)
                        return r;
        }
        staged->n_rules = 0;
        return 0;
}

/* A file of the configuration: opened below @dirfd, shown (in errors and as provenance) as @shown. */
static int load_file_at(int dirfd, const char *path, const char *shown, Policy *policy, char ***errors) {
        _cleanup_(freep) char *text = NULL;
        _cleanup_(closep) int fd = -1;
        struct stat st;
        size_t size;
        int r;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                r = -errno;
        else if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -EISDIR;
        else
                r = read_fd_bounded(fd, CONF_FILE_SIZE_MAX, &text, &size);
        if (r < 0) {
                if (r == -ENOMEM)
                        return r;
                _cleanup_(freep) char *msg = strdup_printf("%s:0: cannot read: %s", shown,
                                                           r == -EFBIG ? "file larger than 1 MiB" :
                                                           r == -EISDIR ? "not a regular file" :
                                                           strerror(-r));

                if (!msg || strv_push(errors, escape_for_log(msg, 1024)) < 0)
                        return -ENOMEM;
                return -EINVAL;
        }

        r = strv_extend(&policy->files, shown);
        if (r < 0)
                return r;
        return conf_parse_text(text, size, shown, policy, errors);
}

int conf_load_file(const char *path, Policy *policy, char ***errors) {
        assert(path && policy && errors);
        return load_file_at(AT_FDCWD, path, path, policy, errors);
}

static bool dropin_name_is_valid(const char *name) {
        size_t l = strlen(name);

        return name[0] != '.' && l > 5 && l < 256 && streq(name + l - 5, ".conf");
}

/* A link to /dev/null masks a file. */
static bool is_masked(int root_fd, const char *path) {
        char target[16];
        ssize_t k;

        k = readlinkat(root_fd, path, target, sizeof(target) - 1);
        if (k < 0)
                return false;
        target[k] = 0;
        return streq(target, "/dev/null");
}

/* Whether @path is there (or there but cannot be looked at: EACCES, ELOOP, ...): such a file
 * is listed all the same, so that loading it says why, rather than its rules vanishing. A link
 * to nothing is no main file (a staged root may link each main file to the real one). */
static bool is_there(int root_fd, const char *path) {
        return faccessat(root_fd, path, F_OK, 0) >= 0 || errno != ENOENT;
}

#define N_DROPIN_DIRS (ELEMENTSOF(conf_dropin_dirs) - 1)

static void strv_array_free(char **(*a)[N_DROPIN_DIRS]) {
        for (size_t i = 0; i < N_DROPIN_DIRS; i++)
                strv_free((*a)[i]);
}

/* Where a file below the root is, for people: the root as given, then the path. */
static char *shown_path(const char *root, const char *path) {
        return strdup_printf("%s/%s", streq(root, "/") ? "" : root, path);
}

_printf_(3, 4) static int push_error(char ***errors, const char *root, const char *fmt, ...) {
        _cleanup_(freep) char *msg = NULL;
        va_list ap;
        int r;

        if (!errors)
                return 0;
        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return strv_push(errors, strdup_printf("%s%s", streq(root, "/") ? "" : root, msg));
}

/* The "*.conf" names in one drop-in directory; an absent directory has none. */
static int dir_list_names(int root_fd, const char *root, const char *path, char ***ret, char ***errors) {
        _cleanup_(strv_freep) char **names = calloc(1, sizeof(char *));
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int r;

        if (!names)
                return -ENOMEM;
        r = opendir_at(root_fd, path, &dir);
        if (r < 0) {
                /* Absent is fine; unreadable or not a directory loses rules: say so. */
                if (r != -ENOENT && push_error(errors, root, "/%s:0: cannot read directory: %s", path,
                                               strerror(-r)) < 0)
                        return -ENOMEM;
                *ret = TAKE_PTR(names);
                return 0;
        }
        for (;;) {
                errno = 0;
                de = readdir(dir);
                if (!de) {
                        if (errno != 0 && push_error(errors, root, "/%s:0: cannot read directory: %s", path,
                                                     strerror(errno)) < 0)
                                return -ENOMEM;
                        break;
                }
                if (!dropin_name_is_valid(de->d_name))
                        continue;
                if (!utf8_is_valid(de->d_name)) {
                        /* Its path would be provenance on the bus, which takes UTF-8 only. */
                        if (push_error(errors, root, "/%s:0: ignoring a drop-in whose name is not valid UTF-8",
                                       path) < 0)
                                return -ENOMEM;
                        continue;
                }
                r = strv_extend(&names, de->d_name);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(names);
        return 0;
}

/* The main file: the first of conf_main_files there, none when it is masked. */
static int main_file(int root_fd, char ***files) {
        for (size_t i = 0; conf_main_files[i]; i++) {
                if (!is_there(root_fd, conf_main_files[i]))
                        continue;
                if (is_masked(root_fd, conf_main_files[i]))
                        return 0;
                return strv_extend(files, conf_main_files[i]);
        }
        return 0;
}

/* The drop-ins: every name of every directory, sorted; the first directory that has a name
 * wins. The names are as listed (not probed: in a directory that can be listed but not
 * searched, every probe fails alike). */
static int dropins(int root_fd, const char *root, char ***files, char ***errors) {
        _cleanup_(strv_array_free) char **by_dir[N_DROPIN_DIRS] = {};
        _cleanup_(strv_freep) char **names = calloc(1, sizeof(char *));
        int r;

        if (!names)
                return -ENOMEM;
        for (size_t d = 0; d < N_DROPIN_DIRS; d++) {
                r = dir_list_names(root_fd, root, conf_dropin_dirs[d], &by_dir[d], errors);
                if (r < 0)
                        return r;
                for (char **n = by_dir[d]; *n; n++)
                        if (!strv_contains(names, *n) && strv_extend(&names, *n) < 0)
                                return -ENOMEM;
        }
        strv_sort(names);

        for (char **n = names; *n; n++)
                for (size_t d = 0; d < N_DROPIN_DIRS; d++) {
                        _cleanup_(freep) char *path = NULL;

                        if (!strv_contains(by_dir[d], *n))
                                continue;
                        path = strdup_printf("%s/%s", conf_dropin_dirs[d], *n);
                        if (!path)
                                return -ENOMEM;
                        if (!is_masked(root_fd, path) && strv_push(files, TAKE_PTR(path)) < 0)
                                return -ENOMEM;
                        break;
                }
        return 0;
}

/* The files of the configuration below @root_fd, relative to it. @errors may be NULL. */
static int files_list(int root_fd, const char *root, char ***ret, char ***errors) {
        _cleanup_(strv_freep) char **files = calloc(1, sizeof(char *));
        int r;

        if (!files)
                return -ENOMEM;
        r = main_file(root_fd, &files);
        if (r >= 0)
                r = dropins(root_fd, root, &files, errors);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(files);
        return 0;
}

/* The root's directory, opened; -ENOENT: there is none (no configuration, no error). */
static int open_root(const char *root, int *ret_fd) {
        int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

int conf_files_list(const char *root, char ***ret) {
        _cleanup_(strv_freep) char **files = NULL, **shown = NULL;
        _cleanup_(closep) int root_fd = -1;
        int r;

        assert(ret);
        root = root ?: "/";
        r = open_root(root, &root_fd);
        if (r == -ENOENT)
                return strv_split("", "", ret);
        if (r < 0)
                return r;
        r = files_list(root_fd, root, &files, NULL);
        if (r < 0)
                return r;
        shown = calloc(strv_length(files) + 1, sizeof(char *));
        if (!shown)
                return -ENOMEM;
        for (size_t i = 0; files[i]; i++)
                if (!(shown[i] = shown_path(root, files[i])))
                        return -ENOMEM;
        *ret = TAKE_PTR(shown);
        return 0;
}

/* Every file below @root, each ignored whole when it has an error. */
static int load_root(const char *root, Policy *policy, char ***errors) {
        _cleanup_(strv_freep) char **files = NULL;
        _cleanup_(closep) int root_fd = -1;
        int r;

        r = open_root(root, &root_fd);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return strv_push(errors, strdup_printf("%s:0: cannot open: %s", root, strerror(-r)));
        r = files_list(root_fd, root, &files, errors);
        if (r < 0)
                return r;
        for (char **f = files; *f; f++) {
                _cleanup_(freep) char *shown = shown_path(root, *f);

                if (!shown)
                        return -ENOMEM;
                r = load_file_at(root_fd, *f, shown, policy, errors);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_debug("Ignoring %s: it has errors.", shown);
        }
        return 0;
}

int conf_load(const char *root, const char *single_file, Policy **ret_policy, char ***ret_errors) {
        _cleanup_(policy_freep) Policy *policy = NULL;
        _cleanup_(strv_freep) char **errors = NULL;
        int r;

        assert(ret_policy && ret_errors);
        policy = policy_new();
        errors = calloc(1, sizeof(char *));
        if (!policy || !errors)
                return -ENOMEM;

        if (single_file) {
                r = conf_load_file(single_file, policy, &errors);
                if (r == -ENOMEM)
                        return r;
        } else {
                r = load_root(root ?: "/", policy, &errors);
                if (r < 0)
                        return r;
        }

        *ret_policy = TAKE_PTR(policy);
        *ret_errors = TAKE_PTR(errors);
        return 0;
}
