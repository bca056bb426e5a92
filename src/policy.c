/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <fnmatch.h>

#include "policy.h"
#include "stack.h"
#include "util.h"

static const char *const match_field_names[_MATCH_MAX] = {
        [MATCH_NAME] = "name",           [MATCH_MODEL] = "model",
        [MATCH_VENDOR] = "vendor",       [MATCH_SERIAL] = "serial",
        [MATCH_WWN] = "wwn",             [MATCH_TRANSPORT] = "transport",
        [MATCH_ROTATIONAL] = "rotational", [MATCH_REMOVABLE] = "removable",
        [MATCH_ZONED] = "zoned",         [MATCH_QUEUES] = "queues",
        [MATCH_ROLE] = "role",           [MATCH_DM] = "dm",
        [MATCH_PROPERTY] = "property",
};

DEFINE_STRING_TABLE_LOOKUP(match_field, MatchField, match_field_names, _MATCH_MAX);

bool rule_name_is_valid(const char *name) {
        return string_in_charset(name, CHARSET_ALNUM "-_.:@", RULE_NAME_MAX);
}

/* fnmatch() has no way to report a malformed pattern; reject what it would silently take
 * literally or never match: an unterminated bracket expression or a trailing backslash. */
static bool glob_is_valid(const char *g) {
        if (!*g || strlen(g) > MATCH_PATTERN_LEN_MAX || !string_is_printable(g, MATCH_PATTERN_LEN_MAX))
                return false;
        for (const char *p = g; *p; p++) {
                if (*p == '\\') {
                        if (!p[1])
                                return false;
                        p++;
                } else if (*p == '[') {
                        const char *q = p + 1;

                        if (*q == '!' || *q == '^')
                                q++;
                        if (*q == ']')
                                q++;
                        while (*q && *q != ']')
                                q++;
                        if (!*q)
                                return false;
                        p = q;
                }
        }
        return true;
}

/* FNV-1a: a literal pattern and a name that differ mostly differ in it. */
static uint32_t match_hash(const char *s) {
        uint32_t h = 2166136261U;

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 16777619U;
        return h;
}

static int literal_compare(const void *x, const void *y) {
        const MatchLiteral *a = x, *b = y;

        if (a->hash != b->hash)
                return a->hash < b->hash ? -1 : 1;
        return a->index < b->index ? -1 : a->index > b->index;
}

void match_done(Match *m) {
        m->patterns = strv_free(m->patterns);
        m->literals = mfree(m->literals);
        m->n_literals = 0;
        m->property = mfree(m->property);
}

