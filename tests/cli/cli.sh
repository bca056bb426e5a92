#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# iosched-apply at the command line, no root: fake sysfs trees under --root, bad input of
# every kind (malformed, huge, binary config files; unknown disks; names with "/", "..",
# control characters, a /dev/ prefix), the documented exit codes, --check-config's file:line
# messages, --json that parses, --dry-run that changes nothing.
. "$(dirname "$0")/../lib/common.sh"

command -v python3 >/dev/null || fail "python3 is needed to check the JSON (apt-get install python3)"
A=$IOSCHED_APPLY
root=$TEST_TMP/root

# fake_disk NAME [SCHEDULER_LINE]: a request-based disk as 6.2+ shows it. SCHEDULER_LINE
# "-" makes a bio-based queue (no scheduler file).
fake_disk() {
        local n=$1 sched=${2:-"[mq-deadline] kyber bfq none"} dir q
        dir=$root/sys/devices/virtual/block/$n
        q=$dir/queue
        mkdir -p "$q/iosched" "$root/sys/class/block"
        ln -sfn "../../devices/virtual/block/$n" "$root/sys/class/block/$n"
        echo "7:$((RANDOM % 1000))" >"$dir/dev"
        echo 0 >"$dir/removable"
        echo 32768 >"$dir/size"
        echo 0 >"$q/rotational"
        echo none >"$q/zoned"
        echo 64 >"$q/nr_requests"
        echo 2000 >"$q/wbt_lat_usec"
        echo 128 >"$q/read_ahead_kb"
        echo 1280 >"$q/max_sectors_kb"
        echo 1280 >"$q/max_hw_sectors_kb"
        echo 1 >"$q/rq_affinity"
        echo 0 >"$q/nomerges"
        echo 0 >"$q/add_random"
        echo 1 >"$q/iostats"
        if [ "$sched" = - ]; then
                # bio-based: none of the attributes of blk-mq
                rmdir "$q/iosched"
                rm "$q/nr_requests" "$q/wbt_lat_usec" "$q/rq_affinity"
        else
                echo "$sched" >"$q/scheduler"
                echo 16 >"$q/iosched/fifo_batch"
        fi
}
fake_partition() {
        local n=$1 dir=$root/sys/devices/virtual/block/$2/$1
        mkdir -p "$dir"
        ln -sfn "../../devices/virtual/block/$2/$n" "$root/sys/class/block/$n"
        echo "7:$((RANDOM % 1000 + 1000))" >"$dir/dev"
        echo 1 >"$dir/partition"
}
tree_sum() { (cd "$root" && find . -type f -print0 | sort -z | xargs -0 md5sum | md5sum); }

# expect_exit STATUS CMD...: run CMD, its stdout in $out, stderr in $err.
expect_exit() {
        local want=$1 rc=0
        shift
        "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || rc=$?
        out=$(cat "$TEST_TMP/out")
        err=$(cat "$TEST_TMP/err")
        [ "$rc" = "$want" ] || fail "$(printf '%q ' "$@"): exit $rc, expected $want; stdout: $out; stderr: $err"
}
# the one-line messages: no line of stderr without its priority prefix
one_line_messages() {
        ! grep -v '^<[0-7]>' "$TEST_TMP/err" || fail "a message broke into several lines: $err"
}

fake_disk fake0
fake_disk fake1
fake_disk bio0 -
fake_partition fake0p1 fake0
conf=$TEST_TMP/ok.conf
printf '[rule ok]\nmatch.name = fake*|bio0\nscheduler = mq-deadline\nnr_requests = 32\n' >"$conf"

log "usage errors exit 64"
expect_exit 64 "$A"
expect_exit 64 "$A" --bogus
expect_exit 64 "$A" --all fake0
expect_exit 64 "$A" --root
expect_exit 64 "$A" -x fake0
expect_exit 0 "$A" --help
for w in "Exit status" "64 usage" "--dry-run" "--check-config" "--json" "--root" "--config"; do
        grep -q -- "$w" "$TEST_TMP/out" || fail "--help does not mention $w"
done
expect_exit 0 "$A" --version
[[ "$out" == "iosched "* ]] || fail "--version: $out"

