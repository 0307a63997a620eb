#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Several NTS servers, an attacker on the path who drops packets: real chronyd NTS servers in a
# network namespace of the test's own, some of them an hour ahead (true-time.so, valid
# certificates of the same CA), nftables in that namespace dropping what the honest ones send.
# The daemon runs on its fake clock (--test-clock-offset=0s), which it steps exactly as it would
# step the real one, in observe mode and without CAP_SYS_TIME. Losing packets may stop
# synchronization; it never hands the clock to the servers that still answer. A liar whose
# clock drifts slowly away (true-time.so's drift) does not drag the clock along either.
# Usage: test-nts-several-lost-packets.sh [drops|liars|spares|drift]: only those cases (all by
# default).
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
command -v nft >/dev/null || missing_prerequisite "nft not installed (package nftables)"
daemon_test_init --certs --bus
start_notify_listener
export NOTIFY_OUT

export HOUR=$((3600 * 1000000000))

# servers NAME:OFFSET...: a chronyd for each (OFFSET in ns), NTS= listing them in that order,
# polled every second. Sets the arrays SERVER_KE and SERVER_NTP (ports by name) and NAMES.
servers() {
        start_chronys "$@"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "${NAMES[*]}" "ConnectionRetrySec=1"
        rm -f "$TEST_TMPDIR"/state/nts-*.jar "$TEST_TMPDIR/runtime/synchronized"
        : >"$TIMESYNCD_LOG"
}

client() {
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s --test-clock-offset=0s
}

# The log from line LOG_FROM on: what a case asserts about, after servers that started honest
# began to lie. Exported, as the cases run in a network namespace (netns_exec).
export LOG_FROM=1
recent_log_has() { tail -n "+$LOG_FROM" "$TIMESYNCD_LOG" | grep -q -- "$1"; }

# The liar's verified replies go on, and nothing of its time reaches the clock.
assert_liar_never_steers() {
        local liar=localhost:$1 n
        n=$(log_count "NTS reply from $liar verified")
        wait_log_count "NTS reply from $liar verified" $((n + 5)) 20
        recent_log_has "Test clock: stepped" && fail "the test clock was stepped: $(grep 'Test clock: stepped' "$TIMESYNCD_LOG")"
        recent_log_has "the clock by .* after the first synchronization" && fail "the daemon stepped the clock"
        recent_log_has "Selected server $liar " && fail "the liar was selected"
        [ "$(timesync_property ServerName)" != "$liar" ] || fail "ServerName is the liar"
        true
}

# _nts_status_ends_with TEXT: NTSStatus ends with TEXT.
_nts_status_ends_with() { [[ "$(timesync_property NTSStatus)" == *"$1" ]]; }

# The clock is left alone, and the log, NTSStatus and STATUS= say so: TEXT, " since ...".
assert_left_alone_says() {
        local text=$1
        wait_log "$text\." 40
        [ "$(log_count "$text")" = 1 ] || fail "'$text' was logged $(log_count "$text") times"
        nts_status_is "$text" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        wait_for 5 grep -q "STATUS=$text since [^|]*\." "$NOTIFY_OUT" || fail "STATUS= does not say so: $(last_status)"
        [ -z "$(timesync_property ServerName)" ] || fail "ServerName is '$(timesync_property ServerName)'"
}

# Four servers, one an hour ahead: while all answer it is a falseticker; then the attacker
# drops everything the three honest ones send. The liar keeps answering and never gets the
# clock; when the honest ones are back, the set agrees again.
lost_after_sync_inner() {
        local name n failing
        servers "liar:$HOUR" a:0 b:0 c:0
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, 3 of 4 NTS sources agree" 30
        wait_log "NTS source localhost:${SERVER_KE[liar]} is a falseticker" 20

        drop a b c
        for name in a b c; do
                wait_log "NTS source localhost:${SERVER_KE[$name]} fails (no reply); it is tried again, and still counts as in use" 30
        done
        assert_left_alone_says "Only 0 of 4 NTS sources answer and agree, 3 needed (3 do not answer); clock left alone"
        # After its own sentence, NTSStatus names the servers that fail, as while they agree, and
        # STATUS= says the same.
        failing="3 of 4 NTS servers failing: localhost:${SERVER_KE[a]} (no reply), localhost:${SERVER_KE[b]} (no reply), localhost:${SERVER_KE[c]} (no reply)"
        wait_for 10 _nts_status_ends_with "; $failing" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        wait_for 5 grep -qF "; $failing." "$NOTIFY_OUT" || fail "STATUS= does not name them: $(last_status)"
        assert_liar_never_steers "${SERVER_KE[liar]}"
        [ "$(dropped_packets)" -gt 0 ] || fail "nothing was dropped"
        echo "result: 3 honest of 4 silenced after the first synchronization: $(dropped_packets) packets dropped," \
             "the liar's time never used; log: $(grep -m1 'Only 0 of 4' "$TIMESYNCD_LOG" | sed 's/^.*Only/Only/')"

        n=$(log_count "3 of 4 NTS sources agree, 1 falseticker\.")
        undrop
        wait_log_count "3 of 4 NTS sources agree, 1 falseticker\." $((n + 1)) 60
        [ -z "$(timesync_property NTSStatus)" ] || fail "NTSStatus is '$(timesync_property NTSStatus)' after the return"
        assert_liar_never_steers "${SERVER_KE[liar]}"
        stop_timesyncd
        stop_chronys
}

