#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Other writers, in ioschedd: a udev rule of the configuration root's udev rules directory that
# writes a loop device's scheduler is on the disk's OtherWriters with its file:line, in
# ioschedctl explain and in the journal line of each change; a change that puts back a value
# someone else wrote says "changed back". With owner.defer = udev-rules the key is left to the
# rule: planned as "defer", never written (strace of the daemon), while a key nobody else writes
# still is. (The rule is not udevd's own: the guest's check runs real ones.)
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root

a=$(loop_new)
# A loop device keeps its queue across detach: start from the kernel's value, whatever the last
# test left.
echo none >"/sys/block/$a/queue/scheduler"
config_root test "match.name = $a" "scheduler = mq-deadline" "read_ahead_kb = 256"
mkdir -p "$root/etc/udev/rules.d"
rule=/etc/udev/rules.d/60-test-scheduler.rules
printf '# a distribution-style rule\nACTION=="add|change", KERNEL=="%s", ATTR{queue/scheduler}="kyber"\n' "$a" \
        >"$root$rule"
bus_start
ioschedd_start --config-root "$root" --no-monitor
ctl() { "$IOSCHEDCTL" --no-ask-password "$@"; }
[ "$(current_scheduler "$a")" = mq-deadline ] || fail "first pass"

disk_prop "$a" OtherWriters | grep -qF "\"scheduler\" \"udev-rules\" \"udev rule\" \"$rule\" 2 \"kyber\" \"add|change\" true" ||
        fail "OtherWriters: $(disk_prop "$a" OtherWriters)"
ctl explain "$a" | grep -qF "scheduler also written by udev rule $rule:2 writes kyber on add|change" ||
        fail "explain: $(ctl explain "$a")"
# The first pass changed the kernel's value: the line names the other writer, not a change back.
grep -q "$a: scheduler none -> mq-deadline (rule test, [^)]*/etc/iosched.conf:3); also written by $rule:2\$" \
        "$IOSCHEDD_LOG" || fail "first change's log line: $(grep "$a:" "$IOSCHEDD_LOG")"

# Someone else writes it (the rule would, on the next event): put back, and said so.
echo kyber >"/sys/block/$a/queue/scheduler"
ctl apply "$a"
[ "$(current_scheduler "$a")" = mq-deadline ] || fail "not put back"
grep -q "$a: scheduler kyber -> mq-deadline (rule test, [^)]*/etc/iosched.conf:3); changed back; also written by $rule:2\$" \
        "$IOSCHEDD_LOG" || fail "drift's log line: $(grep "$a: scheduler" "$IOSCHEDD_LOG")"
grep "$a: read_ahead_kb" "$IOSCHEDD_LOG" | grep -q "also written" && fail "read_ahead_kb has no other writer"

# owner.defer: the scheduler is left to the rule; read_ahead_kb, which nobody else writes, is not.
printf 'owner.defer = udev-rules\n' >>"$conf"
ctl reload
echo kyber >"/sys/block/$a/queue/scheduler"
echo 128 >"/sys/block/$a/queue/read_ahead_kb"
plan=$(mgr Plan s "$a")
echo "$plan" | grep -q '"scheduler" "kyber" "mq-deadline" "defer"' || fail "Plan: $plan"
strace_attach "$TEST_TMP/defer.strace" "$IOSCHEDD_PID" -qq -y -e trace=write
ctl apply "$a"
kill "$STRACE_PID"
wait "$STRACE_PID" 2>/dev/null || true
writes=$(sysfs_writes "$TEST_TMP/defer.strace" | awk -v d="$a" '$1 == d')
[ "$(current_scheduler "$a")" = kyber ] || fail "the deferred scheduler was changed: $(current_scheduler "$a")"
[ "$(qattr "$a" read_ahead_kb)" = 256 ] || fail "read_ahead_kb not written: $(qattr "$a" read_ahead_kb)"
echo "$writes" | grep -q scheduler && fail "the daemon wrote the deferred scheduler: $writes"
[ "$(echo "$writes" | grep -c read_ahead_kb)" = 1 ] || fail "read_ahead_kb writes: $writes"
ctl explain "$a" | grep -qF "scheduler also written by udev rule $rule:2 writes kyber on add|change; left to it (owner.defer)" ||
        fail "explain does not say the key is left to the rule: $(ctl explain "$a")"
log "ok"
