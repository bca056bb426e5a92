#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kill -9 of iosched-apply in the middle of a 256-disk run (docs/reliability.md, "Faults"):
# nothing is left half-written (each attribute has its old or its new value), the next run
# brings every disk to its policy, and the run after that writes nothing.
. "$(dirname "$0")/../lib/common.sh"
require_root

N=${IOSCHED_FAULT_DISKS:-256}

# N unbound loop devices of our own at indices B..B+N-1, far above what "losetup --find" hands
# out (their queues are all there; no backing files, no I/O).
B=$(loop_pick_free "$N")
loop_add "$B" "$N"
disks=()
for ((i = 0; i < N; i++)); do disks+=("loop$((B + i))"); done
for d in "${disks[@]}"; do
        wait_until 60 test -e "/sys/class/block/$d/queue/nr_requests" || fail "$d has no queue"
done
log "$N loop devices loop$B..loop$((B + N - 1))"

# One rule per 15 names: a config line holds at most 198 characters.
conf="$TEST_TMP/kill.conf"
: >"$conf"
for ((i = 0; i < N; i += 15)); do
        names=$(IFS='|'; echo "${disks[*]:i:15}")
        cat >>"$conf" <<CONF
[rule storm-$i]
match.name = $names
scheduler = mq-deadline
nr_requests = 32
wbt_lat_usec = 3000
read_ahead_kb = 64
CONF
done

# "DISK SCHEDULER NR_REQUESTS WBT READ_AHEAD" for every disk, in a few processes.
snapshot() {
        local a
        for a in scheduler nr_requests wbt_lat_usec read_ahead_kb; do
                printf '/sys/class/block/%s/queue/'"$a"'\n' "${disks[@]}" | xargs grep -H . 2>/dev/null |
                        sed -E 's|^/sys/class/block/([^/]+)/queue/[a-z_]+:|\1 |' |
                        sed -E 's/^([^ ]+) .*\[([a-z-]+)\].*/\1 \2/' | sort >"$TEST_TMP/snap.$a"
        done
        join "$TEST_TMP/snap.scheduler" "$TEST_TMP/snap.nr_requests" |
                join -a1 -e - -o 0,1.2,1.3,2.2 - "$TEST_TMP/snap.wbt_lat_usec" |
                join - "$TEST_TMP/snap.read_ahead_kb"
}
snapshot >"$TEST_TMP/before"
[ "$(wc -l <"$TEST_TMP/before")" = "$N" ] || fail "cannot read the disks' settings"

# The run, killed once a third of the disks have their scheduler.
"$IOSCHED_APPLY" --quiet --config "$conf" "${disks[@]}" 2>/dev/null &
pid=$!
sched_files=()
for d in "${disks[@]}"; do sched_files+=("/sys/class/block/$d/queue/scheduler"); done
third() {
        [ "$(grep -l '\[mq-deadline\]' "${sched_files[@]}" | wc -l)" -ge $((N / 3)) ]
}
wait_until 300 third || { kill "$pid" || true; fail "no progress"; }
kill -9 "$pid" 2>/dev/null || fail "iosched-apply ended before it could be killed; make N larger"
rc=0
wait "$pid" || rc=$?
[ $rc = 137 ] || fail "expected the run to die of SIGKILL, exit $rc"

# Nothing torn: each attribute is the policy's or the one it had.
snapshot >"$TEST_TMP/after"
n_done=0
while read -r d s0 n0 w0 r0 s n w r; do
        [ "$s" = mq-deadline ] || [ "$s" = "$s0" ] || fail "$d: scheduler $s"
        [ "$r" = 64 ] || [ "$r" = "$r0" ] || fail "$d: read_ahead_kb $r, neither 64 nor $r0"
        # A scheduler switch resets nr_requests and may change wbt: whatever the kernel set is
        # fine for those until the next run; they must merely be numbers.
        [[ $n =~ ^[0-9]+$ ]] || fail "$d: nr_requests \"$n\""
        [ "$s $n $w $r" = "mq-deadline 32 3000 64" ] && n_done=$((n_done + 1))
done < <(join "$TEST_TMP/before" "$TEST_TMP/after")
log "killed after $n_done of $N disks were done"
[ $n_done -lt $N ] || fail "every disk was done before the kill: the fault was not exercised"

# The next run converges.
start=$SECONDS
"$IOSCHED_APPLY" --quiet --config "$conf" "${disks[@]}" 2>/dev/null || fail "the run after the kill failed"
snapshot >"$TEST_TMP/final"
bad=$(grep -vc ' mq-deadline 32 3000 64$' "$TEST_TMP/final" || true)
[ "$bad" = 0 ] && [ "$(wc -l <"$TEST_TMP/final")" = "$N" ] ||
        fail "$bad disks are not at their policy after the run that followed the kill"
log "the run after the kill converged all $N disks in $((SECONDS - start)) s"

# And the one after that writes nothing.
n=$(count_sysfs_writes "$IOSCHED_APPLY" --quiet --config "$conf" "${disks[@]}")
[ "$n" = 0 ] || fail "a converged run wrote $n attributes"
log "ok"
