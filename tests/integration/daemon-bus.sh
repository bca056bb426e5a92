#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ioschedd on a real dbus-daemon whose config includes dbus/org.iosched1.conf: the first pass,
# busctl calls as an administrator types them, PropertiesChanged and Applied seen by a client,
# the shipped introspection XML against the live objects, and bad input: a named error each
# time, nothing written, the daemon still running.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
command -v gdbus >/dev/null || fail "gdbus is not installed (apt-get install libglib2.0-bin)"

a=$(loop_new)
b=$(loop_new)
c=$(loop_new)   # no rule matches it
config_root <<CONF
[rule test]
match.name = $a|$b
scheduler = mq-deadline
iosched.fifo_batch = 8
nr_requests = 32
read_ahead_kb = 64
CONF
echo none >"/sys/block/$a/queue/scheduler"
echo 128 >"/sys/block/$b/queue/read_ahead_kb"
c_before=$(queue_snapshot "$c")

bus_start
ioschedd_start --config-root "$root" --no-monitor

# The name is taken after the first pass: both disks are at their policy already.
for d in $a $b; do
        [ "$(current_scheduler "$d")" = mq-deadline ] || fail "$d: scheduler $(qattr "$d" scheduler)"
        [ "$(qattr "$d" iosched/fifo_batch)" = 8 ] || fail "$d: fifo_batch"
        [ "$(qattr "$d" nr_requests)" = 32 ] || fail "$d: nr_requests"
        [ "$(qattr "$d" read_ahead_kb)" = 64 ] || fail "$d: read_ahead_kb"
done
[ "$(queue_snapshot "$c")" = "$c_before" ] || fail "$c has no rule but was changed"

mgr ListDisks | has "\"$a\" \"/org/iosched1/disk/$a\"" || fail "ListDisks lacks $a"
[ "$(mgr GetDisk s "$a")" = "o \"/org/iosched1/disk/$a\"" ] || fail "GetDisk $a"
[ "$(mgr GetDisk s "/dev/$a")" = "o \"/org/iosched1/disk/$a\"" ] || fail "GetDisk /dev/$a"
[ "$(disk_current "$a" scheduler)" = mq-deadline ] || fail "Current: $(disk_prop "$a" Current)"
[ "$(disk_current "$a" nr_requests)" = 32 ] || fail "Current: $(disk_prop "$a" Current)"
[ "$(disk_current "$a" iosched.fifo_batch)" = 8 ] || fail "Current: $(disk_prop "$a" Current)"
[ "$(disk_current "$a" read_ahead_kb)" = 64 ] || fail "Current: $(disk_prop "$a" Current)"
[ "$(disk_prop "$a" Transport)" = 's "loop"' ] || fail "Transport"
# Current has the keys of the attribute table the kernel shows, in its order, spelt as the
# configuration spells them; a loop device has no io.cost line.
disk_prop "$a" Current | has '^a{ss} [0-9]* "scheduler" "mq-deadline" "iosched\.[a-z_]*" ' ||
        fail "Current does not start with the scheduler and its tunables: $(disk_prop "$a" Current)"
disk_prop "$a" Current | has '"iocost\.' && fail "Current has iocost keys: $(disk_prop "$a" Current)"
case "$(qattr "$a" wbt_lat_usec)" in
0) [ "$(disk_current "$a" wbt_lat_usec)" = off ] || fail "wbt 0 is not \"off\": $(disk_prop "$a" Current)" ;;
*[0-9]) [ "$(disk_current "$a" wbt_lat_usec)" = "$(qattr "$a" wbt_lat_usec)" ] || fail "wbt: $(disk_prop "$a" Current)" ;;
esac
disk_prop "$a" Desired | has "\"nr_requests\" \"32\" \"test\" \"$root/etc/iosched.conf\" 5" \
        || fail "Desired: $(disk_prop "$a" Desired)"
disk_prop "$a" MatchedRules | has "\"test\" \"$root/etc/iosched.conf\" 1" || fail "MatchedRules"
disk_prop "$a" LastChanges | has '"scheduler" "none" "mq-deadline"' || fail "LastChanges: $(disk_prop "$a" LastChanges)"
[ "$(disk_prop "$c" Desired)" = "a(ssssu) 0" ] || fail "$c: Desired $(disk_prop "$c" Desired)"
mgr_prop ConfigFiles | has "$root/etc/iosched.conf" || fail "ConfigFiles"
[ "$(mgr_prop ConfigErrors)" = "as 0" ] || fail "ConfigErrors"
mgr_prop Version | has '^s "' || fail "Version"

# Plan: everything is right, nothing to write.
plan=$(mgr Plan s "$a")
[ "$plan" = 'a(ssss) 4 "scheduler" "mq-deadline" "mq-deadline" "skip" "iosched.fifo_batch" "8" "8" "skip" "nr_requests" "32" "32" "skip" "read_ahead_kb" "64" "64" "skip"' ] \
        || fail "Plan: $plan"

