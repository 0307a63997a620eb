#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Replays the PropertiesChanged signals of org.freedesktop.timesync1.Manager, as
# `busctl monitor --json=short` recorded them from before the daemon started, and checks after
# every signal that the properties describing the selected server agree: without a ServerName
# there is no address, key exchange server, AEAD, cookie or authenticated time; with
# NTSAuthenticated there are a ServerName, a ServerAddress and an NTSKeyExchangeServer.
# Usage: bus-state-check.py MONITOR_JSON_LINES. Prints the states; exits 1 at the first
# contradiction, 2 when nothing was recorded.
import json
import sys

INTERFACE = "org.freedesktop.timesync1.Manager"

state = {
    "ServerName": "",
    "ServerAddress": [0, []],
    "NTSAuthenticated": False,
    "NTSKeyExchangeServer": "",
    "NTSAEAD": "",
    "NTSCookies": 0,
}


def contradiction():
    name, (_, addr) = state["ServerName"], state["ServerAddress"]
    if not name:
        for prop, empty in (("ServerAddress", [0, []]), ("NTSKeyExchangeServer", ""), ("NTSAEAD", ""),
                            ("NTSCookies", 0), ("NTSAuthenticated", False)):
            if state[prop] != empty:
                return f"{prop}={state[prop]!r} without a ServerName"
    if state["NTSAuthenticated"]:
        if not addr:
            return "NTSAuthenticated without a ServerAddress"
        if not state["NTSKeyExchangeServer"]:
            return "NTSAuthenticated without an NTSKeyExchangeServer"
    return None


signals = 0
with open(sys.argv[1]) as f:
    for line in f:
        line = line.strip()
        if not line.startswith("{"):
            continue
        msg = json.loads(line)
        if msg.get("member") != "PropertiesChanged":
            continue
        data = msg["payload"]["data"]
        if data[0] != INTERFACE:
            continue
        signals += 1
        changed = {k: v["data"] for k, v in data[1].items()}
        for k in changed:
            if k in state:
                state[k] = changed[k]
        print(f"signal {signals}: {sorted(changed)} -> {state}")
        bad = contradiction()
        if bad:
            print(f"CONTRADICTION after signal {signals}: {bad}")
            sys.exit(1)

if signals == 0:
    print("no PropertiesChanged signal recorded")
    sys.exit(2)
print(f"{signals} signals, no contradiction")
