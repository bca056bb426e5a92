# SPDX-License-Identifier: LGPL-2.1-or-later
# ioschedd for the benchmarks: a private bus, the daemon on it with a bench config (--config:
# it touches only the disks that config names), and measurements from a client over one
# connection (bench/c/busprobe.c). Source after lib.sh, once bench_init ran.

BUSPROBE="$IOSCHED_BUILD_DIR/bench/busprobe"
DAEMON_PID=""
DAEMON_LOG=""

# A dbus-daemon of our own, system-bus-like, that lets root (the only user here) do anything.
daemon_bus_start() {
        [ -z "${DAEMON_BUS_PID:-}" ] || return 0
        [ -x "$BUSPROBE" ] || bdie "$BUSPROBE missing: build first"
        local dir="$BENCH_TMP/bus"
        mkdir -p "$dir"
        cat >"$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="root"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
        dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile >"$dir/log" 2>&1 &
        DAEMON_BUS_PID=$!
        bench_on_exit "kill $DAEMON_BUS_PID"
        export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/socket"
        for _ in $(seq 100); do
                busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetId \
                        >/dev/null 2>&1 && return 0
                sleep 0.05
        done
        bdie "dbus-daemon did not start: $(cat "$dir/log")"
}

# daemon_start CONF [ARGS...]: ioschedd on CONF; returns once it owns its name (after its first
# pass over every disk). udevd must run: ioschedd listens to udev's events.
daemon_start() {
        local conf=$1; shift
        daemon_bus_start
        bench_udevd
        DAEMON_LOG="$BENCH_OUT/ioschedd.log"
        # Its engine marker stays in the bench's own directory, not the machine's /run/ioschedd.
        "$IOSCHED_DAEMON" --config "$conf" --runtime-dir "$BENCH_TMP/run-ioschedd" "$@" \
                >>"$DAEMON_LOG" 2>&1 &
        DAEMON_PID=$!
        for _ in $(seq 400); do
                busctl status org.iosched1 >/dev/null 2>&1 && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || bdie "ioschedd exited: $(tail -5 "$DAEMON_LOG")"
                sleep 0.05
        done
        bdie "ioschedd did not take its bus name within 20 s"
}

daemon_stop() {
        [ -n "$DAEMON_PID" ] || return 0
        kill "$DAEMON_PID" 2>/dev/null || true
        wait "$DAEMON_PID" 2>/dev/null || true
        DAEMON_PID=""
}
bench_on_exit daemon_stop

# The daemon's memory: "rss_kb hwm_kb" (VmRSS, and VmHWM: the peak).
daemon_rss() {
        awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { print r, h }' "/proc/$DAEMON_PID/status"
}

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
        rm -f "$BENCH_TMP/probe.us"
        "$BUSPROBE" reads 2 "$BENCH_TMP/probe.us" 2>>"$BENCH_OUT/busprobe.log" &
        DAEMON_PROBE_PID=$!
}
daemon_probe_stop() {   # OUTFILE: the latencies (µs), appended
        kill "$DAEMON_PROBE_PID" 2>/dev/null || true
        wait "$DAEMON_PROBE_PID" 2>/dev/null || true
        cat "$BENCH_TMP/probe.us" >>"$1" 2>/dev/null || true
}
# latency_summary FILE -> "reads failed p50_ms p99_ms max_ms"
latency_summary() {
        sort -g "$1" | awk '$1 < 0 { f++; next } { v[++n] = $1 }
                END { if (!n) { print 0, f + 0, "-", "-", "-"; exit }
                      printf "%d %d %.2f %.2f %.2f\n", n, f + 0, v[int((n - 1) * 0.5) + 1] / 1000,
                             v[int((n - 1) * 0.99) + 1] / 1000, v[n] / 1000 }'
}
