#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hotplug on the real kernel with the real udevd: loop devices created while ioschedd runs get
# their policy within a second of udevd's event; a removed one disappears from the bus
# (InterfacesRemoved).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
udevd_ensure

# Numbers chosen now so that the config names the devices before they exist.
n1=$(loop_pick_free 2)
n2=$((n1 + 1))
config_root hotplug "match.name = loop$n1|loop$n2" \
        "scheduler = mq-deadline" "nr_requests = 24" "read_ahead_kb = 48"

bus_start
ioschedd_start --config-root "$root"
monitor_start "$TEST_TMP/signals"

at_policy() {
        [ "$(current_scheduler "$1")" = mq-deadline ] && [ "$(qattr "$1" nr_requests)" = 24 ] &&
                [ "$(qattr "$1" read_ahead_kb)" = 48 ]
}

# What ioschedd answers for is the time from udevd's event to the policy; on a machine that
# other work loads (load averages of 20 on 2 CPUs were seen), creating the device and udevd's
# own rules can take seconds before that. Both are measured, the first is checked.
# Clocks are read without starting a process (a fork can wait long for a CPU): CLOCK_MONOTONIC
# from /proc/timer_list ("now at N nsecs", root only), the clock of udevadm monitor's stamps,
# and $EPOCHREALTIME for the whole.
udevadm monitor --udev --subsystem-match=block >"$TEST_TMP/udev-events" &
mon=$!
on_exit "kill $mon"
sleep 0.3
mono_now() {
        local l
        { read -r l; read -r l; read -r l; } </proc/timer_list
        l=${l#now at }
        MONO_MS=$((${l% nsecs} / 1000000))
}
real_ms() { local t=${EPOCHREALTIME/[.,]/}; REAL_MS=$((t / 1000)); }
# udev_event_ms ACTION NAME: the monotonic time in ms of udevd's first ACTION event of NAME.
udev_event_ms() {
        awk -v action="$1" -v dev="/devices/virtual/block/$2" '$1 == "UDEV" && $3 == action && $4 == dev {
                gsub(/[][]/, "", $2); printf "%d", $2 * 1000; exit }' "$TEST_TMP/udev-events"
}
# Poll at_policy_nofork for 10 s at most; MONO_MS is when it was seen (or gave up).
poll_policy() {
        for _ in $(seq 1000); do
                at_policy_nofork "$1" && break
                sleep 0.01
        done
        mono_now
}
# Without a process either: the checks run every 10 ms.
at_policy_nofork() {
        local s n r
        { read -r s <"/sys/block/$1/queue/scheduler" && read -r n <"/sys/block/$1/queue/nr_requests" &&
                read -r r <"/sys/block/$1/queue/read_ahead_kb"; } 2>/dev/null || return 1
        [[ $s == *"[mq-deadline]"* && $n == 24 && $r == 48 ]]
}

# A loop device is a disk from its creation (size 0, with a queue): the add event applies the
# policy. LOOP_CTL_ADD runs in the background: the device exists long before the ioctl returns
# on a busy machine. Attaching a backing file sends change events, which must find it right.
for n in $n1 $n2; do
        real_ms; t=$REAL_MS
        loop_add "$n" &
        creator=$!
        poll_policy "loop$n"; seen=$MONO_MS
        real_ms; total=$((REAL_MS - t))
        wait $creator || fail "cannot create loop$n"
        at_policy "loop$n" || { grep "loop$n" "$IOSCHEDD_LOG" "$TEST_TMP/udev-events" >&2; udevadm control --ping || log "udevd is gone (stopped by whoever started it?)"; fail "loop$n not at its policy 10 s after it was created: $(qattr loop$n scheduler) $(qattr loop$n nr_requests) $(qattr loop$n read_ahead_kb)"; }
        wait_until 5 grep -q "UDEV.* add .*/loop$n " "$TEST_TMP/udev-events" || fail "no udev add event for loop$n"
        ev=$(udev_event_ms add "loop$n")
        log "loop$n at its policy $((seen - ev)) ms after udevd's add event, $total ms after its creation began"
        [ $((seen - ev)) -ge 0 ] || fail "clocks disagree: policy seen before the event"
        [ $((seen - ev)) -lt 1000 ] || { grep "loop$n" "$IOSCHEDD_LOG" >&2; fail "loop$n: $((seen - ev)) ms"; }

        # Attaching sets new queue limits, and with them the kernel's read-ahead (6.11+): the
        # change event that follows must bring the policy back, within a second of udevd's
        # broadcast of it (or before it, where ioschedd acts on the kernel's event).
        loop_attach "$n"
        poll_policy "loop$n"; seen=$MONO_MS
        at_policy "loop$n" || fail "loop$n lost its policy when attached: not back 10 s later"
        wait_until 5 grep -q "UDEV.* change .*/loop$n " "$TEST_TMP/udev-events" || fail "no udev change event for loop$n"
        ev=$(udev_event_ms change "loop$n")
        log "loop$n at its policy again $((seen - ev)) ms after udevd's change event"
        [ $((seen - ev)) -lt 1000 ] || { grep "loop$n" "$IOSCHEDD_LOG" >&2; fail "loop$n attached: $((seen - ev)) ms"; }
        wait_until 2 busctl get-property org.iosched1 /org/iosched1/disk/loop$n org.iosched1.Disk NrRequests \
                || fail "loop$n not on the bus"
        wait_until 2 sh -c "busctl get-property org.iosched1 /org/iosched1/disk/loop$n org.iosched1.Disk NrRequests | grep -qx 'x 24'" \
                || fail "loop$n: NrRequests on the bus is $(disk_prop loop$n NrRequests)"
