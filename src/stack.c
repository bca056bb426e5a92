/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <stdio.h>

#include "stack.h"
#include "util.h"

static const char *const stack_role_names[_STACK_ROLE_MAX] = {
        [STACK_ROLE_DISK] = "disk",
        [STACK_ROLE_MULTIPATH_MAP] = "multipath-map",
        [STACK_ROLE_MULTIPATH_PATH] = "multipath-path",
        [STACK_ROLE_DM] = "dm",
        [STACK_ROLE_MD] = "md",
        [STACK_ROLE_MD_MEMBER] = "md-member",
        [STACK_ROLE_NVME_HEAD] = "nvme-head",
        [STACK_ROLE_NVME_PATH] = "nvme-path",
};

DEFINE_STRING_TABLE_LOOKUP(stack_role, StackRole, stack_role_names, _STACK_ROLE_MAX);

void stack_done(Stack *s) {
        if (!s)
                return;
        free(s->dm_kind);
        free(s->upper);
        *s = (Stack) {};
}

char *stack_dm_kind(const char *uuid) {
        const char *dash, *digits;
        char *kind;

        errno = 0;
        if (!uuid || !(dash = strchr(uuid, '-')) || dash == uuid)
                return NULL;
        /* kpartx names its partitions' uuids "part1-<the map's uuid>", "part2-...". */
        digits = startswith(uuid, "part");
        if (digits && digits < dash && strspn(digits, "0123456789") == (size_t) (dash - digits))
                dash = digits;
        kind = strndup(uuid, dash - uuid);
        if (!kind)
                errno = ENOMEM;
        return kind;
}

/* "nvme3c2n1": the path of namespace 1 of subsystem 3 through controller 2. */
static bool nvme_path_name(const char *name) {
        unsigned subsys, ctrl, ns;
        int n = 0;

        return sscanf(name, "nvme%uc%un%u%n", &subsys, &ctrl, &ns, &n) == 3 && name[n] == '\0';
}

static bool uuid_is_mpath(const char *uuid) {
        return uuid && startswith(uuid, "mpath-");
}

int stack_classify(const StackFacts *f, Stack *ret) {
        _cleanup_(freep) char *kind = NULL, *upper = NULL;
        StackRole role = STACK_ROLE_DISK;
        const char *bs = f->block_subsystem;

        assert(f && f->name && ret);

        if (f->dm || streq_ptr(bs, "dm")) {
                kind = stack_dm_kind(f->dm_uuid);
                if (!kind && errno == ENOMEM)
                        return -ENOMEM;
                role = uuid_is_mpath(f->dm_uuid) ? STACK_ROLE_MULTIPATH_MAP : STACK_ROLE_DM;
        } else if (f->md || streq_ptr(bs, "md"))
                role = STACK_ROLE_MD;
        else if (f->devpath && strstr(f->devpath, "/nvme-subsystem/"))
                role = STACK_ROLE_NVME_HEAD;
        else if (nvme_path_name(f->name) && (!f->devpath || strstr(f->devpath, "/nvme/")))
                role = STACK_ROLE_NVME_PATH;
        else {
                /* Below a multipath map or an md array. A disk held by both is not a stack
                 * either builds; the map wins, as multipath-tools claims the disk first. */
                for (size_t i = 0; i < f->n_holders; i++) {
                        const StackHolder *h = &f->holders[i];
                        StackRole r;

                        if (uuid_is_mpath(h->dm_uuid))
                                r = STACK_ROLE_MULTIPATH_PATH;
                        else if (h->md)
                                r = STACK_ROLE_MD_MEMBER;
                        else
                                continue;
                        if (role == STACK_ROLE_DISK || (role == STACK_ROLE_MD_MEMBER &&
                                                        r == STACK_ROLE_MULTIPATH_PATH)) {
                                role = r;
                                if (free_and_strdup(&upper, h->name) < 0)
                                        return -ENOMEM;
                        }
                }
                /* Before the map takes a path back (or while udev's rules have claimed it and
                 * multipathd has not yet), only udev knows. */
                if (role != STACK_ROLE_MULTIPATH_PATH && streq_ptr(f->multipath_device_path, "1")) {
                        role = STACK_ROLE_MULTIPATH_PATH;
                        upper = mfree(upper);
                }
        }

        *ret = (Stack) {
                .role = role,
                .dm_kind = TAKE_PTR(kind),
                .upper = TAKE_PTR(upper),
        };
        return 0;
}

bool stack_role_is_multipath(StackRole r) {
        return r == STACK_ROLE_MULTIPATH_MAP || r == STACK_ROLE_MULTIPATH_PATH;
}

bool stack_event_is_no_change(StackPropertyGet get, void *userdata, const char **ret_why) {
        static const struct {
                const char *key, *value, *why;
                bool prefix;
        } marks[] = {
                { "DM_UDEV_DISABLE_OTHER_RULES_FLAG", "1",
                  "device-mapper's rules keep other rules off this event (no table, suspended or not usable)" },
                { "MPATH_UNCHANGED", "1", "multipath: a reload that changes nothing of the map" },
                { "MPATH_DEVICE_READY", "0", "multipath: the map has no usable path or is suspended" },
                { "DM_SUSPENDED", "1", "device-mapper: the device is suspended" },
                /* multipathd's PATH_FAILED and PATH_REINSTATED: 11-dm-mpath.rules sets
                 * MPATH_UNCHANGED=1 for them too, but only since multipath-tools 0.8.8. */
                { "DM_ACTION", "PATH_", "multipath: a path of the map failed or came back", true },
        };

        assert(get);
        for (size_t i = 0; i < ELEMENTSOF(marks); i++) {
                const char *v = get(marks[i].key, userdata);

                if (v && (marks[i].prefix ? !!startswith(v, marks[i].value) : streq(v, marks[i].value))) {
                        if (ret_why)
                                *ret_why = marks[i].why;
                        return true;
                }
        }
        return false;
}