# A server that tells the truth until the others are gone: four agree, the attacker drops what
# three of them send, and the fourth, still answering, turns an hour ahead (restarted on its
# ports, its cookies still valid). The three silent ones keep their last intervals in the vote,
# so the turncoat is a falseticker against them and never moves the clock.
turncoat_inner() {
        local name
        servers t:0 a:0 b:0 c:0
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, [34] of 4 NTS sources agree" 30
        drop a b c
        for name in a b c; do
                wait_log "NTS source localhost:${SERVER_KE[$name]} fails (no reply); it is tried again, and still counts as in use" 30
        done
        LOG_FROM=$(($(wc -l <"$TIMESYNCD_LOG") + 1))
        restart_chrony_at t "$HOUR"
        wait_log "Only 0 of 4 NTS sources answer and agree, 3 needed (3 do not answer); clock left alone" 40
        assert_liar_never_steers "${SERVER_KE[t]}"
        recent_log_has "NTS source localhost:${SERVER_KE[t]} is a falseticker" || fail "the turncoat is not a falseticker"
        echo "result: the last server answering turned an hour ahead after 3 of 4 were silenced:" \
             "$(dropped_packets) packets dropped, no step; log: $(tail -n "+$LOG_FROM" "$TIMESYNCD_LOG" | grep -m1 'Only 0 of 4' | sed 's/^.*Only/Only/')"
        LOG_FROM=1
        undrop
        stop_timesyncd
        stop_chronys
}

# The same attacker from the start: the honest servers' key exchanges and replies never arrive.
# The liar answers within a second and is never used: the honest ones count as expected
# while pending, and as in use once they failed.
lost_from_start_inner() {
        local name
        servers "liar:$HOUR" a:0 b:0 c:0
        drop a b c
        client
        for name in a b c; do
                wait_log "NTS source localhost:${SERVER_KE[$name]} fails (.*); it is tried again, and still counts as in use" 40
        done
        assert_left_alone_says "Only 1 of 4 NTS sources agree, 3 needed (3 do not answer); clock left alone"
        assert_liar_never_steers "${SERVER_KE[liar]}"
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        [ ! -e "$TEST_TMPDIR/runtime/synchronized" ] || fail "synchronized flag written"
        echo "result: 3 honest of 4 silenced from the start: $(dropped_packets) packets dropped, no synchronization"
        undrop
        stop_timesyncd
        stop_chronys
}

