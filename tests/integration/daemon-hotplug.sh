#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hotplug on the real kernel with the real udevd: loop devices created while ioschedd runs get
# their policy after udevd's add event and keep it after the change event of an attach; a
# removed one disappears from the bus (InterfacesRemoved); a change event of a disk that is right
# costs no write.
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

# udevd's events, to check that each step below follows the event it is about. How soon the
# policy follows an event is a benchmark figure (bench/storm, bench/event-cost), not checked here.
udev_monitor_start "$TEST_TMP/udev-events"
seen_event() { grep -q "UDEV.* $1 .*/loop$2 " "$TEST_TMP/udev-events"; }

# A loop device is a disk from its creation (size 0, with a queue): the add event applies the
# policy. Attaching a backing file sets new queue limits, and with them the kernel's read-ahead
# (6.11+): the change event that follows must bring the policy back.
for n in $n1 $n2; do
        loop_add "$n"
        wait_until 60 seen_event add "$n" || fail "no udev add event for loop$n"
        wait_until 60 at_policy "loop$n" || { grep "loop$n" "$IOSCHEDD_LOG" "$TEST_TMP/udev-events" >&2; fail "loop$n not at its policy after its add event: $(qattr loop$n scheduler) $(qattr loop$n nr_requests) $(qattr loop$n read_ahead_kb)"; }
        loop_attach "$n"
        wait_until 60 seen_event change "$n" || fail "no udev change event for loop$n"
        wait_until 60 at_policy "loop$n" || { grep "loop$n" "$IOSCHEDD_LOG" >&2; fail "loop$n lost its policy when attached: $(qattr loop$n scheduler) $(qattr loop$n nr_requests) $(qattr loop$n read_ahead_kb)"; }
        wait_until 60 disk_prop loop$n Current >/dev/null || fail "loop$n not on the bus"
        wait_until 60 eval '[ "$(disk_current loop$n nr_requests)" = 24 ]' \
                || fail "loop$n: nr_requests on the bus is $(disk_current loop$n nr_requests)"
done
grep -q "\"member\":\"InterfacesAdded\".*/org/iosched1/disk/loop$n1" "$TEST_TMP/signals" \
        || fail "no InterfacesAdded for loop$n1"
busctl --json=short call org.iosched1 "$(disk_path "loop$n1")" org.freedesktop.DBus.Properties \
        GetAll s org.iosched1.Disk >"$TEST_TMP/getall.json"

# Detach and remove one: it leaves the bus.
loop_remove "loop$n1"
wait_until 60 sh -c "! busctl call org.iosched1 /org/iosched1 org.iosched1.Manager ListDisks | grep -c '\"loop$n1\"'" \
        || fail "loop$n1 still listed after removal"
expect_error org.iosched1.Error.NoSuchDisk GetDisk "loop$n1"
wait_until 60 grep -q "\"member\":\"InterfacesRemoved\".*/org/iosched1/disk/loop$n1" "$TEST_TMP/signals" \
        || fail "no InterfacesRemoved for loop$n1"
# Both signals are built by the daemon (ioschedd-disk-bus.c), not by sd-bus, one each, from the
# object manager's path. InterfacesAdded: the interface as GetManagedObjects lists it, the
# disk's properties by name, order and type as sd-bus's own GetAll has them, an empty array or
# string left out (the values may have moved on since: what it leaves out is an array or a
# string). InterfacesRemoved names the interface that InterfacesAdded listed.
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
assert [(k, v["type"]) for k, v in props.items()] == [(k, v["type"]) for k, v in getall.items() if k in props], (props, getall)
assert all(v["type"][0] in "as" for k, v in getall.items() if k not in props), (props, getall)
assert all(v["data"] not in ("", [], {}) for v in props.values()), props
assert props["Name"]["data"] == "loop" + path.rsplit("loop", 1)[1], props["Name"]
assert signal("InterfacesRemoved", "oas") == ["org.iosched1.Disk"]
PY
mgr ListDisks | has "\"loop$n2\"" || fail "loop$n2 vanished too"

# A change event (as "udevadm trigger" sends) costs no write: the disk is already right.
# The daemon counts each key it finds right in WritesSkipped: wait for the event's three.
count() { mgr_prop "$1" | cut -d' ' -f2; }
skipped_at_least() { [ "$(count WritesSkipped)" -ge "$1" ]; }
writes=$(count WritesDone)
skipped=$(count WritesSkipped)
udevadm trigger --action=change --settle "/sys/class/block/loop$n2"
wait_until 60 skipped_at_least $((skipped + 3)) || fail "the change event was not handled: WritesSkipped $(count WritesSkipped)"
[ "$(count WritesDone)" = "$writes" ] || fail "a change event caused writes: $writes -> $(count WritesDone)"
ioschedd_alive || fail "ioschedd died"
log "ok"
