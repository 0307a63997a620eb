#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon against the mock NTS server (test/tools/nts-mock-server), one sabotage mode at a
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
        local side mode pattern n=0
        while read -r side mode pattern; do
                [ -z "$only" ] || [ "$side" = "$only" ] || [ "$mode" = "$only" ] || continue
                log "sabotage $mode"
                check_sabotage "$mode" "$pattern"
                n=$((n + 1))
        done <<<"$MODES"
        [ "$n" -gt 0 ] || fail "no sabotage mode for '$only'"
}

# NAKs are not authenticated: whoever answers every request with NTSN must not get a key
# exchange per NAK in return.
test_nak_for_fresh_cookies_backs_off() {
        forget_everything
        start_mock nak
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE" "ConnectionRetrySec=1" "PollIntervalMinSec=16"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        # The second refusal in a row doubles the backoff.
        wait_log "NTS key exchange with localhost:$MOCK_KE failed: the server refused the cookies it had just issued (NTSN)\. Trying again in 2s" 30
        [ "$(mock_count nak ke_sessions)" -le 3 ] ||
                fail "$(mock_count nak ke_sessions) key exchanges for two refusals"
        assert_not_synchronized nak
        stop_timesyncd
        stop_daemon "$MOCK_PID"
}

only=${1:-}
run_case test_mock_sabotage_is_survived_and_recovered_from
if [ -z "$only" ] || [ "$only" = ntp ] || [ "$only" = nak ]; then
        run_case test_nak_for_fresh_cookies_backs_off
fi
