#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""TCP relay that damages a key exchange the way a bad path does, for kernels without
sch_netem: every chunk is delayed, and cut into pieces of a few bytes, each sent on its own;
the first --reset-connections connections are cut (RST) after --reset-after bytes from the
server, in the middle of the TLS records.

    tcp-fault-proxy.py --listen HOST:PORT --upstream HOST:PORT [--delay MS] [--piece N]
                       [--reset-after N --reset-connections K] [--stats FILE] [--max-seconds S]

Prints READY once it listens; counts connections, bytes and resets in --stats; exits after
--max-seconds (a bound, so that a forgotten relay cannot outlive its test)."""

import argparse
import socket
import struct
import sys
import threading
import time


def hostport(s):
    host, _, port = s.rpartition(":")
    return host.strip("[]"), int(port)


stats = {"connections": 0, "resets": 0, "bytes_up": 0, "bytes_down": 0}
lock = threading.Lock()


def write_stats(path):
    if path:
        with open(path + ".tmp", "w") as f:
            for k, v in stats.items():
                f.write(f"{k}={v}\n")
        import os
        os.replace(path + ".tmp", path)


def pump(src, dst, a, down, cut_after):
    sent = 0
    try:
        while True:
            data = src.recv(4096)
            if not data:
                break
            time.sleep(a.delay / 1000)
            for i in range(0, len(data), a.piece):
                piece = data[i:i + a.piece]
                if cut_after is not None and sent + len(piece) > cut_after:
                    with lock:
                        stats["resets"] += 1
                        write_stats(a.stats)
                    # RST, not FIN: the peer sees a connection reset in the middle of a record.
                    # SHUT_RD first wakes the other direction's thread, blocked in recv() on the
                    # same socket; while it holds the socket, close() would send nothing.
                    for s in (dst, src):
                        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        try:
                            s.shutdown(socket.SHUT_RD)
                        except OSError:
                            pass
                    time.sleep(0.05)
                    for s in (dst, src):
                        s.close()
                    return
                dst.sendall(piece)
                sent += len(piece)
            with lock:
                stats["bytes_down" if down else "bytes_up"] += len(data)
                write_stats(a.stats)
    except OSError:
        pass
    for s in (src, dst):
        try:
            if s.fileno() >= 0 and s.getsockopt(socket.SOL_SOCKET, socket.SO_LINGER) == 0:
                s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client, a, n):
    try:
        up = socket.create_connection(a.upstream)
    except OSError:
        client.close()
        return
    for s in (client, up):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    cut = a.reset_after if n <= a.reset_connections else None
    threading.Thread(target=pump, args=(client, up, a, False, None), daemon=True).start()
    threading.Thread(target=pump, args=(up, client, a, True, cut), daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", type=hostport, required=True)
    p.add_argument("--upstream", type=hostport, required=True)
    p.add_argument("--delay", type=float, default=0)
    p.add_argument("--piece", type=int, default=65536)
    p.add_argument("--reset-after", type=int, default=0)
    p.add_argument("--reset-connections", type=int, default=0)
    p.add_argument("--stats")
    p.add_argument("--max-seconds", type=float, default=600)
    a = p.parse_args()

    ls = socket.socket(socket.AF_INET6 if ":" in a.listen[0] else socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(a.listen)
    ls.listen(16)
    ls.settimeout(1)
    write_stats(a.stats)
    print("READY", flush=True)
    end = time.monotonic() + a.max_seconds
    while time.monotonic() < end:
        try:
            c, _ = ls.accept()
        except socket.timeout:
            continue
        with lock:
            stats["connections"] += 1
            n = stats["connections"]
            write_stats(a.stats)
        serve(c, a, n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
