#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# With --kernel-events=yes ioschedd acts on the kernel's uevent when no rule matches on what
# only udev knows: a new disk is at its policy before udev ran its rules for it (udevd's exec
# queue is stopped meanwhile: a rule that held the event would hold udev's lock on the disk,
# which a scheduler switch waits for, apply-lock.sh), and udev's events, when they come, cause no write.
# With --no-kernel-events, and with a policy that matches on the model, the daemon waits for
# udev; by default (auto) too on a kernel where two switches of one queue at once can oops
# (6.16 to 7.2: kernel_scheduler_switch_races()), which it says, and not on the others.
# The rest runs with the default. Another rule that writes the scheduler in udev's event (under
# udev's lock: the daemon's switch comes before it or after it, never at the same time):
# udev's event makes the daemon put its value back when the rule's write was the later one, and
# what no rule of ours sets (read_ahead_kb, written by that rule too) reaches the bus once the
# events are over. Last, a storm of new disks (whose jobs read only what the policy needs while
# it lasts; with kernel events, udev's events that come during the kernel's burst are held until
# it is over) with another rule writing the scheduler back to none in each of udev's events:
# afterwards every disk has the policy's scheduler, and the bus shows each disk's size and
# read_ahead_kb as sysfs has them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
command -v udevadm >/dev/null || fail "udevadm is not installed (apt-get install udev)"
udevd_ensure
bus_start

rules=/run/udev/rules.d/59-iosched-kernel-test-$$-$RANDOM.rules
mkdir -p /run/udev/rules.d
on_exit "rm -f '$rules'; udevadm control --reload"
on_exit "udevadm control --start-exec-queue"

at_policy() { [ "$(current_scheduler "$1")" = mq-deadline ] && [ "$(qattr "$1" nr_requests)" = 48 ]; }
writes_of() { grep -c "$1: \(scheduler\|nr_requests\) .* -> " "$IOSCHEDD_LOG" || true; }

# case_run NAME early|late MATCH DAEMON_ARGS...: a new disk under a policy with MATCH, created
# while udev holds its events (udevd's exec queue stopped until the check is done). "early":
# the daemon must bring it to its policy before udev's events (waited for as long as it takes,
# 60 s at most). "late": it must not, which is watched for 3 s (a wrong early write after that
# goes unseen here; the other cases show that the daemon acts on the kernel's event quickly).
case_run() {
        local label=$1 expect=$2 match=$3 n d
        shift 3
        n=$(loop_pick_free)
        d=loop$n
        cat >"$TEST_TMP/$label.conf" <<CONF
[rule kernel-test]
match.name = $d
$match
scheduler = mq-deadline
nr_requests = 48
CONF
        ioschedd_start --config "$TEST_TMP/$label.conf" "$@"
        udevadm control --stop-exec-queue
        loop_add_attach "$n"
        if [ "$expect" = early ]; then
                wait_until 60 at_policy "$d" || fail "$label: not at its policy before udev's events"
        else
                wait_until 3 at_policy "$d" && fail "$label: at its policy before udev's events"
        fi
        udevadm control --start-exec-queue
        udevadm settle --timeout=60 || fail "udevadm settle timed out"
        wait_until 60 at_policy "$d" || fail "$label: $d not at policy after udev's events"
        has "$d: uevent change" "$IOSCHEDD_LOG" || fail "$label: udev's events for $d never reached the daemon"
        log "$label: at policy $expect; $(writes_of "$d") writes"
        [ "$(writes_of "$d")" = 2 ] || fail "$label: expected 2 writes (scheduler, nr_requests): $(grep "$d: " "$IOSCHEDD_LOG" | grep -- '->')"
        ioschedd_stop
        loop_remove "$d"
}

case_run kernel early "" --kernel-events=yes
release=$(uname -r)
IFS=.- read -r major minor _ <<<"$release"
# kernel_scheduler_switch_races(): 6.16 up to, not including, 7.3.
if { [ "$major" = 6 ] && [ "$minor" -ge 16 ]; } || { [ "$major" = 7 ] && [ "$minor" -lt 3 ]; }; then
        case_run auto late ""
        has "two scheduler switches of one queue at once can oops it" "$IOSCHEDD_LOG" ||
                fail "auto on $release: the daemon did not say why it waits for udev"
else
        case_run auto early ""
fi
case_run no-kernel late "" --no-kernel-events
case_run by-model late "match.model = !no-such-model"

# The other rule holds its writes 2 s (PROGRAM runs while the rule is read, before its ATTRs):
# a kernel-event job (on a kernel without the race) is long done when they land.
n=$(loop_pick_free)
d=loop$n
printf 'SUBSYSTEM=="block", KERNEL=="%s", PROGRAM=="%s 2", ATTR{queue/scheduler}="none", ATTR{queue/read_ahead_kb}="1024"\n' \
        "$d" "$(command -v sleep)" >"$rules"
