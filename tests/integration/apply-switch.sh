#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A scheduler switch on the real kernel resets the tunables and nr_requests and changes wbt:
# iosched-apply decides them again after the switch, on the values the kernel shows then.
# Each case names the exact writes it expects (strace), then a second run writes nothing.
. "$(dirname "$0")/../lib/common.sh"
require_root

d=$(loop_create)
q=/sys/block/$d/queue
grep -qw bfq "$q/scheduler" || modprobe bfq 2>/dev/null || true
grep -qw bfq "$q/scheduler" || skip "this kernel offers no bfq (no module either)"

# The rotational flag of a loop device follows its backing file's disk.
[ "$(cat "$q/rotational")" = 1 ] && wbt_default=75000 || wbt_default=2000

# run NAME POLICY-LINES...: apply the policy to $d under strace; $TEST_TMP/NAME.w lists the
# attributes written, in order, comma separated.
run() {
        local name=$1
        shift
        { echo "[rule switch]"; echo "match.name = $d"; printf '%s\n' "$@"; } >"$TEST_TMP/$name.conf"
        trace_run "$TEST_TMP/$name.trace" "$IOSCHED_APPLY" --config "$TEST_TMP/$name.conf" "$d" \
                >"$TEST_TMP/$name.out" 2>&1 || fail "$name: exit $?: $(cat "$TEST_TMP/$name.out")"
        sysfs_writes "$TEST_TMP/$name.trace" | awk -v d="$d" '$1 == d { print $2 }' | paste -sd, \
                >"$TEST_TMP/$name.w"
        # Converged: the same policy again writes nothing.
        n=$(count_sysfs_writes "$IOSCHED_APPLY" --config "$TEST_TMP/$name.conf" "$d")
        [ "$n" = 0 ] || fail "$name: the run after wrote $n times"
}
writes() { cat "$TEST_TMP/$1.w"; }
expect_writes() {
        [ "$(writes "$1")" = "$2" ] || fail "$1: wrote \"$(writes "$1")\", expected \"$2\""
}
is() { [ "$(cat "$q/$1")" = "$2" ] || fail "$1 is $(cat "$q/$1"), expected $2"; }

echo mq-deadline >"$q/scheduler"
echo 64 >"$q/nr_requests"

log "mq-deadline -> bfq: nr_requests equal before the switch is written after it"
# low_latency = 1 is bfq's default: decided after the switch, it is not written.
# wbt "default": bfq turns the default wbt off, which is bfq's default: not written.
run to-bfq "scheduler = bfq" "iosched.slice_idle = 0" "iosched.low_latency = 1" \
        "nr_requests = 64" "wbt_lat_usec = default"
expect_writes to-bfq "scheduler,iosched/slice_idle,nr_requests"
[ "$(current_scheduler "$d")" = bfq ] || fail "not bfq"
is iosched/slice_idle 0
is iosched/low_latency 1
is nr_requests 64
is wbt_lat_usec 0

log "bfq -> mq-deadline: fifo_batch at the new default is not written"
run to-dl "scheduler = mq-deadline" "iosched.fifo_batch = 16" "iosched.front_merges = 0" \
        "nr_requests = 64" "wbt_lat_usec = default"
w=$(writes to-dl)
# Leaving bfq gives the default wbt back; its latency is the default or, on a queue whose
# rotational flag changed since wbt was set up, a stale one that "default" then rewrites.
[ "$w" = "scheduler,iosched/front_merges,nr_requests" ] ||
        [ "$w" = "scheduler,iosched/front_merges,nr_requests,wbt_lat_usec" ] ||
        fail "to-dl: wrote \"$w\""
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "not mq-deadline"
is iosched/fifo_batch 16
is iosched/front_merges 0
is nr_requests 64
is wbt_lat_usec "$wbt_default"

log "a wbt number set by hand survives the switch to bfq: not written again"
echo 4000 >"$q/wbt_lat_usec"
run num-bfq "scheduler = bfq" "wbt_lat_usec = 4000"
expect_writes num-bfq "scheduler"
is wbt_lat_usec 4000

log "and the switch back"
run num-dl "scheduler = mq-deadline" "wbt_lat_usec = 4000"
expect_writes num-dl "scheduler"
is wbt_lat_usec 4000

log "wbt off with bfq: the number survives the switch, so it is turned off after it"
run off-bfq "scheduler = bfq" "wbt_lat_usec = off"
expect_writes off-bfq "scheduler,wbt_lat_usec"
is wbt_lat_usec 0

log "leaving bfq with wbt off by hand: default is written after the switch"
run default-dl "scheduler = mq-deadline" "wbt_lat_usec = default"
expect_writes default-dl "scheduler,wbt_lat_usec"
is wbt_lat_usec "$wbt_default"

log "a switch and a wbt number: written once, after the switch"
run num2-bfq "scheduler = bfq" "wbt_lat_usec = 2500" "nr_requests = 100"
expect_writes num2-bfq "scheduler,nr_requests,wbt_lat_usec"
is wbt_lat_usec 2500
is nr_requests 100

log "kyber's tunables, and none (which has no tunables nor a depth of its own)"
if grep -qw kyber "$q/scheduler" || modprobe kyber-iosched 2>/dev/null; then
        run to-kyber "scheduler = kyber" "iosched.read_lat_nsec = 1000000" "nr_requests = 100"
        expect_writes to-kyber "scheduler,iosched/read_lat_nsec,nr_requests"
        is iosched/read_lat_nsec 1000000
fi
run to-none "scheduler = none" "iosched.fifo_batch = 4" "nr_requests = 64"
w=$(writes to-none)
case "$w" in
scheduler,nr_requests|scheduler) ;;
*) fail "to-none: wrote \"$w\" (a tunable of another scheduler must never be written)" ;;
esac
grep -q 'iosched.fifo_batch .*not a tunable of none' "$TEST_TMP/to-none.out" ||
        fail "to-none: fifo_batch not reported as not applicable: $(cat "$TEST_TMP/to-none.out")"
is nr_requests 64
log "ok"
