# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers of the benchmarks. Source it from a bench script:
#   . "$(dirname "$0")/lib.sh"; bench_init
#
# Safety: a benchmark touches only loop devices it created itself (tests/lib/loopctl.c creates
# them at fresh indexes, backed by files in its own /dev/shm directory) and detaches and removes
# every one of them at exit, also on failure or signal. udev rules it installs have a name unique
# to the run and match only its own devices by kernel name; they are removed at exit.
#
# Environment:
#   IOSCHED_BUILD_DIR  the meson build directory (default: <source>/build)
#   BENCH_SMOKE=1      tiny sizes and one repetition: proves the script works, measures nothing
#   BENCH_SUMMARY=FILE append one line per headline figure (bench/run-all collects them)
#   BENCH_OUT=DIR      keep raw results (fio logs, plot data) there (default: a temporary dir)
#   IOSCHED_BENCH_TAG=T  put T in the names of the run's directory and udev rules
#                      (/dev/shm/iosched-bench-T-..., 61-iosched-bench-T-...), so that a caller
#                      (tests/integration/bench-smoke.sh) finds its own run's, not another's

# The cleanup stack, loop devices, udevd and the udev shield are the root tests' own
# (tests/lib/common.sh); the daemon and its bus, tests/lib/daemon.sh (bench/daemon.sh).
TEST_TMP_TEMPLATE="/dev/shm/iosched-bench-${IOSCHED_BENCH_TAG:+$IOSCHED_BENCH_TAG-}$(basename "$0").XXXXXX"
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/common.sh"

EXECTIME="$IOSCHED_BUILD_DIR/bench/exectime"
TRUE_STATIC="$IOSCHED_BUILD_DIR/bench/true-static"
: "${BENCH_SMOKE:=0}"
: "${BENCH_SUMMARY:=}"

bench_init() {
        require_root
        for f in "$IOSCHED_APPLY" "$LOOPCTL" "$EXECTIME" "$TRUE_STATIC"; do
                [ -x "$f" ] || fail "$f missing: build first (meson setup build && ninja -C build)"
        done
        : "${BENCH_OUT:=$TEST_TMP/out}"
        # Results are appended to files there: an old run's would mix in.
        [ ! -d "$BENCH_OUT" ] || [ -z "$(ls -A "$BENCH_OUT")" ] || fail "BENCH_OUT=$BENCH_OUT is not empty"
        mkdir -p "$BENCH_OUT"
        BENCH_RUN_ID="${IOSCHED_BENCH_TAG:+$IOSCHED_BENCH_TAG-}$$-$RANDOM"
        log "start: $(bench_host)"
}

# One line saying where and when: kernel, load (1/5/15 min), CPUs.
# The CPU's name too: machines of one name differ threefold in speed here (absolute figures
# compare only within one run, or with the reference rows a table has).
bench_host() {
        local cpu
        cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
        printf 'kernel %s, %s CPUs (%s), load %s' "$(uname -r)" "$(nproc)" "${cpu:-unknown}" \
                "$(cut -d' ' -f1-3 /proc/loadavg)"
}
# bench_load1: the 1-min load average at the start of a round, printed for the record. A round
# starts once the load has settled to 1.0 or less (the previous round's own fio and writers
# raise it), waiting at most BENCH_SETTLE_S seconds (default 30; none in a smoke run): what
# the record shows is then another process's load, which a quiet run must not have
# (bench/update-doc refuses a run with any recorded load above 1.5).
bench_load1() {
        local l end=$((SECONDS + ${BENCH_SETTLE_S:-30}))
        [ "$BENCH_SMOKE" = 1 ] && end=0
        while :; do
                l=$(cut -d' ' -f1 /proc/loadavg)
                awk -v l="$l" 'BEGIN { exit !(l <= 1.0) }' && break
                [ $SECONDS -lt $end ] || break
                sleep 1
        done
        echo "$l"
}

