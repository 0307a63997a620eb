#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTSMaxSources=3 with a fourth server listed: the spare. Two hours in, the first server falls
# silent for good. After three failures in a row, or three of its poll intervals without an
# answer, whichever comes first, the daemon tries the spare on probation in its place; a spare
# that agrees with the two others takes the place, and the set is three of three again. In a
# second run the spare is an hour off: it is polled, never takes a place, is never selected,
# and the clock is neither stepped nor slewed towards it. In a third, at 1 s polls, four are in
# use, one of them a liar, and an honest one falls silent: the clock is held (2 of 4 answer and
# agree), the spare is tried within three missed polls and the reply timeout whatever the
# silent source's backoff (it took 80 s and more, three failures stretched by retries), takes
# the place at its first answer, never adds a vote while on probation, and the set is 3 of 4
# with the liar a falseticker again.
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
tried=$(after_silence "^NTS source $a does not answer \\([0-9]+ failures? in a row, last answer .* ago\\): trying $spare in its place" | head -n 1)
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
after_silence "^NTS source $a does not answer \\([0-9]+ failures? in a row, last answer .* ago\\): trying $spare in its place" | grep_q . ||
        fail "the lying spare was not tried in the silent source's place"
replies=$(awk '$2 == "reply" && $4 == 3' "$SIM_REC" | wc -l)
[ "$replies" -ge 5 ] || fail "the lying spare answered only $replies times"
sim_log_has "takes the place of" && fail "the lying spare took a place: $(grep 'takes the place of' "$SIM_LOG")"
sim_log_has "^Selected server $spare " && fail "the lying spare was selected"
[ "$(sim_count step)" = 0 ] || fail "the clock was stepped: $(grep ' step ' "$SIM_REC")"
big=$(awk '$2 == "slew" { v = $3 < 0 ? -$3 : $3; if (v > 0.001) print }' "$SIM_REC")
[ -z "$big" ] || fail "the clock was slewed towards the liar: $big"
log "a spare an hour off: $replies replies, never took a place"

# One liar of four, one honest server silent at 1 s polls, a fifth server listed as the spare.
silent=60 liar=127.0.0.1:10004 spare=127.0.0.1:10005
SIM_SERVERS="port=10001,delay=0.02,jitter=0.001,down=$silent-200000;port=10002,delay=0.03,jitter=0.001;port=10003,delay=0.025,jitter=0.001;port=10004,delay=0.01,jitter=0.001,offset=3600;port=10005,delay=0.015,jitter=0.001" \
        SIM_SEED=5 SIM_TEST_POLL=1s sim_run 0.003 "NTS=127.0.0.1:10001 127.0.0.1:10002 127.0.0.1:10003 $liar $spare" "NTSMaxSources=4"
sim_log_has "^Initial clock synchronization to 127.0.0.1:1000[123] " || fail "1 s polls: no first synchronization by the honest servers"
held=$(after_silence "^Only 2 of 4 NTS sources answer and agree, 3 needed \\(1 does not answer\\); clock left alone\\.$" | head -n 1)
[ -n "$held" ] || fail "1 s polls: the clock was not held while one honest server of four was silent"
tried=$(after_silence "^NTS source $a does not answer \\([0-9]+ failures? in a row, last answer .* ago\\): trying $spare in its place" | head -n 1)
[ -n "$tried" ] || fail "1 s polls: the spare was not tried"
# The reply timeout (10 s) after the first missed poll, three polls, and a second of slack.
awk -v t="$tried" -v s=$silent 'BEGIN { exit !(t <= s + 14) }' ||
        fail "1 s polls: the spare was tried at $tried s, $(awk -v t="$tried" -v s=$silent 'BEGIN { print t - s }') s after the silence began"
took=$(after_silence "^NTS server $spare takes the place of $a, which does not answer: it agrees with the others\\.$" | head -n 1)
[ -n "$took" ] || fail "1 s polls: the spare did not take the silent source's place"
awk -v t="$tried" -v p="$took" 'BEGIN { exit !(p >= t && p <= t + 5) }' || fail "1 s polls: the spare took the place at $took s, tried at $tried s"
back=$(after_silence "^3 of 4 NTS sources agree, 1 falseticker\\.$" | awk -v p="$took" '$1 >= p' | head -n 1)
[ -n "$back" ] || fail "1 s polls: the set was not 3 of 4 with the liar a falseticker after the spare took the place"
sim_log_has "NTS sources.* of 5 \\|of 5 NTS" && fail "1 s polls: the spare on probation was counted: $(grep 'of 5' "$SIM_LOG" | head -n 3)"
sim_log_has "^Selected server $liar " && fail "1 s polls: the liar was selected"
[ "$(sim_count step)" = 0 ] || fail "1 s polls: the clock was stepped: $(grep ' step ' "$SIM_REC")"
log "1 s polls, a liar of four: held at $held s, the spare tried at $tried s and took the place at $took s (silence from $silent s)"
