/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <stdio.h>

#include "iocost.h"
#include "util.h"

void iocost_state_done(IocostState *st) {
        free(st->raw);
        free(st->num);
        *st = (IocostState) {};
}

static bool devnum_is_valid(const char *s) {
        size_t maj = 0, min = 0;
        const char *p = s;

        for (; *p >= '0' && *p <= '9'; p++)
                maj++;
        if (*p != ':')
                return false;
        for (p++; *p >= '0' && *p <= '9'; p++)
                min++;
        return !*p && maj > 0 && maj <= 10 && min > 0 && min <= 10;
}

static int parse_field(const AttrInfo *a, const char *v, int64_t *ret) {
        int64_t n;

        switch (a->kind) {
        case ATTR_KIND_BOOL:    /* enable=%d */
                if (safe_atoi64(v, 0, 1, &n) < 0)
                        return -EBADMSG;
                break;
        case ATTR_KIND_CTRL:
                if (!streq(v, "auto") && !streq(v, "user"))
                        return -EBADMSG;
                n = streq(v, "user");
                break;
        case ATTR_KIND_PERCENT: /* %u.%02u: the kernel keeps rpct/wpct in 0-100, min/max in 1-10000 */
                if (percent_parse(v, &n) < 0 || n < a->min || n > a->max)
                        return -EBADMSG;
                break;
        default:                /* %u (u32) or %llu (u64, kept below 2^63) */
                if (safe_atoi64(v, 0, a->max, &n) < 0)
                        return -EBADMSG;
        }
        *ret = n;
        return 0;
}

char *iocost_format(AttrFile file, const int64_t num[_ATTR_MAX]) {
        _cleanup_(freep) char *out = NULL;

        assert(num);
        /* ioc_qos_prfill() and ioc_cost_model_prfill(), without the device */
        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                const AttrInfo *a = attr_get(id);
                char buf[32], *n;

                if (a->file != file)
                        continue;
                if (value_sysfs_string(a, num[id], buf, sizeof(buf)) < 0)
                        return NULL;
                n = strdup_printf("%s%s%s=%s%s", strempty(out), out ? " " : "", a->token, buf,
                                  a->id == ATTR_IOCOST_MODEL_CTRL ? " model=linear" : "");
                if (!n)
                        return NULL;
                free(out);
                out = n;
        }
        return TAKE_PTR(out);
}

int iocost_parse_line(AttrFile file, const char *line, char **ret_devnum, IocostState *ret) {
        _cleanup_(strv_freep) char **words = NULL;
        _cleanup_(freep) char *raw = NULL;
        _cleanup_(freep) int64_t *num = NULL;
        uint32_t seen = 0, want = 0;
        bool model_seen = false;
        int r;

        assert(line && ret);
        if (file != ATTR_FILE_IOCOST_QOS && file != ATTR_FILE_IOCOST_MODEL)
                return -EINVAL;
        r = strv_split(line, " \t\n", &words);
        if (r < 0)
                return r;
        if (!words[0] || !devnum_is_valid(words[0]) || strv_length(words) > 32)
                return -EBADMSG;
        num = calloc(_ATTR_MAX, sizeof(int64_t));
        if (!num)
                return -ENOMEM;

        for (char **w = words + 1; *w; w++) {
                char *eq = strchr(*w, '=');
                const AttrInfo *a;

                if (!eq)
                        return -EBADMSG;
                *eq = 0;
                if (file == ATTR_FILE_IOCOST_MODEL && streq(*w, "model")) {
                        if (model_seen || !streq(eq + 1, "linear"))
                                return -EBADMSG;
                        model_seen = true;
                        continue;
                }
                a = attr_from_token(file, *w);
                if (!a)
                        continue;       /* a field of a later kernel */
                if (seen & ATTR_BIT(a->id))
                        return -EBADMSG;
                seen |= ATTR_BIT(a->id);
                r = parse_field(a, eq + 1, &num[a->id]);
                if (r < 0)
                        return r;
        }

        for (AttrId id = 0; id < _ATTR_MAX; id++)
                if (attr_get(id)->file == file)
                        want |= ATTR_BIT(id);
        if (seen != want || (file == ATTR_FILE_IOCOST_MODEL && !model_seen))
                return -EBADMSG;
        /* The kernel refuses every write that would leave min above max. */
        if (file == ATTR_FILE_IOCOST_QOS && num[ATTR_IOCOST_MIN] > num[ATTR_IOCOST_MAX])
                return -EBADMSG;

        /* The kernel's spelling of what was parsed (not the raw text: it goes on the bus). */
        raw = iocost_format(file, num);
        if (!raw)
                return -ENOMEM;
        if (ret_devnum) {
                char *dn = strdup(words[0]);

                if (!dn)
                        return -ENOMEM;
                *ret_devnum = dn;
        }
        *ret = (IocostState) { .raw = TAKE_PTR(raw), .num = TAKE_PTR(num) };
        return 0;
}

