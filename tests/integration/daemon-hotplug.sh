#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hotplug on the real kernel with the real udevd: loop devices created while ioschedd runs get
# their policy within a second; a removed one disappears from the bus (InterfacesRemoved).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
udevd_ensure

# Numbers chosen now so that the config names the devices before they exist.
n1=$(loop_pick_free)
n2=$((n1 + 1))
[ -e /sys/class/block/loop$n2 ] && fail "loop$n2 exists"
root="$TEST_TMP/root"
mkdir -p "$root/etc"
cat >"$root/etc/iosched.conf" <<CONF
[rule hotplug]
match.name = loop$n1|loop$n2
scheduler = mq-deadline
nr_requests = 24
read_ahead_kb = 48
CONF

bus_start
ioschedd_start --config-root "$root"
monitor_start "$TEST_TMP/signals"

at_policy() {
        [ "$(current_scheduler "$1")" = mq-deadline ] && [ "$(qattr "$1" nr_requests)" = 24 ] &&
                [ "$(qattr "$1" read_ahead_kb)" = 48 ]
}

for n in $n1 $n2; do
        t0=$(date +%s%N)
        loop_add_attach "$n"
        # Poll every 10 ms for at most 1 s from the moment the device is attached.
        ok=
        for _ in $(seq 100); do
                at_policy "loop$n" && { ok=1; break; }
                sleep 0.01
        done
        ms=$((($(date +%s%N) - t0) / 1000000))
        [ -n "$ok" ] || fail "loop$n not at its policy 1 s after it was attached (scheduler $(qattr loop$n scheduler), nr_requests $(qattr loop$n nr_requests))"
        log "loop$n at its policy after ${ms} ms"
        wait_until 2 busctl get-property org.iosched1 /org/iosched1/disk/loop$n org.iosched1.Disk NrRequests \
                || fail "loop$n not on the bus"
        wait_until 2 sh -c "busctl get-property org.iosched1 /org/iosched1/disk/loop$n org.iosched1.Disk NrRequests | grep -qx 'x 24'" \
                || fail "loop$n: NrRequests on the bus is $(disk_prop loop$n NrRequests)"
done
grep -q "\"member\":\"InterfacesAdded\".*/org/iosched1/disk/loop$n1" "$TEST_TMP/signals" \
        || fail "no InterfacesAdded for loop$n1"

# Detach and remove one: it leaves the bus.
loop_detach_remove "$n1"
wait_until 2 sh -c "! busctl call org.iosched1 /org/iosched1 org.iosched1.Manager ListDisks | grep -c '\"loop$n1\"'" \
        || fail "loop$n1 still listed after removal"
expect_error org.iosched1.Error.NoSuchDisk GetDisk "loop$n1"
wait_until 2 grep -q "\"member\":\"InterfacesRemoved\".*/org/iosched1/disk/loop$n1" "$TEST_TMP/signals" \
        || fail "no InterfacesRemoved for loop$n1"
mgr ListDisks | has "\"loop$n2\"" || fail "loop$n2 vanished too"

# A change event (as "udevadm trigger" sends) costs no write: the disk is already right.
writes=$(mgr_prop WritesDone)
udevadm trigger --action=change --settle "/sys/class/block/loop$n2"
sleep 0.3
[ "$(mgr_prop WritesDone)" = "$writes" ] || fail "a change event caused writes: $writes -> $(mgr_prop WritesDone)"
ioschedd_alive || fail "ioschedd died"
log "ok"
