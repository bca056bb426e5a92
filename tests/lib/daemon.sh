# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers for the tests of ioschedd: a private system-like bus, the daemon on it, busctl.
# Source after common.sh.

IOSCHEDD="$IOSCHED_BUILD_DIR/daemon/ioschedd"
IOSCHEDCTL="$IOSCHED_BUILD_DIR/ctl/ioschedctl"
BUS_DIR="$TEST_TMP/bus"

# The unprivileged user of the tests: reads work, changes are denied.
UNPRIV_USER=nobody
UNPRIV_GROUP=$(id -gn nobody 2>/dev/null || echo nogroup)

# bus_start [EXTRA_INCLUDE...]: a dbus-daemon with the system bus's default policy (deny
# method calls unless a service's file allows them) that includes the project's own
# dbus/org.iosched1.conf; exports DBUS_SYSTEM_BUS_ADDRESS so that ioschedd, busctl and
# ioschedctl use it. Stopped at exit.
bus_start() {
        local inc extra=""
        command -v dbus-daemon >/dev/null || fail "dbus-daemon is not installed"
        mkdir -p "$BUS_DIR"
        # The unprivileged client must reach the socket.
        chmod 0711 "$TEST_TMP" "$BUS_DIR"
        for inc in "$@"; do
                extra+="        <include>$inc</include>"$'\n'
        done
        cat >"$BUS_DIR/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
        <type>system</type>
        <auth>EXTERNAL</auth>
        <listen>unix:path=$BUS_DIR/socket</listen>
        <policy context="default">
                <allow user="*"/>
                <deny own="*"/>
                <deny send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
        </policy>
        <policy user="root">
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
        </policy>
        <include>$IOSCHED_SRC_DIR/dbus/org.iosched1.conf</include>
$extra</busconfig>
CONF
        dbus-daemon --config-file="$BUS_DIR/bus.conf" --nofork --nopidfile \
                >"$BUS_DIR/log" 2>&1 &
        local pid=$!
        on_exit "kill $pid; wait $pid"
        export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$BUS_DIR/socket"
        wait_until 10 busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetId \
                || fail "dbus-daemon did not start: $(cat "$BUS_DIR/log")"
        chmod 0666 "$BUS_DIR/socket"
}

IOSCHEDD_PID=
IOSCHEDD_LOG="$TEST_TMP/ioschedd.log"

# ioschedd_start ARGS...: run ioschedd on the test bus; returns once it owns org.iosched1
# (it takes the name after its first pass over every disk).
# IOSCHEDD_WRAPPER: a command to run ioschedd under (tools/test-valgrind sets valgrind); it
# must exec ioschedd in the same process, so that IOSCHEDD_PID is the daemon's.
# Its engine marker goes to $IOSCHEDD_RUNTIME_DIR, never the machine's /run/ioschedd.
IOSCHEDD_RUNTIME_DIR="$TEST_TMP/run-ioschedd"
ioschedd_start() {
        local steps=200
        [ -n "${IOSCHEDD_WRAPPER:-}" ] && steps=2400
        # shellcheck disable=SC2086
        ${IOSCHEDD_WRAPPER:-} "$IOSCHEDD" --log-level=debug --runtime-dir="$IOSCHEDD_RUNTIME_DIR" "$@" \
                >>"$IOSCHEDD_LOG" 2>&1 &
        IOSCHEDD_PID=$!
        on_exit "ioschedd_stop"
        local i
        for i in $(seq $steps); do
                busctl status org.iosched1 >/dev/null 2>&1 && return 0
                kill -0 "$IOSCHEDD_PID" 2>/dev/null || { cat "$IOSCHEDD_LOG" >&2; fail "ioschedd exited"; }
                sleep 0.05
        done
        cat "$IOSCHEDD_LOG" >&2
        fail "ioschedd did not take its bus name within $((steps / 20)) s"
}

ioschedd_stop() {
        [ -n "$IOSCHEDD_PID" ] || return 0
        kill "$IOSCHEDD_PID" 2>/dev/null || true
        wait "$IOSCHEDD_PID" 2>/dev/null || true
        IOSCHEDD_PID=
}

ioschedd_alive() { [ -n "$IOSCHEDD_PID" ] && kill -0 "$IOSCHEDD_PID" 2>/dev/null; }

# As the administrator types them.
mgr() { busctl call org.iosched1 /org/iosched1 org.iosched1.Manager "$@"; }
disk_path() { echo "/org/iosched1/disk/$1"; }       # loop names need no escaping
disk_prop() { busctl get-property org.iosched1 "$(disk_path "$1")" org.iosched1.Disk "$2"; }
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

# monitor_start FILE: record every signal ioschedd sends, one JSON object a line.
monitor_start() {
        busctl monitor --json=short --match "type='signal',sender='org.iosched1'" >"$1" 2>/dev/null &
        local pid=$!
        on_exit "kill $pid"
        sleep 0.3
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

# Loop devices with a number chosen by the test, so that a config can name them before
# they exist: LOOP_CTL_ADD through /dev/loop-control (perl is essential on Debian).
LOOP_CTL_ADD=0x4C80
LOOP_CTL_REMOVE=0x4C81
loop_ctl() {
        perl -e 'open(my $f, "+<", "/dev/loop-control") or die "loop-control: $!\n";
                 defined(ioctl($f, hex($ARGV[0]), int($ARGV[1]))) or die "ioctl: $!\n";' "$1" "$2"
}

# loop_pick_free: a loop number that exists nowhere now (from 200 up, avoiding the numbers
# losetup --find hands out first).
loop_pick_free() {
        local n
        for n in $(seq $((200 + RANDOM % 500)) 1023); do
                [ -e "/sys/class/block/loop$n" ] || { echo "$n"; return 0; }
        done
        fail "no free loop number"
}

# loop_add N: create loopN (unattached: a disk of size 0, with a queue); detached and removed
# at exit (by its own handler: common.sh detaches its loops after the handlers ran).
loop_add() {
        loop_ctl $LOOP_CTL_ADD "$1" || fail "cannot create loop$1"
        on_exit "loop_detach_remove $1"
}

# loop_attach N [SIZE_MB]: attach a new backing file to loopN.
loop_attach() {
        local n=$1 size=${2:-16} img
        img=$(mktemp "$TEST_TMP/loop.XXXXXX.img")
        truncate -s "${size}M" "$img"
        losetup "/dev/loop$n" "$img" || fail "cannot attach loop$n"
}

loop_add_attach() {
        loop_add "$1"
        loop_attach "$@"
}

# loop_detach_remove N: detach loopN (if attached) and remove the device: a "remove" uevent.
loop_detach_remove() {
        local n=$1
        [ -e "/sys/class/block/loop$n" ] || return 0
        for _ in $(seq 20); do
                if [ -e "/sys/class/block/loop$n/loop/backing_file" ]; then
                        losetup -d "/dev/loop$n" 2>/dev/null || { sleep 0.1; continue; }
                fi
                loop_ctl $LOOP_CTL_REMOVE "$n" 2>/dev/null && return 0
                sleep 0.1
        done
        log "cannot remove loop$n"
        return 1
}

# has [GREP OPTIONS] PATTERN: like "grep -q", but reads all of its input, so that the writer
# of a long output never dies of SIGPIPE (which "set -o pipefail" would turn into a failure).
has() { grep "$@" >/dev/null; }