done
grep -q "\"member\":\"InterfacesAdded\".*/org/iosched1/disk/loop$n1" "$TEST_TMP/signals" \
        || fail "no InterfacesAdded for loop$n1"
busctl --json=short call org.iosched1 "$(disk_path "loop$n1")" org.freedesktop.DBus.Properties \
        GetAll s org.iosched1.Disk >"$TEST_TMP/getall.json"

# Detach and remove one: it leaves the bus.
loop_remove "loop$n1"
wait_until 2 sh -c "! busctl call org.iosched1 /org/iosched1 org.iosched1.Manager ListDisks | grep -c '\"loop$n1\"'" \
        || fail "loop$n1 still listed after removal"
expect_error org.iosched1.Error.NoSuchDisk GetDisk "loop$n1"
wait_until 2 grep -q "\"member\":\"InterfacesRemoved\".*/org/iosched1/disk/loop$n1" "$TEST_TMP/signals" \
        || fail "no InterfacesRemoved for loop$n1"
# Both signals are built by the daemon (ioschedd-disk-bus.c), not by sd-bus, one each, from the
# object manager's path. InterfacesAdded: the interface as GetManagedObjects lists it, the
# disk's properties by name, order and type as sd-bus's own GetAll has them (the values may
# have moved on since). InterfacesRemoved names the interface that InterfacesAdded listed.
/usr/bin/python3 - "$TEST_TMP" "/org/iosched1/disk/loop$n1" <<'PY' || fail "InterfacesAdded or InterfacesRemoved of loop$n1 is not what it should be"
import json, sys
tmp, path = sys.argv[1:]
def signal(member, signature):
    sigs = [json.loads(l) for l in open(tmp + "/signals") if '"%s"' % member in l]
    sigs = [s for s in sigs if s["payload"]["data"][0] == path]
    assert len(sigs) == 1, "%d %s for %s" % (len(sigs), member, path)
    s = sigs[0]
    assert s["path"] == "/org/iosched1" and s["interface"] == "org.freedesktop.DBus.ObjectManager", s
    assert s["payload"]["type"] == signature, s["payload"]["type"]
    return s["payload"]["data"][1]
ifaces = signal("InterfacesAdded", "oa{sa{sv}}")
assert list(ifaces) == ["org.iosched1.Disk"], list(ifaces)
getall = json.load(open(tmp + "/getall.json"))["data"][0]
props = ifaces["org.iosched1.Disk"]
assert [(k, v["type"]) for k, v in props.items()] == [(k, v["type"]) for k, v in getall.items()], (props, getall)
assert props["Name"]["data"] == "loop" + path.rsplit("loop", 1)[1], props["Name"]
assert signal("InterfacesRemoved", "oas") == ["org.iosched1.Disk"]
PY
mgr ListDisks | has "\"loop$n2\"" || fail "loop$n2 vanished too"

# A change event (as "udevadm trigger" sends) costs no write: the disk is already right.
writes=$(mgr_prop WritesDone)
udevadm trigger --action=change --settle "/sys/class/block/loop$n2"
sleep 0.3
[ "$(mgr_prop WritesDone)" = "$writes" ] || fail "a change event caused writes: $writes -> $(mgr_prop WritesDone)"
ioschedd_alive || fail "ioschedd died"
log "ok"
