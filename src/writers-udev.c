/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * udev rules as other writers: the syntax udevd takes, and a run of a file for one disk's add
 * and change events that decides, line by line, whether its assignments are made.
 */
#include <assert.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>

#include "util.h"
#include "writers-internal.h"

#define UDEV_LINE_MAX (16 * 1024)       /* udevd's UDEV_LINE_SIZE */
#define UDEV_TOKENS_MAX 64

typedef enum UdevKey {
        UKEY_ACTION,
        UKEY_DEVPATH,
        UKEY_KERNEL,
        UKEY_SUBSYSTEM,
        UKEY_DRIVER,
        UKEY_ENV,
        UKEY_ATTR,
        UKEY_TEST,
        UKEY_IMPORT,
        UKEY_RUN,
        UKEY_GOTO,
        UKEY_LABEL,
        UKEY_OPAQUE_MATCH,      /* a match udev evaluates and we cannot: MAYBE */
        UKEY_OTHER,             /* an assignment that writes nothing of ours */
} UdevKey;

typedef enum UdevOp {
        UOP_MATCH,              /* == */
        UOP_NOMATCH,            /* != */
        UOP_ADD,                /* += */
        UOP_REMOVE,             /* -= */
        UOP_ASSIGN,             /* = */
        UOP_ASSIGN_FINAL,       /* := */
} UdevOp;

typedef struct UdevToken {
        UdevKey key;
        UdevOp op;
        bool casefold;
        char *attr;
        char *value;
} UdevToken;

typedef struct UdevLine {
        unsigned line;
        UdevToken *tokens;
        size_t n_tokens;
        const char *label;      /* into tokens */
        const char *goto_label;
} UdevLine;

struct UdevFile {
        char *filename;
        UdevLine *lines;
        size_t n_lines;
};

static void udev_line_done(UdevLine *l) {
        for (size_t i = 0; i < l->n_tokens; i++) {
                free(l->tokens[i].attr);
                free(l->tokens[i].value);
        }
        free(l->tokens);
}

static void udev_file_done(UdevFile *f) {
        for (size_t i = 0; i < f->n_lines; i++)
                udev_line_done(&f->lines[i]);
        free(f->lines);
        free(f->filename);
}

UdevFile *udev_file_free(UdevFile *f) {
        if (!f)
                return NULL;
        udev_file_done(f);
        free(f);
        return NULL;
}

/* ---- udev rules: the syntax ---- */

/* How udev takes a key's operator. */
typedef enum UdevKeyOps {
        OPS_MATCH,              /* == and != only */
        OPS_ASSIGN,             /* =, +=, -=, := only */
        OPS_BOTH,               /* a match with == and !=, an assignment otherwise */
        OPS_MATCH_ASSIGN,       /* a match spelled "=" too (IMPORT, PROGRAM) */
} UdevKeyOps;

static const struct {
        const char *name;
        UdevKey match, assign;  /* what the token is as a match, as an assignment */
        UdevKeyOps ops;
        bool needs_attr;
} udev_keys[] = {
        { "ACTION", UKEY_ACTION, UKEY_OTHER, OPS_MATCH, false },
        { "DEVPATH", UKEY_DEVPATH, UKEY_OTHER, OPS_MATCH, false },
        { "KERNEL", UKEY_KERNEL, UKEY_OTHER, OPS_MATCH, false },
        { "SUBSYSTEM", UKEY_SUBSYSTEM, UKEY_OTHER, OPS_MATCH, false },
        { "DRIVER", UKEY_DRIVER, UKEY_OTHER, OPS_MATCH, false },
        { "ENV", UKEY_ENV, UKEY_ENV, OPS_BOTH, true },
        { "ATTR", UKEY_ATTR, UKEY_ATTR, OPS_BOTH, true },
        { "TEST", UKEY_TEST, UKEY_OTHER, OPS_MATCH, false },
        { "IMPORT", UKEY_IMPORT, UKEY_IMPORT, OPS_MATCH_ASSIGN, true },
        { "PROGRAM", UKEY_OPAQUE_MATCH, UKEY_OPAQUE_MATCH, OPS_MATCH_ASSIGN, false },
        { "RUN", UKEY_OTHER, UKEY_RUN, OPS_ASSIGN, false },
        { "GOTO", UKEY_OTHER, UKEY_GOTO, OPS_ASSIGN, false },
        { "LABEL", UKEY_OTHER, UKEY_LABEL, OPS_ASSIGN, false },
        /* Matches on what a disk's reading does not hold. */
        { "KERNELS", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_MATCH, false },
        { "SUBSYSTEMS", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_MATCH, false },
        { "DRIVERS", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_MATCH, false },
        { "ATTRS", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_MATCH, true },
        { "TAGS", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_MATCH, false },
        { "RESULT", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_MATCH, false },
        { "CONST", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_MATCH, true },
        { "TAG", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_BOTH, false },
        { "NAME", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_BOTH, false },
        { "SYMLINK", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_BOTH, false },
        { "SYSCTL", UKEY_OPAQUE_MATCH, UKEY_OTHER, OPS_BOTH, true },
        /* Assignments that write nothing of ours. */
        { "OWNER", UKEY_OTHER, UKEY_OTHER, OPS_ASSIGN, false },
        { "GROUP", UKEY_OTHER, UKEY_OTHER, OPS_ASSIGN, false },
        { "MODE", UKEY_OTHER, UKEY_OTHER, OPS_ASSIGN, false },
        { "OPTIONS", UKEY_OTHER, UKEY_OTHER, OPS_ASSIGN, false },
        { "SECLABEL", UKEY_OTHER, UKEY_OTHER, OPS_ASSIGN, true },
};