# bench_loops N [SIZE_MB] -> BENCH_LOOPS=(loopN ...): new loop devices (loop_create) backed
# by files in /dev/shm, removed at exit.
bench_loops() {
        mapfile -t BENCH_LOOPS < <(loop_create "${2:-16}" "$1")
        [ "${#BENCH_LOOPS[@]}" = "$1" ] || fail "created ${#BENCH_LOOPS[@]} of $1 loop devices"
}

# bench_conf FILE SETTINGS DISK... : a config with rules matching only the given disks by
# name (several rules: Debian's inih takes lines of at most 200 characters).
bench_conf() {
        local file=$1 settings=$2 i=0 line="" d
        shift 2
        : >"$file"
        for d in "$@"; do
                if [ -n "$line" ] && [ $((${#line} + ${#d})) -gt 150 ]; then
                        printf '[rule bench%d]\nmatch.name = %s\n%s\n\n' $((i++)) "$line" "$settings" >>"$file"
                        line=""
                fi
                line=${line:+$line|}$d
        done
        [ -z "$line" ] || printf '[rule bench%d]\nmatch.name = %s\n%s\n\n' $i "$line" "$settings" >>"$file"
}

# A kernel-name match for udev rules: KERNEL=="loop4000|loop4001|..." (udev has no line limit).
bench_udev_match() {
        local IFS='|'
        printf 'KERNEL=="%s"' "$*"
}

# bench_udev_reload DISK: make udevd read the rules again, then let it handle one change event
# of DISK (one of ours) so that the measured events do not pay for the reload: a reload kills
# udevd's idle workers and the next event parses every rules file again. On a running system
# rules are loaded once at boot and workers exist when a storm comes.
bench_udev_reload() {
        udevadm control --reload
        udevd_ensure
        timeout 30 udevadm trigger --action=change --settle "/sys/block/$1" >/dev/null 2>&1 || true
}

# bench_udev_trigger TIMEOUT_S PATH...: `udevadm trigger --action=change --settle`, measured
# (MS). Only one udevd can run on a machine, and on a shared one another engineer's test may stop
# it while our events are queued in it: then the events are never finished, and --settle would
# wait for ever. After TIMEOUT_S the measurement is taken again (at most 3 times) on a running
# udevd.
bench_udev_trigger() {
        local timeout=$1 try t0
        shift
        for try in 1 2 3; do
                udevd_ensure
                t0=$EPOCHREALTIME
                if timeout "$timeout" udevadm trigger --action=change --settle "$@" >/dev/null 2>&1; then
                        ms_since "$t0"
                        return 0
                fi
                log "udevd did not finish the events within $timeout s (stopped by someone else?): again ($try)"
                sleep 1
        done
        fail "udevd did not finish the events, 3 times"
}

# Timing uses bash's own clock ($EPOCHREALTIME): a $(...) would fork, and a fork costs
# milliseconds on this kind of VM.
# t0=$EPOCHREALTIME ... ms_since "$t0" -> sets MS to the elapsed milliseconds (3 decimals).
ms_since() {
        local a=${1/[.,]/} b=${EPOCHREALTIME/[.,]/}
        local d=$((10#$b - 10#$a))
        printf -v MS '%d.%03d' $((d / 1000)) $((d % 1000))
}

# time_ms CMD... : run CMD (output discarded), set MS to its wall time in milliseconds.
time_ms() {
        local t0=$EPOCHREALTIME
        "$@" >/dev/null
        ms_since "$t0"
}

# median / percentile of numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "nan"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.1f", a / b }'; }

# Append a headline figure to the run-all summary: bench_summary WHAT VALUE UNIT [NOTE]
bench_summary() {
        [ -n "$BENCH_SUMMARY" ] || return 0
        printf '%s\t%s\t%s\t%s\t%s\n' "$TEST_NAME" "$1" "$2" "$3" "${4:-}" >>"$BENCH_SUMMARY"
}

# Repetitions: the asked number, or 1 for a smoke run.
reps() { if [ "$BENCH_SMOKE" = 1 ]; then echo 1; else echo "$1"; fi; }
