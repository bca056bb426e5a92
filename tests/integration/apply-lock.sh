#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A scheduler switch is made under udev's lock on the disk's device node (flock LOCK_EX,
# systemd.io/BLOCK_DEVICE_LOCKING): while another program holds the lock shared, as udevd does
# while it runs a disk's rules, neither iosched-apply run by hand nor ioschedd switches the
# scheduler; each does as soon as it is released. (On 6.16-6.18 a udev rule's switch and ours
# of one queue at once can oops the kernel.) A lock held for longer than 10 s is a named
# failure (exit 1) and the scheduler is left as it is. Run by udev for the disk's event, the
# helper takes no lock: udevd holds it for that event itself.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
command -v flock >/dev/null || fail "flock is not installed (util-linux)"

d=$(loop_create)
node=/dev/$d
[ -b "$node" ] || fail "$node is not a block device node"
conf=$TEST_TMP/lock.conf
printf '[rule lock]\nmatch.name = %s\nscheduler = mq-deadline\n' "$d" >"$conf"

# hold SECONDS: hold the node's lock shared, in the background ($holder), as udevd does.
hold() {
        flock -s "$node" sleep "$1" &
        holder=$!
        wait_until 5 eval '! flock -n -x "$node" true' || fail "the test's lock holder did not take the lock"
}
holder_gone() { ! kill -0 "$holder" 2>/dev/null; }
set_none() { echo none >"/sys/block/$d/queue/scheduler"; }

log "iosched-apply by hand waits for the lock"
set_none
hold 2
"$IOSCHED_APPLY" --config "$conf" "$d" >"$TEST_TMP/apply.out" 2>&1 &
apply=$!
sleep 1
kill -0 "$apply" 2>/dev/null || fail "iosched-apply did not wait for the lock: $(cat "$TEST_TMP/apply.out")"
[ "$(current_scheduler "$d")" = none ] || fail "the scheduler was switched while the lock was held"
wait "$apply" || fail "iosched-apply failed after the lock was released: $(cat "$TEST_TMP/apply.out")"
holder_gone || fail "iosched-apply returned while the lock was still held"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "not switched after the lock: $(current_scheduler "$d")"

log "a lock held for longer than 10 s: a failure that names it, nothing written"
set_none
hold 14
rc=0
"$IOSCHED_APPLY" --config "$conf" "$d" >"$TEST_TMP/timeout.out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "expected exit 1 with the lock held, got $rc: $(cat "$TEST_TMP/timeout.out")"
has "another program held the disk's lock" "$TEST_TMP/timeout.out" ||
        fail "the failure does not name the lock: $(cat "$TEST_TMP/timeout.out")"
[ "$(current_scheduler "$d")" = none ] || fail "written although the lock was held"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true

log "run by udev for the disk's event: no lock taken (udevd holds it)"
set_none
hold 5
env ACTION=change SUBSYSTEM=block DEVTYPE=disk DEVNAME="$node" SEQNUM=1 \
        DEVPATH="$(realpath --relative-to=/sys "/sys/block/$d" | sed 's|^|/|')" \
        "$IOSCHED_APPLY" --config "$conf" "$d" >"$TEST_TMP/udev.out" 2>&1 ||
        fail "iosched-apply under udev's environment failed: $(cat "$TEST_TMP/udev.out")"
kill -0 "$holder" 2>/dev/null || fail "under udev's environment the helper waited for the lock"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "under udev: not switched: $(current_scheduler "$d")"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true

log "ioschedd waits for the lock"
bus_start
ioschedd_start --config "$conf"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "ioschedd's first pass did not switch $d"
set_none
hold 2
mgr Apply s "$d" >"$TEST_TMP/bus.out" 2>&1 &
call=$!
sleep 1
[ "$(current_scheduler "$d")" = none ] || fail "ioschedd switched the scheduler while the lock was held"
wait "$call" || fail "Apply failed: $(cat "$TEST_TMP/bus.out")"
holder_gone || fail "Apply returned while the lock was still held"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "ioschedd did not switch after the lock: $(current_scheduler "$d")"
ioschedd_stop
log "ok"
