#!/bin/sh
# install-conf.sh SRC DST: copy the shipped policy to DST (under $DESTDIR) unless it exists.
set -eu
dst="${DESTDIR:-}$2"
[ -e "$dst" ] && exit 0
mkdir -p "$(dirname "$dst")"
cp "${DESTDIR:-}$1" "$dst"