static bool op_is_match(UdevOp op) {
        return op == UOP_MATCH || op == UOP_NOMATCH;
}

/* One value: "...", e"..." (C escapes) or i"..." (case-insensitive match). Advances *p past
 * the closing quote. Return: a new string, NULL on a syntax error (errno EINVAL) or ENOMEM. */
static char *udev_parse_value(const char **p, bool *ret_casefold) {
        const char *s = *p;
        bool escapes = false;
        char *v, *o;

        *ret_casefold = false;
        if (*s == 'e' && s[1] == '"') {
                escapes = true;
                s++;
        } else if (*s == 'i' && s[1] == '"') {
                *ret_casefold = true;
                s++;
        }
        if (*s != '"')
                return errno = EINVAL, NULL;
        s++;
        v = o = malloc(strlen(s) + 1);
        if (!v)
                return NULL;
        for (;; s++) {
                if (*s == 0) {
                        free(v);
                        return errno = EINVAL, NULL;
                }
                if (*s == '"')
                        break;
                if (*s == '\\' && s[1] == '"') {
                        *o++ = '"';
                        s++;
                } else if (escapes && *s == '\\' && s[1]) {
                        s++;
                        *o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
                } else
                        *o++ = *s;
        }
        *o = 0;
        *p = s + 1;
        return v;
}

/* Parse one logical line into @ret. Return: 1 a rule, 0 a line udev would refuse (ignored,
 * as udev does), -ENOMEM. */
static int udev_parse_line(char *text, unsigned lineno, UdevLine *ret) {
        UdevLine l = { .line = lineno };
        const char *p = text;
        int r = 0;

        for (;;) {
                UdevToken tk = {};
                const char *name_end;
                size_t k, namelen;

                p += strspn(p, " \t,");
                if (!*p)
                        break;
                if (l.n_tokens >= UDEV_TOKENS_MAX)
                        goto refuse;
                name_end = p + strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                namelen = name_end - p;
                for (k = 0; k < ELEMENTSOF(udev_keys); k++)
                        if (strlen(udev_keys[k].name) == namelen && strncmp(udev_keys[k].name, p, namelen) == 0)
                                break;
                if (k == ELEMENTSOF(udev_keys))
                        goto refuse;
                p = name_end;
                if (*p == '{') {
                        const char *end = strchr(p, '}');

                        if (!end)
                                goto refuse;
                        tk.attr = strndup(p + 1, end - p - 1);
                        if (!tk.attr) {
                                r = -ENOMEM;
                                goto fail;
                        }
                        p = end + 1;
                } else if (udev_keys[k].needs_attr)
                        goto refuse_token;
                p += strspn(p, " \t");
                if (p[0] == '=' && p[1] == '=')
                        tk.op = UOP_MATCH, p += 2;
                else if (p[0] == '!' && p[1] == '=')
                        tk.op = UOP_NOMATCH, p += 2;
                else if (p[0] == '+' && p[1] == '=')
                        tk.op = UOP_ADD, p += 2;
                else if (p[0] == '-' && p[1] == '=')
                        tk.op = UOP_REMOVE, p += 2;
                else if (p[0] == ':' && p[1] == '=')
                        tk.op = UOP_ASSIGN_FINAL, p += 2;
                else if (p[0] == '=')
                        tk.op = UOP_ASSIGN, p += 1;
                else
                        goto refuse_token;
                p += strspn(p, " \t");
                errno = 0;
                tk.value = udev_parse_value(&p, &tk.casefold);
                if (!tk.value) {
                        if (errno == ENOMEM) {
                                r = -ENOMEM;
                                goto fail_token;
                        }
                        goto refuse_token;
                }
                /* What udev refuses: an assignment to a match-only key and the reverse. */
                switch (udev_keys[k].ops) {
                case OPS_MATCH:
                        if (!op_is_match(tk.op))
                                goto refuse_token;
                        break;
                case OPS_ASSIGN:
                        if (op_is_match(tk.op))
                                goto refuse_token;
                        break;
                case OPS_MATCH_ASSIGN:
                        if (tk.op == UOP_ASSIGN)
                                tk.op = UOP_MATCH;
                        if (!op_is_match(tk.op))
                                goto refuse_token;
                        break;
                case OPS_BOTH:
                        break;
                }
                tk.key = op_is_match(tk.op) ? udev_keys[k].match : udev_keys[k].assign;
                {
                        UdevToken *n = array_append(&l.tokens, l.n_tokens, sizeof(UdevToken));

                        if (!n) {
                                r = -ENOMEM;
                                goto fail_token;
                        }
                        *n = tk;
                        l.n_tokens++;
                }
                continue;
        refuse_token:
                free(tk.attr);
                free(tk.value);
                goto refuse;
        fail_token:
                free(tk.attr);
                free(tk.value);
                goto fail;
        }
        if (l.n_tokens == 0)
                goto refuse;
        for (size_t i = 0; i < l.n_tokens; i++) {
                if (l.tokens[i].key == UKEY_LABEL)
                        l.label = l.tokens[i].value;
                else if (l.tokens[i].key == UKEY_GOTO)
                        l.goto_label = l.tokens[i].value;
        }
        *ret = l;
        return 1;
refuse:
        udev_line_done(&l);
        return 0;
fail:
        udev_line_done(&l);
        return r;
}