bool match_property_name_is_valid(const char *name) {
        return string_in_charset(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", MATCH_PROPERTY_NAME_MAX);
}

/* Why one alternative of a match value cannot be taken, NULL when it can. */
static const char *pattern_error(MatchField field, const char *p) {
        switch (field) {
        case MATCH_TRANSPORT:
                return transport_from_string(p) < 0 ? "unknown transport (nvme, ata, scsi, usb, virtio, xen, "
                                                      "mmc, loop, zram, nbd, ublk, rbd, null_blk, pmem, md, dm, other)"
                                                    : NULL;
        case MATCH_ZONED:
                return zoned_from_string(p) < 0 ? "unknown zoned model (none, host-aware, host-managed)" : NULL;
        case MATCH_QUEUES:
                return !streq(p, "single") && !streq(p, "multi") ? "queues must be \"single\" or \"multi\"" : NULL;
        case MATCH_ROLE:
                return stack_role_from_string(p) < 0 ? "unknown role (disk, multipath-map, multipath-path, dm, md, "
                                                       "md-member, nvme-head, nvme-path)"
                                                     : NULL;
        default:
                return !glob_is_valid(p) ? "invalid glob (unterminated [...], trailing \\, control characters "
                                           "or longer than 256)"
                                         : NULL;
        }
}

int match_parse(MatchField field, const char *text, Match *ret, const char **ret_error) {
        _cleanup_(strv_freep) char **patterns = NULL;
        const char *dummy;
        Match m = { .field = field, .boolean = -1 };
        int r;

        assert(text && ret);
        if (!ret_error)
                ret_error = &dummy;
        *ret_error = NULL;

        if (text[0] == '!') {
                m.negate = true;
                text++;
        }
        if (!*text) {
                *ret_error = "empty match value";
                return -EINVAL;
        }

        switch (field) {
        case MATCH_ROTATIONAL:
        case MATCH_REMOVABLE:
                r = parse_boolean(text);
                if (r < 0) {
                        *ret_error = "not a boolean (0, 1, yes, no, true, false, on, off)";
                        return -EINVAL;
                }
                m.boolean = r;
                *ret = m;
                return 0;
        default:
                break;
        }

        /* Alternatives are separated by "|", as in udev rules; globs may contain spaces. */
        r = strv_split(text, "|", &patterns);
        if (r < 0)
                return r;
        if (strv_length(patterns) == 0) {
                *ret_error = "empty match value";
                return -EINVAL;
        }
        if (strv_length(patterns) > MATCH_PATTERNS_MAX) {
                *ret_error = "too many alternatives";
                return -EINVAL;
        }
        for (size_t i = 0; patterns[i]; i++) {
                *ret_error = pattern_error(field, strstrip_inplace(patterns[i]));
                if (*ret_error)
                        return -EINVAL;
                if (!strpbrk(patterns[i], "*?[\\"))
                        m.literal |= UINT64_C(1) << i;
        }
        if (m.literal) {
                m.literals = calloc(strv_length(patterns), sizeof(MatchLiteral));
                if (!m.literals)
                        return -ENOMEM;
                for (size_t i = 0; patterns[i]; i++)
                        if (m.literal & (UINT64_C(1) << i))
                                m.literals[m.n_literals++] = (MatchLiteral) { match_hash(patterns[i]), i };
                qsort(m.literals, m.n_literals, sizeof(MatchLiteral), literal_compare);
        }
        m.only_literals = m.n_literals == strv_length(patterns);
        m.patterns = TAKE_PTR(patterns);
        *ret = m;
        return 0;
}

/* fnmatch() or, for a pattern without wildcards (m->literal, found when the match was
 * parsed), a plain comparison, and that only when the hashes are equal: a rule may list
 * hundreds of names, and a policy as many rules, each tested on every job (bench/storm's
 * config of 1024 disks: 61 rules of 17 names); fnmatch() costs about a hundred times strcmp()
 * even on a literal, strcmp() ten times a comparison of hashes. */
static bool literal_any(const Match *m, const char *s) {
        uint32_t h = match_hash(s);
        size_t lo = 0, hi = m->n_literals;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (m->literals[mid].hash < h)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (; lo < m->n_literals && m->literals[lo].hash == h; lo++)
                if (streq(m->patterns[m->literals[lo].index], s))
                        return true;
        return false;
}

static bool glob_any(const Match *m, const char *a, const char *b) {
        if (m->n_literals > 0 && ((a && literal_any(m, a)) || (b && literal_any(m, b))))
                return true;
        if (m->only_literals)
                return false;
        for (size_t i = 0; m->patterns[i]; i++) {
                const char *p = m->patterns[i];

                if (m->literal & (UINT64_C(1) << i))
                        continue;
                if ((a && fnmatch(p, a, 0) == 0) || (b && fnmatch(p, b, 0) == 0))
                        return true;
        }
        return false;
}

bool match_test(const Match *m, const Disk *d) {
        bool result = false;

        assert(m && d);
        switch (m->field) {
        case MATCH_NAME:
                result = glob_any(m, d->name, NULL);
                break;
        case MATCH_MODEL:
                result = glob_any(m, d->model, d->model_sysfs);
                break;
        case MATCH_VENDOR:
                result = glob_any(m, d->vendor, d->vendor_sysfs);
                break;
        case MATCH_SERIAL:
                result = glob_any(m, d->serial, NULL);
                break;
        case MATCH_WWN:
                result = glob_any(m, d->wwn, NULL);
                break;
        case MATCH_TRANSPORT:
                result = strv_contains(m->patterns, transport_to_string(d->transport));
                break;
        case MATCH_ZONED:
                result = strv_contains(m->patterns, zoned_to_string(d->zoned));
                break;
        case MATCH_QUEUES:
                if (d->nr_hw_queues == 0)
                        return false;   /* bio-based: neither single nor multi */
                result = strv_contains(m->patterns, d->nr_hw_queues == 1 ? "single" : "multi");
                break;
        case MATCH_ROLE:
                result = strv_contains(m->patterns, stack_role_to_string(d->stack.role));
                break;
        case MATCH_DM:
                result = glob_any(m, d->stack.dm_kind, NULL);
                break;
        case MATCH_PROPERTY:
                /* A property udev does not set matches no glob: "!" matches it. */
                result = glob_any(m, udev_props_get(d->udev, m->property), NULL);
                break;
        case MATCH_ROTATIONAL:
                if (d->rotational < 0)
                        return false;
                result = d->rotational == m->boolean;
                break;
        case MATCH_REMOVABLE:
                if (d->removable < 0)
                        return false;
                result = d->removable == m->boolean;
                break;
        default:
                return false;
        }
        return m->negate ? !result : result;
}

bool rule_matches(const Rule *r, const Disk *d) {
        assert(r && d);

        if (r->n_matches == 0)
                return false;   /* the config loader refuses such rules; never match all */
        for (size_t i = 0; i < r->n_matches; i++)
                if (!match_test(&r->matches[i], d))
                        return false;
        return true;
}

Rule *rule_new(const char *name, const char *file, unsigned line) {
        _cleanup_(rule_freep) Rule *r = calloc(1, sizeof(Rule));

        assert(name && file);
        if (!r)
                return NULL;
        r->name = strdup(name);
        r->file = strdup(file);
        if (!r->name || !r->file)
                return NULL;
        r->line = line;
        return TAKE_PTR(r);
}

Rule *rule_free(Rule *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_matches; i++)
                match_done(&r->matches[i]);
        free(r->matches);
        for (size_t i = 0; i < r->n_settings; i++) {
                Setting *s = &r->settings[i];

                free(s->tunable);
                free(s->key);
                free(s->text);
                value_done(&s->value);
        }
        free(r->settings);
        free(r->name);
        free(r->file);
        free(r);
        return NULL;
}

