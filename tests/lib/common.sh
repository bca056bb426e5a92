# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers of the root test suites and of the benchmarks (bench/lib.sh sources it).
# Source it from a bash test:
#   . "$(dirname "$0")/../lib/common.sh"
#
# Safety: a script touches only loop devices it made with loop_new, loop_create, loop_add or
# loop_attach; every one of them is detached (and removed, when its index is ours) when the
# script exits, also on failure or signal; loopctl detaches only devices backed by files in
# $TEST_TMP. An installed iosched rule is kept off them (udev_shield).

set -euo pipefail

TEST_NAME=$(basename "$0" .sh)
# The benchmarks (bench/lib.sh) set TEST_TMP_TEMPLATE: their backing files are in /dev/shm.
TEST_TMP=$(mktemp -d "${TEST_TMP_TEMPLATE:-/tmp/iosched-$TEST_NAME.XXXXXX}")
# Files, not arrays: the loop_* functions run in $(...) subshells too.
_LOOPS="$TEST_TMP/.loops"         # loop devices we created (new indexes): removed at exit
_ATTACHED="$TEST_TMP/.attached"   # existing free loop devices we attached: detached at exit
: >"$_LOOPS"
: >"$_ATTACHED"
declare -a _CLEANUPS=()

# Where the built programs are: meson passes IOSCHED_BUILD_DIR; default ../../build.
IOSCHED_SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${IOSCHED_BUILD_DIR:=$IOSCHED_SRC_DIR/build}"
IOSCHED_APPLY="$IOSCHED_BUILD_DIR/udev/iosched-apply"
# IOSCHEDD=PATH runs another daemon binary (e.g. a baseline build, for a before/after benchmark).
: "${IOSCHEDD:=$IOSCHED_BUILD_DIR/daemon/ioschedd}"
IOSCHEDCTL="$IOSCHED_BUILD_DIR/ctl/ioschedctl"
# Creates and removes loop devices (tests/lib/loopctl.c).
LOOPCTL="$IOSCHED_BUILD_DIR/tests/lib/loopctl"

