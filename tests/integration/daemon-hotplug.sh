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

# Times come from bash's $EPOCHREALTIME: no process is started to read a clock (a fork can
# take long on a busy machine and would be counted as ioschedd's time).
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }

# A loop device is a disk from its creation (size 0, with a queue): the add event applies the
# policy. Attaching a backing file sends change events, which must find it still right.
# LOOP_CTL_ADD runs in the background: the device exists (and its add event goes out) long
# before the ioctl returns on a busy machine; the policy is looked for from the start.
for n in $n1 $n2; do
        on_exit "loop_detach_remove $n"
        t=$(now_ms)
        loop_ctl $LOOP_CTL_ADD "$n" &
        creator=$!
        for _ in $(seq 1000); do
                at_policy "loop$n" 2>/dev/null && break
                sleep 0.01
        done
        ms=$(($(now_ms) - t))
        wait $creator || fail "cannot create loop$n"
        at_policy "loop$n" || fail "loop$n not at its policy 10 s after it was created"
        log "loop$n at its policy $ms ms after its creation began"
        [ "$ms" -lt 1000 ] || { grep "loop$n" "$IOSCHEDD_LOG" >&2; fail "loop$n: $ms ms"; }

        loop_attach "$n"
        t=$(now_ms)
        wait_until 1 at_policy "loop$n" || fail "loop$n lost its policy when attached"
        log "loop$n attached: at its policy $(($(now_ms) - t)) ms after losetup returned"
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
