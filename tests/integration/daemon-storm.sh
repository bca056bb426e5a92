#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A policy change of many disks at once (a Reload that switches every scheduler), checked by its
# structure, not by a clock: the pool runs jobs of different disks at the same time, the loop
# answers property reads while every worker it has is stuck in a write, and a stuck disk holds
# up no other. The workers are made to wait deterministically: a scheduler switch waits for
# udev's lock on the disk's node (flock, as udevd takes it), which this test holds. How much
# faster the pool is than one writer is a benchmark figure (bench/storm).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
command -v flock >/dev/null || fail "flock is not installed (util-linux)"

N=${IOSCHED_STORM_DISKS:-16}
disks=()
for _ in $(seq "$N"); do
        disks+=("$(loop_new 4)")
done
config_root </dev/null   # write_conf fills it

# write_conf SCHEDULER NR_REQUESTS: rules of 8 names (a line holds at most 198 characters).
write_conf() {
        local i=0 names
        : >"$conf.new"
        while [ $i -lt "$N" ]; do
                names=$(IFS='|'; echo "${disks[*]:$i:8}")
                printf '[rule storm%d]\nmatch.name = %s\nscheduler = %s\nnr_requests = %s\n\n' \
                        "$i" "$names" "$1" "$2" >>"$conf.new"
                i=$((i + 8))
        done
        mv "$conf.new" "$conf"
}

# at SCHEDULER DISK...: every DISK runs SCHEDULER.
at() {
        local s=$1 d
        shift
        for d in "$@"; do
                [ "$(current_scheduler "$d")" = "$s" ] || return 1
        done
}

# hold DISK: hold DISK's node lock shared, in the background, until release_all (each holder
# reads a fifo of its own).
holders=()
hold() {
        local node=/dev/$1 fifo=$TEST_TMP/release.$1
        mkfifo "$fifo"
        # shellcheck disable=SC2016
        flock -s "$node" sh -c 'read -r _ <"$0"' "$fifo" &
        holders+=("$!:$fifo")
        on_exit "kill $!"
        wait_until 60 eval "! flock -n -x $node true" || fail "the test's lock holder did not take $node"
}
release_all() {
        local h
        for h in "${holders[@]}"; do
                echo >"${h#*:}"
                wait "${h%%:*}" 2>/dev/null || true
                rm -f "${h#*:}"
        done
        holders=()
}
# waiting DISK: a worker of ioschedd has DISK's node open: it waits for the node's lock.
waiting() { ls -l "/proc/$IOSCHEDD_PID/fd" 2>/dev/null | grep -q " -> /dev/$1\$"; }

bus_start
write_conf mq-deadline 32

log "two workers stuck at once; the other disks proceed; reads are answered"
ioschedd_start --config-root "$root" --workers=32 --no-monitor
at mq-deadline "${disks[@]}" || fail "the first pass did not set mq-deadline"
write_conf none 16
hold "${disks[0]}"
hold "${disks[1]}"
mgr Reload >"$TEST_TMP/reload.out" 2>&1 &
reload=$!
# Both switches wait at the same time: the jobs of two disks run in parallel.
both_waiting() { waiting "${disks[0]}" && waiting "${disks[1]}"; }
wait_until 60 both_waiting || fail "the two held disks were never waited for at once: $(cat "$TEST_TMP/reload.out")"
# The other disks are not held up by them.
wait_until 120 at none "${disks[@]:2}" || fail "disks behind the two held ones did not switch"
[ "$(current_scheduler "${disks[0]}")" = mq-deadline ] || fail "${disks[0]} switched while its lock was held"
# The loop answers while workers wait in a write.
[ "$(disk_current "${disks[0]}" scheduler)" = mq-deadline ] || fail "no answer for ${disks[0]} while its write waits"
mgr ListDisks | has "\"${disks[1]}\"" || fail "ListDisks not answered while writes wait"
kill -0 "$reload" 2>/dev/null || fail "Reload returned before its jobs were done: $(cat "$TEST_TMP/reload.out")"
release_all
wait "$reload" || fail "Reload failed: $(cat "$TEST_TMP/reload.out")"
at none "${disks[@]}" || fail "Reload did not switch every disk"
ioschedd_stop

log "one worker, stuck: the loop still answers"
write_conf mq-deadline 32
ioschedd_start --config-root "$root" --workers=1 --no-monitor
at mq-deadline "${disks[@]}" || fail "the first pass did not set mq-deadline"
write_conf none 16
hold "${disks[0]}"
mgr Reload >"$TEST_TMP/reload.out" 2>&1 &
reload=$!
wait_until 60 waiting "${disks[0]}" || fail "${disks[0]} was never waited for: $(cat "$TEST_TMP/reload.out")"
disk_prop "${disks[1]}" Current >/dev/null || fail "no property answer while the only worker waits"
mgr ListDisks | has "\"${disks[0]}\"" || fail "ListDisks not answered while the only worker waits"
release_all
wait "$reload" || fail "Reload failed: $(cat "$TEST_TMP/reload.out")"
at none "${disks[@]}" || fail "Reload did not switch every disk"
ioschedd_stop
log "ok"