int iocost_find(AttrFile file, const char *text, const char *devnum, IocostState *ret) {
        size_t l = strlen(devnum);

        assert(devnum && ret);
        iocost_state_done(ret);
        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t) (nl - p) : strlen(p);

                if (n > l && strncmp(p, devnum, l) == 0 && (p[l] == ' ' || p[l] == '\t')) {
                        _cleanup_(freep) char *line = strndup(p, n);
                        int r;

                        if (!line)
                                return -ENOMEM;
                        r = iocost_parse_line(file, line, NULL, ret);
                        if (r == -ENOMEM)
                                return r;
                        return (ret->err = r);
                }
                p = nl ? nl + 1 : NULL;
        }
        return (ret->err = -ENODATA);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape_octal(const char *s) {
        char *out = malloc(strlen(s) + 1), *o = out;

        if (!out)
                return NULL;
        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        char c = (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));

                        if (c == 0)
                                c = '?';
                        *o++ = c;
                        s += 3;
                } else
                        *o++ = *s;
        }
        *o = 0;
        return out;
}

int mountinfo_cgroup2_mounts(const char *text, char ***ret) {
        _cleanup_(strv_freep) char **lines = NULL, **mounts = NULL;
        int r;

        assert(text && ret);
        r = strv_split(text, "\n", &lines);
        if (r < 0)
                return r;
        mounts = calloc(1, sizeof(char *));
        if (!mounts)
                return -ENOMEM;
        /* "36 25 0:31 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate":
         * the mount point is field 5, the file system type follows the "-" separator. */
        for (char **l = lines; *l; l++) {
                _cleanup_(strv_freep) char **f = NULL;
                char **sep;

                /* Most lines are not cgroup2's: not split into words (the daemon reads this
                 * once per worker thread). */
                if (!strstr(*l, " - cgroup2 "))
                        continue;
                r = strv_split(*l, " ", &f);
                if (r < 0)
                        return r;
                if (strv_length(f) < 7)
                        continue;
                for (sep = f + 6; *sep && !streq(*sep, "-"); sep++)
                        ;
                if (!*sep || !sep[1] || !streq(sep[1], "cgroup2") || !streq(f[3], "/"))
                        continue;       /* only the root of a hierarchy has io.cost.* */
                if (f[4][0] != '/' || strlen(f[4]) > 1024)
                        continue;
                r = strv_push(&mounts, unescape_octal(f[4]));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(mounts);
        return 0;
}

bool cgroup_controllers_have_io(const char *text) {
        _cleanup_(strv_freep) char **words = NULL;

        assert(text);
        if (strv_split(text, " \t\n", &words) < 0)
                return false;
        return strv_contains(words, "io");
}

bool kernel_has_rqos_static_key(const char *release) {
        unsigned major, minor, patch;

        /* "6.16-rc3", "6.16+" and "6.16" count as 6.16.0. */
        return kernel_release_parse(release, &major, &minor, &patch) >= 0 &&
                major == 6 && minor == 16 && patch <= 3;
}

static char *solution_key(const char *prefix, const char *name) {
        char *k = strdup_printf("%s%s", prefix, name);

        if (!k)
                return NULL;
        for (char *p = k + strlen(prefix); *p; p++) {
                if (*p >= 'a' && *p <= 'z')
                        *p = (char) (*p - 'a' + 'A');
                else if (*p == '-')
                        *p = '_';
        }
        return k;
}

int iocost_solution_pick(const UdevProps *props, const char *want, char **ret_name,
                         const char **ret_qos, const char **ret_model) {
        _cleanup_(freep) char *name = NULL, *qk = NULL, *mk = NULL;
        const char *qos, *model;

        assert(want && ret_name && ret_qos && ret_model);
        if (streq(want, "hwdb")) {
                _cleanup_(strv_freep) char **list = NULL;
                const char *v = props ? props->iocost_solutions : NULL;
                int r;

                if (!v)
                        return -ENOENT;
                r = strv_split(v, " \t\n", &list);
                if (r < 0)
                        return r;
                if (strv_isempty(list))
                        return -ENOENT;
                name = strdup(strv_contains(list, IOCOST_DEFAULT_SOLUTION) ? IOCOST_DEFAULT_SOLUTION
                                                                            : list[0]);
        } else
                name = strdup(want);
        if (!name)
                return -ENOMEM;

        qk = solution_key("IOCOST_QOS_", name);
        mk = solution_key("IOCOST_MODEL_", name);
        if (!qk || !mk)
                return -ENOMEM;
        qos = udev_props_get(props, qk);
        model = udev_props_get(props, mk);
        if (!qos || !model)
                return -ENXIO;
        *ret_name = TAKE_PTR(name);
        *ret_qos = qos;
        *ret_model = model;
        return 0;
}
