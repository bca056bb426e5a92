#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# iosched-apply under faults, on real loop devices (docs/reliability.md, "Faults"):
#   1. a disk unplugged while its policy is being written
#   2. an EBUSY storm from a competing writer
#   3. configuration faults: a dangling drop-in link, a drop-in directory that is unreadable,
#      not a directory, or gone
# Every run is traced: nothing outside /sys/class/block/<our disk>/queue/ is opened for writing.
. "$(dirname "$0")/../lib/common.sh"
require_root
command -v strace >/dev/null || fail "strace is not installed (tools/install-deps test)"

# Fail when a trace shows a write-mode open of anything but a queue file of the given disks.
check_writes_confined() {
        local trace=$1; shift
        local bad
        bad=$(grep -E 'open(at)?\(.*O_(WRONLY|RDWR)' "$trace" | grep -vE "$(queue_open_re "$@")" || true)
        [ -z "$bad" ] || fail "opened for writing outside the queues of $*: $bad"
}

# A loop device of our own at a high index, left unbound (its queue is there all the same):
# "losetup --find" hands out the lowest free index, so once we unplug it (loop_remove: the
# device and its sysfs directory go away, as a real disk's would) its name is not given to
# another test's disk while iosched-apply may still be writing to that name; and an unbound
# device is removed at once, not when udev lets go of it.
loop_new_high() {
        local n
        n=$(loop_pick_free)
        loop_add "$n"
        wait_until 60 test -e "/sys/class/block/loop$n/queue/scheduler" || fail "loop$n has no queue"
        echo "loop$n"
}

at_policy() {
        [ "$(current_scheduler "$1")" = mq-deadline ] && [ "$(qattr "$1" iosched/fifo_batch)" = 8 ] &&
        [ "$(qattr "$1" nr_requests)" = 32 ] && [ "$(qattr "$1" wbt_lat_usec)" = 3000 ] &&
        [ "$(qattr "$1" read_ahead_kb)" = 64 ] && [ "$(qattr "$1" rq_affinity)" = 2 ] &&
        [ "$(qattr "$1" nomerges)" = 1 ]
}

# ---- 1. a disk unplugged while its policy is being written ----
# Every write(2) is slowed by 300 ms (strace fault injection), and the disk is unplugged once
# the write of a given attribute landed: after the scheduler, and after nr_requests.
for after in scheduler nr_requests; do
        a=$(loop_new_high)
        b=$(loop_new)
        fault_policy "$a" "$b" >"$TEST_TMP/unplug.conf"
        trace="$TEST_TMP/unplug.$after.trace"
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
                strace -f -qq -y -o "$trace" -e trace=openat,write -e inject=write:delay_enter=300000 \
                "$IOSCHED_APPLY" --config "$TEST_TMP/unplug.conf" "$a" "$b" \
                >"$TEST_TMP/unplug.out" 2>&1 &
        pid=$!
        written() {
                case $after in
                scheduler) [ "$(current_scheduler "$a")" = mq-deadline ] ;;
                nr_requests) [ "$(qattr "$a" nr_requests)" = 32 ] ;;
                esac
        }
        wait_until 60 written || { kill "$pid" || true; fail "iosched-apply never wrote $after of $a"; }
        loop_remove "$a"
        rc=0
        wait "$pid" || rc=$?
        cat "$TEST_TMP/unplug.out" >&2
        [ ! -e "/sys/class/block/$a" ] || fail "$a still exists after the unplug"
        # A disk that goes away is not a failure: exit 0, the other disk fully at its policy.
        [ $rc = 0 ] || fail "unplug after $after: exit status $rc, expected 0"
        grep -qE "^ +[a-z_.]+ .* gone" "$TEST_TMP/unplug.out" || fail "unplug after $after: no action reported gone"
        at_policy "$b" || fail "unplug after $after: $b is not at its policy"
        check_writes_confined "$trace" "$a" "$b"
        log "unplugged $a after its $after: exit 0, $b at policy, writes confined"
        loop_del "$b"
done

# ---- 2. an EBUSY storm from a competing writer ----
# On 6.18, a write to nr_requests (and others) while another writer holds the queue fails with
# EBUSY. The competitor rewrites the scheduler the disk already has, back to back, for as
# long as iosched-apply runs.
c=$(loop_new)
fault_policy "$c" >"$TEST_TMP/storm.conf"
# Start away from the policy (a loop device keeps its queue settings across attachments).
echo mq-deadline >"/sys/block/$c/queue/scheduler"
echo 128 >"/sys/block/$c/queue/nr_requests"
echo 2000 >"/sys/block/$c/queue/wbt_lat_usec"
echo 256 >"/sys/block/$c/queue/read_ahead_kb"
old_nr=$(qattr "$c" nr_requests) old_ra=$(qattr "$c" read_ahead_kb) old_wbt=$(qattr "$c" wbt_lat_usec)
storm_start "$c"
trace="$TEST_TMP/storm.trace"
rc=0
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -qq -y -o "$trace" -e trace=openat,write \
        "$IOSCHED_APPLY" --config "$TEST_TMP/storm.conf" "$c" >"$TEST_TMP/storm.out" 2>&1 || rc=$?
