# SPDX-License-Identifier: LGPL-2.1-or-later
# ioschedd for the benchmarks: a private bus, the daemon on it with a bench config (--config:
# it touches only the disks that config names), and measurements from a client over one
# connection (bench/c/busprobe.c). Source after lib.sh, once bench_init ran: it starts the bus.

BUSPROBE="$IOSCHED_BUILD_DIR/bench/busprobe"
[ -x "$BUSPROBE" ] || fail "$BUSPROBE missing: build first"
# The tests' bus and daemon starter (tests/lib/daemon.sh), with the daemon's own log level: a
# benchmark measures the daemon as it runs on a machine.
IOSCHEDD_LOG="$BENCH_OUT/ioschedd.log"
IOSCHEDD_LOG_LEVEL=info
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/daemon.sh"
bus_start

# daemon_start CONF [ARGS...]: ioschedd on CONF (ioschedd_start); udevd must run: ioschedd
# listens to udev's events.
daemon_start() {
        local conf=$1; shift
        udevd_ensure
        ioschedd_start --config "$conf" "$@"
}

# The daemon's memory: "rss_kb hwm_kb" (VmRSS, and VmHWM: the peak).
daemon_rss() {
        awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { print r, h }' "/proc/$IOSCHEDD_PID/status"
}

# The daemon's own memory, kB: RssAnon (its heap, stacks and anonymous mappings). VmRSS also
# counts the pages of the shared libraries it maps (3.4 MB of libc, libsystemd and what they
# link), which are not the daemon's and are shared with every other program that maps them.
daemon_anon() {
        awk '/^RssAnon:/ { print $2 }' "/proc/$IOSCHEDD_PID/status"
}

# proc_cpu_us PID: the CPU time (user and system) of the process, its ended threads too, in µs
# (counted in clock ticks: 10 ms on most kernels).
proc_cpu_us() {
        awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%d\n", ($12 + $13) * 1000000 / hz }' \
                "/proc/$1/stat"
}

# proc_run_ns PID: the time the process's main thread ran, in ns (/proc/PID/schedstat: exact;
# for single-threaded dbus-daemon, the process's time).
proc_run_ns() { cut -d' ' -f1 "/proc/$1/schedstat"; }

# Context switches of every thread of PID, summed: each one is a wake-up of a sleeping thread
# (voluntary) or a preemption (involuntary).
proc_ctxsw() {
        # A thread may end between the glob and cat (or the process be gone): count what is left.
        { cat /proc/"$1"/task/*/status 2>/dev/null || true; } |
                awk '/^voluntary_ctxt_switches:/ { v += $2 } /^nonvoluntary_ctxt_switches:/ { n += $2 } END { print v + n }'
}

# daemon_apply DISK [COUNT PERIOD_MS]: Manager.Apply over one connection; prints the count.
daemon_apply() { "$BUSPROBE" apply "$@"; }

# daemon_wait_applied SINCE_EPOCHREALTIME DISK...: ms from SINCE to the last disk's LastApplied.
daemon_wait_applied() {
        local since=${1/[.,]/}; shift
        "$BUSPROBE" wait-applied "$since" "${DAEMON_WAIT_S:-120}" "$@"
}

# Property reads during a storm: start before, stop after; the report gives p50/p99/max.
daemon_probe_start() {
        rm -f "$TEST_TMP/probe.us"
        "$BUSPROBE" reads 2 "$TEST_TMP/probe.us" 2>>"$BENCH_OUT/busprobe.log" &
        DAEMON_PROBE_PID=$!
}
daemon_probe_stop() {   # OUTFILE: the latencies (µs), appended
        kill "$DAEMON_PROBE_PID" 2>/dev/null || true
        wait "$DAEMON_PROBE_PID" 2>/dev/null || true
        cat "$TEST_TMP/probe.us" >>"$1" 2>/dev/null || true
}
# latency_summary FILE -> "reads failed p50_ms p99_ms max_ms"
latency_summary() {
        sort -g "$1" | awk '$1 < 0 { f++; next } { v[++n] = $1 }
                END { if (!n) { print 0, f + 0, "-", "-", "-"; exit }
                      printf "%d %d %.2f %.2f %.2f\n", n, f + 0, v[int((n - 1) * 0.5) + 1] / 1000,
                             v[int((n - 1) * 0.99) + 1] / 1000, v[n] / 1000 }'
}
