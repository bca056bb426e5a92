# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/system/initramfs.sh: the guest's initramfs made by Debian's initramfs-tools with
# iosched's hook (issue 22). Sourced by tests/system/run.
#
# Made on the host, in a chroot of a copy of the guest's image (the same Debian 12 root, the
# same kernel and its modules) where the package under test is installed with dpkg, as apt
# installs it in the guest: its maintainer scripts run (the apply is skipped in a chroot) and
# so does the initramfs-tools trigger the package activates; then `update-initramfs -c` makes
# the initramfs, which the guest boots from the boot after the install on (guest_initrd). In
# the guest under TCG the same update-initramfs took about 16 minutes of a loaded host (MODULES=dep), on the
# host in the chroot 16 s of CPU (MODULES=list): that is the only reason it is made here.

# initramfs_debian: make $tmp/initrd-KERNEL.img; prints its path. The log is
# $tmp/initramfs-KERNEL.log.
initramfs_debian() {
	local root stage=$tmp/initramfs-root-$kernel_name out=$tmp/initrd-$kernel_name.img deb
	local logf=$tmp/initramfs-$kernel_name.log
	[ "$package_kind" = deb ] || { log "no .deb: no initramfs with the hook"; return 1; }
	root=$(image_root)
	rm -rf "$stage"
	# A copy, not links to the cached root: dpkg and update-initramfs write in place.
	cp -a "$root" "$stage"
	mkdir -p "$stage/lib/modules"
	cp -al "$kernel_dir/modules/lib/modules/$kernel_version" "$stage/lib/modules/"
	cp "$kernel_dir/config" "$stage/boot/config-$kernel_version"
	deb=/tmp/$(basename "$package")
	cp "$package" "$stage$deb"
	{
		chroot "$stage" dpkg -i "$deb" &&
			chroot "$stage" update-initramfs -c -k "$kernel_version"
	} >"$logf" 2>&1 || { rm -rf "$stage"; tail -n 20 "$logf" >&2; return 1; }
	mv "$stage/boot/initrd.img-$kernel_version" "$out"
	rm -rf "$stage"
	echo "$out"
}
