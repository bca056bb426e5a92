#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Ansible module iosched_policy: iosched drop-ins from variables, checked and planned first.

The new drop-ins are staged next to the node's own configuration (a directory that links
/sys, /proc and /run/udev and holds the policy files as they would be), then iosched itself
judges them: `iosched-apply --root=STAGE --check-config` (a file:line for every error: the
module fails and writes nothing) and `iosched-apply --root=STAGE --dry-run --json --all` (every
disk and key that would be written). `changed` is true exactly when a file would be written or
removed, or a disk attribute would be; check mode stops there, and `--diff` shows the files
and the disks' keys, old and new. Applying is the caller's handler (org.iosched1 Reload).
"""

import json
import os
import re
import shutil
import subprocess
import tempfile

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: iosched_policy
short_description: Write iosched drop-ins after iosched's own check, report the disks' plan
description:
  - Renders each drop-in, checks the whole policy as it would be with
    C(iosched-apply --check-config), and plans every disk with C(--dry-run --json --all).
  - Fails with the file:line of each error and writes nothing when the policy has errors.
  - Changed when a drop-in would be written or removed, or a disk attribute would be written.
options:
  dropins:
    description: NAME.conf to the file's text, or to a list of rules (name, match, set).
    type: dict
    default: {}
  absent:
    description: NAME.conf files to remove from I(directory).
    type: list
    elements: str
    default: []
  directory:
    description: The drop-in directory, one of those iosched reads.
    type: path
    default: /etc/iosched.d
  helper:
    description: iosched's udev helper.
    type: path
    default: /usr/libexec/iosched-apply
"""

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,250}\.conf$")
KEY = re.compile(r"^[a-z][a-z0-9_.]*$")
HEADER = "# Managed by Ansible (role iosched): changes here are overwritten.\n"
# The directories iosched reads, as conf.c lists them; the stage links those it does not replace.
DROPIN_DIRS = ("etc/iosched.d", "run/iosched.d", "usr/local/lib/iosched.d", "usr/lib/iosched.d")


