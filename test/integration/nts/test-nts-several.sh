#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Several NTS servers at once (issue 16): real chronyd NTS servers, some of them lying by an
# offset through true-time.so (no clock touched), the daemon in observe mode. A liar is a
# falseticker whatever its place in NTS=, the clock follows what the others agree on; two
# servers that disagree leave the clock alone and say so; a server that dies leaves the others
# to carry on and rejoins when it comes back.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus
start_notify_listener

HOUR=$((3600 * 1000000000))
MS=1000000

# servers NAME:OFFSET...: a chronyd for each (OFFSET in ns), NTS= listing them in that order.
servers() {
        start_chronys "$@"
        settings
}

# settings KEY=VALUE...: the configuration of the servers, with these settings too.
settings() {
        write_nts_conf "$TEST_TMPDIR/ts.conf" "${NAMES[*]}" "ConnectionRetrySec=1" "$@"
}

# client [POLL]: the daemon afresh (no cookie jars), polling every POLL (default 1s).
client() {
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf" "--test-poll-interval=${1:-1s}"
}

stop_all() {
        stop_timesyncd
        stop_chronys
        SERVER_KE=() SERVER_NTP=() NAMES=()
}

# The offset of the first synchronization, in seconds.
initial_offset() {
        sed -n 's/.*Initial clock synchronization to .* (offset \([-+][0-9.]*\) s.*/\1/p' "$TIMESYNCD_LOG" | head -n 1
}

# assert_follows_the_truth LIAR: the daemon synchronized once with an offset within 10 ms of the
# system clock (which the honest servers serve), never planned a step, and neither selected
# the liar nor takes its time.
assert_follows_the_truth() {
        local liar=localhost:${SERVER_KE[$1]} offset
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, 3 of 4 NTS sources agree" 30
        offset=$(initial_offset)
        awk -v o="$offset" 'BEGIN { exit !(o < 0.01 && o > -0.01) }' || fail "initial offset $offset s is not the truth"
        log_has "would step the clock" && fail "the daemon would have stepped the clock"
        log_has "Selected server $liar " && fail "the liar was selected"
        [ "$(timesync_property ServerName)" != "$liar" ] || fail "ServerName is the liar"
        true
}

test_liar_an_hour_off_listed_first_is_a_falseticker() {
        servers "liar:$HOUR" a:0 b:0 c:0
        client
        assert_follows_the_truth liar
        wait_log "NTS source localhost:${SERVER_KE[liar]} is a falseticker: its offset +3\(599\|600\)\.[0-9]* s" 20
        wait_source_field "localhost:${SERVER_KE[liar]}" Verdict falseticker
        # One of the others selected, the other two truechimers.
        [ "$(sources_json | /usr/bin/python3 -c 'import json, sys
print(sorted(s["Verdict"] for s in json.load(sys.stdin)))')" = "['falseticker', 'selected', 'truechimer', 'truechimer']" ] ||
                fail "the verdicts are not one falseticker, one selected, two truechimers: $(sources_json)"
        # It keeps being polled, at the normal rate: several more verified replies.
        local n
        n=$(log_count "NTS reply from localhost:${SERVER_KE[liar]} verified")
        wait_log_count "NTS reply from localhost:${SERVER_KE[liar]} verified" $((n + 3)) 10
        [ "$(log_count "is a falseticker")" = 1 ] || fail "the falseticker was logged more than once"
        # Stock's view, unmodified timedatectl: the selected source, never the liar.
        in_systemd_run timedatectl timesync-status >"$TEST_TMPDIR/timesync-status.txt"
        cat "$TEST_TMPDIR/timesync-status.txt"
        grep -Eq "^ +Server: 127\.0\.0\.1 \(localhost:[0-9]+\)$" "$TEST_TMPDIR/timesync-status.txt" ||
                fail "timesync-status shows no server"
        grep -q "(localhost:${SERVER_KE[liar]})" "$TEST_TMPDIR/timesync-status.txt" && fail "timesync-status shows the liar"
        grep -Eq "^ +Offset: [-+]?[0-9.]+(us|ms)?$" "$TEST_TMPDIR/timesync-status.txt" ||
                fail "timesync-status does not show a small offset"
        wait_for 5 grep -q "STATUS=3 of 4 NTS sources agree, 1 falseticker; selected localhost:[0-9]*\." "$NOTIFY_OUT" ||
                fail "STATUS= does not say so: $(last_status)"
        stop_all
}

test_liar_50ms_off_listed_first_is_a_falseticker() {
        servers liar:$((50 * MS)) a:0 b:0 c:0
        client
        assert_follows_the_truth liar
        wait_source_field "localhost:${SERVER_KE[liar]}" Verdict falseticker
        wait_log "NTS source localhost:${SERVER_KE[liar]} is a falseticker: its offset +0\.0[45][0-9]* s"
        stop_all
}

test_two_servers_an_hour_apart_leave_the_clock_alone() {
        local text="2 NTS sources disagree by 3600 s; clock left alone"
        servers a:0 "liar:$HOUR"
        client
        wait_log "$text" 20
        sleep 3
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        log_has "would s[tl][ea][pw]" && fail "the daemon would have moved the clock"
        [ ! -e "$TEST_TMPDIR/runtime/synchronized" ] || fail "synchronized flag written"
        [ "$(log_count "$text")" = 1 ] || fail "the disagreement was logged $(log_count "$text") times"
        nts_status_is "$text" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        [ -z "$(timesync_property ServerName)" ] || fail "ServerName is '$(timesync_property ServerName)'"
        case "$(last_status)" in
                "$text since "*.) ;;
                *) fail "STATUS= is '$(last_status)'" ;;
        esac
        [ "$(source_field "localhost:${SERVER_KE[a]}" Verdict)" = undecided ] || fail "a is not undecided"
        stop_all
}