int rule_add_match(Rule *r, const char *key, const char *value, unsigned line,
                   const char **ret_error) {
        const char *f = startswith(key, MATCH_KEY_PREFIX), *property = startswith(key, MATCH_PROPERTY_PREFIX);
        _cleanup_(freep) char *name = NULL;
        Match m, *a;
        int field, k;

        assert(r && key && value);
        if (!f)
                return -ENOENT;
        if (property) {
                /* udev's own names are upper case; anything else is a typo or not udev's. */
                if (!match_property_name_is_valid(property))
                        return -ENOENT;
                field = MATCH_PROPERTY;
                name = strdup(property);
                if (!name)
                        return -ENOMEM;
        } else {
                field = match_field_from_string(f);
                if (field < 0 || field == MATCH_PROPERTY)
                        return -ENOENT;
        }
        for (size_t i = 0; i < r->n_matches; i++)
                if (r->matches[i].field == (MatchField) field && streq_ptr(r->matches[i].property, name))
                        return -EEXIST;
        k = match_parse(field, value, &m, ret_error);
        if (k < 0)
                return k;
        m.line = line;
        m.property = TAKE_PTR(name);
        a = realloc(r->matches, sizeof(Match) * (r->n_matches + 1));
        if (!a) {
                match_done(&m);
                return -ENOMEM;
        }
        r->matches = a;
        r->matches[r->n_matches++] = m;
        return 0;
}

int rule_add_setting(Rule *r, const char *key, const char *value, unsigned line,
                     const char **ret_error) {
        _cleanup_(freep) char *tunable = NULL, *k = NULL, *text = NULL;
        _cleanup_(value_done) Value v = {};
        const AttrInfo *a;
        Setting *s;
        int q;

        assert(r && key && value);
        q = setting_key_parse(key, &a, &tunable);
        if (q < 0)
                return q;
        for (size_t i = 0; i < r->n_settings; i++)
                if (streq(r->settings[i].key, key))
                        return -EEXIST;
        q = value_parse(a, value, &v, ret_error);
        if (q < 0)
                return q;

        k = strdup(key);
        text = value_to_string(a, &v);
        if (!k || !text)
                return -ENOMEM;
        s = realloc(r->settings, sizeof(Setting) * (r->n_settings + 1));
        if (!s)
                return -ENOMEM;
        r->settings = s;
        r->settings[r->n_settings++] = (Setting) {
                .attr = a,
                .tunable = TAKE_PTR(tunable),
                .key = TAKE_PTR(k),
                .value = v,
                .text = TAKE_PTR(text),
                .line = line,
        };
        v = (Value) {};
        return 0;
}

