/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

#include "util.h"
#include "writers-internal.h"

#define VALUE_SHOWN_MAX 128
#define PATH_MAX_SHORT 512     /* a candidate path of a disk: /sys + devpath */

/* owner.defer's name of each kind, and what people are shown. */
static const struct {
        const char *name, *source;
} writer_kinds[_WRITER_KIND_MAX] = {
        [WRITER_UDEV_RULE] = { "udev-rules", "udev rule" },
        [WRITER_TUNED] = { "tuned", "TuneD profile" },
        [WRITER_TLP] = { "tlp", "TLP" },
        [WRITER_SYSFSUTILS] = { "sysfsutils", "sysfsutils" },
        [WRITER_SYSTEMD_IOCOST] = { "systemd-iocost", "systemd-iocost rule" },
        [WRITER_CMDLINE] = { "cmdline", "kernel command line" },
};

const char *writer_kind_to_string(WriterKind k) {
        return (unsigned) k < _WRITER_KIND_MAX ? writer_kinds[k].name : NULL;
}

int writer_kind_from_string(const char *s) {
        for (WriterKind k = 0; k < _WRITER_KIND_MAX; k++)
                if (streq(writer_kinds[k].name, s))
                        return k;
        return -EINVAL;
}

static const char *const applies_names[] = {
        [APPLIES_NO] = "no",
        [APPLIES_MAYBE] = "may apply",
        [APPLIES_YES] = "applies",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(applies, Applies, applies_names, ELEMENTSOF(applies_names));

void writer_done(Writer *w) {
        if (!w)
                return;
        free(w->tunable);
        free(w->value);
        free(w->file);
        free(w->source);
        free(w->when);
        *w = (Writer) {};
}

static int writer_copy(const Writer *w, Writer *ret) {
        *ret = (Writer) {
                .kind = w->kind,
                .attrs = w->attrs,
                .line = w->line,
                .dead = w->dead,
                .applies = w->applies,
        };
        if ((w->tunable && !(ret->tunable = strdup(w->tunable))) ||
            (w->value && !(ret->value = strdup(w->value))) ||
            (w->file && !(ret->file = strdup(w->file))) ||
            (w->source && !(ret->source = strdup(w->source))) ||
            (w->when && !(ret->when = strdup(w->when)))) {
                writer_done(ret);
                return -ENOMEM;
        }
        return 0;
}

void other_writers_done(OtherWriters *o) {
        if (!o)
                return;
        for (size_t i = 0; i < o->n; i++)
                writer_done(&o->writers[i]);
        free(o->writers);
        *o = (OtherWriters) {};
}

OtherWriters *other_writers_free(OtherWriters *o) {
        other_writers_done(o);
        free(o);
        return NULL;
}

static int other_writers_push(OtherWriters *o, const Writer *w, Applies applies) {
        Writer *n;
        int r;

        n = array_append(&o->writers, o->n, sizeof(Writer));
        if (!n)
                return -ENOMEM;
        r = writer_copy(w, n);
        if (r < 0)
                return r;
        n->applies = applies;
        o->n++;
        return 0;
}

int other_writers_copy(const OtherWriters *o, OtherWriters *ret) {
        OtherWriters c = {};

        for (size_t i = 0; o && i < o->n; i++)
                if (other_writers_push(&c, &o->writers[i], o->writers[i].applies) < 0) {
                        other_writers_done(&c);
                        return -ENOMEM;
                }
        *ret = c;
        return 0;
}

static bool writer_equal(const Writer *a, const Writer *b) {
        return a->kind == b->kind && a->attrs == b->attrs && a->line == b->line &&
               a->dead == b->dead && a->applies == b->applies && streq_ptr(a->tunable, b->tunable) &&
               streq_ptr(a->value, b->value) && streq_ptr(a->file, b->file) &&
               streq_ptr(a->source, b->source) && streq_ptr(a->when, b->when);
}

bool other_writers_equal(const OtherWriters *a, const OtherWriters *b) {
        size_t na = a ? a->n : 0, nb = b ? b->n : 0;

        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (!writer_equal(&a->writers[i], &b->writers[i]))
                        return false;
        return true;
}

bool writer_writes(const Writer *w, AttrId id, const char *tunable) {
        if (!(w->attrs & ATTR_BIT(id)))
                return false;
        return id != ATTR_IOSCHED || streq_ptr(w->tunable, tunable);
}

uint32_t writer_iocost_attrs(void) {
        uint32_t m = 0;

        for (AttrId id = 0; id < _ATTR_MAX; id++)
                if (attr_get(id)->file == ATTR_FILE_IOCOST_QOS || attr_get(id)->file == ATTR_FILE_IOCOST_MODEL)
                        m |= ATTR_BIT(id);
        return m;
}

int writer_from_record(const char *key, const char *owner, const char *source, const char *file,
                       unsigned line, const char *value, const char *when, bool certain, Writer *ret) {
        _cleanup_(writer_done) Writer w = {};
        const AttrInfo *a;
        int kind, r;

        kind = writer_kind_from_string(owner);
        if (kind < 0)
                return -EINVAL;
        w = (Writer) {
                .kind = kind,
                .line = line,
                .dead = kind == WRITER_CMDLINE,
                .applies = certain ? APPLIES_YES : APPLIES_MAYBE,
        };
        if (streq(key, "iocost"))
                w.attrs = writer_iocost_attrs();
        else {
                r = setting_key_parse(key, &a, &w.tunable);
                if (r < 0)
                        return r == -ENOENT ? -EINVAL : r;
                w.attrs = ATTR_BIT(a->id);
        }
        if (!(w.source = strdup(source)) || !(w.file = strdup(file)) ||
            (*value && !(w.value = strdup(value))) || (*when && !(w.when = strdup(when))))
                return -ENOMEM;
        *ret = w;
        w = (Writer) {};
        return 0;
}

char *writer_key(const Writer *w) {
        for (AttrId id = 0; id < _ATTR_MAX; id++)
                if (w->attrs == ATTR_BIT(id))
                        return id == ATTR_IOSCHED ? strdup_printf(IOSCHED_KEY_PREFIX "%s", strempty(w->tunable))
                                                  : strdup(attr_get(id)->key);
        return strdup("iocost");
}

char *writer_where(const Writer *w) {
        if (w->line == 0)
                return strdup(strempty(w->file));
        return strdup_printf("%s:%u", strempty(w->file), w->line);
}

char *writer_describe(const Writer *w) {
        _cleanup_(freep) char *where = NULL, *value = NULL;

        where = writer_where(w);
        if (!where)
                return NULL;
        /* Values come from files anyone with root may have written: shown escaped, and short. */
        if (w->value) {
                value = escape_for_log(w->value, VALUE_SHOWN_MAX);
                if (!value)
                        return NULL;
        }
        if (w->dead)
                return strdup_printf("%s elevator=%s: no effect (no kernel since 5.0 reads it)",
                                     w->source, strempty(value));
        return strdup_printf("%s %s writes %s%s%s%s", w->source, where, value ?: "it",
                             w->when ? " on " : "", strempty(w->when),
                             w->applies == APPLIES_MAYBE ? " (may apply)" : "");
}

const Writer *other_writers_find(const OtherWriters *o, AttrId id, const char *tunable,
                                 uint32_t kinds) {
        for (size_t i = 0; o && i < o->n; i++) {
                const Writer *w = &o->writers[i];

                if (!w->dead && (kinds & WRITER_KIND_BIT(w->kind)) && writer_writes(w, id, tunable))
                        return w;
        }
        return NULL;
}

char *other_writers_of_key(const OtherWriters *o, AttrId id, const char *tunable, uint32_t kinds) {
        _cleanup_(freep) char *text = NULL;
        size_t len = 0;

        errno = 0;
        for (size_t i = 0; o && i < o->n; i++) {
                const Writer *w = &o->writers[i];
                _cleanup_(freep) char *where = NULL;
                char *n;
                int k;

                if (w->dead || !(kinds & WRITER_KIND_BIT(w->kind)) || !writer_writes(w, id, tunable))
                        continue;
                where = writer_where(w);
                if (!where)
                        return NULL;
                k = strlen(where) + 2 + 12;
                n = realloc(text, len + k + 1);
                if (!n)
                        return NULL;
                text = n;
                len += sprintf(text + len, "%s%s%s", len ? ", " : "", where,
                               w->applies == APPLIES_MAYBE ? " (may apply)" : "");
        }
        return TAKE_PTR(text);
}
void writer_entry_done(WriterEntry *e) {
        writer_done(&e->w);
        free(e->pattern);
        free(e->name);
        free(e->program);
}

Writers *writers_new(void) {
        return calloc(1, sizeof(Writers));
}

void writers_truncate(Writers *w, size_t n) {
        while (w->n_entries > n)
                writer_entry_done(&w->entries[--w->n_entries]);
}

Writers *writers_free(Writers *w) {
        if (!w)
                return NULL;
        writers_truncate(w, 0);
        free(w->entries);
        for (size_t i = 0; i < w->n_udev_files; i++)
                udev_file_free(w->udev_files[i]);
        free(w->udev_files);
        for (size_t i = 0; i < w->n_tuned_units; i++)
                free(w->tuned_units[i].devices);
        free(w->tuned_units);
        free(w->cmdline);
        strv_free(w->udev_keys);
        free(w);
        return NULL;
}

size_t writers_count(const Writers *w) {
        return w ? w->n_entries : 0;
}

const Writer *writers_get(const Writers *w, size_t i) {
        return w && i < w->n_entries ? &w->entries[i].w : NULL;
}

WriterEntry *writers_push(Writers *w, WriterKind kind, uint32_t attrs, const char *tunable,
                          const char *value, const char *file, unsigned line, const char *source,
                          const char *when) {
        WriterEntry *e;

        if (w->n_entries >= WRITERS_MAX)
                return NULL;
        e = array_append(&w->entries, w->n_entries, sizeof(WriterEntry));
        if (!e)
                return NULL;
        *e = (WriterEntry) {
                .w = { .kind = kind, .attrs = attrs, .line = line, .applies = APPLIES_YES },
        };
        if ((tunable && !(e->w.tunable = strdup(tunable))) || (value && !(e->w.value = strdup(value))) ||
            !(e->w.file = strdup(file)) || !(e->w.source = strdup(source ?: writer_kinds[kind].source)) ||
            (when && !(e->w.when = strdup(when)))) {
                writer_done(&e->w);
                return NULL;
        }
        w->n_entries++;
        return e;
}

int key_of_relpath(const char *rel, const char **ret_tunable) {
        const char *t;

        *ret_tunable = NULL;
        if (streq(rel, "bdi/read_ahead_kb"))
                return ATTR_READ_AHEAD_KB;
        t = startswith(rel, "queue/iosched/");
        if (t) {
                if (!string_in_charset(t, CHARSET_ALNUM "_", TUNABLE_NAME_MAX))
                        return -ENOENT;
                *ret_tunable = t;
                return ATTR_IOSCHED;
        }
        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                const AttrInfo *a = attr_get(id);

                if (a->file == ATTR_FILE_QUEUE && a->path && streq(a->path, rel))
                        return id;
        }
        return -ENOENT;
}

