#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A liar that drifts slowly away, among three honest NTS servers, over a simulated day: its
# clock runs 1000 ppm fast (1 ms per second), so it starts with the truth, leaves the honest
# intervals within its first polls and is more than a minute off at the end. It becomes a
# falseticker once and stays one, is never selected, the clock is never stepped, and no slew
# the daemon asks for reaches beyond the honest intervals: the liar does not drag the clock
# along, however slowly it goes.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

SIM_SERVERS="port=10001,delay=0.02,jitter=0.001;port=10002,delay=0.03,jitter=0.001;port=10003,delay=0.025,jitter=0.001;port=10004,delay=0.01,jitter=0.001,freq=1000" \
        SIM_SEED=21 sim_run 1 "NTS=127.0.0.1:10001 127.0.0.1:10002 127.0.0.1:10003 127.0.0.1:10004"
liar=127.0.0.1:10004

sim_log_has "Initial clock synchronization to 127.0.0.1:1000[123] (offset .*, NTS authenticated, [34] of 4 NTS sources agree" ||
        fail "no initial synchronization by the honest servers: $(grep -m1 'Initial clock' "$SIM_LOG")"
# The liar's NTP port, from its key exchange: its replies in the log are named by it.
liar_ntp=$(sed -n "s/^NTS key exchange with $liar (.*) done: .*, NTP server 127\.0\.0\.1 port \([0-9]*\)\.$/\1/p" "$SIM_LOG" | head -n 1)
[ -n "$liar_ntp" ] || fail "no key exchange with the liar"

# slew count reach last-liar-offset: the largest slew the daemon asked for, the number of
# slews, how far the honest intervals reached from the system clock (the largest |offset| +
# delay of an honest reply that was not a spike: the delay alone is more than the root distance
# of a reply from these servers) and the liar's last offset.
read -r slew n reach liar_offset < <(awk -v p="$liar_ntp" '
        $2 == "slew" { v = $3 < 0 ? -$3 : $3; if (v > s) s = v; n++ }
        END { printf "%.6f %d ", s, n }' "$SIM_REC"
        awk -v p="127.0.0.1:$liar_ntp:" '
        /^NTP reply from 127\.0\.0\.1:[0-9]*: stratum/ {
                o = $8 + 0; d = $11 + 0
                if ($4 == p) { last = o; next }
                if (/\(spike\)/) next
                r = (o < 0 ? -o : o) + d; if (r > reach) reach = r }
        END { printf "%.6f %+.6f\n", reach, last }' "$SIM_LOG")
awk -v o="$liar_offset" 'BEGIN { exit !(o > 60) }' || fail "the liar ended $liar_offset s off, not more than a minute"
[ "$(sim_count step)" = 0 ] || fail "the clock was stepped: $(grep ' step ' "$SIM_REC")"
[ "$n" -gt 20 ] || fail "only $n slews"
awk -v s="$slew" -v r="$reach" 'BEGIN { exit !(s <= r) }' ||
        fail "a slew of $slew s left the honest intervals (they reach $reach s)"
[ "$(grep -c "^NTS source $liar is a falseticker" "$SIM_LOG")" = 1 ] ||
        fail "the falseticker verdict flipped: $(grep "^NTS source $liar" "$SIM_LOG")"
grep "is a falseticker" "$SIM_LOG" | grep -v "^NTS source $liar " && fail "an honest server was a falseticker"
sim_log_has "^Selected server $liar " && fail "the liar was selected"
last=$(grep "NTS sources agree" "$SIM_LOG" | tail -n 1)
[ "$last" = "3 of 4 NTS sources agree, 1 falseticker." ] || fail "at the end the daemon says '$last'"
log "the liar ended $liar_offset s off, a falseticker; $n slews, the largest $slew s, honest intervals within $reach s; no step"