/* The label a GOTO names must follow it in the file, or udev ignores the GOTO. */
static void udev_file_check_gotos(UdevFile *f) {
        for (size_t i = 0; i < f->n_lines; i++) {
                bool found = false;

                if (!f->lines[i].goto_label)
                        continue;
                for (size_t j = i + 1; j < f->n_lines && !found; j++)
                        found = f->lines[j].label && streq(f->lines[j].label, f->lines[i].goto_label);
                if (!found)
                        f->lines[i].goto_label = NULL;
        }
}

static bool path_names_event_device(const char *dev) {
        static const char *const subst[] = {
                "%k", "$kernel", "%p", "$devpath", "$env{DEVPATH}", "%E{DEVPATH}", "$name", "%n",
        };

        for (size_t i = 0; i < ELEMENTSOF(subst); i++)
                if (strstr(dev, subst[i]))
                        return true;
        return false;
}

/* The value an "echo VALUE > PATH" before @path writes; NULL when it is not that. */
static char *run_echo_value(const char *cmd, const char *path) {
        const char *gt = path, *seg, *echo = NULL, *v, *end;

        while (gt > cmd && (gt[-1] == ' ' || gt[-1] == '\t'))
                gt--;
        if (gt == cmd || gt[-1] != '>')
                return NULL;
        gt--;
        while (gt > cmd && gt[-1] == '>')
                gt--;
        /* The last "echo " of the command (after the last ; & | or newline) before the '>'. */
        for (seg = gt; seg > cmd && !strchr(";&|\n(", seg[-1]); seg--)
                ;
        for (const char *p = seg; (p = strstr(p, "echo ")) && p < gt; p++)
                echo = p;
        if (!echo)
                return NULL;
        v = echo + 5;
        for (;;) {
                v += strspn(v, " \t");
                if ((startswith(v, "-n ") || startswith(v, "-e ")) && v + 3 <= gt)
                        v += 3;
                else
                        break;
        }
        end = gt;
        while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
        if ((*v == '\'' || *v == '"') && end > v + 1 && end[-1] == *v)
                v++, end--;
        if (end <= v || memchr(v, '\'', end - v) || memchr(v, '"', end - v))
                return NULL;
        return strndup(v, end - v);
}

/* A word of a command line: argv[0]'s file name is "iocost", and so on. */
static bool word_is(const char *p, size_t len, const char *word) {
        return strlen(word) == len && strncmp(p, word, len) == 0;
}

static int udev_add_writer(Writers *w, const UdevFile *f, size_t line, WriterKind kind,
                           uint32_t attrs, const char *tunable, const char *value, bool other,
                           const char *program, size_t program_len) {
        WriterEntry *e;

        e = writers_push(w, kind, attrs, tunable, value, f->filename, f->lines[line].line,
                         NULL, NULL);
        if (!e)
                return w->n_entries >= WRITERS_MAX ? 0 : -ENOMEM;
        e->scope = SCOPE_UDEV;
        e->file = w->n_udev_files;
        e->line = line;
        e->other_device = other;
        if (program) {
                e->program = strndup(program, program_len);
                if (!e->program) {
                        writer_done(&e->w);
                        w->n_entries--;
                        return -ENOMEM;
                }
        }
        return 1;
}

/* What a RUN program writes: "iocost apply" (systemd-iocost), "blockdev --setra N", or a
 * path below /sys that ends in one of our keys (echo VALUE > /sys/block/%k/queue/scheduler). */
