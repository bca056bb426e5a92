#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One engine per event (ioschedd(8), iosched-apply(8)): with the project's udev rule and
# ioschedd both running, the daemon acts and the rule's helper steps aside; with the daemon
# crashed or stopped, the rule alone brings a new disk to its policy. The rule is the shipped
# one, its RUN pointing at the built helper under strace (one trace per event) with the test's
# config and runtime directory (never the machine's /run/ioschedd).
#  - daemon on: the add event and a change event after a drift are handled by the daemon
#    alone: one write for the drift, and no helper reads the disk's queue;
#  - daemon killed (SIGKILL: the marker stays behind): a new disk gets its policy from the rule;
#  - daemon stopped (SIGTERM: it removes its marker): the same.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
command -v udevadm >/dev/null || fail "udevadm is not installed (apt-get install udev)"
command -v strace >/dev/null || fail "strace is not installed"
udevd_ensure
bus_start

rt=$IOSCHEDD_RUNTIME_DIR
marker=$rt/ioschedd.pid
traces=$TEST_TMP/traces
mkdir -p "$traces"
n1=$(loop_pick_free 3)
n2=$((n1 + 1))
n3=$((n1 + 2))
conf=$TEST_TMP/engine.conf
cat >"$conf" <<CONF
[rule engine-test]
match.name = loop$n1|loop$n2|loop$n3
scheduler = mq-deadline
nr_requests = 48
CONF

rules=/run/udev/rules.d/60-iosched-engine-test-$$-$RANDOM.rules
mkdir -p /run/udev/rules.d
on_exit "rm -f '$rules'; udevadm control --reload"
udev_rule_from_shipped "$(command -v strace) -f -qq -y -e trace=openat,write -o $traces/\$kernel.\$env{ACTION}.\$env{SEQNUM} $IOSCHED_APPLY --runtime-dir $rt --config $conf" >"$rules"
grep -q "$IOSCHED_APPLY --runtime-dir $rt --config $conf \$kernel\"" "$rules" ||
        fail "the RUN line was not rewritten: $(grep RUN "$rules")"
udevadm control --reload

settle() { udevadm settle --timeout=60 || fail "udevadm settle timed out"; }
# helper_runs DISK: trace files of the helper for DISK so far.
helper_runs() { ls "$traces" | grep "^$1\." || true; }
# helper_read_queue DISK: the number of the helper's opens of DISK's queue files.
helper_read_queue() {
        local t n=0
        for t in $(helper_runs "$1"); do
                n=$((n + $(grep -c "/block/$1/queue/" "$traces/$t" || true)))
        done
        echo "$n"
}
at_policy() {
        [ "$(current_scheduler "$1")" = mq-deadline ] && [ "$(qattr "$1" nr_requests)" = 48 ]
}

log "daemon on: ioschedd with its marker in $rt"
ioschedd_start --config "$conf"
[ "$(cat "$marker")" = "$IOSCHEDD_PID" ] || fail "marker: $(cat "$marker" 2>&1)"

log "a new disk loop$n1: the daemon brings it to policy, the helper steps aside"
loop_add_attach "$n1"
settle
wait_until 60 at_policy "loop$n1" || fail "loop$n1 not at policy: $(current_scheduler "loop$n1") $(qattr "loop$n1" nr_requests)"
[ -n "$(helper_runs "loop$n1")" ] || fail "the rule did not run the helper for loop$n1"
[ "$(helper_read_queue "loop$n1")" = 0 ] ||
        fail "the helper read loop$n1's queue while the daemon runs: $(helper_runs "loop$n1")"

log "a drift and a change event: one write, by the daemon"
echo 128 >"/sys/block/loop$n1/queue/nr_requests"
runs=$(helper_runs "loop$n1" | wc -l)
lines=$(grep -c "loop$n1: nr_requests 128 -> 48" "$IOSCHEDD_LOG" || true)
udevadm trigger --action=change "/sys/block/loop$n1"
settle
wait_until 60 at_policy "loop$n1" || fail "the daemon did not put nr_requests back"
[ "$(helper_runs "loop$n1" | wc -l)" -gt "$runs" ] || fail "the change event did not run the helper"
[ "$(helper_read_queue "loop$n1")" = 0 ] || fail "the helper acted on the change event too"
logged_more_than() { [ "$(grep -c "loop$n1: nr_requests 128 -> 48" "$IOSCHEDD_LOG")" -gt "$1" ]; }
wait_until 60 logged_more_than "$lines" ||
        fail "the daemon logged no write for the change event"
[ "$(grep -c "loop$n1: nr_requests 128 -> 48" "$IOSCHEDD_LOG")" = $((lines + 1)) ] ||
        fail "more than one write for one drift: $(grep "loop$n1: nr_requests" "$IOSCHEDD_LOG")"

log "daemon crashed (SIGKILL): its marker stays, the rule alone brings loop$n2 to policy"
kill -KILL "$IOSCHEDD_PID"
wait "$IOSCHEDD_PID" 2>/dev/null || true
IOSCHEDD_PID=
[ -e "$marker" ] || fail "SIGKILL removed the marker?"
loop_add_attach "$n2"
settle
wait_until 60 at_policy "loop$n2" || fail "loop$n2 not at policy after the daemon crashed"
[ "$(helper_read_queue "loop$n2")" -gt 0 ] || fail "the helper did not act for loop$n2"

log "daemon stopped (SIGTERM): it removes its marker, the rule alone brings loop$n3 to policy"
ioschedd_start --config "$conf"
[ "$(cat "$marker")" = "$IOSCHEDD_PID" ] || fail "marker after restart: $(cat "$marker" 2>&1)"
ioschedd_stop
[ ! -e "$marker" ] || fail "the stopped daemon left its marker: $(cat "$marker")"
loop_add_attach "$n3"
settle
wait_until 60 at_policy "loop$n3" || fail "loop$n3 not at policy with the daemon off"
[ "$(helper_read_queue "loop$n3")" -gt 0 ] || fail "the helper did not act for loop$n3"
log "ok"
