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

# hold: hold the node's lock shared, in the background ($holder), as udevd does, until release.
# Neither side is timed: the test waits for the waiter to be there, then lets the lock go.
fifo=$TEST_TMP/release
mkfifo "$fifo"
hold() {
        # shellcheck disable=SC2016
        flock -s "$node" sh -c 'read -r _ <"$0"' "$fifo" &
        holder=$!
        on_exit "kill $holder"
        wait_until 60 eval '! flock -n -x "$node" true' || fail "the test's lock holder did not take the lock"
}
release() {
        echo >"$fifo"
        wait "$holder" 2>/dev/null || true
}
holder_gone() { ! kill -0 "$holder" 2>/dev/null; }
# opened PID: PID has the disk's node open (the waiter for its lock is there).
opened() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q " -> $node\$"; }
set_none() { echo none >"/sys/block/$d/queue/scheduler"; }

log "iosched-apply by hand waits for the lock"
set_none
hold
"$IOSCHED_APPLY" --config "$conf" "$d" >"$TEST_TMP/apply.out" 2>&1 &
apply=$!
wait_until 60 opened "$apply" || fail "iosched-apply never opened $node: $(cat "$TEST_TMP/apply.out")"
kill -0 "$apply" 2>/dev/null || fail "iosched-apply did not wait for the lock: $(cat "$TEST_TMP/apply.out")"
[ "$(current_scheduler "$d")" = none ] || fail "the scheduler was switched while the lock was held"
release
wait "$apply" || fail "iosched-apply failed after the lock was released: $(cat "$TEST_TMP/apply.out")"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "not switched after the lock: $(current_scheduler "$d")"

log "a lock held for longer than 10 s: a failure that names it, nothing written"
set_none
hold
rc=0
"$IOSCHED_APPLY" --config "$conf" "$d" >"$TEST_TMP/timeout.out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "expected exit 1 with the lock held, got $rc: $(cat "$TEST_TMP/timeout.out")"
has "another program held the disk's lock" "$TEST_TMP/timeout.out" ||
        fail "the failure does not name the lock: $(cat "$TEST_TMP/timeout.out")"
[ "$(current_scheduler "$d")" = none ] || fail "written although the lock was held"
holder_gone && fail "the lock holder is gone: the failure was not the lock's"
release

log "run by udev for the disk's event: no lock taken (udevd holds it)"
set_none
hold
env ACTION=change SUBSYSTEM=block DEVTYPE=disk DEVNAME="$node" SEQNUM=1 \
        DEVPATH="$(realpath --relative-to=/sys "/sys/block/$d" | sed 's|^|/|')" \
        "$IOSCHED_APPLY" --config "$conf" "$d" >"$TEST_TMP/udev.out" 2>&1 ||
        fail "iosched-apply under udev's environment failed: $(cat "$TEST_TMP/udev.out")"
holder_gone && fail "the lock holder is gone: the helper could have waited for it"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "under udev: not switched: $(current_scheduler "$d")"
release

log "ioschedd waits for the lock"
bus_start
ioschedd_start --config "$conf"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "ioschedd's first pass did not switch $d"
set_none
hold
mgr Apply s "$d" >"$TEST_TMP/bus.out" 2>&1 &
call=$!
wait_until 60 opened "$IOSCHEDD_PID" || fail "ioschedd never opened $node: $(cat "$TEST_TMP/bus.out")"
[ "$(current_scheduler "$d")" = none ] || fail "ioschedd switched the scheduler while the lock was held"
kill -0 "$call" 2>/dev/null || fail "Apply returned while the lock was held: $(cat "$TEST_TMP/bus.out")"
release
wait "$call" || fail "Apply failed: $(cat "$TEST_TMP/bus.out")"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "ioschedd did not switch after the lock: $(current_scheduler "$d")"
ioschedd_stop
log "ok"