static int udev_run_writers(Writers *w, const UdevFile *f, size_t line, const char *cmd) {
        size_t n0 = strcspn(cmd, " \t"), n1;
        const char *base = cmd, *arg1;
        int found = 0, r;

        for (const char *p = cmd; p < cmd + n0; p++)
                if (*p == '/')
                        base = p + 1;
        arg1 = cmd + n0 + strspn(cmd + n0, " \t");
        n1 = strcspn(arg1, " \t");
        if (word_is(base, cmd + n0 - base, "iocost") && word_is(arg1, n1, "apply"))
                return udev_add_writer(w, f, line, WRITER_SYSTEMD_IOCOST, writer_iocost_attrs(), NULL, NULL, false,
                                       cmd, n0);
        if (word_is(base, cmd + n0 - base, "blockdev")) {
                const char *ra = strstr(cmd, "--setra");
                _cleanup_(freep) char *value = NULL;
                int64_t sectors;

                if (ra) {
                        char num[24] = {};

                        ra += strlen("--setra");
                        ra += strspn(ra, " \t=");
                        memcpy(num, ra, MIN(strcspn(ra, " \t"), sizeof(num) - 1));
                        if (safe_atoi64(num, 0, INT64_MAX, &sectors) == 0)
                                value = strdup_printf("%" PRIi64, sectors / 2);
                        else
                                value = strdup_printf("%s sectors", num);
                        if (!value)
                                return -ENOMEM;
                        return udev_add_writer(w, f, line, WRITER_UDEV_RULE, ATTR_BIT(ATTR_READ_AHEAD_KB),
                                               NULL, value, false, cmd, n0);
                }
        }
        for (const char *p = cmd; (p = strstr(p, "/sys/")); p++) {
                _cleanup_(freep) char *dev = NULL, *tunable = NULL, *value = NULL;
                int id;

                if (p > cmd && !strchr(" \t'\"=>", p[-1]))
                        continue;
                id = split_key_path("", p, strcspn(p, " \t'\";&|<>)"), &dev, &tunable);
                if (id == -ENOENT)
                        continue;
                if (id < 0)
                        return id;
                value = run_echo_value(cmd, p);
                r = udev_add_writer(w, f, line, WRITER_UDEV_RULE, ATTR_BIT(id), tunable, value,
                                    !path_names_event_device(dev), cmd, n0);
                if (r <= 0)
                        return r;
                found++;
        }
        return found;
}

/* The writers of one line; Return: how many, or -ENOMEM. */
static int udev_line_writers(Writers *w, const UdevFile *f, size_t line) {
        const UdevLine *l = &f->lines[line];
        int found = 0, r;

        for (size_t i = 0; i < l->n_tokens; i++) {
                const UdevToken *tk = &l->tokens[i];

                if (tk->key == UKEY_ATTR && !op_is_match(tk->op) && tk->op != UOP_REMOVE) {
                        const char *rel = tk->attr, *tunable;
                        bool other = false;
                        int id;

                        /* "[block/sda]queue/scheduler": another device's attribute. */
                        if (rel[0] == '[') {
                                const char *end = strchr(rel, ']');

                                if (!end)
                                        continue;
                                rel = end + 1;
                                other = true;
                        }
                        id = key_of_relpath(rel, &tunable);
                        if (id < 0)
                                continue;
                        r = udev_add_writer(w, f, line, WRITER_UDEV_RULE, ATTR_BIT(id), tunable, tk->value,
                                            other, NULL, 0);
                } else if (tk->key == UKEY_RUN && tk->op != UOP_REMOVE &&
                           (!tk->attr || streq(tk->attr, "program")))
                        r = udev_run_writers(w, f, line, tk->value);
                else
                        continue;
                if (r < 0)
                        return r;
                found += r;
        }
        return found;
}

/* Whether a line takes part in the evaluation of a file: it writes, jumps, is jumped to, or
 * sets a property a later line may match on. */
static bool udev_line_matters(const UdevLine *l) {
        if (l->label || l->goto_label)
                return true;
        for (size_t i = 0; i < l->n_tokens; i++) {
                const UdevToken *tk = &l->tokens[i];

                if ((tk->key == UKEY_ENV && !op_is_match(tk->op)) ||
                    (tk->key == UKEY_IMPORT && streq_ptr(tk->attr, "cmdline")) ||
                    (tk->key == UKEY_ATTR && !op_is_match(tk->op)) || tk->key == UKEY_RUN)
                        return true;
        }
        return false;
}

