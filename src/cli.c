/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>

#include "cli.h"
#include "engine.h"
#include "log.h"
#include "util.h"

int cli_paths_finish(const char **root, const char *config, const char **config_root,
                     const char **runtime_dir, char **ret_runtime_dir_buf) {
        char *buf = NULL;

        assert(root && config_root && runtime_dir && ret_runtime_dir_buf);
        if (config && *config_root) {
                log_error("--config and --config-root are mutually exclusive.");
                return -EINVAL;
        }
        *root = *root ?: "/";
        *config_root = *config_root ?: *root;
        if (!*runtime_dir) {
                buf = strdup_printf("%s%s", streq(*root, "/") ? "" : *root, ENGINE_RUNTIME_DIR);
                if (!buf)
                        return log_oom();
                *runtime_dir = buf;
        }
        *ret_runtime_dir_buf = buf;
        return 0;
}

int cli_parse_range(const char *option, const char *s, int64_t min, int64_t max, const char *unit,
                    int64_t *ret) {
        int64_t v;

        assert(option);
        assert(ret);

        if (safe_atoi64(s, min, max, &v) < 0) {
                log_error("Invalid %s \"%s\": %" PRIi64 " to %" PRIi64 "%s%s.", option, strempty(s),
                          min, max, unit ? " " : "", strempty(unit));
                return -EINVAL;
        }
        *ret = v;
        return 0;
}
