#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ioschedd's configuration under faults (docs/reliability.md, "Faults"). The configuration
# root's etc/ and run/ are small tmpfs mounts of the test's own:
#   1. SetPolicy (persistent and runtime) on a full file system, and on a read-only one: the
#      caller gets PersistFailed, the old drop-in is intact byte for byte, no temporary file
#      is left, the disk keeps its values; ResetPolicy on a read-only one likewise.
#   2. Reload with a drop-in directory that became a file, with a dangling drop-in link:
#      ConfigInvalid, the previous policy stays in force; with the directory gone: a policy
#      without drop-ins.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root

a=$(loop_new)
root="$TEST_TMP/root"
mkdir -p "$root/etc" "$root/run"
for m in etc run; do
        mount -t tmpfs -o size=128k,mode=0755 "iosched-test-$m" "$root/$m" || fail "cannot mount a tmpfs"
        on_exit "umount -l $root/$m"
done
cat >"$root/etc/iosched.conf" <<CONF
[rule main]
match.name = $a
nr_requests = 32
read_ahead_kb = 64
CONF

bus_start
ioschedd_start --config-root "$root"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "first pass"

# A SetPolicy that works, persistent and runtime: the drop-ins to keep intact.
mgr SetPolicy 'sa{sv}b' "$a" 1 nr_requests x 48 false
mgr SetPolicy 'sa{sv}b' "$a" 1 read_ahead_kb x 96 true
persistent=$(find "$root/etc/iosched.d" -name '*.conf')
runtime=$(find "$root/run/iosched.d" -name '*.conf')
[ -f "$persistent" ] && [ -f "$runtime" ] || fail "SetPolicy wrote no drop-in"
cp "$persistent" "$TEST_TMP/persistent.orig"
cp "$runtime" "$TEST_TMP/runtime.orig"
[ "$(qattr "$a" nr_requests)" = 48 ] && [ "$(qattr "$a" read_ahead_kb)" = 96 ] || fail "SetPolicy did not apply"

intact() {
        cmp -s "$persistent" "$TEST_TMP/persistent.orig" || fail "$1: the persistent drop-in changed"
        cmp -s "$runtime" "$TEST_TMP/runtime.orig" || fail "$1: the runtime drop-in changed"
        [ -z "$(find "$root/etc" "$root/run" -name '.#*')" ] || fail "$1: a temporary file was left"
        [ "$(qattr "$a" nr_requests)" = 48 ] && [ "$(qattr "$a" read_ahead_kb)" = 96 ] ||
                fail "$1: the disk's values changed"
        ioschedd_alive || fail "$1: ioschedd died"
}

fill() {
        dd if=/dev/zero of="$1/filler" bs=4k 2>/dev/null || true
        on_exit "rm -f $1/filler"
        [ "$(df --output=avail "$1" | tail -1 | tr -d " ")" = 0 ] || fail "$1 is not full"
}

# 1a. A full file system.
fill "$root/etc"
expect_error org.iosched1.Error.PersistFailed SetPolicy "$a" "{'nr_requests': <'24'>}" false
intact "full /etc, persistent SetPolicy"
rm "$root/etc/filler"
fill "$root/run"
expect_error org.iosched1.Error.PersistFailed SetPolicy "$a" "{'read_ahead_kb': <'128'>}" true
intact "full /run, runtime SetPolicy"
rm "$root/run/filler"
log "full file system: PersistFailed, drop-ins intact, nothing left behind, values kept"

# 1b. A read-only file system.
mount -o remount,ro "$root/etc"
on_exit "mount -o remount,rw $root/etc"
expect_error org.iosched1.Error.PersistFailed SetPolicy "$a" "{'nr_requests': <'24'>}" false
intact "read-only /etc, persistent SetPolicy"
expect_error org.iosched1.Error.PersistFailed ResetPolicy "$a" false
intact "read-only /etc, persistent ResetPolicy"
mount -o remount,rw "$root/etc"
log "read-only file system: PersistFailed for SetPolicy and ResetPolicy, drop-ins intact"

