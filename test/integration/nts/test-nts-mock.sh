#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon against the mock NTS server (test/tools/mock-server/nts-mock-server), one sabotage mode at a
# time: each breaks one rule of RFC 8915 in the key exchange or in the NTP replies. Never
# synchronized, a clear log line, the daemon survives; after SIGUSR1 (the mock behaves again)
# it recovers to NTS authenticated time.
# Usage: test-nts-mock.sh [ke|ntp|MODE]: only the modes of that side, or one mode (default: all).
set -euo pipefail
. "$(dirname "$0")/../../lib/common.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs

# side  mode              what the daemon must log (extended regex)
MODES="\
ke    bad-alpn          NTS key exchange with localhost:[0-9]+ failed: TLS handshake .*alpn
ke    no-cookies        NTS key exchange with localhost:[0-9]+ failed: .*response has no cookies
ke    error-record      NTS key exchange with localhost:[0-9]+ failed: .*server reported an internal error
ke    unknown-critical  NTS key exchange with localhost:[0-9]+ failed: .*unknown critical record
ke    wrong-aead        NTS key exchange with localhost:[0-9]+ failed: .*AEAD algorithm we did not offer
ke    slow              NTS key exchange with localhost:[0-9]+ failed: timed out waiting for the response
ntp   bad-auth          Ignoring reply from 127.0.0.1:[0-9]+ \(localhost:[0-9]+\) that fails NTS verification: .*failed authentication
ntp   wrong-uid         Ignoring reply from 127.0.0.1:[0-9]+ \(localhost:[0-9]+\) that fails NTS verification: .*Unique Identifier
ntp   unauthenticated   Ignoring reply from 127.0.0.1:[0-9]+ \(localhost:[0-9]+\) that fails NTS verification: .*lacks the NTS authenticator
ntp   oversized         Ignoring reply from 127.0.0.1:[0-9]+ \(localhost:[0-9]+\): it is larger than any reply accepted
ntp   nak               NTS server localhost:[0-9]+ refused our cookie \(NTSN\)"

# Every case starts without cookies, synchronized flag or log of the one before.
forget_everything() {
        rm -f "$TEST_TMPDIR"/state/nts-*.jar "$TEST_TMPDIR/runtime/synchronized"
        : >"$TIMESYNCD_LOG"
}

assert_not_synchronized() {
        log_has "Initial clock synchronization" && fail "$1: the daemon synchronized"
        log_has "Contacted time server" && fail "$1: the daemon took time from the server"
        [ ! -e "$TEST_TMPDIR/runtime/synchronized" ] || fail "$1: synchronized flag written"
        pid_alive "$TIMESYNCD_PID" || fail "$1: the daemon died"
}

# check_sabotage MODE PATTERN: see the header.
check_sabotage() {
        local mode=$1 pattern=$2
        forget_everything
        start_mock "$mode"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE" "ConnectionRetrySec=1" "PollIntervalMinSec=16"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_for 30 grep -Eiq -- "$pattern" "$TIMESYNCD_LOG" || fail "$mode: no '$pattern' in the daemon log within 30 s"
        assert_not_synchronized "$mode"

        kill -USR1 "$MOCK_PID"
        wait_log "Initial clock synchronization to localhost:$MOCK_KE (offset .*, NTS authenticated" 60
        pid_alive "$TIMESYNCD_PID" || fail "$mode: the daemon died"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
}

test_mock_sabotage_is_survived_and_recovered_from() {
        for_each_mode "$only" check_sabotage sabotage
}

# NAKs are not authenticated: whoever answers every request with NTSN must not get a key
# exchange per NAK in return. The waits come from the jittered ladder (timesyncd-backoff,
# docs/POOLS.md): none below ConnectionRetrySec= (1 s here), the n-th below 2^n s, and drawn at
# random, not the 1 s, 2 s, 4 s of a deterministic schedule that a whole fleet would share.
test_nak_for_fresh_cookies_backs_off_with_jittered_waits() {
        local waits w n=0 fractional=0
        forget_everything
        start_mock nak
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE" "ConnectionRetrySec=1" "PollIntervalMinSec=16"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log_count "NTS key exchange with localhost:$MOCK_KE failed: the server refused the cookies it had just issued (NTSN)\. Trying again in" 3 30
        waits=$(sed -n 's/.*had just issued (NTSN)\. Trying again in \([0-9.]*\)s at the earliest\.$/\1/p' "$TIMESYNCD_LOG" | head -n 3)
        for w in $waits; do
                n=$((n + 1))
                awk -v w="$w" -v n="$n" 'BEGIN { exit !(w >= 1 && w < 2 ^ n) }' ||
                        fail "wait $n: ${w}s, expected at least 1 s and less than $((2 ** n)) s"
                [[ $w == *.* ]] && fractional=$((fractional + 1))
        done
        [ "$n" = 3 ] || fail "$n waits read from the log: $(grep 'Trying again' "$TIMESYNCD_LOG")"
        [ "$fractional" -ge 1 ] || fail "the waits $(paste -sd' ' <<<"$waits") are whole seconds: not drawn at random"
        [ "$(mock_count nak ke_sessions)" -le 4 ] ||
                fail "$(mock_count nak ke_sessions) key exchanges for three refusals"
        assert_not_synchronized nak
        echo "result: waits after three refused fresh cookies: $(echo "$waits" | paste -sd' ') s (each in [1, 2^n) s)"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
}

