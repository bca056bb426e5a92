#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The project's udev rule under a real systemd-udevd: the rule generated from
# udev/60-iosched.rules.in, its RUN pointing at the built helper with a test config that
# matches only this test's loop device, and the helper run under strace so that every
# invocation leaves a trace of its writes (one file per event: the test counts events and
# writes; an event that did not run the helper fails the test as well).
#  - a new loop device gets its policy from its "add" (and "change") events;
#  - "change" events on it then write nothing: one from udevadm trigger, and the one that
#    60-block.rules' "watch" makes when a program closes the device after writing to it;
#  - a value changed behind udev's back is put back by the next event with one write;
#  - "remove" does not run the helper;
#  - udevadm test accepts the rules, the shipped file as well.
. "$(dirname "$0")/../lib/common.sh"
require_root

command -v udevadm >/dev/null || fail "udevadm is not installed (apt-get install udev)"
grep -qs 'OPTIONS+="watch"' /lib/udev/rules.d/60-block.rules /usr/lib/udev/rules.d/60-block.rules ||
        fail "systemd's 60-block.rules with its watch option is not installed"
udevd_ensure
udevd_pid=$(pgrep -o -r R,S,D,I -x systemd-udevd)
# udevd_alive: the udevd of the start of the test still runs. The suites run one at a time and
# each waits for the udevd it started to be gone before it ends (udevd_stop), so the one this
# test found is its own or the machine's: its going away is a failure, not a reason to skip.
udevd_alive() { kill -0 "$udevd_pid" 2>/dev/null; }

strace_bin=$(command -v strace)
traces=$TEST_TMP/traces
mkdir -p "$traces"

# A name no device has yet: the kernel sends "add" when losetup makes it.
d=loop$(loop_pick_free)
q=/sys/block/$d/queue
conf=$TEST_TMP/udev.conf
cat >"$conf" <<CONF
[rule udev-test]
match.name = $d
scheduler = mq-deadline
iosched.fifo_batch = 8
nr_requests = 48
wbt_lat_usec = 3000
rq_affinity = 2
CONF

rules=/run/udev/rules.d/60-iosched-test-$$-$RANDOM.rules
mkdir -p /run/udev/rules.d
on_exit "rm -f '$rules'; udevadm control --reload"
udev_rule_from_shipped "$strace_bin -f -qq -y -e trace=openat,write -o $traces/\$kernel.\$env{ACTION}.\$env{SEQNUM} $IOSCHED_APPLY --config $conf" >"$rules"
grep -q "RUN+=\"$strace_bin .* $IOSCHED_APPLY --config $conf \$kernel\"" "$rules" ||
        fail "the RUN line of the rule was not rewritten: $(grep RUN "$rules")"
udevadm control --reload

settle() { udevadm settle --timeout=60 || fail "udevadm settle timed out"; }
events() { ls "$traces" | grep "^$d\.$1\." | sort -t. -k3 -n || true; }
# more_events ACTION N: more than N events of ACTION so far (a function, so that wait_until
# counts again on every try).
more_events() { [ "$(events "$1" | wc -l)" -gt "$2" ]; }
# new_events ACTION BEFORE: wait (60 s at most) for events of ACTION beyond the first BEFORE,
# and for udevd to be done with them; print their trace files.
new_events() {
        if ! wait_until 60 more_events "$1" "$2"; then
                udevd_alive || fail "systemd-udevd (pid $udevd_pid) went away under this test"
                fail "no $1 event beyond the first $2 within 60 s"
        fi
        settle
        events "$1" | tail -n +$(($2 + 1))
}
# writes FILE: the number of write(2) to a queue attribute of our disk in one helper's trace.
writes() { sysfs_writes "$traces/$1" | grep -c "^$d " || true; }

log "a new loop device: $d"
loop_attach "${d#loop}"
settle
[ -n "$(events add)" ] || fail "no helper ran for the add event of $d: $(ls "$traces")"
[ "$(current_scheduler "$d")" = mq-deadline ] || fail "scheduler: $(cat "$q/scheduler")"
[ "$(cat "$q/iosched/fifo_batch")" = 8 ] || fail "fifo_batch $(cat "$q/iosched/fifo_batch")"
[ "$(cat "$q/nr_requests")" = 48 ] || fail "nr_requests $(cat "$q/nr_requests")"
[ "$(cat "$q/wbt_lat_usec")" = 3000 ] || fail "wbt_lat_usec $(cat "$q/wbt_lat_usec")"
[ "$(cat "$q/rq_affinity")" = 2 ] || fail "rq_affinity $(cat "$q/rq_affinity")"
n=$(writes "$(events add | head -1)")
[ "$n" -ge 5 ] || fail "the add event's helper wrote $n times, expected the 5 settings"
log "add: $n writes; change events so far: $(events change | wc -l)"

