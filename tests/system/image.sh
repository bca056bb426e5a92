# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/system/image.sh: the guest's root file system and its kernels, built once and cached.
# Sourced by tests/system/run. Everything here is keyed by a hash of this file and of guest/,
# so a change to either builds a new image; the kernels are keyed by their package's file name.
#
#   $cache/root-KEY/            debootstrap'ed Debian 12, configured (see image_configure)
#   $cache/kernel-PKG/          vmlinuz, modules/ (lib/modules/VER), initramfs.cpio.gz
#   $cache/disk-KEY-PKG.img     ext4 image: root-KEY plus that kernel's modules (raw, sparse)
#   $cache/apt-SUITE/           private apt lists and downloads for the kernel packages
#
# The guest boots with -kernel/-initrd: a busybox initramfs loads the modules the root disk
# needs, mounts LABEL=iosroot and switch_roots to systemd. No initramfs-tools in the image.

# Debian 12 packages in the image. The checks need strace (writes to queue attributes) and a
# logind session for the login user (libpam-systemd); iosched's .deb needs libinih1. The fleet
# checks (fleet.sh): sshd and python3 with python3-apt for Ansible, podman for the image
# (and netavark: debootstrap does not pick a provider of its virtual container-network-stack).
image_pkgs=systemd,systemd-sysv,udev,dbus,polkitd,kmod,libpam-systemd,strace,libinih1,procps
image_pkgs+=,openssh-server,python3,python3-apt,podman,netavark
# The storage stacks (issue 22): lvm2, mdadm, multipath-tools (multipathd, kpartx), nvme-cli,
# and the two initramfs generators iosched ships a hook for (initramfs-tools and dracut-core can
# be installed side by side; the dracut package itself conflicts with initramfs-tools).
image_pkgs+=,lvm2,mdadm,multipath-tools,nvme-cli,initramfs-tools,dracut-core
# Other writers (issue 23): TuneD, a peer that writes the disks' schedulers (check_other_writers
# starts it with a profile of its own).
image_pkgs+=,tuned
image_suite=bookworm
# The WWN of the SCSI disk the guest sees through two paths (guest.sh, guest_mpath_path):
# multipath-tools knows its WWID from the start (image_configure).
guest_mpath_wwn=0x5000c50015ea7100
image_user=alice

image_key() {
	{
		cat "$system_dir/image.sh"
		find "$system_dir/guest" -type f | LC_ALL=C sort | xargs cat
	} | sha256sum | cut -c1-16
}

