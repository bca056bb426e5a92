# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers of the root test suites. Source it from a bash test:
#   . "$(dirname "$0")/../lib/common.sh"
#
# Safety: a test touches only loop devices it created with loop_new; every one of them is
# detached (and its backing file removed) when the test exits, also on failure or signal.

set -euo pipefail

TEST_NAME=$(basename "$0" .sh)
TEST_TMP=$(mktemp -d "/tmp/iosched-${TEST_NAME}.XXXXXX")
_LOOPS="$TEST_TMP/.loops"   # a file: loop_new runs in $(...) subshells
_CREATED="$TEST_TMP/.created"   # loop devices whose index we created: removed at exit
: >"$_LOOPS"
: >"$_CREATED"
declare -a _CLEANUPS=()

# Where the built programs are: meson passes IOSCHED_BUILD_DIR; default ../../build.
: "${IOSCHED_BUILD_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}"
IOSCHED_APPLY="$IOSCHED_BUILD_DIR/udev/iosched-apply"
IOSCHED_SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

log() { printf '%s: %s\n' "$TEST_NAME" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
skip() { log "SKIP: $*"; exit 77; }

require_root() {
        [ "$(id -u)" = 0 ] || fail "needs root (run the root suite as root: tests/run-all)"
}

# Run a command at exit, in reverse order of registration.
on_exit() { _CLEANUPS+=("$*"); }

_cleanup() {
        local rc=$?
        local i
        for ((i = ${#_CLEANUPS[@]} - 1; i >= 0; i--)); do
                eval "${_CLEANUPS[$i]}" >/dev/null 2>&1 || true
        done
        while read -r dev; do
                [ -n "$dev" ] && losetup -d "$dev" >/dev/null 2>&1
                # udev may hold the device open for a moment: try again
                [ -n "$dev" ] && losetup "$dev" >/dev/null 2>&1 && { sleep 0.2; losetup -d "$dev" >/dev/null 2>&1; }
        done <"$_LOOPS"
        while read -r dev; do
                [ -n "$dev" ] && _loop_ctl_remove "${dev#/dev/loop}" >/dev/null 2>&1
        done <"$_CREATED"
        rm -rf "$TEST_TMP"
        exit $rc
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

# loop_new [SIZE_MB] -> prints the kernel name (loopN) of a new loop device backed by a
# file in $TEST_TMP. The device is detached at exit.
loop_new() {
        local size=${1:-16} img dev
        img=$(mktemp "$TEST_TMP/loop.XXXXXX.img")
        truncate -s "${size}M" "$img"
        dev=$(losetup --find --show "$img")
        echo "$dev" >>"$_LOOPS"
        basename "$dev"
}

# loop_del NAME: detach one of our loop devices now.
loop_del() {
        local dev="/dev/$1"
        grep -qx "$dev" "$_LOOPS" || fail "loop_del: $1 is not one of ours"
        losetup -d "$dev"
        sed -i "\\|^$dev\$|d" "$_LOOPS"
}

# The index of a loop device is removed with LOOP_CTL_REMOVE on /dev/loop-control (losetup
# can only detach): tests/lib/loopctl.c, built with the project.
_loop_ctl_remove() {
        "$IOSCHED_BUILD_DIR/tests/lib/loopctl" remove "$1"
}

# loop_create [SIZE_MB] -> the kernel name of a loop device with a NEW index (the kernel sends
# "add" for it, and removing it makes the disk really go away), attached to a file in
# $TEST_TMP. Detached and removed at exit. loop_new reuses free existing devices instead.
loop_create() {
        local size=${1:-16} img idx
        img=$(mktemp "$TEST_TMP/loop.XXXXXX.img")
        truncate -s "${size}M" "$img"
        for _ in $(seq 50); do
                # High and random: clear of losetup --find and of other tests' devices.
                idx=$((1000 + RANDOM % 30000))
                [ -e "/sys/block/loop$idx" ] && continue
                losetup "/dev/loop$idx" "$img" 2>/dev/null || continue
                echo "/dev/loop$idx" >>"$_LOOPS"
                echo "/dev/loop$idx" >>"$_CREATED"
                echo "loop$idx"
                return 0
        done
        fail "loop_create: no free loop index found"
}

# loop_remove NAME...: detach our created loop devices and remove them, all at the same time:
# the disks go away.
loop_remove() {
        local n pids=()
        for n in "$@"; do
                grep -qx "/dev/$n" "$_CREATED" || fail "loop_remove: $n was not created by loop_create"
        done
        for n in "$@"; do
                { losetup -d "/dev/$n" 2>/dev/null; _loop_ctl_remove "${n#loop}"; } &
                pids+=($!)
        done
        for n in "${pids[@]}"; do
                wait "$n" || fail "loop_remove: cannot remove $*"
        done
        for n in "$@"; do
                sed -i "\\|^/dev/$n\$|d" "$_LOOPS" "$_CREATED"
        done
}

qattr() { cat "/sys/block/$1/queue/$2"; }

# The bracketed scheduler of a disk.
current_scheduler() { sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$1/queue/scheduler"; }

# Count write-mode opens of sysfs queue files by a command: strace -f, one per write(2) target.
count_sysfs_writes() {
        local out="$TEST_TMP/strace.$$.$RANDOM"
        strace -f -qq -e trace=openat -o "$out" "$@" >/dev/null
        grep -c 'queue/.*O_WRONLY' "$out" || true
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
        1) UDEVD_OURS=1; on_exit "udevadm control --exit" ;;
        *) fail "no systemd-udevd" ;;
        esac
}

# wait_until TIMEOUT_S CMD...: poll CMD every 50 ms until it succeeds.
wait_until() {
        local timeout=$1; shift
        local end=$((SECONDS + timeout))
        while ! "$@" >/dev/null 2>&1; do
                [ $SECONDS -lt $end ] || return 1
                sleep 0.05
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
