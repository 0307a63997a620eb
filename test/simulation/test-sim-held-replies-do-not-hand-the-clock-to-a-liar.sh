#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A delay attack with one authentic liar (issue 33, point 2). Three honest NTS servers whose
# replies an attacker on the path holds D seconds: each says the offset -D/2 with the interval
# [-D, 0]. A fourth server, an authentic liar, answers at once with an offset just inside it
# and a tight interval. Its interval is the intersection of all four; weighted by root distance
# and clamped into it, the combination used to be the liar's word: D = 1.5 s stepped the clock
# by -1.44 s, D = 9 s by -8.89 s. The bound (docs/NTS.md, "Delay attacks"): a delay above 3 s
# is never time, so nothing moves; up to that, the liar is one vote of those that agree, never
# more than a tight interval of a minority counts (nor is it named as the source followed), and
# the clock moves by at most D/2 + D/6 = 2D/3 with four servers (three agree before the fourth
# is in). After the first synchronization, a delay that jumps far above a source's recent
# minimum is refused and said once per source, at warning level; the clock is left alone until
# the delay has lasted a whole window of samples (then it is the path's, and the same bound
# holds).
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

conf="NTS=127.0.0.1:10001 127.0.0.1:10002 127.0.0.1:10003 127.0.0.1:10004"
liar=127.0.0.1:10004

# held D AT: the honest servers' replies are held D seconds from second AT on; the liar answers
# at once, D - D/30 seconds behind (inside the honest intervals).
held() {
        local d=$1 at=$2 x
        x=$(awk -v d="$d" 'BEGIN { printf "%.3f", -d + d / 30 }')
        SIM_SERVERS="port=10001,delay=0.02,jitter=0.001,hold=$at:$d;port=10002,delay=0.03,jitter=0.001,hold=$at:$d;port=10003,delay=0.025,jitter=0.001,hold=$at:$d;port=10004,delay=0.01,jitter=0.001,offset=$x" \
                SIM_SEED=3 sim_run 0.25 "$conf"
}

# largest_move: the largest step or slew of the run, in seconds (absolute).
largest_move() {
        awk '$2 == "step" || $2 == "slew" { v = $3 < 0 ? -$3 : $3; if (v > m) m = v } END { printf "%.6f\n", m }' "$SIM_REC"
}

# moves_at_most BOUND WHAT: and the liar is never named as the source followed.
moves_at_most() {
        local m
        sim_log_has "^Selected server $liar " && fail "$2: the liar was selected: $(grep "^Selected server $liar " "$SIM_LOG" | head -n 1)"
        m=$(largest_move)
        awk -v m="$m" -v b="$1" 'BEGIN { exit !(m <= b) }' || fail "$2: the clock moved by $m s, more than $1 s: $(grep -E ' (step|slew) ' "$SIM_REC" | head -n 5)"
        log "$2: largest move $m s (bound $1 s)"
}

# From the start, D = 1.5 s: the liar is one of three, then four, votes. 2D/3 = 1 s, and the
# honest intervals are a few milliseconds wider than D/2.
held 1.5 0
sim_log_has "^Initial clock synchronization" || fail "D = 1.5 s from the start: the honest servers gave no time at all"
moves_at_most 1.03 "D = 1.5 s from the start"

# From the start, D = 9 s: no sample is time; nothing moves, and each source says why.
held 9 0
[ "$(sim_count step)" = 0 ] || fail "D = 9 s from the start: the clock was stepped: $(grep ' step ' "$SIM_REC")"
moves_at_most 0.001 "D = 9 s from the start"
for p in 10001 10002 10003; do
        sim_log_has "^NTS source 127.0.0.1:$p: its delay of 9\\.[0-9]* s is above 3 s; its samples are not used" ||
                fail "D = 9 s from the start: no warning of 127.0.0.1:$p's delay"
done
sim_log_has "^Only 1 of 4 NTS sources agree, 3 needed; clock left alone\\.$" ||
        fail "D = 9 s from the start: the daemon did not say that it leaves the clock alone"

# After the first synchronization, an hour in: the jump is refused and said; the clock is left
# alone while the delays are not the path's yet.
for d in 1.5 9; do
        held "$d" 3600
        sim_log_has "^Initial clock synchronization to 127.0.0.1:1000[123] " ||
                fail "D = $d s after synchronization: no first synchronization by the honest servers"
        for p in 10001 10002 10003; do
                n=$(grep -c "^NTS source 127.0.0.1:$p: its delay \\(jumped to\\|of 9\\.[0-9]* s is above 3 s\\)" "$SIM_LOG" || true)
                [ "$n" = 1 ] || fail "D = $d s after synchronization: 127.0.0.1:$p's delay was said $n times, not once"
        done
        learnt=$(sim_log_times "^NTS source 127.0.0.1:1000[123]: its delay \\([0-9.]* s\\) is trusted again" | head -n 1)
        held_until=${learnt:-1e9}
        early=$(awk -v t="$held_until" '$1 >= 3600 && $1 < t && ($2 == "step" || ($2 == "slew" && ($3 > 0.001 || $3 < -0.001)))' "$SIM_REC")
        [ -z "$early" ] || fail "D = $d s after synchronization: the clock moved before the delays were learnt: $early"
        if [ "$d" = 9 ]; then
                moves_at_most 0.001 "D = 9 s after synchronization"
        else
                moves_at_most 1.03 "D = 1.5 s after synchronization (delays learnt at ${learnt:-never} s)"
        fi
done
