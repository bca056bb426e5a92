/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration loader on arbitrary text: conf_parse_text() is what conf_load_file() runs
 * on a file's contents (inih underneath). The policy it yields is then resolved and planned
 * against disks of every kind and printed, as iosched-apply would.
 *
 * Invariants: a text is either taken whole (no error) or not at all (errors, and the rules
 * already loaded are untouched); every error is "FILE:LINE: ..." with a line of the text, in
 * valid UTF-8;
 * every value kept re-parses from its canonical spelling to the same value; the plan of every
 * disk has one action per resolved key; the JSON report has no raw control character.
 */
#include <inttypes.h>

#include "conf.h"
#include "fuzz.h"
#include "plan.h"
#include "report.h"

static const char base_text[] = "[rule base]\n"
                                "match.name = *\n"
                                "read_ahead_kb = 128\n";

static void check_rule(const Rule *r) {
        fuzz_check(rule_name_is_valid(r->name));
        fuzz_check(r->n_matches > 0);
        for (size_t i = 0; i < r->n_matches; i++)
                for (size_t j = i + 1; j < r->n_matches; j++)
                        fuzz_check(r->matches[i].field != r->matches[j].field);

        for (size_t i = 0; i < r->n_settings; i++) {
                const Setting *s = &r->settings[i];
                _cleanup_(value_done) Value again = {};
                _cleanup_(freep) char *text = NULL;

                for (size_t j = i + 1; j < r->n_settings; j++)
                        fuzz_check(!streq(s->key, r->settings[j].key));
                fuzz_check((s->attr->id == ATTR_IOSCHED) == !!s->tunable);
                /* The canonical spelling is what the D-Bus properties and reports show. */
                fuzz_check(fuzz_no_control_chars(s->text, strlen(s->text)));
                text = value_to_string(s->attr, &s->value);
                fuzz_oom_check(text);
                fuzz_check(streq(text, s->text));
                fuzz_check(value_parse(s->attr, text, &again, NULL) == 0);
                fuzz_check(value_equal(s->attr, &s->value, &again));
        }
}

static void check_error(const char *e, unsigned n_lines) {
        const char *p = startswith(e, "fuzz.conf:");
        char *end;
        unsigned long line;

        fuzz_check(p);
        line = strtoul(p, &end, 10);
        fuzz_check(end != p && *end == ':');
        fuzz_check(line <= n_lines + 1);
        /* Errors go to the journal and, through ConfigErrors and Reload's reply, on the bus:
         * D-Bus strings must be UTF-8, whatever bytes the file holds. */
        fuzz_check(fuzz_utf8_is_valid(e, strlen(e)));
}

static void plan_disks(const Policy *p) {
        static FILE *devnull;

        if (!devnull) {
                devnull = fopen("/dev/null", "we");
                fuzz_oom_check(devnull);
        }
        static Disk *disks[FUZZ_N_DISKS];

        for (unsigned i = 0; i < FUZZ_N_DISKS; i++) {
                /* Built once: planning never changes a disk. */
                const Disk *d = disks[i] ?: (disks[i] = fuzz_disk_new(i));
                _cleanup_(resolved_freep) Resolved *res = NULL;
                _cleanup_(plan_freep) Plan *plan = NULL;

                fuzz_check(policy_resolve(p, d, &res) == 0);
                for (size_t j = 1; j < res->n_settings; j++)
                        fuzz_check(res->settings[j - 1].setting->attr->id <=
                                   res->settings[j].setting->attr->id);
                fuzz_check(plan_build(d, res, &plan) == 0);
                fuzz_check(plan->n_actions == res->n_settings);

                /* The printers on whatever the policy holds (fuzz-sysfs-text checks the JSON). */
                report_print_json(devnull, d, plan, NULL);
                report_print_text(devnull, d, plan, true);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(policy_freep) Policy *p = NULL;
        _cleanup_(strv_freep) char **errors = NULL;
        unsigned n_lines = 1;
        DiskLoad load;
        int r;

        for (size_t i = 0; i < size; i++)
                n_lines += data[i] == '\n';

        p = policy_new();
        errors = calloc(1, sizeof(char *));
        fuzz_oom_check(p);
        fuzz_oom_check(errors);
        fuzz_check(conf_parse_text(base_text, strlen(base_text), "base.conf", p, &errors) == 0);
        fuzz_check(p->n_rules == 1);

        r = conf_parse_text((const char *) data, size, "fuzz.conf", p, &errors);
        fuzz_check(r == 0 || r == -EINVAL);
        fuzz_check((r == 0) == strv_isempty(errors));
        if (r < 0)
                fuzz_check(p->n_rules == 1); /* nothing half-applied */
        for (char **e = errors; *e; e++)
                check_error(*e, n_lines);
        for (size_t i = 0; i < p->n_rules; i++)
                check_rule(p->rules[i]);
        for (size_t i = 1; i < p->n_rules; i++)
                fuzz_check(streq(p->rules[i]->file, "fuzz.conf"));

        policy_disk_load(p, &load);
        plan_disks(p);
        return 0;
}
