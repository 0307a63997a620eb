#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One server, one vote on proof (issue 33): three NTS servers, the daemon's clock 5 s behind. The
# first one listed makes a claim: its key exchange names the second one's NTP port (on the
# loopback, where ports tell servers apart) instead of its own, so its requests reach a server
# that cannot read its cookies, and it fails. The claim is a conflict, logged once, not a merge:
# the second keeps its vote, three sources count, and the two that answer agree and set the
# clock. Merged on the NTP address, the second was the first's duplicate, the majority two of
# two, and the claimant that never answers held the clock back for good.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

SIM_SERVERS="port=10001,claim=1;port=10002,delay=0.02;port=10003,delay=0.03" SIM_CLOCK_ERROR=-5 \
        sim_run 0.01 "NTS=127.0.0.1:10001 127.0.0.1:10002 127.0.0.1:10003" "ConnectionRetrySec=1"

text="NTS sources 127.0.0.1:10002 and 127.0.0.1:10001 name one NTP address 127.0.0.1, though their key-exchange servers and certificate keys differ"
[ "$(grep -c -- "$text" "$SIM_LOG")" = 1 ] ||
        fail "the conflict was not logged once: $(grep -c -- "$text" "$SIM_LOG") times"
sim_log_has "is the same server as" && fail "a claim merged two sources: $(grep -m1 "is the same server as" "$SIM_LOG")"
sim_log_has "Initial clock synchronization to 127\.0\.0\.1:1000[23] (offset +5\.[0-9]* s, NTS authenticated, 2 of 3 NTS sources agree" ||
        fail "no synchronization by the two that answer: $(grep -m3 "NTS sources" "$SIM_LOG")"
[ "$(sim_count step)" = 1 ] || fail "$(sim_count step) steps, not one"
awk -v e="$(sim_clock_error)" 'BEGIN { exit !(e < 0.01 && e > -0.01) }' || fail "the clock ends $(sim_clock_error) s off"
[ "$(sim_server_field 0 answered)" = 0 ] || fail "the claimant's own NTP side answered"
echo "result: $(grep -m1 "Initial clock synchronization" "$SIM_LOG")"