_selected_is() { [ "$(timesync_property ServerName)" = "$1" ]; }

_selected_is_not() { local s; s=$(timesync_property ServerName); [ -n "$s" ] && [ "$s" != "$1" ]; }

test_killed_server_leaves_the_others_to_carry_on_and_rejoins() {
        local n before name selected victim
        servers a:0 b:0 c:0
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, [23] of 3 NTS sources agree" 30
        wait_for 10 _selected_is_not "" || fail "nothing is selected"
        # The selected one dies.
        selected=$(timesync_property ServerName)
        for name in a b c; do
                [ "localhost:${SERVER_KE[$name]}" != "$selected" ] || victim=$name
        done
        [ -n "${victim:-}" ] || fail "ServerName $selected is none of the servers"

        stop_chrony "$TEST_TMPDIR/chrony-$victim"
        wait_log "NTS source $selected fails (no reply)" 30
        wait_for 10 _selected_is_not "$selected" || fail "the selection did not move on from $selected"
        wait_source_field "$selected" Verdict unusable
        wait_log "2 of 3 NTS sources agree (1 does not answer)\." 10
        # Still steered, and seen to be degraded: NTSStatus and STATUS= name the failing server.
        wait_for 10 _nts_status_starts "1 of 3 NTS servers failing: $selected (" ||
                fail "NTSStatus is '$(timesync_property NTSStatus)', not naming $selected as failing"
        wait_for 10 _last_status_like "2 of 3 NTS sources agree (1 does not answer); selected " \
                ". 1 of 3 NTS servers failing: $selected (" ")." ||
                fail "STATUS= is '$(last_status)'"
        n=$(log_count "NTP reply from")
        wait_log_count "NTP reply from" $((n + 4)) 10

        # Back on the same ports with the same keys: its cookies are good again.
        before=$(log_count "Contacted time server 127.0.0.1:${SERVER_NTP[$victim]}")
        start_chrony_nts_server "$TEST_TMPDIR/chrony-$victim" "$CERTDIR" "${SERVER_NTP[$victim]}" "${SERVER_KE[$victim]}"
        wait_source_field "$selected" Verdict truechimer 40
        [ "$(log_count "Contacted time server 127.0.0.1:${SERVER_NTP[$victim]}")" -gt "$before" ] || fail "$selected did not rejoin"
        wait_log "3 of 3 NTS sources agree\." 10
        wait_for 10 nts_status_is "" || fail "NTSStatus is '$(timesync_property NTSStatus)' after $selected rejoined"
        [[ "$(last_status)" == *"failing"* ]] && fail "STATUS= still names a failing server: $(last_status)"
        stop_all
}

