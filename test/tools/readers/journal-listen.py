#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# journal-listen.py SOCKET OUT: stands in for journald's native socket
# (/run/systemd/journal/socket) in a test's mount namespace. Each datagram (fields "NAME=value",
# one a line; the binary form NAME\n<64-bit length>value\n too) is appended to OUT as one line
# of fields separated by " | ", so that a test can grep one message with its fields. Prints
# READY once bound.
import os
import socket
import struct
import sys


def fields(data):
    out, i = [], 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            out.append(line.decode(errors="replace"))
            i = nl + 1
        else:
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            value = data[nl + 9:nl + 9 + n]
            out.append(line.decode(errors="replace") + "=" + value.decode(errors="replace"))
            i = nl + 9 + n + 1
    return out


def main():
    path, out = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if os.path.exists(path):
        os.unlink(path)
    s.bind(path)
    os.chmod(path, 0o666)
    print("READY", flush=True)
    with open(out, "a", encoding="utf-8") as f:
        while True:
            data = s.recv(1 << 20)
            f.write(" | ".join(fields(data)) + "\n")
            f.flush()


main()
