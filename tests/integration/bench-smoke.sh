#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The benchmarks run (bench/run-all --smoke: tiny sizes, figures meaningless), print their
# summary, and leave no loop device, udev rule or directory of theirs behind, also when one is
# killed half-way.
. "$(dirname "$0")/../lib/common.sh"
require_root

bench="$IOSCHED_SRC_DIR/bench"
export IOSCHED_BUILD_DIR
[ -x "$LOOPCTL" ] || fail "bench helpers not built (libudev missing?)"

# The benchmarks this test runs name their directories and rules with this tag (bench/lib.sh):
# what they leave behind is told from what another benchmark on the machine has meanwhile.
tag="smoke$$"
export IOSCHED_BENCH_TAG=$tag
ours() {        # loop devices backed by files of this test's benchmarks (any tag: "")
        losetup --list --noheadings --output NAME,BACK-FILE 2>/dev/null |
                grep -c "/dev/shm/iosched-bench-${1-$tag-}" || true
}
leftovers() {   # loop devices, directories and udev rules of this test's benchmarks
        local l d r
        l=$(ours)
        d=$(find /dev/shm -maxdepth 1 -name "iosched-bench-$tag-*" | wc -l)
        r=$(find /run/udev/rules.d -maxdepth 1 -name "61-iosched-bench-$tag-*" 2>/dev/null | wc -l)
        echo "$l $d $r"
}
[ "$(ours "")" = 0 ] || skip "another benchmark is running on this machine ($(ours "") loop devices)"

"$bench/run-all" --smoke --out "$TEST_TMP/out" >"$TEST_TMP/run-all.txt" 2>"$TEST_TMP/run-all.log" ||
        { cat "$TEST_TMP/run-all.log" "$TEST_TMP/run-all.txt" >&2; fail "bench/run-all --smoke failed"; }
grep -q '^## Summary' "$TEST_TMP/run-all.txt" || fail "no summary table"
benches="apply-unchanged exec-time event-cost side-effects latency storm"
[ -x "$IOSCHED_BUILD_DIR/daemon/ioschedd" ] && benches+=" daemon-idle scale"
for b in $benches; do
        grep -q "^$b: ok" "$TEST_TMP/run-all.txt" || fail "$b did not run: $(grep "^$b:" "$TEST_TMP/run-all.txt")"
        grep -q "^| $b " "$TEST_TMP/run-all.txt" || fail "$b put nothing in the summary"
done
# The side-effects table is measured, not asserted; the figure in it must be a number.
grep -E '^\| side-effects +\| blind "none" rewrite: nr_requests configured 32 +\| +[0-9]+ ' \
        "$TEST_TMP/run-all.txt" >/dev/null || fail "side-effects gave no figure"
[ "$(leftovers)" = "0 0 0" ] || fail "left behind after run-all (loops, dirs, rules): $(leftovers)"

# bench/update-doc pastes a quiet run and refuses a noisy one (every recorded load <= 1.5), or
# marks every table with --noisy; on a copy of the document, with the smoke run's loads set.
doc="$TEST_TMP/doc/benchmarks.md"
mkdir -p "$TEST_TMP/doc"
cp "$IOSCHED_SRC_DIR/docs/benchmarks.md" "$doc"
quiet="$TEST_TMP/quiet" loud="$TEST_TMP/loud"
cp -r "$TEST_TMP/out" "$quiet"
sed -i 's/^\(load (1 min) at each [a-z]*:\).*/\1 0.50 1.00 1.50/' "$quiet"/*.txt
sed -i 's/^\(load [a-z-]*:\).*/\1 0.30/' "$quiet/run-all.log"
cp -r "$quiet" "$loud"
sed -i 's/^\(load (1 min) at each [a-z]*:\).*/\1 0.50 1.51/' "$loud/latency.txt"
IOSCHED_BENCH_DOC=$doc "$bench/update-doc" "$loud" 2>"$TEST_TMP/loud.err" &&
        fail "update-doc pasted a run with a load of 1.51"
grep -q 'latency 1.51' "$TEST_TMP/loud.err" || fail "update-doc did not name the high load: $(cat "$TEST_TMP/loud.err")"
cmp -s "$doc" "$IOSCHED_SRC_DIR/docs/benchmarks.md" || fail "a refused run changed the document"
IOSCHED_BENCH_DOC=$doc "$bench/update-doc" "$quiet" >/dev/null 2>&1 || fail "update-doc refused a quiet run"
grep -q 'Noisy run' "$doc" && fail "a quiet run was marked noisy"
IOSCHED_BENCH_DOC=$doc "$bench/update-doc" --noisy "$loud" >/dev/null 2>&1 || fail "update-doc --noisy failed"
grep -q '^\*\*Noisy run\*\* (1-min load up to 1.51' "$doc" || fail "--noisy did not mark the tables"

# Killed half-way: the trap still removes its loop devices.
"$bench/apply-unchanged" -n 8 -r 1000 >/dev/null 2>&1 &
pid=$!
has_loops() { [ "$(ours)" -ge "$1" ]; }
clean() { [ "$(leftovers)" = "0 0 0" ]; }
wait_until 60 has_loops 8 || { kill $pid; fail "apply-unchanged did not create its loop devices"; }
kill -TERM $pid
wait $pid || true
wait_until 60 clean || fail "left behind after SIGTERM: $(leftovers)"
log "ok"
