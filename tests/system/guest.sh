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
	# The root: a qcow2 overlay on the cached image, kept across the reboots of one run.
	[ -f "$d/root.qcow2" ] || qemu-img create -q -f qcow2 -b "$disk_img" -F raw "$d/root.qcow2"
	qemu_args=(
		-accel tcg -cpu max -smp 2 -m 1536 -M q35 -nodefaults -display none -monitor none
		-no-user-config
		# QEMU's user network, only for fleet.sh's ssh: restrict=on keeps the guest from
		# reaching anything; the host reaches its sshd on 127.0.0.1:$guest_ssh_port.
		-nic "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:$guest_ssh_port-:22"
		-serial "file:$tmp/console-$kernel_name.log"
		-kernel "$kernel_dir/vmlinuz" -initrd "$kernel_dir/initramfs.cpio.gz"
		-append "console=ttyS0 loglevel=4 panic=-1 systemd.show_status=0 rw"
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
	)
}

agent_seq=0

# guest_start: boot the guest; returns once its agent announced itself.
guest_start() {
	rm -f "$tmp/agent.in" "$tmp/agent.out"
	mkfifo "$tmp/agent.in" "$tmp/agent.out"
	# Read-write opens of the FIFOs never block, whoever comes first.
	exec {agent_w}<>"$tmp/agent.in" {agent_r}<>"$tmp/agent.out"
	guest_qemu_args
	qemu-system-x86_64 "${qemu_args[@]}" >"$tmp/qemu-$kernel_name.log" 2>&1 &
	qemu_pid=$!
	guest_wait_ready || return 1
	# The root must hold this kernel's modules, or udev loads no driver (and nothing says so).
	guest '[ -d "/lib/modules/$(uname -r)/kernel" ]' ||
		{ log "the guest's root has no /lib/modules for its kernel"; return 1; }
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
			kill -0 "$qemu_pid" 2>/dev/null || { log "QEMU exited during boot"; guest_console_tail; return 1; }
			[ $SECONDS -lt $deadline ] || { log "no agent after ${boot_timeout}s"; guest_console_tail; return 1; }
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
	kill -9 "$qemu_pid" 2>/dev/null && log "QEMU did not power off within 60 s: killed"
	wait "$qemu_pid" 2>/dev/null || true
	qemu_pid=
	exec {agent_w}>&- {agent_r}<&-
	guest_boot_id=
	guest_ready_seen=
}
