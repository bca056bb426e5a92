#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ioschedctl against ioschedd on a real bus: status, explain, plan, apply, set, reset, reload,
# --json on the read commands, errors with their D-Bus names, exit codes.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
[ -x "$IOSCHEDCTL" ] || fail "no $IOSCHEDCTL: build first"

a=$(loop_new)
config_root test "match.name = $a" \
        "scheduler = mq-deadline" "iosched.fifo_batch = 8" "nr_requests = 32"
bus_start
ioschedd_start --config-root "$root" --no-monitor
ctl() { "$IOSCHEDCTL" --no-ask-password "$@"; }

# status: a table with the disk, and JSON that a JSON parser takes.
ctl status | has -E "^$a +loop +disk +mq-deadline +[0-9off-]+ +32 +[0-9]+ +test " || fail "status: $(ctl status | grep "$a ")"
ctl status --json >"$TEST_TMP/status.json"
python3 -c 'import json,sys; d=[x for x in json.load(open(sys.argv[1])) if x["disk"]==sys.argv[2]][0]; assert d["nr_requests"]==32 and d["rules"]==["test"] and d["scheduler"]=="mq-deadline" and d["role"]=="disk" and d["dm"] is None, d' \
        "$TEST_TMP/status.json" "$a" || fail "status --json: $(cat "$TEST_TMP/status.json")"

# explain: the file:line of each set key, "kernel default" for the others.
out=$(ctl explain "$a")
echo "$out" | has -E "^$a \\(loop(, rotational)?, disk\\)$" || fail "explain's first line: $out"
echo "$out" | has -E "^nr_requests +32 +32 +$conf:5 \\(rule test\\)$" || fail "explain nr_requests: $out"
echo "$out" | has -E "^iosched.fifo_batch +8 +8 +$conf:4 \\(rule test\\)$" || fail "explain fifo_batch: $out"
echo "$out" | has -E "^read_ahead_kb +[0-9]+ +- +kernel default$" || fail "explain read_ahead_kb: $out"
ctl explain --json "$a" >"$TEST_TMP/explain.json"
python3 -c 'import json,sys; k={x["key"]:x for x in json.load(open(sys.argv[1]))["keys"]}; assert k["nr_requests"]["line"]==5 and k["read_ahead_kb"]["desired"] is None, k' \
        "$TEST_TMP/explain.json" || fail "explain --json"

# plan writes nothing; apply writes what differs.
echo 64 >"/sys/block/$a/queue/nr_requests"
ctl plan "$a" | has -E "nr_requests +64 +32 +write" || fail "plan: $(ctl plan "$a")"
[ "$(qattr "$a" nr_requests)" = 64 ] || fail "plan wrote"
ctl plan --json "$a" | python3 -c 'import json,sys; p=json.load(sys.stdin); assert p[0]["actions"][2]=={"key":"nr_requests","current":"64","desired":"32","action":"write"}, p' \
        || fail "plan --json"
ctl plan >/dev/null || fail "plan of every disk"
ctl apply "$a"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "apply"
echo 64 >"/sys/block/$a/queue/nr_requests"
ctl apply
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "apply (all)"

# set / reset, persistent and runtime.
ctl set "$a" nr_requests=16 read_ahead_kb=512
[ "$(qattr "$a" nr_requests)" = 16 ] && [ "$(qattr "$a" read_ahead_kb)" = 512 ] || fail "set"
[ -f "$root/etc/iosched.d/98-ioschedd-name-$a.conf" ] || fail "set: no drop-in"
ctl explain "$a" | has -E "^nr_requests +16 +16 +$root/etc/iosched.d/98-ioschedd-name-$a.conf:[0-9]+ \\(rule ioschedd\\)$" \
        || fail "explain after set: $(ctl explain "$a")"
ctl set --runtime "$a" nr_requests=24
[ "$(qattr "$a" nr_requests)" = 24 ] || fail "set --runtime"
ctl reset --runtime "$a"
[ "$(qattr "$a" nr_requests)" = 16 ] || fail "reset --runtime"
ctl reset "$a"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "reset"

# iocost keys go through the same key table: the kernel's rounding, the file:line of the drop-in.
ctl set "$a" iocost.rpct=95.555 iocost.ctrl=user
ctl explain "$a" | has -E "^iocost.rpct +[^ ]+ +95.56 +$root/etc/iosched.d/98-ioschedd-name-$a.conf:[0-9]+ \\(rule ioschedd\\)$" \
        || fail "explain iocost.rpct after set: $(ctl explain "$a")"
out=$(ctl set "$a" iocost.wpct=100.01 2>&1) && fail "set iocost.wpct=100.01 succeeded"
echo "$out" | has "org.iosched1.Error.InvalidSetting" || fail "set iocost error: $out"
ctl reset "$a"
ctl explain "$a" | has "^iocost.rpct " && fail "iocost.rpct still set after reset"

# Errors: the message and the D-Bus error name, exit status 1; usage errors 64.
out=$(ctl set "$a" nr_requests=0 2>&1) && fail "set nr_requests=0 succeeded"
echo "$out" | has "org.iosched1.Error.InvalidSetting" || fail "set error: $out"
out=$(ctl explain nosuchdisk 2>&1) && fail "explain nosuchdisk succeeded"
echo "$out" | has "org.iosched1.Error.NoSuchDisk" || fail "explain error: $out"
rc=0; ctl set "$a" >/dev/null 2>&1 || rc=$?
[ $rc = 64 ] || fail "set without settings: exit $rc, not a usage error"
rc=0; ctl frobnicate >/dev/null 2>&1 || rc=$?
[ $rc = 64 ] || fail "unknown command: exit $rc, not a usage error"
out=$(as_unpriv "$IOSCHEDCTL" --no-ask-password apply "$a" 2>&1) && fail "unprivileged apply succeeded"
echo "$out" | has "org.freedesktop.DBus.Error.AccessDenied" || fail "unprivileged apply: $out"
as_unpriv "$IOSCHEDCTL" status >/dev/null || fail "unprivileged status"

# reload: a broken file is reported and refused.
echo "bogus line" >>"$conf"
out=$(ctl reload 2>&1) && fail "reload of a broken config succeeded"
echo "$out" | has "org.iosched1.Error.ConfigInvalid" || fail "reload error: $out"
sed -i '/bogus line/d' "$conf"
ctl reload || fail "reload"
log "ok"
