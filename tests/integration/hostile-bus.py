#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hostile D-Bus input for ioschedd (run by daemon-hostile.sh; docs/reliability.md).

Usage: hostile-bus.py DISK OTHER_DISK

DISK has a rule; OTHER_DISK has none. The bus is $DBUS_SYSTEM_BUS_ADDRESS. Every case states
the answer it expects: a method return, or a D-Bus error by name. After each case ioschedd
must still answer. Prints one line per case; exits 1 if any case got another answer.

Typed calls go through dbus-python's low-level messages (any signature, any value); what no
library will send (NUL inside a string, bytes that are not UTF-8, a torn message) goes through
a raw socket speaking the wire protocol, as does the burst of 10,000 pipelined calls.
"""
import os
import struct
import sys
import time

import dbus
import dbus.lowlevel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from busraw import TIMEOUT, Raw, body_str, message, setpolicy_body  # noqa: E402

DEST = "org.iosched1"
MGR_PATH = "/org/iosched1"
MGR = "org.iosched1.Manager"
E = "org.iosched1.Error."
FD = "org.freedesktop.DBus.Error."

disk, other = sys.argv[1], sys.argv[2]
disk_path = "/org/iosched1/disk/" + disk
bus = dbus.SystemBus()
results = []


def call(method, sig=None, *args, path=MGR_PATH, iface=MGR, timeout=TIMEOUT):
    msg = dbus.lowlevel.MethodCallMessage(DEST, path, iface, method)
    if sig is not None:
        msg.append(*args, signature=sig)
    reply = bus.send_message_with_reply_and_block(msg, timeout)
    return reply.get_args_list()


def alive():
    return call("ListDisks") is not None


def case(name, expect, fn):
    """expect: None for a method return, an error name, or a callable(result) -> bool."""
    try:
        got = fn()
        outcome = "return" + (" (%s)" % got if isinstance(got, str) else "")
        ok = expect is None or (callable(expect) and expect(got))
    except dbus.exceptions.DBusException as e:
        got = e.get_dbus_name()
        outcome = got
        ok = isinstance(expect, str) and got == expect
    except Exception as e:  # a raw-socket case that went wrong on our side
        outcome = "exception %r" % e
        ok = False
    try:
        up = alive()
    except dbus.exceptions.DBusException as e:
        up = False
        outcome += " (daemon not answering: %s)" % e.get_dbus_name()
    ok = ok and up
    results.append(ok)
    want = expect if isinstance(expect, str) else "return"
    print("%s %-58s -> %s%s" % ("ok  " if ok else "FAIL", name, outcome,
                                "" if ok else " (expected %s)" % want), flush=True)


def raw_call(member, sig, body, disconnect_ok=False):
    """One call on its own raw connection. A return gives True; an error raises it as a
    DBusException; a bus that hangs up on us gives "disconnected" when @disconnect_ok."""
    r = Raw()
    serial = r.send(member, sig, body)
    while True:
        m = r.read_message()
        if m is None:
            r.close()
            if disconnect_ok:
                return "disconnected"
            raise RuntimeError("the bus closed the connection")
        mtype, rs, err = m
        if rs == serial:
            r.close()
            if mtype == 3:
                raise dbus.exceptions.DBusException(err, name=err)
            return True


def raw_refused(member, body_bytes, sig=b"s", body=None):
    """A call that is not valid D-Bus (a string with NUL, not UTF-8): the bus must refuse it
    (an error, or hanging up on us); it must never reach ioschedd as a call that succeeds."""
    out = raw_call(member, sig, body if body is not None else body_str(body_bytes),
                   disconnect_ok=True)
    if out is True:
        raise RuntimeError("the call succeeded")
    return out


# ---------------------------------------------------------------------------------------
# Disk names

long_name = "a" * 4096
# Not valid D-Bus: the bus (dbus-daemon, dbus-broker) hangs up on the sender; ioschedd never
# sees the call.
REFUSED = lambda out: out == "disconnected"  # noqa: E731
case("GetDisk existing", lambda o: o[0] == disk_path, lambda: call("GetDisk", "s", disk))
case("GetDisk /dev/ prefix", lambda o: o[0] == disk_path, lambda: call("GetDisk", "s", "/dev/" + disk))
case("GetDisk empty name", E + "InvalidDiskName", lambda: call("GetDisk", "s", ""))
case("GetDisk unknown disk", E + "NoSuchDisk", lambda: call("GetDisk", "s", "nosuchdisk9"))
case("GetDisk ..", E + "InvalidDiskName", lambda: call("GetDisk", "s", ".."))
case("GetDisk .", E + "InvalidDiskName", lambda: call("GetDisk", "s", "."))
case("GetDisk ../../etc/passwd", E + "InvalidDiskName", lambda: call("GetDisk", "s", "../../etc/passwd"))
case("GetDisk disk/../../x", E + "InvalidDiskName", lambda: call("GetDisk", "s", disk + "/../../x"))
case("GetDisk /dev/../dev/disk", E + "InvalidDiskName", lambda: call("GetDisk", "s", "/dev/../dev/" + disk))
case("GetDisk /sys/block/disk", E + "InvalidDiskName", lambda: call("GetDisk", "s", "/sys/block/" + disk))
case("GetDisk 4096-character name", E + "InvalidDiskName", lambda: call("GetDisk", "s", long_name))
case("GetDisk 32-character name", E + "InvalidDiskName", lambda: call("GetDisk", "s", "x" * 32))
case("GetDisk name with a newline", E + "InvalidDiskName", lambda: call("GetDisk", "s", disk + "\n"))
case("GetDisk name with a space", E + "InvalidDiskName", lambda: call("GetDisk", "s", disk + " x"))
case("GetDisk name with a glob", E + "InvalidDiskName", lambda: call("GetDisk", "s", "loop*"))
case("GetDisk UTF-8 name", E + "InvalidDiskName", lambda: call("GetDisk", "s", "l\u00f6\u00f6p0"))
case("GetDisk name with NUL (raw wire)", REFUSED,
     lambda: raw_refused(b"GetDisk", disk.encode() + b"\0../x"))
case("GetDisk name not UTF-8 (raw wire)", REFUSED,
     lambda: raw_refused(b"GetDisk", b"loop\xff\xfe"))
case("Apply ../x", E + "InvalidDiskName", lambda: call("Apply", "s", "../x"))
case("Plan unknown disk", E + "NoSuchDisk", lambda: call("Plan", "s", "nosuchdisk9"))
case("ResetPolicy ../../etc", E + "InvalidDiskName", lambda: call("ResetPolicy", "sb", "../../etc", False))
case("SetPolicy ../../etc", E + "InvalidDiskName",
     lambda: call("SetPolicy", "sa{sv}b", "../../etc", {"nr_requests": dbus.String("64", variant_level=1)}, False))
case("Plan a disk without rule", lambda o: len(o[0]) == 0, lambda: call("Plan", "s", other))

# ---------------------------------------------------------------------------------------
# Signatures, objects, interfaces

case("GetDisk with an int32", FD + "InvalidArgs", lambda: call("GetDisk", "i", 5))
case("GetDisk with no argument", FD + "InvalidArgs", lambda: call("GetDisk"))
case("GetDisk with two strings", FD + "InvalidArgs", lambda: call("GetDisk", "ss", disk, disk))
case("SetPolicy a{ss}", FD + "InvalidArgs",
     lambda: call("SetPolicy", "sa{ss}b", disk, {"nr_requests": "64"}, False))
case("SetPolicy without the bool", FD + "InvalidArgs",
     lambda: call("SetPolicy", "sa{sv}", disk, {"nr_requests": dbus.String("64", variant_level=1)}))
case("SetPolicy with an extra argument", FD + "InvalidArgs",
     lambda: call("SetPolicy", "sa{sv}bs", disk, {"nr_requests": dbus.String("64", variant_level=1)}, False, "x"))
case("ResetPolicy with a string for the bool", FD + "InvalidArgs",
     lambda: call("ResetPolicy", "ss", disk, "no"))
case("unknown method", FD + "UnknownMethod", lambda: call("Frobnicate", "s", disk))
case("unknown interface", FD + "UnknownMethod",
     lambda: call("GetDisk", "s", disk, iface="org.iosched1.Nope"))
case("unknown object", FD + "UnknownObject", lambda: call("Get", "ss", "org.iosched1.Disk", "Name",
                                                        path="/org/iosched1/disk/_2e_2e",
                                                        iface="org.freedesktop.DBus.Properties"))
case("Set a read-only property", FD + "PropertyReadOnly",
     lambda: call("Set", "ssv", "org.iosched1.Disk", "Current",
                  dbus.Dictionary({"nr_requests": "1"}, signature="ss", variant_level=1),
                  path=disk_path, iface="org.freedesktop.DBus.Properties"))
case("Get an unknown property", FD + "UnknownProperty",
     lambda: call("Get", "ss", "org.iosched1.Disk", "Nope", path=disk_path,
                  iface="org.freedesktop.DBus.Properties"))
case("GetAll of the disk", lambda o: "Scheduler" in o[0] and "Current" not in o[0],
     lambda: call("GetAll", "s", "org.iosched1.Disk", path=disk_path,
                  iface="org.freedesktop.DBus.Properties"))

# ---------------------------------------------------------------------------------------
# SetPolicy settings (runtime=True: nothing is persisted by a refused call in any case)

def sp(settings, runtime=True, name=None):
    return lambda: call("SetPolicy", "sa{sv}b", name or disk, settings, runtime)


V = lambda x: dbus.String(x, variant_level=1)  # noqa: E731
case("unknown key", E + "UnknownSetting", sp({"frobnicate": V("1")}))
case("match key", E + "UnknownSetting", sp({"match.name": V("*")}))
case("unknown tunable", E + "UnknownSetting", sp({"iosched.nope": V("1")}))
case("key with a path", E + "UnknownSetting", sp({"../../nr_requests": V("1")}))
case("tunable with a path", E + "UnknownSetting", sp({"iosched.../../../etc/x": V("1")}))
case("key with NUL (raw wire)", REFUSED,
     lambda: raw_refused(b"SetPolicy", None, b"sa{sv}b",
                         setpolicy_body(disk.encode(), [(b"nr_requests\0../x", b"32")])))
case("empty key", E + "UnknownSetting", sp({"": V("1")}))
case("4096-character key", E + "UnknownSetting", sp({long_name: V("1")}))
case("non-numeric value", E + "InvalidSetting", sp({"nr_requests": V("lots")}))
case("value with trailing junk", E + "InvalidSetting", sp({"nr_requests": V("32abc")}))
case("value with a newline", E + "InvalidSetting", sp({"nr_requests": V("32\n64")}))
case("value with leading space", E + "InvalidSetting", sp({"nr_requests": V(" 32")}))
case("hexadecimal value", E + "InvalidSetting", sp({"read_ahead_kb": V("0x40")}))
case("out of range (0)", E + "InvalidSetting", sp({"nr_requests": V("0")}))
case("out of range (int64 -1)", E + "InvalidSetting", sp({"nr_requests": dbus.Int64(-1, variant_level=1)}))
case("out of range (uint64 max)", E + "InvalidSetting",
     sp({"nr_requests": dbus.UInt64(2**64 - 1, variant_level=1)}))
case("out of range (int64 min)", E + "InvalidSetting",
     sp({"read_ahead_kb": dbus.Int64(-2**63, variant_level=1)}))
case("double value", E + "InvalidSetting", sp({"nr_requests": dbus.Double(1.5, variant_level=1)}))
case("variant in a variant", E + "InvalidSetting",
     sp({"nr_requests": dbus.String("32", variant_level=2)}))
case("dict value", E + "InvalidSetting",
     sp({"nr_requests": dbus.Dictionary({"a": "b"}, signature="ss", variant_level=1)}))
case("wbt -5", E + "InvalidSetting", sp({"wbt_lat_usec": V("-5")}))
case("boolean not a boolean", E + "InvalidSetting", sp({"add_random": V("maybe")}))
case("scheduler with a path", E + "InvalidSetting", sp({"scheduler": V("../../x")}))
case("scheduler with a newline", E + "InvalidSetting", sp({"scheduler": V("none\nbfq")}))
case("scheduler with a NUL-free control char", E + "InvalidSetting", sp({"scheduler": V("none\x07")}))
case("scheduler name of 16 characters", E + "InvalidSetting", sp({"scheduler": V("a" * 16)}))
case("scheduler list of 9", E + "InvalidSetting", sp({"scheduler": V(" ".join("s%d" % i for i in range(9)))}))
case("scheduler array with a path", E + "InvalidSetting",
     sp({"scheduler": dbus.Array(["none", "../x"], signature="s", variant_level=1)}))
case("scheduler array of 10,000", E + "InvalidSetting",
     sp({"scheduler": dbus.Array(["none"] * 10000, signature="s", variant_level=1)}))
case("value of 300 characters", E + "InvalidSetting", sp({"scheduler": V("none " * 60)}))
case("key given twice (raw wire)", E + "InvalidSetting",
     lambda: raw_call(b"SetPolicy", b"sa{sv}b",
                      setpolicy_body(disk.encode(), [(b"nr_requests", b"32"), (b"nr_requests", b"64")])))
case("10,000 entries (raw wire)", E + "InvalidSetting",
     lambda: raw_call(b"SetPolicy", b"sa{sv}b",
                      setpolicy_body(disk.encode(), [(b"nr_requests", b"32")] * 10000)))
case("value not UTF-8 (raw wire)", REFUSED,
     lambda: raw_refused(b"SetPolicy", None, b"sa{sv}b",
                         setpolicy_body(disk.encode(), [(b"nr_requests", b"3\xff")])))
case("no settings", E + "InvalidSetting", sp({}))
case("SetPolicy unknown disk", E + "NoSuchDisk", sp({"nr_requests": V("32")}, name="nosuchdisk9"))
# Correct answers for odd but valid input
case("scheduler with spaces is a list", None, sp({"scheduler": V("mq-deadline  none")}))
case("scheduler alias deadline", None, sp({"scheduler": V("deadline")}))
case("boolean as a D-Bus boolean", None, sp({"iostats": dbus.Boolean(True, variant_level=1)}))
case("number as a byte", None, sp({"nomerges": dbus.Byte(0, variant_level=1)}))
case("wbt default", None, sp({"wbt_lat_usec": V("default")}))
case("empty value removes the key", None, sp({"wbt_lat_usec": V("")}))
case("ResetPolicy runtime", None, lambda: call("ResetPolicy", "sb", disk, True))


# ---------------------------------------------------------------------------------------
# Bursts of 10,000 calls, each sent before any reply is read: on one connection (the bus
# caps the replies a connection may await: beyond that it answers LimitsExceeded itself), and
# on 100 connections at once, 100 each (every call reaches ioschedd).

def send_mix(r, i, kinds):
    k = i % 5
    if k == 0:
        s = r.send(b"GetDisk", b"s", body_str(disk.encode()))
        kinds[s] = ("GetDisk", None)
    elif k == 1:
        s = r.send(b"GetDisk", b"s", body_str(b"../x%d" % i))
        kinds[s] = ("GetDisk bad", E + "InvalidDiskName")
    elif k == 2:
        s = r.send(b"Plan", b"s", body_str(disk.encode()))
        kinds[s] = ("Plan", None)
    elif k == 3:
        s = r.send(b"GetAll", b"s", body_str(b"org.iosched1.Disk"), path=disk_path.encode(),
                   iface=b"org.freedesktop.DBus.Properties")
        kinds[s] = ("GetAll", None)
    else:
        s = r.send(b"Apply", b"s", body_str(disk.encode()))
        kinds[s] = ("Apply", None)


def collect(r, kinds, counts, bus_limit_ok):
    while kinds:
        m = r.read_message()
        if m is None:
            raise RuntimeError("the bus closed the connection with %d replies missing" % len(kinds))
        mtype, rs, err = m
        if rs not in kinds:
            continue            # a signal
        what, want = kinds.pop(rs)
        if mtype == 3 and err == FD + "LimitsExceeded" and bus_limit_ok:
            counts["limit"] += 1
        elif (mtype == 2 and want is None) or (mtype == 3 and err == want):
            counts["right"] += 1
        else:
            counts["wrong"] += 1
            if counts["wrong"] < 5:
                print("     burst: %s got %s" % (what, err or "a return"), flush=True)


def burst(n_conns, per_conn):
    conns = [Raw() for _ in range(n_conns)]
    kinds = [{} for _ in conns]
    counts = {"right": 0, "wrong": 0, "limit": 0}
    t0 = time.monotonic()
    for i in range(per_conn):
        for c, r in enumerate(conns):
            send_mix(r, i * n_conns + c, kinds[c])
    sent = time.monotonic() - t0
    for c, r in enumerate(conns):
        collect(r, kinds[c], counts, n_conns == 1)
        r.close()
    print("     burst: %d calls on %d connection(s) sent in %.2f s, all answered in %.2f s: "
          "%d right, %d refused by the bus (LimitsExceeded), %d wrong"
          % (n_conns * per_conn, n_conns, sent, time.monotonic() - t0, counts["right"],
             counts["limit"], counts["wrong"]), flush=True)
    if counts["wrong"]:
        raise RuntimeError("%d wrong answers" % counts["wrong"])
    return True


case("10,000 pipelined calls on one connection", lambda ok: ok is True, lambda: burst(1, 10000))
case("10,000 calls on 100 connections at once", lambda ok: ok is True, lambda: burst(100, 100))

# ---------------------------------------------------------------------------------------
# Clients that go away


def disconnect_mid_call(member, body, n=1):
    r = Raw()
    for _ in range(n):
        r.send(member, b"s", body)
    r.close()                   # before any reply
    time.sleep(0.5)
    return True


case("disconnect before Apply's reply", None,
     lambda: disconnect_mid_call(b"Apply", body_str(disk.encode())))
case("disconnect with 1,000 calls pending", None,
     lambda: disconnect_mid_call(b"Plan", body_str(disk.encode()), 1000))
case("disconnect before ApplyAll's reply", None, lambda: disconnect_mid_call(b"ApplyAll", b"", 1))


def torn_message():
    r = Raw()
    m = message(99, b"GetDisk", b"s", body_str(disk.encode()))
    r.s.sendall(m[:len(m) // 2])
    r.close()
    time.sleep(0.3)
    return True


case("message torn in half, then disconnect", None, torn_message)

print("%d cases, %d failed" % (len(results), results.count(False)), flush=True)
sys.exit(0 if all(results) else 1)