log "disk names: invalid ones never reach a path, exit 3"
sum=$(tree_sum)
for n in ../fake0 a/b .. . "" /dev/../fake0 /dev/ "fake0/../fake1" $'fa\x01ke0' $'fake\n0' $'\x1b[2J' \
        "$(printf 'x%.0s' $(seq 100))" "fake0 " "-" "*" "fake?"; do
        expect_exit 3 "$A" --root "$root" --config "$conf" -- "$n"
        grep -q "Invalid disk name\|No such disk" "$TEST_TMP/err" || fail "no message for $(printf %q "$n"): $err"
        one_line_messages
        ! grep -q $'\x1b\|\x01' "$TEST_TMP/err" || fail "a control character reached the output: $(printf %q "$err")"
done
[ "$(tree_sum)" = "$sum" ] || fail "an invalid name changed the tree"
expect_exit 3 "$A" --root "$root" --config "$conf" nosuch
grep -q 'No such disk "nosuch"' "$TEST_TMP/err" || fail "$err"
expect_exit 0 "$A" --root "$root" --config "$conf" --dry-run /dev/fake0
grep -q "^fake0 " "$TEST_TMP/out" || fail "/dev/fake0 is not fake0: $out"
# several disks: the valid ones are still done, the lowest status returned
expect_exit 3 "$A" --root "$root" --config "$conf" --dry-run ../x fake0 nosuch
grep -q "^fake0 " "$TEST_TMP/out" || fail "fake0 was not done after an invalid name: $out"

log "partitions and bio-based queues are left alone"
expect_exit 0 "$A" --root "$root" --config "$conf" --dry-run fake0p1
grep -q "partition, left alone" "$TEST_TMP/out" || fail "$out"
expect_exit 0 "$A" --root "$root" --config "$conf" --dry-run bio0
grep -q "scheduler .*not applicable.*bio-based\|scheduler .*unsupported.*bio-based" "$TEST_TMP/out" ||
        fail "bio0: $out"
expect_exit 0 "$A" --root "$root" --config "$conf" --dry-run --all
grep -q "^fake0p1" "$TEST_TMP/out" && fail "--all lists a partition: $out"

log "--dry-run changes nothing; a real run does"
sum=$(tree_sum)
expect_exit 0 "$A" --root "$root" --config "$conf" --dry-run --all
[ "$(tree_sum)" = "$sum" ] || fail "--dry-run changed the tree"
grep -q "^2 would change, .*(dry run: nothing written)" "$TEST_TMP/out" || fail "$out"
expect_exit 0 "$A" --root "$root" --config "$conf" fake1
[ "$(cat "$root/sys/class/block/fake1/queue/nr_requests")" = 32 ] || fail "fake1 was not written"

log "exit 1: a write that fails (the attribute is a link: opened with O_NOFOLLOW)"
q=$root/sys/class/block/fake0/queue
mv "$q/nr_requests" "$q/nr_requests.real"
ln -s nr_requests.real "$q/nr_requests"
expect_exit 1 "$A" --root "$root" --config "$conf" fake0
grep -q "nr_requests .*failed .*writing \"32\" failed" "$TEST_TMP/out" || fail "$out"
one_line_messages
# the lowest status wins: 1 (write failed) over 3 (no such disk)
expect_exit 1 "$A" --root "$root" --config "$conf" nosuch fake0
expect_exit 1 "$A" --root /nonexistent --config "$conf" fake0
grep -q "Cannot open root" "$TEST_TMP/err" || fail "$err"

