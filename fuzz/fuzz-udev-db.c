/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * udev's database file of a disk (/run/udev/data/bMAJ:MIN), as sysfs_load_disk() reads it
 * when it is not run from a udev event: "E:KEY=value" lines among others.
 *
 * Invariants: the properties are exactly the "E:KEY=value" lines, in the file's order;
 * props_get() finds each key's first value; the transport classification copes with any
 * ID_BUS.
 */
#include "fuzz.h"
#include "sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(strv_freep) char **props = NULL;
        _cleanup_(freep) char *text = NULL;
        size_t n = 0;

        text = fuzz_strndup(data, size);
        fuzz_check(udev_db_parse(text, &props) == 0);

        /* One pass over the text: each "E:KEY=value" line, in order, is the next property. */
        for (const char *line = text; *line;) {
                size_t len = strcspn(line, "\n");
                const char *eq = memchr(line, '=', len);

                if (len > 2 && line[0] == 'E' && line[1] == ':' && eq) {
                        fuzz_check(props[n]);
                        fuzz_check(strlen(props[n]) == len - 2 && memcmp(props[n], line + 2, len - 2) == 0);
                        n++;
                }
                line += len + (line[len] == '\n');
        }
        fuzz_check(props[n] == NULL);

        /* props_get() finds the first value of a key (checked for the first 32 keys: it is a
         * linear search, and the input may hold thousands). */
        for (size_t i = 0; i < n && i < 32; i++) {
                const char *eq = strchr(props[i], '=');
                _cleanup_(freep) char *key = strndup(props[i], eq - props[i]);
                size_t first = i;

                fuzz_oom_check(key);
                for (size_t j = 0; j < i; j++)
                        if (strncmp(props[j], key, eq - props[i]) == 0 && props[j][eq - props[i]] == '=') {
                                first = j;
                                break;
                        }
                fuzz_check(props_get(props, key) == props[first] + (eq - props[i]) + 1);
        }

        (void) transport_classify("sdz", props_get(props, "DEVPATH"), props_get(props, "ID_BUS"));
        (void) props_get(props, "ID_MODEL");
        (void) props_get(props, "");
        return 0;
}
