#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ioschedd in a storm of 256 new disks (docs/reliability.md, "Faults"), with real udev events:
#   1. kill -9 in the middle of the storm; a new ioschedd brings every disk to its policy, and
#      no value was left torn;
#   2. Reload onto another policy in the middle of the storm, several times; every disk ends
#      at the last policy and ioschedd stays up.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root

N=${IOSCHED_FAULT_DISKS:-256}
udevd_ensure

# A block of N free loop indices (loop_pick_free); the disks are created (loop_add: an "add"
# uevent each, in one process) only once ioschedd runs, and removed together.
storm_add() { loop_add "$B" "$N"; }
storm_remove() { loop_remove "${disks[@]}"; }

# write_conf SCHEDULER NR_REQUESTS READ_AHEAD: the policy of the N disks, 15 names a rule.
write_conf() {
        local i names
        : >"$conf.new"
        for ((i = 0; i < N; i += 15)); do
                names=$(IFS='|'; echo "${disks[*]:i:15}")
                printf '[rule storm%d]\nmatch.name = %s\nscheduler = %s\nnr_requests = %s\nread_ahead_kb = %s\n\n' \
                        "$i" "$names" "$1" "$2" "$3" >>"$conf.new"
        done
        mv "$conf.new" "$conf"
}

# "DISK SCHEDULER NR_REQUESTS READ_AHEAD" of every disk that exists.
snapshot() {
        local a
        for a in scheduler nr_requests read_ahead_kb; do
                printf '/sys/class/block/%s/queue/'"$a"'\n' "${disks[@]}" | xargs grep -H . 2>/dev/null |
                        sed -E 's|^/sys/class/block/([^/]+)/queue/[a-z_]+:|\1 |' |
                        sed -E 's/^([^ ]+) .*\[([a-z-]+)\].*/\1 \2/' | sort >"$TEST_TMP/snap.$a"
        done
        join "$TEST_TMP/snap.scheduler" "$TEST_TMP/snap.nr_requests" | join - "$TEST_TMP/snap.read_ahead_kb"
}

count_at() {
        snapshot | grep -c " $1\$" || true
}

# How many of the disks have nr_requests N now (one process: cheap enough to poll). The
# policy's nr_requests is written after the scheduler: it marks progress.
count_nr() {
        printf '/sys/class/block/%s/queue/nr_requests\n' "${disks[@]}" | xargs grep -lx "$1" 2>/dev/null | wc -l
}
third_done() { [ "$(count_nr 32)" -ge $((N / 3)) ]; }
all_at() { [ "$(count_at "$1")" = "$N" ]; }

config_root </dev/null   # write_conf fills it
bus_start

# ---- 1. kill -9 in the middle of the storm ----
B=$(loop_pick_free "$N")
disks=()
for ((i = 0; i < N; i++)); do disks+=("loop$((B + i))"); done
write_conf mq-deadline 32 64
# One writer: the storm lasts long enough (about 20 s here) for the kill to land in it.
ioschedd_start --config-root "$root" --workers=1
storm_add
# Kill once a third of the disks have their nr_requests.
wait_until 300 third_done || fail "no progress in the storm"
kill -9 "$IOSCHEDD_PID"
wait "$IOSCHEDD_PID" 2>/dev/null || true
IOSCHEDD_PID=
done_at_kill=$(count_at "mq-deadline 32 64")
log "killed ioschedd with $done_at_kill of $N disks at their policy"
[ "$done_at_kill" -lt "$N" ] || fail "the storm was over before the kill landed: nothing was tested"
# Nothing torn: the scheduler is one of the two, the numbers are numbers.
snapshot | awk '$2 != "none" && $2 != "mq-deadline" { print; bad = 1 } $3 !~ /^[0-9]+$/ || $4 !~ /^[0-9]+$/ { print; bad = 1 } END { exit bad }' ||
        fail "a torn value after the kill"
start=$SECONDS
ioschedd_start --config-root "$root"
# The name is taken after the first pass: every disk is done by now.
n=$(count_at "mq-deadline 32 64")
[ "$n" = "$N" ] || fail "after the restart, $n of $N disks are at their policy"
log "restarted: all $N disks at their policy $((SECONDS - start)) s later"
ioschedd_stop
storm_remove
gone() { [ ! -e "/sys/class/block/${disks[0]}" ]; }
wait_until 60 gone || fail "the disks did not go away"

# ---- 2. Reload in the middle of the storm ----
B=$(loop_pick_free "$N")
disks=()
for ((i = 0; i < N; i++)); do disks+=("loop$((B + i))"); done
write_conf mq-deadline 32 64
ioschedd_start --config-root "$root" --workers=2
storm_add &
adder=$!
# Each reload comes once another fifth of the disks exists (or the adder is done): in the
# storm, on a fast machine or a slow one.
grown() { ! kill -0 "$adder" 2>/dev/null || [ "$(ls /sys/class/block | grep -c "^loop")" -ge "$1" ]; }
loops_before=$(ls /sys/class/block | grep -c "^loop" || true)
reloads=0
for policy in "none 64 128" "mq-deadline 48 96" "none 16 32" "mq-deadline 24 48"; do
        wait_until 300 grown $((loops_before + (reloads + 1) * N / 5)) || fail "the storm of adds stalled"
        # shellcheck disable=SC2086
        write_conf $policy
        if [ $((reloads % 2)) = 0 ]; then
                mgr Reload >/dev/null || fail "Reload failed in the storm"
        else
                kill -HUP "$IOSCHEDD_PID"
        fi
        reloads=$((reloads + 1))
done
wait $adder
wait_until 300 all_at "mq-deadline 24 48" ||
        fail "after $reloads reloads in the storm, $(count_at "mq-deadline 24 48") of $N disks are at the last policy"
ioschedd_alive || fail "ioschedd died"
mgr ListDisks | has "\"${disks[$((N - 1))]}\"" || fail "ListDisks lacks the last disk"
log "$reloads reloads (Reload and SIGHUP) during the storm: all $N disks at the last policy"
log "ok"