static const Setting *rule_find_setting(const Rule *r, AttrId id) {
        for (size_t i = 0; i < r->n_settings; i++)
                if (r->settings[i].attr->id == id)
                        return &r->settings[i];
        return NULL;
}

int rule_check(const Rule *r, unsigned *ret_line, char **ret_error) {
        const Setting *lo, *hi;
        char *msg;

        assert(r);
        assert(ret_line);
        assert(ret_error);

        lo = rule_find_setting(r, ATTR_IOCOST_MIN);
        hi = rule_find_setting(r, ATTR_IOCOST_MAX);
        if (!lo || !hi || lo->value.num <= hi->value.num)
                return 0;
        msg = strdup_printf("iocost.min = %s (line %u) is above iocost.max = %s (line %u) in [rule %s]: "
                            "the kernel refuses it on every disk",
                            lo->text, lo->line, hi->text, hi->line, r->name);
        if (!msg)
                return -ENOMEM;
        *ret_line = MAX(lo->line, hi->line);
        *ret_error = msg;
        return -EINVAL;
}

Policy *policy_new(void) {
        return calloc(1, sizeof(Policy));
}

Policy *policy_free(Policy *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_rules; i++)
                rule_free(p->rules[i]);
        free(p->rules);
        strv_free(p->files);
        strv_free(p->udev_keys);
        free(p);
        return NULL;
}

int policy_add_rule(Policy *p, Rule *r) {
        Rule **a = realloc(p->rules, sizeof(Rule *) * (p->n_rules + 1));

        assert(p && r);
        if (!a) {
                rule_free(r);
                return -ENOMEM;
        }
        p->rules = a;
        p->rules[p->n_rules++] = r;
        /* The properties its matches name: what a disk must keep of udev's (DiskLoad). */
        for (size_t i = 0; i < r->n_matches; i++) {
                const char *name = r->matches[i].property;

                if (!name || strv_contains(p->udev_keys, name))
                        continue;
                if (strv_extend(&p->udev_keys, name) < 0)
                        return -ENOMEM;
                strv_sort(p->udev_keys);
        }
        return 0;
}

Resolved *resolved_free(Resolved *r) {
        if (!r)
                return NULL;
        free(r->settings);
        free(r->rules);
        free(r->iocost_solution);
        for (size_t i = 0; i < ELEMENTSOF(r->hwdb_rules); i++)
                rule_free(r->hwdb_rules[i]);
        free(r);
        return NULL;
}

const ResolvedSetting *resolved_find(const Resolved *r, AttrId id, const char *tunable) {
        assert(r);

        for (size_t i = 0; i < r->n_settings; i++) {
                const Setting *s = r->settings[i].setting;

                if (s->attr->id == id && streq_ptr(s->tunable, tunable))
                        return &r->settings[i];
        }
        return NULL;
}

static int resolved_setting_cmp(const void *a, const void *b) {
        const Setting *x = ((const ResolvedSetting *) a)->setting;
        const Setting *y = ((const ResolvedSetting *) b)->setting;

        if (x->attr->id != y->attr->id)
                return x->attr->id < y->attr->id ? -1 : 1;
        return strcmp(strempty(x->tunable), strempty(y->tunable));
}

static ResolvedSetting *resolved_slot(Resolved *res, const char *key, bool *ret_new) {
        ResolvedSetting *a;

        for (size_t k = 0; k < res->n_settings; k++)
                if (streq(res->settings[k].setting->key, key)) {
                        *ret_new = false;
                        return &res->settings[k];
                }
        a = realloc(res->settings, sizeof(ResolvedSetting) * (res->n_settings + 1));
        if (!a)
                return NULL;
        res->settings = a;
        *ret_new = true;
        return &res->settings[res->n_settings++];
}

/* "rpct=95.00 rlat=5000 ..." of the hwdb as settings of @r, keys @prefix + token. Like
 * systemd-iocost, "enable=1 ctrl=user" (qos) or "ctrl=user" (model) come first and the
 * hwdb's own tokens after them win. */
