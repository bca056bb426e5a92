#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Metrics (docs/metrics.md) with the real tools: `ioschedctl metrics` passes Debian's
# `promtool check metrics`; ioschedd --metrics-file writes the same series to a textfile, which
# passes promtool too; a drift put back shows in the file (DriftCorrected, rewritten by a rename);
# Debian's prometheus-node-exporter on 127.0.0.1, reading the file's directory with its textfile
# collector, serves the iosched_* series and no textfile error.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
PROMTOOL=/usr/bin/promtool
NODE_EXPORTER=/usr/bin/prometheus-node-exporter
[ -x "$PROMTOOL" ] || fail "promtool is not installed (tools/install-deps metrics: prometheus)"
[ -x "$NODE_EXPORTER" ] || fail "node_exporter is not installed (tools/install-deps metrics)"

watched_disks metrics
# One drop-in with an error: left out at start, counted in ConfigErrors.
printf '[rule broken]\nmatch.name = %s\nno_such_key = 1\n' "$b" >"$root/etc/iosched.d/50-broken.conf"

textdir=$TEST_TMP/textfile
prom=$textdir/iosched.prom
mkdir -p "$textdir"
bus_start
# --verify-interval: the daemon reads the disks again every second and puts back what drifted.
ioschedd_start --config-root "$root" --no-monitor --verify-interval=1 --metrics-file="$prom"
# The file as first written: the state after the first pass, as the bus shows it first (a file
# written during the pass would show some disks, with the others pending).
wait_until 60 test -s "$prom" || fail "ioschedd wrote no $prom"
cp "$prom" "$TEST_TMP/first.prom"

# series FILE: the samples without their values, sorted (the metrics ioschedctl and the
# textfile have, whatever their counts are at the moment).
series() { grep -v '^#' "$1" | sed 's/ [^ ]*$//' | sort; }
# value FILE SERIES: the value of one sample.
value() { awk -v s="$2" '$1 == s { print $2 }' "$1"; }

# 1. ioschedctl metrics, checked by promtool.
"$IOSCHEDCTL" metrics >"$TEST_TMP/ctl.prom" || fail "ioschedctl metrics failed"
# promtool says nothing and exits 0 when it finds nothing to remark.
"$PROMTOOL" check metrics <"$TEST_TMP/ctl.prom" >"$TEST_TMP/promtool.out" 2>&1 && [ ! -s "$TEST_TMP/promtool.out" ] ||
        fail "promtool check metrics: $(cat "$TEST_TMP/promtool.out")"
for s in "iosched_build_info{version=\"$("$IOSCHEDD" --version | awk '{ print $NF; exit }')\"}" \
         iosched_config_errors iosched_writes_total iosched_drift_corrected_total \
         "iosched_desired_mismatch{disk=\"$a\",key=\"scheduler\"}" \
         "iosched_desired_mismatch{disk=\"$b\",key=\"nr_requests\"}"; do
        [ -n "$(value "$TEST_TMP/ctl.prom" "$s")" ] || fail "ioschedctl metrics lacks $s"
done
grep -q "^iosched_disk_info{disk=\"$a\",transport=\"loop\"" "$TEST_TMP/ctl.prom" || fail "no iosched_disk_info of $a"
[ "$(value "$TEST_TMP/ctl.prom" iosched_config_errors)" = 1 ] || fail "iosched_config_errors is not 1"
log "ioschedctl metrics passes promtool check metrics ($(grep -vc '^#' "$TEST_TMP/ctl.prom") samples)"

# 2. The textfile: promtool-clean, the same series as ioschedctl's (the values may be a
# verify pass apart: the file follows at most every 5 s), nothing else in its directory.
"$PROMTOOL" check metrics <"$TEST_TMP/first.prom" >"$TEST_TMP/promtool.out" 2>&1 && [ ! -s "$TEST_TMP/promtool.out" ] ||
        fail "promtool check metrics on the textfile: $(cat "$TEST_TMP/promtool.out")"
diff <(series "$TEST_TMP/ctl.prom") <(series "$TEST_TMP/first.prom") >&2 ||
        fail "the textfile's series are not ioschedctl's"
[ "$(ls -A "$textdir")" = iosched.prom ] || fail "other files in the textfile's directory: $(ls -A "$textdir")"

# 3. Another writer: the value is put back, and the file shows the drift corrected and the
# write, in a new file (renamed over the old one, not written in place).
drift0=$(value "$prom" iosched_drift_corrected_total)
ino=$(stat -c %i "$prom")
echo 128 >"/sys/block/$a/queue/read_ahead_kb"
drifted() { [ "$(value "$prom" iosched_drift_corrected_total)" -gt "$drift0" ]; }
wait_until 60 drifted || fail "iosched_drift_corrected_total stayed at $drift0 in the textfile"
[ "$(qattr "$a" read_ahead_kb)" = 256 ] || fail "read_ahead_kb was not put back"
[ "$(stat -c %i "$prom")" != "$ino" ] || fail "the textfile was written in place, not renamed over"
[ "$(ls -A "$textdir")" = iosched.prom ] || fail "a temporary file was left: $(ls -A "$textdir")"
log "a drift put back: iosched_drift_corrected_total $drift0 -> $(value "$prom" iosched_drift_corrected_total)"

# 4. node_exporter serves the series from the textfile, on loopback only, on a free port.
server_start port ne_pid "$TEST_TMP/node-exporter.log" metrics \
        "$NODE_EXPORTER" --web.listen-address=127.0.0.1:@PORT@ --collector.disable-defaults \
        --collector.textfile --collector.textfile.directory="$textdir"
curl -fsS -o "$TEST_TMP/scrape" "http://127.0.0.1:$port/metrics" || fail "no scrape of node_exporter"
grep -q "^iosched_disk_info{disk=\"$a\",rotational=\"1\",scheduler=\"mq-deadline\",transport=\"loop\"} 1" "$TEST_TMP/scrape" ||
        fail "node_exporter does not serve iosched_disk_info of $a: $(grep iosched_disk_info "$TEST_TMP/scrape")"
grep -q "^iosched_writes_total " "$TEST_TMP/scrape" || fail "node_exporter does not serve iosched_writes_total"
[ "$(value "$TEST_TMP/scrape" node_textfile_scrape_error)" = 0 ] ||
        fail "node_exporter reports a textfile error: $(grep textfile "$TEST_TMP/scrape")"
log "node_exporter on 127.0.0.1:$port serves $(grep -c '^iosched_' "$TEST_TMP/scrape") iosched_* samples"

# 5. ioschedd stops: the file goes (a stale one would show a state nobody keeps).
ioschedd_stop
[ ! -e "$prom" ] || fail "the textfile outlived ioschedd"
log "ok"
