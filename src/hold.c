/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>

#include "hold.h"
#include "util.h"

int hold_new(uint32_t id, const char *disk, const char *holder, const char *reason, uint64_t since,
             Hold **ret) {
        _cleanup_(hold_unrefp) Hold *h = NULL;
        _cleanup_(freep) char *name = NULL, *file = NULL;
        const char *error = NULL;
        int r;

        assert(id > 0);
        if (!disk_name_is_valid(disk))
                return -EINVAL;
        h = calloc(1, sizeof(Hold));
        if (!h)
                return -ENOMEM;
        h->n_ref = 1;
        h->id = id;
        h->since = since;
        /* Both come from a caller: shown in logs and on the bus, so escaped and bounded. */
        h->disk = strdup(disk);
        h->holder = escape_for_log(strempty(holder), HOLD_HOLDER_MAX);
        h->reason = escape_for_log(strempty(reason), HOLD_REASON_MAX);
        name = strdup_printf("hold-%" PRIu32, id);
        if (!h->disk || !h->holder || !h->reason || !name)
                return -ENOMEM;
        file = strdup_printf("hold %" PRIu32 " by %s: %s", id, h->holder, h->reason);
        if (!file)
                return -ENOMEM;
        h->rule = rule_new(name, file, 0);
        if (!h->rule)
                return -ENOMEM;
        h->rule->hold = true;
        r = rule_add_match(h->rule, MATCH_KEY_PREFIX "name", disk, 0, &error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(h);
        return 0;
}

Hold *hold_ref(Hold *h) {
        assert(!h || h->n_ref > 0);
        if (h)
                h->n_ref++;
        return h;
}

static void hold_free(Hold *h) {
        rule_free(h->rule);
        free(h->disk);
        free(h->holder);
        free(h->reason);
        free(h);
}

Hold *hold_unref(Hold *h) {
        if (h && --h->n_ref == 0)
                hold_free(h);
        return NULL;
}

int hold_add_setting(Hold *h, const char *key, const char *value, const char **ret_error) {
        if (startswith(key, MATCH_KEY_PREFIX)) {
                if (ret_error)
                        *ret_error = "a hold is for its disk: match.* keys are not settings";
                return -EINVAL;
        }
        return rule_add_setting(h->rule, key, value, 0, ret_error);
}

char *hold_settings_text(const Hold *h) {
        _cleanup_(strv_freep) char **l = NULL;

        l = calloc(1, sizeof(char *));
        if (!l)
                return NULL;
        for (size_t i = 0; i < h->rule->n_settings; i++)
                if (strv_push(&l, strdup_printf("%s=%s", h->rule->settings[i].key, h->rule->settings[i].text)) < 0)
                        return NULL;
        return strv_join(l, " ");
}

int policy_with_holds(const Policy *p, Hold *const *holds, size_t n, Policy **ret) {
        _cleanup_(policy_free_borrowedp) Policy *b = NULL;
        size_t np = p ? p->n_rules : 0;

        b = calloc(1, sizeof(Policy));
        if (!b)
                return -ENOMEM;
        b->rules = calloc(np + n + 1, sizeof(Rule *));
        if (!b->rules)
                return -ENOMEM;
        for (size_t i = 0; i < np; i++)
                b->rules[b->n_rules++] = p->rules[i];
        for (size_t i = 0; i < n; i++)
                b->rules[b->n_rules++] = holds[i]->rule;
        *ret = TAKE_PTR(b);
        return 0;
}

Policy *policy_free_borrowed(Policy *p) {
        if (p)
                free(p->rules);
        free(p);
        return NULL;
}
