/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "conf.h"
#include "ioschedd-config.h"
#include "log.h"
#include "util.h"
#include "writers-scan.h"

Config *config_ref(Config *c) {
        if (c)
                c->n_ref++;
        return c;
}

Config *config_unref(Config *c) {
        if (!c || --c->n_ref > 0)
                return NULL;
        policy_free(c->policy);
        strv_free(c->errors);
        writers_free(c->writers);
        strv_free(c->udev_keys);
        free(c);
        return NULL;
}

int config_load(const char *root, const char *single_file, Config **ret) {
        _cleanup_(config_unrefp) Config *c = NULL;
        int r;

        assert(root && ret);
        c = calloc(1, sizeof(Config));
        if (!c)
                return -ENOMEM;
        c->n_ref = 1;
        r = conf_load(root, single_file, &c->policy, &c->errors);
        if (r < 0)
                return r;
        policy_disk_load(c->policy, &c->load);
        /* Who else writes the disks' keys: shown, logged with a change, and owner.defer's. */
        r = writers_scan(root, &c->writers);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                log_warning_errno(r, "Cannot look for other writers below %s: %m", root);
        r = writers_disk_load(c->writers, &c->load, &c->udev_keys);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

void config_log(const Config *c, bool in_force) {
        size_t n;

        assert(c);
        n = strv_length(c->errors);
        for (char **e = c->errors; e && *e; e++)
                log_error("%s", *e);
        if (!in_force) {
                log_error("The configuration has %zu error(s): keeping the previous one.", n);
                return;
        }
        if (n > 0)
                log_error("Files with errors are left out; the others are in force.");
        log_info("Configuration loaded: %zu file(s), %zu rule(s).", strv_length(c->policy->files),
                 c->policy->n_rules);
}
