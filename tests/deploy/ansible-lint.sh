#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian's ansible-lint (production profile) on deploy/ansible, offline, in a copy of it (the
# linter writes its caches next to the playbooks and in $HOME). The role's own module is
# compiled too (ansible-lint reads YAML only).
#
#   tests/deploy/ansible-lint.sh SOURCE_DIR
set -euo pipefail

src=${1:?usage: ansible-lint.sh SOURCE_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/deploy/ansible" "$tmp/ansible"
cd "$tmp/ansible"
HOME=$tmp ANSIBLE_HOME=$tmp/.ansible ansible-lint --offline --nocolor --profile production
python3 -m py_compile roles/iosched/library/iosched_policy.py
# The module's arguments as the role's tasks pass them, read by ansible-doc from its
# DOCUMENTATION: a task with a name the module does not know fails here, not on a node.
ANSIBLE_HOME=$tmp/.ansible ansible-doc -M roles/iosched/library iosched_policy >/dev/null
echo "ansible-lint: deploy/ansible clean"
