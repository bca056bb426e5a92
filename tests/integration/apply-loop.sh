#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# iosched-apply on real loop devices: every key of the config is set on the real kernel, a
# second run writes nothing (counted with strace), each attribute that drifts costs exactly one
# write, --dry-run writes nothing, and the exit codes are the documented ones.
. "$(dirname "$0")/../lib/common.sh"
require_root

# New indexes: the kernel's defaults, not what an earlier test left on a reused device.
a=$(loop_create)
b=$(loop_create)
conf=$TEST_TMP/test.conf
cat >"$conf" <<CONF
[rule test]
match.name = $a|$b
scheduler = mq-deadline
iosched.fifo_batch = 8
iosched.read_expire = 250
iosched.writes_starved = 3
iosched.front_merges = 0
nr_requests = 32
wbt_lat_usec = 3000
read_ahead_kb = 64
max_sectors_kb = 256
rq_affinity = 2
nomerges = 1
add_random = 1
iostats = 0
CONF

# attribute below queue/ and the value the kernel must show afterwards
expect=(
        "iosched/fifo_batch 8"
        "iosched/read_expire 250"
        "iosched/writes_starved 3"
        "iosched/front_merges 0"
        "nr_requests 32"
        "wbt_lat_usec 3000"
        "read_ahead_kb 64"
        "max_sectors_kb 256"
        "rq_affinity 2"
        "nomerges 1"
        "add_random 1"
        "iostats 0"
)
check_all() {
        local d=$1 e
        [ "$(current_scheduler "$d")" = mq-deadline ] || fail "$d: scheduler $(qattr "$d" scheduler)"
        for e in "${expect[@]}"; do
                set -- $e
                if [ "$1" = iosched/read_expire ]; then
                        # Kept in jiffies: the kernel rounds it up to a whole tick (at most 10 ms).
                        v=$(qattr "$d" "$1")
                        [ "$v" -ge "$2" ] && [ "$v" -lt $(($2 + 10)) ] ||
                                fail "$d: $1 is $v, expected $2 rounded up to a tick"
                        continue
                fi
                [ "$(qattr "$d" "$1")" = "$2" ] || fail "$d: $1 is $(qattr "$d" "$1"), expected $2"
        done
}

log "first run: sets every key"
trace_run "$TEST_TMP/run1" "$IOSCHED_APPLY" --config "$conf" "$a" "$b" >"$TEST_TMP/out1" ||
        fail "first run failed: $(cat "$TEST_TMP/out1")"
check_all "$a"
check_all "$b"
# One write per attribute that differed from the new device's defaults, none of them failed.
sysfs_writes "$TEST_TMP/run1" >"$TEST_TMP/w1"
awk '$4 == "-1"' "$TEST_TMP/w1" | grep . && fail "a write of the first run failed"
for d in "$a" "$b"; do
        [ "$(grep -c "^$d scheduler " "$TEST_TMP/w1")" = 1 ] || fail "$d: scheduler not written once"
        dup=$(awk -v d="$d" '$1 == d { print $2 }' "$TEST_TMP/w1" | sort | uniq -d)
        [ -z "$dup" ] || fail "$d: written more than once: $dup"
done
grep -q "^$a iosched/fifo_batch 8 " "$TEST_TMP/w1" || fail "fifo_batch was not written"
n=$(wc -l <"$TEST_TMP/w1")
grep -q "^$n changed, $((26 - n)) already right, 0 failed, 0 not applicable" "$TEST_TMP/out1" ||
        fail "the summary does not count $n writes: $(tail -1 "$TEST_TMP/out1")"

log "second run: zero writes"
trace_run "$TEST_TMP/run2" "$IOSCHED_APPLY" --config "$conf" "$a" "$b" >"$TEST_TMP/out2" ||
        fail "second run failed"
n=$(sysfs_writes "$TEST_TMP/run2" | wc -l)
[ "$n" = 0 ] || fail "second run wrote $n times: $(sysfs_writes "$TEST_TMP/run2")"
grep -q "^0 changed, 26 already right, 0 failed, 0 not applicable" "$TEST_TMP/out2" ||
        fail "second run summary: $(tail -1 "$TEST_TMP/out2")"

