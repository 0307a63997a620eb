#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The only NTS server goes silent for four simulated hours (no NTP answer, no key exchange) and
# comes back. During the outage the daemon keeps asking, at growing intervals and never faster
# than every 30 s; nothing steps or slews the clock. After it the daemon is answered within three hours,
# polls from 32 s upwards again, and is back at 2048 s by the end of the day; no step at all.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

down=21600 up=36000
SIM_SERVERS="port=10001,delay=0.02,jitter=0.001,down=$down-$up" SIM_SEED=3 sim_run 1 "NTS=127.0.0.1:10001"

during=$(awk -v a=$down -v b=$up '$1 >= a && $1 < b && $2 == "request"' "$SIM_REC" | wc -l)
[ "$during" -ge 3 ] || fail "only $during requests during the outage"
[ "$(sim_server_field 0 dropped)" = "$during" ] || fail "$(sim_server_field 0 dropped) requests dropped, $during sent while down"
fast=$(awk -v a=$down -v b=$up '$1 >= a && $1 < b && $2 == "request" { sub("interval=", "", $5); if ($5 + 0 < 30) print }' "$SIM_REC")
[ -z "$fast" ] || fail "the daemon hammered a silent server: $fast"
moved=$(awk -v a=$down -v b=$up '$1 >= a && $1 < b && ($2 == "slew" || $2 == "step")' "$SIM_REC")
[ -z "$moved" ] || fail "the clock was changed with no server answering: $moved"

back=$(awk -v b=$up '$1 >= b && $2 == "reply" { print $1; exit }' "$SIM_REC")
[ -n "$back" ] || fail "no answer after the server came back"
awk -v t="$back" -v b=$up 'BEGIN { exit !(t - b < 3 * 3600) }' || fail "the first answer after the outage came at $back s, $up s was the end"
awk -v t="$back" '$1 > t && $2 == "slew" { n++ } END { exit !(n > 0) }' "$SIM_REC" || fail "no slew after the recovery"
first_after=$(awk -v t="$back" '$1 > t && $2 == "request" { sub("interval=", "", $5); print $5; exit }' "$SIM_REC")
awk -v i="$first_after" 'BEGIN { exit !(i < 64) }' || fail "after the outage the daemon polled again after $first_after s, not from the minimum"
awk -v b=$up '$1 > b && $2 == "request" && $5 ~ /^interval=204[0-9]/ { n++ } END { exit !(n > 0) }' "$SIM_REC" ||
        fail "the poll interval did not grow back to 2048 s"

[ "$(sim_count step)" = 0 ] || fail "the clock was stepped: $(grep ' step ' "$SIM_REC")"