int split_key_path(const char *prefix, const char *text, size_t len, char **ret_dev,
                   char **ret_tunable) {
        _cleanup_(freep) char *path = NULL;
        const char *slash[3] = {};
        size_t n = 0;

        path = strdup_printf("%s%.*s", prefix, (int) MIN(len, (size_t) PATH_MAX), text);
        if (!path)
                return -ENOMEM;
        for (const char *p = path + strlen(path); p > path && n < 3;)
                if (*--p == '/')
                        slash[n++] = p;
        for (size_t i = 1; i < n; i++) {
                const char *tunable;
                int id = key_of_relpath(slash[i] + 1, &tunable);

                if (id < 0)
                        continue;
                *ret_dev = strndup(path, slash[i] - path);
                *ret_tunable = tunable ? strdup(tunable) : NULL;
                if (!*ret_dev || (tunable && !*ret_tunable)) {
                        *ret_dev = mfree(*ret_dev);
                        *ret_tunable = mfree(*ret_tunable);
                        return -ENOMEM;
                }
                return id;
        }
        /* /sys/class/bdi/MAJ:MIN/read_ahead_kb: the disk's bdi by number. */
        if (n >= 1 && streq(slash[0], "/read_ahead_kb") &&
            (startswith(path, "/sys/class/bdi/") || startswith(path, "/sys/devices/virtual/bdi/"))) {
                *ret_dev = strndup(path, slash[0] - path);
                *ret_tunable = NULL;
                return *ret_dev ? ATTR_READ_AHEAD_KB : -ENOMEM;
        }
        return -ENOENT;
}
/* ---- TLP ---- */