# And once there is room again, the same call works.
mgr SetPolicy 'sa{sv}b' "$a" 1 nr_requests x 24 false
[ "$(qattr "$a" nr_requests)" = 24 ] || fail "SetPolicy after the fault"
grep -q "nr_requests = 24" "$persistent" || fail "the drop-in was not rewritten after the fault"

# 2. Reload with a broken drop-in directory: the previous policy stays.
desired_before=$(disk_prop "$a" Desired)
mv "$root/etc/iosched.d" "$root/etc/iosched.d.moved"
echo "not a directory" >"$root/etc/iosched.d"
expect_error org.iosched1.Error.ConfigInvalid Reload
mgr_prop ConfigErrors | has "iosched.d:0: cannot read directory: Not a directory" ||
        fail "ConfigErrors: $(mgr_prop ConfigErrors)"
[ "$(disk_prop "$a" Desired)" = "$desired_before" ] || fail "a refused Reload changed the policy"
rm "$root/etc/iosched.d"
mv "$root/etc/iosched.d.moved" "$root/etc/iosched.d"

ln -s /nonexistent/10-dangling.conf "$root/etc/iosched.d/10-dangling.conf"
expect_error org.iosched1.Error.ConfigInvalid Reload
mgr_prop ConfigErrors | has "10-dangling.conf:0: cannot read" || fail "ConfigErrors: $(mgr_prop ConfigErrors)"
[ "$(disk_prop "$a" Desired)" = "$desired_before" ] || fail "a refused Reload changed the policy"
rm "$root/etc/iosched.d/10-dangling.conf"
mgr Reload
[ "$(mgr_prop ConfigErrors)" = "as 0" ] || fail "errors left after the repair"

# Bytes that are not UTF-8 in a value, and in a drop-in's name: a prompt ConfigInvalid (the
# reply quotes the error, escaped; before, a value like this left Reload without any answer).
printf '[rule latin1]\nmatch.name = %s\nnr_requests = 3\xe9\n' "$a" >"$root/etc/iosched.d/30-value.conf"
out=$(timeout 10 gdbus call --system --dest org.iosched1 --object-path /org/iosched1 \
        --method org.iosched1.Manager.Reload 2>&1) && fail "Reload took a value that is not UTF-8"
case "$out" in *"GDBus.Error:org.iosched1.Error.ConfigInvalid:"*"30-value.conf:3: "*'\xe9'*) ;;
*) fail "Reload with a value that is not UTF-8: $out" ;; esac
mgr_prop ConfigErrors >/dev/null || fail "ConfigErrors cannot be read"
rm "$root/etc/iosched.d/30-value.conf"
printf '[rule latin1]\nmatch.name = %s\n' "$a" >"$root/etc/iosched.d/40-caf"$'\xe9'".conf"
expect_error org.iosched1.Error.ConfigInvalid Reload
mgr_prop ConfigErrors | has "ignoring a drop-in whose name is not valid UTF-8" || fail "ConfigErrors: $(mgr_prop ConfigErrors)"
mgr_prop ConfigFiles >/dev/null || fail "ConfigFiles cannot be read"
[ "$(disk_prop "$a" Desired)" = "$desired_before" ] || fail "a refused Reload changed the policy"
rm "$root/etc/iosched.d/40-caf"$'\xe9'".conf"
log "Reload: a value and a file name that are not UTF-8 refused promptly, properties readable"

rm -rf "$root/etc/iosched.d"
mgr Reload
disk_prop "$a" Desired | has '"nr_requests" "32" "main"' || fail "without drop-ins: $(disk_prop "$a" Desired)"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "the main file's value was not applied"
ioschedd_alive || fail "ioschedd died"
log "Reload: a file for the directory and a dangling link refused (previous policy kept); no directory: main file only"
log "ok"