log "--check-config: exit codes and file:line messages"
expect_exit 0 "$A" --check-config --config "$conf"
[ "$out" = "1 file(s), 1 rule(s), 0 error(s)" ] || fail "$out"
bad=$TEST_TMP/bad.conf
cat >"$bad" <<'CONF'
[rule a]
match.name = [fake
nr_requests = abc
scheduler =
wbt_lat_usec = -5
bogus = 1
iosched.nope = 1
match.transport = floppy
[section c]
key outside = 1
[rule d]
nr_requests = 16
[rule e]
match.name = e
[rule b
[rule f]
CONF
expect_exit 2 "$A" --check-config --config "$bad"
for want in "bad.conf:2: invalid value \"\\[fake\" for match.name" \
            "bad.conf:3: invalid value \"abc\" for nr_requests" \
            "bad.conf:4: invalid value \"\" for scheduler" \
            "bad.conf:5: invalid value \"-5\" for wbt_lat_usec" \
            "bad.conf:6: unknown key \"bogus\"" \
            "bad.conf:7: unknown key \"iosched.nope\"" \
            "bad.conf:8: invalid value \"floppy\" for match.transport" \
            "bad.conf:9: unknown section \\[section c\\]" \
            "bad.conf:11: \\[rule d\\] has no match" \
            "bad.conf:15: syntax error"; do
        grep -q "^<3>$TEST_TMP/$want" "$TEST_TMP/err" || fail "no \"$want\" in: $err"
done
# inih's own syntax error ends the parse: what follows a broken header cannot be told apart
# from the rule before it.
grep -q "bad.conf:16:" "$TEST_TMP/err" && fail "parsed on after a syntax error: $err"
[[ "$out" == "1 file(s), 0 rule(s), "*" error(s)" ]] || fail "$out"
# the file is ignored whole: a run writes nothing, exit 2
sum=$(tree_sum)
expect_exit 2 "$A" --root "$root" --config "$bad" fake1
[ "$(tree_sum)" = "$sum" ] || fail "a file with errors was half applied"
# What is wrong within one rule is found with no disk to resolve: iocost.min above iocost.max.
printf '[rule io]\nmatch.name = *\niocost.max = 80\niocost.min = 90\n' >"$TEST_TMP/minmax.conf"
expect_exit 2 "$A" --check-config --config "$TEST_TMP/minmax.conf"
grep -q "^<3>$TEST_TMP/minmax.conf:4: iocost.min = 90.00 (line 4) is above iocost.max = 80.00 (line 3)" "$TEST_TMP/err" ||
        fail "min above max in one rule not reported: $err"
expect_exit 2 "$A" --check-config --config "$TEST_TMP/nonexistent.conf"
grep -q "nonexistent.conf:0: cannot read: No such file or directory" "$TEST_TMP/err" || fail "$err"
expect_exit 2 "$A" --check-config --config "$TEST_TMP"
grep -q "cannot read: not a regular file" "$TEST_TMP/err" || fail "$err"
: >"$TEST_TMP/empty.conf"
expect_exit 0 "$A" --check-config --config "$TEST_TMP/empty.conf"

log "hostile files: huge lines, a huge file, NUL bytes, binary junk, escape sequences"
# A line is never cut (inih is built to take a line as long as a file may be): a long comment
# is a comment, and the lines after it keep their numbers.
{ printf '[rule a]\nmatch.name = fake*\n# '; head -c 100000 /dev/zero | tr '\0' x; printf '\nnr_requests = 8\n'; } >"$TEST_TMP/long.conf"
expect_exit 0 "$A" --check-config --config "$TEST_TMP/long.conf"
[ "$out" = "1 file(s), 1 rule(s), 0 error(s)" ] || fail "$out"
{ printf '[rule a]\nmatch.name = fake*\nread_ahead_kb = 1'; head -c 5000 /dev/zero | tr '\0' 0; printf '\nbogus = 1\n'; } >"$TEST_TMP/long.conf"
expect_exit 2 "$A" --check-config --config "$TEST_TMP/long.conf"
grep -q "long.conf:3: invalid value \"10000" "$TEST_TMP/err" && grep -q "long.conf:4: unknown key" "$TEST_TMP/err" ||
        fail "$err"
head -c $((2 << 20)) /dev/zero | tr '\0' '#' >"$TEST_TMP/big.conf"
expect_exit 2 "$A" --check-config --config "$TEST_TMP/big.conf"
grep -q "big.conf:0: cannot read: file larger than 1 MiB" "$TEST_TMP/err" || fail "$err"
printf '[rule a]\nmatch.name = fake*\nnr_requests = 3\0002\n' >"$TEST_TMP/nul.conf"
expect_exit 2 "$A" --check-config --config "$TEST_TMP/nul.conf"
grep -q "nul.conf:3: line contains a NUL byte" "$TEST_TMP/err" || fail "$err"
printf '[rule a]\nmatch.name = fake*\nnr_requests = 3\033]0;owned\007\033[2J\n' >"$TEST_TMP/esc.conf"
expect_exit 2 "$A" --check-config --config "$TEST_TMP/esc.conf"
grep -qF 'nr_requests = ' "$TEST_TMP/err" && fail "raw value echoed"
grep -qF '"3\x1b]0;owned\x07\x1b[2J"' "$TEST_TMP/err" || fail "not escaped: $(printf %q "$err")"
for seed in 1 2 3; do
        python3 -c "import random, sys; random.seed($seed); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range(200000)))" \
                >"$TEST_TMP/junk.conf"
        expect_exit 2 "$A" --check-config --config "$TEST_TMP/junk.conf"
        one_line_messages
        LC_ALL=C grep -q '[[:cntrl:]]' "$TEST_TMP/err" && fail "junk $seed: control characters in the messages"
        iconv -f UTF-8 -t UTF-8 "$TEST_TMP/err" >/dev/null || fail "junk $seed: messages are not UTF-8"
        [ "$(wc -l <"$TEST_TMP/err")" -le 21 ] || fail "junk $seed: $(wc -l <"$TEST_TMP/err") error lines"
done

log "drop-ins under --root: a file with an error is ignored, the others apply, /dev/null masks"
mkdir -p "$root/etc/iosched.d" "$root/run/iosched.d" "$root/usr/lib/iosched.d"
printf '[rule main]\nmatch.name = fake0\nnr_requests = 32\n' >"$root/etc/iosched.conf"
printf '[rule broken]\nmatch.name = fake1\nnr_requests = lots\n' >"$root/run/iosched.d/10-broken.conf"
printf '[rule good]\nmatch.name = fake1\nread_ahead_kb = 256\n' >"$root/usr/lib/iosched.d/20-good.conf"
printf '[rule vendor]\nmatch.name = fake1\nrq_affinity = 2\n' >"$root/usr/lib/iosched.d/30-vendor.conf"
expect_exit 2 "$A" --root "$root" --check-config
grep -q "10-broken.conf:3: invalid value \"lots\"" "$TEST_TMP/err" || fail "$err"
[ "$out" = "4 file(s), 3 rule(s), 1 error(s)" ] || fail "$out"
expect_exit 2 "$A" --root "$root" --dry-run fake1
grep -q "read_ahead_kb .*would-write" "$TEST_TMP/out" && grep -q "rq_affinity .*would-write" "$TEST_TMP/out" ||
        fail "the good drop-ins were not applied: $out"
ln -s /dev/null "$root/etc/iosched.d/30-vendor.conf"
ln -s /dev/null "$root/etc/iosched.d/10-broken.conf"
expect_exit 0 "$A" --root "$root" --check-config
[ "$out" = "2 file(s), 2 rule(s), 0 error(s)" ] || fail "masking: $out"

log "--json: one object per disk and line, valid JSON (also for a file name that is no UTF-8)"
weird=$TEST_TMP/$'\xff\x01weird.conf'
cp "$conf" "$weird"
expect_exit 3 "$A" --root "$root" --config "$weird" --json --dry-run fake0 fake1 bio0 nosuch
[ "$(wc -l <"$TEST_TMP/out")" = 3 ] || fail "expected 3 JSON lines: $out"
python3 -m json.tool --json-lines "$TEST_TMP/out" >/dev/null || fail "not JSON: $(cat -v "$TEST_TMP/out")"
python3 - "$TEST_TMP/out" <<'PY' || fail "JSON content"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
assert [o["disk"] for o in objs] == ["fake0", "fake1", "bio0"], objs
for o in objs:
    for a in o["actions"]:
        assert a["file"].endswith("weird.conf") and "\ufffd" in a["file"], a
        assert a["line"] in (3, 4), a
nr = [a for a in objs[0]["actions"] if a["key"] == "nr_requests"][0]
assert nr["desired"] == "32" and nr["outcome"] == "would-write", nr
PY
expect_exit 0 "$A" --root "$root" --config "$conf" --json --dry-run --all
python3 -m json.tool --json-lines "$TEST_TMP/out" >/dev/null || fail "--all: not JSON"

log "iocost: read, compare, write nothing when equal; not applicable said once"
mkdir -p "$root/proc/self" "$root/sys/fs/cgroup"
echo "30 24 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate" >"$root/proc/self/mountinfo"
echo "cpuset cpu io memory pids" >"$root/sys/fs/cgroup/cgroup.controllers"
dn0=$(cat "$root/sys/devices/virtual/block/fake0/dev")
dn1=$(cat "$root/sys/devices/virtual/block/fake1/dev")
printf '%s enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.00 wlat=5000 min=50.00 max=150.00\n' "$dn1" "$dn0" \
        >"$root/sys/fs/cgroup/io.cost.qos"
printf '%s ctrl=user model=linear rbps=100 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6\n' "$dn0" \
        >"$root/sys/fs/cgroup/io.cost.model"
ioconf=$TEST_TMP/iocost.conf
printf '[rule io]\nmatch.name = fake0\niocost.enable = yes\niocost.rpct = 95\niocost.rlat = 5000\niocost.wpct = 95.004\niocost.min = 50\niocost.max = 150\niocost.model.rbps = 100\niocost.model.wrandiops = 6\n' >"$ioconf"
before=$(tree_sum)
expect_exit 0 "$A" --root "$root" --config "$ioconf" fake0
[ "$(tree_sum)" = "$before" ] || fail "iocost: equal values were written: $out"
grep -q "iocost.rlat .*already right" <<<"$out" || fail "iocost.rlat: $out"
sed -i "s/^$dn0 enable=1 ctrl=user rpct=95.00 rlat=5000/$dn0 enable=1 ctrl=user rpct=95.00 rlat=7000/" "$root/sys/fs/cgroup/io.cost.qos"
expect_exit 0 "$A" --root "$root" --config "$ioconf" --json --dry-run fake0
python3 - "$TEST_TMP/out" <<'PY' || fail "iocost dry run: $out"
import json, sys
o = json.loads(open(sys.argv[1]).read())
k = {a["key"]: a for a in o["actions"]}
assert k["iocost.rlat"]["current"] == "7000" and k["iocost.rlat"]["outcome"] == "would-write", k["iocost.rlat"]
assert all(a["outcome"] == "skipped" for n, a in k.items() if n != "iocost.rlat"), k
PY
echo "cpuset cpu memory pids" >"$root/sys/fs/cgroup/cgroup.controllers"
printf '[rule io]\nmatch.name = fake*\niocost.enable = yes\n' >"$ioconf"
before=$(tree_sum)
expect_exit 0 "$A" --root "$root" --config "$ioconf" fake0 fake1
[ "$(tree_sum)" = "$before" ] || fail "iocost without an io controller wrote"
[ "$(grep -c "not applicable" "$TEST_TMP/err")" = 1 ] || fail "not applicable is not said once: $err"
rm -r "$root/proc" "$root/sys/fs"

log "under udev: a dm device's change event that multipath marks as changing nothing is left alone"
fake_disk dm-0
dmconf=$TEST_TMP/dm.conf
printf '[rule dm]\nmatch.name = dm-*\nnr_requests = 32\n' >"$dmconf"
before=$(tree_sum)
for mark in MPATH_UNCHANGED=1 DM_UDEV_DISABLE_OTHER_RULES_FLAG=1 MPATH_DEVICE_READY=0 DM_SUSPENDED=1 \
        DM_ACTION=PATH_FAILED; do
        expect_exit 0 env ACTION=change SUBSYSTEM=block DEVPATH=/devices/virtual/block/dm-0 "$mark" \
                "$A" --root "$root" --config "$dmconf" -v dm-0
        [ "$(tree_sum)" = "$before" ] || fail "$mark: dm-0 was written"
        grep -q "dm-0: change event left alone: " "$TEST_TMP/err" || fail "$mark: no debug line: $err"
        ! grep -v "change event left alone" "$TEST_TMP/err" | grep -q dm-0 || fail "$mark: dm-0 was read: $err"
done
# ...but its other events are acted on
expect_exit 0 env ACTION=change SUBSYSTEM=block DEVPATH=/devices/virtual/block/dm-0 MPATH_DEVICE_READY=1 \
        "$A" --root "$root" --config "$dmconf" dm-0
[ "$(cat "$root/sys/class/block/dm-0/queue/nr_requests")" = 32 ] ||
        fail "dm-0's change event that changes something was not acted on"

log "the stack role in --dry-run, text and JSON"
mkdir -p "$root/sys/class/block/dm-0/dm"
echo LVM-nBUnxiAfr4MNf >"$root/sys/class/block/dm-0/dm/uuid"
expect_exit 0 "$A" --root "$root" --config "$dmconf" --dry-run dm-0
grep -q "^dm-0 (dm, dm LVM, scheduler mq-deadline)$" "$TEST_TMP/out" || fail "dry-run's role: $out"
expect_exit 0 "$A" --root "$root" --config "$dmconf" --dry-run --json dm-0
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert (d["role"], d["dm"], d["above"]) == ("dm", "LVM", None), d' "$out" ||
        fail "--json's role: $out"

log "under udev: a disk gone before it could be read is not an error"
expect_exit 0 env ACTION=add SUBSYSTEM=block SEQNUM=1 DEVPATH=/devices/virtual/block/gone0 \
        "$A" --root "$root" --config "$conf" gone0
log "ok"
