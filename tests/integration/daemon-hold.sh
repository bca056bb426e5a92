#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Holds: `ioschedctl hold DISK KEY=VALUE... -- COMMAND` holds settings for the life of COMMAND.
# The values are in force when COMMAND starts, the disk object lists the hold with its holder
# and reason, and the hold ends when COMMAND ends (Release) or when the holder's bus connection
# closes (SIGKILL: ioschedd tracks the connection), after which the values are back with one
# write per key (strace's count of the daemon's write(2)s: this kernel's lockdown leaves no
# function tracer; the guest's check counts in the kernel). Two stacked holds: the newest wins
# key by key, and releasing either one first brings back what is below it. A hold never
# survives the daemon: after a crash the policy stands and the log says which hold was dropped.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root

a=$(loop_new)
config_root test "match.name = $a" "scheduler = mq-deadline" "read_ahead_kb = 128"
bus_start
ioschedd_start --config-root "$root" --no-monitor
[ "$(current_scheduler "$a")" = mq-deadline ] && [ "$(qattr "$a" read_ahead_kb)" = 128 ] || fail "first pass"

holds() { disk_prop "$a" Holds; }
n_holds() { holds | awk '{ print $2 }'; }
at() { [ "$(current_scheduler "$a")" = "$1" ] && [ "$(qattr "$a" read_ahead_kb)" = "$2" ]; }

# hold_start NAME SETTINGS...: a holder in the background whose COMMAND records what it sees
# when it starts, then waits on its fifo; sets HOLDER_PID (ioschedctl's) and returns once the
# command runs. The hold is in force by then: ioschedctl starts the command after Hold's reply.
# The holder is a process group of its own (set -m), HOLDER_PID its leader: at exit, also on
# failure, the whole group is killed, the command too (an orphaned command that inherited the
# root-tests lock's descriptor once kept the lock for 80 minutes).
hold_start() {
        local name=$1
        shift
        mkfifo "$TEST_TMP/$name.fifo"
        set -m
        # shellcheck disable=SC2016
        "$IOSCHEDCTL" --reason="test $name" hold "$a" "$@" -- sh -c \
                'echo "$(sed "s/.*\[\(.*\)\].*/\1/" /sys/block/$1/queue/scheduler) $(cat /sys/block/$1/queue/read_ahead_kb)" >"$2.saw"
                 read x <"$2.fifo"; exit 7' sh "$a" "$TEST_TMP/$name" >"$TEST_TMP/$name.out" 2>&1 &
        HOLDER_PID=$!
        set +m
        on_exit "kill -9 -- -$HOLDER_PID"
        wait_until 60 test -s "$TEST_TMP/$name.saw" || fail "$name: the command did not start: $(cat "$TEST_TMP/$name.out")"
}
# hold_end NAME: COMMAND ends (exit 7); ioschedctl releases and exits with 7.
hold_end() {
        local rc=0
        echo >"$TEST_TMP/$1.fifo"
        wait "$2" || rc=$?
        [ "$rc" = 7 ] || fail "$1: ioschedctl exited $rc, not COMMAND's 7: $(cat "$TEST_TMP/$1.out")"
}

# A hold: in force when the command starts, listed with holder and reason.
hold_start one scheduler=none read_ahead_kb=4096
one=$HOLDER_PID
[ "$(cat "$TEST_TMP/one.saw")" = "none 4096" ] || fail "the command saw $(cat "$TEST_TMP/one.saw"), not the held values"
[ "$(n_holds)" = 1 ] || fail "Holds: $(holds)"
holds | grep -q '"ioschedctl (pid [0-9]*, uid 0)" "test one"' || fail "Holds shows no holder and reason: $(holds)"
holds | grep -q '"read_ahead_kb" "4096"' || fail "Holds shows no settings: $(holds)"
"$IOSCHEDCTL" explain "$a" | grep -q "^scheduler .* none .*hold 1 by ioschedctl (pid [0-9]*, uid 0): test one (rule hold-1)" || fail "explain: $("$IOSCHEDCTL" explain "$a")"

# SIGKILL of the holder: its connection closes, the hold ends, the policy is back with exactly
# one write per key.
strace_attach "$TEST_TMP/kill.strace" "$IOSCHEDD_PID" -qq -y -e trace=write
kill -9 "$one"
wait "$one" 2>/dev/null || true
kill -9 -- -"$one"              # its command, orphaned, ends too
wait_until 60 at mq-deadline 128 || fail "after SIGKILL of the holder: $(current_scheduler "$a") $(qattr "$a" read_ahead_kb)"
wait_until 60 grep -q "$a: hold 1 ended: its holder's bus connection closed" "$IOSCHEDD_LOG" || fail "no log line for the end"
wait_until 60 sh -c "[ \"\$(busctl get-property org.iosched1 /org/iosched1 org.iosched1.Manager DisksPending)\" = 'u 0' ]" ||
        fail "the daemon stays busy"