int writers_add_udev_rules(Writers *w, const char *filename, const char *text, size_t size) {
        _cleanup_(freep) char *buf = NULL;
        UdevFile f = {};
        size_t pos = 0, len = 0, kept = 0;
        unsigned lineno = 0, first = 0;
        size_t n_entries = w->n_entries;
        int r, found = 0;

        assert(w);
        assert(filename);
        buf = malloc(UDEV_LINE_MAX + 1);
        f.filename = strdup(filename);
        if (!buf || !f.filename) {
                r = -ENOMEM;
                goto fail;
        }
        while (pos < size) {
                const char *start = text + pos, *nl = memchr(start, '\n', size - pos);
                size_t n = nl ? (size_t) (nl - start) : size - pos;
                bool continued;

                pos += n + (nl ? 1 : 0);
                lineno++;
                if (memchr(start, 0, n)) {
                        len = 0;        /* udev reads lines as strings: a NUL ends it; refuse */
                        continue;
                }
                if (len == 0) {
                        while (n > 0 && (*start == ' ' || *start == '\t'))
                                start++, n--;
                        if (n == 0 || *start == '#')
                                continue;
                        first = lineno;
                }
                while (n > 0 && strchr(" \t\r", start[n - 1]))
                        n--;
                continued = n > 0 && start[n - 1] == '\\';
                if (continued)
                        n--;
                if (len + n > UDEV_LINE_MAX) {
                        len = 0;        /* udevd refuses it whole */
                        continue;
                }
                memcpy(buf + len, start, n);
                len += n;
                if (continued && pos < size)
                        continue;
                buf[len] = 0;
                len = 0;
                {
                        UdevLine l, *nls;

                        r = udev_parse_line(buf, first, &l);
                        if (r < 0)
                                goto fail;
                        if (r == 0)
                                continue;
                        nls = array_append(&f.lines, f.n_lines, sizeof(UdevLine));
                        if (!nls) {
                                udev_line_done(&l);
                                r = -ENOMEM;
                                goto fail;
                        }
                        *nls = l;
                        f.n_lines++;
                }
        }
        udev_file_check_gotos(&f);

        /* Keep the lines that take part; drop the rest (most of a distribution's rules). */
        for (size_t i = 0; i < f.n_lines; i++)
                if (udev_line_matters(&f.lines[i]))
                        f.lines[kept++] = f.lines[i];
                else
                        udev_line_done(&f.lines[i]);
        f.n_lines = kept;

        for (size_t i = 0; i < f.n_lines; i++) {
                r = udev_line_writers(w, &f, i);
                if (r < 0)
                        goto fail;
                found += r;
        }
        if (found == 0) {
                udev_file_done(&f);
                return 0;
        }
        {
                UdevFile **nf = array_append(&w->udev_files, w->n_udev_files, sizeof(UdevFile *));

                if (!nf || !(*nf = malloc(sizeof(UdevFile)))) {
                        r = -ENOMEM;
                        goto fail;
                }
                **nf = f;
                w->n_udev_files++;
        }
        /* The properties the kept files match on: a disk's loader keeps them. */
        if (!w->udev_keys && !(w->udev_keys = calloc(1, sizeof(char *))))
                return -ENOMEM;
        r = udev_file_keys(w->udev_files[w->n_udev_files - 1], &w->udev_keys);
        if (r < 0)
                return r;
        strv_sort(w->udev_keys);
        return found;
fail:
        /* The entries pointing at this file go with it. */
        writers_truncate(w, n_entries);
        udev_file_done(&f);
        return r;
}

/* ---- udev rules: running them for one disk ---- */

/* What one run of a file knows: the properties it set itself, the disk's, the command line. */
typedef struct UdevEnv {
        const WriterTarget *t;
        const char *cmdline;
        const char *action;
        bool certain;                   /* the line being run is surely reached, its matches so far YES */
        char *devname;
        struct {
                const char *key;        /* into the rules */
                char *value;            /* NULL: set to something unknown */
        } set[32];
        size_t n_set;
        bool overflow;                  /* more set than we track: every unknown key is unknown */
} UdevEnv;

static void udev_env_done(UdevEnv *e) {
        for (size_t i = 0; i < e->n_set; i++)
                free(e->set[i].value);
        free(e->devname);
}

/* Return: 1 known (*ret, "" when unset), 0 unknown, -ENOMEM. */
static int udev_env_get(const UdevEnv *e, const char *key, const char **ret) {
        const WriterTarget *t = e->t;
        const char *v;

        for (size_t i = e->n_set; i > 0; i--)
                if (streq(e->set[i - 1].key, key)) {
                        *ret = e->set[i - 1].value;
                        return !!*ret;
                }
        if (streq(key, "DEVTYPE"))
                return *ret = "disk", 1;
        if (streq(key, "SUBSYSTEM"))
                return *ret = "block", 1;
        if (streq(key, "ACTION"))
                return *ret = e->action, 1;
        if (streq(key, "DEVNAME"))
                return *ret = e->devname, !!e->devname;
        if (streq(key, "DEVPATH"))
                return *ret = t->devpath, !!t->devpath;
        v = t->udev ? udev_props_get(t->udev, key) : NULL;
        if (v)
                return *ret = v, 1;
        if (e->overflow || !t->udev_complete)
                return 0;
        return *ret = "", 1;
}

