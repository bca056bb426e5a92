#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The hardening of the shipped unit, as "systemd-analyze security" scores it (offline: systemd
# need not be PID 1), does not get worse than the recorded 2.1 (docs/reliability.md). Needs no
# root.
. "$(dirname "$0")/../lib/common.sh"
command -v systemd-analyze >/dev/null || fail "systemd-analyze is not installed (apt-get install systemd)"

THRESHOLD=21    # exposure x 10: 2.1, "OK"
unit="$IOSCHED_BUILD_DIR/systemd/ioschedd.service"
[ -f "$unit" ] || fail "no $unit: build first"
sed "s|^ExecStart=.*|ExecStart=$IOSCHED_BUILD_DIR/daemon/ioschedd|" "$unit" >"$TEST_TMP/ioschedd.service"

score() {
        (cd "$TEST_TMP" && systemd-analyze security --offline=yes --no-pager "./$1" 2>/dev/null) |
                sed -n 's/^→ Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
s=$(score ioschedd.service)
[ -n "$s" ] || fail "systemd-analyze gave no score"
(cd "$TEST_TMP" && systemd-analyze security --offline=yes --threshold=$THRESHOLD ./ioschedd.service \
        >/dev/null 2>&1) || fail "the unit's exposure is $s, above $((THRESHOLD / 10)).$((THRESHOLD % 10))"

# Loadable schedulers: ioschedd looks for bfq.ko and kyber-iosched.ko under /usr/lib/modules to
# tell that a policy may ask for them (the kernel loads the module on the write). So the unit
# must not hide that directory (ProtectKernelModules= and InaccessiblePaths= would), while
# keeping ProtectKernelModules='s other parts: no CAP_SYS_MODULE, no @module system calls.
grep -Eq '^(ProtectKernelModules=(yes|true|on|1)|InaccessiblePaths=.*(/usr)?/lib/modules)' "$unit" &&
        fail "the unit makes /usr/lib/modules inaccessible: loadable schedulers would look unsupported"
details=$(cd "$TEST_TMP" && systemd-analyze security --offline=yes --no-pager ./ioschedd.service 2>/dev/null)
for item in 'CapabilityBoundingSet=~CAP_SYS_MODULE' 'SystemCallFilter=~@module'; do
        grep -q "✓ $item " <<<"$details" || fail "the unit does not ensure $item"
done

# The check is worth something only if it catches a weaker unit.
sed '/^NoNewPrivileges=/d; /^SystemCallFilter=/d; /^ProtectSystem=/d' "$TEST_TMP/ioschedd.service" \
        >"$TEST_TMP/weaker.service"
w=$(score weaker.service)
(cd "$TEST_TMP" && systemd-analyze security --offline=yes --threshold=$THRESHOLD ./weaker.service \
        >/dev/null 2>&1) && fail "a unit without NoNewPrivileges/SystemCallFilter/ProtectSystem passes ($w)"
log "exposure $s (a unit without three of its protections: $w)"
log "ok"
