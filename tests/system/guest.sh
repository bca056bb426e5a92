# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/system/guest.sh: start the QEMU guest, talk to its agent, reboot it, stop it.
# Sourced by tests/system/run.
#
# The channel is a virtio-serial port (org.system-test.agent) on a QEMU "pipe" chardev: two FIFOs
# in $tmp that this shell holds open. Chosen over the serial console (kernel and systemd
# messages interleave with it, and a tty mangles bytes) and over a 9p/virtiofs share (needs
# modules and a mount before the agent can answer, and gives no exit status): the port is a
# plain byte stream, up from early boot, and survives reboots (QEMU keeps it across guest
# resets). guest/agent runs one command at a time and answers with its output and exit status.

# The disks: NAME (the serial number the guest sees, to find the disk whatever the kernel
# named it), size, and the QEMU options. The root disk is virtio-blk with one queue too.
guest_disk_serials="iosroot iosnvme ioszns iosvd1q iosvd2q iosscsi iossata iosusb"

# Every kernel of a run has its own disks and root overlay, kept across that kernel's reboots.
# (One overlay for all made --all-kernels boot 6.12 and 7.3 on the first kernel's root: no
# /lib/modules for them, so udev loaded no storage driver and only the virtio-blk disks the
# initramfs loads existed.)
guest_qemu_args() {
	local d=$tmp/disks-$kernel_name
	# A free port for the guest's sshd, once per run.
	: "${guest_ssh_port:=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
	mkdir -p "$d"
	for s in iosnvme iosvd1q iosvd2q iosscsi iossata iosusb; do
		[ -f "$d/$s.img" ] || truncate -s 1G "$d/$s.img"
	done
	[ -f "$d/ioszns.img" ] || truncate -s 256M "$d/ioszns.img"
	# The storage stacks (issue 22): small disks, made once per kernel like the others.
	for s in iosmpath iosnvmp iosmd0 iosmd1 ioslvm; do
		[ -f "$d/$s.img" ] || truncate -s 128M "$d/$s.img"
	done
	# The root: a qcow2 overlay on the cached image, kept across the reboots of one run.
	[ -f "$d/root.qcow2" ] || qemu-img create -q -f qcow2 -b "$disk_img" -F raw "$d/root.qcow2"
	qemu_args=(
		-accel tcg -cpu max -smp 2 -m 1536 -M q35 -nodefaults -display none -monitor none
		-no-user-config
		# QEMU's user network, only for fleet.sh's ssh: restrict=on keeps the guest from
		# reaching anything; the host reaches its sshd on 127.0.0.1:$guest_ssh_port.
		-nic "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:$guest_ssh_port-:22"
		-chardev "pipe,id=mon,path=$tmp/monitor" -mon chardev=mon,mode=control
		-serial "file:$tmp/console-$kernel_name.log"
		-kernel "$kernel_dir/vmlinuz" -initrd "${guest_initrd:-$kernel_dir/initramfs.cpio.gz}"
		-append "console=ttyS0 loglevel=4 panic=-1 systemd.show_status=0 rw root=LABEL=iosroot"
		-device virtio-serial-pci,id=vser
		-chardev "pipe,id=agent,path=$tmp/agent"
		-device virtserialport,bus=vser.0,chardev=agent,name=org.system-test.agent
		-drive "if=none,id=root,file=$d/root.qcow2,format=qcow2,cache=unsafe"
		-device virtio-blk-pci,drive=root,num-queues=1,serial=iosroot
		# NVMe with several I/O queues (one per vCPU: 2).
		-drive "if=none,id=nvme,file=$d/iosnvme.img,format=raw,cache=unsafe"
		-device nvme,id=nvme0,serial=iosnvme,max_ioqpairs=4
		-device nvme-ns,drive=nvme,bus=nvme0,nsid=1
		# NVMe ZNS: a host-managed zoned namespace, 16 MiB zones.
		-drive "if=none,id=zns,file=$d/ioszns.img,format=raw,cache=unsafe"
		-device nvme,id=nvme1,serial=ioszns
		-device nvme-ns,drive=zns,bus=nvme1,nsid=1,logical_block_size=4096,physical_block_size=4096,zoned=true,zoned.zone_size=16M,zoned.zone_capacity=16M
		-drive "if=none,id=vd1q,file=$d/iosvd1q.img,format=raw,cache=unsafe"
		-device virtio-blk-pci,drive=vd1q,num-queues=1,serial=iosvd1q
		-drive "if=none,id=vd2q,file=$d/iosvd2q.img,format=raw,cache=unsafe"
		-device virtio-blk-pci,drive=vd2q,num-queues=2,serial=iosvd2q
		-device virtio-scsi-pci,id=scsi0
		-drive "if=none,id=scsi,file=$d/iosscsi.img,format=raw,cache=unsafe"
		-device scsi-hd,drive=scsi,bus=scsi0.0,rotation_rate=1,serial=iosscsi
		# q35's built-in AHCI controller.
		-drive "if=none,id=sata,file=$d/iossata.img,format=raw,cache=unsafe"
		-device ide-hd,drive=sata,bus=ide.0,rotation_rate=7200,serial=iossata
		-device qemu-xhci,id=xhci
		-drive "if=none,id=usb,file=$d/iosusb.img,format=raw,cache=unsafe"
		-device usb-storage,drive=usb,bus=xhci.0,serial=iosusb
		# Stacks. One SCSI disk reached through two paths (two virtio-scsi controllers, one
		# image, one WWN): multipath-tools makes a map of them. One block node shared by both
		# devices (share-rw), so that a path can be unplugged and plugged again (device_del,
		# device_add on the monitor) while the node stays.
		-device virtio-scsi-pci,id=scsi1,num_queues=1
		-blockdev "driver=file,filename=$d/iosmpath.img,node-name=mpathf,cache.direct=off,cache.no-flush=on,locking=off"
		-blockdev raw,file=mpathf,node-name=mpath
		-device "$(guest_mpath_path 0)"
		-device "$(guest_mpath_path 1)"
		# md raid1 on two SCSI HDDs, an LVM physical volume on a third.
		-drive "if=none,id=md0,file=$d/iosmd0.img,format=raw,cache=unsafe"
		-device scsi-hd,drive=md0,bus=scsi0.0,rotation_rate=7200,serial=iosmd0
		-drive "if=none,id=md1,file=$d/iosmd1.img,format=raw,cache=unsafe"
		-device scsi-hd,drive=md1,bus=scsi0.0,rotation_rate=7200,serial=iosmd1
		-drive "if=none,id=lvm,file=$d/ioslvm.img,format=raw,cache=unsafe"
		-device scsi-hd,drive=lvm,bus=scsi0.0,rotation_rate=1,serial=ioslvm
		# NVMe native multipath: one subsystem, two controllers, one shared namespace.
		-device nvme-subsys,id=nvmpsub,nqn=iosnvmp
		-device nvme,id=nvmp0,serial=iosnvmp,subsys=nvmpsub
		-device nvme,id=nvmp1,serial=iosnvmp,subsys=nvmpsub
		-drive "if=none,id=nvmp,file=$d/iosnvmp.img,format=raw,cache=unsafe"
		-device nvme-ns,drive=nvmp,bus=nvmp0,nsid=1,shared=on
	)
}

