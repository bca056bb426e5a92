#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ioschedd acts on the kernel's uevent when no rule matches on what only udev knows: a new disk
# is at its policy while udev still runs its rules for it (a test rule holds each of the disk's
# events in udev for 6 s), and udev's events, when they come, cause no write. With
# --no-kernel-events, and with a policy that matches on the model, the daemon waits for udev.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
command -v udevadm >/dev/null || fail "udevadm is not installed (apt-get install udev)"
udevd_ensure
bus_start

HOLD=6
rules=/run/udev/rules.d/59-iosched-kernel-test-$$-$RANDOM.rules
mkdir -p /run/udev/rules.d
on_exit "rm -f '$rules'; udevadm control --reload"

at_policy() { [ "$(current_scheduler "$1")" = mq-deadline ] && [ "$(qattr "$1" nr_requests)" = 48 ]; }
writes_of() { grep -c "$1: \(scheduler\|nr_requests\) .* -> " "$IOSCHEDD_LOG" || true; }

# case NAME MATCH DAEMON_ARGS...: a new disk under a policy with MATCH; prints "early" when it
# was at its policy while udev held its events, "late" otherwise.
case_run() {
        local label=$1 match=$2 n d
        shift 2
        n=$(loop_pick_free)
        d=loop$n
        printf 'SUBSYSTEM=="block", KERNEL=="%s", RUN+="%s %s"\n' "$d" "$(command -v sleep)" "$HOLD" >"$rules"
        udevadm control --reload
        cat >"$TEST_TMP/$label.conf" <<CONF
[rule kernel-test]
match.name = $d
$match
scheduler = mq-deadline
nr_requests = 48
CONF
        ioschedd_start --config "$TEST_TMP/$label.conf" "$@"
        loop_add_attach "$n"
        if wait_until $((HOLD / 2)) at_policy "$d"; then when=early; else when=late; fi
        udevadm settle --timeout=60 || fail "udevadm settle timed out"
        wait_until 5 at_policy "$d" || fail "$label: $d not at policy after udev's events"
        has "$d: uevent change" "$IOSCHEDD_LOG" || fail "$label: udev's events for $d never reached the daemon"
        log "$label: at policy $when; $(writes_of "$d") writes"
        [ "$(writes_of "$d")" = 2 ] || fail "$label: expected 2 writes (scheduler, nr_requests): $(grep "$d: " "$IOSCHEDD_LOG" | grep -- '->')"
        ioschedd_stop
        loop_remove "$d"
}

case_run kernel "" >/dev/null
[ "$when" = early ] || fail "with a policy by name, the disk was not at its policy before udev's event"
case_run no-kernel "" --no-kernel-events
[ "$when" = late ] || fail "--no-kernel-events: the disk was at its policy before udev's event"
case_run by-model "match.model = !no-such-model"
[ "$when" = late ] || fail "a policy on the model was applied before udev's event"
log "ok"
