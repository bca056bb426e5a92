/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TuneD as another writer: a profile chain as TuneD's loader and merger make it, and which of
 * its [disk] units takes a disk.
 */
#include <fnmatch.h>
#include <stdio.h>

#include "util.h"
#include "writers-internal.h"
#include "writers-tuned.h"

#define TUNED_KEYS_MAX 4096

typedef struct TunedKey {
        char *key, *value;
        unsigned line;
} TunedKey;

typedef struct TunedSection {
        char *name;
        TunedKey *keys;
        size_t n_keys;
} TunedSection;

struct TunedProfile {
        char *name, *filename;
        TunedSection *sections;
        size_t n_sections;
        unsigned invalid_line;  /* a line ConfigParser refuses: TuneD refuses the profile */
};

TunedProfile *tuned_profile_free(TunedProfile *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_sections; i++) {
                for (size_t j = 0; j < p->sections[i].n_keys; j++) {
                        free(p->sections[i].keys[j].key);
                        free(p->sections[i].keys[j].value);
                }
                free(p->sections[i].keys);
                free(p->sections[i].name);
        }
        free(p->sections);
        free(p->name);
        free(p->filename);
        free(p);
        return NULL;
}

static TunedSection *tuned_section(TunedProfile *p, const char *name, size_t len) {
        TunedSection *n;

        /* ConfigParser with strict=False: a repeated section continues the first one. */
        for (size_t i = 0; i < p->n_sections; i++)
                if (strlen(p->sections[i].name) == len && strncmp(p->sections[i].name, name, len) == 0)
                        return &p->sections[i];
        n = array_append(&p->sections, p->n_sections, sizeof(TunedSection));
        if (!n)
                return NULL;
        *n = (TunedSection) { .name = strndup(name, len) };
        if (!n->name)
                return NULL;
        p->n_sections++;
        return n;
}

static const TunedKey *tuned_get(const TunedSection *s, const char *key) {
        for (size_t i = 0; s && i < s->n_keys; i++)
                if (streq(s->keys[i].key, key))
                        return &s->keys[i];
        return NULL;
}

/* Set a key: a repeated key replaces the value and keeps its place, as a dict does.
 * Return: the key, NULL on out of memory. */
static TunedKey *tuned_set(TunedSection *s, const char *key, size_t klen, const char *value,
                           size_t vlen, unsigned line) {
        _cleanup_(freep) char *k = strndup(key, klen), *v = strndup(value, vlen);
        TunedKey *t;

        if (!k || !v)
                return NULL;
        t = (TunedKey *) tuned_get(s, k);
        if (!t) {
                t = array_append(&s->keys, s->n_keys, sizeof(TunedKey));
                if (!t)
                        return NULL;
                *t = (TunedKey) { .key = TAKE_PTR(k) };
                s->n_keys++;
        }
        free(t->value);
        t->value = TAKE_PTR(v);
        t->line = line;
        return t;
}

