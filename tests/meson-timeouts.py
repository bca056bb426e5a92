#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every meson test of the project states its timeout.

Meson gives a test without one 30 s, which is what a slow or loaded machine outruns (issue: the
deps test was killed at 30 s on a fresh 2-CPU machine). Meson's introspection does not say
whether a timeout was written or defaulted, so 30 itself is refused: no test of the project uses
it on purpose. Usage: meson-timeouts BUILD_DIR"""

import json
import os
import sys

MESON_DEFAULT = 30

with open(os.path.join(sys.argv[1], "meson-info", "intro-tests.json")) as f:
        tests = json.load(f)
bad = [t["name"] for t in tests if t.get("timeout") in (MESON_DEFAULT, None)]
for name in bad:
        print(f"test '{name}' has no timeout of its own (meson's default {MESON_DEFAULT} s)")
print(f"meson-timeouts: {len(tests)} tests, {len(bad)} without a timeout of their own")
sys.exit(1 if bad else 0)
