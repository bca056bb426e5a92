#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shipped unit passes "systemd-analyze verify" with no complaint (verify exits 0 on
# unknown keys and bad values and only prints them: any output fails the test), and the
# shipped D-Bus activation file names the unit's alias.
. "$(dirname "$0")/../lib/common.sh"
command -v systemd-analyze >/dev/null || fail "systemd-analyze is not installed (apt-get install systemd)"

unit="$IOSCHED_BUILD_DIR/systemd/ioschedd.service"
[ -f "$unit" ] || fail "no $unit: build first"
# ExecStart must name an executable that exists: the built daemon.
sed "s|^ExecStart=.*|ExecStart=$IOSCHED_BUILD_DIR/daemon/ioschedd|" "$unit" >"$TEST_TMP/ioschedd.service"
out=$(cd "$TEST_TMP" && systemd-analyze verify --man=no ./ioschedd.service 2>&1) \
        || fail "systemd-analyze verify failed: $out"
[ -z "$out" ] || fail "systemd-analyze verify complains: $out"

# The check above is only worth something if it catches mistakes.
sed 's/^ProtectSystem=/ProtectSystm=/' "$TEST_TMP/ioschedd.service" >"$TEST_TMP/broken.service"
out=$(cd "$TEST_TMP" && systemd-analyze verify --man=no ./broken.service 2>&1 || true)
[ -n "$out" ] || fail "systemd-analyze verify does not report an unknown key here"

grep -qx 'Type=notify' "$unit" || fail "not Type=notify"
grep -qx 'BusName=org.iosched1' "$unit" || fail "no BusName"
grep -q '^WatchdogSec=' "$unit" || fail "no WatchdogSec"
alias=$(sed -n 's/^Alias=//p' "$unit")
grep -qx "SystemdService=$alias" "$IOSCHED_BUILD_DIR/dbus/org.iosched1.service" \
        || fail "the activation file does not start $alias"
log "ok"
