#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --verify-interval: a value changed behind the daemon's back (a scheduler write emits no
# uevent) is found and restored by the next verify pass; a disk that is right costs no write.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root

a=$(loop_new)
config_root test "match.name = $a" "scheduler = mq-deadline" "nr_requests = 32"
bus_start
ioschedd_start --config-root "$root" --verify-interval=1 --no-monitor
[ "$(current_scheduler "$a")" = mq-deadline ] || fail "first pass"

# Two verify passes over a disk that is right: reads only. Each pass finds both keys right and
# counts them in WritesSkipped: wait for two passes' worth, however long they take to come.
count() { mgr_prop "$1" | cut -d' ' -f2; }
writes=$(count WritesDone)
skipped=$(count WritesSkipped)
skipped_at_least() { [ "$(count WritesSkipped)" -ge "$1" ]; }
wait_until 60 skipped_at_least $((skipped + 4)) || fail "no verify pass: WritesSkipped $(count WritesSkipped)"
[ "$(count WritesDone)" = "$writes" ] || fail "verify passes wrote to a disk that was right"

monitor_start "$TEST_TMP/signals"
echo none >"/sys/block/$a/queue/scheduler"
wait_until 60 sh -c "grep -q '\\[mq-deadline\\]' /sys/block/$a/queue/scheduler" \
        || fail "verify did not restore the scheduler: $(qattr "$a" scheduler)"
wait_until 60 sh -c "[ \"\$(cat /sys/block/$a/queue/nr_requests)\" = 32 ]" || fail "nr_requests after the switch"
# (LastChanges is the last pass's, and the next verify pass may already have written nothing.)
wait_until 60 grep -q "\"member\":\"Applied\".*\"$a\".*\"scheduler\",\"none\",\"mq-deadline\"" "$TEST_TMP/signals" \
        || fail "no Applied signal: $(cat "$TEST_TMP/signals")"
grep -q "$a: scheduler none -> mq-deadline" "$IOSCHEDD_LOG" || fail "no log line for the change"
log "ok"