log "drift: each attribute changed behind our back costs exactly one write"
drift=(
        "iosched/fifo_batch 4"
        "iosched/read_expire 300"
        "iosched/writes_starved 2"
        "iosched/front_merges 1"
        "nr_requests 64"
        "wbt_lat_usec 5000"
        "read_ahead_kb 128"
        "max_sectors_kb 512"
        "rq_affinity 1"
        "nomerges 0"
        "add_random 0"
        "iostats 1"
)
for e in "${drift[@]}"; do
        set -- $e
        echo "$2" >"/sys/block/$a/queue/$1"
        want="$a $1"
        # A queue limit (max_sectors_kb, add_random, iostats) raises the read-ahead of a
        # rotational disk (blk_apply_bdi_limits): then read_ahead_kb is due as well, after it.
        [ "$1" = read_ahead_kb ] || [ "$(qattr "$a" read_ahead_kb)" = 64 ] || want="$want,$a read_ahead_kb"
        trace_run "$TEST_TMP/drift" "$IOSCHED_APPLY" --config "$conf" "$a" "$b" >/dev/null ||
                fail "drift of $1: run failed"
        got=$(sysfs_writes "$TEST_TMP/drift" | awk '{ print $1, $2 }' | paste -sd,)
        [ "$got" = "$want" ] || fail "drift of $1: expected writes \"$want\", got \"$got\""
done
check_all "$a"

log "a scheduler drift: the scheduler, then the tunables and nr_requests it reset"
# Another scheduler this kernel offers (bfq and kyber may be missing; none is always there).
other=$(tr -d '[]' <"/sys/block/$a/queue/scheduler" | tr ' ' '\n' | grep -vx -e mq-deadline -e none -e '' | head -1)
echo "${other:-none}" >"/sys/block/$a/queue/scheduler"
trace_run "$TEST_TMP/sw" "$IOSCHED_APPLY" --config "$conf" "$a" >/dev/null || fail "run after switch failed"
check_all "$a"
first=$(sysfs_writes "$TEST_TMP/sw" | head -1)
[ "${first% *}" = "$a scheduler mq-deadline" ] || fail "the scheduler was not written first: $first"

log "--dry-run: says what it would write and writes nothing"
for e in "${drift[@]}"; do
        set -- $e
        echo "$2" >"/sys/block/$b/queue/$1"
done
for e in "${drift[@]}"; do
        set -- $e
        echo "$1 $(qattr "$b" "$1")"
done >"$TEST_TMP/before"
trace_run "$TEST_TMP/dry" "$IOSCHED_APPLY" --dry-run --config "$conf" "$b" >"$TEST_TMP/dryout" ||
        fail "dry run failed"
n=$(grep -c 'O_WRONLY\|O_RDWR' "$TEST_TMP/dry" || true)
[ "$n" = 0 ] || fail "--dry-run opened $n files for writing"
[ "$(grep -c 'would-write' "$TEST_TMP/dryout")" = 12 ] || fail "dry run: $(cat "$TEST_TMP/dryout")"
grep -q "^12 would change, 1 already right, 0 not applicable (dry run: nothing written)" \
        "$TEST_TMP/dryout" || fail "dry run summary: $(tail -1 "$TEST_TMP/dryout")"
for e in "${drift[@]}"; do
        set -- $e
        grep -qx "$1 $(qattr "$b" "$1")" "$TEST_TMP/before" || fail "--dry-run changed $1"
done
"$IOSCHED_APPLY" -q --config "$conf" "$b" || fail "apply after the dry run failed"
check_all "$b"

