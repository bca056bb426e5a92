#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian package: tools/build-deb builds it (the unit tests run in the build, as nobody;
# lintian: no error, no warning), and the .deb has every file where Debian wants it, nothing
# in /etc (the policy is the vendor's /usr/lib/iosched.conf), maintainer scripts that parse and pass shellcheck. The maintainer scripts
# then run against stubs (never against this machine: nothing is installed, no disk is
# touched): the first install applies the policy once, an upgrade and a chroot do not,
# remove deletes nothing, purge deletes what iosched wrote and nothing else.
. "$(dirname "$0")/../lib/common.sh"
require_root     # tools/build-deb installs its build dependencies (tools/install-deps package)

out=$TEST_TMP/out
start=$(date +%s)
deb=$("$IOSCHED_SRC_DIR/tools/build-deb" "$out" | tail -n 1)
log "tools/build-deb took $(($(date +%s) - start)) s: $deb"
[ -f "$deb" ] || fail "tools/build-deb printed no .deb ($deb)"
case $(basename "$deb") in
iosched_*_amd64.deb | iosched_*_"$(dpkg --print-architecture)".deb) ;;
*) fail "unexpected file name $(basename "$deb")" ;;
esac

contents=$(dpkg-deb -c "$deb" | awk '{ $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print }')
has() { grep -qxF "$1" <<<"$contents" || fail "the package lacks $1"; }
for f in ./usr/libexec/iosched-apply ./usr/libexec/ioschedd ./usr/bin/ioschedctl \
        ./usr/lib/udev/rules.d/60-iosched.rules \
        ./usr/share/dbus-1/system.d/org.iosched1.conf \
        ./usr/share/dbus-1/system-services/org.iosched1.service \
        ./usr/share/dbus-1/interfaces/org.iosched1.xml \
        ./usr/share/polkit-1/actions/org.iosched1.policy \
        ./lib/systemd/system/ioschedd.service \
        ./usr/lib/iosched.conf \
        ./usr/share/bash-completion/completions/ioschedctl \
        "./usr/share/bash-completion/completions/iosched-apply -> ioschedctl" \
        ./usr/share/man/man1/ioschedctl.1.gz ./usr/share/man/man8/ioschedd.8.gz \
        ./usr/share/man/man8/iosched-apply.8.gz ./usr/share/man/man5/iosched.conf.5.gz \
        ./usr/share/doc/iosched/copyright \
        ./usr/share/initramfs-tools/hooks/iosched ./usr/lib/dracut/modules.d/90iosched/module-setup.sh; do
        has "$f"
done
# Nowhere else: not /lib/udev (bookworm's udev.pc), not /usr/local, nothing in /etc: that is
# the administrator's.
bad=$(grep -E '^\./(lib/udev|usr/local|etc/.+)' <<<"$contents") || true
[ -z "$bad" ] || fail "files in the wrong place: $bad"

# cockpit-iosched: the page's four files under /usr/share/cockpit/iosched and nothing else
# of its own (its doc directory and lintian override aside), for every architecture.
cdeb=$(ls "$out"/cockpit-iosched_*_all.deb) || fail "tools/build-deb made no cockpit-iosched_*_all.deb"
ccontents=$(dpkg-deb -c "$cdeb" | awk '$1 !~ /^d/ { print $6 }' |
        grep -Ev '^\./usr/share/(doc/cockpit-iosched/|lintian/overrides/cockpit-iosched$)' | sort)
[ "$ccontents" = "$(printf './usr/share/cockpit/iosched/%s\n' index.html iosched.css iosched.js manifest.json)" ] ||
        fail "cockpit-iosched's files: $ccontents"
dpkg-deb -f "$cdeb" Depends | grep -q 'cockpit-bridge' || fail "cockpit-iosched does not depend on cockpit-bridge"
python3 -c 'import json, sys; json.load(sys.stdin)' < <(dpkg-deb --fsys-tarfile "$cdeb" |
        tar -xOf - ./usr/share/cockpit/iosched/manifest.json) || fail "the manifest is no JSON"

ctl=$TEST_TMP/control
dpkg-deb -e "$deb" "$ctl"
[ ! -s "$ctl/conffiles" ] || fail "the package has conffiles: $(cat "$ctl/conffiles")"
grep -q '^ Depends: .*libsystemd0' <<<"$(dpkg-deb -I "$deb")" || fail "Depends has no libsystemd0 (shlibs)"

# The installed files name each other by their installed paths.
root=$TEST_TMP/root
dpkg-deb -x "$deb" "$root"
grep -qF 'RUN+="/usr/libexec/iosched-apply $kernel"' "$root/usr/lib/udev/rules.d/60-iosched.rules" ||
        fail "the rule does not run /usr/libexec/iosched-apply"
grep -qx 'ExecStart=/usr/libexec/ioschedd' "$root/lib/systemd/system/ioschedd.service" ||
        fail "the unit does not start /usr/libexec/ioschedd"
alias=$(sed -n 's/^SystemdService=//p' "$root/usr/share/dbus-1/system-services/org.iosched1.service")
grep -qx "Alias=$alias" "$root/lib/systemd/system/ioschedd.service" ||
        fail "the activation file's SystemdService=$alias is no alias of the unit"