# _nts_status_starts PREFIX: NTSStatus begins with PREFIX.
_nts_status_starts() { [[ "$(timesync_property NTSStatus)" == "$1"* ]]; }

# _last_status_like A B C: the last STATUS= text is A, anything, B, anything, C.
_last_status_like() { [[ "$(last_status)" == "$1"*"$2"*"$3" ]]; }

# Five servers: three chronyd that agree, one with nothing listening on its key-exchange port,
# one that refuses service (kiss code DENY). The three steer the clock; NTSStatus (read through
# Debian's timedatectl) and STATUS= say that two of the five fail, and why, in the listed order.
test_failing_servers_are_named_while_the_others_steer() {
        local dead deny want
        servers a:0 b:0 c:0
        dead=localhost:$(free_port)
        start_nts_mock deny5 --kiss=DENY
        deny=localhost:$MOCK_KE
        NAMES=("$dead" "${NAMES[@]}" "$deny")
        settings NTSMaxSources=5
        client
        wait_log "Server $deny refuses service (kiss code DENY), not using it any more\." 30
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, 3 of [45] NTS sources agree" 30
        want="2 of 5 NTS servers failing: $dead (connecting to 127.0.0.1:${dead#localhost:} failed: Connection refused), $deny (refuses service (kiss code DENY))"
        wait_for 10 nts_status_is "$want" || fail "NTSStatus is '$(timesync_property NTSStatus)', not '$want'"
        [ -n "$(timesync_property ServerName)" ] || fail "nothing is selected: the clock is not steered"
        wait_for 10 _last_status_like "3 of 4 NTS sources agree (1 does not answer); selected localhost:" ". $want." "" ||
                fail "STATUS= is '$(last_status)'"
        in_systemd_run timedatectl show-timesync --all | grep -xF "NTSStatus=$want" || fail "show-timesync --all does not say so"
        stop_all
        stop_daemon "$MOCK_PID"
}

# NTSMaxSources= (default 4): the first servers of the list are used together, the others
# not at all while those do not refuse service. The servers past the limit have a key-exchange
# port where nothing listens, so that trying one would show as a failure too.
test_only_the_first_nts_max_sources_servers_are_used() {
        local spare1 spare2
        servers a:0 b:0 c:0 d:0
        spare1=$(free_port)
        spare2=$(free_port)
        NAMES+=("localhost:$spare1" "localhost:$spare2")
        settings
        client
        wait_log "Using 4 NTS servers together" 10
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, [34] of 4 NTS sources agree" 30
        wait_log "4 of 4 NTS sources agree\." 10
        log_has "localhost:$spare1" && fail "the fifth server, past the default limit of 4, was used"
        log_has "localhost:$spare2" && fail "the sixth server was used"
        [ "$(sources_json | /usr/bin/python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')" = 4 ] ||
                fail "Sources does not list 4 sources: $(sources_json)"
        stop_timesyncd

        settings NTSMaxSources=2
        client
        wait_log "Using 2 NTS servers together" 10
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, 2 of 2 NTS sources agree" 30
        log_has "Starting NTS key exchange with localhost:${SERVER_KE[c]}\." && fail "the third server was used with NTSMaxSources=2"
        stop_timesyncd

        # One at a time: the first server alone, as with one NTS= entry.
        settings NTSMaxSources=1
        client
        wait_log "Initial clock synchronization to localhost:${SERVER_KE[a]} (offset [-+0-9.]* s, NTS authenticated, observe mode" 30
        log_has "NTS servers together" && fail "NTSMaxSources=1 used several servers"
        log_has "NTS sources agree" && fail "NTSMaxSources=1 spoke of agreeing sources"
        log_has "Starting NTS key exchange with localhost:${SERVER_KE[b]}\." && fail "the second server was used with NTSMaxSources=1"
        stop_all
}

