# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/system/checks.sh: the checks tests/system/run makes on the booted guest.
#
# Adding a check is writing one function: every function named check_NAME below is a check,
# run in the order of this file, on the running guest (boot 2 onwards: iosched installed and
# booted once). A check prints what it saw, calls bad "why" for each failure (or returns
# non-zero), and may reboot the guest (guest_reboot). To talk to the guest:
#   guest [-t SECONDS] 'SCRIPT'   run SCRIPT as root in the guest, print its output, return its status
#   guest_put FILE PATH           copy a file into the guest
#   as_user 'SCRIPT'              SCRIPT as the login user, in a logind session (su -l)
#   disk_of SERIAL                the guest's current name of a test disk (names change per boot)
#   skip "why"                    the check cannot run in this configuration (counted apart)
# Facts recorded by checks_run: before[SERIAL] (the kernel's scheduler at boot 1, iosched not
# installed), boot_cost_without / boot_cost_with.

# What conf/iosched.conf documents for each test disk: SERIAL TRANSPORT SCHEDULER ("=" for no
# rule: the kernel's own choice stays).
expected_policy="
iosroot virtio none
iosnvme nvme none
ioszns nvme mq-deadline
iosvd1q virtio none
iosvd2q virtio =
iosscsi scsi =
iossata ata mq-deadline
iosusb usb mq-deadline
"

bad() {
	echo "  not ok: $*"
	check_failed=1
}

skip() {
	echo "  skipped: $*"
	check_skipped=1
}

as_user() {
	guest "su -l $image_user -c $(printf '%q' "$1")"
}

# expect_lines OUT LINE MESSAGE...: for each pair, OUT has a line that is LINE (a grep pattern,
# matched whole) or the check fails with MESSAGE.
expect_lines() {
	local out=$1
	shift
	while [ $# -ge 2 ]; do
		grep -qx -- "$1" <<<"$out" || bad "$2"
		shift 2
	done
}

# disks_probe: one line per test disk: SERIAL NAME ROTATIONAL QUEUES ZONED SCHEDULER, read
# from sysfs and udev in the guest.
disks_probe() {
	# Disks probed late (USB, SCSI) may appear after the boot is done: wait for all of them
	# (two minutes at most; a missing one fails the checks that need it).
	guest 'for i in $(seq 120); do
		udevadm settle --timeout=30
		n=0
		for s in '"$guest_disk_serials"'; do
			grep -qs "^$s\$" /sys/block/*/serial /sys/block/*/device/serial 2>/dev/null && n=$((n + 1)) && continue
			udevadm info -q property -n /dev/disk/by-id/* 2>/dev/null | grep -q "^ID_SERIAL=.*$s" && n=$((n + 1))
		done
		[ $n = '"$(wc -w <<<"$guest_disk_serials")"' ] && break
		sleep 1
	done
	for d in /sys/block/*; do
		n=${d##*/}
		[ -e "$d/queue/scheduler" ] || continue
		s=$(udevadm info -q property -p "$d" | sed -n "s/^ID_SERIAL=//p" | grep -o "ios[a-z0-9]*" | head -n1)
		[ -n "$s" ] || continue
		sch=$(sed "s/.*\[\(.*\)\].*/\1/" "$d/queue/scheduler")
		echo "$s $n $(cat $d/queue/rotational) $(ls -d $d/mq/* 2>/dev/null | wc -l) $(cat $d/queue/zoned) $sch"
	done' >"$tmp/disks.txt" || return 1
}

disk_of() {
	awk -v s="$1" '$1 == s { print $2 }' "$tmp/disks.txt"
}

# boot_record without|with: systemd-analyze, and with iosched the time from udev coldplug start
# to the last change iosched logged (every disk at its policy).
boot_record() {
	local out
	out=$(guest 'systemctl is-system-running --wait >/dev/null
		systemd-analyze | head -n1
		t0=$(systemctl show -P ExecMainStartTimestampMonotonic systemd-udev-trigger.service)
		t1=$(journalctl -b -o short-monotonic SYSLOG_IDENTIFIER=iosched-apply SYSLOG_IDENTIFIER=ioschedd |
			grep " -> " | tail -n1 | sed "s/^\[ *\([0-9]*\)\.\([0-9]*\)\].*/\1\2/")
		if [ -n "$t1" ]; then
			echo "coldplug start -> last iosched change: $(( (10#$t1 - t0) / 1000 )) ms"
		else
			echo "no iosched change logged in this boot"
		fi')
	printf -v "boot_cost_$1" '%s' "$out"
}

# package_install: the package under test into the guest: apt install of the .deb, or the
# destdir stand-in (unpacked over /, then what the maintainer scripts would do).
package_install() {
	if [ "$package_kind" = deb ]; then
		guest_put "$package" "/tmp/$(basename "$package")" || return 1
		guest -t 600 "apt-get install -y /tmp/$(basename "$package") && rm -f /tmp/$(basename "$package")"
	else
		guest_put "$package" /tmp/iosched.tar.gz || return 1
		guest "tar -C / --keep-directory-symlink --no-overwrite-dir -xzf /tmp/iosched.tar.gz && rm /tmp/iosched.tar.gz &&
			systemctl daemon-reload && systemctl reload dbus && udevadm control --reload &&
			systemctl enable ioschedd.service && udevadm trigger --action=change --subsystem-match=block &&
			udevadm settle"
	fi
}

# ---------------------------------------------------------------- checks

# After boot, every disk is at the shipped policy for its class, and the journal has one line
# per change: disk, key, old -> new, the rule and its file:line.
check_policy_at_boot() {
	local json journal serial name rot q zoned sch exp_t exp_s tr want lines line file ln missing=
	disks_probe || { bad "cannot read the disks"; return; }
	json=$(guest '/usr/libexec/iosched-apply --dry-run --json --all') || bad "iosched-apply --dry-run --json --all failed: $json"
	journal=$(guest 'journalctl -b -o cat SYSLOG_IDENTIFIER=iosched-apply SYSLOG_IDENTIFIER=ioschedd')
	# The real strings detection works from, for the log.
	guest 'for s in '"$guest_disk_serials"'; do
		for d in /sys/block/*; do
			udevadm info -q property -p "$d" | grep -q "^ID_SERIAL=.*$s" || continue
			echo "  $s: $(udevadm info -q property -p "$d" | grep -E "^(DEVPATH|ID_BUS)=" | tr "\n" " ")"
		done
	done'
	printf '  %-8s %-8s %-10s %-6s %-4s %-12s %-12s %-12s %s\n' SERIAL DISK TRANSPORT QUEUES ROT ZONED BEFORE AFTER EXPECTED
	while read -r serial exp_t exp_s; do
		[ -n "$serial" ] || continue
		read -r name rot q zoned sch < <(awk -v s="$serial" '$1 == s { print $2, $3, $4, $5, $6 }' "$tmp/disks.txt")
		if [ -z "$name" ]; then
			bad "$serial: no such disk in the guest"
			missing=1
			continue
		fi
		tr=$(printf '%s\n' "$json" | sed -n "s/^{\"disk\":\"$name\",\"transport\":\"\([^\"]*\)\".*/\1/p")
		want=$exp_s
		[ "$want" = "=" ] && want=${before[$serial]:-?}
		printf '  %-8s %-8s %-10s %-6s %-4s %-12s %-12s %-12s %s\n' "$serial" "$name" "${tr:-?}" "$q" "$rot" \
			"$zoned" "${before[$serial]:-?}" "$sch" "$exp_s"
		[ "$tr" = "$exp_t" ] || bad "$serial ($name): iosched sees transport '${tr:-none}', the disk is $exp_t"
		[ "$sch" = "$want" ] || bad "$serial ($name): scheduler $sch, the policy wants $want"
		# One journal line per change, none for a disk the kernel had right.
		lines=$(printf '%s\n' "$journal" | grep -c "^$name: scheduler .* -> " || true)
		if [ "${before[$serial]:-}" != "$want" ]; then
			[ "$lines" = 1 ] || bad "$serial ($name): $lines journal lines for the scheduler change, want 1"
			line=$(printf '%s\n' "$journal" | grep "^$name: scheduler .* -> " | head -n1)
			echo "    journal: $line"
			case "$line" in
			"$name: scheduler ${before[$serial]} -> $want (rule "*", /usr/lib/iosched.conf:"*")") ;;
			*) bad "$serial ($name): journal line does not say old -> new, rule and file:line" ;;
			esac
			# The file:line it names is the rule's scheduler line.
			file=${line##*, }
			file=${file%)}
			ln=${file##*:}
			file=${file%:*}
			grep -q '^scheduler *=' <<<"$(guest "sed -n '${ln}p' '$file'")" ||
				bad "$serial ($name): $file:$ln is not a scheduler line"
		else
			[ "$lines" = 0 ] || bad "$serial ($name): $lines journal lines, but the kernel's value was right"
		fi
	done <<<"$expected_policy"
	[ -z "${missing:-}" ] || guest 'lsblk -o NAME,SERIAL,TRAN; lsmod | grep -E "nvme|ahci|sd_mod|virtio_scsi|uas|usb_storage|xhci"; dmesg | grep -iE "nvme|ahci|scsi|usb-storage|xhci|firmware" | tail -n 20' | sed 's/^/    /'
}

