#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Cockpit page (cockpit/) in a real browser: Debian's cockpit-ws and cockpit-bridge serve
# it from the tree on 127.0.0.1, Debian's headless chromium shows it, driven by chromedriver
# (tests/integration/cockpit-browser.py); ioschedd runs on the test's bus with the real
# polkitd and two loop devices. Two sessions, both cockpit-ws --local-session: root's, and an
# unprivileged user's (polkit sees both as sessions without a seat, as it sees a web login).
# Checked: the table lists the disks; Plan; a SetPolicy through the page reaches sysfs; a bad
# value's bus error is shown as text; another writer's changes appear without a reload; Reset;
# no content security policy violation; the unprivileged session reads everything and changes
# nothing; a page reads a disk's explicit properties once when it appears and once per
# invalidation (a bus monitor counts the Get calls). The screenshots go to
# $IOSCHED_BROWSER_SHOTS when it is set (docs/img/ by hand).
# IOSCHED_TEST_BROWSER=0 skips it.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
[ "${IOSCHED_TEST_BROWSER:-1}" != 0 ] || skip "IOSCHED_TEST_BROWSER=0"
require_root
COCKPIT_WS=/usr/lib/cockpit/cockpit-ws
for p in "$COCKPIT_WS" /usr/bin/cockpit-bridge /usr/bin/chromium /usr/bin/chromedriver; do
        [ -x "$p" ] || fail "$p is not installed (tools/install-deps browser)"
done
/usr/bin/python3 -c 'import selenium' 2>/dev/null || fail "python3-selenium is not installed (tools/install-deps browser)"
[ -x "$POLKITD" ] || fail "polkitd is not installed (tools/install-deps test)"
id "$UNPRIV_USER" >/dev/null 2>&1 || fail "no user $UNPRIV_USER"

# Live without polling: the page has no timer of its own (cockpit.js keeps its connection's
# health check); what changes comes from the bus's signals.
! grep -nE 'setInterval|setTimeout|requestAnimationFrame' "$IOSCHED_SRC_DIR/cockpit/iosched.js" ||
        fail "cockpit/iosched.js has a timer: the page must follow the bus's signals, not poll"

watched_disks browser

bus_start "$POLKIT_BUS_CONF"
# The unprivileged user may reload (polkitd_start needs an action to grant): nothing the page does.
polkitd_start reload
# --verify-interval: ioschedd reads the disks again every second, so a write behind its back
# (the test's, as another tool's) shows on the bus without a uevent.
ioschedd_start --config-root "$root" --no-monitor --verify-interval=1
# The pages' Get calls of disks' explicit properties beside ioschedd's signals: a page reads
# them once when a disk appears and once per invalidation (cockpit-browser.py counts them).
monitor_start "$TEST_TMP/bus-messages" \
        "type='method_call',interface='org.freedesktop.DBus.Properties',member='Get',path_namespace='/org/iosched1/disk'"

# Cockpit finds packages in $XDG_DATA_DIRS/cockpit: the tree's page, not an installed one.
share=$TEST_TMP/share
mkdir -p "$share/cockpit"
ln -s "$IOSCHED_SRC_DIR/cockpit" "$share/cockpit/iosched"
chmod 0755 "$TEST_TMP" "$share" "$share/cockpit"

# ws_start USER PORTVAR: cockpit-ws on 127.0.0.1 whose local session is USER's; sets PORTVAR.
ws_start() {
        local user=$1 home=$TEST_TMP/home-$1
        mkdir -p "$home"
        chown "$user" "$home"
        server_start "$2" ws_pid "$TEST_TMP/ws-$user.log" cockpit/@localhost/iosched/manifest.json \
                setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups \
                env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" LC_ALL=C.UTF-8 \
                XDG_DATA_DIRS="$share:/usr/share" XDG_RUNTIME_DIR="$home" \
                DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" \
                "$COCKPIT_WS" --address=127.0.0.1 --port=@PORT@ --local-session=/usr/bin/cockpit-bridge
}
ws_start root admin_port
ws_start "$UNPRIV_USER" user_port
page=cockpit/@localhost/iosched/index.html

shots=${IOSCHED_BROWSER_SHOTS:-$TEST_TMP/shots}
mkdir -p "$shots"
TMPDIR=$TEST_TMP "$(dirname "$0")/cockpit-browser.py" "http://127.0.0.1:$admin_port/$page" "http://127.0.0.1:$user_port/$page" \
        "$a" "$b" "$root/etc/iosched.d" "$shots" "$TEST_TMP/bus-messages" ||
        fail "the page failed in the browser (ioschedd's log: $IOSCHEDD_LOG; cockpit-ws: $(tail -n 3 "$TEST_TMP/ws-root.log"))"
ioschedd_alive || fail "ioschedd died"
log "ok"
