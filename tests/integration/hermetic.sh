#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An installed iosched neither acts on the suites' devices nor is changed by them.
#  1. If iosched is installed here (its rule in /usr/lib, /lib or /etc/udev/rules.d, e.g. by
#     tools/setup, with its main file), udev-rule, daemon-hotplug and daemon-storm pass with
#     it in place, and every installed file (rule, main files, drop-ins) is byte-identical
#     afterwards.
#  2. Always: a stand-in for an installed rule, the shipped rule at the place that wins over
#     every other (/etc/udev/rules.d/60-iosched.rules), its RUN only logging the disk it would
#     act on (it writes nothing, so no real disk is ever touched): it runs for a loop device
#     outside the suites (so it can see one), and not once for a device of the three tests,
#     run again with it in place. Removed at exit; skipped if a real one sits there already
#     (then step 1 covered it).
. "$(dirname "$0")/../lib/common.sh"
require_root
command -v udevadm >/dev/null || fail "udevadm is not installed (tools/install-deps test)"

subtests=(udev-rule daemon-hotplug daemon-storm)
run_subtests() {
        local t
        for t in "${subtests[@]}"; do
                log "running $t with $1"
                IOSCHED_BUILD_DIR=$IOSCHED_BUILD_DIR bash "$IOSCHED_SRC_DIR/tests/integration/$t.sh" \
                        >"$TEST_TMP/$t.log" 2>&1 || { cat "$TEST_TMP/$t.log" >&2; fail "$t failed with $1"; }
        done
}

# The installed files: rules of that name wherever udev reads them, the config and drop-ins.
installed_files() {
        local f
        for f in /etc/udev/rules.d/60-iosched.rules /run/udev/rules.d/60-iosched.rules \
                 /usr/lib/udev/rules.d/60-iosched.rules /lib/udev/rules.d/60-iosched.rules \
                 /etc/iosched.conf /run/iosched.conf /usr/local/lib/iosched.conf /usr/lib/iosched.conf \
                 /etc/iosched.d/*.conf /run/iosched.d/*.conf \
                 /usr/lib/iosched.d/*.conf /usr/local/lib/iosched.d/*.conf; do
                if [ -e "$f" ]; then realpath -e "$f"; fi
        done | sort -u
}
checksums() { installed_files | while read -r f; do md5sum "$f"; done; }

udevd_ensure
checksums >"$TEST_TMP/before"
installed_rule=$(installed_files | grep -m1 '/60-iosched.rules$' || true)
if [ -n "$installed_rule" ]; then
        log "1: iosched is installed here ($installed_rule$([ -f /etc/iosched.conf ] && echo ', /etc/iosched.conf'))"
        run_subtests "the installed rule"
        checksums >"$TEST_TMP/after"
        diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "the tests changed installed files"
        log "1: the three tests pass with it; $(wc -l <"$TEST_TMP/before") installed files byte-identical"
else
        log "1: iosched is not installed here: only the stand-in"
fi

standin=/etc/udev/rules.d/60-iosched.rules
if [ -e "$standin" ]; then
        log "2: $standin exists (covered by 1): no stand-in"
        log ok
        exit 0
fi
seen=$TEST_TMP/standin.log
: >"$seen"
mkdir -p /etc/udev/rules.d
on_exit "rm -f '$standin'; udevadm control --reload"
# The shipped rule, RUN replaced by a line in a log: the disk and what backs it.
sed -e "s|^RUN+=.*|RUN+=\"/bin/sh -c 'echo \$kernel \$attr{loop/backing_file} >>$seen'\"|" \
        "$IOSCHED_SRC_DIR/udev/60-iosched.rules.in" >"$standin"
grep -q 'IOSCHED_IGNORE' "$standin" || fail "the shipped rule has no IOSCHED_IGNORE check"
udevadm control --reload

# Control: a loop device whose backing file is outside the suites' directories: the stand-in
# runs for it (so the log can show one).
ctl_dir=$(mktemp -d /var/tmp/hermetic-control.XXXXXX)
on_exit "rm -rf '$ctl_dir'"
truncate -s 8M "$ctl_dir/img"
ctl=$(losetup --find --show "$ctl_dir/img")
echo "${ctl#/dev/}" >>"$_ATTACHED"
udevadm trigger --action=change --settle "/sys/block/${ctl#/dev/}" || true
udevadm settle --timeout=30 || true
grep -q "^${ctl#/dev/} $ctl_dir/img" "$seen" || fail "the stand-in rule did not run for the control device ${ctl#/dev/}: $(cat "$seen")"
loop_del "${ctl#/dev/}"
log "2: the stand-in runs for a device outside the suites (${ctl#/dev/})"

: >"$seen"
run_subtests "the stand-in in $standin"
udevadm settle --timeout=30 || true
bad=$(grep -E '^loop[0-9]+ ?(/tmp/iosched-|/dev/shm/iosched-bench-|$)' "$seen" || true)
[ -z "$bad" ] || fail "the installed rule acted on the suites' devices: $(echo "$bad" | head -5 | tr '\n' ';')"
log "2: the three tests pass; the stand-in ran $(wc -l <"$seen") times, never for their devices"
rm -f "$standin"
udevadm control --reload
checksums >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "the tests changed installed files"
log ok
