#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""UDP relay that damages traffic like tc netem: loss, delay with jitter, reordering,
duplication and corruption, in both directions. For kernels without sch_netem.

    fault-proxy.py --listen HOST:PORT --upstream HOST:PORT [--loss P] [--delay MS]
                   [--jitter MS] [--reorder P --reorder-delay MS] [--duplicate P]
                   [--corrupt P] [--seed N] [--stats FILE] [--max-seconds S]

Every client address gets its own upstream socket, so replies find their way back. A fixed
seed makes the sequence of decisions reproducible. Prints READY once it listens; exits after
--max-seconds (a bound, so that a forgotten relay cannot outlive its test)."""

import argparse
import heapq
import os
import random
import select
import socket
import sys
import time


def hostport(s):
    host, _, port = s.rpartition(":")
    return host.strip("[]"), int(port)


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


class Relay:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.listen = socket.socket(family(a.listen[0]), socket.SOCK_DGRAM)
        self.listen.bind(a.listen)
        self.upstream = {}  # client address -> socket towards the server
        self.client_of = {}  # fileno of an upstream socket -> client address
        self.queue = []  # (due, seq, socket, data, address)
        self.seq = 0
        self.stats = dict.fromkeys(
            ("received", "sent", "dropped", "delayed", "reordered", "duplicated", "corrupted"), 0)

    def write_stats(self):
        if self.a.stats:
            with open(self.a.stats + ".tmp", "w") as f:
                f.writelines(f"{k}={v}\n" for k, v in self.stats.items())
            # a rename: readers never see half a file
            os.replace(self.a.stats + ".tmp", self.a.stats)

    def schedule(self, sock, data, addr, due):
        self.seq += 1
        heapq.heappush(self.queue, (due, self.seq, sock, data, addr))

    def damage(self, sock, data, addr):
        a, rng, now = self.a, self.rng, time.monotonic()
        self.stats["received"] += 1
        if rng.random() < a.loss:
            self.stats["dropped"] += 1
            return
        copies = 2 if rng.random() < a.duplicate else 1
        if copies == 2:
            self.stats["duplicated"] += 1
        for i in range(copies):
            d = bytearray(data)
            if d and rng.random() < a.corrupt:
                d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
                self.stats["corrupted"] += 1
            delay = a.delay + (rng.uniform(-a.jitter, a.jitter) if a.jitter else 0)
            if a.reorder and rng.random() < a.reorder:
                delay += a.reorder_delay
                self.stats["reordered"] += 1
            if delay > 0:
                self.stats["delayed"] += 1
            self.schedule(sock, bytes(d), addr, now + max(delay, 0) / 1000 + i * 0.001)

    def upstream_for(self, client):
        s = self.upstream.get(client)
        if not s:
            s = socket.socket(family(self.a.upstream[0]), socket.SOCK_DGRAM)
            s.connect(self.a.upstream)
            self.upstream[client] = s
            self.client_of[s.fileno()] = client
        return s

    def run(self):
        print("READY", flush=True)
        end = time.monotonic() + self.a.max_seconds
        while time.monotonic() < end:
            now = time.monotonic()
            while self.queue and self.queue[0][0] <= now:
                _, _, sock, data, addr = heapq.heappop(self.queue)
                try:
                    if addr:
                        sock.sendto(data, addr)
                    else:
                        sock.send(data)
                    self.stats["sent"] += 1
                except OSError:
                    pass
            timeout = min(self.queue[0][0] - now if self.queue else 0.5, 0.5)
            socks = [self.listen] + list(self.upstream.values())
            ready, _, _ = select.select(socks, [], [], max(timeout, 0))
            for s in ready:
                try:
                    data, addr = s.recvfrom(65536)
                except OSError:
                    continue  # ICMP errors from a closed server port
                if s is self.listen:
                    self.damage(self.upstream_for(addr), data, None)
                else:
                    self.damage(self.listen, data, self.client_of[s.fileno()])
            self.write_stats()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", type=hostport, required=True)
    p.add_argument("--upstream", type=hostport, required=True)
    p.add_argument("--loss", type=float, default=0)
    p.add_argument("--delay", type=float, default=0, help="ms")
    p.add_argument("--jitter", type=float, default=0, help="ms, uniform +-")
    p.add_argument("--reorder", type=float, default=0)
    p.add_argument("--reorder-delay", type=float, default=0, help="ms added to a reordered packet")
    p.add_argument("--duplicate", type=float, default=0)
    p.add_argument("--corrupt", type=float, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--stats")
    p.add_argument("--max-seconds", type=float, default=600)
    Relay(p.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