# qmp_start: QEMU's monitor (QMP, on the pipe chardev "mon"): read the greeting, leave
# capabilities negotiation mode.
qmp_start() {
	local line
	IFS= read -r -t 60 line <&"$mon_r" || return 1
	case "$line" in *'"QMP"'*) ;; *) return 1 ;; esac
	qmp '{"execute": "qmp_capabilities"}' >/dev/null
}

# qmp JSON: one QMP command; prints QEMU's answer ({"return": ...} or {"error": ...}) and fails
# on an error or when none comes within 60 s. Events that come meanwhile are logged to
# $tmp/qmp-events-KERNEL.
qmp() {
	local line
	printf '%s\n' "$1" >&"$mon_w"
	while IFS= read -r -t 60 line <&"$mon_r"; do
		line=${line%$'\r'}
		case "$line" in
		'{"return"'*) echo "$line"; return 0 ;;
		'{"error"'*) echo "$line"; return 1 ;;
		*) echo "$line" >>"$tmp/qmp-events-$kernel_name" ;;
		esac
	done
	return 1
}

# guest_mpath_path N: the -device (and device_add) options of path N of the multipath disk.
guest_mpath_path() {
	echo "scsi-hd,id=mpath$1,drive=mpath,bus=scsi$1.0,share-rw=on,serial=iosmpath,wwn=$guest_mpath_wwn,rotation_rate=7200"
}

agent_seq=0

# guest_start: boot the guest; returns once its agent announced itself.
guest_start() {
	rm -f "$tmp/agent.in" "$tmp/agent.out" "$tmp/monitor.in" "$tmp/monitor.out"
	mkfifo "$tmp/agent.in" "$tmp/agent.out" "$tmp/monitor.in" "$tmp/monitor.out"
	# Read-write opens of the FIFOs never block, whoever comes first.
	exec {agent_w}<>"$tmp/agent.in" {agent_r}<>"$tmp/agent.out"
	exec {mon_w}<>"$tmp/monitor.in" {mon_r}<>"$tmp/monitor.out"
	guest_qemu_args
	qemu-system-x86_64 "${qemu_args[@]}" >"$tmp/qemu-$kernel_name.log" 2>&1 &
	qemu_pid=$!
	qmp_start || { log "no QMP greeting from QEMU"; guest_down; return 1; }
	guest_wait_ready || { guest_down; return 1; }
	# The root must hold this kernel's modules, or udev loads no driver (and nothing says so).
	guest '[ -d "/lib/modules/$(uname -r)/kernel" ]' ||
		{ log "the guest's root has no /lib/modules for its kernel"; guest_down; return 1; }
}

