#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Authorization with a real unprivileged uid and the real polkitd on the test bus.
#  - no polkitd on the bus: the unprivileged user is denied every mutating method, can read
#    everything; root can do everything;
#  - polkitd with the project's actions (dbus/org.iosched1.policy): denied by the default
#    auth_admin_keep (no agent to ask); allowed where a polkit rule says so, action by action.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
[ -x "$POLKITD" ] || fail "polkitd is not installed (apt-get install polkitd)"
id polkitd >/dev/null 2>&1 || fail "no polkitd user"
id "$UNPRIV_USER" >/dev/null 2>&1 || fail "no user $UNPRIV_USER"

a=$(loop_new)
config_root test "match.name = $a" "nr_requests = 32"

bus_start "$POLKIT_BUS_CONF"
ioschedd_start --config-root "$root" --no-monitor

# busctl and gdbus as the unprivileged user.
u_mgr() { as_unpriv busctl call org.iosched1 /org/iosched1 org.iosched1.Manager "$@"; }
u_expect_denied() {
        local out
        if out=$(as_unpriv gdbus call --system --dest org.iosched1 --object-path /org/iosched1 \
                        --method "org.iosched1.Manager.$1" "${@:2}" 2>&1); then
                fail "unprivileged $1 succeeded: $out"
        fi
        case "$out" in
        *GDBus.Error:org.freedesktop.DBus.Error.AccessDenied:*) ;;
        *GDBus.Error:org.freedesktop.DBus.Error.InteractiveAuthorizationRequired:*) ;;
        *) fail "unprivileged $1: expected a denial, got: $out" ;;
        esac
}

check_reads() {
        u_mgr ListDisks | has "\"$a\"" || fail "unprivileged ListDisks"
        u_mgr GetDisk s "$a" >/dev/null || fail "unprivileged GetDisk"
        u_mgr Plan s "$a" | has nr_requests || fail "unprivileged Plan"
        as_unpriv busctl get-property org.iosched1 "/org/iosched1/disk/$a" org.iosched1.Disk Current \
                | has '"nr_requests" "32"' || fail "unprivileged property read"
        as_unpriv busctl call org.iosched1 "/org/iosched1/disk/$a" org.freedesktop.DBus.Properties \
                GetAll s org.iosched1.Disk >/dev/null || fail "unprivileged GetAll"
        as_unpriv busctl introspect org.iosched1 /org/iosched1 >/dev/null || fail "unprivileged introspect"
}

check_all_denied() {
        local before
        before=$(queue_snapshot "$a")
        echo 64 >"/sys/block/$a/queue/nr_requests"
        u_expect_denied Apply "$a"
        u_expect_denied ApplyAll
        u_expect_denied SetPolicy "$a" "{'nr_requests': <'16'>}" false
        u_expect_denied SetPolicy "$a" "{'nr_requests': <'16'>}" true
        u_expect_denied ResetPolicy "$a" false
        u_expect_denied Reload
        [ "$(qattr "$a" nr_requests)" = 64 ] || fail "a denied call wrote nr_requests"
        [ -z "$(find "$root" -name '9[89]-ioschedd-*')" ] || fail "a denied SetPolicy wrote a drop-in"
        echo 32 >"/sys/block/$a/queue/nr_requests"
        : "$before"
}

# 1. No polkitd: denied, reads work, root works.
check_reads
check_all_denied
grep -q "polkit is not available" "$IOSCHEDD_LOG" || fail "the denial did not come from the polkit path"
echo 64 >"/sys/block/$a/queue/nr_requests"
mgr Apply s "$a"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "root Apply"
mgr SetPolicy 'sa{sv}b' "$a" 1 nr_requests x 16 true
[ "$(qattr "$a" nr_requests)" = 16 ] || fail "root SetPolicy"
mgr ResetPolicy sb "$a" true
mgr Reload
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "root ResetPolicy"

# 2. The real polkitd, with the project's actions.
polkitd_start reload

check_reads
# Every mutating method but Reload: auth_admin_keep and no agent to ask: denied by polkit.
before=$(grep -c "polkit is not available" "$IOSCHEDD_LOG")
echo 64 >"/sys/block/$a/queue/nr_requests"
u_expect_denied Apply "$a"
u_expect_denied ApplyAll
u_expect_denied SetPolicy "$a" "{'nr_requests': <'16'>}" false
u_expect_denied ResetPolicy "$a" true
[ "$(grep -c "polkit is not available" "$IOSCHEDD_LOG")" = "$before" ] || fail "polkitd was not asked"
[ "$(qattr "$a" nr_requests)" = 64 ] || fail "a denied call wrote"
# The rule allows this user to reload, and only that: polkit decides action by action.
u_mgr Reload || fail "Reload allowed by the polkit rule was refused"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "the allowed Reload did not apply the policy"
u_expect_denied Apply "$a"
# Root never asks polkit.
mgr ApplyAll
ioschedd_alive || fail "ioschedd died"
log "ok"
