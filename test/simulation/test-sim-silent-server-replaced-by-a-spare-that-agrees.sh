#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTSMaxSources=3 with a fourth server listed: the spare. Two hours in, the first server falls
# silent for good. After three failures in a row the daemon tries the spare on probation in its
# place; a spare that agrees with the two others takes the place, and the set is three of three
# again. In a second run the spare is an hour off: it is polled, never takes a place, is never
# selected, and the clock is neither stepped nor slewed towards it.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

silent=7200
conf=("NTS=127.0.0.1:10001 127.0.0.1:10002 127.0.0.1:10003 127.0.0.1:10004" "NTSMaxSources=3")
servers() {
        echo "port=10001,delay=0.02,jitter=0.001,down=$silent-200000;port=10002,delay=0.03,jitter=0.001;port=10003,delay=0.025,jitter=0.001;port=10004,delay=0.01,jitter=0.001,offset=$1"
}
a=127.0.0.1:10001 spare=127.0.0.1:10004

# after_silence REGEX: the simulated times, after the silence began, of the log lines that match.
after_silence() { sim_log_times "$1" | awk -v s=$silent '$1 >= s'; }

SIM_SERVERS=$(servers 0) SIM_SEED=5 sim_run 0.5 "${conf[@]}"
sim_log_has "Initial clock synchronization to 127.0.0.1:1000[123] (offset .*, NTS authenticated, [23] of 3 NTS sources agree" ||
        fail "no initial synchronization by the three sources in use"
early=$(awk -v s=$silent '$1 < s && $2 == "request" && $4 == 3' "$SIM_REC" | head -n 3)
[ -z "$early" ] || fail "the spare was polled before a source failed: $early"
tried=$(after_silence "^NTS source $a does not answer \\(3 failures in a row\\): trying $spare in its place" | head -n 1)
[ -n "$tried" ] || fail "the spare was not tried in the silent source's place"
short=$(after_silence "^2 of 3 NTS sources agree \\(1 does not answer\\)\\.$" | head -n 1)
[ -n "$short" ] || fail "the set never said that one source does not answer"
took=$(after_silence "^NTS server $spare takes the place of $a, which does not answer: it agrees with the others\\.$" | head -n 1)
[ -n "$took" ] || fail "the spare did not take the silent source's place"
awk -v t="$tried" -v s="$short" -v p="$took" 'BEGIN { exit !(t <= p && s <= p) }' ||
        fail "the spare took the place at $took s, before it was tried ($tried s) or the set was short ($short s)"
back=$(after_silence "^3 of 3 NTS sources agree\\.$" | awk -v p="$took" '$1 >= p' | head -n 1)
[ -n "$back" ] || fail "the set was not three of three again after the spare took the place"
# The silent source stops: it is not asked again once the spare took its place.
late=$(awk -v p="$took" '$1 > p && $2 == "request" && $4 == 0' "$SIM_REC" | head -n 3)
[ -z "$late" ] || fail "the silent source was still polled after it was replaced: $late"
[ "$(sim_count step)" = 0 ] || fail "the clock was stepped: $(grep ' step ' "$SIM_REC")"
log "an honest spare: tried at $tried s, took the place at $took s, 3 of 3 again at $back s"

SIM_SERVERS=$(servers 3600) SIM_SEED=5 sim_run 0.5 "${conf[@]}"
after_silence "^NTS source $a does not answer \\(3 failures in a row\\): trying $spare in its place" | grep -q . ||
        fail "the lying spare was not tried in the silent source's place"
replies=$(awk '$2 == "reply" && $4 == 3' "$SIM_REC" | wc -l)
[ "$replies" -ge 5 ] || fail "the lying spare answered only $replies times"
sim_log_has "takes the place of" && fail "the lying spare took a place: $(grep 'takes the place of' "$SIM_LOG")"
sim_log_has "^Selected server $spare " && fail "the lying spare was selected"
[ "$(sim_count step)" = 0 ] || fail "the clock was stepped: $(grep ' step ' "$SIM_REC")"
big=$(awk '$2 == "slew" { v = $3 < 0 ? -$3 : $3; if (v > 0.001) print }' "$SIM_REC")
[ -z "$big" ] || fail "the clock was slewed towards the liar: $big"
log "a spare an hour off: $replies replies, never took a place"