# image_configure ROOT: everything the image needs beyond debootstrap.
image_configure() {
	local root=$1
	echo iosched-test >"$root/etc/hostname"
	printf 'LABEL=iosroot / ext4 rw,errors=remount-ro 0 1\n' >"$root/etc/fstab"
	# One machine id for every boot of the image: the journal and logind stay consistent.
	chroot "$root" systemd-machine-id-setup >/dev/null
	chroot "$root" passwd -dq root
	chroot "$root" useradd -m -u 1000 -s /bin/bash "$image_user"
	install -m 0755 "$system_dir/guest/agent" "$root/usr/local/sbin/system-test-agent"
	install -m 0644 "$system_dir/guest/system-test-agent.service" "$root/etc/systemd/system/"
	ln -sf /etc/systemd/system/system-test-agent.service \
		"$root/etc/systemd/system/multi-user.target.wants/system-test-agent.service"
	# The journal is read after each boot through the agent; a volatile one is enough.
	mkdir -p "$root/etc/systemd/journald.conf.d"
	printf '[Journal]\nStorage=volatile\nRateLimitBurst=0\n' \
		>"$root/etc/systemd/journald.conf.d/system-test.conf"
	# The fleet checks' ssh: QEMU's user network (restrict=on: nothing leaves QEMU), its
	# address set by systemd-networkd; root logs in with the run's key (fleet.sh).
	install -m 0644 "$system_dir/guest/fleet.network" "$root/etc/systemd/network/"
	chroot "$root" systemctl enable -q systemd-networkd.service
	# Storage stacks (issue 22). multipath-tools 0.9.4 makes maps only of WWIDs it knows
	# (find_multipaths strict): the test disk's (tests/system/guest.sh, guest_mpath_path) is
	# known from the start, as after "multipath -a", so the map exists from the first boot on.
	mkdir -p "$root/etc/multipath"
	printf '# Multipath wwids, Version : 1.0\n/3%s/\n' "${guest_mpath_wwn#0x}" >"$root/etc/multipath/wwids"
	# nvme-cli's nvmf-autoconnect.service connects NVMe over Fabrics targets that this guest
	# has none of (it took 24 s of the boot here).
	rm -f "$root"/etc/systemd/system/*.wants/nvmf-autoconnect.service
	# TuneD's package enables tuned.service: at every boot it would apply the profile it
	# recommends (virtual-guest in a VM, whose throughput-performance raises every disk's
	# read_ahead_kb to 4096) to disks the other checks count writes on. check_other_writers
	# starts it, with a profile of its own.
	rm -f "$root"/etc/systemd/system/*.wants/tuned.service
	# mdadm's mdadm-shutdown.service makes a dracut initramfs at every shutdown where dracut is
	# installed (for md arrays below the root, which this guest has none of): over a minute
	# under TCG, longer than the harness waits for a poweroff, and its temporary directory
	# stayed in /var/tmp when QEMU was killed.
	ln -sf /dev/null "$root/etc/systemd/system/mdadm-shutdown.service"
	# The initramfs tests/system/initramfs.sh makes with initramfs-tools: the root disk's
	# modules only (as the busybox one's), gzip (zstd is not in the image).
	printf 'MODULES=list\nCOMPRESS=gzip\n' >"$root/etc/initramfs-tools/conf.d/system-test.conf"
	printf 'virtio_pci\nvirtio_blk\ncrc32c_generic\next4\n' >>"$root/etc/initramfs-tools/modules"
	# No apt lists in the guest: apt installs the local .deb offline, its dependencies are
	# in the image.
	rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
}

# image_root: debootstrap Debian 12 into $cache/root-KEY once; prints the directory.
image_root() {
	local key root mirror
	key=$(image_key)
	root=$cache/root-$key
	if [ ! -f "$root/.iosched-done" ]; then
		mirror=$("$src_dir/tools/debian-mirror") || die "no Debian mirror in /etc/apt; set IOSCHED_DEBIAN_MIRROR"
		# Images of other keys are stale: keep the cache to one image.
		rm -rf "$cache"/root-* "$cache"/disk-*.img "$cache"/stage-*
		log "debootstrap $image_suite ($mirror) into $root"
		debootstrap --variant=minbase --include="$image_pkgs" \
			--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
			"$image_suite" "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
			die "debootstrap failed, see $cache/debootstrap.log"
		image_configure "$root"
		touch "$root/.iosched-done"
	fi
	echo "$root"
}

# kernel_apt apt-get|apt-cache SUITE ARGS...: apt with a private sources list for SUITE (mirror from the
# machine's apt configuration) and a private lists directory; nothing of the machine's apt
# state is read or written.
kernel_apt() {
	local tool=$1 suite=$2 dir=$cache/apt-$2 mirror
	shift 2
	if [ ! -f "$dir/sources.list" ]; then
		mirror=$("$src_dir/tools/debian-mirror") || die "no Debian mirror in /etc/apt; set IOSCHED_DEBIAN_MIRROR"
		mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/archives"
		printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
			"$mirror" "$suite" >"$dir/sources.list"
	fi
	"$tool" -o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null" \
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" \
		-o "Dir::State::status=/dev/null" -o "APT::Sandbox::User=root" "$@"
}

# kernel_package NAME: the Debian package and suite for a --kernel NAME, as "SUITE PACKAGE".
# "6.1" and "6.12" follow the suite's linux-image-amd64, "7.3" is trixie-backports' image.
kernel_package() {
	local suite pkg
	case "$1" in
	6.1) suite=bookworm pkg=linux-image-amd64 ;;
	6.12) suite=trixie pkg=linux-image-amd64 ;;
	7.3) suite=trixie-backports pkg=linux-image-7.3.4+deb13-amd64 ;;
	*) die "unknown kernel $1 (6.1, 6.12, 7.3)" ;;
	esac
	[ -n "$(ls "$cache/apt-$suite/lists/" 2>/dev/null | grep _Packages)" ] ||
		kernel_apt apt-get "$suite" update -qq >&2 || die "apt-get update of $suite failed"
	if [ "$pkg" = linux-image-amd64 ]; then
		pkg=$(kernel_apt apt-cache "$suite" depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n1)
		[ -n "$pkg" ] || die "linux-image-amd64 of $suite depends on no kernel image"
	fi
	echo "$suite $pkg"
}

# kernel_prepare NAME: download and unpack the kernel once; sets kernel_dir and kernel_version.
# Since 7.x Debian splits linux-image-VER into linux-binary-VER (vmlinuz), linux-modules-VER
# and linux-base-VER (modules.builtin, modules.order, modules.builtin.modinfo: without them
# depmod and modprobe do not know the built-in modules): those of its dependencies are
# unpacked with it. .iosched-done lists the packages unpacked: a different list unpacks again.
kernel_prepare() {
	local suite pkg deb parts p f want
	read -r suite pkg < <(kernel_package "$1")
	deb=$(ls "$cache/apt-$suite/archives/${pkg}_"*.deb 2>/dev/null | tail -n1 || true)
	parts=$(kernel_apt apt-cache "$suite" depends "$pkg" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-\(base\|binary\|modules\)-[^ <>]*\)$/\1/p')
	for p in $pkg $parts; do
		ls "$cache/apt-$suite/archives/${p}_"*.deb >/dev/null 2>&1 && continue
		log "downloading $p ($suite)"
		(cd "$cache/apt-$suite/archives" && kernel_apt apt-get "$suite" -qq download "$p") >&2 ||
			die "apt-get download $p failed"
	done
	deb=$(ls "$cache/apt-$suite/archives/${pkg}_"*.deb | tail -n1)
	kernel_dir=$cache/kernel-$(basename "$deb" .deb)
	want=$(printf '%s\n' $pkg $parts)
	if [ "$(cat "$kernel_dir/.iosched-done" 2>/dev/null)" != "$want" ] || [ ! -f "$kernel_dir/config" ]; then
		log "unpacking $(basename "$deb") ${parts//$'\n'/ }"
		rm -rf "$kernel_dir"
		mkdir -p "$kernel_dir/modules"
		for p in $pkg $parts; do
			f=$(ls "$cache/apt-$suite/archives/${p}_"*.deb | tail -n1)
			dpkg-deb -x "$f" "$kernel_dir/modules"
		done
		# Merged /usr or not, the image has /lib -> usr/lib; keep modules at lib/modules.
		if [ -d "$kernel_dir/modules/usr/lib/modules" ]; then
			mkdir -p "$kernel_dir/modules/lib"
			mv "$kernel_dir/modules/usr/lib/modules" "$kernel_dir/modules/lib/"
		fi
		kernel_version=$(ls "$kernel_dir/modules/lib/modules")
		f=$(ls "$kernel_dir"/modules/boot/vmlinuz-* "$kernel_dir/modules/lib/modules/$kernel_version/vmlinuz" 2>/dev/null | head -n1 || true)
		[ -n "$f" ] || die "no vmlinuz in $pkg $parts"
		mv "$f" "$kernel_dir/vmlinuz"
		# The kernel's configuration: mkinitramfs reads it (initramfs.sh).
		f=$(ls "$kernel_dir"/modules/boot/config-* "$kernel_dir/modules/lib/modules/$kernel_version/config" 2>/dev/null | head -n1 || true)
		[ -n "$f" ] || die "no kernel config in $pkg $parts"
		mv "$f" "$kernel_dir/config"
		rm -rf "$kernel_dir/modules/boot" "$kernel_dir/modules/usr"
		# Trixie's kernels ship .ko.xz: plain modules for every kernel, one layout for the
		# initramfs (busybox insmod) and the guest alike.
		find "$kernel_dir/modules" -name '*.ko.xz' -exec xz -d {} +
		find "$kernel_dir/modules" -name '*.ko.zst' -exec zstd -q --rm -d {} +
		depmod -b "$kernel_dir/modules" "$kernel_version"
		initramfs_build "$kernel_dir" "$kernel_version"
		printf '%s\n' "$want" >"$kernel_dir/.iosched-done"
	fi
	kernel_version=$(ls "$kernel_dir/modules/lib/modules")
}

# initramfs_build DIR VERSION: busybox, the root disk's modules in load order, guest/init.
initramfs_build() {
	local dir=$1 ver=$2 ir=$1/initramfs m name i=0
	rm -rf "$ir"
	mkdir -p "$ir/bin" "$ir/mod" "$ir/proc" "$ir/sys" "$ir/dev" "$ir/newroot"
	cp /bin/busybox "$ir/bin/busybox"
	for a in sh mount umount insmod sleep findfs switch_root cat echo; do
		ln -s busybox "$ir/bin/$a"
	done
	install -m 0755 "$system_dir/guest/init" "$ir/init"
	# modprobe prints "insmod PATH" (PATH under -d) in dependency order ("builtin NAME" for built-in ones).
	# crc32c for ext4's checksums: a crypto module up to 6.x (crc32c_generic), a library
	# that ext4 links against since 7.x; a module a kernel does not have is left out.
	for m in virtio_pci virtio_blk crc32c_generic ext4; do
		modprobe -d "$dir/modules" -S "$ver" --show-depends "$m" 2>/dev/null || true
	done | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' >"$dir/initramfs.modules"
	grep -q '/ext4\.ko$' "$dir/initramfs.modules" || grep -qx 'ext4' "$dir/modules/lib/modules/$ver/modules.builtin" 2>/dev/null ||
		grep -q '/ext4\.ko$' "$dir/modules/lib/modules/$ver/modules.builtin" || die "no ext4 module for $ver"
	while read -r m; do
		i=$((i + 1))
		name=$(printf '%02d-%s' "$i" "$(basename "$m")")
		cp "$m" "$ir/mod/$name"
	done <"$dir/initramfs.modules"
	(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initramfs.cpio.gz"
	rm -rf "$ir"
}

# image_disk: the ext4 image of the root plus the current kernel's modules, once per pair;
# prints its path. Boots use a qcow2 overlay on it: the cached image is never written.
image_disk() {
	local root key img stage
	root=$(image_root) || exit 1
	key=$(image_key)
	img=$cache/disk-$key-$(basename "$kernel_dir").img
	# Made before the kernel was last unpacked: stale.
	if [ ! "$img" -nt "$kernel_dir/.iosched-done" ]; then
		log "making $img"
		stage=$cache/stage-$key
		rm -rf "$stage"
		cp -al "$root" "$stage"
		rm -f "$stage/.iosched-done"
		mkdir -p "$stage/lib/modules"
		cp -a "$kernel_dir/modules/lib/modules/$kernel_version" "$stage/lib/modules/"
		mkfs.ext4 -q -L iosroot -d "$stage" "$img.tmp" 3G >/dev/null || { rm -rf "$stage" "$img.tmp"; die "mkfs.ext4 -d failed"; }
		rm -rf "$stage"
		mv "$img.tmp" "$img"
	fi
	echo "$img"
}