int tuned_profile_parse(const char *name, const char *filename, const char *text, size_t size,
                        TunedProfile **ret) {
        _cleanup_(tuned_profile_freep) TunedProfile *p = NULL;
        TunedSection *sec = NULL;
        TunedKey *last = NULL;
        size_t pos = 0;
        unsigned lineno = 0;

        p = calloc(1, sizeof(TunedProfile));
        if (!p)
                return -ENOMEM;
        p->name = strdup(name);
        p->filename = strdup(filename);
        if (!p->name || !p->filename)
                return -ENOMEM;
        while (pos < size) {
                const char *start = text + pos, *nl = memchr(start, '\n', size - pos), *eq;
                size_t n = nl ? (size_t) (nl - start) : size - pos, lead;

                pos += n + (nl ? 1 : 0);
                lineno++;
                if (memchr(start, 0, n)) {
                        p->invalid_line = p->invalid_line ?: lineno;
                        continue;
                }
                while (n > 0 && strchr(" \t\r", start[n - 1]))
                        n--;
                lead = 0;
                while (lead < n && (start[lead] == ' ' || start[lead] == '\t'))
                        lead++;
                if (lead == n || start[lead] == '#' || start[lead] == ';') {
                        last = lead == n ? NULL : last;
                        continue;
                }
                /* An indented line continues the value before it. */
                if (lead > 0 && last) {
                        size_t old = strlen(last->value);
                        char *v = realloc(last->value, old + 1 + (n - lead) + 1);

                        if (!v)
                                return -ENOMEM;
                        v[old] = '\n';
                        memcpy(v + old + 1, start + lead, n - lead);
                        v[old + 1 + n - lead] = 0;
                        last->value = v;
                        continue;
                }
                start += lead;
                n -= lead;
                if (start[0] == '[') {
                        const char *close = NULL;

                        for (const char *q = start; q < start + n; q++)
                                if (*q == ']')
                                        close = q;
                        if (!close || close == start + 1) {
                                p->invalid_line = p->invalid_line ?: lineno;
                                continue;
                        }
                        sec = tuned_section(p, start + 1, close - start - 1);
                        if (!sec)
                                return -ENOMEM;
                        last = NULL;
                        continue;
                }
                eq = memchr(start, '=', n);
                if (!sec || !eq) {
                        /* Before any section (MissingSectionHeaderError) or no "=". */
                        p->invalid_line = p->invalid_line ?: lineno;
                        continue;
                }
                {
                        const char *k = start, *ke = eq, *v = eq + 1, *ve = start + n;

                        while (ke > k && strchr(" \t", ke[-1]))
                                ke--;
                        if (ke == k) {
                                p->invalid_line = p->invalid_line ?: lineno;
                                continue;
                        }
                        while (v < ve && strchr(" \t", *v))
                                v++;
                        /* An inline comment is "#" after a blank. */
                        for (const char *q = v; q < ve; q++)
                                if (*q == '#' && q > v && strchr(" \t", q[-1])) {
                                        ve = q;
                                        break;
                                }
                        while (ve > v && strchr(" \t", ve[-1]))
                                ve--;
                        if (sec->n_keys >= TUNED_KEYS_MAX) {
                                p->invalid_line = p->invalid_line ?: lineno;    /* not TuneD's limit: ours */
                                continue;
                        }
                        last = tuned_set(sec, k, ke - k, v, ve - v, lineno);
                        if (!last)
                                return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(p);
        return 0;
}

int tuned_profile_includes(const TunedProfile *p, char ***ret) {
        const TunedKey *inc = NULL;

        for (size_t i = 0; i < p->n_sections; i++)
                if (streq(p->sections[i].name, "main"))
                        inc = tuned_get(&p->sections[i], "include");
        /* TuneD splits it on "," and ";" with blanks around. */
        return strv_split(inc ? inc->value : "", ",; \t", ret);
}

/* A key of the merged profile, with where it was set. */
typedef struct MergedKey {
        const TunedKey *k;
        const TunedProfile *p;
} MergedKey;

typedef struct MergedUnit {
        const char *name;
        MergedKey *keys;
        size_t n_keys;
} MergedUnit;

static const MergedKey *merged_get(const MergedUnit *u, const char *key) {
        for (size_t i = 0; u && i < u->n_keys; i++)
                if (streq(u->keys[i].k->key, key))
                        return &u->keys[i];
        return NULL;
}

/* TuneD's booleans: True, true or 1; anything else is false. */
static bool tuned_value_true(const char *v) {
        return streq(v, "True") || streq(v, "true") || streq(v, "1");
}

static bool tuned_true(const MergedKey *k, bool def) {
        return k ? tuned_value_true(k->k->value) : def;
}

/* ${name} from [variables]; ${f:...} (functions) and unknown names stay as written. */
static char *tuned_expand(const MergedUnit *vars, const char *value) {
        _cleanup_(freep) char *out = strdup(value);

        for (unsigned round = 0; out && round < 8; round++) {
                char *open = strstr(out, "${"), *close, *n;
                const MergedKey *v = NULL;
                size_t off = 0;

                while (open) {
                        close = strchr(open, '}');
                        if (!close)
                                break;
                        *close = 0;
                        v = strchr(open + 2, ':') ? NULL : merged_get(vars, open + 2);
                        *close = '}';
                        if (v)
                                break;
                        off = close + 1 - out;
                        open = strstr(out + off, "${");
                }
                if (!open || !v)
                        break;
                *open = 0;
                n = strdup_printf("%s%s%s", out, v->k->value, close + 1);
                free(out);
                out = n;
        }
        return TAKE_PTR(out);
}

static void merged_units_free(MergedUnit *u, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(u[i].keys);
        free(u);
}

/* TuneD's merger: a unit of a later profile updates the one of that name (replace=1 takes
 * its place); [main] is not a unit. */
static int tuned_merge(TunedProfile * const *chain, size_t n, MergedUnit **ret, size_t *ret_n) {
        MergedUnit *u = NULL;
        size_t nu = 0;

        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < chain[i]->n_sections; j++) {
                        const TunedSection *s = &chain[i]->sections[j];
                        const TunedKey *replace = tuned_get(s, "replace");
                        MergedUnit *m = NULL;

                        if (streq(s->name, "main"))
                                continue;
                        for (size_t k = 0; k < nu && !m; k++)
                                if (streq(u[k].name, s->name))
                                        m = &u[k];
                        if (!m) {
                                m = array_append(&u, nu, sizeof(MergedUnit));
                                if (!m)
                                        goto oom;
                                *m = (MergedUnit) { .name = s->name };
                                nu++;
                        } else if (replace && tuned_value_true(replace->value))
                                m->n_keys = 0;
                        for (size_t k = 0; k < s->n_keys; k++) {
                                MergedKey *mk = (MergedKey *) merged_get(m, s->keys[k].key);

                                if (!mk) {
                                        mk = array_append(&m->keys, m->n_keys, sizeof(MergedKey));
                                        if (!mk)
                                                goto oom;
                                        m->n_keys++;
                                }
                                *mk = (MergedKey) { .k = &s->keys[k], .p = chain[i] };
                        }
                }
        *ret = u;
        *ret_n = nu;
        return 0;
oom:
        merged_units_free(u, nu);
        return -ENOMEM;
}

/* Unit options that are no sysfs path, in [sysfs] too. */
static bool tuned_unit_option(const char *key) {
        static const char *const opts[] = {
                "type", "enabled", "devices", "devices_udev_regex", "priority", "replace", "drop",
                "script_pre", "script_post", "uname_regex", "cpuinfo_regex",
        };

        for (size_t i = 0; i < ELEMENTSOF(opts); i++)
                if (streq(key, opts[i]))
                        return true;
        return false;
}

static int tuned_add_key(Writers *w, const MergedUnit *vars, const MergedKey *mk, AttrId id,
                         const char *tunable, const char *when, Scope scope) {
        _cleanup_(freep) char *value = NULL, *source = NULL;
        WriterEntry *e;

        value = tuned_expand(vars, mk->k->value);
        source = strdup_printf("TuneD profile %s", mk->p->name);
        if (!value || !source)
                return -ENOMEM;
        e = writers_push(w, WRITER_TUNED, ATTR_BIT(id), tunable, value, mk->p->filename, mk->k->line,
                         source, when);
        if (!e)
                return w->n_entries >= WRITERS_MAX ? 0 : -ENOMEM;
        e->scope = scope;
        return 1;
}

static int unit_priority(const MergedUnit *u) {
        const MergedKey *k = merged_get(u, "priority");
        int64_t v;

        return k && safe_atoi64(k->k->value, INT32_MIN, INT32_MAX, &v) == 0 ? (int) v : 0;
}

int writers_add_tuned(Writers *w, TunedProfile * const *chain, size_t n) {
        MergedUnit *units = NULL, *vars = NULL;
        size_t nu = 0, *order = NULL;
        int r;

        for (size_t i = 0; i < n; i++)
                if (chain[i]->invalid_line)
                        return -EBADMSG;
        r = tuned_merge(chain, n, &units, &nu);
        if (r < 0)
                return r;
        for (size_t i = 0; i < nu; i++)
                if (streq(units[i].name, "variables"))
                        vars = &units[i];
        /* Instances take devices in the order of their priority (a stable sort). */
        order = calloc(nu + 1, sizeof(size_t));
        if (!order) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < nu; i++) {
                size_t j = i;

                while (j > 0 && unit_priority(&units[order[j - 1]]) > unit_priority(&units[i])) {
                        order[j] = order[j - 1];
                        j--;
                }
                order[j] = i;
        }
        for (size_t oi = 0; oi < nu; oi++) {
                const MergedUnit *u = &units[order[oi]];
                const MergedKey *type = merged_get(u, "type");
                const char *plugin = type ? type->k->value : u->name;

                if (u == vars || !tuned_true(merged_get(u, "enabled"), true))
                        continue;
                if (streq(plugin, "disk")) {
                        const MergedKey *devices = merged_get(u, "devices");
                        static const struct {
                                const char *option;
                                AttrId id;
                        } opts[] = { { "elevator", ATTR_SCHEDULER }, { "readahead", ATTR_READ_AHEAD_KB } };
                        TunedUnit *nt;

                        nt = array_append(&w->tuned_units, w->n_tuned_units, sizeof(TunedUnit));
                        if (!nt) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        *nt = (TunedUnit) {
                                .devices = tuned_expand(vars, devices ? devices->k->value : "*"),
                                .udev_regex = merged_get(u, "devices_udev_regex") != NULL,
                        };
                        if (!nt->devices) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        w->n_tuned_units++;
                        for (size_t k = 0; k < ELEMENTSOF(opts); k++) {
                                const MergedKey *mk = merged_get(u, opts[k].option);

                                if (!mk)
                                        continue;
                                r = tuned_add_key(w, vars, mk, opts[k].id, NULL, "profile apply, add",
                                                  SCOPE_TUNED_DISK);
                                if (r < 0)
                                        goto finish;
                                if (r > 0)
                                        w->entries[w->n_entries - 1].unit = w->n_tuned_units - 1;
                        }
                } else if (streq(plugin, "sysfs"))
                        for (size_t k = 0; k < u->n_keys; k++) {
                                const MergedKey *mk = &u->keys[k];
                                _cleanup_(freep) char *path = NULL, *dev = NULL, *tunable = NULL;
                                int id;

                                if (tuned_unit_option(mk->k->key))
                                        continue;
                                path = tuned_expand(vars, mk->k->key);
                                if (!path) {
                                        r = -ENOMEM;
                                        goto finish;
                                }
                                id = split_key_path("", path, SIZE_MAX, &dev, &tunable);
                                if (id == -ENOENT)
                                        continue;
                                if (id < 0) {
                                        r = id;
                                        goto finish;
                                }
                                r = tuned_add_key(w, vars, mk, id, tunable, "profile apply", SCOPE_PATH);
                                if (r < 0)
                                        goto finish;
                                if (r > 0)
                                        w->entries[w->n_entries - 1].pattern = TAKE_PTR(dev);
                        }
        }
        r = 0;
finish:
        free(order);
        merged_units_free(units, nu);
        return r;
}