log() { printf '%s: %s\n' "$TEST_NAME" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
skip() { log "SKIP: $*"; exit 77; }

require_root() {
        [ "$(id -u)" = 0 ] || fail "needs root: it creates loop devices (the root suite: tests/run-all)"
}

# Run a command at exit, in reverse order of registration (before the loop devices go).
on_exit() { _CLEANUPS+=("$*"); }

_cleanup() {
        local rc=$? i dev
        # A second signal must not cut the cleanup short.
        trap '' INT TERM
        for ((i = ${#_CLEANUPS[@]} - 1; i >= 0; i--)); do
                eval "${_CLEANUPS[$i]}" >/dev/null 2>&1 || true
        done
        while read -r dev; do
                [ -n "$dev" ] && losetup -d "/dev/$dev" >/dev/null 2>&1
                # udev may hold the device open for a moment: try again
                [ -n "$dev" ] && losetup "/dev/$dev" >/dev/null 2>&1 && { sleep 0.2; losetup -d "/dev/$dev" >/dev/null 2>&1; }
        done <"$_ATTACHED"
        if [ -s "$_LOOPS" ]; then
                # shellcheck disable=SC2046
                "$LOOPCTL" del "$TEST_TMP" $(sort -u "$_LOOPS") >/dev/null 2>&1 || true
        fi
        rm -rf "$TEST_TMP"
        exit $rc
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

# loop_new [SIZE_MB] -> prints the kernel name (loopN) of a free existing loop device, attached
# to a new file in $TEST_TMP. The device is detached at exit.
loop_new() {
        local size=${1:-16} img dev
        img=$(mktemp "$TEST_TMP/loop.XXXXXX.img")
        truncate -s "${size}M" "$img"
        dev=$(losetup --find --show "$img")
        echo "${dev#/dev/}" >>"$_ATTACHED"
        basename "$dev"
}

# loop_del NAME: detach one of the loop_new devices now.
loop_del() {
        grep -qx "$1" "$_ATTACHED" || fail "loop_del: $1 is not one of ours"
        losetup -d "/dev/$1"
        sed -i "/^$1\$/d" "$_ATTACHED"
}

# loop_create [SIZE_MB [COUNT]] -> the kernel names of COUNT (default 1) loop devices with NEW
# indexes (the kernel sends "add" for each, and removing one makes the disk really go away),
# attached to files in $TEST_TMP, one a line. Detached and removed at exit. The first index
# tried is LOOPCTL_FIRST, or a random one clear of losetup --find.
loop_create() {
        LOOPCTL_FIRST=${LOOPCTL_FIRST:-$((1000 + RANDOM % 30000))} \
                "$LOOPCTL" add "$_LOOPS" "$TEST_TMP" "${2:-1}" "${1:-16}" || fail "loop_create: cannot create loop devices"
}

# loop_pick_free [COUNT]: the first of COUNT (default 1) consecutive loop numbers that exist
# nowhere now, from 100000 up (far above what losetup --find hands out). COUNT <= 1000.
loop_pick_free() {
        local count=${1:-1} b i
        for _ in $(seq 50); do
                b=$(( (100 + RANDOM % 900) * 1000 + RANDOM % (1001 - count) ))
                for ((i = 0; i < count; i++)); do
                        [ -e "/sys/class/block/loop$((b + i))" ] && continue 2
                done
                echo "$b"
                return 0
        done
        fail "no free block of $count loop numbers"
}

# loop_add N [COUNT]: create loopN .. loopN+COUNT-1 in one process (a burst of "add" uevents),
# unattached: disks of size 0, with a queue. Removed at exit.
loop_add() {
        "$LOOPCTL" new "$_LOOPS" "$1" "${2:-1}" || fail "cannot create loop$1 (count ${2:-1})"
}

# loop_attach N [SIZE_MB]: attach a new file in $TEST_TMP to loopN (losetup makes the index if
# it does not exist: then it is ours too). Detached and removed at exit.
loop_attach() {
        local n=$1 size=${2:-16} img
        img=$(mktemp "$TEST_TMP/loop.XXXXXX.img")
        truncate -s "${size}M" "$img"
        echo "loop$n" >>"$_LOOPS"
        losetup "/dev/loop$n" "$img" || fail "cannot attach loop$n"
}

loop_add_attach() {
        loop_add "$1"
        loop_attach "$@"
}

# loop_remove NAME...: detach our created loop devices and remove them, all at the same time:
# the disks go away.
loop_remove() {
        local strangers
        strangers=$(printf '%s\n' "$@" | grep -vxF -f "$_LOOPS" || true)
        [ -z "$strangers" ] || fail "loop_remove: not created by this script: $strangers"
        "$LOOPCTL" del "$TEST_TMP" "$@" || fail "loop_remove: cannot remove $*"
        printf '%s\n' "$@" | grep -vxF -f - "$_LOOPS" >"$_LOOPS.new" || true
        mv "$_LOOPS.new" "$_LOOPS"
}

qattr() { cat "/sys/block/$1/queue/$2"; }

# The bracketed scheduler of a disk.
current_scheduler() { sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$1/queue/scheduler"; }

# Count write-mode opens of sysfs queue files by a command: strace -f, one per write(2) target
# (by path, or below a disk's queue/ that the run holds open: -y shows that directory).
count_sysfs_writes() {
        local out="$TEST_TMP/strace.$$.$RANDOM"
        strace -f -qq -y -e trace=openat -o "$out" "$@" >/dev/null
        grep -cE 'queue[/>].*O_WRONLY' "$out" || true
}

# queue_open_re DISK...: an ERE for the open of a queue file of one of the DISKs in a trace of
# strace -y: by path ("sys/class/block/DISK/queue/FILE", or "DISK/queue/FILE" below
# sys/class/block held open), or below the disk's queue/, which a run holds open
# (sysfs_pin_disk()): 'openat(5</sys/devices/.../block/DISK/queue>, "FILE", ...'.
queue_open_re() {
        local alt
        alt=$(IFS='|'; echo "$*")
        echo "\"/?sys/class/block/($alt)/queue/[a-z_/]+\"|[0-9]+</sys/class/block>, \"($alt)/queue/[a-z_/]+\"|[0-9]+</sys/devices/[^>]*/block/($alt)/queue>, \"[a-z_/]+\""
}

# trace_run LOG CMD...: run CMD under strace -f, recording every open and write(2) with the path
# of its file descriptor (-y). Returns CMD's exit status; its output goes to the caller.
trace_run() {
        local log=$1
        shift
        strace -f -qq -y -e trace=openat,write -o "$log" "$@"
}

# sysfs_writes LOG: one line per write(2) to a block queue attribute in LOG, in order:
#   "DISK ATTR VALUE RESULT"   e.g. "loop5 nr_requests 32 2" or "loop5 nr_requests 32 -1 EBUSY ..."
# ATTR is below queue/ ("scheduler", "iosched/fifo_batch").
sysfs_writes() {
        sed -n 's|^[0-9]* *write([0-9]*</sys/devices/[^>]*/block/\([^/>]*\)/queue/\([^>]*\)>, "\([^"]*\)", [0-9]*) *= \(.*\)$|\1 \2 \3 \4|p' "$1"
}

# Make sure a systemd-udevd runs; stop it at exit only if we started it (then UDEVD_OURS=1).
. "$(dirname "${BASH_SOURCE[0]}")/udevd.sh"
# Before any loop device exists: an installed iosched rule must not act on this test's devices.
if [ "$(id -u)" = 0 ] && command -v udevadm >/dev/null; then
        _shield=$(udev_shield)
        on_exit "rm -f '$_shield'; udevadm control --reload"
fi
UDEVD_OURS=0
udevd_ensure() {
        local r=0
        udevd_start || r=$?
        case $r in
        0) ;;
        1) UDEVD_OURS=1; on_exit "udevd_stop $UDEVD_PID" ;;
        *) fail "no systemd-udevd" ;;
        esac
}

# storm_start DISK: a competing writer that rewrites DISK's scheduler (mq-deadline, the value
# the fault tests' policy wants too) back to back, in the background, until storm_stop (300 s at
# most); returns once its first write is done. Each write takes the queue's locks and freezes it:
# the policy's other writes meet EBUSY on 6.18.
storm_start() {
        local q=/sys/block/$1/queue/scheduler
        rm -f "$TEST_TMP/storm.stop" "$TEST_TMP/storm.started"
        (
                end=$((SECONDS + 300))
                while [ $SECONDS -lt $end ] && [ ! -e "$TEST_TMP/storm.stop" ]; do
                        echo mq-deadline >"$q" 2>/dev/null || true
                        [ -e "$TEST_TMP/storm.started" ] || : >"$TEST_TMP/storm.started"
                done
        ) &
        STORM_PID=$!
        on_exit "kill $STORM_PID"
        wait_until 60 test -e "$TEST_TMP/storm.started" || fail "the storm did not begin"
}
storm_stop() {
        touch "$TEST_TMP/storm.stop"
        wait "$STORM_PID" || true
}

# fault_policy NAME...: the config of the fault tests: one rule for the named disks that sets
# every kind of attribute (the scheduler, one of its tunables, queue limits).
fault_policy() {
        cat <<CONF
[rule faults]
match.name = $(IFS='|'; echo "$*")
scheduler = mq-deadline
iosched.fifo_batch = 8
nr_requests = 32
wbt_lat_usec = 3000
read_ahead_kb = 64
rq_affinity = 2
nomerges = 1
CONF
}

# wait_until TIMEOUT_S CMD...: poll CMD every 50 ms until it succeeds, for TIMEOUT_S whole
# seconds. The clock is $EPOCHREALTIME: bash's $SECONDS counts whole seconds of the wall clock,
# so a deadline of SECONDS + 1 could pass a moment after it was set (one check, then failure).
wait_until() {
        local timeout=$1 now end; shift
        now=${EPOCHREALTIME/[.,]/}
        end=$((now + timeout * 1000000))
        while ! "$@" >/dev/null 2>&1; do
                now=${EPOCHREALTIME/[.,]/}
                [ "$now" -lt "$end" ] || return 1
                sleep 0.05
        done
}

# udev_monitor_start FILE: record udevd's block events in FILE (udevadm monitor --udev) and
# return once the monitor listens: it prints its header after binding its socket.
udev_monitor_start() {
        local pid
        udevadm monitor --udev --subsystem-match=block >"$1" 2>/dev/null &
        pid=$!
        on_exit "kill $pid"
        wait_until 60 grep -q '^UDEV - ' "$1" || fail "udevadm monitor did not start listening"
}

# strace_attach OUT PID STRACE-OPTION...: trace PID and all its threads (strace -f, output
# to OUT) in the background ($STRACE_PID) and return once strace traces every thread the
# process has now (each thread's TracerPid is strace).
strace_attach() {
        local out=$1 pid=$2
        shift 2
        strace -f -o "$out" -p "$pid" "$@" 2>"$TEST_TMP/strace-attach.err" &
        STRACE_PID=$!
        on_exit "kill $STRACE_PID"
        wait_until 60 strace_attached "$pid" "$STRACE_PID" ||
                fail "strace did not attach to $pid: $(cat "$TEST_TMP/strace-attach.err")"
}
strace_attached() {
        local t
        for t in /proc/"$1"/task/*; do
                grep -q "^TracerPid:[[:space:]]*$2\$" "$t/status" || return 1
        done
}

# Sanitized builds (tools/test-sanitizers): programs that udevd runs get their environment from
# the device's properties, not from the test. Put "$(sanitizer_udev_env)" before RUN in a test
# rule so that their sanitizer reports reach the report directory too. Empty otherwise.
sanitizer_udev_env() {
        [ -n "${ASAN_OPTIONS:-}" ] && printf 'ENV{ASAN_OPTIONS}="%s", ' "$ASAN_OPTIONS"
        [ -n "${UBSAN_OPTIONS:-}" ] && printf 'ENV{UBSAN_OPTIONS}="%s", ' "$UBSAN_OPTIONS"
        return 0
}

# server_start PORTVAR PIDVAR LOG URLPATH CMD...: run CMD, an HTTP server, on a free 127.0.0.1
# port (every "@PORT@" in its words is replaced by the port) and return once
# http://127.0.0.1:PORT/URLPATH answers while CMD still runs; sets PORTVAR and PIDVAR. The port
# is one the kernel just handed out (bind to port 0); if CMD exits first (another program took
# the port in between), another one. CMD is killed and waited for at exit, also on failure: a
# server that outlived its test would hold root-tests.lock's inherited fd. Call it in the
# test's own shell, not in $(...): the server must be the test's child.
server_start() {
        local _portvar=$1 _pidvar=$2 _log=$3 _url=$4 _port _pid
        shift 4
        for _ in 1 2 3 4 5; do
                _port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
                        fail "no free port on 127.0.0.1"
                "${@//@PORT@/$_port}" >>"$_log" 2>&1 &
                _pid=$!
                on_exit "kill $_pid; wait $_pid"
                wait_until 60 server_answers "$_pid" "http://127.0.0.1:$_port/$_url" ||
                        fail "nothing answered on 127.0.0.1:$_port/$_url within 60 s: $(tail -n 5 "$_log")"
                if kill -0 "$_pid" 2>/dev/null; then
                        printf -v "$_portvar" %s "$_port"
                        printf -v "$_pidvar" %s "$_pid"
                        return 0
                fi
                wait "$_pid" || true
        done
        fail "the server exited on five free ports: $(tail -n 5 "$_log")"
}
# server_answers PID URL: URL answers, or the server PID has exited (the wait ends either way).
server_answers() { ! kill -0 "$1" 2>/dev/null || curl -fso /dev/null "$2"; }
