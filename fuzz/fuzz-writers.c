/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The other writers' parsers (src/writers*.c) on any text, and their evaluation for disks of
 * several kinds. Their input is whatever root, a package or an admin put into udev's rules
 * directories, TuneD's profiles, TLP's and sysfsutils' files, and the kernel command line.
 *
 * Input: byte 0 selects the format (udev rules, TuneD profile, TLP, sysfs.conf, command line
 * with the rules of the rest of the input), byte 1 what the disk's reading knows (rotational,
 * removable, properties complete or not), then the text.
 *
 * Invariants: parsing and evaluation succeed; each writer of a disk applies YES or MAYBE and
 * writes at least one key; what reports show of a writer has no control character; the
 * writers of a key listed for a log line are exactly those other_writers_find() finds; the
 * same disk evaluates to the same writers twice.
 */
#include "fuzz.h"
#include "writers-tuned.h"
#include "writers.h"

static void check_disk(const Writers *w, const char *name, unsigned flags) {
        static char *const props[] = { (char *) "ID_BUS=ata", (char *) "ID_MODEL=QEMU_HARDDISK",
                                       (char *) "IOCOST_SOLUTIONS=naive", (char *) "elevator=bfq", NULL };
        _cleanup_(udev_props_freep) UdevProps *udev = NULL;
        WriterTarget t = {
                .name = name,
                .devpath = flags & 1 ? "/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda" : NULL,
                .devnum = flags & 2 ? "8:0" : NULL,
                .transport = flags & 4 ? TRANSPORT_ATA : TRANSPORT_OTHER,
                .rotational = flags & 8 ? 1 : -1,
                .removable = flags & 16 ? 0 : -1,
                .has_scheduler = flags & 32 ? 1 : -1,
                .scheduler_text = flags & 32 ? "[mq-deadline] kyber bfq none" : NULL,
                .zoned = "none",
                .udev_complete = flags & 128,
        };
        OtherWriters a = {}, b = {};

        if (flags & 64) {
                fuzz_check(udev_props_from_strv(props, &udev) == 0);
                t.udev = udev;
        }

        fuzz_check(writers_for_disk(w, &t, &a) == 0);
        fuzz_check(writers_for_disk(w, &t, &b) == 0);
        fuzz_check(other_writers_equal(&a, &b));
        for (size_t i = 0; i < a.n; i++) {
                const Writer *x = &a.writers[i];
                _cleanup_(freep) char *desc = writer_describe(x);

                fuzz_check(x->applies == APPLIES_YES || x->applies == APPLIES_MAYBE);
                fuzz_check(x->attrs != 0);
                fuzz_check(x->file && x->source);
                fuzz_oom_check(desc);
                fuzz_check(fuzz_no_control_chars(desc, strlen(desc)));
        }
        for (AttrId id = 0; id < _ATTR_MAX; id++) {
                const char *tunable = id == ATTR_IOSCHED ? "low_latency" : NULL;
                _cleanup_(freep) char *list = other_writers_of_key(&a, id, tunable, UINT32_MAX);

                fuzz_check(!list == !other_writers_find(&a, id, tunable, UINT32_MAX));
        }
        other_writers_done(&a);
        other_writers_done(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const names[] = { "sda", "nvme0n1", "loop0", "dm-0", "vdb" };
        _cleanup_(writers_freep) Writers *w = writers_new();
        _cleanup_(freep) char *text = NULL;
        _cleanup_(strv_freep) char **keys = NULL;
        unsigned format, flags;

        fuzz_oom_check(w);
        if (size < 2)
                return 0;
        format = data[0] % 5;
        flags = data[1];
        text = fuzz_strndup(data + 2, size - 2);
        switch (format) {
        case 0:
                fuzz_check(writers_add_udev_rules(w, "/etc/udev/rules.d/f.rules", text, strlen(text)) >= 0);
                break;
        case 1: {
                _cleanup_(tuned_profile_freep) TunedProfile *p = NULL;
                _cleanup_(strv_freep) char **inc = NULL;
                TunedProfile *chain[2];
                int r;

                fuzz_check(tuned_profile_parse("f", "/etc/tuned/f/tuned.conf", text, strlen(text), &p) == 0);
                fuzz_check(tuned_profile_includes(p, &inc) == 0);
                chain[0] = chain[1] = p;
                r = writers_add_tuned(w, chain, 2);
                fuzz_check(r == 0 || r == -EBADMSG);
                break;
        }
        case 2: {
                _cleanup_(tlp_conf_freep) TlpConf *c = tlp_conf_new();

                fuzz_oom_check(c);
                fuzz_check(tlp_conf_parse(c, "/etc/tlp.conf", text, strlen(text)) == 0);
                fuzz_check(writers_add_tlp(w, c, NULL, NULL) == 0);
                break;
        }
        case 3:
                fuzz_check(writers_add_sysfs_conf(w, "/etc/sysfs.conf", text, strlen(text)) >= 0);
                break;
        case 4: {
                /* The first line is the command line, the rest rules that may import from it. */
                char *nl = strchr(text, '\n');
                const char *rules = nl ? nl + 1 : "";

                if (nl)
                        *nl = 0;
                fuzz_check(writers_set_cmdline(w, text) == 0);
                fuzz_check(writers_add_udev_rules(w, "/usr/lib/udev/rules.d/f.rules", rules, strlen(rules)) >= 0);
                break;
        }
        }
        fuzz_check(writers_udev_keys(w, &keys) == 0);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                check_disk(w, names[i], flags);
        return 0;
}
