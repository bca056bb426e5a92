#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ioschedd and ioschedctl with iocost, on a fake root (this machine's io controller is bound
# to cgroup v1): an NVMe disk whose udev database holds systemd-iocost's hwdb solution, a
# cgroup v2 root with the io controller whose io.cost.* lines already match it, and systemd's
# 90-iocost.rules with its helper installed. The daemon publishes the kernel's values, takes
# the solution (explain names the hwdb entry), writes nothing, and reports the second writer
# in status, on the bus and once in its log.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
[ -x "$IOSCHEDCTL" ] || fail "no $IOSCHEDCTL: build first"

root=$TEST_TMP/root
dev=$root/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1
mkdir -p "$dev/queue" "$root/sys/class/block" "$root/run/udev/data" "$root/proc/self" \
        "$root/sys/fs/cgroup" "$root/usr/lib/udev/rules.d" "$root/etc"
ln -s ../../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1 "$root/sys/class/block/nvme0n1"
echo 259:0 >"$dev/dev"
echo 0 >"$dev/removable"
echo 0 >"$dev/queue/rotational"
echo none >"$dev/queue/zoned"
echo "[none] mq-deadline" >"$dev/queue/scheduler"
echo 0 >"$dev/queue/wbt_lat_usec"
cat >"$root/run/udev/data/b259:0" <<'DB'
E:ID_MODEL=Fake NVMe
E:IOCOST_SOLUTIONS=isolation naive
E:IOCOST_QOS_NAIVE=rpct=99.00 rlat=8000 wpct=99.00 wlat=8000 min=75.00 max=100.00
E:IOCOST_MODEL_NAIVE=rbps=7 rseqiops=8 rrandiops=9 wbps=10 wseqiops=11 wrandiops=12
DB
echo "30 24 0:26 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate" >"$root/proc/self/mountinfo"
echo "cpuset cpu io memory pids" >"$root/sys/fs/cgroup/cgroup.controllers"
qos="enable=1 ctrl=user rpct=99.00 rlat=8000 wpct=99.00 wlat=8000 min=75.00 max=100.00"
echo "259:0 $qos" >"$root/sys/fs/cgroup/io.cost.qos"
echo "259:0 ctrl=user model=linear rbps=7 rseqiops=8 rrandiops=9 wbps=10 wseqiops=11 wrandiops=12" \
        >"$root/sys/fs/cgroup/io.cost.model"
echo 'ENV{IOCOST_SOLUTIONS}!="", RUN+="iocost apply $env{DEVNAME}"' >"$root/usr/lib/udev/rules.d/90-iocost.rules"
printf '#!/bin/sh\n' >"$root/usr/lib/udev/iocost"
chmod 0755 "$root/usr/lib/udev/iocost"
conf=$root/etc/iosched.conf
printf '[rule hw]\nmatch.transport = nvme\niocost.solution = hwdb\n' >"$conf"
sum() { (cd "$root" && find sys -type f -print0 | sort -z | xargs -0 md5sum | md5sum); }
before=$(sum)

bus_start
ioschedd_start --root "$root" --config-root "$root" --no-monitor
ctl() { "$IOSCHEDCTL" --no-ask-password "$@"; }

ctl apply nvme0n1
[ "$(sum)" = "$before" ] || fail "the daemon wrote to a disk already at its policy"
# Current: each token of the two lines as its configuration key, spelt as the configuration does.
for kv in iocost.enable=1 iocost.ctrl=user iocost.rpct=99.00 iocost.rlat=8000 iocost.min=75.00 \
        iocost.max=100.00 iocost.model.ctrl=user iocost.model.rbps=7 iocost.model.wrandiops=12; do
        [ "$(disk_current nvme0n1 "${kv%%=*}")" = "${kv#*=}" ] || fail "Current ${kv%%=*}: $(disk_prop nvme0n1 Current)"
done
disk_prop nvme0n1 OtherWriters | has -x 'a(ssssussb) 1 "iocost" "systemd-iocost" "systemd-iocost rule" "/usr/lib/udev/rules.d/90-iocost.rules" 1 "" "add|change" true' ||
        fail "OtherWriters: $(disk_prop nvme0n1 OtherWriters)"

out=$(ctl explain nvme0n1)
echo "$out" | has -E "^iocost.rlat +8000 +8000 +udev hwdb IOCOST_QOS_naive, via $conf:3 \\(rule hwdb:naive\\)$" ||
        fail "explain does not name the hwdb entry: $out"
echo "$out" | has -E "^iocost.model.wrandiops +12 +12 +udev hwdb IOCOST_MODEL_naive, via $conf:3" ||
        fail "explain iocost.model.wrandiops: $out"
echo "$out" | has "90-iocost.rules also writes" || fail "explain does not report the second writer: $out"
ctl status | has "^nvme0n1: systemd's 90-iocost.rules also writes io.cost.qos and io.cost.model" ||
        fail "status does not report the second writer: $(ctl status)"
# status --json shows the kernel's lines, made again from Current.
ctl status --json | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; assert d["iocost_qos"]==sys.argv[1] and d["iocost_model"].startswith("ctrl=user model=linear rbps=7 rseqiops=8 "), d' "$qos" ||
        fail "status --json: $(ctl status --json)"

# (The files are plain files here, not the kernel's: a write would not be parsed, so the
# test keeps to a disk at its policy; test-iocost covers writes on an emulated kernel.)
ctl apply nvme0n1
[ "$(sum)" = "$before" ] || fail "the second apply wrote"
[ "$(grep -c "90-iocost.rules also writes" "$IOSCHEDD_LOG")" = 1 ] ||
        fail "the second writer is not logged once: $(grep -c "90-iocost.rules" "$IOSCHEDD_LOG")"
log "ok"