/* TuneD's disk plugin takes a disk with removable 0 whose parent device is SCSI (sd*: ATA and
 * USB disks too), virtio, Xen or NVMe (MMC since 2.26), or that has no parent (the virtual
 * ones: loop, dm, md, ...). */
static Applies tuned_supported(const WriterTarget *t) {
        Applies a;

        switch (t->transport) {
        case TRANSPORT_NVME:
        case TRANSPORT_ATA:
        case TRANSPORT_SCSI:
        case TRANSPORT_USB:
        case TRANSPORT_VIRTIO:
        case TRANSPORT_XEN:
        case TRANSPORT_LOOP:
        case TRANSPORT_ZRAM:
        case TRANSPORT_NBD:
        case TRANSPORT_UBLK:
        case TRANSPORT_RBD:
        case TRANSPORT_NULL_BLK:
        case TRANSPORT_MD:
        case TRANSPORT_DM:
                a = APPLIES_YES;
                break;
        default:
                a = t->devpath && startswith(t->devpath, "/devices/virtual/") ? APPLIES_YES : APPLIES_MAYBE;
        }
        return tri_and(a, t->removable < 0 ? APPLIES_MAYBE : tri_of(t->removable == 0));
}

/* TuneD's DeviceMatcher: globs separated by blanks or commas, "!" negates; no positive one
 * means "*". */