# Two liars that agree with each other and two honest servers: 2 against 2, the clock left
# alone. One honest server's replies are lost long enough for it to fail: the vote stays 2
# against 2 (its last interval still counts), and nothing is stepped. WHEN the replies are
# lost: "vote" once the four disagree; "start" from the start, so that the honest server never
# answers; "sync" after the first synchronization, which all four gave with the truth before
# the two liars started lying (restarted an hour ahead): a step then needs the full quorum, not
# the three that still answer.
two_liars_inner() {
        local when=$1 n
        if [ "$when" = sync ]; then
                servers a:0 b:0 l1:0 l2:0
        else
                servers a:0 b:0 "l1:$HOUR" "l2:$HOUR"
        fi
        [ "$when" != start ] || drop a
        client
        case $when in
        start)
                wait_log "NTS source localhost:${SERVER_KE[a]} fails (.*); it is tried again, and still counts as in use" 40
                assert_liar_never_steers "${SERVER_KE[l1]}"
                wait_log "Only 2 of 4 NTS sources agree, 3 needed (1 does not answer); clock left alone" 30
                ;;
        sync)
                wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, [34] of 4 NTS sources agree" 30
                restart_chrony_at l1 "$HOUR"
                restart_chrony_at l2 "$HOUR"
                wait_log "4 NTS sources disagree by 3600 s; clock left alone" 60
                LOG_FROM=$(grep -n -m1 "4 NTS sources disagree by 3600 s" "$TIMESYNCD_LOG" | cut -d: -f1)
                ;;
        *)
                wait_log "4 NTS sources disagree by 3600 s; clock left alone" 40
                ;;
        esac
        if [ "$when" != start ]; then
                drop a
                wait_log "NTS source localhost:${SERVER_KE[a]} fails (no reply)" 30
        fi
        assert_liar_never_steers "${SERVER_KE[l1]}"
        assert_liar_never_steers "${SERVER_KE[l2]}"
        recent_log_has "2 of 3 NTS sources agree" && fail "the liars were a majority of those that answer"
        [ "$when" = sync ] || ! log_has "Initial clock synchronization" || fail "the daemon synchronized"
        n=$(dropped_packets)
        undrop
        wait_log_count "NTS reply from localhost:${SERVER_KE[a]} verified" $(($(log_count "NTS reply from localhost:${SERVER_KE[a]} verified") + 3)) 40
        assert_liar_never_steers "${SERVER_KE[l1]}"
        [ "$when" = sync ] || ! log_has "Initial clock synchronization" || fail "the daemon synchronized"
        echo "result: two liars of four, honest replies lost ($when): $n packets dropped," \
             "$(grep -c 'disagree by 3600 s' "$TIMESYNCD_LOG") lines 'disagree', no step"
        LOG_FROM=1
        stop_timesyncd
        stop_chronys
}

# NTSMaxSources=3 with a fourth server listed: a server whose replies are lost for three tries
# in a row gets a spare on probation, which takes its place once it agrees with the two others;
# a spare an hour off never does.
spare_inner() {
        local name n
        servers a:0 b:0 c:0 "spare:$1"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "${NAMES[*]}" "ConnectionRetrySec=1" "NTSMaxSources=3"
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, [23] of 3 NTS sources agree" 30
        # Until a fails, the set keeps saying "3 of 3": this count is the one before the spare.
        n=$(log_count "3 of 3 NTS sources agree\.")
        drop a
        wait_log "NTS source localhost:${SERVER_KE[a]} does not answer (3 failures in a row): trying localhost:${SERVER_KE[spare]} in its place" 90
        if [ "$1" = 0 ]; then
                wait_log "2 of 3 NTS sources agree (1 does not answer)\." 30
                wait_log "NTS server localhost:${SERVER_KE[spare]} takes the place of localhost:${SERVER_KE[a]}, which does not answer: it agrees with the others\." 30
                wait_log_count "3 of 3 NTS sources agree\." $((n + 1)) 30
                [ "$(source_field "localhost:${SERVER_KE[a]}" Verdict)" = unused ] || fail "a is '$(source_field "localhost:${SERVER_KE[a]}" Verdict)'"
        else
                wait_log_count "NTS reply from localhost:${SERVER_KE[spare]} verified" 5 30
                log_has "takes the place of" && fail "the liar took a place"
                assert_liar_never_steers "${SERVER_KE[spare]}"
        fi
        echo "result: spare $1: $(grep -c 'takes the place' "$TIMESYNCD_LOG") replacement(s)"
        undrop
        stop_timesyncd
        stop_chronys
}

# _offset_beyond NAME SECS: the last offset of the server NAME in Sources is beyond SECS.
_offset_beyond() {
        local o
        o=$(source_field "localhost:${SERVER_KE[$1]}" OffsetNSec)
        [ -n "$o" ] && [ "${o#-}" -gt $(($2 * 1000000000)) ]
}

# _drift_check LIAR-NTP-PORT: prints the largest slew the daemon asked for, the number of slews,
# and how far the honest intervals reached from the system clock: the largest |offset| + delay
# of an honest reply that was not a spike (a root distance is half the delay plus dispersions),
# plus the largest honest root distance in Sources.
_drift_check() {
        sources_json | /usr/bin/python3 -c 'import json, re, sys
log = open(sys.argv[1]).read()
slews = [abs(float(x)) for x in re.findall(r"Test clock: slewing by ([-+][0-9.]+) s\.", log)]
reach = max(abs(float(o)) + float(d) for p, o, d, rest in
            re.findall(r"NTP reply from 127\.0\.0\.1:([0-9]+): stratum 1, offset ([-+][0-9.]+) s, delay ([0-9.]+) s(.*)", log)
            if p != sys.argv[2] and "(spike)" not in rest)
rd = max(s["RootDistanceNSec"] for s in json.load(sys.stdin) if s["Address"] != "127.0.0.1:" + sys.argv[2]) / 1e9
print("%.6f %d %.6f" % (max(slews, default=0), len(slews), reach + rd))' "$TIMESYNCD_LOG" "$1"
}