static int hwdb_rule_fill(Rule *r, const char *params, const char *prefix, bool qos) {
        _cleanup_(strv_freep) char **words = NULL;
        int k;

        k = strv_split(params, " \t", &words);
        if (k < 0)
                return k;
        if (strv_length(words) > 16)
                return -EINVAL;
        for (char **w = words; *w; w++) {
                _cleanup_(freep) char *key = NULL;
                char *eq = strchr(*w, '=');

                if (!eq)
                        return -EINVAL;
                *eq = 0;
                if (!qos && streq(*w, "model")) {
                        if (!streq(eq + 1, "linear"))
                                return -EINVAL;
                        continue;
                }
                key = strdup_printf("%s%s", prefix, *w);
                if (!key)
                        return -ENOMEM;
                k = rule_add_setting(r, key, eq + 1, r->line, NULL);
                if (k == -EEXIST)
                        continue;
                if (k < 0)
                        return k == -ENOMEM ? k : -EINVAL;
                if (attr_from_key(key)->file != (qos ? ATTR_FILE_IOCOST_QOS : ATTR_FILE_IOCOST_MODEL))
                        return -EINVAL;
        }
        if (qos) {
                k = rule_add_setting(r, "iocost.enable", "1", r->line, NULL);
                if (k < 0 && k != -EEXIST)
                        return k;
        }
        k = rule_add_setting(r, qos ? "iocost.ctrl" : "iocost.model.ctrl", "user", r->line, NULL);
        return k == -EEXIST ? 0 : k;
}

static int resolve_solution(Resolved *res, const Disk *d) {
        const ResolvedSetting *sol = resolved_find(res, ATTR_IOCOST_SOLUTION, NULL);
        const char *qos, *model;
        char *name = NULL;
        int k;

        if (!sol)
                return 0;
        k = iocost_solution_pick(d->udev, sol->setting->value.list[0], &name, &qos, &model);
        if (k == -ENOMEM)
                return k;
        if (k < 0) {
                res->iocost_solution_err = k;
                return 0;
        }
        res->iocost_solution = name;

        for (size_t i = 0; i < 2; i++) {
                _cleanup_(freep) char *file = NULL, *rname = NULL;
                bool qos_part = i == 0;
                const char *prop = qos_part ? "IOCOST_QOS_" : "IOCOST_MODEL_";

                rname = strdup_printf("hwdb:%s", name);
                file = strdup_printf("udev hwdb %s%s, via %s", prop, name, sol->rule->file);
                if (!rname || !file)
                        return -ENOMEM;
                res->hwdb_rules[i] = rule_new(rname, file, sol->setting->line);
                if (!res->hwdb_rules[i])
                        return -ENOMEM;
                k = hwdb_rule_fill(res->hwdb_rules[i], qos_part ? qos : model,
                                   qos_part ? "iocost." : "iocost.model.", qos_part);
                if (k == -ENOMEM)
                        return k;
                if (k < 0) {
                        /* A hwdb value iosched would not take from a config file: none of it. */
                        for (size_t j = 0; j < 2; j++)
                                res->hwdb_rules[j] = rule_free(res->hwdb_rules[j]);
                        res->iocost_solution = mfree(res->iocost_solution);
                        res->iocost_solution_err = -EINVAL;
                        return 0;
                }
        }

        for (size_t i = 0; i < 2; i++) {
                const Rule *h = res->hwdb_rules[i];

                for (size_t j = 0; j < h->n_settings; j++) {
                        ResolvedSetting *slot;
                        bool is_new;

                        slot = resolved_slot(res, h->settings[j].key, &is_new);
                        if (!slot)
                                return -ENOMEM;
                        if (is_new)
                                *slot = (ResolvedSetting) { .setting = &h->settings[j], .rule = h };
                }
        }
        return 0;
}

