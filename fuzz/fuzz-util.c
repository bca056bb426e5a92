/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "conf.h"
#include "fuzz.h"

Policy *fuzz_policy_parse(const char *text) {
        _cleanup_(strv_freep) char **errors = calloc(1, sizeof(char *));
        Policy *p = policy_new();

        fuzz_oom_check(errors);
        fuzz_oom_check(text);
        fuzz_oom_check(p);
        fuzz_check(conf_parse_text(text, strlen(text), "p.conf", p, &errors) == 0);
        return p;
}

char *fuzz_strndup(const uint8_t *data, size_t size) {
        const uint8_t *nul = memchr(data, 0, size);
        char *s;

        /* Not strndup(): the input has no NUL at its end, and ASan's strict_string_checks
         * would take strndup() reading it for an overflow. */
        if (nul)
                size = nul - data;
        s = malloc(size + 1);
        fuzz_oom_check(s);
        memcpy(s, data, size);
        s[size] = 0;
        return s;
}

char *fuzz_next_line(const uint8_t **p, size_t *left) {
        const uint8_t *nl;
        size_t len;
        char *s;

        if (*left == 0)
                return NULL;
        nl = memchr(*p, '\n', *left);
        len = nl ? (size_t) (nl - *p) : *left;
        s = fuzz_strndup(*p, len);
        *p += len + (nl ? 1 : 0);
        *left -= len + (nl ? 1 : 0);
        return s;
}

bool fuzz_no_control_chars(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return false;
        return true;
}