static int udev_env_set(UdevEnv *e, const char *key, const char *value) {
        char *v = NULL;

        if (value && !(v = strdup(value)))
                return -ENOMEM;
        for (size_t i = 0; i < e->n_set; i++)
                if (streq(e->set[i].key, key)) {
                        free(e->set[i].value);
                        e->set[i].value = v;
                        return 0;
                }
        if (e->n_set >= ELEMENTSOF(e->set)) {
                free(v);
                e->overflow = true;
                return 0;
        }
        e->set[e->n_set].key = key;
        e->set[e->n_set++].value = v;
        return 0;
}

/* udev's substitutions that the target can answer: $env{KEY} %E{KEY}, $kernel %k, $devpath %p,
 * $devnode $tempnode %N, $$ %%. Return: 1 resolved (*ret new), 0 something unknown, -ENOMEM. */
static int udev_subst(const UdevEnv *e, const char *s, char **ret) {
        _cleanup_(freep) char *out = NULL;
        size_t len = 0, cap = strlen(s) + 1;

        out = malloc(cap);
        if (!out)
                return -ENOMEM;
        while (*s) {
                const char *v = NULL, *key_end;
                char key[128];
                size_t skip = 0, n;

                if (*s != '$' && *s != '%') {
                        out[len++] = *s++;
                        continue;
                }
                if (startswith(s, "$env{") || startswith(s, "%E{")) {
                        const char *k = strchr(s, '{') + 1;

                        key_end = strchr(k, '}');
                        if (!key_end || (size_t) (key_end - k) >= sizeof(key))
                                return 0;
                        memcpy(key, k, key_end - k);
                        key[key_end - k] = 0;
                        if (udev_env_get(e, key, &v) <= 0)
                                return 0;
                        skip = key_end + 1 - s;
                } else if (startswith(s, "$kernel") || startswith(s, "$name"))
                        v = e->t->name, skip = s[1] == 'k' ? 7 : 5;
                else if (startswith(s, "%k"))
                        v = e->t->name, skip = 2;
                else if (startswith(s, "$devpath") || startswith(s, "%p")) {
                        if (!e->t->devpath)
                                return 0;
                        v = e->t->devpath, skip = s[1] == 'd' ? 8 : 2;
                } else if (startswith(s, "$devnode") || startswith(s, "$tempnode") || startswith(s, "%N")) {
                        v = e->devname, skip = s[1] == 'd' ? 8 : s[1] == 't' ? 9 : 2;
                } else if (s[1] == *s)
                        v = *s == '$' ? "$" : "%", skip = 2;
                else
                        return 0;
                n = strlen(v);
                if (len + n + strlen(s + skip) + 1 > cap) {
                        char *b;

                        cap = len + n + strlen(s + skip) + 1;
                        b = realloc(out, cap);
                        if (!b)
                                return -ENOMEM;
                        out = b;
                }
                memcpy(out + len, v, n);
                len += n;
                s += skip;
        }
        out[len] = 0;
        *ret = TAKE_PTR(out);
        return 1;
}

/* udev's string match: alternatives separated by "|", each a shell glob; "" matches an
 * empty value. @value NULL: unknown. */
static Applies udev_match(const UdevToken *tk, const char *value) {
        const char *p = tk->value;
        bool matched = false;
        char *v = NULL;

        if (!value)
                return APPLIES_MAYBE;
        /* Attribute values are matched without their trailing blanks and newline. */
        if (tk->key == UKEY_ATTR) {
                size_t n = strlen(value);

                while (n > 0 && strchr(" \t\n", value[n - 1]))
                        n--;
                v = strndup(value, n);
                if (!v)
                        return APPLIES_MAYBE;
                value = v;
        }
        for (;;) {
                size_t n = strcspn(p, "|");
                char alt[UDEV_LINE_MAX + 1];

                memcpy(alt, p, n);
                alt[n] = 0;
                if (n == 0 ? *value == 0 : fnmatch(alt, value, tk->casefold ? FNM_CASEFOLD : 0) == 0) {
                        matched = true;
                        break;
                }
                if (!p[n])
                        break;
                p += n + 1;
        }
        free(v);
        return tri_of(matched != (tk->op == UOP_NOMATCH));
}

static const char *target_attr(const WriterTarget *t, const char *attr) {
        if (streq(attr, "queue/rotational"))
                return t->rotational < 0 ? NULL : t->rotational ? "1" : "0";
        if (streq(attr, "removable"))
                return t->removable < 0 ? NULL : t->removable ? "1" : "0";
        if (streq(attr, "queue/scheduler"))
                return t->has_scheduler == 0 ? "" : t->scheduler_text;
        if (streq(attr, "queue/zoned"))
                return t->zoned;
        if (streq(attr, "dev"))
                return t->devnum;
        return NULL;
}

