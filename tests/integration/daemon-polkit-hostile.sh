#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Unprivileged callers against ioschedd with the real polkitd (docs/reliability.md,
# "Privilege"); daemon-polkit.sh has the basic denials, this is the hostile angle:
#   1. 100 connections of an unprivileged user, 30 pipelined mutating calls each: what a polkit
#      rule allows (Apply, ApplyAll) is done, everything else (SetPolicy, ResetPolicy, Reload)
#      is denied, every call answered;
#   2. 200 unprivileged clients that hang up while polkit is still deciding: nothing is
#      written, nothing persisted, ioschedd and polkitd stay up;
#   3. interactive authorization asked for, with no agent: denied.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
[ -x "$POLKITD" ] || fail "polkitd is not installed (apt-get install polkitd)"
id "$UNPRIV_USER" >/dev/null 2>&1 || fail "no user $UNPRIV_USER"
/usr/bin/python3 -c 'import dbus' 2>/dev/null || fail "python3-dbus is not installed (tools/install-deps test)"

a=$(loop_new)
config_root test "match.name = $a" "nr_requests = 32"

bus_start "$POLKIT_BUS_CONF"
polkitd_start apply
ioschedd_start --config-root "$root"
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "first pass"
echo 64 >"/sys/block/$a/queue/nr_requests"

# The unprivileged user reads the helper module from the test's directory.
mkdir -m 755 "$TEST_TMP/py"
install -m 644 "$(dirname "$0")/busraw.py" "$TEST_TMP/py/"
rc=0
as_unpriv env BUSRAW_TIMEOUT="${BUSRAW_TIMEOUT:-300}" /usr/bin/python3 - "$a" "$TEST_TMP/py" <<'PY' || rc=$?
import sys, time
disk = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from busraw import Raw, align, body_str, setpolicy_body


def body_sb(name, b):
    buf = bytearray(body_str(name))
    align(buf, 4)
    return bytes(buf) + (b"\1\0\0\0" if b else b"\0\0\0\0")


E = "org.freedesktop.DBus.Error."
DENIED = (E + "AccessDenied", E + "InteractiveAuthorizationRequired")
calls = [
    ("Apply", b"s", body_str(disk.encode()), None),
    ("SetPolicy", b"sa{sv}b", setpolicy_body(disk.encode(), [(b"nr_requests", b"16")], False), DENIED),
    ("SetPolicy", b"sa{sv}b", setpolicy_body(disk.encode(), [(b"nr_requests", b"16")], True), DENIED),
    ("ResetPolicy", b"sb", body_sb(disk.encode(), False), DENIED),
    ("Reload", b"", b"", DENIED),
]
# ApplyAll is the apply action too, allowed by the rule; it reads every disk of the machine,
# so it is sent only once per ten connections.
APPLY_ALL = ("ApplyAll", b"", b"", None)

# 1. 100 connections x 30 pipelined calls.
conns = [Raw() for _ in range(100)]
pending = [{} for _ in conns]
t0 = time.monotonic()
for i in range(30):
    for c, r in enumerate(conns):
        member, sig, body, want = APPLY_ALL if i == 0 and c % 10 == 0 else calls[(i + c) % len(calls)]
        pending[c][r.send(member.encode(), sig, body)] = (member, want)
right = wrong = 0
for c, r in enumerate(conns):
    while pending[c]:
        m = r.read_message()
        if m is None:
            print("connection %d closed with %d replies missing" % (c, len(pending[c])))
            sys.exit(1)
        mtype, rs, err = m
        if rs not in pending[c]:
            continue
        member, want = pending[c].pop(rs)
        if (want is None and mtype == 2) or (want is not None and mtype == 3 and err in want):
            right += 1
        else:
            wrong += 1
            if wrong < 5:
                print("%s: got %s" % (member, err or "a return"))
    r.close()
print("unprivileged: 3000 pipelined calls on 100 connections answered in %.1f s: %d right, %d wrong"
      % (time.monotonic() - t0, right, wrong))

# 2. 200 clients that hang up while polkit decides.
for i in range(200):
    r = Raw()
    member, sig, body, _ = calls[1 + i % 4]
    r.send(member.encode(), sig, body)
    r.close()

# 3. Interactive authorization asked for (flag 0x4), no agent: denied.
r = Raw()
s = r.send(b"SetPolicy", b"sa{sv}b", setpolicy_body(disk.encode(), [(b"nr_requests", b"16")], False),
           flags=0x4)
while True:
    mtype, rs, err = r.read_message()
    if rs == s:
        break
print("interactive SetPolicy: %s" % (err or "a return"))
ok_interactive = mtype == 3 and err in DENIED
sys.exit(0 if wrong == 0 and ok_interactive else 1)
PY
[ $rc = 0 ] || fail "an unprivileged call got a wrong answer; ioschedd on polkit: $(grep -i polkit "$IOSCHEDD_LOG" | sed 's/^.*ioschedd[^:]*: //' | sort | uniq -c | sort -rn | head -5)"
# An absence to prove, not an event to wait for: polkit's answers to callers that hung up may
# still be on their way; none of them may bring the daemon down.
sleep 2
ioschedd_alive || fail "ioschedd died"
kill -0 $POLKITD_PID || fail "polkitd died"
[ -z "$(find "$root" -name '*.conf' ! -path "$root/etc/iosched.conf")" ] || fail "a denied SetPolicy wrote a drop-in"
# Apply was allowed: the drift is gone; nothing else changed the disk.
[ "$(qattr "$a" nr_requests)" = 32 ] || fail "nr_requests is $(qattr "$a" nr_requests)"
mgr ListDisks | has "\"$a\"" || fail "ioschedd stopped answering"
log "ok"