# NTSMinAgreeingSources= above the majority: two of three agree, which is a majority, but three
# are asked for; the clock is left alone and the status says why. Without the setting the two
# are enough (test_liar_an_hour_off_listed_first_is_a_falseticker shows 3 of 4).
test_nts_min_agreeing_sources_above_the_majority_leaves_the_clock_alone() {
        local text="Only 2 of 3 NTS sources agree, 3 needed; clock left alone"
        servers a:0 b:0 "liar:$HOUR"
        settings NTSMinAgreeingSources=3
        client
        wait_log "$text" 20
        sleep 3
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        log_has "would s[tl][ea][pw]" && fail "the daemon would have moved the clock"
        nts_status_is "$text" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        [ -z "$(timesync_property ServerName)" ] || fail "ServerName is '$(timesync_property ServerName)'"
        stop_timesyncd

        settings NTSMinAgreeingSources=2
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, 2 of 3 NTS sources agree" 30
        stop_all
}

_verdict_agrees() {
        case "$(source_field "$1" Verdict)" in
        selected | truechimer) return 0 ;;
        *) return 1 ;;
        esac
}

# A falseticker is polled on, so that it can come back: the mock an hour ahead, listed first,
# among two chronyd, then its clock right again (SIGUSR1 ends its time offset). It agrees again,
# said once, and counts: "3 of 3 NTS sources agree".
test_falseticker_that_comes_right_again_is_taken_back() {
        local liar
        servers a:0 b:0
        start_nts_mock liar --time-offset=3600
        liar=localhost:$MOCK_KE
        NAMES=("$liar" "${NAMES[@]}")
        settings
        client
        wait_log "NTS source $liar is a falseticker: its offset +3[56][0-9][0-9]\.[0-9]* s" 20
        wait_log "2 of 3 NTS sources agree, 1 falseticker\." 10
        kill -USR1 "$MOCK_PID"
        wait_log "NTS source $liar agrees with the others again\." 30
        wait_for 10 _verdict_agrees "$liar" || fail "Sources: $liar is '$(source_field "$liar" Verdict)' after it came back"
        wait_log "3 of 3 NTS sources agree\." 10
        [ "$(log_count "is a falseticker")" = 1 ] || fail "the falseticker was logged $(log_count "is a falseticker") times"
        [ "$(log_count "agrees with the others again")" = 1 ] ||
                fail "its return was logged $(log_count "agrees with the others again") times"
        log_has "would step the clock" && fail "the daemon would have stepped the clock"
        stop_all
        stop_daemon "$MOCK_PID"
}

# Each source has a cookie jar of its own: a clean stop saves every one, and the next start
# resumes every source from its jar without a key exchange.
test_every_source_keeps_its_own_cookie_jar() {
        local name jar cookies
        servers a:0 b:0 c:0
        client
        wait_log "3 of 3 NTS sources agree\." 30
        stop_timesyncd
        for name in a b c; do
                jar=$(nts_jar_file "localhost:${SERVER_KE[$name]}")
                cookies=$(grep -c '^cookie=' "$jar" 2>/dev/null || true)
                [ "${cookies:-0}" -ge 7 ] || fail "${cookies:-no} cookies of localhost:${SERVER_KE[$name]} saved in $jar"
        done
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
        wait_log "3 of 3 NTS sources agree\." 30
        for name in a b c; do
                log_has "Resuming NTS with localhost:${SERVER_KE[$name]}: " || fail "localhost:${SERVER_KE[$name]} did not resume from its jar"
        done
        log_has "Starting NTS key exchange" && fail "a key exchange ran although every source had its cookies"
        stop_all
}