log "wbt_lat_usec: a number, off, default, and back"
wconf=$TEST_TMP/wbt.conf
for w in 4321:4321 off:0 default:DEFAULT 2500:2500 default:DEFAULT off:0; do
        want=${w#*:}
        sed "s/^wbt_lat_usec = .*/wbt_lat_usec = ${w%%:*}/" "$conf" >"$wconf"
        "$IOSCHED_APPLY" -q --config "$wconf" "$a" || fail "wbt ${w%%:*}: run failed"
        got=$(qattr "$a" wbt_lat_usec)
        if [ "$want" = DEFAULT ]; then
                # The kernel's default: 75 ms on a rotational queue, 2 ms otherwise.
                [ "$(qattr "$a" rotational)" = 1 ] && want=75000 || want=2000
        fi
        [ "$got" = "$want" ] || fail "wbt ${w%%:*}: reads $got, expected $want"
        n=$(count_sysfs_writes "$IOSCHED_APPLY" --config "$wconf" "$a")
        [ "$n" = 0 ] || fail "wbt ${w%%:*}: the run after wrote $n times"
done

log "max_sectors_kb above max_hw_sectors_kb is refused, not written"
hw=$(qattr "$a" max_hw_sectors_kb)
sed "s/^max_sectors_kb = .*/max_sectors_kb = $((hw * 2))/" "$conf" >"$TEST_TMP/hw.conf"
trace_run "$TEST_TMP/hw" "$IOSCHED_APPLY" --config "$TEST_TMP/hw.conf" "$a" >"$TEST_TMP/hwout" ||
        fail "a refused setting is not a failure"
sysfs_writes "$TEST_TMP/hw" | grep max_sectors_kb >/dev/null && fail "max_sectors_kb above the hardware limit was written"
grep -q 'max_sectors_kb .*refused .*above max_hw_sectors_kb' "$TEST_TMP/hwout" || fail "no refusal: $(cat "$TEST_TMP/hwout")"

log "exit codes"
set +e
"$IOSCHED_APPLY" -q --config "$conf" "$a"
[ $? = 0 ] || fail "exit status of a disk at its policy is not 0"
# 1: the kernel refuses the write (nr_requests above what mq-deadline takes: EINVAL).
sed 's/^nr_requests = .*/nr_requests = 100000/' "$conf" >"$TEST_TMP/einval.conf"
"$IOSCHED_APPLY" --config "$TEST_TMP/einval.conf" "$a" >"$TEST_TMP/einval" 2>&1
rc=$?
[ $rc = 1 ] || fail "a failed write: exit $rc, expected 1"
grep -q 'nr_requests.*Invalid argument' "$TEST_TMP/einval" || fail "no reason given: $(cat "$TEST_TMP/einval")"
# 1 as well when the value does not stick: the kernel rounds nr_requests=1 up.
sed 's/^nr_requests = .*/nr_requests = 1/' "$conf" >"$TEST_TMP/round.conf"
"$IOSCHED_APPLY" --config "$TEST_TMP/round.conf" "$a" >"$TEST_TMP/round" 2>&1
rc=$?
[ $rc = 1 ] || fail "a value that does not stick: exit $rc, expected 1"
grep -q 'kernel reads back' "$TEST_TMP/round" || fail "no reason given: $(cat "$TEST_TMP/round")"
"$IOSCHED_APPLY" -q --config "$conf" "$a" || fail "cannot restore"
# 2: a configuration error (the file is ignored whole: nothing is written).
printf '[rule bad]\nmatch.name = %s\nnr_requests = 16\nbogus = 1\n' "$a" >"$TEST_TMP/bad.conf"
trace_run "$TEST_TMP/bad" "$IOSCHED_APPLY" --config "$TEST_TMP/bad.conf" "$a" >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "a config error: exit $rc, expected 2"
[ "$(sysfs_writes "$TEST_TMP/bad" | wc -l)" = 0 ] || fail "a file with an error was half applied"
# 3: no such disk; the other disks are still done.
missing=loop$((60000 + RANDOM % 1000))
[ -e "/sys/block/$missing" ] && skip "$missing exists"
echo 99 >"/sys/block/$b/queue/nr_requests"
"$IOSCHED_APPLY" -q --config "$conf" "$missing" "$b" 2>"$TEST_TMP/missing"
rc=$?
[ $rc = 3 ] || fail "no such disk: exit $rc, expected 3"
grep -q "No such disk \"$missing\"" "$TEST_TMP/missing" || fail "$(cat "$TEST_TMP/missing")"
[ "$(qattr "$b" nr_requests)" = 32 ] || fail "the disk after a missing one was not done"
# With several problems the lowest status wins: failed write (1) over no such disk (3).
"$IOSCHED_APPLY" -q --config "$TEST_TMP/einval.conf" "$missing" "$a" 2>/dev/null
rc=$?
[ $rc = 1 ] || fail "failed write and missing disk: exit $rc, expected 1"
# /dev/ prefix names the same disk.
"$IOSCHED_APPLY" -q --config "$conf" "/dev/$a"
[ $? = 0 ] || fail "/dev/$a refused"
set -e

log "--all: writes only to the disks the config matches"
for e in "${drift[@]}"; do
        set -- $e
        echo "$2" >"/sys/block/$a/queue/$1"
done
trace_run "$TEST_TMP/all" "$IOSCHED_APPLY" --all --config "$conf" >"$TEST_TMP/allout" ||
        fail "--all failed: $(cat "$TEST_TMP/allout")"
check_all "$a"
others=$(sysfs_writes "$TEST_TMP/all" | awk -v a="$a" -v b="$b" '$1 != a && $1 != b')
[ -z "$others" ] || fail "--all wrote to disks the config does not match: $others"
grep -q "^$a " "$TEST_TMP/allout" && grep -q "^$b " "$TEST_TMP/allout" || fail "--all skipped our disks"
log "ok"
