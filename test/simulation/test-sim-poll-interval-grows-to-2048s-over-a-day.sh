#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One honest NTS server over a simulated day: the poll interval doubles from its minimum to the
# maximum of 2048 s within two hours and stays there; the clock, 5 ms off at the start, is
# slewed, never stepped, and every slew is the clock's error as it is (the fake clock records
# slews, it does not apply them) to within a millisecond; one key exchange serves the whole day.
# A second run with the same seed gives the same record, line for line.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

export SIM_SERVERS="port=10001,delay=0.02,jitter=0.001" SIM_CLOCK_ERROR=0.005 SIM_SEED=7
sim_run 1 "NTS=127.0.0.1:10001"
first=$SIM_REC

# The intervals between requests, in order (the first request has none).
intervals=$(awk '$2 == "request" && $5 != "interval=0.000" { sub("interval=", "", $5); print $5 }' "$SIM_REC")
max=$(sort -n <<<"$intervals" | tail -n 1)
awk -v m="$max" 'BEGIN { exit !(m >= 2048 && m < 2048 * 1.05) }' ||
        fail "the largest poll interval is $max s, not 2048 s"
# Doubling: never more than twice the interval before, and never shorter than it.
awk 'NR > 1 && ($1 > 2.05 * prev || $1 < 0.95 * prev) { print "interval " $1 " after " prev; bad = 1 }
     { prev = $1 } END { exit bad }' <<<"$intervals" || fail "the poll interval did not grow step by step"
at_max=$(awk '$2 == "request" && $5 ~ /^interval=204[0-9]/' "$SIM_REC" | head -n 1 | cut -d' ' -f1)
awk -v t="$at_max" 'BEGIN { exit !(t > 0 && t < 2 * 3600) }' || fail "2048 s was reached at $at_max s, not within 2 h"
long=$(awk '$2 == "request" && $5 ~ /^interval=204[0-9]/' "$SIM_REC" | wc -l)
[ "$long" -ge 38 ] || fail "only $long requests at 2048 s"

[ "$(sim_count step)" = 0 ] || fail "the clock was stepped: $(grep ' step ' "$SIM_REC")"
[ "$(sim_count slew)" -gt 10 ] || fail "the clock was slewed only $(sim_count slew) times"
awk -v e="$SIM_CLOCK_ERROR" '$2 == "slew" && ($3 + e > 0.001 || $3 + e < -0.001) { print; bad = 1 } END { exit bad }' "$SIM_REC" ||
        fail "a slew is not the clock's error of $SIM_CLOCK_ERROR s"
[ "$(sim_server_field 0 ke_sessions)" = 1 ] || fail "$(sim_server_field 0 ke_sessions) key exchanges in a day"

sim_run 1 "NTS=127.0.0.1:10001"
cmp -s "$first" "$SIM_REC" || fail "the same seed gave another run: $(diff "$first" "$SIM_REC" | head -n 10)"