int policy_resolve(const Policy *p, const Disk *d, Resolved **ret) {
        _cleanup_(resolved_freep) Resolved *res = NULL;

        assert(p && d && ret);
        res = calloc(1, sizeof(Resolved));
        if (!res)
                return -ENOMEM;

        for (size_t i = 0; i < p->n_rules; i++) {
                const Rule *rule = p->rules[i];
                const Rule **rs;

                if (!rule_matches(rule, d))
                        continue;

                rs = realloc(res->rules, sizeof(Rule *) * (res->n_rules + 1));
                if (!rs)
                        return -ENOMEM;
                res->rules = rs;
                res->rules[res->n_rules++] = rule;

                for (size_t j = 0; j < rule->n_settings; j++) {
                        const Setting *s = &rule->settings[j];
                        ResolvedSetting *slot;
                        bool is_new;

                        slot = resolved_slot(res, s->key, &is_new);
                        if (!slot)
                                return -ENOMEM;
                        /* A later rule overrides an earlier one, key by key. */
                        *slot = (ResolvedSetting) { .setting = s, .rule = rule };
                }
        }

        if (resolve_solution(res, d) < 0)
                return -ENOMEM;

        if (res->n_settings > 1)
                qsort(res->settings, res->n_settings, sizeof(ResolvedSetting), resolved_setting_cmp);
        *ret = TAKE_PTR(res);
        return 0;
}

void policy_disk_load(const Policy *p, DiskLoad *ret) {
        DiskLoad l = {};

        assert(p && ret);
        for (size_t i = 0; i < p->n_rules; i++) {
                const Rule *r = p->rules[i];

                for (size_t j = 0; j < r->n_matches; j++)
                        switch (r->matches[j].field) {
                        case MATCH_MODEL:
                        case MATCH_VENDOR:
                        case MATCH_SERIAL:
                        case MATCH_WWN:
                        case MATCH_TRANSPORT:   /* SCSI disks: udev's ID_BUS tells the bus */
                                l.identity = true;
                                break;
                        case MATCH_QUEUES:
                                l.queues = true;
                                break;
                        case MATCH_ROTATIONAL:
                        case MATCH_REMOVABLE:
                                l.flags = true;
                                break;
                        default:
                                break;
                        }
                for (size_t j = 0; j < r->n_settings; j++)
                        l.attrs |= ATTR_BIT(r->settings[j].attr->id);
        }
        /* wbt_lat_usec's kernel default is rotational's (wbt_default_usec()). */
        if (l.attrs & ATTR_BIT(ATTR_WBT_LAT_USEC))
                l.flags = true;
        /* A solution sets keys no rule names, from udev's properties. */
        if (l.attrs & ATTR_BIT(ATTR_IOCOST_SOLUTION)) {
                l.attrs |= ATTR_IOCOST_BITS_MASK;
                l.identity = true;
        }
        l.udev_keys = p->udev_keys;
        *ret = l;
}

static bool rule_same_place(const Rule *a, const Rule *b) {
        return a == b || (streq(a->name, b->name) && streq(a->file, b->file) && a->line == b->line);
}

bool resolved_equal(const Resolved *a, const Resolved *b) {
        size_t na = a ? a->n_settings : 0, nb = b ? b->n_settings : 0;
        size_t ra = a ? a->n_rules : 0, rb = b ? b->n_rules : 0;

        if (na != nb || ra != rb)
                return false;
        for (size_t i = 0; i < na; i++) {
                const ResolvedSetting *x = &a->settings[i], *y = &b->settings[i];

                if (x->setting != y->setting &&
                    (!streq(x->setting->key, y->setting->key) ||
                     !streq(x->setting->text, y->setting->text) || x->setting->line != y->setting->line))
                        return false;
                if (!rule_same_place(x->rule, y->rule))
                        return false;
        }
        for (size_t i = 0; i < ra; i++)
                if (!rule_same_place(a->rules[i], b->rules[i]))
                        return false;
        return true;
}

bool policy_needs_udev(const Policy *p) {
        assert(p);

        for (size_t i = 0; i < p->n_rules; i++)
                for (size_t j = 0; j < p->rules[i]->n_matches; j++)
                        switch (p->rules[i]->matches[j].field) {
                        case MATCH_MODEL:
                        case MATCH_VENDOR:
                        case MATCH_SERIAL:
                        case MATCH_WWN:
                        case MATCH_TRANSPORT:
                        case MATCH_PROPERTY:
                                return true;
                        case MATCH_ROLE:
                                if (strv_contains(p->rules[i]->matches[j].patterns,
                                                  stack_role_to_string(STACK_ROLE_MULTIPATH_PATH)))
                                        return true;
                                break;
                        default:
                                break;
                        }
        return false;
}
