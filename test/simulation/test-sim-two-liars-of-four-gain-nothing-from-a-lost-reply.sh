#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Two liars that agree with each other, an hour ahead, and two honest NTS servers: 2 against 2,
# the clock left alone. One honest server falls silent for two hours, long enough to fail: the
# vote stays 2 against 2 (its last interval still counts), nothing is stepped, no liar is
# selected, and the liars are never a majority of those that answer. When the silence comes:
# "vote" once the four disagree; "start" from the start, so that the honest server has never
# answered; "sync" after the first synchronization, which all four gave with the truth before
# the two liars jumped an hour ahead: a step then needs the full quorum, not the three that
# still answer. Each time the silent server answers again afterwards.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

a=127.0.0.1:10001 l1=127.0.0.1:10003 l2=127.0.0.1:10004
conf="NTS=$a 127.0.0.1:10002 $l1 $l2"

# from_log T REGEX: the simulated times, from T on, of the log lines that match REGEX.
from_log() { sim_log_times "$2" | awk -v t="$1" '$1 >= t'; }

# two_liars WHEN: one run, and what holds in each.
two_liars() {
        local when=$1 liars="offset=3600" down=7200-14400 cut=0 up n
        case $when in
        start) down=0-10800 ;;
        sync) liars="jump=3600:3600" ;;
        esac
        up=${down#*-}
        SIM_SERVERS="port=10001,delay=0.02,jitter=0.001,down=$down;port=10002,delay=0.03,jitter=0.001;port=10003,delay=0.025,jitter=0.001,$liars;port=10004,delay=0.01,jitter=0.001,$liars" \
                SIM_SEED=7 sim_run 0.25 "$conf"

        case $when in
        start)
                from_log 0 "^NTS source $a fails \\(.*\\); it is tried again, and still counts as in use" | grep_q . ||
                        fail "$when: the silent server did not fail"
                from_log 0 "^Only 2 of 4 NTS sources agree, 3 needed \\(1 does not answer\\); clock left alone\\.$" | grep_q . ||
                        fail "$when: the daemon did not say that it leaves the clock alone with one server silent"
                ;;
        sync)
                sim_log_has "^Initial clock synchronization to 127.0.0.1:1000[1234] (offset .*, NTS authenticated, [34] of 4 NTS sources agree" ||
                        fail "$when: no first synchronization while all four told the truth"
                cut=$(from_log 3600 "^4 NTS sources disagree by 3600 s; clock left alone\\.$" | head -n 1)
                [ -n "$cut" ] || fail "$when: the four never disagreed after the liars jumped"
                ;;
        *)
                from_log 0 "^4 NTS sources disagree by 3600 s; clock left alone\\.$" | grep_q . ||
                        fail "$when: the four never disagreed"
                ;;
        esac
        if [ "$when" != start ]; then
                from_log 7200 "^NTS source $a fails \\(no reply\\)" | grep_q . || fail "$when: the silent server did not fail"
        fi
        [ "$(sim_count step)" = 0 ] || fail "$when: the clock was stepped: $(grep ' step ' "$SIM_REC")"
        from_log "$cut" "^Selected server ($l1|$l2) " | grep_q . && fail "$when: a liar was selected"
        from_log "$cut" "2 of 3 NTS sources agree" | grep_q . && fail "$when: the liars were a majority of those that answer"
        [ "$when" = sync ] || ! sim_log_has "^Initial clock synchronization" || fail "$when: the daemon synchronized"
        big=$(awk -v t="$cut" '$1 >= t && $2 == "slew" { v = $3 < 0 ? -$3 : $3; if (v > 0.001) print }' "$SIM_REC")
        [ -z "$big" ] || fail "$when: the clock was slewed towards the liars: $big"
        # The liars' replies go on all the time, and the silent server's again once it is back.
        n=$(awk -v t="$cut" '$1 >= t && $2 == "reply" && ($4 == 2 || $4 == 3)' "$SIM_REC" | wc -l)
        [ "$n" -ge 10 ] || fail "$when: the liars answered only $n times"
        n=$(awk -v t="$up" '$1 >= t && $2 == "reply" && $4 == 0' "$SIM_REC" | wc -l)
        [ "$n" -ge 3 ] || fail "$when: the silent server answered only $n times after it was back"
        log "$when: $(grep -c 'disagree by 3600 s' "$SIM_LOG") lines 'disagree', $(sim_server_field 0 dropped) requests lost, no step"
}

two_liars vote
two_liars start
two_liars sync
