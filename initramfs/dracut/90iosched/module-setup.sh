#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# dracut module of iosched (installed as /usr/lib/dracut/modules.d/90iosched/): puts the udev
# helper iosched-apply, its udev rule and the I/O policy into the initramfs, so that udev there
# brings every disk it sees, the root disk first of all, to its policy before the switch to the
# real root: the same files the initramfs-tools hook (/usr/share/initramfs-tools/hooks/iosched)
# puts in. The policy is copied as it is when the initramfs is made: after editing
# /etc/iosched.conf or a drop-in, run `dracut -f` (iosched.conf(5), INITRAMFS).

# The rule udev would use, as udev picks it: /etc, then /run, then the packages' directories.
# Prints nothing when there is none, or when it is masked (a link to /dev/null, an empty file).
iosched_rule() {
        local d r
        for d in /etc/udev/rules.d /run/udev/rules.d /usr/local/lib/udev/rules.d /usr/lib/udev/rules.d /lib/udev/rules.d; do
                r=$d/60-iosched.rules
                [[ -e $r || -L $r ]] || continue
                [[ -s $r && $(readlink -f "$r") != /dev/null ]] && echo "$r"
                return 0
        done
}

# The helper the rule runs.
iosched_helper() {
        sed -n 's/^RUN+="\([^ "]*iosched-apply\) .*/\1/p' "$1" | head -n 1
}

check() {
        local rule
        rule=$(iosched_rule)
        [[ -n $rule ]] || return 1
        require_binaries "$(iosched_helper "$rule")" || return 1
        # In every initramfs, host-only or not, once iosched is installed.
        return 0
}

depends() {
        echo udev-rules
        return 0
}

install() {
        local rule f
        rule=$(iosched_rule)
        [[ -n $rule ]] || return 0
        inst_binary "$(iosched_helper "$rule")"
        inst_simple "$rule" "${udevdir}/rules.d/60-iosched.rules"
        # The policy: the main files and the drop-ins of every directory iosched-apply reads
        # but /run (written at run time), with their masks (links to /dev/null); which main
        # file wins is the helper's to decide, as on the real root.
        for f in /etc/iosched.conf /usr/local/lib/iosched.conf /usr/lib/iosched.conf \
                /etc/iosched.d/*.conf /usr/local/lib/iosched.d/*.conf /usr/lib/iosched.d/*.conf; do
                if [[ -L $f && $(readlink -f "$f") == /dev/null ]]; then
                        mkdir -p "${initdir}${f%/*}"
                        ln -sf /dev/null "${initdir}${f}"
                elif [[ -f $f ]]; then
                        inst_simple "$f"
                fi
        done
}