static Applies udev_test(const UdevToken *tk, const WriterTarget *t) {
        static const char *const sched[] = {
                "queue/scheduler", "%S%p/queue/scheduler", "/sys%p/queue/scheduler",
                "/sys$devpath/queue/scheduler", "$sys$devpath/queue/scheduler",
        };
        Applies a = APPLIES_MAYBE;

        if (tk->attr)           /* TEST{0644}: a mode, not known here */
                return APPLIES_MAYBE;
        for (size_t i = 0; i < ELEMENTSOF(sched); i++)
                if (streq(tk->value, sched[i]))
                        a = t->has_scheduler < 0 ? APPLIES_MAYBE : tri_of(t->has_scheduler);
        return tk->op == UOP_NOMATCH ? tri_not(a) : a;
}

/* IMPORT{cmdline}="KEY": matches when the command line has KEY or KEY=VALUE, and sets the
 * property KEY (to "1" for a bare KEY). */
static int udev_import_cmdline(UdevEnv *e, const UdevToken *tk, Applies *ret) {
        _cleanup_(freep) char *value = NULL;
        size_t n = strlen(tk->value);
        bool found = false;

        if (!e->cmdline) {
                *ret = APPLIES_MAYBE;
                return udev_env_set(e, tk->value, NULL);
        }
        for (const char *p = e->cmdline; *p;) {
                size_t w;

                p += strspn(p, " \t\n");
                w = strcspn(p, " \t\n");
                if (w >= n && strncmp(p, tk->value, n) == 0 && (w == n || p[n] == '=')) {
                        found = true;
                        free(value);
                        value = w == n ? strdup("1") : strndup(p + n + 1, w - n - 1);
                        if (!value)
                                return -ENOMEM;
                }
                p += w;
        }
        *ret = tri_of(found == (tk->op == UOP_MATCH));
        /* A line that may not run sets something unknown, if anything. */
        return found ? udev_env_set(e, tk->value, e->certain ? value : NULL) : 0;
}

static int udev_token_eval(UdevEnv *e, const UdevToken *tk, Applies *ret) {
        const WriterTarget *t = e->t;
        const char *v = NULL;
        int r;

        switch (tk->key) {
        case UKEY_ACTION:
                *ret = udev_match(tk, e->action);
                return 0;
        case UKEY_KERNEL:
                *ret = udev_match(tk, t->name);
                return 0;
        case UKEY_SUBSYSTEM:
                *ret = udev_match(tk, "block");
                return 0;
        case UKEY_DEVPATH:
                *ret = udev_match(tk, t->devpath);
                return 0;
        case UKEY_DRIVER:
                *ret = udev_match(tk, "");      /* a block device has no driver of its own */
                return 0;
        case UKEY_ENV:
                r = udev_env_get(e, tk->attr, &v);
                if (r < 0)
                        return r;
                *ret = udev_match(tk, r > 0 ? v : NULL);
                return 0;
        case UKEY_ATTR:
                *ret = udev_match(tk, target_attr(t, tk->attr));
                return 0;
        case UKEY_TEST:
                *ret = udev_test(tk, t);
                return 0;
        case UKEY_IMPORT:
                if (streq(tk->attr, "cmdline"))
                        return udev_import_cmdline(e, tk, ret);
                /* builtin, db, parent: udevd imports what the disk's database shows anyway;
                 * program and file may fail. */
                *ret = streq(tk->attr, "program") || streq(tk->attr, "file") ? APPLIES_MAYBE
                       : tk->op == UOP_MATCH                                ? APPLIES_YES
                                                                            : APPLIES_NO;
                return 0;
        default:
                *ret = APPLIES_MAYBE;
                return 0;
        }
}

/*
 * Run a file's lines for one action. ret[i]: whether line i's assignments are made. A line
 * is reached (YES, MAYBE, NO) from the one before it or by a GOTO; its matches decide the
 * rest. GOTOs only jump forward.
 */
/* Called for each line whose assignments may be made, after its ENV assignments. */
typedef int (*UdevLineDone)(size_t line, const UdevEnv *e, void *userdata);

