#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# iosched-apply on real loop devices: sets the policy, then a second run writes nothing.
. "$(dirname "$0")/../lib/common.sh"
require_root

a=$(loop_new)
b=$(loop_new)
cat >"$TEST_TMP/test.conf" <<CONF
[rule test]
match.name = $a|$b
scheduler = mq-deadline
iosched.fifo_batch = 8
nr_requests = 32
wbt_lat_usec = 3000
read_ahead_kb = 64
CONF

"$IOSCHED_APPLY" --config "$TEST_TMP/test.conf" "$a" "$b"
for d in "$a" "$b"; do
        [ "$(current_scheduler "$d")" = mq-deadline ] || fail "$d: scheduler $(qattr "$d" scheduler)"
        [ "$(qattr "$d" iosched/fifo_batch)" = 8 ] || fail "$d: fifo_batch"
        [ "$(qattr "$d" nr_requests)" = 32 ] || fail "$d: nr_requests $(qattr "$d" nr_requests)"
        [ "$(qattr "$d" wbt_lat_usec)" = 3000 ] || fail "$d: wbt_lat_usec"
        [ "$(qattr "$d" read_ahead_kb)" = 64 ] || fail "$d: read_ahead_kb"
done

n=$(count_sysfs_writes "$IOSCHED_APPLY" --config "$TEST_TMP/test.conf" "$a" "$b")
[ "$n" = 0 ] || fail "second run opened $n queue files for writing, expected 0"

# One attribute drifts (another tool wrote it): exactly one write brings it back.
echo 128 >"/sys/block/$a/queue/nr_requests"
n=$(count_sysfs_writes "$IOSCHED_APPLY" --config "$TEST_TMP/test.conf" "$a" "$b")
[ "$n" = 1 ] || fail "after drift: $n writes, expected 1"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "nr_requests not restored"
log "ok"