log "udevadm trigger --action=change: the helper runs and writes nothing"
before=$(events change | wc -l)
udevadm trigger --action=change "/sys/block/$d"
new=$(new_events change "$before")
[ "$(echo "$new" | grep -c .)" = 1 ] || fail "expected one new change event, got: $new"
n=$(writes "$new")
[ "$n" = 0 ] || fail "the change event wrote $n times: $(sysfs_writes "$traces/$new")"

log "a value changed behind udev's back: the next event puts it back with one write"
echo 128 >"$q/nr_requests"
before=$(events change | wc -l)
udevadm trigger --action=change "/sys/block/$d"
new=$(new_events change "$before")
[ "$(writes "$new")" = 1 ] || fail "expected one write, got: $(sysfs_writes "$traces/$new")"
[ "$(cat "$q/nr_requests")" = 48 ] || fail "nr_requests not put back: $(cat "$q/nr_requests")"

log "udevadm test: the installed rule runs the helper for $d"
udevadm test --action=change "/sys/block/$d" >"$TEST_TMP/utest" 2>&1 || fail "udevadm test failed: $(tail "$TEST_TMP/utest")"
grep -q "$(basename "$rules"):[0-9]* RUN '$strace_bin " "$TEST_TMP/utest" &&
        grep -q "^run: '$strace_bin .*$IOSCHED_APPLY --config $conf $d'$" "$TEST_TMP/utest" ||
        fail "udevadm test does not show our RUN: $(grep -i "iosched\|$(basename "$rules")" "$TEST_TMP/utest")"
! grep -i "$(basename "$rules").*\(invalid\|error\|unknown\|fail\)" "$TEST_TMP/utest" ||
        fail "udevadm complains about the rule"

log "udevadm test: the shipped rule, alone in a private /run/udev (and an empty /etc/udev/rules.d)"
shipped=$IOSCHED_BUILD_DIR/udev/60-iosched.rules
[ -f "$shipped" ] || fail "$shipped was not built"
libexec=$(sed -n 's|^RUN+="\(.*\)/iosched-apply \$kernel"$|\1|p' "$shipped")
[ -n "$libexec" ] || fail "the shipped rule has no RUN of iosched-apply: $(grep RUN "$shipped")"
unshare -m --propagation private sh -c '
        mount -t tmpfs tmpfs /run/udev &&
        { [ ! -d /etc/udev/rules.d ] || mount -t tmpfs tmpfs /etc/udev/rules.d; } &&
        mkdir /run/udev/rules.d &&
        cp "$1" /run/udev/rules.d/ &&
        udevadm test --action=add "$2" &&
        echo ---- &&
        udevadm test --action=add /sys/devices/virtual/mem/null' \
        sh "$shipped" "/sys/block/$d" >"$TEST_TMP/shipped" 2>&1 || fail "udevadm test: $(tail "$TEST_TMP/shipped")"
sed '/^----$/q' "$TEST_TMP/shipped" | grep "^run: '$libexec/iosched-apply $d'$" >/dev/null ||
        fail "the shipped rule does not run the helper for $d: $(grep -i iosched "$TEST_TMP/shipped")"
sed '1,/^----$/d' "$TEST_TMP/shipped" | grep "iosched-apply" >/dev/null &&
        fail "the shipped rule runs the helper for a device that is no block disk"
! grep -i "60-iosched.rules.*\(invalid\|error\|unknown\|fail\)" "$TEST_TMP/shipped" ||
        fail "udevadm complains about the shipped rule"