bool fuzz_utf8_is_valid(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s, *end = p + n;

        while (p < end) {
                unsigned len, cp;

                if (*p < 0x80) {
                        p++;
                        continue;
                }
                if (*p >= 0xc2 && *p <= 0xdf)
                        len = 2, cp = *p & 0x1f;
                else if (*p >= 0xe0 && *p <= 0xef)
                        len = 3, cp = *p & 0x0f;
                else if (*p >= 0xf0 && *p <= 0xf4)
                        len = 4, cp = *p & 0x07;
                else
                        return false;
                if ((size_t) (end - p) < len)
                        return false;
                for (unsigned i = 1; i < len; i++) {
                        if ((p[i] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (p[i] & 0x3f);
                }
                if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
                    (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                p += len;
        }
        return true;
}

static void set_num(Disk *d, AttrId id, int64_t v) {
        attr_state_done(&DISK_ATTR(d, id));
        DISK_ATTR(d, id).raw = strdup_printf("%lld", (long long) v);
        fuzz_oom_check(DISK_ATTR(d, id).raw);
        DISK_ATTR(d, id).value.num = v;
        DISK_ATTR(d, id).err = 0;
}

static void set_scheduler(Disk *d, const char *line) {
        AttrState *st = &DISK_ATTR(d, ATTR_SCHEDULER);

        attr_state_done(st);
        if (!line) {
                d->has_scheduler_file = false;
                st->err = -ENOENT;
                return;
        }
        d->has_scheduler_file = true;
        st->raw = strdup(line);
        fuzz_oom_check(st->raw);
        fuzz_check(attr_state_parse(attr_get(ATTR_SCHEDULER), st) == 0);
        fuzz_check(scheduler_parse(line, &d->scheduler, &d->schedulers) == 0);
}

static void add_tunable(Disk *d, const char *name, int64_t v) {
        Tunable *t = realloc(d->tunables, sizeof(Tunable) * (d->n_tunables + 1));

        fuzz_oom_check(t);
        d->tunables = t;
        t = &d->tunables[d->n_tunables++];
        *t = (Tunable){.name = strdup(name)};
        fuzz_oom_check(t->name);
        t->state.raw = strdup_printf("%lld", (long long) v);
        fuzz_oom_check(t->state.raw);
        t->state.value.num = v;
}

static char *xstrdup(const char *s) {
        char *c = strdup(s);

        fuzz_oom_check(c);
        return c;
}

Disk *fuzz_disk_new(unsigned which) {
        static const char *const names[FUZZ_N_DISKS] = {
                "loop0", "sda", "nvme0n1", "dm-0", "sdb1", "vdb",
        };
        Disk *d;

        fuzz_check(which < FUZZ_N_DISKS);
        d = disk_new(names[which]);
        fuzz_oom_check(d);
        d->load = DISK_LOAD_ALL;
        d->devnum = xstrdup("7:0");
        d->rotational = 0;
        d->removable = 0;

        switch (which) {
        case 0:
                d->transport = TRANSPORT_LOOP;
                d->nr_hw_queues = 1;
                set_scheduler(d, "[none] mq-deadline kyber bfq");
                DISK_ATTR(d, ATTR_WBT_LAT_USEC).err = -EINVAL;
                set_num(d, ATTR_NR_REQUESTS, 128);
                set_num(d, ATTR_READ_AHEAD_KB, 128);
                set_num(d, ATTR_MAX_SECTORS_KB, 1280);
                d->max_hw_sectors_kb = 1280;
                break;
        case 1:
                d->transport = TRANSPORT_ATA;
                d->rotational = 1;
                d->nr_hw_queues = 1;
                d->model = xstrdup("WDC WD40EFRX-68N32N0");
                d->model_sysfs = xstrdup("WDC WD40EFRX-68N");
                d->vendor = xstrdup("ATA");
                d->vendor_sysfs = xstrdup("ATA     ");
                d->serial = xstrdup("WD-WCC7K4XXXXXX");
                d->wwn = xstrdup("0x50014ee2b5c0ffee");
                d->devpath =
                        xstrdup("/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda");
                set_scheduler(d, "none [mq-deadline] kyber bfq");
                set_num(d, ATTR_WBT_LAT_USEC, 75000);
                set_num(d, ATTR_NR_REQUESTS, 64);
                set_num(d, ATTR_READ_AHEAD_KB, 128);
                set_num(d, ATTR_RQ_AFFINITY, 1);
                set_num(d, ATTR_NOMERGES, 0);
                set_num(d, ATTR_ADD_RANDOM, 1);
                set_num(d, ATTR_IOSTATS, 1);
                d->max_hw_sectors_kb = 32767;
                set_num(d, ATTR_MAX_SECTORS_KB, 1280);
                add_tunable(d, "read_expire", 500);
                add_tunable(d, "write_expire", 5000);
                add_tunable(d, "fifo_batch", 16);
                add_tunable(d, "front_merges", 1);
                break;
        case 2:
                d->transport = TRANSPORT_NVME;
                d->zoned = ZONED_HOST_MANAGED;
                d->nr_hw_queues = 4;
                d->model = xstrdup("ZNS SSD");
                d->serial = xstrdup("S5XXNA0R");
                set_scheduler(d, "[mq-deadline] none");
                set_num(d, ATTR_WBT_LAT_USEC, 0);
                set_num(d, ATTR_NR_REQUESTS, 1023);
                set_num(d, ATTR_READ_AHEAD_KB, 128);
                add_tunable(d, "read_expire", 500);
                break;
        case 3:
                d->transport = TRANSPORT_DM;
                set_scheduler(d, NULL);
                set_num(d, ATTR_READ_AHEAD_KB, 4096);
                break;
        case 4:
                d->transport = TRANSPORT_SCSI;
                d->partition = true;
                d->rotational = 1;
                d->removable = 1;
                break;
        case 5:
                d->transport = TRANSPORT_VIRTIO;
                d->nr_hw_queues = 2;
                d->rotational = -1;
                d->removable = -1;
                set_scheduler(d, "mq-deadline kyber [bfq] none ");
                set_num(d, ATTR_WBT_LAT_USEC, 0);
                set_num(d, ATTR_NR_REQUESTS, 256);
                add_tunable(d, "low_latency", 1);
                add_tunable(d, "slice_idle", 8);
                break;
        }
        return d;
}