# The Sources property changes with nearly every sample; its PropertiesChanged signal goes out
# at most once per poll round (PollIntervalMinSec=, here the test's 250 ms): three sources that
# answer every 250 ms give about one signal per three replies (asserted: at most one per two,
# plus a few for the start), not one per reply. What a client reads after the last signal is
# the state announced: the liar a falseticker.
test_sources_is_announced_at_most_once_per_poll_round() {
        local monitor replies signals
        servers a:0 b:0 "liar:$HOUR"
        busctl --system --match "type='signal',path='/org/freedesktop/timesync1',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'" \
                monitor >"$TEST_TMPDIR/signals.txt" 2>&1 &
        monitor=$!
        track_pid "$monitor"
        sleep 0.5 # subscribed
        client 250ms
        wait_log "NTS source localhost:${SERVER_KE[liar]} is a falseticker" 20
        wait_log_count "NTP reply from" 40 30
        sleep 0.5 # the last signal has reached the monitor
        kill "$monitor" 2>/dev/null || true
        wait "$monitor" 2>/dev/null || true
        replies=$(log_count "NTP reply from")
        signals=$(grep -c 'STRING "Sources"' "$TEST_TMPDIR/signals.txt" || true)
        echo "result: $replies replies of 3 sources, $signals PropertiesChanged signals for Sources"
        [ "$signals" -ge 1 ] || fail "no PropertiesChanged for Sources"
        [ "$signals" -le $((replies / 2 + 4)) ] || fail "$signals signals for Sources for $replies replies of 3 sources"
        [ "$(source_field "localhost:${SERVER_KE[liar]}" Verdict)" = falseticker ] || fail "the liar is not a falseticker on the bus"
        stop_all
}

# check_refusal CODE: a server that refuses service with an authenticated kiss code CODE (the
# mock, listed first, after three answers with time) among three chronyd, NTSMaxSources=3:
# said once, it is never asked again, and the fourth server takes its place; three agree again.
check_refusal() {
        local code=$1 m spare
        start_nts_mock "kiss-$code" --kiss="$code" --kiss-after=3
        m=localhost:$MOCK_KE
        servers a:0 b:0 c:0
        spare=localhost:${SERVER_KE[c]}
        NAMES=("$m" "${NAMES[@]}")
        settings NTSMaxSources=3
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, [23] of 3 NTS sources agree" 30
        log_has "Starting NTS key exchange with $spare\." && fail "$code: the fourth server was used before a refusal"
        wait_log "Server $m refuses service (kiss code $code), not using it any more\." 30
        wait_log "NTS server $spare takes the place of $m\." 10
        wait_log "Starting NTS key exchange with $spare\." 10
        wait_for 20 _sources_agree_after_line "NTS server $spare takes the place" 3 ||
                fail "$code: not 3 of 3 sources agreeing after the replacement"
        # Never asked again: its kiss was the last answer it gave.
        sleep 3
        [ "$(mock_count "kiss-$code" ntp_kisses)" = 1 ] || fail "$code: $(mock_count "kiss-$code" ntp_kisses) kiss codes sent"
        [ "$(mock_count "kiss-$code" ntp_requests)" = 3 ] || fail "$code: it was asked again for time"
        [ "$(log_count "refuses service (kiss code $code), not using it")" = 1 ] || fail "$code: the refusal was logged more than once"
        # Still listed, for the administrator to see why it is not used.
        [ "$(source_field "$m" Verdict)" = unusable ] || fail "$code: Sources lists $m as '$(source_field "$m" Verdict)'"
        case "$(source_field "$m" LastError)" in
        *"kiss code $code"*) ;;
        *) fail "$code: LastError of $m is '$(source_field "$m" LastError)'" ;;
        esac
        _verdict_agrees "$spare" || fail "$code: Sources: $spare is '$(source_field "$spare" Verdict)'"
        log_has "would step the clock" && fail "$code: the daemon would have stepped the clock"
        stop_all
        stop_daemon "$MOCK_PID"
}

# _sources_agree_after_line TEXT N: a line "N of N NTS sources agree." after the last TEXT.
_sources_agree_after_line() {
        sed -n "/$1/,\$p" "$TIMESYNCD_LOG" | grep_q "$2 of $2 NTS sources agree\."
}

test_server_refusing_service_gives_its_place_to_the_next() {
        check_refusal DENY
        check_refusal RSTR
}

