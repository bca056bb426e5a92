# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers for the tests and benchmarks of ioschedd: a private system-like bus, the daemon on it,
# busctl. Source after common.sh.

BUS_DIR="$TEST_TMP/bus"

# The unprivileged user of the tests: reads work, changes are denied.
UNPRIV_USER=nobody
UNPRIV_GROUP=$(id -gn nobody 2>/dev/null || echo nogroup)

# bus_start [EXTRA_INCLUDE...]: a dbus-daemon with the system bus's own policies (deny method
# calls unless a service's file allows them) that includes the project's own
# dbus/org.iosched1.conf; exports DBUS_SYSTEM_BUS_ADDRESS so that ioschedd, busctl and
# ioschedctl use it. Stopped at exit. Once: a second call (or sourcing this again) does nothing.
SYSTEM_BUS_CONF=${SYSTEM_BUS_CONF:-/usr/share/dbus-1/system.conf}
BUS_PID=${BUS_PID:-}
bus_start() {
        local inc extra="" policy
        [ -z "$BUS_PID" ] || return 0
        command -v dbus-daemon >/dev/null || fail "dbus-daemon is not installed"
        mkdir -p "$BUS_DIR"
        # The unprivileged client must reach the socket.
        chmod 0711 "$TEST_TMP" "$BUS_DIR"
        for inc in "$@"; do
                extra+="        <include>$inc</include>"$'\n'
        done
        # The system bus's own policies, as Debian ships them (dbus-system-bus-common): deny
        # method calls unless a service's file allows them; root may monitor.
        policy=$(sed -n '/<policy /,/<\/policy>/p' "$SYSTEM_BUS_CONF")
        [ -n "$policy" ] || fail "no <policy> in $SYSTEM_BUS_CONF"
        cat >"$BUS_DIR/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
        <type>system</type>
        <auth>EXTERNAL</auth>
        <listen>unix:path=$BUS_DIR/socket</listen>
$policy
        <include>$IOSCHED_SRC_DIR/dbus/org.iosched1.conf</include>
$extra</busconfig>
CONF
        dbus-daemon --config-file="$BUS_DIR/bus.conf" --nofork --nopidfile \
                >"$BUS_DIR/log" 2>&1 &
        BUS_PID=$!
        on_exit "kill $BUS_PID; wait $BUS_PID"
        export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$BUS_DIR/socket"
        wait_until 60 busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetId \
                || fail "dbus-daemon did not start: $(cat "$BUS_DIR/log")"
        chmod 0666 "$BUS_DIR/socket"
}

