/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>

#include "cli.h"
#include "log.h"
#include "util.h"

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