# Another tool changes a value: Plan says write, Apply writes exactly that, a client sees
# Applied and PropertiesChanged.
monitor_start "$TEST_TMP/signals"
echo 128 >"/sys/block/$a/queue/nr_requests"
mgr Plan s "$a" | has '"nr_requests" "128" "32" "write"' || fail "Plan after drift: $(mgr Plan s "$a")"
writes_before=$(mgr_prop WritesDone | cut -d' ' -f2)
mgr Apply s "$a"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "Apply did not restore nr_requests"
[ "$(mgr_prop WritesDone | cut -d' ' -f2)" = $((writes_before + 1)) ] || fail "WritesDone: $(mgr_prop WritesDone)"
disk_prop "$a" LastChanges | has '"nr_requests" "128" "32"' || fail "LastChanges after Apply"
# A scheduler switch seen by the daemon changes Current.
echo none >"/sys/block/$b/queue/scheduler"
mgr ApplyAll
[ "$(current_scheduler "$b")" = mq-deadline ] || fail "ApplyAll did not restore $b"
wait_until 60 grep -q "\"member\":\"Applied\".*\"$b\".*\"scheduler\",\"none\",\"mq-deadline\"" "$TEST_TMP/signals" \
        || fail "no Applied signal for $b: $(cat "$TEST_TMP/signals")"
wait_until 60 grep -q "\"member\":\"Applied\".*\"$a\".*\"nr_requests\",\"128\",\"32\"" "$TEST_TMP/signals" \
        || fail "no Applied signal for $a"
wait_until 60 grep -q "\"path\":\"/org/iosched1/disk/$a\".*PropertiesChanged.*LastChanges" "$TEST_TMP/signals" \
        || fail "no PropertiesChanged for $a"
wait_until 60 grep -q '"path":"/org/iosched1",.*PropertiesChanged.*"WritesDone"' "$TEST_TMP/signals" \
        || fail "no PropertiesChanged for WritesDone"
