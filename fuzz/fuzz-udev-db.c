/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * udev's database file of a disk (/run/udev/data/bMAJ:MIN), as sysfs_load_disk() reads it
 * when it is not run from a udev event: "E:KEY=value" lines among others.
 *
 * Invariants: every property kept is "KEY=value" from an "E:" line, in the file's order;
 * props_get() finds each key's first value; the transport classification copes with any
 * ID_BUS.
 */
#include "fuzz.h"
#include "sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(strv_freep) char **props = NULL;
        _cleanup_(freep) char *text = NULL;
        size_t n_lines = 1, n;

        text = fuzz_strndup(data, size);
        for (const char *p = text; *p; p++)
                n_lines += *p == '\n';

        fuzz_check(udev_db_parse(text, &props) == 0);
        n = strv_length(props);
        fuzz_check(n <= n_lines);
        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) char *key = NULL;
                const char *eq = strchr(props[i], '='), *v;
                _cleanup_(freep) char *line = NULL;

                fuzz_check(eq && !strchr(props[i], '\n'));
                line = strdup_printf("E:%s", props[i]);
                fuzz_oom_check(line);
                fuzz_check(strstr(text, line));
                key = strndup(props[i], eq - props[i]);
                fuzz_oom_check(key);
                v = props_get(props, key);
                fuzz_check(v);
                /* The first one with this key wins. */
                for (size_t j = 0; j < i; j++)
                        if (startswith(props[j], key) && props[j][strlen(key)] == '=')
                                goto next;
                fuzz_check(v == eq + 1);
        next:;
        }

        (void) transport_classify("sdz", props_get(props, "DEVPATH"), props_get(props, "ID_BUS"));
        (void) props_get(props, "ID_MODEL");
        (void) props_get(props, "");
        return 0;
}