static int udev_file_run(const UdevFile *f, const WriterTarget *t, const char *cmdline,
                         const char *action, Applies *ret, UdevLineDone done, void *userdata) {
        UdevEnv e = { .t = t, .cmdline = cmdline, .action = action };
        Applies reach = APPLIES_YES;
        int r = 0;
        struct {
                const char *label;
                Applies a;
        } pending[64];
        size_t n_pending = 0;

        e.devname = strdup_printf("/dev/%s", t->name);
        if (!e.devname)
                return -ENOMEM;
        for (size_t i = 0; i < f->n_lines; i++) {
                const UdevLine *l = &f->lines[i];
                Applies c = APPLIES_YES, eff;

                if (l->label)
                        for (size_t j = 0; j < n_pending; j++)
                                if (pending[j].a != APPLIES_NO && streq(pending[j].label, l->label)) {
                                        reach = tri_or(reach, pending[j].a);
                                        pending[j].a = APPLIES_NO;
                                }
                for (size_t k = 0; k < l->n_tokens && c != APPLIES_NO && reach != APPLIES_NO; k++) {
                        const UdevToken *tk = &l->tokens[k];
                        Applies a;

                        if (!op_is_match(tk->op) && tk->key != UKEY_IMPORT)
                                continue;
                        e.certain = reach == APPLIES_YES && c == APPLIES_YES;
                        r = udev_token_eval(&e, tk, &a);
                        if (r < 0)
                                goto finish;
                        c = tri_and(c, a);
                }
                eff = tri_and(reach, c);
                ret[i] = eff;
                if (eff != APPLIES_NO)
                        for (size_t k = 0; k < l->n_tokens; k++) {
                                const UdevToken *tk = &l->tokens[k];
                                _cleanup_(freep) char *v = NULL;

                                if (tk->key != UKEY_ENV || op_is_match(tk->op))
                                        continue;
                                r = eff == APPLIES_YES && tk->op != UOP_REMOVE ? udev_subst(&e, tk->value, &v) : 0;
                                if (r < 0)
                                        goto finish;
                                r = udev_env_set(&e, tk->attr, v);
                                if (r < 0)
                                        goto finish;
                        }
                if (eff != APPLIES_NO && done) {
                        r = done(i, &e, userdata);
                        if (r < 0)
                                goto finish;
                }
                if (l->goto_label && eff != APPLIES_NO) {
                        size_t j;

                        for (j = 0; j < n_pending; j++)
                                if (streq(pending[j].label, l->goto_label))
                                        break;
                        if (j == n_pending) {
                                if (n_pending == ELEMENTSOF(pending)) {
                                        /* Too many labels to follow: whatever follows may run. */
                                        reach = APPLIES_MAYBE;
                                        continue;
                                }
                                pending[n_pending++] = (typeof(pending[0])) { l->goto_label, APPLIES_NO };
                        }
                        pending[j].a = tri_or(pending[j].a, eff);
                        reach = tri_and(reach, tri_not(c));
                }
        }
        r = 0;
finish:
        udev_env_done(&e);
        return r;
}

typedef struct ForDisk {
        const Writers *w;
        size_t file;
        char **values;          /* per entry: the value with udev's substitutions made */
} ForDisk;

static int for_disk_line_done(size_t line, const UdevEnv *e, void *userdata) {
        ForDisk *fd = userdata;

        for (size_t i = 0; i < fd->w->n_entries; i++) {
                const WriterEntry *we = &fd->w->entries[i];
                char *v = NULL;
                int r;

                if (we->scope != SCOPE_UDEV || we->file != fd->file || we->line != line || fd->values[i] ||
                    !we->w.value || !strpbrk(we->w.value, "$%"))
                        continue;
                r = udev_subst(e, we->w.value, &v);
                if (r < 0)
                        return r;
                fd->values[i] = v;
        }
        return 0;
}

int udev_file_eval(const Writers *w, size_t file, const WriterTarget *t, Applies **ret_add,
                   Applies **ret_change, char **values) {
        const UdevFile *f = w->udev_files[file];
        ForDisk fd = { .w = w, .file = file, .values = values };
        _cleanup_(freep) Applies *add = NULL, *change = NULL;
        int r;

        add = calloc(f->n_lines + 1, sizeof(Applies));
        change = calloc(f->n_lines + 1, sizeof(Applies));
        if (!add || !change)
                return -ENOMEM;
        r = udev_file_run(f, t, w->cmdline, "add", add, for_disk_line_done, &fd);
        if (r < 0)
                return r;
        r = udev_file_run(f, t, w->cmdline, "change", change, for_disk_line_done, &fd);
        if (r < 0)
                return r;
        *ret_add = TAKE_PTR(add);
        *ret_change = TAKE_PTR(change);
        return 0;
}

int udev_file_keys(const UdevFile *f, char ***keys) {
        for (size_t i = 0; i < f->n_lines; i++) {
                const UdevLine *l = &f->lines[i];

                for (size_t k = 0; k < l->n_tokens; k++) {
                        const char *key = l->tokens[k].attr;
                        int r;

                        if (l->tokens[k].key != UKEY_ENV || !op_is_match(l->tokens[k].op) ||
                            strv_contains(*keys, key) || streq(key, "DEVTYPE") || streq(key, "SUBSYSTEM") ||
                            streq(key, "ACTION") || streq(key, "DEVNAME") || streq(key, "DEVPATH"))
                                continue;
                        r = strv_extend(keys, key);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}