# guest_down: a boot that failed ends its QEMU; from then on guest() fails at once (no agent
# to wait 300 s for at every command: after one failed reboot the checks that followed took
# 5400 s of CI's time) and checks_run fails the remaining checks of that kernel unrun.
guest_down() {
	guest_console_tail
	guest_end
}

# guest_end: QEMU killed if it still runs, its channels closed, its boot forgotten (the end of
# guest_stop and of guest_down).
guest_end() {
	if [ -n "$qemu_pid" ]; then
		kill -9 "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
	qemu_pid=
	exec {agent_w}>&- {agent_r}<&- {mon_w}>&- {mon_r}<&-
	guest_boot_id=
	guest_ready_seen=
}

# guest_wait_ready: wait for the agent's "@@READY BOOT_ID" (a new boot id after a reboot);
# sets guest_boot_id. Fails after $boot_timeout seconds or when QEMU exits.
guest_wait_ready() {
	local deadline=$((SECONDS + boot_timeout)) line= part
	if [ -n "${guest_ready_seen:-}" ] && [ "$guest_ready_seen" != "${guest_boot_id:-}" ]; then
		guest_boot_id=$guest_ready_seen
		return 0
	fi
	while :; do
		if IFS= read -r -t 5 part <&"$agent_r"; then
			line+=$part
			case "$line" in
			"@@READY "*)
				if [ "${line#@@READY }" != "${guest_boot_id:-}" ]; then
					guest_boot_id=${line#@@READY }
					return 0
				fi
				;;
			esac
			line=
		else
			line+=$part
			kill -0 "$qemu_pid" 2>/dev/null || { log "QEMU exited during boot"; return 1; }
			[ $SECONDS -lt $deadline ] || { log "no agent after ${boot_timeout}s"; return 1; }
		fi
	done
}

guest_console_tail() {
	tail -n 30 "$tmp/console-$kernel_name.log" >&2 || true
	tail -n 5 "$tmp/qemu-$kernel_name.log" >&2 || true
}

# guest [-t SECONDS] SCRIPT: run SCRIPT (bash, as root) in the guest; print its output
# (stdout and stderr), return its exit status (124 on timeout, 125 if the guest rebooted).
guest() {
	local t=300 line= part id
	if [ "$1" = -t ]; then
		t=$2
		shift 2
	fi
	local deadline=$((SECONDS + t)) out=
	[ -n "$qemu_pid" ] || { log "no guest for: $*"; return 124; }
	agent_seq=$((agent_seq + 1))
	id=$agent_seq
	printf '%s %s\n' "$id" "$(printf '%s' "$*" | base64 -w0)" >&"$agent_w"
	while :; do
		if IFS= read -r -t 5 part <&"$agent_r"; then
			line+=$part
			case "$line" in
			"@@OUT $id "*) out=${line#"@@OUT $id "} ;;
			"@@END $id "*)
				printf '%s' "$out" | base64 -d
				return "${line#"@@END $id "}"
				;;
			"@@READY "*)
				# guest_wait_ready takes it from here.
				guest_ready_seen=${line#@@READY }
				log "guest rebooted during: $*"
				return 125
				;;
			esac
			line=
		else
			line+=$part
			if ! kill -0 "$qemu_pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
				log "no answer in ${t}s to: $*"
				return 124
			fi
		fi
	done
}

# guest_put FILE PATH: copy a host file into the guest.
guest_put() {
	guest "base64 -d >'$2' <<'IOSCHED_EOF'
$(base64 -w76 "$1")
IOSCHED_EOF"
}

# guest_reboot: a clean shutdown, then a new QEMU on the same disks. Not a warm reset
# (systemctl reboot): under TCG on a loaded host, the boot after a guest reset spent over two
# minutes in the kernel (systemd-analyze: "2min 22s (kernel)") where a cold boot takes 5 s.
guest_reboot() {
	guest_stop
	guest_start
}

# guest_stop: power off (QEMU exits), killing QEMU if it does not within a minute.
guest_stop() {
	[ -n "$qemu_pid" ] || return 0
	guest '(sleep 1; systemctl poweroff) >/dev/null 2>&1 &' >/dev/null 2>&1 || true
	local i
	for i in $(seq 60); do
		kill -0 "$qemu_pid" 2>/dev/null || break
		sleep 1
	done
	kill -0 "$qemu_pid" 2>/dev/null && log "QEMU did not power off within 60 s: killed"
	guest_end
}
