#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# completion.sh SCRIPT: the bash completion of ioschedctl and iosched-apply, driven as bash
# drives it (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT and the function "complete -p"
# names) on a fake sysfs tree: commands, options, disk names, keys, values. No root needed;
# needs the bash-completion package (tools/install-deps test).
. "$(dirname "$0")/../lib/common.sh"

script=$1
bc=/usr/share/bash-completion/bash_completion
[ -f "$bc" ] || fail "$bc is missing (apt-get install bash-completion, or tools/install-deps test)"
CTL=$IOSCHED_BUILD_DIR/ctl/ioschedctl
sys=$TEST_TMP/sys

# fake_disk NAME SCHEDULER_LINE: a disk with a few queue attributes
fake_disk() {
        local q=$sys/block/$1/queue
        mkdir -p "$q/iosched"
        echo "$2" >"$q/scheduler"
        echo 64 >"$q/nr_requests"
        echo 2000 >"$q/wbt_lat_usec"
        echo 500 >"$q/iosched/read_expire"
}
fake_disk sda "mq-deadline kyber [bfq] none"
fake_disk nvme0n1 "[none] mq-deadline kyber"

# comp LINE: what completing LINE (the cursor at its end) offers, sorted, space-separated;
# "(nospace)" is appended when the function asked for no space after the word.
comp() {
        _IOSCHED_SYS=$sys bash --norc --noprofile -c '
                . "$1" || exit 1
                . "$2" || exit 1
                line=$3
                compopt() { [[ "$*" == "-o nospace" ]] && nospace=" (nospace)"; return 0; }
                # Split as readline does: at blanks, and "=" is a word of its own.
                read -r -a parts <<<"$line"
                [[ $line == *" " ]] && parts+=("")
                COMP_WORDS=()
                for p in "${parts[@]}"; do
                        while [[ $p == *=* ]]; do
                                [[ -n ${p%%=*} ]] && COMP_WORDS+=("${p%%=*}")
                                COMP_WORDS+=("=")
                                p=${p#*=}
                        done
                        [[ -n $p || ${#COMP_WORDS[@]} -eq 0 || ${COMP_WORDS[-1]} != "=" ]] && COMP_WORDS+=("$p")
                done
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMP_LINE=$line
                COMP_POINT=${#line}
                spec=$(complete -p "${COMP_WORDS[0]##*/}") || exit 1
                [[ $spec =~ -F\ ([^ ]+) ]] || exit 1
                "${BASH_REMATCH[1]}" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" \
                        "${COMP_WORDS[COMP_CWORD-1]:-}"
                printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"
                printf "%s\n" "${nospace:-}"
        ' _ "$bc" "$script" "$1"
}

# expect LINE EXPECTED
expect() {
        local got
        got=$(comp "$1") || fail "completing \"$1\": the completion failed"
        [ "$got" = "$2" ] || fail "completing \"$1\": expected \"$2\", got \"$got\""
}

commands=$("$CTL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' | sort | tr '\n' ' ')
[ "${commands% }" = "apply explain hold metrics plan reload reset set status" ] ||
        fail "ioschedctl --help lists other commands than this test knows: $commands"
keys=$("$CTL" --list-keys | sed 's/$/=/' | sort | tr '\n' ' ')
case " $keys" in
*" scheduler= "*" iosched.read_expire= "* | *" iosched.read_expire= "*" scheduler= "*) ;;
*) fail "ioschedctl --list-keys lacks scheduler or iosched.read_expire: $keys" ;;
esac

# ioschedctl: commands and options from --help
expect "$CTL " "apply explain hold metrics plan reload reset set status"
expect "$CTL re" "reload reset"
got=$(comp "$CTL --")
for o in --help --version --json --runtime --no-legend --no-ask-password --list-keys; do
        [[ " $got " == *" $o "* ]] || fail "completing \"ioschedctl --\": no $o in \"$got\""
done
expect "$CTL --json " "apply explain hold metrics plan reload reset set status"

# disks where the command takes one, nothing where it takes none
expect "$CTL explain " "nvme0n1 sda"
expect "$CTL explain s" "sda"
expect "$CTL plan " "nvme0n1 sda"
expect "$CTL status " ""
expect "$CTL metrics " ""
expect "$CTL reset sda " ""
expect "$CTL --runtime reset " "nvme0n1 sda"

# set DISK KEY=VALUE...: keys from --list-keys, with "=" and no space after it
expect "$CTL set sda " "${keys% } (nospace)"
expect "$CTL set sda sched" "scheduler= (nospace)"
expect "$CTL set sda nr_requests=64 sched" "scheduler= (nospace)"
expect "$CTL set sda iosched.read_ex" "iosched.read_expire= (nospace)"

# values: scheduler names from the disk's queue/scheduler, lists after a comma, current values
expect "$CTL set sda scheduler=" "bfq kyber mq-deadline none"
expect "$CTL set nvme0n1 scheduler=" "kyber mq-deadline none"
expect "$CTL set sda scheduler=mq" "mq-deadline"
expect "$CTL set sda scheduler=mq-deadline,b" "mq-deadline,bfq"
expect "$CTL set sda wbt_lat_usec=" "2000 default off"
expect "$CTL set sda nr_requests=" "64"
expect "$CTL set sda iosched.read_expire=" "500"
expect "$CTL --runtime set sda nr_requests=6" "64"
expect "$CTL set nosuchdisk scheduler=" ""

# hold DISK KEY=VALUE... -- COMMAND: keys and values as for set, then a command line
expect "$CTL hold " "nvme0n1 sda"
expect "$CTL hold sda sched" "scheduler= (nospace)"
expect "$CTL hold sda nr_requests=64 sched" "scheduler= (nospace)"
expect "$CTL hold sda scheduler=mq" "mq-deadline"
got=$(comp "$CTL hold sda scheduler=none -- tru")
[[ " $got " == *" true "* ]] || fail "completing a command after \"hold ... --\": \"$got\""

# iosched-apply: options from --help, disks of the --root tree
got=$(comp "$IOSCHED_APPLY --")
for o in --all --dry-run --check-config --json --root= --config= --verbose --quiet; do
        [[ " $got " == *" $o "* ]] || fail "completing \"iosched-apply --\": no $o in \"$got\""
done
expect "$IOSCHED_APPLY --ro" "--root= (nospace)"
expect "$IOSCHED_APPLY --root=$TEST_TMP -n " "nvme0n1 sda"
expect "$IOSCHED_APPLY --root $TEST_TMP --dry-run nv" "nvme0n1"

# Without _IOSCHED_SYS, the disks are the machine's own (when it has a /sys). Loop devices come
# and go (other tests), so a disk of another kind is looked for, by its full name.
disk=
for d in /sys/block/*; do
        case ${d##*/} in
        loop* | ram* | zram* | nbd*) ;;
        *) [ -e "$d" ] && disk=${d##*/} && break ;;
        esac
done
if [ -n "$disk" ]; then
        got=$(sys=/sys comp "$CTL explain $disk")
        [[ " $got " == *" $disk "* ]] || fail "completing \"ioschedctl explain $disk\" on /sys: \"$got\""
else
        log "no disk but loop devices in /sys/block: the machine's own disks are not checked"
fi
log "ok"
