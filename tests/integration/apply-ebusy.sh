#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# EBUSY: on 6.18 a write to nr_requests fails with EBUSY while another writer holds the
# queue's update_nr_hwq_lock (a scheduler write does). iosched-apply retries with a bounded
# back-off. First for real: a competing shell loop hammers the scheduler of the same disk
# while iosched-apply writes nr_requests; strace must show iosched-apply's own write failing
# with EBUSY, and the run must still end at the policy with exit 0. Then deterministically,
# with strace injecting EBUSY: a few are retried away, an endless one is a failure (exit 1).
. "$(dirname "$0")/../lib/common.sh"
require_root

d=$(loop_create)
q=/sys/block/$d/queue
nr=/sys/devices/virtual/block/$d/queue/nr_requests
[ "$(readlink -f "$q/nr_requests")" = "$nr" ] || fail "unexpected sysfs path $(readlink -f "$q/nr_requests")"
conf=$TEST_TMP/busy.conf
printf '[rule busy]\nmatch.name = %s\nscheduler = mq-deadline\nnr_requests = 32\n' "$d" >"$conf"
echo mq-deadline >"$q/scheduler"

# set_by_hand VALUE: put nr_requests back, retrying our own EBUSY (a competitor may linger).
set_by_hand() {
        for _ in $(seq 100); do
                echo "$1" 2>/dev/null >"$q/nr_requests" && return 0
                sleep 0.01
        done
        fail "cannot reset nr_requests"
}

log "a real competitor: the same disk's scheduler written in a loop"
busy_rounds=0
for round in $(seq 20); do
        set_by_hand 128
        trace=$TEST_TMP/real.$round
        : >"$trace"
        # The competitor writes the scheduler iosched-apply wants too (two tools that agree):
        # each write takes the lock and freezes the queue. It stops once iosched-apply got its
        # EBUSY, when iosched-apply is done, or after 400 writes.
        (
                for _ in $(seq 400); do
                        echo mq-deadline 2>/dev/null >"$q/scheduler" || true
                        [ -e "$TEST_TMP/started.$round" ] || : >"$TEST_TMP/started.$round"
                        grep -q EBUSY "$trace" && break
                        [ -e "$TEST_TMP/done.$round" ] && break
                done
        ) &
        competitor=$!
        wait_until 60 test -e "$TEST_TMP/started.$round" || fail "round $round: the competitor did not begin"
        rc=0
        trace_run "$trace" "$IOSCHED_APPLY" --config "$conf" "$d" >"$TEST_TMP/out.$round" 2>&1 || rc=$?
        touch "$TEST_TMP/done.$round"
        wait "$competitor"
        [ $rc = 0 ] || fail "round $round: exit $rc: $(cat "$TEST_TMP/out.$round")"
        [ "$(cat "$q/nr_requests")" = 32 ] || fail "round $round: nr_requests $(cat "$q/nr_requests")"
        sysfs_writes "$trace" | grep "^$d nr_requests " >"$TEST_TMP/nrw" || true
        n_busy=$(grep -c ' EBUSY' "$TEST_TMP/nrw" || true)
        if [ "$n_busy" -gt 0 ]; then
                # Retried until a write went through: the last one succeeded.
                tail -1 "$TEST_TMP/nrw" | grep "^$d nr_requests 32 2$" >/dev/null ||
                        fail "round $round: the last write did not succeed: $(cat "$TEST_TMP/nrw")"
                log "round $round: $n_busy EBUSY, then written; exit 0"
                busy_rounds=$((busy_rounds + 1))
                [ $busy_rounds -ge 3 ] && break
        fi
done
[ $busy_rounds -ge 1 ] || fail "no EBUSY in 20 rounds against a competing writer: is this kernel older than 6.18?"

log "injected: EBUSY three times, then the write goes through"
set_by_hand 128
strace -f -qq -y -o "$TEST_TMP/inj3" -P "$nr" -e trace=write -e inject=write:error=EBUSY:when=1..3 \
        "$IOSCHED_APPLY" --config "$conf" "$d" >/dev/null || fail "three EBUSY were not retried away"
[ "$(cat "$q/nr_requests")" = 32 ] || fail "nr_requests $(cat "$q/nr_requests")"
sysfs_writes "$TEST_TMP/inj3" >"$TEST_TMP/inj3w"
[ "$(grep -c "^$d nr_requests 32 -1 EBUSY" "$TEST_TMP/inj3w")" = 3 ] &&
        [ "$(sed -n 4p "$TEST_TMP/inj3w")" = "$d nr_requests 32 2" ] &&
        [ "$(wc -l <"$TEST_TMP/inj3w")" = 4 ] || fail "expected 3 refused writes and a good one: $(cat "$TEST_TMP/inj3w")"

log "injected: EBUSY for ever is a failure, after a bounded number of tries"
set_by_hand 128
rc=0
strace -f -qq -o "$TEST_TMP/inj" -P "$nr" -e trace=write -e inject=write:error=EBUSY \
        "$IOSCHED_APPLY" --config "$conf" "$d" >"$TEST_TMP/injout" 2>&1 || rc=$?
[ $rc = 1 ] || fail "endless EBUSY: exit $rc, expected 1"
grep -q 'nr_requests.*Device or resource busy' "$TEST_TMP/injout" || fail "no reason: $(cat "$TEST_TMP/injout")"
n=$(grep -c 'EBUSY.*INJECTED' "$TEST_TMP/inj" || true)
[ "$n" -ge 2 ] && [ "$n" -le 20 ] || fail "endless EBUSY: $n tries, expected a bounded retry"
[ "$(cat "$q/nr_requests")" = 128 ] || fail "nr_requests changed"
log "ok ($busy_rounds real rounds with EBUSY; $n tries before giving up)"
