#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The mock NTS server seen by openssl s_client: READY on stdout, TLS 1.3 only, ALPN ntske/1
# selected, a KE request answered (Next Protocol record first, counted in the count file),
# sabotage no-alpn switched off by SIGUSR1, clean exit on SIGTERM.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=../../lib/mock.sh
. "$(dirname "$0")/../../lib/mock.sh"
test_init
make_test_certs >/dev/null

s_client() {
        openssl s_client -connect "127.0.0.1:$MOCK_KE_PORT" -servername localhost -CAfile "$CERTDIR/ca.pem" \
                -verify_return_error "$@" < /dev/null 2>&1 || :
}

# A KE request: Next Protocol NTPv4, AEAD AES-SIV-CMAC-256, End of Message (all critical).
request='\x80\x01\x00\x02\x00\x00\x80\x04\x00\x02\x00\x0f\x80\x00\x00\x00'

test_tls13_with_ntske_alpn_answers_a_ke_request() {
        local out
        start_mock_server honest
        out=$(s_client -alpn ntske/1 -tls1_3)
        grep -q '^ALPN protocol: ntske/1$' <<< "$out" || fail "ntske/1 not selected: $out"
        grep -q '^New, TLSv1.3, ' <<< "$out" || fail "not TLS 1.3: $out"
        grep -q 'Verify return code: 0 (ok)' <<< "$out" || fail "certificate not verified: $out"

        out=$(s_client -alpn ntske/1 -tls1_2)
        grep -q '^ALPN protocol: ntske/1$' <<< "$out" && fail "TLS 1.2 handshake succeeded: $out"

        # shellcheck disable=SC2059 # the request's bytes are written as escapes of the format
        printf "$request" | openssl s_client -connect "127.0.0.1:$MOCK_KE_PORT" -servername localhost -alpn ntske/1 \
                -tls1_3 -CAfile "$CERTDIR/ca.pem" -verify_return_error -quiet -ign_eof \
                > "$TEST_TMPDIR/response" 2> "$TEST_TMPDIR/s_client.err" ||
                fail "KE exchange failed: $(cat "$TEST_TMPDIR/s_client.err")"
        head -c 6 "$TEST_TMPDIR/response" | od -An -tx1 | tr -d ' \n' | grep_q -x '800100020000' ||
                fail "response does not start with Next Protocol NTPv4: $(od -An -tx1 "$TEST_TMPDIR/response" | head -3)"
        [ "$(mock_count honest ke_sessions)" = 1 ] || fail "KE session not counted: $(cat "$TEST_TMPDIR/mock-honest.count")"
        stop_mock_server
}

test_sigusr1_switches_the_no_alpn_sabotage_off() {
        local out
        start_mock_server no-alpn --sabotage=no-alpn
        out=$(s_client -alpn ntske/1 -tls1_3)
        grep -q '^No ALPN negotiated$' <<< "$out" || fail "no-alpn sabotage still negotiated ALPN: $out"
        kill -USR1 "$MOCK_PID"
        wait_for 10 grep -q 'SIGUSR1: sabotage no-alpn off' "$TEST_TMPDIR/mock-no-alpn.log" || :
        out=$(s_client -alpn ntske/1 -tls1_3)
        grep -q '^ALPN protocol: ntske/1$' <<< "$out" || fail "SIGUSR1 did not switch the sabotage off: $out"
        stop_mock_server
}

run_case test_tls13_with_ntske_alpn_answers_a_ke_request
run_case test_sigusr1_switches_the_no_alpn_sabotage_off
