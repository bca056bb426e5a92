/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "udev-props.h"
#include "util.h"

const char *const udev_props_identity_keys[] = {
        "ID_MODEL", "ID_VENDOR", "ID_SERIAL_SHORT", "ID_SERIAL", "ID_WWN_WITH_EXTENSION", "ID_WWN",
        "ID_BUS", "DEVPATH",
        /* the disk's place in a storage stack (stack.h) */
        "DM_MULTIPATH_DEVICE_PATH", "ID_BLOCK_SUBSYSTEM",
        /* the marks of a dm event that changes nothing (stack_event_is_no_change()) */
        "DM_UDEV_DISABLE_OTHER_RULES_FLAG", "MPATH_UNCHANGED", "MPATH_DEVICE_READY", "DM_SUSPENDED",
        "DM_ACTION",
        NULL
};

UdevProps *udev_props_new(void) {
        return calloc(1, sizeof(UdevProps));
}

UdevProps *udev_props_free(UdevProps *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_props; i++) {
                free(p->props[i].name);
                free(p->props[i].value);
        }
        free(p->props);
        free(p);
        return NULL;
}

/* The slot of @name, or where it goes (*ret_found false). */
static size_t find_slot(const UdevProps *p, const char *name, bool *ret_found) {
        size_t lo = 0, hi = p->n_props;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(p->props[mid].name, name);

                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_found = false;
        return lo;
}

const char *udev_props_get(const UdevProps *p, const char *name) {
        bool found;
        size_t i;

        assert(name);
        if (!p)
                return NULL;
        i = find_slot(p, name, &found);
        return found ? p->props[i].value : NULL;
}

static const char *identity_value(const UdevProps *p, const char *name, const char *fallback) {
        const char *v = udev_props_get(p, name);

        if (!v && fallback)
                v = udev_props_get(p, fallback);
        return v && string_is_printable(v, UDEV_PROP_IDENTITY_MAX) ? v : NULL;
}

/* The typed fields point into the list: set them again after a value was replaced. */
static void type_fields(UdevProps *p) {
        p->model = identity_value(p, "ID_MODEL", NULL);
        p->vendor = identity_value(p, "ID_VENDOR", NULL);
        p->serial = identity_value(p, "ID_SERIAL_SHORT", "ID_SERIAL");
        p->wwn = identity_value(p, "ID_WWN_WITH_EXTENSION", "ID_WWN");
        p->bus = identity_value(p, "ID_BUS", NULL);
        p->iocost_solutions = udev_props_get(p, "IOCOST_SOLUTIONS");
        p->multipath_device_path = udev_props_get(p, "DM_MULTIPATH_DEVICE_PATH");
        p->block_subsystem = udev_props_get(p, "ID_BLOCK_SUBSYSTEM");
        p->devpath = udev_props_get(p, "DEVPATH");
}

static bool name_is_valid(const char *name) {
        return string_in_charset(name, CHARSET_ALNUM "_.-:", UDEV_PROP_NAME_MAX);
}

/* Printable UTF-8; tabs too (lists in the hwdb may be separated by them). */
static bool value_is_valid(const char *v) {
        size_t n = 0;

        for (size_t k; *v; v += k) {
                if (++n > UDEV_PROP_VALUE_MAX || (unsigned char) *v == 0x7f ||
                    ((unsigned char) *v < 0x20 && *v != '\t'))
                        return false;
                k = utf8_char_len(v);
                if (k == 0)
                        return false;
        }
        return n > 0;
}

int udev_props_add(UdevProps *p, const char *name, const char *value) {
        _cleanup_(freep) char *n = NULL, *v = NULL;
        bool found;
        size_t i;

        assert(p && name && value);
        /* An empty value is udev's way of unsetting a property. */
        if (!name_is_valid(name) || !value_is_valid(value))
                return 0;
        i = find_slot(p, name, &found);
        if (!found && p->n_props >= UDEV_PROPS_MAX)
                return 0;
        v = strdup(value);
        if (!v)
                return -ENOMEM;
        if (found) {
                free(p->props[i].value);
                p->props[i].value = TAKE_PTR(v);
        } else {
                n = strdup(name);
                if (!n || GREEDY_REALLOC(p->props, p->n_allocated, p->n_props + 1) < 0)
                        return -ENOMEM;
                memmove(p->props + i + 1, p->props + i, (p->n_props - i) * sizeof(UdevProperty));
                p->props[i] = (UdevProperty) { .name = TAKE_PTR(n), .value = TAKE_PTR(v) };
                p->n_props++;
        }
        type_fields(p);
        return 1;
}

int udev_props_copy_matching(const UdevProps *p, bool (*want)(const char *name), UdevProps **ret) {
        assert(want);
        return udev_props_copy_keys(p, want, NULL, ret);
}

int udev_props_copy_keys(const UdevProps *p, bool (*want)(const char *name), char * const *keys,
                         UdevProps **ret) {
        _cleanup_(udev_props_freep) UdevProps *c = NULL;

        assert(ret);
        for (size_t i = 0; p && i < p->n_props; i++) {
                if (!(want && want(p->props[i].name)) && !strv_contains(keys, p->props[i].name))
                        continue;
                if (!c && !(c = udev_props_new()))
                        return -ENOMEM;
                if (udev_props_add(c, p->props[i].name, p->props[i].value) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

/* "KEY=value" of @len bytes at @s. */
static int add_assignment(UdevProps *p, const char *s, size_t len) {
        _cleanup_(freep) char *copy = strndup(s, len);
        char *eq;

        if (!copy)
                return -ENOMEM;
        eq = strchr(copy, '=');
        if (!eq)
                return 0;
        *eq = 0;
        return udev_props_add(p, copy, eq + 1);
}

int udev_props_from_strv(char * const *l, UdevProps **ret) {
        _cleanup_(udev_props_freep) UdevProps *p = NULL;

        assert(ret);
        p = udev_props_new();
        if (!p)
                return -ENOMEM;
        for (char * const *i = l; i && *i; i++)
                if (add_assignment(p, *i, strlen(*i)) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

int udev_props_parse_db(const char *text, UdevProps **ret) {
        _cleanup_(udev_props_freep) UdevProps *p = NULL;

        assert(text && ret);
        p = udev_props_new();
        if (!p)
                return -ENOMEM;
        for (const char *line = text; *line;) {
                size_t len = strcspn(line, "\n");

                if (len > 2 && line[0] == 'E' && line[1] == ':' &&
                    add_assignment(p, line + 2, len - 2) < 0)
                        return -ENOMEM;
                line += len + (line[len] == '\n');
        }
        *ret = TAKE_PTR(p);
        return 0;
}