kill "$STRACE_PID"
wait "$STRACE_PID" 2>/dev/null || true
writes=$(sysfs_writes "$TEST_TMP/kill.strace" | awk -v d="$a" '$1 == d')
log "writes after the kill: $(echo "$writes" | tr '\n' ';')"
[ "$(echo "$writes" | awk '$2 == "scheduler"' | wc -l)" = 1 ] || fail "scheduler written $(echo "$writes" | grep -c scheduler) times"
[ "$(echo "$writes" | awk '$2 == "read_ahead_kb"' | wc -l)" = 1 ] || fail "read_ahead_kb written $(echo "$writes" | grep -c read_ahead_kb) times"
[ "$(echo "$writes" | wc -l)" = 2 ] || fail "$(echo "$writes" | wc -l) writes, not one per key"
[ "$(n_holds)" = 0 ] || fail "the hold is still listed: $(holds)"

# Two stacked holds, the newer released first, by COMMAND's end (Release).
hold_start two scheduler=none read_ahead_kb=4096
two=$HOLDER_PID
hold_start three scheduler=kyber
three=$HOLDER_PID
at kyber 4096 || fail "stacked: $(current_scheduler "$a") $(qattr "$a" read_ahead_kb), want kyber 4096"
[ "$(cat "$TEST_TMP/three.saw")" = "kyber 4096" ] || fail "three saw $(cat "$TEST_TMP/three.saw")"
hold_end three "$three"
at none 4096 || fail "newer released: $(current_scheduler "$a") $(qattr "$a" read_ahead_kb), want none 4096"
hold_end two "$two"
at mq-deadline 128 || fail "both released: $(current_scheduler "$a") $(qattr "$a" read_ahead_kb)"
grep -q "$a: hold [0-9]* ended: released by its holder" "$IOSCHEDD_LOG" || fail "no log line for Release"

# ... and the older released first.
hold_start four scheduler=none read_ahead_kb=4096
four=$HOLDER_PID
hold_start five scheduler=kyber
five=$HOLDER_PID
hold_end four "$four"
at kyber 128 || fail "older released: $(current_scheduler "$a") $(qattr "$a" read_ahead_kb), want kyber 128"
hold_end five "$five"
at mq-deadline 128 || fail "both released: $(current_scheduler "$a") $(qattr "$a" read_ahead_kb)"

# Release of a handle that is not in force; a hold without settings; a bad value.
out=$(mgr Release u 4242 2>&1) && fail "Release of no hold: $out"
echo "$out" | grep -q "No hold 4242" || fail "Release of no hold: $out"
out=$(mgr Hold 'sa{sv}s' "$a" 0 "none" 2>&1) && fail "a hold of nothing: $out"
out=$(mgr Hold 'sa{sv}s' "$a" 1 nr_requests s 0 "bad" 2>&1) && fail "nr_requests=0 held: $out"
echo "$out" | grep -q "InvalidSetting\|Invalid value" || fail "bad value: $out"

# A hold never survives the daemon: after a crash the policy stands, and the log says so.
hold_start six scheduler=none
six=$HOLDER_PID
kill -9 "$IOSCHEDD_PID"
wait "$IOSCHEDD_PID" 2>/dev/null || true
IOSCHEDD_PID=
[ -s "$IOSCHEDD_RUNTIME_DIR/holds" ] || fail "no record of the hold in $IOSCHEDD_RUNTIME_DIR"
ioschedd_start --config-root "$root" --no-monitor
at mq-deadline 128 || fail "after the restart: $(current_scheduler "$a") $(qattr "$a" read_ahead_kb)"
grep -q "$a: hold [0-9]* (scheduler=none, by ioschedctl (pid [0-9]*, uid 0): test six) was dropped: ioschedd restarted; the policy stands." \
        "$IOSCHEDD_LOG" || fail "the restart does not say which hold it dropped"
[ ! -e "$IOSCHEDD_RUNTIME_DIR/holds" ] || fail "the record of dropped holds is still there"
[ "$(n_holds)" = 0 ] || fail "a hold survived the restart: $(holds)"
kill -9 -- -"$six"
log "ok"
