#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The agreement rule over half a simulated day: four NTS servers, the fastest one 2 s off (an
# authentic liar). While all answer, three agree and the liar is named a falseticker. Three
# hours in, the three honest ones fall silent for good: the liar alone keeps
# answering, and the clock is neither stepped nor slewed towards it; the daemon says it is left
# alone. Its samples unused, the liar is polled less and less often, as an honest server is:
# not every 32 s for as long as it lies, which for a pool member wrong by seconds would be the
# whole fleet's load.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

silent=10800
SIM_SERVERS="port=10001,delay=0.02,down=$silent-90000;port=10002,delay=0.03,down=$silent-90000;port=10003,delay=0.025,down=$silent-90000;port=10004,delay=0.01,offset=2" \
        SIM_SEED=13 sim_run 0.5 "NTS=127.0.0.1:10001 127.0.0.1:10002 127.0.0.1:10003 127.0.0.1:10004"

sim_log_has "NTS source 127.0.0.1:10004 is a falseticker" || fail "the liar was not named a falseticker"
sim_log_has "3 of 4 NTS sources agree" || fail "the three honest servers never agreed"
alone=$(sim_log_times "NTS sources answer and agree.*clock left alone" | awk -v s=$silent '$1 >= s' | head -n 1)
[ -n "$alone" ] || fail "the daemon did not say that it leaves the clock alone after the silence"
[ "$(sim_count step)" = 0 ] || fail "the clock was stepped: $(grep ' step ' "$SIM_REC")"
liar_after=$(awk -v s=$silent '$1 >= s && $2 == "reply" && $4 == 3' "$SIM_REC" | wc -l)
[ "$liar_after" -ge 10 ] || fail "the liar answered only $liar_after times after the others fell silent"
# Slews after the silence only follow what is left of honest measurements: tiny.
big=$(awk -v s=$silent '$1 >= s && $2 == "slew" { v = $3 < 0 ? -$3 : $3; if (v > 0.001) print }' "$SIM_REC")
[ -z "$big" ] || fail "the clock was slewed towards the liar: $big"
awk -v e="$(sim_clock_error)" 'BEGIN { exit !(e < 0.001 && e > -0.001) }' ||
        fail "the clock ends $(sim_clock_error) s off"
liar_requests=$(awk '$2 == "request" && $3 == "server" && $4 == 3' "$SIM_REC" | wc -l)
longest=$(awk '$2 == "request" && $3 == "server" && $4 == 3 { i = substr($5, 10) + 0; if (i > m) m = i } END { print m + 0 }' "$SIM_REC")
[ "$liar_requests" -le 60 ] || fail "the falseticker was polled $liar_requests times in half a day"
awk -v m="$longest" 'BEGIN { exit !(m >= 2048) }' || fail "the falseticker's poll interval never reached 2048 s: $longest s"
