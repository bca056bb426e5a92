/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Values as people write them (config files, D-Bus settings) and numbers as sysfs prints them.
 * Input: a key on the first line, the value after it.
 *
 * Invariants: value_parse() accepts only values in the attribute's range (or wbt's "default"
 * and "off"), with a reason on every refusal; the canonical spelling parses back to the same
 * value; the string written to sysfs reads back as the same number; a number sysfs prints is
 * parsed exactly or refused.
 */
#include <inttypes.h>

#include "fuzz.h"

static void check_value(const AttrInfo *a, const char *text) {
        _cleanup_(value_done) Value v = {}, again = {};
        _cleanup_(freep) char *canonical = NULL;
        const char *error = NULL;
        char buf[32];
        int64_t n;
        int r;

        r = value_parse(a, text, &v, &error);
        fuzz_check(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0) {
                fuzz_check(error);
                fuzz_check(!v.list && v.num == 0); /* untouched on failure */
                return;
        }

        switch (a->kind) {
        case ATTR_KIND_SCHEDULER: {
                size_t n_list = strv_length(v.list);

                fuzz_check(n_list >= 1 && n_list <= 8);
                for (size_t i = 0; i < n_list; i++) {
                        fuzz_check(scheduler_name_is_valid(v.list[i]));
                        fuzz_check(streq(scheduler_canonical(v.list[i]), v.list[i]));
                        for (size_t j = i + 1; j < n_list; j++)
                                fuzz_check(!streq(v.list[i], v.list[j]));
                }
                break;
        }
        case ATTR_KIND_BOOL:
                fuzz_check(v.num == 0 || v.num == 1);
                break;
        case ATTR_KIND_WBT:
                fuzz_check(v.num == -1 || v.num == 0 || (v.num >= a->min && v.num <= a->max));
                break;
        case ATTR_KIND_INT:
        case ATTR_KIND_PERCENT:
                fuzz_check(v.num >= a->min && v.num <= a->max);
                break;
        case ATTR_KIND_CTRL:
                fuzz_check(v.num == 0 || v.num == 1);
                break;
        case ATTR_KIND_NAME:
                fuzz_check(strv_length(v.list) == 1 && *v.list[0]);
                break;
        case ATTR_KIND_OWNERS:
                /* each kind once, in the kinds' order; "none" alone */
                fuzz_check(strv_length(v.list) >= 1);
                fuzz_check(v.num == 0 ? strv_length(v.list) == 1 && streq(v.list[0], "none")
                                      : (size_t) __builtin_popcount((unsigned) v.num) == strv_length(v.list));
                break;
        }

        canonical = value_to_string(a, &v);
        fuzz_oom_check(canonical);
        fuzz_check(*canonical && fuzz_no_control_chars(canonical, strlen(canonical)));
        fuzz_check(value_parse(a, canonical, &again, NULL) == 0);
        fuzz_check(value_equal(a, &v, &again));

        if (a->kind == ATTR_KIND_SCHEDULER || a->kind == ATTR_KIND_NAME || a->kind == ATTR_KIND_OWNERS)
                return;
        fuzz_check(value_sysfs_string(a, v.num, buf, sizeof(buf)) == 0);
        if (a->kind == ATTR_KIND_PERCENT)
                fuzz_check(percent_parse(buf, &n) == 0 && n == v.num);
        else if (a->kind == ATTR_KIND_CTRL)
                fuzz_check(streq(buf, v.num ? "user" : "auto"));
        else
                fuzz_check(safe_atoi64(buf, INT64_MIN, INT64_MAX, &n) == 0 && n == v.num);
}

static void check_sysfs_number(const char *text) {
        _cleanup_(attr_state_done) AttrState st = {};
        char buf[32];
        int64_t n;

        st.raw = strdup(text);
        fuzz_oom_check(st.raw);
        strstrip_inplace(st.raw);
        attr_state_parse_number(&st);
        fuzz_check(st.err == 0 || st.err == -EBADMSG);
        if (st.err < 0)
                return;
        snprintf(buf, sizeof(buf), "%" PRIi64, st.value.num);
        fuzz_check(safe_atoi64(buf, INT64_MIN, INT64_MAX, &n) == 0 && n == st.value.num);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(freep) char *key = NULL, *value = NULL, *tunable = NULL;
        const AttrInfo *a;
        int r;

        key = fuzz_next_line(&data, &size);
        if (!key)
                return 0;
        value = fuzz_strndup(data, size);

        r = setting_key_parse(key, &a, &tunable);
        fuzz_check(r == 0 || r == -ENOENT);
        if (r == 0) {
                fuzz_check((a->id == ATTR_IOSCHED) == !!tunable);
                if (tunable)
                        fuzz_check(tunable_name_is_valid(tunable) && tunable_is_known(tunable));
                check_value(a, value);
        }

        /* The value through every attribute's parser: one input covers every kind. */
        for (AttrId id = 0; id < _ATTR_MAX; id++)
                check_value(attr_get(id), value);
        check_sysfs_number(value);

        r = parse_boolean(value);
        fuzz_check(r == 0 || r == 1 || r == -EINVAL);
        return 0;
}
