#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Keys over weeks. With one honest server for 15 simulated days the daemon renews its NTS keys
# before they are a week old, at a random time in the last day before that limit (another seed,
# another time), and polls on through each renewal without a gap: the renewal runs on its own
# timer between two requests, not instead of one, and the source keeps its address and its
# poll interval (no new start at 32 s after it). A server that changes its
# cookie key (so that the cookies the daemon holds earn an NTS NAK) gets a new key exchange
# after each change, and the clock is never stepped.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

day=86400
declare -a renewals
for seed in 1 2; do
        SIM_SERVERS="port=10001,delay=0.02,jitter=0.001" SIM_SEED=$seed sim_run 15 "NTS=127.0.0.1:10001"
        [ "$(sim_server_field 0 ke_sessions)" = 3 ] || fail "seed $seed: $(sim_server_field 0 ke_sessions) key exchanges in 15 days, not 3"
        [ "$(sim_server_field 0 ke_connects)" = 3 ] || fail "seed $seed: $(sim_server_field 0 ke_connects) connections for 3 key exchanges"
        # Each renewal 6 to 7 days after the key exchange before it.
        awk -v d=$day '$2 == "ke-connect" { if (n++ && ($1 - prev < 6 * d || $1 - prev > 7 * d)) { print $1 - prev; bad = 1 } prev = $1 }
                       END { exit bad }' "$SIM_REC" || fail "seed $seed: a renewal outside the last day before a week"
        sim_log_has "Renewing the NTS keys of 127.0.0.1:10001" || fail "seed $seed: the renewal is not logged"
        max=$(awk '$2 == "request" { sub("interval=", "", $5); if ($5 + 0 > m) m = $5 + 0 } END { print m }' "$SIM_REC")
        awk -v m="$max" 'BEGIN { exit !(m < 2100) }' || fail "seed $seed: a gap of $max s between requests"
        # After the first day the poll interval is at its longest (2048 s), and stays there.
        min=$(awk -v d=$day '$2 == "request" && $1 > d { sub("interval=", "", $5); if (m == "" || $5 + 0 < m) m = $5 + 0 } END { print m }' "$SIM_REC")
        awk -v m="$min" 'BEGIN { exit !(m > 2000) }' || fail "seed $seed: the renewal restarted the source (a poll interval of $min s after day 1)"
        [ "$(sim_count step)" = 0 ] || fail "seed $seed: the clock was stepped"
        renewals[seed]=$(awk '$2 == "ke-connect" { printf "%s ", $1 }' "$SIM_REC")
done
[ "${renewals[1]}" != "${renewals[2]}" ] || fail "two seeds renewed at the same times: ${renewals[1]}"

# The server's cookie key changes every 100000 s: each change costs one NAK and one key exchange.
SIM_SERVERS="port=10001,delay=0.02,rotate=100000" SIM_SEED=5 sim_run 4 "NTS=127.0.0.1:10001"
[ "$(sim_server_field 0 key_changes)" = 3 ] || fail "the server changed its key $(sim_server_field 0 key_changes) times, not 3"
[ "$(sim_server_field 0 ke_sessions)" = 4 ] || fail "$(sim_server_field 0 ke_sessions) key exchanges for 3 key changes, not 4"
awk '$2 == "server" && $4 == "cookie" { changed = $1 } $2 == "ke-connect" && changed { print $1 - changed; changed = 0 }' "$SIM_REC" |
        awk '$1 > 2 * 2048 + 600 { bad = 1 } END { exit bad }' || fail "a key exchange came long after a key change"
[ "$(sim_server_field 0 naks)" -ge 3 ] || fail "only $(sim_server_field 0 naks) NAKs for 3 key changes"
[ "$(sim_count step)" = 0 ] || fail "the clock was stepped"
