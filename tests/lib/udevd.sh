# SPDX-License-Identifier: LGPL-2.1-or-later
# Start a systemd-udevd unless one answers; shared by tests/lib/common.sh and bench/lib.sh.
# Only one udevd can run on a machine: one that runs already is used as is.
#
# udevd_start: 0 if one answered already; 1 if we started one, $UDEVD_PID (the caller stops it
# at exit with udevd_stop); 2 with a message on stderr if none could be started.
udevd_start() {
        udevadm control --ping >/dev/null 2>&1 && return 0
        local udevd
        udevd=$(command -v systemd-udevd || echo /lib/systemd/systemd-udevd)
        if [ ! -x "$udevd" ]; then
                echo "systemd-udevd is not installed (apt-get install udev)" >&2
                return 2
        fi
        # A udevd that was stopped leaves its inotify watches in /run/udev/watch; where /run is
        # no tmpfs, the next one refuses to clear them, and every new watch whose number is
        # taken by a stale link is dropped ("Failed to create symlink ... File exists"): no
        # change events when a device written to is closed. No udevd runs: none is live.
        pgrep -r R,S,D,I -x systemd-udevd >/dev/null || rm -rf /run/udev/watch /run/udev/watch.old
        "$udevd" --daemon
        # Its workers are its children, younger than it: the oldest systemd-udevd is the daemon.
        if wait_until 60 udevadm control --ping &&
           UDEVD_PID=$(pgrep -o -r R,S,D,I -x systemd-udevd); then
                return 1
        fi
        echo "systemd-udevd did not answer within 60 s" >&2
        return 2
}

# udevd_stop PID: stop the udevd that udevd_start started and wait until it is gone, so that the
# next suite starts its own instead of finding this one still answering on its way out.
udevd_stop() {
        local pid=$1 _
        udevadm control --exit >/dev/null 2>&1 || true
        for _ in $(seq 1200); do
                kill -0 "$pid" 2>/dev/null || return 0
                sleep 0.05
        done
        kill -KILL "$pid" 2>/dev/null || true
}

# udev_shield: keep an installed iosched off the loop devices of the running test or benchmark.
# The shipped rule (60-iosched.rules, wherever it is installed: /usr/lib, /lib or /etc) skips a
# disk whose IOSCHED_IGNORE property is 1; this file, sorted before it, sets the property on loop
# devices backed by files of the suites (/tmp/iosched-*, /dev/shm/iosched-bench-*) and on loop
# devices with nothing attached yet (a new index's "add"). The suites' own rules are made from
# the shipped one without that check. Nothing installed is touched: the shield is a file of its
# own in /run/udev/rules.d, named after this process. Prints its path: the caller removes it at
# exit (also on failure or signal); shields of processes that died without doing so go now.
udev_shield() {
        local dir=/run/udev/rules.d f pid
        mkdir -p "$dir"
        for f in "$dir"/59-iosched-shield-*.rules; do
                [ -e "$f" ] || continue
                pid=${f##*-}
                pid=${pid%.rules}
                kill -0 "$pid" 2>/dev/null || rm -f "$f"
        done
        f=$dir/59-iosched-shield-$$.rules
        cat >"$f.tmp" <<'RULES'
# iosched's test suite (tests/lib/udevd.sh udev_shield): while it runs, an installed iosched rule
# leaves the suite's loop devices alone. Removed when the suite ends.
SUBSYSTEM=="block", KERNEL=="loop[0-9]*", ATTR{loop/backing_file}=="/tmp/iosched-*|/dev/shm/iosched-bench-*", ENV{IOSCHED_IGNORE}="1"
SUBSYSTEM=="block", KERNEL=="loop[0-9]*", TEST!="loop/backing_file", ENV{IOSCHED_IGNORE}="1"
RULES
        mv -f "$f.tmp" "$f"
        udevadm control --reload >/dev/null 2>&1 || true
        echo "$f"
}

# udev_rule_from_shipped HELPER_CMD: the shipped rule (udev/60-iosched.rules.in) on stdout with
# its RUN running HELPER_CMD and without the IOSCHED_IGNORE check (the shield sets it on the
# suites' devices, which the suites' own rules must still handle).
udev_rule_from_shipped() {
        local src
        src="$(dirname "${BASH_SOURCE[0]}")/../../udev/60-iosched.rules.in"
        sed -e '/ENV{IOSCHED_IGNORE}/d' -e "s|@LIBEXECDIR@/iosched-apply|$1|" "$src"
}