grep -q "deb-systemd-helper enable 'ioschedd.service'" "$ctl/postinst" ||
        fail "postinst does not enable ioschedd.service (dh_installsystemd)"
# The initramfs carries the helper, its rule and the policy (the hook): initramfs-tools makes
# it again whenever the package is installed or upgraded (dh_installinitramfs's trigger).
grep -qx 'activate-noawait update-initramfs' "$ctl/triggers" 2>/dev/null ||
        fail "the package does not trigger update-initramfs: $(cat "$ctl/triggers" 2>&1)"

command -v shellcheck >/dev/null || fail "shellcheck is not installed (tools/install-deps package)"
for s in preinst postinst prerm postrm; do
        [ -f "$ctl/$s" ] || continue
        sh -n "$ctl/$s" || fail "$s does not parse"
        shellcheck -s sh "$ctl/$s" >&2 || fail "shellcheck finds problems in $s"
done
# The hook and the dracut module (sourced by their tools: hook-functions' and dracut's
# variables and functions come from there).
for h in usr/share/initramfs-tools/hooks/iosched usr/lib/dracut/modules.d/90iosched/module-setup.sh; do
        [ -x "$root/$h" ] || fail "$h is not executable"
        shellcheck -s "$(sed -n '1s|^#!/bin/||p' "$root/$h")" -e SC1091,SC2154 "$root/$h" >&2 ||
                fail "shellcheck finds problems in $h"
done

# The maintainer scripts against stubs. Every program they could run that acts on the system
# is a stub that logs its arguments; /usr/libexec/iosched-apply, called by its absolute path,
# is pointed at a stub too.
stubs=$TEST_TMP/stubs calls=$TEST_TMP/calls
mkdir -p "$stubs"
for p in udevadm systemctl deb-systemd-helper deb-systemd-invoke iosched-apply; do
        printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$p" "$calls" >"$stubs/$p"
        chmod +x "$stubs/$p"
done
sed "s|/usr/libexec/iosched-apply|$stubs/iosched-apply|g" "$ctl/postinst" >"$TEST_TMP/postinst"
# run_script SCRIPT CHROOT ARGS...: CHROOT is what the stub ischroot answers (0 chroot, 1 not)
run_script() {
        local s=$1 chroot=$2
        shift 2
        printf '#!/bin/sh\nexit %s\n' "$chroot" >"$stubs/ischroot"
        chmod +x "$stubs/ischroot"
        : >"$calls"
        PATH=$stubs:$PATH sh "$s" "$@" >/dev/null 2>&1 || fail "$(basename "$s") $* failed"
}
if [ -w /sys/block ]; then
        run_script "$TEST_TMP/postinst" 1 configure
        [ "$(grep '^iosched-apply' "$calls")" = "iosched-apply --all" ] ||
                fail "a first install did not run iosched-apply --all once: $(cat "$calls")"
else
        log "no writable /sys/block: the first-install apply is not checked"
fi
run_script "$TEST_TMP/postinst" 1 configure 0.1
grep -q '^iosched-apply' "$calls" && fail "an upgrade ran iosched-apply: $(cat "$calls")"
run_script "$TEST_TMP/postinst" 0 configure
grep -Eq '^(iosched-apply|udevadm)' "$calls" && fail "postinst in a chroot ran: $(cat "$calls")"
DPKG_ROOT=$TEST_TMP/other run_script "$TEST_TMP/postinst" 1 configure
grep -Eq '^(iosched-apply|udevadm)' "$calls" && fail "postinst for DPKG_ROOT ran: $(cat "$calls")"

# remove and purge, on drop-ins under DPKG_ROOT (the scripts honour it).
dr=$TEST_TMP/dpkgroot
mkdir -p "$dr/etc/iosched.d" "$dr/run/iosched.d"
touch "$dr/etc/iosched.d/98-ioschedd-wwn-0x5000c500a1b2c3d4.conf" \
        "$dr/etc/iosched.d/.#98-ioschedd-name-sda.conf.00112233aabbccdd" \
        "$dr/etc/iosched.d/50-local.conf" \
        "$dr/run/iosched.d/99-ioschedd-name-sda.conf"
DPKG_ROOT=$dr run_script "$ctl/postrm" 1 remove
[ "$(find "$dr" -type f | wc -l)" = 4 ] || fail "postrm remove deleted files: $(find "$dr")"
grep -Eq '^(iosched-apply|udevadm)' "$calls" && fail "postrm remove for DPKG_ROOT ran: $(cat "$calls")"
DPKG_ROOT=$dr run_script "$ctl/postrm" 1 purge
left=$(cd "$dr" && find . | sort | tr '\n' ' ')
[ "$left" = ". ./etc ./etc/iosched.d ./etc/iosched.d/50-local.conf ./run " ] ||
        fail "after purge: $left (expected only the administrator's 50-local.conf)"
rm "$dr/etc/iosched.d/50-local.conf"
DPKG_ROOT=$dr run_script "$ctl/postrm" 1 purge
[ ! -e "$dr/etc/iosched.d" ] || fail "purge left an empty /etc/iosched.d"
log "ok"