# check_all_refuse MAX: every server refuses service, with NTSMaxSources=MAX (1: one at a time,
# as stock; the first gives time once before it refuses): no time from any, said once at once
# (not found by the stall check, which runs every second here), NTSStatus says why, and no
# plain NTP either.
check_all_refuse() {
        local max=$1 plain x y
        plain=$(free_port)
        start_ntp_test_server "plain$max" "$plain"
        start_nts_mock "denyx$max" --kiss=DENY --kiss-after=$((2 - max))
        x=$MOCK_PID
        NAMES=("localhost:$MOCK_KE")
        start_nts_mock "denyy$max" --kiss=RSTR
        y=$MOCK_PID
        NAMES+=("localhost:$MOCK_KE")
        settings "NTP=127.0.0.1:$plain" "FallbackNTP=127.0.0.1:$plain" "NTSMaxSources=$max"
        client
        wait_log "refuses service (kiss code DENY), not using it any more" 30
        wait_log "refuses service (kiss code RSTR), not using it any more" 30
        wait_log "Every NTS server refuses service (kiss code DENY or RSTR): none is asked again" 10
        sleep 3
        if [ "$max" = 2 ]; then
                assert_plain_servers_unused "plain$max"
        else
                assert_ntp_servers_unused "plain$max"
        fi
        log_has "(a bug)" && fail "max $max: the daemon stalled: $(grep -m1 "(a bug)" "$TIMESYNCD_LOG")"
        [ "$(log_count "Every NTS server refuses service")" = 1 ] || fail "max $max: the refusal of all was said more than once"
        [ "$(mock_count "denyx$max" ntp_kisses)" = 1 ] || fail "max $max: the first server was asked again"
        [ "$(mock_count "denyy$max" ntp_kisses)" = 1 ] || fail "max $max: the second server was asked again"
        [ "$(timesync_property NTSStatus)" = "Every NTS server refuses service (kiss code DENY or RSTR)" ] ||
                fail "max $max: NTSStatus is '$(timesync_property NTSStatus)'"
        [ -z "$(timesync_property ServerName)" ] || fail "max $max: ServerName is '$(timesync_property ServerName)'"
        stop_timesyncd
        stop_daemon "$x"
        stop_daemon "$y"
}

test_every_server_refusing_service_leaves_no_time_and_no_plain_ntp() {
        check_all_refuse 2
        check_all_refuse 1
}

# netif_state ONLINE|OFFLINE: systemd-networkd's state as the daemon of use_config_root sees it.
netif_state() {
        local d=$TEST_TMPDIR/root/run/systemd/netif
        mkdir -p "$d"
        if [ "$1" = ONLINE ]; then
                printf 'OPER_STATE=routable\nCARRIER_STATE=carrier\nADDRESS_STATE=routable\n' >"$d/state.tmp"
        else
                printf 'OPER_STATE=no-carrier\nCARRIER_STATE=no-carrier\nADDRESS_STATE=off\n' >"$d/state.tmp"
        fi
        chmod 0644 "$d/state.tmp"
        mv "$d/state.tmp" "$d/state"
}

# Two servers, the first refuses service: the other carries on alone. When the set starts over
# (here: the network goes away and comes back) the refusing server stays out, the other is
# used alone, and the log says so in words that fit one server.
test_set_starting_over_with_one_server_left_says_so() {
        local m asked
        start_nts_mock deny1 --kiss=DENY --kiss-after=2
        m=localhost:$MOCK_KE
        servers a:0
        NAMES=("$m" "${NAMES[@]}")
        settings
        use_config_root "$TEST_TMPDIR/root"
        netif_state ONLINE
        client
        wait_log "Using 2 NTS servers together" 10
        wait_log "Server $m refuses service (kiss code DENY), not using it any more\." 30
        asked=$(mock_count deny1 ntp_requests)
        netif_state OFFLINE
        wait_log "Network is offline" 10
        netif_state ONLINE
        wait_log "Using 1 NTS server, the only one listed that does not refuse service\." 10
        log_has "Using 1 NTS servers" && fail "the log speaks of '1 NTS servers'"
        wait_for 10 _sources_agree_after_line "Using 1 NTS server," 1 || fail "the one server left does not give time"
        [ "$(mock_count deny1 ntp_requests)" = "$asked" ] || fail "the refusing server was asked again"
        unset TIMESYNCD_WRAPPER
        stop_all
        stop_daemon "$MOCK_PID"
}