typedef struct TlpVar {
        char *value, *file;
        unsigned line;
        bool set;
} TlpVar;

enum { TLP_ENABLE, TLP_DISK_DEVICES, TLP_DISK_IOSCHED, _TLP_VAR_MAX };

static const char *const tlp_var_names[_TLP_VAR_MAX] = {
        [TLP_ENABLE] = "TLP_ENABLE",
        [TLP_DISK_DEVICES] = "DISK_DEVICES",
        [TLP_DISK_IOSCHED] = "DISK_IOSCHED",
};

struct TlpConf {
        TlpVar vars[_TLP_VAR_MAX];
};

TlpConf *tlp_conf_new(void) {
        return calloc(1, sizeof(TlpConf));
}

TlpConf *tlp_conf_free(TlpConf *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < _TLP_VAR_MAX; i++) {
                free(c->vars[i].value);
                free(c->vars[i].file);
        }
        free(c);
        return NULL;
}

/* TLP's own reader takes NAME="value", NAME=value of [-0-9a-zA-Z _.:] and NAME+="value"
 * (appended with a blank); the last definition wins. Other lines are not its settings. */
int tlp_conf_parse(TlpConf *c, const char *filename, const char *text, size_t size) {
        size_t pos = 0;
        unsigned lineno = 0;

        while (pos < size) {
                const char *start = text + pos, *nl = memchr(start, '\n', size - pos), *v, *ve;
                size_t n = nl ? (size_t) (nl - start) : size - pos, klen;
                bool append = false;
                TlpVar *var = NULL;
                char *value, *file;

                pos += n + (nl ? 1 : 0);
                lineno++;
                while (n > 0 && (*start == ' ' || *start == '\t'))
                        start++, n--;
                while (n > 0 && strchr(" \t\r", start[n - 1]))
                        n--;
                klen = strspn(start, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
                if (klen == 0 || klen >= n)
                        continue;
                for (size_t i = 0; i < _TLP_VAR_MAX; i++)
                        if (strlen(tlp_var_names[i]) == klen && strncmp(start, tlp_var_names[i], klen) == 0)
                                var = &c->vars[i];
                v = start + klen;
                if (*v == '+') {
                        append = true;
                        v++;
                }
                if (!var || v >= start + n || *v != '=')
                        continue;
                v++;
                ve = start + n;
                if (v < ve && *v == '"') {
                        if (ve - v < 2 || ve[-1] != '"')
                                continue;
                        v++, ve--;
                        if (memchr(v, '"', ve - v))
                                continue;
                } else {
                        bool ok = true;

                        for (const char *q = v; q < ve && ok; q++)
                                ok = strchr("-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ _.:", *q) && *q;
                        if (!ok)
                                continue;
                }
                if (append && var->set)
                        value = strdup_printf("%s %.*s", var->value, (int) (ve - v), v);
                else
                        value = strndup(v, ve - v);
                file = strdup(filename);
                if (!value || !file) {
                        free(value);
                        free(file);
                        return -ENOMEM;
                }
                free(var->value);
                free(var->file);
                *var = (TlpVar) { .value = value, .file = file, .line = lineno, .set = true };
        }
        return 0;
}

int writers_add_tlp(Writers *w, const TlpConf *c, TlpResolveId resolve, void *userdata) {
        _cleanup_(strv_freep) char **devices = NULL, **scheds = NULL;
        const TlpVar *ios = &c->vars[TLP_DISK_IOSCHED], *en = &c->vars[TLP_ENABLE];
        int r;

        if (en->set && streq(en->value, "0"))
                return 0;
        if (!ios->set)
                return 0;
        /* DISK_DEVICES undefined: TLP's default; defined empty: disabled. */
        r = strv_split(c->vars[TLP_DISK_DEVICES].set ? c->vars[TLP_DISK_DEVICES].value : "nvme0n1 sda",
                       " \t", &devices);
        if (r < 0)
                return r;
        r = strv_split(ios->value, " \t", &scheds);
        if (r < 0)
                return r;
        for (size_t i = 0; devices[i] && scheds[i]; i++) {
                _cleanup_(freep) char *name = NULL;
                WriterEntry *e;

                if (streq(scheds[i], "keep") || streq(scheds[i], "_"))
                        continue;
                /* TLP takes an entry with a link in /dev/disk/by-id for an id, else a name. */
                if (resolve) {
                        errno = 0;
                        name = resolve(devices[i], userdata);
                        if (!name && errno == ENOMEM)
                                return -ENOMEM;
                }
                if (!name && (resolve || !strchr(devices[i], '-') || startswith(devices[i], "dm-"))) {
                        if (!disk_name_is_valid(devices[i]))
                                continue;
                        name = strdup(devices[i]);
                        if (!name)
                                return -ENOMEM;
                }
                e = writers_push(w, WRITER_TLP, ATTR_BIT(ATTR_SCHEDULER), NULL, scheds[i], ios->file,
                                 ios->line, NULL, "tlp start, AC/battery change");
                if (!e)
                        return w->n_entries >= WRITERS_MAX ? 0 : -ENOMEM;
                e->scope = SCOPE_NAME;
                e->name = TAKE_PTR(name);
                if (!e->name)
                        e->w.applies = APPLIES_MAYBE;
        }
        return 0;
}

/* ---- sysfsutils ---- */

int writers_add_sysfs_conf(Writers *w, const char *filename, const char *text, size_t size) {
        size_t pos = 0;
        unsigned lineno = 0;
        int found = 0;

        while (pos < size) {
                const char *start = text + pos, *nl = memchr(start, '\n', size - pos);
                size_t n = nl ? (size_t) (nl - start) : size - pos;
                _cleanup_(strv_freep) char **words = NULL;
                _cleanup_(freep) char *line = NULL, *dev = NULL, *tunable = NULL;
                char *hash, *eq;
                WriterEntry *e;
                int id, r;

                pos += n + (nl ? 1 : 0);
                lineno++;
                line = strndup(start, n);
                if (!line)
                        return -ENOMEM;
                /* Debian's loader: "#" to the end is a comment; "ATTR = VALUE", one word each
                 * side; "mode ATTR = M" and "owner ATTR = U:G" change no value. */
                hash = strchr(line, '#');
                if (hash)
                        *hash = 0;
                eq = strchr(line, '=');
                if (!eq)
                        continue;
                *eq = 0;
                r = strv_split(line, " \t\r", &words);
                if (r < 0)
                        return r;
                if (strv_length(words) != 1 || streq(words[0], "mode") || streq(words[0], "owner"))
                        continue;
                id = split_key_path("/sys/", words[0] + (words[0][0] == '/'), SIZE_MAX, &dev, &tunable);
                if (id == -ENOENT)
                        continue;
                if (id < 0)
                        return id;
                strv_free(words);
                words = NULL;
                r = strv_split(eq + 1, " \t\r", &words);
                if (r < 0)
                        return r;
                e = writers_push(w, WRITER_SYSFSUTILS, ATTR_BIT(id), tunable, words[0], filename, lineno,
                                 NULL, "boot");
                if (!e)
                        return w->n_entries >= WRITERS_MAX ? found : -ENOMEM;
                e->scope = SCOPE_PATH;
                e->pattern = TAKE_PTR(dev);
                found++;
        }
        return found;
}

/* ---- The kernel command line ---- */

int writers_set_cmdline(Writers *w, const char *cmdline) {
        const char *p;

        free(w->cmdline);
        w->cmdline = NULL;
        if (!cmdline)
                return 0;
        w->cmdline = strdup(cmdline);
        if (!w->cmdline)
                return -ENOMEM;
        /* elevator= was the legacy block layer's; blk-mq never read it (Linux 5.0 removed the
         * legacy one). It still stands on many command lines, and in RHEL's udev rule. */
        for (p = w->cmdline; *p;) {
                size_t n;

                p += strspn(p, " \t\n");
                n = strcspn(p, " \t\n");
                if (n > 9 && strncmp(p, "elevator=", 9) == 0) {
                        _cleanup_(freep) char *value = strndup(p + 9, n - 9);
                        WriterEntry *e;

                        if (!value)
                                return -ENOMEM;
                        e = writers_push(w, WRITER_CMDLINE, ATTR_BIT(ATTR_SCHEDULER), NULL, value,
                                         "/proc/cmdline", 0, NULL, NULL);
                        if (!e)
                                return -ENOMEM;
                        e->w.dead = true;
                        e->scope = SCOPE_ALL;
                }
                if (startswith(p, "--"))
                        break;  /* the rest is init's */
                p += n;
        }
        return 0;
}
/* ---- One disk ---- */

static Applies path_applies(const char *dev, const WriterTarget *t) {
        char cand[6][PATH_MAX_SHORT];
        size_t n = 0;

        snprintf(cand[n++], sizeof(cand[0]), "/sys/block/%s", t->name);
        snprintf(cand[n++], sizeof(cand[0]), "/sys/class/block/%s", t->name);
        if (t->devpath)
                snprintf(cand[n++], sizeof(cand[0]), "/sys%s", t->devpath);
        if (t->devnum) {
                snprintf(cand[n++], sizeof(cand[0]), "/sys/dev/block/%s", t->devnum);
                snprintf(cand[n++], sizeof(cand[0]), "/sys/class/bdi/%s", t->devnum);
                snprintf(cand[n++], sizeof(cand[0]), "/sys/devices/virtual/bdi/%s", t->devnum);
        }
        for (size_t i = 0; i < n; i++)
                if (fnmatch(dev, cand[i], FNM_PATHNAME) == 0)
                        return APPLIES_YES;
        /* The forms whose every candidate we know: it is another disk. */
        if (startswith(dev, "/sys/block/") || startswith(dev, "/sys/class/block/"))
                return APPLIES_NO;
        if (startswith(dev, "/sys/dev/block/") || startswith(dev, "/sys/class/bdi/") ||
            startswith(dev, "/sys/devices/virtual/bdi/"))
                return t->devnum ? APPLIES_NO : APPLIES_MAYBE;
        if (startswith(dev, "/sys/devices/"))
                return t->devpath ? APPLIES_NO : APPLIES_MAYBE;
        return APPLIES_MAYBE;
}

int writers_for_disk(const Writers *w, const WriterTarget *t, OtherWriters *ret) {
        OtherWriters o = {};
        Applies *tuned = NULL, **adds = NULL, **changes = NULL;
        char **values = NULL;
        int r = 0;

        assert(t && t->name);
        *ret = (OtherWriters) {};
        if (!w || w->n_entries == 0)
                return 0;
        values = calloc(w->n_entries, sizeof(char *));
        adds = calloc(w->n_udev_files + 1, sizeof(Applies *));
        changes = calloc(w->n_udev_files + 1, sizeof(Applies *));
        tuned = calloc(w->n_tuned_units + 1, sizeof(Applies));
        if (!values || !adds || !changes || !tuned) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t f = 0; f < w->n_udev_files; f++) {
                r = udev_file_eval(w, f, t, &adds[f], &changes[f], values);
                if (r < 0)
                        goto finish;
        }
        r = tuned_units_eval(w, t, tuned);
        if (r < 0)
                goto finish;
        for (size_t i = 0; i < w->n_entries; i++) {
                const WriterEntry *e = &w->entries[i];
                const char *when = e->w.when;
                Applies a = APPLIES_NO;

                switch (e->scope) {
                case SCOPE_ALL:
                        a = t->has_scheduler < 0 ? APPLIES_MAYBE : tri_of(t->has_scheduler);
                        break;
                case SCOPE_UDEV: {
                        Applies add = adds[e->file][e->line], change = changes[e->file][e->line];

                        a = tri_or(add, change);
                        if (e->other_device)
                                a = tri_and(a, APPLIES_MAYBE);
                        when = add && change ? "add|change" : add ? "add" : "change";
                        break;
                }
                case SCOPE_TUNED_DISK:
                        a = tuned[e->unit];
                        break;
                case SCOPE_PATH:
                        a = path_applies(e->pattern, t);
                        break;
                case SCOPE_NAME:
                        a = e->name ? tri_of(streq(e->name, t->name)) : APPLIES_MAYBE;
                        break;
                }
                a = tri_and(a, e->w.applies);
                if (a == APPLIES_NO)
                        continue;
                r = other_writers_push(&o, &e->w, a);
                if (r < 0)
                        goto finish;
                if (values[i] || when != e->w.when) {
                        Writer *c = &o.writers[o.n - 1];

                        if ((values[i] && free_and_strdup(&c->value, values[i]) < 0) ||
                            free_and_strdup(&c->when, when) < 0) {
                                r = -ENOMEM;
                                goto finish;
                        }
                }
        }
        *ret = o;
        o = (OtherWriters) {};
finish:
        other_writers_done(&o);
        for (size_t i = 0; values && i < w->n_entries; i++)
                free(values[i]);
        free(values);
        for (size_t f = 0; f < w->n_udev_files; f++) {
                free(adds ? adds[f] : NULL);
                free(changes ? changes[f] : NULL);
        }
        free(adds);
        free(changes);
        free(tuned);
        return r;
}