# An Error record 1 (bad request) is the answer until someone reconfigures the server: the next
# key exchange 30 to 60 minutes later, at once (the top of the ladder), not after the first rung.
test_bad_request_error_record_waits_at_the_top_of_the_ladder() {
        local minutes
        forget_everything
        start_mock bad-request
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE" "ConnectionRetrySec=1"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "NTS key exchange with localhost:$MOCK_KE failed: .*refused our request as malformed.* Trying again in [0-9]*min" 10
        minutes=$(sed -n 's/.*refused our request as malformed.* Trying again in \([0-9]*\)min .*/\1/p' "$TIMESYNCD_LOG" | head -n 1)
        [ -n "$minutes" ] || fail "no wait in minutes: $(grep 'Trying again' "$TIMESYNCD_LOG")"
        if [ "$minutes" -lt 30 ] || [ "$minutes" -ge 60 ]; then
                fail "retry after $minutes min, expected 30 to 59"
        fi
        sleep 3
        [ "$(log_count "Starting NTS key exchange")" = 1 ] || fail "$(log_count "Starting NTS key exchange") key exchanges started"
        assert_not_synchronized bad-request
        echo "result: $(grep -o 'Trying again in .*' "$TIMESYNCD_LOG")"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
}

# A server that changes its keys after every reply (the mock's nak-every-second): each set of
# cookies works once, then a NAK asks for a new key exchange, and none of them fails, so the
# ladder never sees it. The cap of 16 key exchanges per server name and hour does: one notice,
# no 17th key exchange, the daemon runs on and says why in NTSStatus.
test_key_exchanges_with_one_server_name_are_capped_with_one_notice() {
        forget_everything
        start_mock nak-every-second
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE" "ConnectionRetrySec=1"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=50ms
        wait_log "Postponing the NTS key exchange with localhost:$MOCK_KE: 16 within 1h already, the most one server name gets\. Next one in" 30
        sleep 3
        [ "$(log_count "Postponing the NTS key exchange")" = 1 ] ||
                fail "$(log_count "Postponing the NTS key exchange") notices, expected 1"
        [ "$(mock_count nak-every-second ke_sessions)" = 16 ] ||
                fail "$(mock_count nak-every-second ke_sessions) key exchanges at the server, expected 16"
        log_has "NTS key exchange with .* failed" && fail "a postponed key exchange was logged as a failure"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died"
        echo "result: $(mock_count nak-every-second ke_sessions) key exchanges, then $(grep -o 'Postponing .*' "$TIMESYNCD_LOG")"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
}

# A kiss code DENY without the NTS authenticator, as anyone on the path can forge one (RFC 8915
# section 5.7: kiss codes count only when authenticated): ignored like every unauthenticated
# reply. The server is not dropped, and gives time as soon as it answers properly again.
test_forged_deny_kiss_does_not_drop_the_server() {
        forget_everything
        start_nts_mock forged-deny --sabotage=unauthenticated --kiss=DENY
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE" "ConnectionRetrySec=1" "PollIntervalMinSec=16"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Ignoring reply from 127\.0\.0\.1:[0-9]* (localhost:$MOCK_KE) that fails NTS verification: .*lacks the NTS authenticator" 30
        [ "$(mock_count forged-deny ntp_kisses)" -ge 1 ] || fail "the mock sent no kiss code"
        log_has "refuses service" && fail "a forged DENY dropped the server: $(grep -m1 "refuses service" "$TIMESYNCD_LOG")"
        assert_not_synchronized forged-deny
        kill -USR1 "$MOCK_PID"
        wait_log "Initial clock synchronization to localhost:$MOCK_KE (offset .*, NTS authenticated" 60
        stop_timesyncd
        stop_daemon "$MOCK_PID"
}

only=${1:-}
run_case test_mock_sabotage_is_survived_and_recovered_from
if [ -z "$only" ] || [ "$only" = ntp ] || [ "$only" = nak ]; then
        run_case test_nak_for_fresh_cookies_backs_off_with_jittered_waits
        run_case test_key_exchanges_with_one_server_name_are_capped_with_one_notice
fi
if [ -z "$only" ] || [ "$only" = ntp ] || [ "$only" = unauthenticated ]; then
        run_case test_forged_deny_kiss_does_not_drop_the_server
fi
if [ -z "$only" ] || [ "$only" = ke ] || [ "$only" = bad-request ]; then
        run_case test_bad_request_error_record_waits_at_the_top_of_the_ladder
fi