# config_root [RULE LINE...]: a --config-root tree in $TEST_TMP/root (sets root and conf) whose
# etc/iosched.conf holds one rule, [rule RULE] and the LINEs; without arguments, stdin.
config_root() {
        root="$TEST_TMP/root"
        conf="$root/etc/iosched.conf"
        mkdir -p "$root/etc"
        if [ $# = 0 ]; then
                cat >"$conf"
        else
                printf '[rule %s]\n' "$1" >"$conf"
                shift
                printf '%s\n' "$@" >>"$conf"
        fi
}

# watched_disks PREFIX: two new loop devices, $a and $b, and a config_root whose rules
# PREFIX-a and PREFIX-b give $a mq-deadline and read_ahead_kb 256 (a value for another writer
# to change) and $b nr_requests 8: the policy of the tests that watch ioschedd from outside
# (metrics, the Cockpit page).
watched_disks() {
        a=$(loop_new)
        b=$(loop_new)
        config_root <<CONF
[rule $1-a]
match.name = $a
scheduler = mq-deadline
read_ahead_kb = 256

[rule $1-b]
match.name = $b
nr_requests = 8
CONF
        mkdir -p "$root/etc/iosched.d"
}

IOSCHEDD_PID=${IOSCHEDD_PID:-}
: "${IOSCHEDD_LOG:=$TEST_TMP/ioschedd.log}"

# ioschedd_start ARGS...: run ioschedd on the test bus; returns once it owns org.iosched1
# (it takes the name after its first pass over every disk). It logs at IOSCHEDD_LOG_LEVEL
# (default debug; the benchmarks keep the daemon's own default) to IOSCHEDD_LOG.
# IOSCHEDD_WRAPPER: a command to run ioschedd under (tools/test-valgrind sets valgrind); it
# must exec ioschedd in the same process, so that IOSCHEDD_PID is the daemon's.
# Its engine marker goes to $IOSCHEDD_RUNTIME_DIR, never the machine's /run/ioschedd.
IOSCHEDD_RUNTIME_DIR="$TEST_TMP/run-ioschedd"
ioschedd_start() {
        local timeout=120
        [ -n "${IOSCHEDD_WRAPPER:-}" ] && timeout=600
        # shellcheck disable=SC2086
        ${IOSCHEDD_WRAPPER:-} "$IOSCHEDD" --log-level="${IOSCHEDD_LOG_LEVEL:-debug}" \
                --runtime-dir="$IOSCHEDD_RUNTIME_DIR" "$@" \
                >>"$IOSCHEDD_LOG" 2>&1 &
        IOSCHEDD_PID=$!
        on_exit "ioschedd_stop"
        if wait_until "$timeout" ioschedd_named; then
                ioschedd_alive && return 0
                cat "$IOSCHEDD_LOG" >&2
                fail "ioschedd exited"
        fi
        cat "$IOSCHEDD_LOG" >&2
        fail "ioschedd did not take its bus name within $timeout s"
}
# ioschedd_named: ioschedd owns its name; it stops the wait at once if the daemon exited.
ioschedd_named() {
        busctl status org.iosched1 >/dev/null 2>&1 && return 0
        ioschedd_alive || return 0
        return 1
}

ioschedd_stop() {
        [ -n "$IOSCHEDD_PID" ] || return 0
        kill "$IOSCHEDD_PID" 2>/dev/null || true
        wait "$IOSCHEDD_PID" 2>/dev/null || true
        IOSCHEDD_PID=
}

ioschedd_alive() { [ -n "$IOSCHEDD_PID" ] && kill -0 "$IOSCHEDD_PID" 2>/dev/null; }

# polkitd_start ACTION: the real polkitd on the test bus (bus_start "$POLKIT_BUS_CONF"), with
# the project's actions and a rule that allows $UNPRIV_USER org.iosched1.ACTION. polkitd reads
# actions from /usr/share/polkit-1/actions and rules from /etc/polkit-1/rules.d only: a file in
# each, with names of the test's own, removed at exit. Sets POLKITD_PID.
POLKITD=/usr/lib/polkit-1/polkitd
POLKIT_BUS_CONF=/usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf
polkitd_start() {
        local actions=/usr/share/polkit-1/actions rules=/etc/polkit-1/rules.d/00-iosched-test-$$.rules
        if [ ! -e "$actions/org.iosched1.policy" ]; then
                mkdir -p "$actions"
                cp "$IOSCHED_SRC_DIR/dbus/org.iosched1.policy" "$actions/org.iosched1.test-$$.policy"
                on_exit "rm -f $actions/org.iosched1.test-$$.policy"
        fi
        mkdir -p "${rules%/*}"
        cat >"$rules" <<RULES
// Written by iosched's $TEST_NAME test, removed when it ends.
polkit.addRule(function(action, subject) {
        if (action.id == "org.iosched1.$1" && subject.user == "$UNPRIV_USER")
                return polkit.Result.YES;
});
RULES
        on_exit "rm -f $rules"
        # Started as root, polkitd switches to its own user, which the bus lets own the name.
        "$POLKITD" --no-debug >"$TEST_TMP/polkitd.log" 2>&1 &
        POLKITD_PID=$!
        on_exit "kill $POLKITD_PID"
        wait_until 60 busctl call org.freedesktop.PolicyKit1 /org/freedesktop/PolicyKit1/Authority \
                org.freedesktop.DBus.Properties Get ss org.freedesktop.PolicyKit1.Authority BackendName ||
                fail "polkitd did not start: $(cat "$TEST_TMP/polkitd.log")"
}

# As the administrator types them.
mgr() { busctl call org.iosched1 /org/iosched1 org.iosched1.Manager "$@"; }
disk_path() { echo "/org/iosched1/disk/$1"; }       # loop names need no escaping
disk_prop() { busctl get-property org.iosched1 "$(disk_path "$1")" org.iosched1.Disk "$2"; }
# disk_current DISK KEY: KEY's value in the disk's Current map ("" when the kernel shows none).
# Current's keys and values have no spaces or quotes (org.iosched1(5)).
disk_current() {
        disk_prop "$1" Current | awk -v k="\"$2\"" \
                '{ for (i = 3; i < NF; i += 2) if ($i == k) { v = $(i + 1); gsub(/"/, "", v); print v } }'
}
mgr_prop() { busctl get-property org.iosched1 /org/iosched1 org.iosched1.Manager "$1"; }

# Run a command as the unprivileged user, on the test bus.
as_unpriv() {
        setpriv --reuid="$UNPRIV_USER" --regid="$UNPRIV_GROUP" --clear-groups --reset-env \
                env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" "$@"
}

# expect_error NAME CMD...: CMD fails and its stderr names the D-Bus error NAME... busctl
# prints only the message, so the name is checked with "busctl --json" unavailable: use
# the error text map below.
expect_fail() {
        local out
        if out=$("$@" 2>&1); then
                fail "expected failure: $* (got: $out)"
        fi
        printf '%s' "$out"
}

# monitor_start FILE [MATCH...]: record every signal ioschedd sends (and what the MATCH rules
# match), one JSON object a line. Returns once the monitor is listening: it also matches a
# sentinel signal that this shell emits until the sentinel is in FILE (busctl prints nothing
# when its match is in place).
monitor_start() {
        local pid file=$1 m matches=()
        shift
        for m in "$@"; do
                matches+=(--match "$m")
        done
        busctl monitor --json=short --match "type='signal',sender='org.iosched1'" "${matches[@]}" \
                --match "type='signal',interface='org.iosched1.Test',member='MonitorReady'" >"$file" 2>/dev/null &
        pid=$!
        on_exit "kill $pid"
        wait_until 60 monitor_ready "$file" || fail "busctl monitor did not start listening"
}
monitor_ready() {
        has '"member":"MonitorReady"' "$1" && return 0
        busctl emit /org/iosched1/test org.iosched1.Test MonitorReady >/dev/null 2>&1
        has '"member":"MonitorReady"' "$1"
}

# gdbus prints the D-Bus error name ("GDBus.Error:org.iosched1.Error.NoSuchDisk: ..."):
# used where a test checks which named error came back. GVariant text for the arguments.
gcall() {
        local method=$1; shift
        gdbus call --system --dest org.iosched1 --object-path /org/iosched1 \
                --method "org.iosched1.Manager.$method" "$@"
}

# expect_error NAME METHOD ARGS...: the call fails with the D-Bus error NAME.
expect_error() {
        local name=$1 out; shift
        if out=$(gcall "$@" 2>&1); then
                fail "$1 ${*:2}: expected $name, but it succeeded: $out"
        fi
        case "$out" in
        *"GDBus.Error:$name:"*) ;;
        *) fail "$1: expected $name, got: $out" ;;
        esac
}

# Every queue value of a disk that a policy can set, to compare before and after.
queue_snapshot() {
        local d=$1 f
        for f in scheduler nr_requests wbt_lat_usec read_ahead_kb max_sectors_kb rq_affinity \
                 nomerges add_random iostats; do
                printf '%s=%s\n' "$f" "$(cat "/sys/block/$d/queue/$f" 2>/dev/null || echo -)"
        done
        for f in /sys/block/"$d"/queue/iosched/*; do
                [ -e "$f" ] && printf '%s=%s\n' "${f##*/}" "$(cat "$f")"
        done
        return 0
}

# has [GREP OPTIONS] PATTERN: like "grep -q", but reads all of its input, so that the writer
# of a long output never dies of SIGPIPE (which "set -o pipefail" would turn into a failure).
has() { grep "$@" >/dev/null; }
