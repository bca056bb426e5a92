#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-man.sh PAGE PROGRAM: PAGE renders without groff warnings, and its EXIT STATUS
# section has each exit code PROGRAM --help lists, and each long option.
# No "echo | grep -q" under pipefail: grep -q exits at its first match, echo can then die of
# SIGPIPE and fail the pipeline (seen: "option --help is not documented" on a loaded host).
set -euo pipefail
page=$1 prog=$2
warnings=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$page" 2>&1) || true
[ -z "$warnings" ] || { echo "groff: $warnings" >&2; exit 1; }
text=$(LC_ALL=C.UTF-8 MANWIDTH=100 groff -man -Tutf8 -P-cbou "$page")
help=$("$prog" --help)
for code in $(echo "$help" | sed -n '/^Exit status/,$p' | grep -o '\b[0-9]\+ [a-z]' | cut -d' ' -f1); do
        grep -Eq "^ *$code( |$)" <<<"$(sed -n '/^EXIT STATUS/,/^[A-Z]/p' <<<"$text")" ||
                { echo "exit code $code of --help is not in EXIT STATUS" >&2; exit 1; }
done
for opt in $(echo "$help" | grep -o -- '--[a-z-]*' | sort -u); do
        grep -q -- "$opt" <<<"$text" || { echo "option $opt is not documented" >&2; exit 1; }
done
echo "ok"
