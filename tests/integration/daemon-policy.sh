#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SetPolicy persistent and runtime, across daemon restarts (with and without the runtime
# directory, as after a reboot); ResetPolicy; Reload and SIGHUP with a broken configuration
# keep the previous policy in force and report the errors; --config FILE refuses SetPolicy.
# Every config path is below the test's own directory (--config-root).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root

a=$(loop_new)
config_root base "match.name = $a" "nr_requests = 32"
persistent="$root/etc/iosched.d/98-ioschedd-name-$a.conf"
runtime="$root/run/iosched.d/99-ioschedd-name-$a.conf"

bus_start
ioschedd_start --config-root "$root" --no-monitor
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "first pass"

# Persistent, typed as an administrator would: an integer variant.
busctl call org.iosched1 /org/iosched1 org.iosched1.Manager SetPolicy 'sa{sv}b' "$a" 1 nr_requests x 64 false
[ -f "$persistent" ] || fail "no persistent drop-in $persistent"
[ "$(qattr "$a" nr_requests)" = 64 ] || fail "SetPolicy did not apply: $(qattr "$a" nr_requests)"
grep -qx "match.name = $a" "$persistent" || fail "drop-in does not match by name: $(cat "$persistent")"
grep -qx "nr_requests = 64" "$persistent" || fail "drop-in: $(cat "$persistent")"
disk_prop "$a" Desired | has "\"nr_requests\" \"64\" \"ioschedd\" \"$persistent\"" || fail "Desired: $(disk_prop "$a" Desired)"
ls -A "$root/etc/iosched.d" | has '^\.#' && fail "temporary file left behind"

# Settings merge into the disk's drop-in; a string value is parsed like the config file's.
busctl call org.iosched1 /org/iosched1 org.iosched1.Manager SetPolicy 'sa{sv}b' "$a" 1 read_ahead_kb s 256 false
grep -qx "nr_requests = 64" "$persistent" || fail "merge lost nr_requests"
grep -qx "read_ahead_kb = 256" "$persistent" || fail "merge: $(cat "$persistent")"
[ "$(qattr "$a" read_ahead_kb)" = 256 ] || fail "read_ahead_kb"

# Runtime overrides persistent, key by key.
busctl call org.iosched1 /org/iosched1 org.iosched1.Manager SetPolicy 'sa{sv}b' "$a" 2 nr_requests x 16 wbt_lat_usec s 4000 true
[ -f "$runtime" ] || fail "no runtime drop-in"
[ "$(qattr "$a" nr_requests)" = 16 ] || fail "runtime did not override: $(qattr "$a" nr_requests)"
[ "$(qattr "$a" wbt_lat_usec)" = 4000 ] || fail "runtime wbt"

# Restart: both survive (the runtime directory lives until reboot).
ioschedd_stop
echo 128 >"/sys/block/$a/queue/nr_requests"
ioschedd_start --config-root "$root" --no-monitor
[ "$(qattr "$a" nr_requests)" = 16 ] || fail "after restart: nr_requests $(qattr "$a" nr_requests)"

# "Reboot": /run is empty, the persistent setting stays, the runtime ones are gone.
ioschedd_stop
rm -rf "$root/run"
echo 128 >"/sys/block/$a/queue/nr_requests"
echo 1000 >"/sys/block/$a/queue/wbt_lat_usec"
ioschedd_start --config-root "$root" --no-monitor
[ "$(qattr "$a" nr_requests)" = 64 ] || fail "after reboot: nr_requests $(qattr "$a" nr_requests), expected the persistent 64"
[ "$(qattr "$a" wbt_lat_usec)" = 1000 ] || fail "after reboot: the runtime wbt_lat_usec was applied"
disk_prop "$a" Desired | has wbt_lat_usec && fail "runtime setting still desired after reboot"

# An empty value removes one key from the drop-in.
busctl call org.iosched1 /org/iosched1 org.iosched1.Manager SetPolicy 'sa{sv}b' "$a" 1 read_ahead_kb s "" false
grep -q read_ahead_kb "$persistent" && fail "empty value did not remove the key"

# A value the kernel refuses: the call says which write failed, the disk shows it.
errors_before=$(mgr_prop WriteErrors | cut -d' ' -f2)
expect_error org.iosched1.Error.WriteFailed SetPolicy "$a" "{'scheduler': <'mq-deadline'>, 'nr_requests': <'100000'>}" true
disk_prop "$a" LastError | has "nr_requests" || fail "LastError: $(disk_prop "$a" LastError)"
[ "$(mgr_prop WriteErrors | cut -d' ' -f2)" -gt "$errors_before" ] || fail "WriteErrors did not count"
mgr ResetPolicy sb "$a" true
[ "$(disk_prop "$a" LastError)" = 's ""' ] || fail "LastError not cleared: $(disk_prop "$a" LastError)"

# ResetPolicy removes the drop-in: the main file's value is in force again.
mgr ResetPolicy sb "$a" false
[ -e "$persistent" ] && fail "ResetPolicy left $persistent"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "after reset: nr_requests $(qattr "$a" nr_requests)"
mgr ResetPolicy sb "$a" false   # nothing left: still fine

# Reload with a broken file: rejected, errors published, the previous policy stays.
cat >>"$conf" <<CONF
read_ahead_kb = banana
CONF
expect_error org.iosched1.Error.ConfigInvalid Reload
errs=$(mgr_prop ConfigErrors)
echo "$errs" | has "$conf:4: invalid value \\\\\"banana\\\\\" for read_ahead_kb" \
        || echo "$errs" | has "$conf:4: invalid value" || fail "ConfigErrors: $errs"
mgr_prop ConfigFiles | has "$conf" || fail "ConfigFiles lost the file in force"
echo 128 >"/sys/block/$a/queue/nr_requests"
mgr Apply s "$a"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "the previous policy is not in force after a failed reload"
# SIGHUP reads it again: same result; and SetPolicy says the policy did not take effect.
rejected() { grep -c "keeping the previous one" "$IOSCHEDD_LOG" || true; }
rejected_more_than() { [ "$(rejected)" -gt "$1" ]; }
n=$(rejected)
kill -HUP "$IOSCHEDD_PID"
wait_until 60 rejected_more_than "$n" || fail "no reload after SIGHUP: $(tail -5 "$IOSCHEDD_LOG")"
ioschedd_alive || fail "ioschedd died on SIGHUP"
expect_error org.iosched1.Error.ConfigInvalid SetPolicy "$a" "{'nr_requests': <'48'>}" false
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "SetPolicy took effect despite a broken configuration"
# Fixed: the reload takes, the errors go, the new drop-in is in force.
sed -i '/banana/d' "$conf"
mgr Reload
[ "$(mgr_prop ConfigErrors)" = "as 0" ] || fail "ConfigErrors after the fix: $(mgr_prop ConfigErrors)"
[ "$(qattr "$a" nr_requests)" = 48 ] || fail "after the fixed reload: nr_requests $(qattr "$a" nr_requests)"
mgr ResetPolicy sb "$a" false

# --config FILE: the policy of one file; nothing can be saved.
ioschedd_stop
ioschedd_start --config "$conf" --no-monitor
expect_error org.iosched1.Error.NotSupported SetPolicy "$a" "{'nr_requests': <'64'>}" false
expect_error org.iosched1.Error.NotSupported ResetPolicy "$a" false
[ -z "$(find "$root" -name '98-*' -o -name '99-*')" ] || fail "drop-ins written with --config"
log "ok"
