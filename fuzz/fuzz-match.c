/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The matcher: match_parse() on any text for any match.* key, then match_test() against a
 * disk whose identity strings come from the input too (a device can report any model or
 * serial).
 *
 * Input: byte 0 selects the field (modulo the number of fields), byte 1 the disk's flags,
 * then lines: 0 the match value, 1 name, 2 model (udev), 3 model (sysfs), 4 vendor,
 * 5 serial, 6 wwn, 7 devpath. Identity strings are kept only when sysfs_load_disk() would
 * keep them (printable, at most 256 bytes); the name only when it is a valid disk name.
 *
 * Invariants: a refusal has a reason; "!" + a value that parses gives the opposite answer
 * (except where the disk's property is unknown, which matches neither way); a rule made of
 * the match agrees with the match.
 */
#include "fuzz.h"
#include "policy.h"

static char *identity(const char *line) {
        char *s;

        if (!line || !*line || !string_is_printable(line, 256))
                return NULL;
        s = strdup(line);
        fuzz_oom_check(s);
        return s;
}

static bool answer_is_defined(const Match *m, const Disk *d) {
        switch (m->field) {
        case MATCH_ROTATIONAL:
                return d->rotational >= 0;
        case MATCH_REMOVABLE:
                return d->removable >= 0;
        case MATCH_QUEUES:
                return d->nr_hw_queues > 0;
        default:
                return true;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(disk_freep) Disk *d = NULL;
        _cleanup_(freep) char *text = NULL, *negated = NULL;
        _cleanup_(rule_freep) Rule *rule = NULL;
        char *lines[8] = {};
        Match m = {}, n = {};
        const char *error = NULL;
        MatchField field;
        unsigned flags;
        bool result;
        int r;

        if (size < 2)
                return 0;
        field = data[0] % _MATCH_MAX;
        flags = data[1];
        data += 2;
        size -= 2;
        for (size_t i = 0; i < ELEMENTSOF(lines); i++)
                lines[i] = fuzz_next_line(&data, &size);
        if (!lines[0])
                goto finish;

        d = disk_new(lines[1] && disk_name_is_valid(lines[1]) ? lines[1] : "sda");
        fuzz_oom_check(d);
        d->model = identity(lines[2]);
        d->model_sysfs = identity(lines[3]);
        d->vendor = identity(lines[4]);
        d->serial = identity(lines[5]);
        d->wwn = identity(lines[6]);
        d->devpath = identity(lines[7]);
        d->transport = transport_classify(d->name, d->devpath, NULL);
        if ((flags & 0x0f) < _TRANSPORT_MAX && (flags & 0x10))
                d->transport = flags & 0x0f;
        d->rotational = (flags >> 5) % 3 - 1; /* -1, 0, 1 */
        d->removable = flags & 0x80 ? -1 : (int) ((flags >> 5) & 1);
        d->zoned = (flags >> 2) % _ZONED_MAX;
        d->nr_hw_queues = flags & 0x03;

        text = lines[0];
        lines[0] = NULL;
        r = match_parse(field, text, &m, &error);
        fuzz_check(r == 0 || r == -EINVAL);
        if (r < 0) {
                fuzz_check(error);
                goto finish;
        }
        fuzz_check(m.field == field);
        fuzz_check(m.negate == (text[0] == '!'));
        for (char **p = m.patterns; p && *p; p++)
                fuzz_check(**p && strlen(*p) <= MATCH_PATTERN_LEN_MAX);
        fuzz_check(strv_length(m.patterns) <= MATCH_PATTERNS_MAX);
        result = match_test(&m, d);

        if (text[0] != '!') {
                negated = strdup_printf("!%s", text);
                fuzz_oom_check(negated);
                fuzz_check(match_parse(field, negated, &n, NULL) == 0);
                if (answer_is_defined(&m, d))
                        fuzz_check(match_test(&n, d) == !result);
                else
                        fuzz_check(!result && !match_test(&n, d));
                match_done(&n);
        }

        rule = rule_new("fuzz", "fuzz.conf", 1);
        fuzz_oom_check(rule);
        {
                _cleanup_(freep) char *key = strdup_printf("match.%s", match_field_to_string(field));

                fuzz_oom_check(key);
                fuzz_check(rule_add_match(rule, key, text, 2, NULL) == 0);
                fuzz_check(rule_add_match(rule, key, text, 3, NULL) == -EEXIST);
        }
        fuzz_check(rule_matches(rule, d) == result);

finish:
        match_done(&m);
        for (size_t i = 0; i < ELEMENTSOF(lines); i++)
                free(lines[i]);
        return 0;
}