def value_text(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def render(module, name, spec):
    """The text of drop-in NAME: a string as it is, or a list of rules."""
    if isinstance(spec, str):
        return spec if spec.endswith("\n") else spec + "\n"
    if not isinstance(spec, list):
        module.fail_json(msg=f"{name}: a drop-in is a text or a list of rules, not {type(spec).__name__}")
    out = [HEADER]
    for i, rule in enumerate(spec):
        if not isinstance(rule, dict) or not isinstance(rule.get("name"), str):
            module.fail_json(msg=f"{name}: rule {i + 1} needs a name")
        out.append(f"\n[rule {rule['name']}]\n")
        for section, prefix in (("match", "match."), ("set", "")):
            items = rule.get(section) or {}
            if not isinstance(items, dict):
                module.fail_json(msg=f"{name}: rule {rule['name']}: {section} is a mapping")
            for k, v in items.items():
                if not KEY.match(str(k)):
                    module.fail_json(msg=f"{name}: rule {rule['name']}: invalid key {k!r}")
                out.append(f"{prefix}{k} = {value_text(v)}\n")
    return "".join(out)


def read(path):
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except FileNotFoundError:
        return None


def stage_root(directory, files, absent):
    """A root for iosched-apply --root: the node's /sys, /proc, /run/udev and policy, with the
    drop-ins of @files (name to text) in place of @directory's and those of @absent gone."""
    stage = tempfile.mkdtemp(prefix="iosched-policy.")
    for d in ("etc", "run", "usr/local/lib", "usr/lib"):
        os.makedirs(os.path.join(stage, d))
    for link in ("sys", "proc", "run/udev", "etc/iosched.conf", "run/iosched.conf",
                 "usr/local/lib/iosched.conf", "usr/lib/iosched.conf"):
        os.symlink("/" + link, os.path.join(stage, link))
    for d in DROPIN_DIRS:
        real = "/" + d
        if os.path.realpath(real) == os.path.realpath(directory):
            continue
        os.symlink(real, os.path.join(stage, d))
    # The managed directory, entry by entry: a link keeps its own target (a mask to /dev/null
    # must stay one), a file is linked to.
    mine = os.path.join(stage, os.path.relpath(directory, "/"))
    os.makedirs(mine, exist_ok=True)
    if os.path.isdir(directory):
        for n in os.listdir(directory):
            p = os.path.join(directory, n)
            os.symlink(os.readlink(p) if os.path.islink(p) else p, os.path.join(mine, n))
    for n in absent:
        if os.path.lexists(os.path.join(mine, n)):
            os.unlink(os.path.join(mine, n))
    for n, text in files.items():
        p = os.path.join(mine, n)
        if os.path.lexists(p):
            os.unlink(p)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
    return stage


def unstage(stage, text):
    """Messages name the node's paths, not the stage's."""
    return text.replace(stage + "/", "/").replace(stage, "/")


def run(module, argv):
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def plan(module, helper, stage):
    """Every disk attribute that would be written: (disk, key, current, desired, where)."""
    rc, out, err = run(module, [helper, f"--root={stage}", "--dry-run", "--json", "--all"])
    if rc not in (0, 2, 3):
        module.fail_json(msg=f"iosched-apply --dry-run failed (status {rc}): {unstage(stage, err).strip()}")
    writes = []
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        for a in d.get("actions", []):
            if a.get("outcome") != "would-write":
                continue
            where = f"rule {a.get('rule')}, {unstage(stage, a.get('file') or '?')}:{a.get('line')}"
            writes.append({"disk": d["disk"], "key": a["key"], "current": a.get("current"),
                           "desired": a.get("desired"), "where": where})
    return writes


def write_atomic(directory, name, text):
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.rename(tmp, os.path.join(directory, name))
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    module = AnsibleModule(
        argument_spec={
            "dropins": {"type": "dict", "default": {}},
            "absent": {"type": "list", "elements": "str", "default": []},
            "directory": {"type": "path", "default": "/etc/iosched.d"},
            "helper": {"type": "path", "default": "/usr/libexec/iosched-apply"},
        },
        supports_check_mode=True,
    )
    p = module.params
    directory = os.path.abspath(p["directory"])
    for n in list(p["dropins"]) + p["absent"]:
        if not NAME.match(n):
            module.fail_json(msg=f"invalid drop-in name {n!r}: NAME.conf, letters, digits and _.@+- only")
    if os.path.relpath(directory, "/") not in DROPIN_DIRS:
        module.fail_json(msg=f"{directory}: not a directory iosched reads ({', '.join('/' + d for d in DROPIN_DIRS)})")
    if not os.access(p["helper"], os.X_OK):
        module.fail_json(msg=f"{p['helper']}: not installed (install the iosched package first)")

    wanted = {n: render(module, n, spec) for n, spec in p["dropins"].items()}
    before = {n: read(os.path.join(directory, n)) for n in wanted}
    files = {n: t for n, t in wanted.items() if before[n] != t}
    removed = [n for n in p["absent"] if os.path.lexists(os.path.join(directory, n)) and n not in wanted]

    stage = stage_root(directory, wanted, removed)
    try:
        rc, out, err = run(module, [p["helper"], f"--root={stage}", "--check-config"])
        errors = [re.sub(r"^<\d>", "", unstage(stage, e)) for e in err.splitlines() if e.strip()]
        if rc != 0:
            module.fail_json(msg="the policy has errors; nothing was written:\n" + "\n".join(errors),
                             errors=errors, files=sorted(files))
        writes = plan(module, p["helper"], stage)
    finally:
        shutil.rmtree(stage, ignore_errors=True)

    diff = [{"before_header": os.path.join(directory, n), "after_header": os.path.join(directory, n),
             "before": before[n] or "", "after": files[n]} for n in sorted(files)]
    diff += [{"before_header": os.path.join(directory, n), "after_header": "(removed)",
              "before": read(os.path.join(directory, n)) or "", "after": ""} for n in removed]
    if writes:
        diff.append({
            "before_header": "disks now", "after_header": "disks at the policy (Reload)",
            "before": "".join(f"{w['disk']} {w['key']} = {w['current']}\n" for w in writes),
            "after": "".join(f"{w['disk']} {w['key']} = {w['desired']}  ({w['where']})\n" for w in writes),
        })

    if not module.check_mode:
        os.makedirs(directory, mode=0o755, exist_ok=True)
        for n in sorted(files):
            write_atomic(directory, n, files[n])
        for n in removed:
            os.unlink(os.path.join(directory, n))

    changed = bool(files or removed or writes)
    module.exit_json(
        changed=changed, diff=diff, files_written=sorted(files), files_removed=removed, writes=writes,
        msg=f"{len(files)} drop-in(s) to write, {len(removed)} to remove, {len(writes)} disk attribute(s) to write",
    )


if __name__ == "__main__":
    main()