void writers_filter_programs(Writers *w, bool (*exists)(const char *program, void *userdata),
                             void *userdata) {
        size_t kept = 0;

        for (size_t i = 0; i < w->n_entries; i++) {
                WriterEntry *e = &w->entries[i];

                if (e->program && !exists(e->program, userdata)) {
                        writer_entry_done(e);
                        continue;
                }
                w->entries[kept++] = *e;
        }
        w->n_entries = kept;
}

int writers_udev_keys(const Writers *w, char ***ret) {
        char **keys = strv_copy(w && w->udev_keys ? w->udev_keys : (char *[]) { NULL });

        if (!keys)
                return -ENOMEM;
        *ret = keys;
        return 0;
}

void writer_target_of(const Disk *d, char *buf, size_t size, WriterTarget *ret) {
        size_t len = 0;

        assert(d && buf && size > 0 && ret);
        *ret = (WriterTarget) {
                .name = d->name,
                .devpath = d->devpath,
                .devnum = d->devnum,
                .transport = d->transport,
                .rotational = d->load.flags ? d->rotational : -1,
                .removable = d->load.flags ? d->removable : -1,
                .has_scheduler = d->has_scheduler_file,
                .zoned = zoned_to_string(d->zoned),
                .udev = d->udev,
                .udev_complete = d->udev_read,
        };
        /* queue/scheduler as Linux 6.2+ prints it: each name, the current one in brackets. */
        buf[0] = 0;
        for (char **p = d->schedulers; p && *p && len < size; p++) {
                bool cur = streq_ptr(*p, d->scheduler);
                int n = snprintf(buf + len, size - len, "%s%s%s%s", len ? " " : "", cur ? "[" : "", *p,
                                 cur ? "]" : "");

                if (n < 0 || (size_t) n >= size - len) {
                        buf[0] = 0;
                        break;
                }
                len += n;
        }
        ret->scheduler_text = d->has_scheduler_file ? buf : "";
}

int writers_disk_load(const Writers *w, DiskLoad *load, char ***keys) {
        _cleanup_(strv_freep) char **u = NULL;
        bool all = true;

        assert(load && keys);
        if (!w || w->n_entries == 0)
                return 0;
        load->identity = true;
        load->flags = true;
        load->attrs |= ATTR_BIT(ATTR_SCHEDULER);
        if (strv_isempty(load->udev_keys)) {
                load->udev_keys = w->udev_keys;
                return 0;
        }
        for (char **k = w->udev_keys; k && *k; k++)
                all = all && strv_contains(load->udev_keys, *k);
        if (all)
                return 0;
        u = strv_copy(load->udev_keys);
        if (!u)
                return -ENOMEM;
        for (char **k = w->udev_keys; k && *k; k++)
                if (!strv_contains(u, *k) && strv_extend(&u, *k) < 0)
                        return -ENOMEM;
        strv_sort(u);
        strv_free(*keys);
        *keys = TAKE_PTR(u);
        load->udev_keys = *keys;
        return 0;
}
