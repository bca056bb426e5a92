# SPDX-License-Identifier: LGPL-2.1-or-later
# Start a systemd-udevd unless one answers; shared by tests/lib/common.sh and bench/lib.sh.
# Only one udevd can run on a machine: one that runs already is used as is.
#
# udevd_start: 0 if one answered already; 1 if we started one (the caller stops it at exit with
# "udevadm control --exit"); 2 with a message on stderr if none could be started.
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
        for _ in $(seq 50); do
                udevadm control --ping >/dev/null 2>&1 && return 1
                sleep 0.1
        done
        echo "systemd-udevd did not answer" >&2
        return 2
}
