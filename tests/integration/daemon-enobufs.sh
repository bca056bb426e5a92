#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The udev monitor overflows (a tiny receive buffer, the daemon stopped while udevd sends a
# burst of events): ioschedd sees ENOBUFS, reads every disk again, and a disk that drifted
# meanwhile (a scheduler write emits no event) is brought back.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
udevd_ensure

a=$(loop_new)
b=$(loop_new)
config_root test "match.name = $a|$b" "scheduler = mq-deadline"
bus_start
ioschedd_start --config-root "$root" --monitor-buffer=1024
[ "$(current_scheduler "$a")" = mq-deadline ] || fail "first pass"

kill -STOP "$IOSCHEDD_PID"
on_exit "kill -CONT $IOSCHEDD_PID"
echo none >"/sys/block/$a/queue/scheduler"
for _ in $(seq 20); do
        udevadm trigger --action=change "/sys/class/block/$b"
done
udevadm settle --timeout=30
kill -CONT "$IOSCHEDD_PID"

wait_until 60 has "lost events" "$IOSCHEDD_LOG" || fail "no ENOBUFS seen (buffer not small enough?)"
wait_until 60 sh -c "grep -q '\\[mq-deadline\\]' /sys/block/$a/queue/scheduler" \
        || fail "the rescan did not restore $a: $(qattr "$a" scheduler)"
mgr ListDisks | has "\"$a\"" || fail "$a missing after the rescan"
ioschedd_alive || fail "ioschedd died"
log "ok"
