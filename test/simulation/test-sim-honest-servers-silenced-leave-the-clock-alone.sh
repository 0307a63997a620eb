#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An attacker silences three honest NTS servers of four. "start": from the start (no key
# exchange, no reply), with the fourth an hour ahead: it answers within a second and is never
# used; the silent ones count as expected while pending and as in use once they failed, so the
# daemon never synchronizes. "turncoat": four servers tell the truth until, two hours in, three
# fall silent and the fourth, still answering, jumps an hour ahead: the silent ones keep their
# last intervals in the vote, so the turncoat is a falseticker against them and never moves the
# clock.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

liar=127.0.0.1:10004
conf="NTS=127.0.0.1:10001 127.0.0.1:10002 127.0.0.1:10003 $liar"
honest="delay=0.02,jitter=0.001"

# from_log T REGEX: the simulated times, from T on, of the log lines that match REGEX.
from_log() { sim_log_times "$2" | awk -v t="$1" '$1 >= t'; }

# The three silent ones fail, and still count.
assert_silent_fail() {
        local p
        for p in 10001 10002 10003; do
                from_log "$1" "^NTS source 127.0.0.1:$p fails \\(.*\\); it is tried again, and still counts as in use" | grep_q . ||
                        fail "$2: 127.0.0.1:$p did not fail"
        done
}

# The liar's replies go on after T, and nothing of its time reaches the clock.
assert_liar_never_steers() {
        local n big
        n=$(awk -v t="$1" '$1 >= t && $2 == "reply" && $4 == 3' "$SIM_REC" | wc -l)
        [ "$n" -ge 5 ] || fail "$2: the liar answered only $n times"
        [ "$(sim_count step)" = 0 ] || fail "$2: the clock was stepped: $(grep ' step ' "$SIM_REC")"
        from_log "$1" "^Selected server $liar " | grep_q . && fail "$2: the liar was selected"
        big=$(awk -v t="$1" '$1 >= t && $2 == "slew" { v = $3 < 0 ? -$3 : $3; if (v > 0.001) print }' "$SIM_REC")
        [ -z "$big" ] || fail "$2: the clock was slewed towards the liar: $big"
}

SIM_SERVERS="port=10001,$honest,down=0-90000;port=10002,$honest,down=0-90000;port=10003,$honest,down=0-90000;port=10004,$honest,offset=3600" \
        SIM_SEED=11 sim_run 0.25 "$conf"
assert_silent_fail 0 start
text="Only 1 of 4 NTS sources agree, 3 needed (3 do not answer); clock left alone."
[ "$(grep -cxF "$text" "$SIM_LOG")" = 1 ] || fail "start: '$text' was logged $(grep -cxF "$text" "$SIM_LOG") times"
assert_liar_never_steers 0 start
sim_log_has "Initial clock synchronization" && fail "start: the daemon synchronized"
[ ! -e "$(dirname "$SIM_LOG")/runtime/synchronized" ] || fail "start: synchronized flag written"
log "start: $(sim_server_field 3 answered) answers of the liar, no synchronization"

silent=7200 jump=9000
SIM_SERVERS="port=10001,$honest,down=$silent-90000;port=10002,$honest,down=$silent-90000;port=10003,$honest,down=$silent-90000;port=10004,$honest,jump=$jump:3600" \
        SIM_SEED=11 sim_run 0.25 "$conf"
sim_log_has "^Initial clock synchronization to 127.0.0.1:1000[1234] (offset .*, NTS authenticated, [34] of 4 NTS sources agree" ||
        fail "turncoat: no first synchronization while all four told the truth"
assert_silent_fail "$silent" turncoat
from_log "$jump" "^Only 0 of 4 NTS sources answer and agree, 3 needed \\(3 do not answer\\); clock left alone\\.$" | grep_q . ||
        fail "turncoat: the daemon did not say that it leaves the clock alone"
from_log "$jump" "^NTS source $liar is a falseticker" | grep_q . || fail "turncoat: the turncoat is not a falseticker"
assert_liar_never_steers "$jump" turncoat
log "turncoat: $(awk -v t=$jump '$1 >= t && $2 == "reply" && $4 == 3' "$SIM_REC" | wc -l) answers after the jump, no step"
