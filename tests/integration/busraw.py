# SPDX-License-Identifier: LGPL-2.1-or-later
"""The D-Bus wire protocol by hand (little endian): enough to send anything, pipelined, and to
read the replies. For the hostile tests (hostile-bus.py, daemon-polkit-hostile.sh)."""
import os
import socket
import struct

# Seconds to wait for a reply; tools/test-valgrind raises it (the daemon runs 20-50x slower).
TIMEOUT = float(os.environ.get("BUSRAW_TIMEOUT", "300"))

DEST = b"org.iosched1"
MGR_PATH = b"/org/iosched1"
MGR = b"org.iosched1.Manager"


def align(buf, n):
    buf += b"\0" * ((-len(buf)) % n)


def marshal_str(buf, b):
    align(buf, 4)
    buf += struct.pack("<I", len(b)) + b + b"\0"


def message(serial, member, sig=b"", body=b"", path=MGR_PATH, iface=MGR,
            dest=DEST, msg_type=1, flags=0):
    fields = [(1, b"o", path), (3, b"s", member), (6, b"s", dest)]
    if iface:
        fields.append((2, b"s", iface))
    if sig:
        fields.append((8, b"g", sig))
    buf = bytearray(b"l" + bytes([msg_type, flags, 1]) + struct.pack("<II", len(body), serial))
    buf += b"\0\0\0\0"
    start = len(buf)
    for code, s, v in fields:
        align(buf, 8)
        buf += bytes([code, len(s)]) + s + b"\0"
        if s == b"g":
            buf += bytes([len(v)]) + v + b"\0"
        else:
            marshal_str(buf, v)
    struct.pack_into("<I", buf, 12, len(buf) - start)
    align(buf, 8)
    return bytes(buf + body)


def body_str(*strings):
    buf = bytearray()
    for s in strings:
        marshal_str(buf, s)
    return bytes(buf)


class Raw:
    """A connection to the bus by hand: EXTERNAL auth, Hello, then anything."""

    def __init__(self):
        addr = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
        path = addr.split("path=", 1)[1].split(",")[0]
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
        line = self._line()
        if not line.startswith(b"OK"):
            raise RuntimeError("auth: %r" % line)
        self.s.sendall(b"BEGIN\r\n")
        self.buf = b""
        self.serial = 1
        self.s.sendall(message(1, b"Hello", path=b"/org/freedesktop/DBus",
                               iface=b"org.freedesktop.DBus", dest=b"org.freedesktop.DBus"))
        self.read_message()

    def _line(self):
        out = b""
        while not out.endswith(b"\r\n"):
            c = self.s.recv(1)
            if not c:
                raise RuntimeError("closed during auth")
            out += c
        return out

    def send(self, member, sig=b"", body=b"", **kw):
        self.serial += 1
        self.s.sendall(message(self.serial, member, sig, body, **kw))
        return self.serial

    def read_message(self, timeout=None):
        """-> (type, reply_serial, error_name) or None when the bus closed the connection."""
        self.s.settimeout(timeout if timeout is not None else TIMEOUT)
        while True:
            if len(self.buf) >= 16:
                body_len, = struct.unpack_from("<I", self.buf, 4)
                flen, = struct.unpack_from("<I", self.buf, 12)
                hlen = 16 + flen + ((-(16 + flen)) % 8)
                if len(self.buf) >= hlen + body_len:
                    m, self.buf = self.buf[:hlen + body_len], self.buf[hlen + body_len:]
                    return self._parse(m, flen)
            try:
                chunk = self.s.recv(1 << 16)
            except (ConnectionResetError, BrokenPipeError):
                chunk = b""
            if not chunk:
                return None
            self.buf += chunk

    @staticmethod
    def _parse(m, flen):
        mtype = m[1]
        off, end = 16, 16 + flen
        reply_serial, err = None, None
        while off < end:
            off += (-off) % 8
            code, slen = m[off], m[off + 1]
            sig = m[off + 2:off + 2 + slen]
            off += 3 + slen
            if sig in (b"s", b"o"):
                off += (-off) % 4
                n, = struct.unpack_from("<I", m, off)
                val = m[off + 4:off + 4 + n]
                off += 5 + n
                if code == 4:
                    err = val.decode("utf-8", "replace")
            elif sig == b"g":
                n = m[off]
                off += 2 + n
            elif sig == b"u":
                off += (-off) % 4
                val, = struct.unpack_from("<I", m, off)
                off += 4
                if code == 5:
                    reply_serial = val
            else:
                break
        return mtype, reply_serial, err

    def close(self):
        self.s.close()


def setpolicy_body(name, entries, runtime=True):
    """SetPolicy's body by hand: entries are (key bytes, value string bytes); duplicates and
    any number of them allowed."""
    buf = bytearray(body_str(name))
    align(buf, 4)
    at = len(buf)
    buf += b"\0\0\0\0"
    align(buf, 8)
    start = len(buf)
    for key, value in entries:
        align(buf, 8)
        marshal_str(buf, key)
        buf += b"\x01s\0"
        marshal_str(buf, value)
    struct.pack_into("<I", buf, at, len(buf) - start)
    align(buf, 4)
    buf += struct.pack("<I", 1 if runtime else 0)
    return bytes(buf)