storm_stop
cat "$TEST_TMP/storm.out" >&2
n_busy=$(grep -c '= -1 EBUSY' "$trace" || true)
check_writes_confined "$trace" "$c"
# Converged (0), or the attribute that stayed busy after every retry is reported (1).
case $rc in
0) ;;
1) grep -q "Device or resource busy" "$TEST_TMP/storm.out" || fail "storm: exit 1 without naming EBUSY" ;;
*) fail "storm: exit status $rc" ;;
esac
# Never a third value: each attribute is the policy's or the one it had.
for pair in "nr_requests 32 $old_nr" "read_ahead_kb 64 $old_ra" "wbt_lat_usec 3000 $old_wbt"; do
        set -- $pair
        v=$(qattr "$c" "$1")
        [ "$v" = "$2" ] || [ "$v" = "$3" ] || fail "storm: $1 is $v, neither $2 nor $3"
done
if [ "$n_busy" = 0 ]; then
        kmaj=$(uname -r | cut -d. -f1) kmin=$(uname -r | cut -d. -f2)
        if [ "$kmaj" -gt 6 ] || { [ "$kmaj" = 6 ] && [ "$kmin" -ge 18 ]; }; then
                fail "storm: no write got EBUSY on $(uname -r); the fault was not exercised"
        fi
        log "note: $(uname -r) returned no EBUSY (expected only on 6.18+)"
fi
# Once the competitor is gone, a run converges, and the next one writes nothing.
"$IOSCHED_APPLY" --config "$TEST_TMP/storm.conf" "$c" >/dev/null || fail "after the storm: run failed"
at_policy "$c" || fail "after the storm: $c is not at its policy"
n=$(count_sysfs_writes "$IOSCHED_APPLY" --config "$TEST_TMP/storm.conf" "$c")
[ "$n" = 0 ] || fail "after the storm: a converged disk got $n writes"
log "storm: $n_busy writes got EBUSY, exit $rc, no third value, converged afterwards"

# ---- 3. configuration faults ----
# A private root: etc/ is ours, sys is the real /sys (so the disks are real), run/ is empty.
R=$(mktemp -d /tmp/iosched-faults-root.XXXXXX)
on_exit "rm -rf $R"
chmod 755 "$R"
mkdir -p "$R/etc/iosched.d"
ln -s /sys "$R/sys"
d=$(loop_new)
cat >"$R/etc/iosched.conf" <<CONF
[rule main]
match.name = $d
read_ahead_kb = 64
CONF
cat >"$R/etc/iosched.d/10-good.conf" <<CONF
[rule good]
match.name = $d
nr_requests = 32
CONF
ln -s /nonexistent/20-dangling.conf "$R/etc/iosched.d/20-dangling.conf"
chmod -R a+rX "$R/etc"

# A dangling drop-in: reported with its name, ignored; the rest applies (exit 2).
rc=0
"$IOSCHED_APPLY" --root "$R" "$d" >"$TEST_TMP/conf.out" 2>&1 || rc=$?
[ $rc = 2 ] || fail "dangling drop-in: exit $rc, expected 2"
grep -q "20-dangling.conf:0: cannot read" "$TEST_TMP/conf.out" || fail "dangling drop-in not named"
[ "$(qattr "$d" nr_requests)" = 32 ] && [ "$(qattr "$d" read_ahead_kb)" = 64 ] ||
        fail "dangling drop-in: the good files were not applied"
rm "$R/etc/iosched.d/20-dangling.conf"

# The drop-in directory is unreadable (root reads anything: the check runs as nobody).
chmod 000 "$R/etc/iosched.d"
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$IOSCHED_APPLY" --root "$R" --check-config >"$TEST_TMP/conf.out" 2>&1 || rc=$?
cat "$TEST_TMP/conf.out" >&2
[ $rc = 2 ] || fail "unreadable drop-in directory: exit $rc, expected 2 (its rules would be lost silently)"
grep -q "iosched.d.*Permission denied" "$TEST_TMP/conf.out" || fail "unreadable directory not named"
chmod 755 "$R/etc/iosched.d"

# Not a directory where the drop-ins should be.
mv "$R/etc/iosched.d" "$R/etc/iosched.d.moved"
echo "not a directory" >"$R/etc/iosched.d"
rc=0
"$IOSCHED_APPLY" --root "$R" --check-config >"$TEST_TMP/conf.out" 2>&1 || rc=$?
[ $rc = 2 ] || fail "drop-in path is a file: exit $rc, expected 2"
grep -q "iosched.d.*Not a directory" "$TEST_TMP/conf.out" || fail "file in place of the directory not named"
rm "$R/etc/iosched.d"

# The directory is gone: that is a configuration without drop-ins, not an error.
rc=0
"$IOSCHED_APPLY" --root "$R" --check-config >"$TEST_TMP/conf.out" 2>&1 || rc=$?
[ $rc = 0 ] || fail "no drop-in directory: exit $rc, expected 0"
grep -q "^1 file(s), 1 rule(s), 0 error(s)" "$TEST_TMP/conf.out" || fail "no drop-in directory: $(cat "$TEST_TMP/conf.out")"
log "config faults: dangling link, unreadable directory, file for a directory reported; a missing one is no error"
log "ok"
