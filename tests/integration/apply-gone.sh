#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A disk that goes away while iosched-apply runs is not an error: the run goes on with the
# other disks and exits 0. Loop devices made by loop_create really go away (LOOP_CTL_REMOVE).
# First deterministically: strace holds iosched-apply at the entry of a write while the test
# removes the disk (the write then fails with ENODEV), or removes a disk whose turn has not
# come (in --all and in a list of names), or removes the disk and makes a new one with the
# same name and number. Then for real: disks removed at random moments of an --all run.
. "$(dirname "$0")/../lib/common.sh"
require_root

conf=$TEST_TMP/gone.conf
policy() {
        { echo "[rule gone]"; echo "match.name = $(printf '%s|' "$@" | sed 's/|$//')"
          echo "nr_requests = 50"; echo "read_ahead_kb = 128"; } >"$conf"
}
nr_path() { echo "/sys/devices/virtual/block/$1/queue/nr_requests"; }

# held NAME TRACE CMD...: run CMD in the background under strace, delaying the entry of the
# first write to NAME's nr_requests by 3 s; returns when CMD is held there. Sets $held_pid.
held() {
        local name=$1 trace=$2
        shift 2
        : >"$trace"
        strace -f -qq -y -o "$trace" -P "$(nr_path "$name")" -e trace=write \
                -e inject=write:delay_enter=3000000:when=1 "$@" >"$trace.out" 2>"$trace.err" &
        held_pid=$!
        wait_until 60 grep -q 'write(' "$trace" || fail "$name: the write was never reached: $(cat "$trace.err")"
}

# no_complaint FILE: nothing at warning level or worse was logged.
no_complaint() {
        ! grep -E '^<[0-4]>' "$1" || fail "complaints logged: $(cat "$1")"
}

log "removed while its write is held: ENODEV, gone, the next disk is still done"
x=$(loop_create)
y=$(loop_create)
policy "$x" "$y"
held "$x" "$TEST_TMP/t1" "$IOSCHED_APPLY" --config "$conf" "$x" "$y"
loop_remove "$x"
rc=0
wait "$held_pid" || rc=$?
[ $rc = 0 ] || fail "exit $rc: $(cat "$TEST_TMP/t1.out" "$TEST_TMP/t1.err")"
grep -q "ENODEV" "$TEST_TMP/t1" || fail "the held write did not fail with ENODEV: $(cat "$TEST_TMP/t1")"
grep -q "^  nr_requests .* gone " "$TEST_TMP/t1.out" || fail "not reported gone: $(cat "$TEST_TMP/t1.out")"
no_complaint "$TEST_TMP/t1.err"
[ "$(qattr "$y" nr_requests)" = 50 ] && [ "$(qattr "$y" read_ahead_kb)" = 128 ] ||
        fail "$y, after the gone disk, was not done"

log "removed and made again with the same name and number while the write is held"
x=$(loop_create)
policy "$x"
held "$x" "$TEST_TMP/t2" "$IOSCHED_APPLY" --config "$conf" "$x"
loop_remove "$x"
loop_attach "${x#loop}"
fresh_nr=$(qattr "$x" nr_requests)
rc=0
wait "$held_pid" || rc=$?
[ $rc = 0 ] || fail "exit $rc: the new disk of the same number is not the one that went away: $(cat "$TEST_TMP/t2.out" "$TEST_TMP/t2.err")"
grep -q "ENODEV" "$TEST_TMP/t2" || fail "the held write did not fail with ENODEV: $(cat "$TEST_TMP/t2")"
no_complaint "$TEST_TMP/t2.err"
[ "$(qattr "$x" nr_requests)" = "$fresh_nr" ] || fail "the new $x was written by a run for the old one"
loop_remove "$x"

# Two disks in the order iosched-apply takes them (sorted by name, numbers as numbers).
pair=$(printf "%s\n" "$(loop_create)" "$(loop_create)" | sort -V)
first=$(echo "$pair" | head -1)
second=$(echo "$pair" | tail -1)