# A liar whose clock runs 20 ms/s fast, among three honest servers, polled every second: it
# starts with the truth, leaves the honest intervals within its first polls and is a second
# off after 50 s. It becomes a falseticker once and stays one, the fake clock is never stepped
# (it stays on the system clock, which the honest servers serve), and no slew the daemon asks
# for reaches beyond the honest intervals: the liar does not drag the clock along, however
# slowly it goes.
drift_inner() {
        local liar slew n reach
        servers a:0 b:0 c:0 "drifter:0/$((20 * 1000000))"
        liar=localhost:${SERVER_KE[drifter]}
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, [34] of 4 NTS sources agree" 30
        wait_for 90 _offset_beyond drifter 1 || fail "the drifter's offset is $(source_field "$liar" OffsetNSec) ns"
        log_has "Test clock: stepped" && fail "the test clock was stepped: $(grep 'Test clock: stepped' "$TIMESYNCD_LOG")"
        read -r slew n reach < <(_drift_check "${SERVER_NTP[drifter]}")
        [ "$n" -gt 20 ] || fail "only $n slews"
        awk -v s="$slew" -v r="$reach" 'BEGIN { exit !(s <= r) }' ||
                fail "a slew of $slew s left the honest intervals (they reach $reach s)"
        wait_source_field "$liar" Verdict falseticker 5
        [ "$(log_count "NTS source $liar is a falseticker")" = 1 ] ||
                fail "the falseticker verdict flipped: $(grep "NTS source $liar" "$TIMESYNCD_LOG")"
        grep "is a falseticker" "$TIMESYNCD_LOG" | grep -v "$liar " && fail "an honest server was a falseticker"
        log_has "Selected server $liar " && fail "the liar was selected"
        echo "result: drift 20 ms/s: the liar ended $(source_field "$liar" OffsetNSec) ns off, a falseticker;" \
             "$n slews, the largest $slew s, honest intervals within $reach s; no step"
        stop_timesyncd
        stop_chronys
}

test_dropped_honest_replies_after_sync_leave_the_clock_alone() { run_in_netns lost_after_sync_inner; }
test_dropped_honest_servers_from_the_start_leave_the_clock_alone() { run_in_netns lost_from_start_inner; }
test_server_turning_liar_when_the_others_are_silenced_gets_nothing() { run_in_netns turncoat_inner; }
test_two_liars_of_four_gain_nothing_from_a_lost_honest_reply() { run_in_netns two_liars_inner vote; }
test_two_liars_of_four_gain_nothing_from_an_honest_server_silenced_from_the_start() { run_in_netns two_liars_inner start; }
test_two_liars_of_four_gain_nothing_from_a_lost_honest_reply_after_sync() { run_in_netns two_liars_inner sync; }

test_drifting_liar_does_not_drag_the_clock() { run_in_netns drift_inner; }

test_silent_server_is_replaced_by_a_spare_that_agrees() { run_in_netns spare_inner 0; }
test_silent_server_is_not_replaced_by_a_spare_that_lies() { run_in_netns spare_inner "$HOUR"; }

if [ "${1:-drops}" = drops ]; then
        run_case test_dropped_honest_replies_after_sync_leave_the_clock_alone
        run_case test_dropped_honest_servers_from_the_start_leave_the_clock_alone
        run_case test_server_turning_liar_when_the_others_are_silenced_gets_nothing
fi
if [ "${1:-liars}" = liars ]; then
        run_case test_two_liars_of_four_gain_nothing_from_a_lost_honest_reply
        run_case test_two_liars_of_four_gain_nothing_from_an_honest_server_silenced_from_the_start
        run_case test_two_liars_of_four_gain_nothing_from_a_lost_honest_reply_after_sync
fi
if [ "${1:-spares}" = spares ]; then
        run_case test_silent_server_is_replaced_by_a_spare_that_agrees
        run_case test_silent_server_is_not_replaced_by_a_spare_that_lies
fi
if [ "${1:-drift}" = drift ]; then
        run_case test_drifting_liar_does_not_drag_the_clock
fi
