#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Server selection like stock timesyncd: kiss-o'-death codes, unsynchronized servers, silent
# servers (timeout, then the next one), fallback servers only when nothing else is configured,
# retry after ConnectionRetrySec when every server failed.
set -euo pipefail
. "$(dirname "$0")/../../lib/common.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init

good=$(free_port)
start_ntp_test_server good "$good"

restart_with() {
        [ -n "${TIMESYNCD_PID:-}" ] && { kill "$TIMESYNCD_PID" 2>/dev/null || true; wait "$TIMESYNCD_PID" 2>/dev/null || true; }
        : >"$TIMESYNCD_LOG"
        write_conf "$TEST_TMPDIR/ts.conf" "$@"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
}

# next_server_after MODE PATTERN [CONF-LINE...]: the first server of NTP= answers in MODE
# (ntp-test-server --mode), the daemon logs PATTERN for it, and the next one, $good,
# synchronizes.
next_server_after() {
        local mode=$1 pattern=$2 p
        shift 2
        p=$(free_port)
        start_ntp_test_server "$mode" "$p" --mode="$mode"
        restart_with "NTP=127.0.0.1:$p 127.0.0.1:$good" "$@"
        wait_log "$pattern"
        wait_log "Initial clock synchronization to 127.0.0.1:$good (offset [-+][0-9.]* s, plain NTP, not authenticated"
}

test_deny_kiss_drops_the_server_and_moves_on() { next_server_after deny "refuses service (kiss code DENY)"; }
test_rstr_kiss_drops_the_server_and_moves_on() { next_server_after rstr "refuses service (kiss code RSTR)"; }

test_rate_kiss_slows_down_and_keeps_the_server() {
        local p
        p=$(free_port)
        start_ntp_test_server rate "$p" --mode=rate
        restart_with "NTP=127.0.0.1:$p" "PollIntervalMinSec=16" "PollIntervalMaxSec=128"
        wait_log "asks us to slow down (kiss code RATE), polling every 32s"
        log_has "Selected server 127.0.0.1:$good" && fail "RATE must not switch servers"
        true
}

# RATE raises the poll interval for good (timesyncd-backoff's RATE floor): the server, 10 s
# ahead, answers with time after its RATE kiss, and that sample far off, which starts over at
# the shortest interval otherwise, keeps the doubled one.
test_rate_kiss_floor_survives_a_large_offset_sample() {
        local p
        p=$(free_port)
        start_ntp_test_server ratefar "$p" --mode=rate --offset=10
        restart_with "NTP=127.0.0.1:$p" "PollIntervalMinSec=16" "PollIntervalMaxSec=128"
        wait_log "asks us to slow down (kiss code RATE), polling every 32s"
        # shellcheck disable=SC2154 # set by start_ntp_test_server ratefar (printf -v)
        kill -USR1 "$NTP_SERVER_PID_ratefar"
        wait_log "NTP reply from 127.0.0.1:$p: stratum 1, offset \(+10\.\|+9\.99\)[0-9]* s, .*, next poll in 32s\." 40
        log_has "next poll in 16s" && fail "a sample far off undid the RATE kiss"
        echo "result: $(grep -o 'NTP reply from .*' "$TIMESYNCD_LOG" | head -n 1)"
}

test_unsynchronized_server_is_skipped() { next_server_after unsync "is not synchronized, trying the next one"; }
test_too_large_root_distance_is_skipped() {
        next_server_after far "has too large root distance" "RootDistanceMaxSec=5"
}

test_silent_server_times_out_and_next_is_used() {
        local p
        p=$(free_port)
        start_ntp_test_server silent "$p" --mode=silent
        restart_with "NTP=127.0.0.1:$p 127.0.0.1:$good"
        wait_log "Timed out waiting for reply from 127.0.0.1:$p" 15
        wait_log "Initial clock synchronization to 127.0.0.1:$good"
}

# A reply larger than the receive buffer arrives cut (MSG_TRUNC), and its first 48 bytes are a
# correct answer: refused whole, the request times out, the next server is used.
test_oversized_reply_is_refused_not_parsed_cut() {
        local p
        p=$(free_port)
        start_ntp_test_server oversized "$p" --mode=oversized
        restart_with "NTP=127.0.0.1:$p 127.0.0.1:$good"
        wait_log "Ignoring reply from 127.0.0.1:$p (127.0.0.1:$p): it is larger than any reply accepted."
        wait_log "Timed out waiting for reply from 127.0.0.1:$p (127.0.0.1:$p): 1 reply was refused" 15
        wait_log "Initial clock synchronization to 127.0.0.1:$good"
        log_has "Contacted time server 127.0.0.1:$p" && fail "the oversized reply was used"
        log_has "Initial clock synchronization to 127.0.0.1:$p" && fail "synchronized to the oversized reply"
        true
}

test_fallback_only_without_other_servers() {
        restart_with "FallbackNTP=127.0.0.1:$good"
        wait_log "Initial clock synchronization to 127.0.0.1:$good"
        restart_with "NTP=127.0.0.1:1" "FallbackNTP=127.0.0.1:$good" "ConnectionRetrySec=1"
        wait_log "Tried every server" 15
        log_has "Selected server 127.0.0.1:$good" && fail "fallback used although NTP= is set"
        true
}

test_retry_after_all_failed_then_recovery() {
        local p
        p=$(free_port)
        start_ntp_test_server flaky "$p" --mode=silent
        restart_with "NTP=127.0.0.1:$p" "ConnectionRetrySec=1"
        wait_log "Tried every server" 15
        # shellcheck disable=SC2154 # set by start_ntp_test_server flaky (printf -v)
        kill -USR1 "$NTP_SERVER_PID_flaky"
        wait_log "Initial clock synchronization to 127.0.0.1:$p" 20
}

run_case test_deny_kiss_drops_the_server_and_moves_on
run_case test_rstr_kiss_drops_the_server_and_moves_on
run_case test_rate_kiss_slows_down_and_keeps_the_server
run_case test_rate_kiss_floor_survives_a_large_offset_sample
run_case test_unsynchronized_server_is_skipped
run_case test_too_large_root_distance_is_skipped
run_case test_silent_server_times_out_and_next_is_used
run_case test_oversized_reply_is_refused_not_parsed_cut
run_case test_fallback_only_without_other_servers
run_case test_retry_after_all_failed_then_recovery