# An authenticated kiss code RATE from one of three sources slows that one down, not the
# others: it polls every 32 s from then on, they every 16 s (PollIntervalMinSec=16, the floor;
# --test-poll-interval= would fix every interval, RATE included, so it is not used here).
test_rate_kiss_slows_down_only_the_source_that_sent_it() {
        local m
        servers a:0 b:0
        start_nts_mock rate --kiss=RATE
        m=localhost:$MOCK_KE
        NAMES=("$m" "${NAMES[@]}")
        settings PollIntervalMinSec=16
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Server $m asks us to slow down (kiss code RATE), polling every 32s\." 20
        wait_log "NTP reply from 127\.0\.0\.1:${SERVER_NTP[a]}: .*next poll in 16s\." 20
        wait_log "NTP reply from 127\.0\.0\.1:${SERVER_NTP[b]}: .*next poll in 16s\." 20
        [ "$(log_count "asks us to slow down")" = 1 ] || fail "$(log_count "asks us to slow down") slow-downs logged, expected 1"
        log_has "refuses service" && fail "RATE was taken for a refusal"
        stop_all
        stop_daemon "$MOCK_PID"
}

# The leap second: armed only when more than half of the agreeing sources announce it (one
# server alone cannot insert a second into the clock), and by the one source when there is
# only one, as in stock. In observe mode the daemon says what it would arm. The mocks announce
# an insertion, chronyd none.
test_leap_second_needs_a_majority_of_the_agreeing_sources() {
        local one two a armed="Observe mode: would slew the clock by [-+0-9.]* s and arm a leap second insertion, leaving it alone\."
        servers a:0 b:0
        a=${NAMES[0]}
        start_nts_mock leap-1 --leap=1
        one=$MOCK_PID
        NAMES=("localhost:$MOCK_KE" "${NAMES[@]}")
        settings
        client
        wait_log "3 of 3 NTS sources agree" 30
        wait_log_count "Observe mode: would slew the clock" 5 30
        log_has "leap second" && fail "one of three sources armed a leap second: $(grep -m1 "leap second" "$TIMESYNCD_LOG")"
        stop_timesyncd

        # Two of three: the two mocks and chronyd a.
        start_nts_mock leap-2 --leap=1
        two=$MOCK_PID
        NAMES=("${NAMES[0]}" "localhost:$MOCK_KE" "$a")
        settings
        client
        wait_log "3 of 3 NTS sources agree" 30
        wait_log "$armed" 10
        stop_timesyncd

        # One source: its word.
        settings NTSMaxSources=1
        client
        wait_log "$armed" 30
        stop_all
        stop_daemon "$one"
        stop_daemon "$two"
}

run_case test_liar_an_hour_off_listed_first_is_a_falseticker
run_case test_liar_50ms_off_listed_first_is_a_falseticker
run_case test_two_servers_an_hour_apart_leave_the_clock_alone
run_case test_killed_server_leaves_the_others_to_carry_on_and_rejoins
run_case test_failing_servers_are_named_while_the_others_steer
run_case test_only_the_first_nts_max_sources_servers_are_used
run_case test_nts_min_agreeing_sources_above_the_majority_leaves_the_clock_alone
run_case test_falseticker_that_comes_right_again_is_taken_back
run_case test_every_source_keeps_its_own_cookie_jar
run_case test_sources_is_announced_at_most_once_per_poll_round
run_case test_server_refusing_service_gives_its_place_to_the_next
run_case test_every_server_refusing_service_leaves_no_time_and_no_plain_ntp
run_case test_set_starting_over_with_one_server_left_says_so
run_case test_leap_second_needs_a_majority_of_the_agreeing_sources
run_case test_rate_kiss_slows_down_only_the_source_that_sent_it
