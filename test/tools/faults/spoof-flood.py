#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Floods an NTP client with forged server replies, from inside a test's network namespace.

    spoof-flood.py --server HOST:PORT --client-port PORT --seconds S [--blind-rate N]
                   [--per-request N] [--stats FILE]

Two kinds of forgery, both with the server's address as source (raw IPv4 socket):
 - blind: random origin timestamps, N per second (an off-path attacker guessing);
 - on-path: it sniffs the client's requests on lo and, for each one, answers at once with
   --per-request replies that echo the right origin timestamp, half with a wrong Unique
   Identifier, half with the right one and a garbage authenticator.
Counts what it sent in --stats. Needs root and a namespace of its own: it sees all of lo."""

import argparse
import os
import random
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
EF_UID, EF_COOKIE, EF_AUTH = 0x0104, 0x0204, 0x0404


def hostport(s):
    host, _, port = s.rpartition(":")
    return host, int(port)


def ef(t, body):
    body += bytes(-len(body) % 4)
    return struct.pack("!HH", t, 4 + len(body)) + body


def reply(origin, extra=b""):
    now = int(time.time()) + 2208988800
    ts = struct.pack("!II", now & 0xFFFFFFFF, random.getrandbits(32))
    # LI 0, version 4, mode 4; stratum 1, poll 4, precision -20; root delay/dispersion; refid
    hdr = struct.pack("!BBbbII4s", 0x24, 1, 4, -20, 0, 0, b"GPS\0")
    return hdr + ts + origin + ts + ts + extra


def udp_ip(src, dst, payload):
    udp = struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), random.getrandbits(16), 0, 64,
                     socket.IPPROTO_UDP, 0, socket.inet_aton(src[0]), socket.inet_aton(dst[0]))
    return ip + udp


def parse_request(frame, server, client_port):
    """Returns (origin, uid) of a client request in an lo frame, or None."""
    ip = frame[14:]
    if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != socket.IPPROTO_UDP:
        return None
    ihl = (ip[0] & 15) * 4
    sport, dport = struct.unpack("!HH", ip[ihl:ihl + 4])
    if socket.inet_ntoa(ip[16:20]) != server[0] or dport != server[1] or sport != client_port:
        return None
    ntp = ip[ihl + 8:]
    if len(ntp) < 48 or ntp[0] & 7 != 3:
        return None
    uid, off = None, 48
    while off + 4 <= len(ntp):
        t, length = struct.unpack("!HH", ntp[off:off + 4])
        if length < 4:
            break
        if t == EF_UID:
            uid = ntp[off + 4:off + length]
        off += length
    return ntp[40:48], uid


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--server", type=hostport, required=True)
    p.add_argument("--client-port", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--blind-rate", type=int, default=2000)
    p.add_argument("--per-request", type=int, default=100)
    p.add_argument("--stats")
    a = p.parse_args()

    client = ("127.0.0.1", a.client_port)
    send = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sniff.bind(("lo", 0))
    stats = {"blind": 0, "wrong_uid": 0, "bad_auth": 0, "requests_seen": 0}
    print("READY", flush=True)

    end = time.monotonic() + a.seconds
    next_blind = next_stats = time.monotonic()
    while time.monotonic() < end:
        ready, _, _ = select.select([sniff], [], [], 0.001)
        if ready:
            frame, info = sniff.recvfrom(65536)
            # Each frame shows up twice on lo (outgoing and incoming): take the outgoing copy.
            req = parse_request(frame, a.server, a.client_port) if info[2] == socket.PACKET_OUTGOING else None
            if req:
                origin, uid = req
                stats["requests_seen"] += 1
                auth = ef(EF_AUTH, struct.pack("!HH", 16, 32) + os.urandom(48))
                for i in range(a.per_request):
                    if i % 2 or uid is None:
                        body = ef(EF_UID, os.urandom(32)) + auth
                        stats["wrong_uid"] += 1
                    else:
                        body = ef(EF_UID, uid) + auth
                        stats["bad_auth"] += 1
                    send.sendto(udp_ip(a.server, client, reply(origin, body)), (client[0], 0))
        now = time.monotonic()
        # Behind by more than a second (a slow machine): skip, do not burst.
        next_blind = max(next_blind, now - 1)
        while next_blind <= now:
            send.sendto(udp_ip(a.server, client, reply(os.urandom(8))), (client[0], 0))
            stats["blind"] += 1
            next_blind += 1 / a.blind_rate
        if a.stats and now >= next_stats:
            next_stats = now + 0.5
            with open(a.stats + ".tmp", "w") as f:
                f.writelines(f"{k}={v}\n" for k, v in stats.items())
            os.replace(a.stats + ".tmp", a.stats)


if __name__ == "__main__":
    sys.exit(main())