# The boot after the install is from an initramfs made by Debian's initramfs-tools with
# iosched's hook (initramfs.sh): udev there brought the root disk to its policy before the switch
# to the real root. Its journal line came through the kernel's log (no syslog socket in the
# initramfs) and is older than systemd's start on the real root; the package's installation
# ran initramfs-tools' trigger.
check_initramfs() {
	local dev out ts user line
	[ "$package_kind" = deb ] || { skip "no .deb: no initramfs with the hook"; return; }
	[ -n "$guest_initrd" ] || { bad "no initramfs was made: $(tail -n 5 "$tmp/initramfs-$kernel_name.log" 2>/dev/null)"; return; }
	echo "  in the initramfs: $(gzip -dc "$guest_initrd" | cpio -t --quiet 2>/dev/null | grep -E 'iosched' | tr '\n' ' ')"
	grep -q '^Processing triggers for initramfs-tools' "$tmp/install-$kernel_name.log" ||
		bad "installing the package did not run initramfs-tools' trigger"
	grep '^Processing triggers for initramfs-tools\|^update-initramfs' "$tmp/install-$kernel_name.log" | sed 's/^/  apt: /'
	dev=$(disk_of iosroot)
	out=$(guest "cat /proc/cmdline
		echo \"userspace: \$(systemctl show -P UserspaceTimestampMonotonic)\"
		journalctl -b -o json --output-fields=_SOURCE_MONOTONIC_TIMESTAMP,_TRANSPORT,MESSAGE SYSLOG_IDENTIFIER=iosched-apply |
			grep '\"MESSAGE\":\"$dev: scheduler '") || { bad "cannot read the journal: $out"; return; }
	echo "$out" | sed 's/^/  /'
	user=$(sed -n 's/^userspace: \([0-9]*\)$/\1/p' <<<"$out")
	line=$(grep '"MESSAGE"' <<<"$out" | head -n1)
	[ "$(grep -c '"MESSAGE"' <<<"$out")" = 1 ] || bad "$(grep -c '"MESSAGE"' <<<"$out") scheduler lines for $dev, want 1"
	grep -q '"_TRANSPORT":"kernel"' <<<"$line" || bad "the line did not come through the kernel's log (the initramfs)"
	# The kernel's time of the record (journald's own __MONOTONIC_TIMESTAMP is when it read it).
	ts=$(sed -n 's/.*"_SOURCE_MONOTONIC_TIMESTAMP":"\([0-9]*\)".*/\1/p' <<<"$line")
	echo "  $dev's line at ${ts:-?} us, systemd on the real root at ${user:-?} us"
	[ -n "$ts" ] && [ -n "$user" ] && [ "$ts" -lt "$user" ] ||
		bad "$dev's policy line is not older than the switch to the real root"
}

# dracut (dracut-core 059, beside initramfs-tools in the image) with the package's module
# 90iosched: an initramfs of that module (and what it depends on, udev-rules) made in the guest
# for the running kernel holds the helper the rule runs, the rule, and the policy's main file and
# drop-ins as on the real root, and the rule in it names a helper that is in it.
check_initramfs_dracut() {
	local out helper img=/var/tmp/system-test-dracut.img
	[ "$package_kind" = deb ] || { skip "no .deb: no dracut module installed"; return; }
	out=$(guest -t 600 "printf '[rule system-test-dracut]\nmatch.name = system-test-none\nscheduler = none\n' >/etc/iosched.d/50-system-test-dracut.conf
		dracut --quiet --force --no-hostonly --no-compress --no-early-microcode --modules iosched --kver \$(uname -r) $img 2>&1 | tail -n 5
		echo \"dracut exit \${PIPESTATUS[0]}\"
		rm -f /etc/iosched.d/50-system-test-dracut.conf
		lsinitrd $img | awk '{ print \"file \" \$NF }' | grep iosched
		mkdir -p /var/tmp/std && cd /var/tmp/std && cpio -id --quiet '*60-iosched.rules' <$img 2>/dev/null
		find /var/tmp/std -name 60-iosched.rules -exec sed -n 's/^.*RUN+=\"\([^ \"]*\) .*/rule runs \1/p' {} +
		cd / && rm -rf /var/tmp/std $img") || { bad "dracut in the guest: $out"; return; }
	echo "$out" | sed 's/^/  /'
	grep -qx 'dracut exit 0' <<<"$out" || bad "dracut failed"
	helper=$(sed -n 's/^rule runs //p' <<<"$out" | head -n1)
	[ -n "$helper" ] || bad "no 60-iosched.rules with a RUN in the initramfs"
	grep -qx "file ${helper#/}" <<<"$out" || bad "the rule runs $helper, which is not in the initramfs"
	grep -qE '^file (usr/)?lib/udev/rules.d/60-iosched.rules$' <<<"$out" || bad "no rule in the initramfs"
	grep -qx 'file usr/lib/iosched.conf' <<<"$out" || bad "the shipped policy /usr/lib/iosched.conf is not in the initramfs"
	grep -qx 'file etc/iosched.d/50-system-test-dracut.conf' <<<"$out" || bad "the drop-in is not in the initramfs"
}

# udevadm trigger --action=change and a close-after-write (60-block.rules' inotify watch, a
# change event) make no write to any queue attribute. Counted by the kernel: the function
# tracer on queue_attr_store() (queue/*) and elv_attr_store() (queue/iosched/*), the sysfs
# store handlers every writer goes through, whoever it is (udev workers, iosched-apply, ioschedd).
check_no_writes_on_change() {
	local out n ctl dev
	dev=$(disk_of iosvd2q)
	out=$(guest "set -e
		t=/sys/kernel/tracing
		[ -e \$t/trace ] || mount -t tracefs tracefs \$t
		grep -qx queue_attr_store \$t/available_filter_functions
		echo 'queue_attr_store elv_attr_store' >\$t/set_ftrace_filter
		echo function >\$t/current_tracer
		echo >\$t/trace
		echo 1 >\$t/tracing_on
		udevadm trigger --action=change --subsystem-match=block
		udevadm settle
		dd if=/dev/zero of=/dev/$dev bs=4k count=1 oflag=direct status=none
		udevadm settle
		# ioschedd handles the events after udev: give it time, then wait until idle.
		sleep 5
		busctl get-property org.iosched1 /org/iosched1 org.iosched1.Manager DisksPending
		echo \"writes: \$(grep -vc '^#' \$t/trace)\"
		grep -v '^#' \$t/trace | head -n 20
		# Control: one same-value write must be counted.
		echo >\$t/trace
		ra=\$(cat /sys/block/$dev/queue/read_ahead_kb)
		echo \$ra >/sys/block/$dev/queue/read_ahead_kb
		echo \"control: \$(grep -vc '^#' \$t/trace)\"
		echo 0 >\$t/tracing_on
		echo nop >\$t/current_tracer
		echo >\$t/set_ftrace_filter") || { bad "tracing failed: $out"; return; }
	echo "$out" | sed 's/^/  /'
	n=$(echo "$out" | sed -n 's/^writes: //p')
	ctl=$(echo "$out" | sed -n 's/^control: //p')
	[ "$ctl" = 1 ] || bad "the control write was counted $ctl times, not once: the count means nothing"
	[ "$n" = 0 ] || bad "$n writes to queue attributes after trigger and close-after-write"
}

# ioschedd is active (Type=notify: it sent READY=1) with a STATUS= text.
check_daemon_status() {
	local out
	out=$(guest 'systemctl show -p Type,ActiveState,SubState,StatusText,NRestarts ioschedd.service; systemctl status --no-pager ioschedd.service | head -n 5')
	echo "$out" | sed 's/^/  /'
	expect_lines "$out" 'Type=notify' "not Type=notify" 'ActiveState=active' "not active" \
		'SubState=running' "not running" 'StatusText=.*disks.*' "no STATUS= text with the disk count"
}

# The watchdog restarts a daemon that stops answering. WatchdogSec=3min is shortened to 20 s
# with a runtime drop-in, so the test waits seconds, not minutes.
check_watchdog() {
	local out
	out=$(guest 'set -e
		mkdir -p /run/systemd/system/ioschedd.service.d
		printf "[Service]\nWatchdogSec=20s\n" >/run/systemd/system/ioschedd.service.d/test-watchdog.conf
		systemctl daemon-reload
		systemctl restart ioschedd
		pid=$(systemctl show -P MainPID ioschedd)
		n0=$(systemctl show -P NRestarts ioschedd)
		sleep 25    # the daemon pings: still the same process
		[ "$(systemctl show -P MainPID ioschedd)" = "$pid" ] || { echo "restarted without SIGSTOP"; exit 1; }
		kill -STOP "$pid"
		for i in $(seq 90); do
			new=$(systemctl show -P MainPID ioschedd)
			[ "$new" != 0 ] && [ "$new" != "$pid" ] && [ "$(systemctl show -P ActiveState ioschedd)" = active ] && break
			sleep 1
		done
		echo "pid $pid -> $new, NRestarts $n0 -> $(systemctl show -P NRestarts ioschedd)"
		journalctl -b -u ioschedd -o cat | grep -i watchdog | tail -n 2
		rm /run/systemd/system/ioschedd.service.d/test-watchdog.conf
		systemctl daemon-reload
		[ "$new" != "$pid" ] && [ "$new" != 0 ]') || bad "the watchdog did not restart the stopped daemon"
	echo "$out" | sed 's/^/  /'
	grep -qi 'watchdog timeout' <<<"$out" || bad "no watchdog timeout in the journal"
	guest 'systemctl restart ioschedd' >/dev/null || bad "restart after the watchdog check failed"
}

# systemd-analyze security, on the live unit in the guest; the same threshold as
# tests/integration/unit-security.sh's offline check.
check_security() {
	local out
	out=$(guest 'systemd-analyze security --no-pager ioschedd.service | tail -n 1; systemd-analyze security --threshold=21 ioschedd.service >/dev/null') ||
		bad "exposure above 2.1"
	echo "  $out"
	grep -q 'Overall exposure level for ioschedd.service' <<<"$out" || bad "no exposure score"
}

# The sandbox as systemd builds it: inside the daemon's mount namespace, writes outside
# /etc/iosched.d, /run/iosched.d (and /sys) fail; inside them they work.
check_sandbox() {
	local out
	out=$(guest 'pid=$(systemctl show -P MainPID ioschedd)
		for p in /etc/iosched-test /usr/iosched-test /var/iosched-test /root/iosched-test /home/iosched-test /etc/iosched.d/test.tmp /run/iosched.d/test.tmp /tmp/iosched-test; do
			if nsenter -t "$pid" -m sh -c "echo x >$p" 2>/dev/null; then
				echo "writable $p"; nsenter -t "$pid" -m rm -f "$p"
			else
				echo "refused $p"
			fi
		done')
	echo "$out" | sed 's/^/  /'
	for p in /etc/iosched-test /usr/iosched-test /var/iosched-test /root/iosched-test /home/iosched-test; do
		grep -qx "refused $p" <<<"$out" || bad "the daemon can write $p"
	done
	for p in /etc/iosched.d/test.tmp /run/iosched.d/test.tmp /tmp/iosched-test; do
		grep -qx "writable $p" <<<"$out" || bad "the daemon cannot write $p"
	done
	# PrivateTmp: what the daemon writes to /tmp is not the host's /tmp.
	guest '[ ! -e /tmp/iosched-test ]' || bad "PrivateTmp: the daemon's /tmp is the system's"
}

# udev's lock under the unit's sandbox (DevicePolicy=closed, DeviceAllow=block-* r): while
# another program holds the disk's node locked shared, as udevd does while it runs the disk's
# rules, the daemon's scheduler switch waits; it is made once the lock is let go. A node the
# unit could not open would make the switch go ahead at once. Nothing is timed: the holder keeps
# the lock until the daemon is seen waiting (the node open in its process), then lets it go.
check_udev_lock() {
	local dev out
	dev=$(disk_of iossata)
	[ -n "$dev" ] || { bad "no SATA test disk"; return; }
	out=$(guest 'd='"$dev"'
		echo none >/sys/block/$d/queue/scheduler
		rm -f /run/iosched-lock-test; mkfifo /run/iosched-lock-test
		flock -s /dev/$d sh -c "read -r _ </run/iosched-lock-test" &
		holder=$!
		until ! flock -n -x /dev/$d true; do sleep 0.1; done
		busctl call org.iosched1 /org/iosched1 org.iosched1.Manager Apply s $d >/run/iosched-lock-test.out 2>&1 &
		call=$!
		pid=$(systemctl show -P MainPID ioschedd)
		for i in $(seq 600); do
			ls -l /proc/$pid/fd 2>/dev/null | grep -q " -> /dev/$d\$" && { echo "the daemon waits for the lock"; break; }
			sleep 0.1
		done
		echo "while held: $(sed "s/.*\[\(.*\)\].*/\1/" /sys/block/$d/queue/scheduler)"
		kill -0 $call 2>/dev/null && echo "Apply still waiting"
		echo >/run/iosched-lock-test
		wait $holder
		wait $call && echo "Apply returned"
		rm -f /run/iosched-lock-test /run/iosched-lock-test.out
		echo "scheduler $(sed "s/.*\[\(.*\)\].*/\1/" /sys/block/$d/queue/scheduler)"') ||
		bad "the lock check failed to run"
	echo "$out" | sed 's/^/  /'
	expect_lines "$out" \
		'the daemon waits for the lock' "the daemon never opened /dev/$dev to wait for its lock" \
		'while held: none' "the scheduler was switched while the lock was held" \
		'Apply still waiting' "Apply returned while the lock was held" \
		'Apply returned' "Apply failed after the lock was let go" \
		'scheduler mq-deadline' "not switched back to mq-deadline after the lock"
}

# D-Bus activation: with the daemon stopped, a call on org.iosched1 starts it.
check_dbus_activation() {
	local out
	out=$(guest 'systemctl stop ioschedd
		echo "stopped: $(systemctl show -P ActiveState ioschedd)"
		busctl call org.iosched1 /org/iosched1 org.iosched1.Manager ListDisks | cut -c1-60
		echo "after the call: $(systemctl show -P ActiveState ioschedd)"') || bad "the call failed"
	echo "$out" | sed 's/^/  /'
	grep -qx 'stopped: inactive' <<<"$out" || bad "the daemon did not stop"
	grep -q '^a(so) [1-9]' <<<"$out" || bad "ListDisks returned no disks"
	grep -qx 'after the call: active' <<<"$out" || bad "the call did not start the daemon"
}

# polkit with the login user: reads work, changes are refused with the interactive
# authorization error; a rule granting a group lets a member change; root always can.
check_polkit() {
	local dev out m
	dev=$(disk_of iosvd2q)
	out=$(as_user 'loginctl show-session "$XDG_SESSION_ID" -p Class -p Type -p Active 2>&1 | tr "\n" " "; echo') || true
	echo "  session of $image_user: $out"
	out=$(as_user "ioschedctl status") || bad "ioschedctl status as $image_user: $out"
	grep -q "^$dev " <<<"$out" || bad "ioschedctl status as $image_user does not list $dev"
	for m in "SetPolicy sa{sv}b $dev 1 scheduler s mq-deadline true" "Reload" "Apply s $dev" "ApplyAll"; do
		out=$(as_user "busctl --allow-interactive-authorization=no call org.iosched1 /org/iosched1 org.iosched1.Manager $m 2>&1") &&
			bad "$image_user: $m succeeded"
		echo "  $image_user: ${m%% *}: $out"
		case "$out" in
		*"Interactive authentication required"*) ;;
		*) bad "$image_user: ${m%% *} not refused with the interactive-authorization error" ;;
		esac
	done
	out=$(as_user "ioschedctl --no-ask-password set $dev scheduler=mq-deadline --runtime 2>&1") &&
		bad "$image_user: ioschedctl set succeeded without a rule"
	echo "  $image_user: ioschedctl set (no rule): $out"
	guest "grep -q '\[mq-deadline\]' /sys/block/$dev/queue/scheduler" && bad "a refused set changed $dev"
	# A polkit rule for a group (polkitd reloads rules.d by itself).
	guest "groupadd -f iosched-test && usermod -aG iosched-test $image_user &&
		cat >/etc/polkit-1/rules.d/50-iosched-test.rules <<'EOF'
polkit.addRule(function(action, subject) {
	if (action.id.indexOf('org.iosched1.') == 0 && subject.isInGroup('iosched-test'))
		return polkit.Result.YES;
});
EOF
		sleep 3" >/dev/null || bad "cannot install the polkit rule"
	out=$(as_user "ioschedctl --no-ask-password set $dev scheduler=mq-deadline --runtime 2>&1") ||
		bad "$image_user in iosched-test: ioschedctl set refused: $out"
	guest "grep -q '\[mq-deadline\]' /sys/block/$dev/queue/scheduler" || bad "the granted set did not change $dev"
	guest "rm /etc/polkit-1/rules.d/50-iosched-test.rules; gpasswd -d $image_user iosched-test >/dev/null; groupdel iosched-test; sleep 3" >/dev/null
	# Root, no rule.
	out=$(guest "ioschedctl set $dev scheduler=none --runtime 2>&1 && ioschedctl reset $dev --runtime 2>&1") ||
		bad "root: ioschedctl set/reset failed: $out"
	guest "grep -q '\[none\]' /sys/block/$dev/queue/scheduler" || bad "root's set did not change $dev back"
}

# ioschedctl set (persistent) survives a reboot; --runtime does not.
check_set_survives_reboot() {
	local vd sata out
	vd=$(disk_of iosvd2q)
	sata=$(disk_of iossata)
	out=$(guest "ioschedctl set $vd scheduler=mq-deadline && ioschedctl set $sata scheduler=none --runtime &&
		cat /sys/block/$vd/queue/scheduler /sys/block/$sata/queue/scheduler") || bad "ioschedctl set failed: $out"
	echo "$out" | sed 's/^/  before reboot: /'
	guest_reboot || { bad "no reboot"; return; }
	disks_probe
	vd=$(disk_of iosvd2q)
	sata=$(disk_of iossata)
	out=$(guest "cat /sys/block/$vd/queue/scheduler /sys/block/$sata/queue/scheduler")
	echo "$out" | sed 's/^/  after reboot: /'
	guest "grep -q '\[mq-deadline\]' /sys/block/$vd/queue/scheduler" || bad "the persistent set did not survive the reboot"
	guest "grep -q '\[mq-deadline\]' /sys/block/$sata/queue/scheduler" || bad "the --runtime set survived the reboot"
	# Back to the shipped policy (no rule for the 2-queue virtio disk: back to the kernel's none).
	guest "ioschedctl reset $vd && echo none >/sys/block/$vd/queue/scheduler" >/dev/null || bad "reset failed"
}

# The boot cost with and without iosched (boot 1 without, boot 2 with: the same image).
check_boot_cost() {
	echo "  without iosched: ${boot_cost_without//$'\n'/; }"
	echo "  with iosched:    ${boot_cost_with//$'\n'/; }"
	[[ "$boot_cost_without" == *"Startup finished"* ]] || bad "no systemd-analyze figure without iosched"
	[[ "$boot_cost_with" == *"Startup finished"* ]] || bad "no systemd-analyze figure with iosched"
	[[ "$boot_cost_with" == *"last iosched change"* ]] || bad "iosched changed nothing at boot"
}

# ---------------------------------------------------------------- storage stacks (issue 22)
# The guest's stacks (guest.sh): a multipath map multipath-tools makes of one SCSI disk seen
# through two virtio-scsi controllers (WWN $guest_mpath_wwn, its WWID known from the image
# on); an NVMe subsystem with two controllers and one shared namespace (native multipath: a
# head and two paths); an md raid1 of two SCSI disks and an LVM linear volume on a third, both
# made at boot 1 (stacks_setup) and assembled by udev at every boot after.

# stacks_setup: the md array and the LVM volume, on the disks of serials iosmd0, iosmd1 and
# ioslvm (boot 1, before iosched is installed). --assume-clean: no resync of the empty disks.
stacks_setup() {
	guest 'set -e
		by_serial() { lsblk -dno NAME,SERIAL | awk -v s="$1" "\$2 == s { print \"/dev/\" \$1 }"; }
		mdadm --create /dev/md/iosmd --run --quiet --level=1 --raid-devices=2 --metadata=1.2 \
			--assume-clean "$(by_serial iosmd0)" "$(by_serial iosmd1)"
		pvcreate -q "$(by_serial ioslvm)"
		vgcreate -q iosvg "$(by_serial ioslvm)"
		lvcreate -q -L 64M -n ioslv iosvg
		udevadm settle'
}

# stacks_probe: one line per device of the guest's stacks: WHAT NAME, WHAT being mpath-map,
# mpath-path, nvme-head, nvme-path, md, md-member, lv, lv-pv (names change from boot to boot).
stacks_probe() {
	guest 'udevadm settle
		for i in $(seq 60); do
			[ -e /dev/md/iosmd ] && [ -e /dev/iosvg/ioslv ] && [ -e /dev/mapper/3'"${guest_mpath_wwn#0x}"' ] &&
				[ "$(ls /sys/block/$(basename $(readlink -f /dev/mapper/3'"${guest_mpath_wwn#0x}"'))/slaves | wc -l)" = 2 ] && break
			sleep 1
		done
		name() { basename "$(readlink -f "$1")"; }
		m=$(name /dev/mapper/3'"${guest_mpath_wwn#0x}"')
		echo "mpath-map $m"
		for p in /sys/block/$m/slaves/*; do echo "mpath-path ${p##*/}"; done
		for h in /sys/block/nvme*n*; do
			case "$(readlink -f $h)" in */nvme-subsystem/*) ;; *) continue ;; esac
			# The subsystem'"'"'s serial is padded with blanks to 20 characters.
			[ "$(tr -d " " </sys/class/nvme-subsystem/$(basename $(dirname $(readlink -f $h)))/serial)" = iosnvmp ] || continue
			echo "nvme-head ${h##*/}"
			n=${h##*/}; for p in /sys/block/${n%n*}c*n${n##*n}; do echo "nvme-path ${p##*/}"; done
		done
		md=$(name /dev/md/iosmd); echo "md $md"
		for p in /sys/block/$md/slaves/*; do echo "md-member ${p##*/}"; done
		lv=$(name /dev/iosvg/ioslv); echo "lv $lv"
		for p in /sys/block/$lv/slaves/*; do echo "lv-pv ${p##*/}"; done' >"$tmp/stacks.txt"
}

stack_of() {
	awk -v w="$1" '$1 == w { print $2 }' "$tmp/stacks.txt"
}

# The stacks are there, as the kernel and udev show them: what each device is in sysfs (dm
# uuid, md/, holders/, slaves/, hidden, a queue with an elevator or a bio-based one) and what
# udev says of it (DM_MULTIPATH_DEVICE_PATH, DM_UUID, MPATH_DEVICE_READY). Facts, as
# docs/system-tests.md records them; the policy checks below rely on them.
check_stacks_present() {
	local out
	stacks_probe || { bad "cannot list the stacks: $(cat "$tmp/stacks.txt")"; return; }
	out=$(guest "list='$(cat "$tmp/stacks.txt")'"'
		while read -r what d; do
			s=/sys/class/block/$d
			printf "%-10s %-10s uuid=%s md=%s hidden=%s dev=%s sched=[%s] mq=%s holders=%s slaves=%s udev:%s\n" "$what" "$d" \
				"$(cat $s/dm/uuid 2>/dev/null)" "$([ -d $s/md ] && echo yes || echo no)" "$(cat $s/hidden 2>/dev/null)" \
				"$(cat $s/dev 2>/dev/null || echo none)" "$(cat $s/queue/scheduler 2>/dev/null)" "$(ls $s/mq 2>/dev/null | wc -l)" \
				"$(ls $s/holders | tr "\n" ,)" "$(ls $s/slaves | tr "\n" ,)" \
				"$(udevadm info -q property -p $s 2>/dev/null | grep -E "^(DM_MULTIPATH_DEVICE_PATH|MPATH_DEVICE_READY|ID_BLOCK_SUBSYSTEM)=" | tr "\n" " ")"
		done <<<"$list"')
	echo "$out" | sed 's/^/  /'
	[ "$(grep -c '^mpath-path ' "$tmp/stacks.txt")" = 2 ] || bad "the multipath map has not two paths"
	grep -q '^mpath-map .*uuid=mpath-3' <<<"$out" || bad "no multipath map of the test disk"
	[ "$(grep -c '^nvme-path ' "$tmp/stacks.txt")" = 2 ] || bad "the NVMe head has not two paths"
	grep -q '^nvme-head .*mq=0' <<<"$out" || bad "the NVMe head has a request queue"
	grep -q '^nvme-path .*hidden=1 dev=none' <<<"$out" || bad "the NVMe paths are not hidden"
	grep -q '^md .*md=yes' <<<"$out" || bad "no md array"
	[ "$(grep -c '^md-member ' "$tmp/stacks.txt")" = 2 ] || bad "the md array has not two members"
	grep -q '^lv .*uuid=LVM-' <<<"$out" || bad "no LVM volume"
}

# A path's elevator schedules nothing of what its multipath map sends it, on this kernel: the
# map's elevator schedules it, and the kernel issues it to a path without passing the path's
# own (blk_insert_cloned_request()). The block layer's tracepoints count, per device, the
# requests inserted into an elevator (block_rq_insert) and issued to the driver
# (block_rq_issue): with mq-deadline on the map and on both paths, 4 MiB of direct reads
# through the map: the map inserts and issues, the paths issue and insert nothing.
check_mpath_evidence() {
	local map out
	map=$(stack_of mpath-map)
	out=$(guest "set -e
		t=/sys/kernel/tracing
		[ -e \$t/trace ] || mount -t tracefs tracefs \$t
		paths='$(stack_of mpath-path | tr '\n' ' ')'
		keep=''
		for d in $map \$paths; do
			keep=\"\$keep \$d=\$(sed 's/.*\\[\\(.*\\)\\].*/\\1/' /sys/block/\$d/queue/scheduler)\"
			echo mq-deadline >/sys/block/\$d/queue/scheduler
		done
		echo 1 >\$t/events/block/block_rq_insert/enable
		echo 1 >\$t/events/block/block_rq_issue/enable
		echo >\$t/trace
		echo 1 >\$t/tracing_on
		dd if=/dev/$map of=/dev/null bs=64k count=64 iflag=direct status=none
		echo 0 >\$t/tracing_on
		echo 0 >\$t/events/block/block_rq_insert/enable
		echo 0 >\$t/events/block/block_rq_issue/enable
		for d in $map \$paths; do
			n=\$(cat /sys/block/\$d/dev | tr : ,)
			echo \"\$d: inserted \$(grep -c \"block_rq_insert: \$n \" \$t/trace) issued \$(grep -c \"block_rq_issue: \$n \" \$t/trace)\"
		done
		echo >\$t/trace
		for kv in \$keep; do echo \${kv#*=} >/sys/block/\${kv%%=*}/queue/scheduler; done") ||
		{ bad "tracing failed: $out"; return; }
	echo "$out" | sed 's/^/  /'
	grep -qE "^$map: inserted [1-9][0-9]* issued [1-9]" <<<"$out" || bad "the map's elevator did not see the reads"
	for p in $(stack_of mpath-path); do
		grep -qE "^$p: inserted 0 issued" <<<"$out" || bad "$p's elevator saw requests sent through the map"
	done
	[ "$(grep -cE 'issued [1-9]' <<<"$out")" -ge 2 ] || bad "no path issued the map's requests"
}

# Each device of the stacks as iosched sees it (iosched-apply --dry-run --json, shipped policy):
# its role; the map at its policy (multipath-map-rotational: mq-deadline, nothing to write), the
# paths left alone (no rule), the NVMe head's scheduler not applicable (its paths, hidden:
# check_stacks_nvme_paths); ioschedctl status shows
# the role. Then a policy setting blk-mq's keys on the md array, the LVM volume and the NVMe head,
# applied for real: every key "not applicable", nothing changed, nothing failed (exit 0).
check_stacks_policy() {
	local json out map devs
	[ -s "$tmp/stacks.txt" ] || stacks_probe || { bad "cannot list the stacks"; return; }
	map=$(stack_of mpath-map)
	# The NVMe paths are hidden (no dev, no device node): check_stacks_nvme_paths.
	devs=$(awk '$1 != "nvme-path" { print $2 }' "$tmp/stacks.txt" | tr '\n' ' ')
	json=$(guest "/usr/libexec/iosched-apply --dry-run --json $devs") || bad "iosched-apply --dry-run failed: $json"
	out=$(python3 - "$tmp/stacks.txt" "$json" <<'PY'
import json, sys
what = dict(l.split()[::-1] for l in open(sys.argv[1]) if l.strip() and not l.startswith("nvme-path "))
objs = [json.loads(l) for l in sys.argv[2].splitlines() if l.startswith("{")]
want_role = {"mpath-map": "multipath-map", "mpath-path": "multipath-path", "nvme-head": "nvme-head",
             "nvme-path": "nvme-path", "md": "md", "md-member": "md-member", "lv": "dm", "lv-pv": "disk"}
for o in objs:
    w = what.get(o["disk"], "?")
    acts = {a["key"]: a for a in o["actions"]}
    print("%-10s %-10s role=%s dm=%s above=%s %s" % (w, o["disk"], o.get("role"), o.get("dm"), o.get("above"),
          " ".join("%s:%s(%s)" % (k, a["outcome"], a["reason"]) for k, a in acts.items()) or "no rule"))
    bad = []
    if o.get("role") != want_role.get(w):
        bad.append("role %s, want %s" % (o.get("role"), want_role.get(w)))
    if any(a["outcome"] in ("would-write", "failed") for a in acts.values()):
        bad.append("not at its policy")
    if w == "mpath-map" and (o.get("dm") != "mpath" or acts.get("scheduler", {}).get("outcome") != "skipped"
                             or acts["scheduler"]["rule"] != "multipath-map-rotational"):
        bad.append("the map is not at multipath-map-rotational's mq-deadline")
    if w == "mpath-path" and acts:
        bad.append("a rule sets keys of a path")
    if w == "nvme-head" and "not applicable: bio-based" not in acts.get("scheduler", {}).get("reason", ""):
        bad.append("the head's scheduler is not 'not applicable'")
    if w == "lv" and o.get("dm") != "LVM":
        bad.append("dm kind %s, want LVM" % o.get("dm"))
    for b in bad:
        print("BAD %s %s: %s" % (w, o["disk"], b))
if len(objs) != len(what):
    print("BAD %d reports for %d devices" % (len(objs), len(what)))
PY
	)
	echo "$out" | grep -v '^BAD' | sed 's/^/  /'
	while read -r _ line; do bad "$line"; done < <(grep '^BAD' <<<"$out")
	out=$(guest "ioschedctl status | awk '\$1 == \"$map\" { print \$3 }'")
	[ "$out" = multipath-map ] || bad "ioschedctl status: the map's role is '$out'"

	out=$(guest "printf '[rule system-test-bio]\nmatch.role = dm|md|nvme-head\nscheduler = mq-deadline\nnr_requests = 64\nwbt_lat_usec = off\n' >/tmp/system-test-bio.conf
		/usr/libexec/iosched-apply --config /tmp/system-test-bio.conf --json $(stack_of md) $(stack_of lv) $(stack_of nvme-head); echo \"exit \$?\"
		rm -f /tmp/system-test-bio.conf")
	python3 -c '
import json, sys
objs = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")]
acts = [(o["disk"], a) for o in objs for a in o["actions"]]
for d, a in acts:
    print("  %s %s: %s (%s)" % (d, a["key"], a["outcome"], a["reason"]))
assert len(objs) == 3 and len(acts) == 9, "%d reports, %d actions" % (len(objs), len(acts))
assert all(a["outcome"] == "unsupported" and "not applicable: bio-based" in a["reason"] for d, a in acts), "an action is not \"not applicable\""
' "$out" || bad "blk-mq keys on bio-based devices: $out"
	grep -qx "exit 0" <<<"$out" || bad "iosched-apply on the bio-based devices: $(tail -n1 <<<"$out")"
}

# The NVMe head's paths (hidden: a queue, no device number, no node): iosched-apply reads them
# by name, gives them role nvme-path, and writes them; a rule of match.role = nvme-path puts
# mq-deadline on both (written once: the second run finds it), the kernel's scheduler file
# says so, their io.cost.* keys are "not applicable" (no MAJ:MIN to key a line by), and
# ioschedd lists them with their role. The paths' own schedulers are put back.
check_stacks_nvme_paths() {
	local paths out conf=/tmp/system-test-nvme-path.conf
	[ -s "$tmp/stacks.txt" ] || stacks_probe || { bad "cannot list the stacks"; return; }
	paths=$(stack_of nvme-path | tr '\n' ' ')
	[ -n "$paths" ] || { bad "no NVMe path"; return; }
	out=$(guest "keep=''
		for p in $paths; do keep=\"\$keep \$p=\$(sed 's/.*\\[\\(.*\\)\\].*/\\1/' /sys/block/\$p/queue/scheduler)\"; done
		echo \"before\$keep\"
		printf '[rule system-test-nvme-path]\nmatch.role = nvme-path\nscheduler = mq-deadline\niocost.enable = yes\n' >$conf
		for run in 1 2; do
			/usr/libexec/iosched-apply --config $conf --json $paths | sed \"s/^/run\$run /\"
			echo \"run\$run exit \${PIPESTATUS[0]}\"
		done
		for p in $paths; do echo \"kernel \$p \$(cat /sys/block/\$p/queue/scheduler)\"; done
		ioschedctl status | awk '\$1 ~ /^nvme[0-9]+c[0-9]+n[0-9]+\$/ { print \"ioschedctl\", \$1, \$3 }'
		ioschedctl status | grep '^nvme' | sed 's/^/status: /'
		journalctl -b -u ioschedd.service | grep -E 'nvme[0-9]+c[0-9]+n' | tail -n 6 | sed 's/^/journal: /'
		for kv in \$keep; do echo \${kv#*=} >/sys/block/\${kv%%=*}/queue/scheduler; done
		rm -f $conf") || { bad "iosched-apply on the NVMe paths: $out"; return; }
	python3 - "$paths" "$out" <<'PY' || bad "the NVMe paths: see above"
import json, sys
paths = sys.argv[1].split()
lines = sys.argv[2].splitlines()
ok = True
def bad(msg):
    global ok
    print("BAD " + msg)
    ok = False
for run in ("run1", "run2"):
    objs = [json.loads(l[len(run) + 1:]) for l in lines if l.startswith(run + " {")]
    if sorted(o["disk"] for o in objs) != sorted(paths):
        bad("%s reported %s, not the paths %s" % (run, [o["disk"] for o in objs], paths))
    if run + " exit 0" not in lines:
        bad("%s: iosched-apply did not exit 0" % run)
    for o in objs:
        acts = {a["key"]: a for a in o["actions"]}
        print("  %s %s role=%s %s" % (run, o["disk"], o.get("role"),
              " ".join("%s:%s(%s)" % (k, a["outcome"], a["reason"]) for k, a in acts.items())))
        if o.get("role") != "nvme-path":
            bad("%s: role %s, want nvme-path" % (o["disk"], o.get("role")))
        want = "written" if run == "run1" else "skipped"
        if acts.get("scheduler", {}).get("outcome") not in ((want, "skipped") if run == "run1" else (want,)):
            bad("%s %s: scheduler %s, want %s" % (run, o["disk"], acts.get("scheduler", {}).get("outcome"), want))
        io = [a for k, a in acts.items() if k.startswith("iocost")]
        if not io or any("not applicable" not in (a["reason"] or "") for a in io):
            bad("%s %s: the iocost keys are not 'not applicable'" % (run, o["disk"]))
before = dict(kv.split("=") for l in lines if l.startswith("before ") for kv in l.split()[1:])
written = sum(1 for l in lines if l.startswith("run1 {") for a in json.loads(l[5:])["actions"]
              if a["key"] == "scheduler" and a["outcome"] == "written")
due = sum(1 for p in paths if before.get(p) != "mq-deadline")
print("  before: %s; run1: %d scheduler writes, %d due" % (before, written, due))
if written != due:
    bad("run1 wrote %d schedulers, %d were due" % (written, due))
for p in paths:
    if not any(l.startswith("kernel %s " % p) and "[mq-deadline]" in l for l in lines):
        bad("%s: the kernel's scheduler is not mq-deadline after the runs" % p)
    if "ioschedctl %s nvme-path" % p not in lines:
        bad("ioschedctl status does not list %s as nvme-path" % p)
for l in lines:
    if l.startswith(("kernel ", "ioschedctl ", "status: ", "journal: ")):
        print("  " + l)
sys.exit(0 if ok else 1)
PY
}

# Events of a multipath map: multipathd fails a path and reinstates it (change events of the map
# that 11-dm-mpath.rules marks DM_ACTION=PATH_*, MPATH_UNCHANGED=1): ioschedd opens no file of
# the map meanwhile (strace of the daemon, -y: every fd's path), where a control (ioschedctl
# apply of the map) does. Then a path unplugged and plugged again (device_del, device_add on
# QEMU's monitor), with a drop-in giving paths "none": the new path gets it at its add event
# (multipath-tools' mark, before the map holds it), the map keeps mq-deadline.
check_stacks_events() {
	local map p out before gone stayed since
	stacks_probe || { bad "cannot list the stacks"; return; }
	map=$(stack_of mpath-map)
	p=$(stack_of mpath-path | head -n1)
	out=$(guest -t 300 "pid=\$(systemctl show -P MainPID ioschedd.service)
		[ \"\$pid\" -gt 0 ] || { echo 'ioschedd is not running'; exit 1; }
		trace() { strace -f -qq -y -e trace=openat,write -e signal=none -o /tmp/stk.strace -p \$pid & st=\$!; sleep 1; }
		count() { kill \$st; wait \$st 2>/dev/null; grep -cE '${map}[/>\"]' /tmp/stk.strace || true; }
		udevadm settle
		udevadm monitor --udev --property --subsystem-match=block >/tmp/stk.mon & mon=\$!
		trace
		multipathd fail path $p >/dev/null; sleep 1; udevadm settle
		multipathd reinstate path $p >/dev/null; sleep 1; udevadm settle; sleep 2
		echo \"opens of $map during the events: \$(count)\"
		kill \$mon
		awk -v m='/$map (block)' '/^UDEV/ { ev = (\$3 == \"change\" && index(\$0, m) > 0) } ev && /^(DM_ACTION|MPATH_UNCHANGED|MPATH_DEVICE_READY|DM_UDEV_DISABLE_OTHER_RULES_FLAG|DM_SUSPENDED)=/ { print \"  mark \" \$0 }
			/^UDEV/ && \$3 == \"change\" && index(\$0, m) > 0 { n++ } END { print \"change events of $map: \" n + 0 }' /tmp/stk.mon
		trace
		ioschedctl apply $map >/dev/null
		echo \"opens of $map by ioschedctl apply (control): \$(count)\"
		rm -f /tmp/stk.strace /tmp/stk.mon") || bad "tracing the daemon failed"
	echo "$out" | sed 's/^/  /'
	[ "$(sed -n 's/^opens of .* during the events: //p' <<<"$out")" = 0 ] || bad "ioschedd opened files of the map for events that change nothing"
	[ "$(sed -n 's/^change events of .*: //p' <<<"$out")" -ge 2 ] 2>/dev/null || bad "multipathd made no change events of the map"
	grep -q "mark MPATH_UNCHANGED=1" <<<"$out" || bad "no change event of the map was marked MPATH_UNCHANGED=1"
	[ "$(sed -n 's/^opens of .* (control): //p' <<<"$out")" -gt 0 ] 2>/dev/null || bad "the control saw no open of the map: the count means nothing"

	# A path unplugged and plugged again.
	before=$(guest "ls /sys/block/$map/slaves | sort | tr '\n' ' '")
	guest "mkdir -p /etc/iosched.d && printf '[rule system-test-paths]\nmatch.role = multipath-path\nscheduler = none\n' >/etc/iosched.d/50-system-test-paths.conf && ioschedctl reload" >/dev/null ||
		bad "cannot add the paths' drop-in"
	out=$(qmp '{"execute": "human-monitor-command", "arguments": {"command-line": "device_del mpath1"}}')
	[ "$out" = '{"return": ""}' ] || bad "device_del: $out"
	gone=$(guest "for i in \$(seq 60); do
			[ \$(ls /sys/block/$map/slaves | wc -l) = 1 ] && break; sleep 1
		done
		for s in $before; do [ -e /sys/block/$map/slaves/\$s ] || echo \$s; done")
	[ -n "$gone" ] || { bad "no path left the map after device_del"; return; }
	stayed=$(tr ' ' '\n' <<<"$before" | grep -vx "$gone" | grep . | head -n1)
	since=$(guest 'date +%s')
	for _ in 1 2 3 4 5; do
		out=$(qmp '{"execute": "human-monitor-command", "arguments": {"command-line": "device_add '"$(guest_mpath_path 1)"'"}}')
		[ "$out" = '{"return": ""}' ] && break
		sleep 2
	done
	[ "$out" = '{"return": ""}' ] || bad "device_add: $out"
	out=$(guest -t 180 "for i in \$(seq 120); do
			[ \$(ls /sys/block/$map/slaves | wc -l) = 2 ] && break; sleep 1
		done
		udevadm settle
		for s in \$(ls /sys/block/$map/slaves); do
			[ \$s != $stayed ] || continue
			sleep 2
			echo \"new path \$s: \$(cat /sys/block/\$s/queue/scheduler); \$(ioschedctl status | awk -v s=\$s '\$1 == s { print \$3 }')\"
			journalctl -o cat --since @$since SYSLOG_IDENTIFIER=ioschedd | grep \"^\$s: scheduler\" | tail -n1
		done
		echo \"map $map: \$(cat /sys/block/$map/queue/scheduler)\"
		rm -f /etc/iosched.d/50-system-test-paths.conf; ioschedctl reload >/dev/null")
	echo "  removed $gone" && echo "$out" | sed 's/^/  /'
	grep -qE '^new path [a-z]+: .*\[none\].*; multipath-path$' <<<"$out" || bad "the path plugged again did not get the paths' policy"
	grep -qE "^[a-z]+: scheduler [a-z-]+ -> none \(rule system-test-paths, " <<<"$out" ||
		bad "no journal line of the new path's change"
	grep -qE "^map $map: .*\[mq-deadline\]" <<<"$out" || bad "the map lost its policy"
	stacks_probe || bad "cannot list the stacks again"
}

# ---------------------------------------------------------------- iocost (issue 11)
# On the NVMe disk (cgroup v2 with io in the guest): a drop-in with user qos and a user model.
# The values as the kernel prints them (two-decimal percentages, model=linear) follow.
iocost_dropin=/etc/iosched.d/50-system-test-iocost.conf
iocost_keys="enable=yes ctrl=user rpct=95 rlat=5000 wpct=95.5 wlat=10000 min=50 max=150
model.ctrl=user model.rbps=2706339840 model.rseqiops=89698 model.rrandiops=110036
model.wbps=1063126016 model.wseqiops=135560 model.wrandiops=130734"
iocost_qos_want="enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00"
iocost_model_want="ctrl=user model=linear rbps=2706339840 rseqiops=89698 rrandiops=110036 wbps=1063126016 wseqiops=135560 wrandiops=130734"

# iocost_lines DISK: the disk's lines of io.cost.qos and io.cost.model without "MAJ:MIN ",
# as "qos: ..." and "model: ...".
iocost_lines() {
	guest "dn=\$(cat /sys/block/$1/dev)
		echo \"qos: \$(sed -n \"s/^\$dn //p\" /sys/fs/cgroup/io.cost.qos)\"
		echo \"model: \$(sed -n \"s/^\$dn //p\" /sys/fs/cgroup/io.cost.model)\""
}

# iocost_ftrace DISK SCRIPT: SCRIPT run in the guest with the function tracer on the kernel's
# io.cost.qos and io.cost.model write handlers (every writer goes through them); prints SCRIPT's
# output, then "qos-writes: N" and "model-writes: N" for what SCRIPT did, then the same for a
# control write of the same value to each file (must be 1 and 1, or the count means nothing).
iocost_ftrace() {
	# 15 minutes: 100 change events under TCG, each running every block rule of the image
	# (multipath-tools' runs "multipath -u" on every change of an sd or nvme disk); one run
	# at a host load of 11-16 took over 5 minutes.
	guest -t 900 "set -e
		t=/sys/kernel/tracing
		[ -e \$t/trace ] || mount -t tracefs tracefs \$t
		for f in ioc_qos_write ioc_cost_model_write; do
			grep -qx \$f \$t/available_filter_functions || { echo \"no \$f in available_filter_functions\"; exit 1; }
		done
		echo 'ioc_qos_write ioc_cost_model_write' >\$t/set_ftrace_filter
		echo function >\$t/current_tracer
		echo >\$t/trace
		echo 1 >\$t/tracing_on
		$2
		count() { grep -v '^#' \$t/trace | grep -c \" \$1 *<-\" || true; }
		echo \"qos-writes: \$(count ioc_qos_write)\"
		echo \"model-writes: \$(count ioc_cost_model_write)\"
		awk '!/^#/ && n++ < 10' \$t/trace
		echo >\$t/trace
		dn=\$(cat /sys/block/$1/dev)
		rlat=\$(sed -n \"s/^\$dn .* rlat=\\([0-9]*\\).*/\\1/p\" /sys/fs/cgroup/io.cost.qos)
		rbps=\$(sed -n \"s/^\$dn .* rbps=\\([0-9]*\\).*/\\1/p\" /sys/fs/cgroup/io.cost.model)
		echo \"\$dn rlat=\$rlat\" >/sys/fs/cgroup/io.cost.qos
		echo \"\$dn rbps=\$rbps\" >/sys/fs/cgroup/io.cost.model
		echo \"control-qos: \$(count ioc_qos_write)\"
		echo \"control-model: \$(count ioc_cost_model_write)\"
		echo 0 >\$t/tracing_on
		echo nop >\$t/current_tracer
		echo >\$t/set_ftrace_filter"
}

# iocost_counted OUT WHAT QOS MODEL: the counts of iocost_ftrace's output are QOS and MODEL, and
# the control writes were counted once each.
iocost_counted() {
	local out=$1 what=$2 n
	n=$(sed -n 's/^control-qos: //p' <<<"$out")
	[ "$n" = 1 ] || bad "the control write to io.cost.qos was counted ${n:-no} times, not once: the count means nothing"
	n=$(sed -n 's/^control-model: //p' <<<"$out")
	[ "$n" = 1 ] || bad "the control write to io.cost.model was counted ${n:-no} times, not once: the count means nothing"
	n=$(sed -n 's/^qos-writes: //p' <<<"$out")
	[ "$n" = "$3" ] || bad "$what: ${n:-?} writes to io.cost.qos, want $3"
	n=$(sed -n 's/^model-writes: //p' <<<"$out")
	[ "$n" = "$4" ] || bad "$what: ${n:-?} writes to io.cost.model, want $4"
}

# A drop-in gives the NVMe disk iocost (enable, user qos, user model); after `ioschedctl reload`
# the kernel's lines for its MAJ:MIN are exactly those values, and the journal has one line per
# key whose value changed (every key when the disk had no line, as at boot).
check_iocost_policy() {
	local dev out before journal k key tok old want n
	dev=$(disk_of iosnvme)
	[ -n "$dev" ] || { bad "no NVMe disk"; return; }
	guest '[ -e /sys/fs/cgroup/io.cost.qos ] && grep -qw io /sys/fs/cgroup/cgroup.controllers' ||
		{ bad "no cgroup v2 io controller in the guest"; return; }
	before=$(iocost_lines "$dev") || { bad "cannot read io.cost.*: $before"; return; }
	echo "$before" | sed "s/^/  $dev before: /"
	{
		echo "[rule system-test-iocost]"
		echo "match.serial = iosnvme"
		for k in $iocost_keys; do echo "iocost.${k%%=*} = ${k#*=}"; done
	} >"$tmp/iocost.conf"
	guest_put "$tmp/iocost.conf" "$iocost_dropin" || { bad "cannot install the drop-in"; return; }
	out=$(guest 'c=$(journalctl -n0 --show-cursor | sed -n "s/^-- cursor: //p")
		ioschedctl reload || exit
		journalctl --after-cursor="$c" -o cat SYSLOG_IDENTIFIER=ioschedd SYSLOG_IDENTIFIER=iosched-apply') ||
		{ bad "ioschedctl reload failed: $out"; return; }
	journal=$(grep "^$dev: iocost\." <<<"$out" || true)
	echo "$journal" | sed 's/^/  journal: /'
	out=$(iocost_lines "$dev")
	echo "$out" | sed "s/^/  $dev after:  /"
	grep -qxF "qos: $iocost_qos_want" <<<"$out" || bad "io.cost.qos: not '$iocost_qos_want'"
	grep -qxF "model: $iocost_model_want" <<<"$out" || bad "io.cost.model: not '$iocost_model_want'"
	# One journal line per changed key: compare each key's token before and after.
	for k in $iocost_keys; do
		key=iocost.${k%%=*}
		tok=${k%%=*}
		tok=${tok#model.}
		if [[ $key == iocost.model.* ]]; then
			old=$(sed -n 's/^model: //p' <<<"$before")
			want=$iocost_model_want
		else
			old=$(sed -n 's/^qos: //p' <<<"$before")
			want=$iocost_qos_want
		fi
		old=$(tr ' ' '\n' <<<"$old" | sed -n "s/^$tok=//p")
		want=$(tr ' ' '\n' <<<"$want" | sed -n "s/^$tok=//p")
		n=$(grep -c "^$dev: $key .* -> .* (rule system-test-iocost, $iocost_dropin:[0-9]*)$" <<<"$journal" || true)
		if [ "$old" = "$want" ]; then
			[ "$n" = 0 ] || bad "$key: $n journal lines, but the kernel had $want already"
		else
			[ "$n" = 1 ] || bad "$key: $n journal lines for ${old:-no value} -> $want, want 1"
		fi
	done
}

# Nothing changes, nothing is written: a second apply, a change trigger of every block device
# and a close-after-write on the NVMe disk (60-block.rules' watch) make 0 writes to io.cost.qos
# and io.cost.model, counted by the kernel (function tracer on ioc_qos_write and
# ioc_cost_model_write, whoever writes).
check_iocost_no_writes() {
	local dev out
	dev=$(disk_of iosnvme)
	out=$(iocost_ftrace "$dev" "ioschedctl apply $dev
		/usr/libexec/iosched-apply $dev
		udevadm trigger --action=change --subsystem-match=block
		udevadm settle
		dd if=/dev/zero of=/dev/$dev bs=4k count=1 oflag=direct status=none
		udevadm settle
		sleep 5
		busctl get-property org.iosched1 /org/iosched1 org.iosched1.Manager DisksPending") ||
		{ bad "tracing failed: $out"; return; }
	echo "$out" | sed 's/^/  /'
	iocost_counted "$out" "second apply, trigger and close-after-write" 0 0
}

# One key changed behind iosched's back (iocost.rlat): the helper writes one line to io.cost.qos
# holding only that key (strace of its writes), nothing to io.cost.model, and logs one line.
check_iocost_one_key() {
	local dev out writes
	dev=$(disk_of iosnvme)
	out=$(guest "dn=\$(cat /sys/block/$dev/dev)
		echo \"\$dn rlat=7000\" >/sys/fs/cgroup/io.cost.qos
		strace -f -qq -y -s 256 -e trace=write -e signal=none -o /tmp/iocost.strace /usr/libexec/iosched-apply $dev 2>&1 | sed 's/^<[0-7]>//'
		echo \"status: \${PIPESTATUS[0]}\"
		grep 'io\\.cost\\.' /tmp/iocost.strace | sed 's/^/write: /'
		rm -f /tmp/iocost.strace
		echo \"devnum: \$dn\"") || { bad "strace of iosched-apply failed: $out"; return; }
	echo "$out" | sed 's/^/  /'
	grep -qx 'status: 0' <<<"$out" || bad "iosched-apply failed"
	writes=$(grep '^write: ' <<<"$out" || true)
	[ "$(grep -c . <<<"$writes")" = 1 ] || bad "$(grep -c . <<<"$writes") writes to io.cost.*, want 1"
	grep -qE "io\.cost\.qos>, \"$(sed -n 's/^devnum: //p' <<<"$out") rlat=5000(\\\\n)?\"" <<<"$writes" ||
		bad "the write is not '$(sed -n 's/^devnum: //p' <<<"$out") rlat=5000' to io.cost.qos"
	[ "$(grep -c "^$dev: iocost\..* -> " <<<"$out")" = 1 ] || bad "not one log line for the change"
	grep -q "^$dev: iocost\.rlat 7000 -> 5000 (rule system-test-iocost, $iocost_dropin:" <<<"$out" ||
		bad "no log line 'iocost.rlat 7000 -> 5000' with the rule and file:line"
	out=$(iocost_lines "$dev")
	grep -qxF "qos: $iocost_qos_want" <<<"$out" || bad "io.cost.qos not back to the policy: $out"
}

# iocost_peer_bundle: systemd-iocost as trixie's udev (systemd 257) ships it, for a bookworm
# guest (udev 252 has no /usr/lib/udev/iocost: it came in systemd 253): the unchanged binary,
# 90-iocost.rules and iocost.conf from trixie's udev, and trixie's libsystemd-shared, glibc and
# the libraries they link, run with trixie's own dynamic loader. Prints the tarball's path.
iocost_peer_pkgs="udev libsystemd-shared libc6 libgcc-s1 libacl1 libblkid1 libcap2 libcrypt1 libmount1
libssl3t64 libpam0g libseccomp2 libselinux1 libpcre2-8-0 libaudit1 libcap-ng0 zlib1g libzstd1"
# What the helper links, directly or not (readelf -d, NEEDED, on trixie's 257.13), and
# libgcc_s, which glibc loads at run time.
iocost_peer_libs="libsystemd-shared-257.so libc.so.6 libm.so.6 ld-linux-x86-64.so.2 libgcc_s.so.1 libacl.so.1
libblkid.so.1 libcap.so.2 libcrypt.so.1 libmount.so.1 libcrypto.so.3 libpam.so.0 libseccomp.so.2 libselinux.so.1
libz.so.1 libzstd.so.1 libaudit.so.1 libpcre2-8.so.0 libcap-ng.so.0"
iocost_peer_bundle() {
	local d=$tmp/iocost-peer arch=$cache/apt-trixie/archives p
	# Built once per cache (trixie's udev in it is a fixed point release; delete the file to
	# take a newer one).
	[ -f "$cache/systemd-iocost.tar.gz" ] && { echo "$cache/systemd-iocost.tar.gz"; return; }
	[ -n "$(ls "$cache/apt-trixie/lists/" 2>/dev/null | grep _Packages)" ] ||
		kernel_apt apt-get trixie update -qq >&2 || return
	mkdir -p "$arch" "$d/x" "$d/b/lib"
	# shellcheck disable=SC2086 # a list of package names
	(cd "$arch" && kernel_apt apt-get trixie -qq download $iocost_peer_pkgs) >&2 || return
	for p in $iocost_peer_pkgs; do
		# the newest downloaded version of each (the lists' candidate)
		dpkg-deb -x "$(ls -v "$arch/${p}_"*.deb | tail -n1)" "$d/x" || return
	done
	for p in $iocost_peer_libs; do
		cp -L "$d/x/usr/lib/x86_64-linux-gnu/$p" "$d/b/lib/" 2>/dev/null ||
			cp -L "$d/x/usr/lib/x86_64-linux-gnu/systemd/$p" "$d/b/lib/" || return
	done
	cp "$d/x/usr/lib/udev/iocost" "$d/b/iocost.real" &&
		cp "$d/x/usr/lib/udev/rules.d/90-iocost.rules" "$d/x/etc/udev/iocost.conf" "$d/b/" &&
		dpkg-deb -f "$(ls -v "$arch/udev_"*.deb | tail -n1)" Version >"$d/b/version" &&
		tar -C "$d/b" -czf "$d/bundle.tar.gz" . && mv "$d/bundle.tar.gz" "$cache/systemd-iocost.tar.gz" &&
		rm -rf "$d" && echo "$cache/systemd-iocost.tar.gz"
}

# systemd-iocost side by side: its rule and helper (trixie's, see iocost_peer_bundle) and a test
# hwdb entry for the NVMe disk holding iosched's own values. 100 change events of the disk:
# systemd-iocost writes both files on each (it never reads first), iosched 0 times; counted by
# the kernel per writing process. iosched reports the second writer (OtherWriters).
check_iocost_systemd() {
	local dev bundle out qos model
	dev=$(disk_of iosnvme)
	bundle=$(iocost_peer_bundle) || { skip "no systemd-iocost: trixie's udev could not be fetched"; return; }
	guest_put "$bundle" /tmp/iocost-peer.tar.gz || { bad "cannot copy systemd-iocost to the guest"; return; }
	qos=${iocost_qos_want#enable=1 ctrl=user }
	model=${iocost_model_want#ctrl=user model=linear }
	# The helper is exec'd as /opt/systemd-iocost/bin/iocost, a link to trixie's loader, so the
	# kernel names the writing process "iocost" (comm is the exec'd file's name).
	out=$(guest "set -e
		o=/opt/systemd-iocost
		mkdir -p \$o/bin
		tar -C \$o -xzf /tmp/iocost-peer.tar.gz
		rm /tmp/iocost-peer.tar.gz
		ln -sf \$o/lib/ld-linux-x86-64.so.2 \$o/bin/iocost
		printf '#!/bin/sh\nexec %s --library-path %s %s \"\$@\"\n' \$o/bin/iocost \$o/lib \$o/iocost.real >/usr/lib/udev/iocost
		chmod 755 /usr/lib/udev/iocost
		cp \$o/90-iocost.rules /usr/lib/udev/rules.d/90-iocost.rules
		cp \$o/iocost.conf /etc/udev/iocost.conf
		echo \"systemd-iocost from udev \$(cat \$o/version): \$(/usr/lib/udev/iocost --version | head -n1)\"
		m=\$(udevadm info -q property -n /dev/$dev | sed -n 's/^ID_MODEL=//p')
		mkdir -p /etc/udev/hwdb.d
		printf 'block::name:%s:fwrev:*\n IOCOST_SOLUTIONS=naive\n IOCOST_MODEL_NAIVE=$model\n IOCOST_QOS_NAIVE=$qos\n' \"\$m\" >/etc/udev/hwdb.d/90-system-test-iocost.hwdb
		systemd-hwdb update
		udevadm control --reload
		udevadm trigger --action=change --settle /dev/$dev
		udevadm info -q property -n /dev/$dev | grep '^IOCOST_'
		/usr/lib/udev/iocost query /dev/$dev
		ioschedctl reload
		for i in \$(seq 60); do
			w=\$(busctl get-property org.iosched1 /org/iosched1/disk/$dev org.iosched1.Disk OtherWriters)
			case \$w in *'\"iocost\" \"systemd-iocost\"'*) break ;; esac
			sleep 1
		done
		echo \"\$w\"") ||
		{ bad "installing systemd-iocost failed: $out"; iocost_peer_remove "$dev"; return; }
	echo "$out" | sed 's/^/  /'
	grep -qF '"iocost" "systemd-iocost" "systemd-iocost rule" "/usr/lib/udev/rules.d/90-iocost.rules"' <<<"$out" ||
		bad "iosched does not report systemd-iocost as a second writer (OtherWriters)"
	out=$(iocost_ftrace "$dev" "udevadm settle
		for i in \$(seq 100); do echo change >/sys/block/$dev/uevent; done
		udevadm settle --timeout=300
		sleep 5
		by() { grep -v '^#' \$t/trace | grep -c \"^ *\$1-[0-9]* .* \$2 *<-\" || true; }
		for c in iocost iosched-apply ioschedd; do
			echo \"\$c: \$(by \$c ioc_qos_write) qos, \$(by \$c ioc_cost_model_write) model per 100 change events\"
		done") || { bad "tracing failed: $out"; iocost_peer_remove "$dev"; return; }
	echo "$out" | sed 's/^/  /'
	grep -qx 'iocost: 100 qos, 100 model per 100 change events' <<<"$out" ||
		bad "systemd-iocost did not write both files once per event"
	grep -qx 'iosched-apply: 0 qos, 0 model per 100 change events' <<<"$out" || bad "iosched-apply wrote"
	grep -qx 'ioschedd: 0 qos, 0 model per 100 change events' <<<"$out" || bad "ioschedd wrote"
	# Every write is one of the two: nothing else wrote.
	iocost_counted "$out" "100 change events" 100 100
	iocost_peer_remove "$dev"
	out=$(iocost_lines "$dev")
	grep -qxF "qos: $iocost_qos_want" <<<"$out" || bad "io.cost.qos not at the policy after systemd-iocost: $out"
}

# iocost_peer_remove DISK: systemd-iocost and the test hwdb entry gone again.
iocost_peer_remove() {
	guest "rm -rf /opt/systemd-iocost /usr/lib/udev/iocost /usr/lib/udev/rules.d/90-iocost.rules /etc/udev/iocost.conf \
			/etc/udev/hwdb.d/90-system-test-iocost.hwdb
		systemd-hwdb update && udevadm control --reload && udevadm trigger --action=change --settle /dev/$1" >/dev/null ||
		bad "removing systemd-iocost failed"
}

# systemd's hwdb data, taken by iosched: a hwdb entry for the NVMe disk's model (other values
# than the drop-in's) and a drop-in with `iocost.solution = hwdb` instead of numbers; the shipped
# 90-iosched-iocost.rules imports the entry's IOCOST_* properties (systemd-iocost is not
# installed), and the kernel's lines end at the entry's values, with `ioschedctl explain` naming
# the hwdb entry. Then the numbers' drop-in is back and so are its values.
check_iocost_hwdb() {
	local dev out hq="rpct=90.00 rlat=8000 wpct=90.00 wlat=9000 min=60.00 max=120.00"
	local hm="rbps=500000000 rseqiops=50000 rrandiops=40000 wbps=400000000 wseqiops=30000 wrandiops=20000"
	dev=$(disk_of iosnvme)
	out=$(guest "set -e
		m=\$(udevadm info -q property -n /dev/$dev | sed -n 's/^ID_MODEL=//p')
		mkdir -p /etc/udev/hwdb.d
		printf 'block::name:%s:fwrev:*\n IOCOST_SOLUTIONS=naive\n IOCOST_MODEL_NAIVE=$hm\n IOCOST_QOS_NAIVE=$hq\n' \"\$m\" >/etc/udev/hwdb.d/90-system-test-iocost.hwdb
		systemd-hwdb update
		mv $iocost_dropin /root/iocost-dropin.saved
		printf '[rule system-test-hwdb]\nmatch.serial = iosnvme\niocost.enable = yes\niocost.solution = hwdb\n' >/etc/iosched.d/51-system-test-hwdb.conf
		udevadm control --reload
		udevadm trigger --action=change --settle /dev/$dev
		udevadm info -q property -n /dev/$dev | grep '^IOCOST_'
		ioschedctl reload
		ioschedctl explain $dev | grep -i 'iocost'") || { bad "setting up the hwdb entry failed: $out"; }
	echo "$out" | sed 's/^/  /'
	grep -q 'udev hwdb IOCOST_QOS_naive' <<<"$out" || grep -q 'udev hwdb IOCOST_QOS_NAIVE' <<<"$out" ||
		bad "ioschedctl explain does not name the hwdb entry"
	out=$(iocost_lines "$dev")
	echo "$out" | sed "s/^/  $dev with the hwdb solution: /"
	grep -qxF "qos: enable=1 ctrl=user $hq" <<<"$out" || bad "io.cost.qos not at the hwdb entry's values"
	grep -qxF "model: ctrl=user model=linear $hm" <<<"$out" || bad "io.cost.model not at the hwdb entry's values"
	guest "rm -f /etc/iosched.d/51-system-test-hwdb.conf /etc/udev/hwdb.d/90-system-test-iocost.hwdb
		mv /root/iocost-dropin.saved $iocost_dropin
		systemd-hwdb update && udevadm control --reload && udevadm trigger --action=change --settle /dev/$dev &&
		ioschedctl reload" >/dev/null || bad "restoring the drop-in failed"
	out=$(iocost_lines "$dev")
	grep -qxF "qos: $iocost_qos_want" <<<"$out" || bad "io.cost.qos not back at the drop-in's values: $out"
}

# SetPolicy of an iocost key over D-Bus (root, busctl) reaches the kernel, and the disk's
# Current map shows it (iocost.rlat); ResetPolicy brings the drop-in's value back. Then the
# test's drop-in goes; the disk keeps its iocost values (iosched never undoes a policy).
check_iocost_setpolicy() {
	local dev out
	dev=$(disk_of iosnvme)
	out=$(guest "busctl call org.iosched1 /org/iosched1 org.iosched1.Manager SetPolicy 'sa{sv}b' $dev 1 iocost.rlat s 6000 true &&
		echo \"qos: \$(sed -n \"s/^\$(cat /sys/block/$dev/dev) //p\" /sys/fs/cgroup/io.cost.qos)\" &&
		busctl get-property org.iosched1 /org/iosched1/disk/$dev org.iosched1.Disk Current") ||
		{ bad "SetPolicy failed: $out"; return; }
	echo "$out" | sed 's/^/  /'
	grep -qx "qos: ${iocost_qos_want/rlat=5000/rlat=6000}" <<<"$out" || bad "the kernel's io.cost.qos does not have rlat=6000"
	grep -qF '"iocost.rlat" "6000"' <<<"$out" || bad "Current does not show iocost.rlat 6000"
	out=$(guest "busctl call org.iosched1 /org/iosched1 org.iosched1.Manager ResetPolicy sb $dev true &&
		busctl get-property org.iosched1 /org/iosched1/disk/$dev org.iosched1.Disk Current") ||
		{ bad "ResetPolicy failed: $out"; return; }
	echo "  after ResetPolicy: $out"
	grep -qF '"iocost.rlat" "5000"' <<<"$out" || bad "Current not back to the drop-in's iocost.rlat 5000"
	guest "rm -f $iocost_dropin && ioschedctl reload" >/dev/null || bad "removing the drop-in failed"
}

# ---------------------------------------------------------------- other writers (issue 23)
# TuneD (in the image, its service not enabled: started here) with a profile whose [disk] unit
# sets the 1-queue virtio disk's elevator to mq-deadline (line 6), and a distribution-style udev
# rule that writes kyber to the same disk's scheduler (line 2); the shipped policy wants none.
ow_profile=/etc/tuned/system-test/tuned.conf
ow_rule=/etc/udev/rules.d/60-system-test-scheduler.rules
ow_dropin=/etc/iosched.d/50-system-test-defer.conf

# ow_traced SCRIPT: SCRIPT in the guest with the function tracer on queue_attr_store (the
# store handler of every queue/* attribute, whoever writes); prints SCRIPT's output, then
# "writes by COMM: N" for each process that wrote a queue attribute meanwhile, then "control: N"
# for one write of read_ahead_kb's own value (must be 1, or the counts mean nothing).
ow_traced() {
	guest -t 300 "set -e
		t=/sys/kernel/tracing
		[ -e \$t/trace ] || mount -t tracefs tracefs \$t
		echo queue_attr_store >\$t/set_ftrace_filter
		echo function >\$t/current_tracer
		echo >\$t/trace
		echo 1 >\$t/tracing_on
		$1
		grep -v '^#' \$t/trace | sed -n 's/^ *\\(.*\\)-[0-9][0-9]* *\\[[0-9]*\\].*/\\1/p' | sort | uniq -c |
			while read -r n c; do echo \"writes by \$c: \$n\"; done
		echo >\$t/trace
		ra=\$(cat /sys/block/$2/queue/read_ahead_kb)
		echo \$ra >/sys/block/$2/queue/read_ahead_kb
		echo \"control: \$(grep -vc '^#' \$t/trace)\"
		echo 0 >\$t/tracing_on
		echo nop >\$t/current_tracer
		echo >\$t/set_ftrace_filter"
}

# ow_writes OUT COMM: the count of writes by COMM (a grep -E pattern) in ow_traced's OUT.
ow_writes() {
	sed -n "s/^writes by \\($2\\): //p" <<<"$1" | awk '{ n += $1 } END { print n + 0 }'
}

# Both writers on the real peers: `ioschedctl explain` names each with its file:line; TuneD's
# start writes mq-deadline, the rule's change event kyber, and ioschedd puts none back each
# time with a journal line that says "changed back" and names both (the kernel counts one write
# by the rule and two by ioschedd). With `owner.defer = tuned` reloaded, the same event and an
# apply make no write by ioschedd: the rule's kyber stays. Everything is removed afterwards.
check_other_writers() {
	local dev out line n cursor
	dev=$(disk_of iosvd1q)
	[ -n "$dev" ] || { bad "no 1-queue virtio disk"; return; }
	out=$(guest "set -e
		command -v tuned >/dev/null
		mkdir -p ${ow_profile%/*}
		printf '[main]\nsummary=iosched system test: the scheduler of one disk\n\n[disk]\ndevices=$dev\nelevator=mq-deadline\ndynamic=0\n' >$ow_profile
		echo system-test >/etc/tuned/active_profile
		echo manual >/etc/tuned/profile_mode
		printf '# a distribution-style rule\nACTION==\"add|change\", SUBSYSTEM==\"block\", KERNEL==\"$dev\", ATTR{queue/scheduler}=\"kyber\"\n' >$ow_rule
		udevadm control --reload
		ioschedctl reload
		echo \"before: \$(cat /sys/block/$dev/queue/scheduler)\"
		ioschedctl explain $dev | grep 'also written by'
		echo \"cursor: \$(journalctl -n0 --show-cursor | sed -n 's/^-- cursor: //p')\"
		t0=\$(date +%s%N)
		systemctl start tuned
		t1=\$(date +%s%N)
		for i in \$(seq 600); do grep -q '\\[mq-deadline\\]' /sys/block/$dev/queue/scheduler && break; sleep 0.1; done
		t2=\$(date +%s%N)
		echo \"tuned \$(dpkg-query -W -f '\${Version}' tuned): systemctl start took \$(( (t1 - t0) / 1000000 )) ms, the scheduler was mq-deadline after \$(( (t2 - t0) / 1000000 )) ms\"
		echo \"with TuneD: \$(cat /sys/block/$dev/queue/scheduler)\"") ||
		{ echo "$out" | sed 's/^/  /'; bad "setting up TuneD and the rule failed"; ow_remove "$dev"; return; }
	echo "$out" | sed 's/^/  /'
	grep -qF "scheduler also written by udev rule $ow_rule:2 writes kyber on add|change" <<<"$out" ||
		bad "ioschedctl explain does not name the udev rule with its file:line"
	grep -qF "scheduler also written by TuneD profile system-test $ow_profile:6 writes mq-deadline" <<<"$out" ||
		bad "ioschedctl explain does not name TuneD's profile with its file:line"
	grep -q '^with TuneD: .*\[mq-deadline\]' <<<"$out" || bad "TuneD did not set the scheduler"
	# The drift lines are read from before TuneD's start: TuneD also applies its profile on
	# the disk's udev events, and ioschedd may have put none back before the traced window
	# (two runs found the kyber line in the window and not TuneD's).
	cursor=$(sed -n 's/^cursor: //p' <<<"$out")

	# Drift: TuneD's mq-deadline (an apply reads it), then the rule's kyber (a change event).
	out=$(ow_traced "c='$cursor'
		ioschedctl apply $dev
		echo \"after the apply: \$(cat /sys/block/$dev/queue/scheduler)\"
		udevadm trigger --action=change --settle /dev/$dev
		for i in \$(seq 100); do grep -q '\\[none\\]' /sys/block/$dev/queue/scheduler && break; sleep 0.1; done
		ioschedctl apply $dev
		echo \"after: \$(cat /sys/block/$dev/queue/scheduler)\"
		journalctl --after-cursor=\"\$c\" -o cat SYSLOG_IDENTIFIER=ioschedd | grep '^$dev: scheduler' | sed 's/^/journal: /'
		busctl get-property org.iosched1 /org/iosched1 org.iosched1.Manager DriftCorrected" "$dev") ||
		{ echo "$out" | sed 's/^/  /'; bad "the drift step failed"; ow_remove "$dev"; return; }
	echo "$out" | sed 's/^/  /'
	[ "$(sed -n 's/^control: //p' <<<"$out")" = 1 ] || bad "the control write was not counted once: the counts mean nothing"
	grep -q '^after: .*\[none\]' <<<"$out" || bad "ioschedd did not put none back"
	for line in "mq-deadline -> none" "kyber -> none"; do
		n=$(grep -c "^journal: $dev: scheduler $line (rule [^)]*); changed back; also written by " <<<"$out" || true)
		[ "$n" -ge 1 ] || { bad "no drift line '$line ... changed back; also written by'"; continue; }
		grep "^journal: $dev: scheduler $line " <<<"$out" | grep -F "$ow_rule:2" | grep -qF "$ow_profile:6" ||
			bad "the drift line '$line' does not name both writers with file:line"
	done
	n=$(ow_writes "$out" ioschedd)
	[ "$n" = 2 ] || bad "ioschedd wrote $n times, want 2 (TuneD's value and the rule's put back)"
	n=$(ow_writes "$out" '.*udev.*')
	[ "$n" = 1 ] || bad "the rule wrote $n times on one change event, want 1"

	# owner.defer = tuned: the scheduler is left to TuneD; the rule's kyber stays.
	out=$(guest "set -e
		printf '[rule system-test-defer]\nmatch.serial = iosvd1q\nowner.defer = tuned\n' >$ow_dropin
		ioschedctl reload
		ioschedctl explain $dev | grep 'also written by'") ||
		{ echo "$out" | sed 's/^/  /'; bad "the owner.defer drop-in failed"; ow_remove "$dev"; return; }
	echo "$out" | sed 's/^/  /'
	grep -qF "scheduler also written by TuneD profile system-test $ow_profile:6 writes mq-deadline on profile apply, add; left to it (owner.defer)" <<<"$out" ||
		bad "ioschedctl explain does not say the scheduler is left to TuneD"
	out=$(ow_traced "udevadm trigger --action=change --settle /dev/$dev
		sleep 3
		ioschedctl apply $dev
		echo \"after: \$(cat /sys/block/$dev/queue/scheduler)\"" "$dev") ||
		{ echo "$out" | sed 's/^/  /'; bad "the owner.defer step failed"; ow_remove "$dev"; return; }
	echo "$out" | sed 's/^/  /'
	[ "$(sed -n 's/^control: //p' <<<"$out")" = 1 ] || bad "the control write was not counted once: the counts mean nothing"
	n=$(ow_writes "$out" ioschedd)
	[ "$n" = 0 ] || bad "ioschedd wrote $n times with owner.defer = tuned, want 0"
	n=$(ow_writes "$out" '.*udev.*')
	[ "$n" = 1 ] || bad "the rule wrote $n times on one change event, want 1"
	grep -q '^after: .*\[kyber\]' <<<"$out" || bad "the rule's kyber did not stay with owner.defer"
	ow_remove "$dev"
}

# ow_remove DISK: TuneD stopped, its profile, the rule and the drop-in gone; the disk back at the
# policy (none) with no other writer.
ow_remove() {
	local out
	out=$(guest "t0=\$(date +%s%N)
		systemctl stop tuned
		echo \"systemctl stop tuned took \$(( (\$(date +%s%N) - t0) / 1000000 )) ms\"
		rm -rf ${ow_profile%/*} $ow_rule $ow_dropin
		: >/etc/tuned/active_profile
		: >/etc/tuned/profile_mode
		udevadm control --reload
		ioschedctl reload
		udevadm trigger --action=change --settle /dev/$1
		ioschedctl apply $1
		echo \"after removal: \$(cat /sys/block/$1/queue/scheduler)\"
		busctl get-property org.iosched1 /org/iosched1/disk/$1 org.iosched1.Disk OtherWriters")
	echo "$out" | sed 's/^/  /'
	grep -q '^after removal: .*\[none\]' <<<"$out" || bad "$1 is not back at none"
	grep -qxF "a(ssssussb) 0" <<<"$out" || bad "$1 still has other writers"
}

# apt remove leaves every disk's values as they are and the rule is gone; apt purge leaves no
# iosched file behind.
check_apt_remove() {
	local b a
	[ "$package_kind" = deb ] || { skip "no .deb (tools/build-deb is not in this tree yet)"; return; }
	disks_probe
	b=$(cat "$tmp/disks.txt")
	guest 'apt-get remove -y iosched' | grep -v 'Reading database' | tail -n 3 | sed 's/^/  /' || bad "apt-get remove failed"
	guest '! ls /usr/lib/udev/rules.d/*iosched* /lib/udev/rules.d/*iosched* 2>/dev/null' || bad "the udev rule is still there"
	guest 'udevadm trigger --action=change --subsystem-match=block && udevadm settle' >/dev/null
	disks_probe
	a=$(cat "$tmp/disks.txt")
	[ "$a" = "$b" ] || bad "disk values changed on remove: $(diff <(echo "$b") <(echo "$a") | tr '\n' ' ')"
}

check_apt_purge() {
	local out
	[ "$package_kind" = deb ] || { skip "no .deb (tools/build-deb is not in this tree yet)"; return; }
	guest 'apt-get purge -y iosched' | grep -v 'Reading database' | tail -n 3 | sed 's/^/  /' || bad "apt-get purge failed"
	# The kernel's own schedulers (kyber-iosched.ko, ...) are not ours; the test's files are
	# named system-test-*.
	out=$(guest "find / -xdev \\( -path /proc -o -path /sys -o -path /usr/lib/modules \\) -prune -o -iname '*iosched*' -print")
	[ -z "$out" ] || bad "left behind: $(echo "$out" | tr '\n' ' ')"
}

# ---------------------------------------------------------------- runner

declare -A before

# checks_run KERNEL: boot 1 without iosched (the kernel's values, the boot cost), install the
# package, reboot, then every check_* function in file order; powers off at the end.
checks_run() {
	local name serial rest
	kernel_name=$1
	guest_start || { total_failed=$((total_failed + 1)); echo "FAIL boot ($kernel_name)"; return; }
	guest 'uname -r' | sed 's/^/guest kernel: /'
	boot_record without
	disks_probe || die "cannot list the guest's disks"
	while read -r serial rest; do
		before[$serial]=${rest##* }
	done <"$tmp/disks.txt"
	stacks_setup || die "cannot build the storage stacks in the guest"
	log "installing iosched ($package_kind)"
	package_install >"$tmp/install-$kernel_name.log" 2>&1 ||
		{ cat "$tmp/install-$kernel_name.log"; die "installing iosched failed"; }
	# From the next boot on, the guest boots from an initramfs made by initramfs-tools with
	# iosched's hook (initramfs.sh); without one (no .deb), from the busybox one.
	guest_initrd=
	if [ "$package_kind" = deb ]; then
		log "making the initramfs with iosched's hook (update-initramfs in a chroot of the image)"
		guest_initrd=$(initramfs_debian) || log "no initramfs with the hook: check initramfs fails"
	fi
	guest_reboot || die "no boot after the install"
	boot_record with
	# Disk names of boot 1 need not be this boot's (SCSI disks are named in the order they come).
	disks_probe || die "cannot list the guest's disks"
	# This file's checks, then fleet.sh's (deploy/: after apt_purge, they install it their way).
	# IOSCHED_SYSTEM_CHECKS=REGEX (grep -E, whole name) runs only the checks it matches.
	for name in $(sed -n 's/^check_\([a-z0-9_]*\)() {$/\1/p' "$system_dir/checks.sh" "$system_dir/fleet.sh" |
		grep -xE "${IOSCHED_SYSTEM_CHECKS:-.*}"); do
		check_failed=0
		check_skipped=0
		if [ -z "$qemu_pid" ]; then
			echo "FAIL $name ($kernel_name): not run, the guest is down"
			total_failed=$((total_failed + 1))
			continue
		fi
		log "check $name"
		"check_$name" >"$tmp/check.out" 2>&1 || check_failed=1
		cat "$tmp/check.out"
		if [ "$check_skipped" = 1 ]; then
			echo "SKIP $name ($kernel_name)"
		elif [ "$check_failed" = 0 ]; then
			echo "PASS $name ($kernel_name)"
			total_passed=$((total_passed + 1))
		else
			echo "FAIL $name ($kernel_name)"
			total_failed=$((total_failed + 1))
		fi
	done
	guest_stop
}