log "udevadm test: 90-iosched-iocost.rules imports systemd-iocost's hwdb entry (a private hwdb)"
iocost_rules=$IOSCHED_SRC_DIR/udev/90-iosched-iocost.rules
mkdir -p "$TEST_TMP/hwdb/etc/udev/hwdb.d"
cat >"$TEST_TMP/hwdb/etc/udev/hwdb.d/60-iosched-test.hwdb" <<'HWDB'
block::name:iosched test disk:fwrev:1.0:
 IOCOST_SOLUTIONS=isolation naive
 IOCOST_QOS_NAIVE=rpct=99.00 rlat=8000 wpct=99.00 wlat=8000 min=75.00 max=100.00
 IOCOST_MODEL_NAIVE=rbps=7 rseqiops=8 rrandiops=9 wbps=10 wseqiops=11 wrandiops=12
HWDB
systemd-hwdb update --root "$TEST_TMP/hwdb" || fail "systemd-hwdb update"
[ -s "$TEST_TMP/hwdb/etc/udev/hwdb.bin" ] || fail "no hwdb.bin"
unshare -m --propagation private sh -c '
        mount -t tmpfs tmpfs /run/udev &&
        mount --bind "$3/etc/udev" /etc/udev &&
        mkdir -p /etc/udev/rules.d /run/udev/rules.d &&
        printf "%s\n" "SUBSYSTEM==\"block\", ENV{ID_MODEL}=\"iosched test disk\", ENV{ID_REVISION}=\"1.0\"" \
                >/run/udev/rules.d/10-iosched-test-model.rules &&
        cp "$1" /run/udev/rules.d/ &&
        udevadm test --action=change "$2"' \
        sh "$iocost_rules" "/sys/block/$d" "$TEST_TMP/hwdb" >"$TEST_TMP/iocost-hwdb" 2>&1 ||
        fail "udevadm test with the hwdb: $(tail "$TEST_TMP/iocost-hwdb")"
grep -q "^IOCOST_SOLUTIONS=isolation naive$" "$TEST_TMP/iocost-hwdb" &&
        grep -q "^IOCOST_QOS_NAIVE=rpct=99.00 rlat=8000 wpct=99.00 wlat=8000 min=75.00 max=100.00$" "$TEST_TMP/iocost-hwdb" ||
        fail "the hwdb entry was not imported: $(grep -i "iocost\|hwdb" "$TEST_TMP/iocost-hwdb")"
! grep -i "90-iosched-iocost.rules.*\(invalid\|error\|unknown\|fail\)" "$TEST_TMP/iocost-hwdb" ||
        fail "udevadm complains about 90-iosched-iocost.rules"

log "the watch: closing /dev/$d after writing to it makes udevd send change"
# udevd keeps its inotify watches as links in /run/udev/watch: "b7:N -> WD" and "WD -> b7:N".
devnum=$(cat "/sys/block/$d/dev")
wd=$(readlink "/run/udev/watch/b$devnum" || true)
if [ -z "$wd" ] || [ "$(readlink "/run/udev/watch/$wd" || true)" != "b$devnum" ]; then
        # A udevd drops a watch whose number a stale link of a stopped udevd still holds
        # ("Failed to create symlink ... File exists"): udevd_ensure clears them before it
        # starts one, but it cannot for a udevd that was already running.
        [ "$UDEVD_OURS" = 1 ] && fail "udevd does not watch /dev/$d"
        watch_skipped="the running systemd-udevd (not started by this test) does not watch /dev/$d: stale links in /run/udev/watch"
fi
if [ -z "${watch_skipped:-}" ]; then
        before=$(events change | wc -l)
        dd if=/dev/zero of="/dev/$d" bs=4k count=1 conv=notrunc,fsync status=none
        if ! wait_until 60 more_events change "$before"; then
                fail "no change event after closing the device written to (watch); udevd pid $udevd_pid ($(udevd_alive && echo running || echo gone)), ours: $UDEVD_OURS"
        fi
        settle
        new=$(events change | tail -n +$((before + 1)))
        for e in $new; do
                n=$(writes "$e")
                [ "$n" = 0 ] || fail "the watch's change event $e wrote $n times: $(sysfs_writes "$traces/$e")"
        done
        log "watch: $(echo "$new" | grep -c .) change event(s), 0 writes"
fi

log "remove: the helper does not run"
loop_remove "$d"
settle
[ -z "$(events remove)" ] || fail "the helper ran for remove"
[ -z "${watch_skipped:-}" ] || skip "all but the watch passed; $watch_skipped"
log "ok"