# PropertiesChanged names only what changed (Current and LastChanges among the invalidated:
# they are explicit): the Plan read nr_requests 128 (and mq-deadline's
# async_depth follows nr_requests), which the policy does not want (Mismatched), the Apply wrote
# it back to 32 and recorded the change (Mismatched empty again), and ApplyAll found nothing to
# change (LastChanges empty again).
changed=$(/usr/bin/python3 -c 'import json,sys
names=[" ".join(sorted(list(m["payload"]["data"][1]) + m["payload"]["data"][2]))
       for m in map(json.loads, open(sys.argv[1]))
       if m.get("member") == "PropertiesChanged" and m.get("path") == sys.argv[2]]
print(",".join(names))' "$TEST_TMP/signals" "/org/iosched1/disk/$a")
[ "$changed" = "Current Mismatched,Current LastApplied LastChanges Mismatched,LastApplied LastChanges" ] ||
        fail "PropertiesChanged of $a's Plan and Apply name: $changed"
# A disk whose values did not change sends no Applied.
grep -q "\"member\":\"Applied\".*\"$c\"" "$TEST_TMP/signals" && fail "Applied for $c, which has no rule"

# The shipped introspection data is what the live objects say.
for iface in org.iosched1.Manager org.iosched1.Disk; do
        path=/org/iosched1
        [ $iface = org.iosched1.Disk ] && path=/org/iosched1/disk/$a
        extract="/<interface name=\"$iface\">/,/^ <\\/interface>/p"
        diff -u <(sed -n "$extract" "$IOSCHED_SRC_DIR/dbus/org.iosched1.xml") \
                <(busctl introspect --xml-interface org.iosched1 "$path" | sed -n "$extract") \
                || fail "dbus/org.iosched1.xml differs from the live $iface"
done
busctl introspect --xml-interface org.iosched1 /org/iosched1 | has 'org.freedesktop.DBus.ObjectManager' \
        || fail "no ObjectManager"
# GetManagedObjects is answered by the daemon itself (ioschedd-disk-bus.c), not by sd-bus's
# object manager: each object with its one interface that has properties (not the standard
# ones sd-bus would add, empty) and the disk's properties equal to sd-bus's own GetAll (names,
# order, types, values) but for an empty array or string, left out; every disk of ListDisks
# and nothing else. $c, which no rule matches, has no Desired and no MatchedRules.
busctl --json=short call org.iosched1 /org/iosched1 org.freedesktop.DBus.ObjectManager \
        GetManagedObjects >"$TEST_TMP/gmo.json"
busctl --json=short call org.iosched1 /org/iosched1 org.iosched1.Manager ListDisks >"$TEST_TMP/disks.json"
for d in "$a" "$c"; do
        busctl --json=short call org.iosched1 "$(disk_path "$d")" org.freedesktop.DBus.Properties \
                GetAll s org.iosched1.Disk >"$TEST_TMP/getall.$d.json"
done
/usr/bin/python3 - "$TEST_TMP" "$a" "$c" <<'PY' || fail "GetManagedObjects differs from sd-bus's GetAll or ListDisks"
import json, sys
tmp, names = sys.argv[1], sys.argv[2:]
gmo = json.load(open(tmp + "/gmo.json"))
assert gmo["type"] == "a{oa{sa{sv}}}", gmo["type"]
objects = gmo["data"][0]
disks = json.load(open(tmp + "/disks.json"))["data"][0]
assert sorted(objects) == sorted(p for _, p in disks), "objects are not the disks of ListDisks"
for path, ifaces in objects.items():
    assert list(ifaces) == ["org.iosched1.Disk"], (path, list(ifaces))
for n in names:
    props = objects["/org/iosched1/disk/" + n]["org.iosched1.Disk"]
    getall = json.load(open("%s/getall.%s.json" % (tmp, n)))["data"][0]
    full = [(k, v) for k, v in getall.items() if v["data"] not in ("", [], {})]
    assert list(props.items()) == full, (n, props, getall)
c = objects["/org/iosched1/disk/" + names[1]]["org.iosched1.Disk"]
assert "Desired" not in c and "MatchedRules" not in c, c
PY

# Bad input: a named error each time; nothing written; the daemon keeps running.
a_before=$(queue_snapshot "$a")
writes_before=$(mgr_prop WritesDone)
huge=$(head -c 100000 /dev/zero | tr '\0' x)
expect_error org.iosched1.Error.NoSuchDisk GetDisk nosuchdisk
expect_error org.iosched1.Error.InvalidDiskName GetDisk ../../etc/passwd
expect_error org.iosched1.Error.InvalidDiskName GetDisk "$a/../../x"
expect_error org.iosched1.Error.InvalidDiskName GetDisk ""
expect_error org.iosched1.Error.InvalidDiskName GetDisk "$huge"
expect_error org.iosched1.Error.InvalidDiskName Apply ../x
expect_error org.iosched1.Error.NoSuchDisk Plan nosuchdisk
expect_error org.iosched1.Error.InvalidDiskName SetPolicy ../x "{'nr_requests': <'64'>}" false
expect_error org.iosched1.Error.NoSuchDisk SetPolicy nosuchdisk "{'nr_requests': <'64'>}" false
expect_error org.iosched1.Error.UnknownSetting SetPolicy "$a" "{'no_such_key': <'1'>}" false
expect_error org.iosched1.Error.UnknownSetting SetPolicy "$a" "{'iosched.no_such_tunable': <'1'>}" false
expect_error org.iosched1.Error.UnknownSetting SetPolicy "$a" "{'iosched.../../x': <'1'>}" false
expect_error org.iosched1.Error.UnknownSetting SetPolicy "$a" "{'match.name': <'*'>}" false
expect_error org.iosched1.Error.UnknownSetting SetPolicy "$a" "{'$huge': <'1'>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'nr_requests': <'0'>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'nr_requests': <int64 99999999999>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'nr_requests': <'12abc'>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'nr_requests': <1.5>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'nr_requests': <'$huge'>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'scheduler': <'../../x'>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'scheduler': <['a', '$huge']>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'wbt_lat_usec': <'-5'>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "{'add_random': <'maybe'>}" false
expect_error org.iosched1.Error.InvalidSetting SetPolicy "$a" "@a{sv} {}" false
# Wrong argument types are refused by sd-bus against the method's signature.
for call in "Apply int32:5" "GetDisk uint64:1" "Plan array:string:$a" "ResetPolicy string:$a string:no"; do
        # shellcheck disable=SC2086
        out=$(expect_fail dbus-send --system --print-reply --dest=org.iosched1 /org/iosched1 \
                org.iosched1.Manager.$call)
        case "$out" in *"org.freedesktop.DBus.Error.InvalidArgs"*) ;; *) fail "$call: $out" ;; esac
done
expect_fail busctl call org.iosched1 /org/iosched1 org.iosched1.Manager SetPolicy 'sa{ss}b' \
        "$a" 1 nr_requests 64 false >/dev/null
ioschedd_alive || fail "ioschedd died on bad input"
[ "$(queue_snapshot "$a")" = "$a_before" ] || fail "bad input changed $a"
[ "$(mgr_prop WritesDone)" = "$writes_before" ] || fail "bad input made writes"
[ -z "$(find "$root" -name '*.conf' ! -path "$root/etc/iosched.conf")" ] || fail "bad input wrote a drop-in"
mgr ListDisks >/dev/null || fail "ioschedd stopped answering"

# SIGTERM: a clean stop.
kill "$IOSCHEDD_PID"
wait "$IOSCHEDD_PID" || fail "ioschedd exited with $? on SIGTERM"
IOSCHEDD_PID=
grep -q "Stopping." "$IOSCHEDD_LOG" || fail "no stop message"
log "ok"
