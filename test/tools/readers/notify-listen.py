#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A stand-in for the service manager's notification socket: appends every datagram received
# on the AF_UNIX socket given as argument to the file given as second argument, one per line
# (newlines inside a message become " | "). Runs until killed.
import socket
import sys

sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    print("READY", flush=True)
    while True:
        data = sock.recv(4096)
        out.write(data.decode(errors="replace").replace("\n", " | ") + "\n")