log "--all: a listed disk removed before its turn"
policy "$first" "$second"
echo 100 >"/sys/block/$first/queue/nr_requests"
held "$first" "$TEST_TMP/t3" "$IOSCHED_APPLY" --all --config "$conf"
loop_remove "$second"
rc=0
wait "$held_pid" || rc=$?
[ $rc = 0 ] || fail "--all: exit $rc: $(cat "$TEST_TMP/t3.err")"
no_complaint "$TEST_TMP/t3.err"
[ "$(qattr "$first" nr_requests)" = 50 ] || fail "$first was not done"

log "named disks: one removed before its turn (it was there when the run started)"
second=$(loop_create)
policy "$first" "$second"
echo 100 >"/sys/block/$first/queue/nr_requests"
held "$first" "$TEST_TMP/t4" "$IOSCHED_APPLY" --config "$conf" "$first" "$second"
loop_remove "$second"
rc=0
wait "$held_pid" || rc=$?
[ $rc = 0 ] || fail "names: exit $rc: $(cat "$TEST_TMP/t4.err")"
no_complaint "$TEST_TMP/t4.err"
# A name that was never there is still an error (exit 3).
rc=0
"$IOSCHED_APPLY" -q --config "$conf" "$first" "$second" 2>"$TEST_TMP/t5.err" || rc=$?
[ $rc = 3 ] || fail "a disk missing from the start: exit $rc, expected 3"
grep -q "No such disk \"$second\"" "$TEST_TMP/t5.err" || fail "$(cat "$TEST_TMP/t5.err")"
loop_remove "$first"

log "for real: disks removed while an --all run works on them"
# Each disk takes six writes, two of them queue freezes (scheduler, wbt). The test waits for
# the run to reach a disk and at once removes it (maybe mid-way through its writes) and the
# next one (before its turn); twice per round. Writes are counted per disk afterwards.
mid_runs=0
for round in 1 2 3 4 5; do
        mapfile -t disks < <(for _ in $(seq 16); do loop_create; done | sort -V)
        { echo "[rule gone]"; echo "match.name = $(printf '%s|' "${disks[@]}" | sed 's/|$//')"
          echo "scheduler = bfq mq-deadline"; echo "nr_requests = 50"; echo "wbt_lat_usec = 4000"
          echo "read_ahead_kb = 128"; echo "rq_affinity = 2"; echo "nomerges = 1"; } >"$conf"
        trace=$TEST_TMP/real.$round
        : >"$trace"
        trace_run "$trace" "$IOSCHED_APPLY" --all --config "$conf" >"$trace.out" 2>"$trace.err" &
        pid=$!
        removed=()
        for i in 4 10; do
                for _ in $(seq 2000); do
                        grep -q "block/${disks[$i]}/queue/" "$trace" && break
                        sleep 0.01
                done
                loop_remove "${disks[$i]}" "${disks[$((i + 1))]}"
                removed+=("${disks[$i]}" "${disks[$((i + 1))]}")
        done
        kill -0 "$pid" 2>/dev/null && still_running=1 || still_running=0
        rc=0
        wait "$pid" || rc=$?
        [ $rc = 0 ] || fail "round $round: exit $rc: $(cat "$trace.err")"
        no_complaint "$trace.err"
        # The disks that stayed are at their policy: a second run writes nothing to them.
        survivors=()
        for d in "${disks[@]}"; do
                [[ " ${removed[*]} " == *" $d "* ]] || survivors+=("$d")
        done
        n=$(count_sysfs_writes "$IOSCHED_APPLY" --config "$conf" "${survivors[@]}")
        [ "$n" = 0 ] || fail "round $round: the disks that stayed were not done ($n writes left)"
        # A removed disk with some of its six writes done was caught mid-way (the held write
        # above makes sure of that case; here it is luck).
        partial=
        for r in "${removed[@]}"; do
                w=$(sysfs_writes "$trace" | grep -c "^$r " || true)
                [ "$w" -gt 0 ] && [ "$w" -lt 6 ] && partial="$partial $r($w writes)"
        done
        if [ $still_running = 1 ]; then
                mid_runs=$((mid_runs + 1))
                log "round $round: removed ${removed[*]} during the run${partial:+ (caught mid-way:$partial)}; exit 0"
        fi
        loop_remove "${survivors[@]}"
        [ $mid_runs -ge 2 ] && break
done
[ $mid_runs -ge 1 ] || fail "no round removed the disks while the run was on"
log "ok"