udevadm control --reload
cat >"$TEST_TMP/other.conf" <<CONF
[rule kernel-test]
match.name = $d
scheduler = mq-deadline
nr_requests = 48
CONF
ioschedd_start --config "$TEST_TMP/other.conf"
loop_add_attach "$n"
udevadm settle --timeout=60 || fail "udevadm settle timed out"
wait_until 60 at_policy "$d" || fail "other-rule: $d left at $(current_scheduler "$d") after the other rule's write"
# The kernel-event job's write, and the one putting it back when the other rule's came after
# it; or one write, when udev held the lock first and the daemon's switch came after the rule's.
[ "$(grep -c "$d: scheduler none -> mq-deadline" "$IOSCHEDD_LOG")" -ge 1 ] ||
        fail "other-rule: the scheduler was not put back: $(grep "$d: " "$IOSCHEDD_LOG" | grep -- '->')"
[ "$(qattr "$d" read_ahead_kb)" = 1024 ] || fail "other-rule: the test rule did not write read_ahead_kb"
# Read in full once the events are over (at the latest IOSCHEDD_REFRESH_MAX_USEC, 10 s, when
# other disks keep the daemon busy).
wait_until 60 eval '[ "$(disk_current "$d" read_ahead_kb)" = 1024 ]' ||
        fail "other-rule: the bus shows read_ahead_kb $(disk_current "$d" read_ahead_kb) after the events, not 1024"
log "other-rule: scheduler put back, read_ahead_kb $(disk_current "$d" read_ahead_kb) on the bus"
ioschedd_stop
loop_remove "$d"

N=48
first=$(loop_pick_free $N)
names=()
for ((i = first; i < first + N; i++)); do names+=("loop$i"); done
# A rule per 8 names (a line holds at most 198 characters).
: >"$TEST_TMP/storm.conf"
for ((i = 0; i < N; i += 8)); do
        printf '[rule storm%d]\nmatch.name = %s\nscheduler = mq-deadline\n\n' "$i" \
                "$(IFS='|'; echo "${names[*]:$i:8}")" >>"$TEST_TMP/storm.conf"
done
printf 'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="%s", ATTR{queue/scheduler}="none"\n' \
        "$(IFS='|'; echo "${names[*]}")" >"$rules"
udevadm control --reload
ioschedd_start --config "$TEST_TMP/storm.conf"
record="$TEST_TMP/storm.record"
LOOPCTL_FIRST=$first "$LOOPCTL" storm "$record" "$TEST_TMP" $N 4 --events 2 \
        --attr scheduler=mq-deadline --timeout 120 >/dev/null ||
        { cat "$record" >>"$_LOOPS"; fail "storm: loopctl failed"; }
cat "$record" >>"$_LOOPS"
[ "$(wc -l <"$record")" = $N ] || fail "storm: created $(wc -l <"$record") of $N disks"
# Sets $d to the first disk that differs (wait_until runs it in this shell).
bus_matches_sysfs() {
        for d in "${names[@]}"; do
                [ "$(disk_prop "$d" SizeBytes)" = "t $(($(cat "/sys/block/$d/size") * 512))" ] || return 1
                [ "$(disk_current "$d" read_ahead_kb)" = "$(qattr "$d" read_ahead_kb)" ] || return 1
                [ "$(disk_current "$d" nr_requests)" = "$(qattr "$d" nr_requests)" ] || return 1
        done
}
udevadm settle --timeout=60 || fail "udevadm settle timed out"
all_at_policy() {
        for d in "${names[@]}"; do
                case $(cat "/sys/block/$d/queue/scheduler") in *"[mq-deadline]"*) ;; *) return 1 ;; esac
        done
}
# udev's rule wrote none after the daemon's kernel-event jobs: the held events put it back.
wait_until 60 all_at_policy || fail "storm: $d has $(cat "/sys/block/$d/queue/scheduler") after udev's events"
grep -h "burst of kernel uevents is over" "$IOSCHEDD_LOG" | tail -1 >&2 || true
rm -f "$rules"
udevadm control --reload
wait_until 60 bus_matches_sysfs || fail "storm: the bus does not show what sysfs has: $d SizeBytes" \
        "$(disk_prop "$d" SizeBytes), Current $(disk_prop "$d" Current)"
log "storm: $N disks at policy, their size, read_ahead_kb and nr_requests on the bus"
ioschedd_stop
# shellcheck disable=SC2046
loop_remove $(cat "$record")
log "ok"