static int tuned_devices_match(const char *devices, const char *name, Applies *ret) {
        _cleanup_(strv_freep) char **rules = NULL;
        bool positive = false, matched = false;
        int r;

        r = strv_split(devices, " \t\n,", &rules);
        if (r < 0)
                return r;
        for (char **p = rules; *p; p++)
                if (**p != '!') {
                        positive = true;
                        matched = matched || fnmatch(*p, name, 0) == 0;
                }
        if (!positive)
                matched = true;
        for (char **p = rules; *p; p++)
                if (**p == '!' && fnmatch(*p + 1, name, 0) == 0)
                        matched = false;
        *ret = tri_of(matched);
        return 0;
}

int tuned_units_eval(const Writers *w, const WriterTarget *t, Applies *ret) {
        Applies supported = tuned_supported(t), taken = APPLIES_NO;

        for (size_t u = 0; u < w->n_tuned_units; u++) {
                Applies m;
                int r;

                r = tuned_devices_match(w->tuned_units[u].devices, t->name, &m);
                if (r < 0)
                        return r;
                /* Whether TuneD's disk plugin takes the disk at all is the same for every
                 * unit: it stays out of "taken", which tells units apart. */
                if (w->tuned_units[u].udev_regex)
                        m = tri_and(m, APPLIES_MAYBE);
                ret[u] = tri_and(supported, tri_and(m, tri_not(taken)));
                taken = tri_or(taken, m);
        }
        return 0;
}
