#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What systemd would see of ioschedd (Type=notify, WatchdogSec=): READY=1 once the bus name is
# taken, STATUS=, RELOADING=1 then READY=1 on SIGHUP and on the Reload method, WATCHDOG=1 pings,
# STOPPING=1 on SIGTERM.
# The notification socket is a datagram socket of the test's own.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
command -v python3 >/dev/null || fail "python3 is not installed"

a=$(loop_new)
config_root test "match.name = $a" "nr_requests = 32"
bus_start

# listen FILE: the notifications sent to $sock go to FILE, a line each, until STOPPING=1.
sock="$TEST_TMP/notify"
listen() {
        rm -f "$sock"
        python3 - "$sock" >"$1" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
while True:
    try:
        msg = s.recv(4096).decode()
    except socket.timeout:
        break
    for line in msg.split("\n"):
        print(line, flush=True)
    if "STOPPING=1" in msg:
        break
PY
        on_exit "kill $! 2>/dev/null"
        wait_until 60 test -S "$sock" || fail "no notification socket"
}
listen "$TEST_TMP/notifications"

NOTIFY_SOCKET="$sock" WATCHDOG_USEC=400000 ioschedd_start --config-root "$root" --no-monitor
wait_until 60 has -x READY=1 "$TEST_TMP/notifications" || fail "no READY=1: $(cat "$TEST_TMP/notifications")"
has '^STATUS=.*disks' "$TEST_TMP/notifications" || fail "no STATUS="
# The name is taken before READY=1 is sent: a client may call as soon as systemd says ready.
mgr ListDisks >/dev/null || fail "READY=1 before the bus name"
wait_until 60 has -x WATCHDOG=1 "$TEST_TMP/notifications" || fail "no watchdog ping"

n_ready=$(grep -cx READY=1 "$TEST_TMP/notifications")
kill -HUP "$IOSCHEDD_PID"
wait_until 60 has -x RELOADING=1 "$TEST_TMP/notifications" || fail "no RELOADING=1"
wait_until 60 sh -c "[ \$(grep -cx READY=1 '$TEST_TMP/notifications') -gt $n_ready ]" || fail "no READY=1 after the reload"
# The Reload method is a reload too: RELOADING=1, then READY=1 again.
n_ready=$(grep -cx READY=1 "$TEST_TMP/notifications")
mgr Reload
wait_until 60 sh -c "[ \$(grep -cx RELOADING=1 '$TEST_TMP/notifications') -ge 2 ]" || fail "no RELOADING=1 for Reload"
wait_until 60 sh -c "[ \$(grep -cx READY=1 '$TEST_TMP/notifications') -gt $n_ready ]" || fail "no READY=1 after Reload"

kill "$IOSCHEDD_PID"
wait "$IOSCHEDD_PID" || fail "exit status $? on SIGTERM"
IOSCHEDD_PID=
wait_until 60 has -x STOPPING=1 "$TEST_TMP/notifications" || fail "no STOPPING=1"

log "STATUS= follows a disk that comes after READY=1"
udevd_ensure
listen "$TEST_TMP/later"
NOTIFY_SOCKET="$sock" ioschedd_start --config-root "$root"
wait_until 60 has -x READY=1 "$TEST_TMP/later" || fail "no READY=1: $(cat "$TEST_TMP/later")"
n=$(sed -n 's/^STATUS=\([0-9]*\) disks.*/\1/p' "$TEST_TMP/later" | tail -n 1)
[ -n "$n" ] || fail "no STATUS= with a disk count: $(cat "$TEST_TMP/later")"
loop_create >/dev/null
wait_until 60 grep -qx "STATUS=$((n + 1)) disks.*" "$TEST_TMP/later" ||
        fail "STATUS= still says $n disks after a new one: $(grep STATUS= "$TEST_TMP/later")"
ioschedd_stop
log "ok"
