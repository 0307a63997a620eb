#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nts-query against the mock NTS server's sabotage modes: each mode ends in the exit code
# nts-query(1) documents for it, with a message that names the cause.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=nts-query.sh
. "$(dirname "$0")/../../lib/nts-query.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=mock.sh
. "$(dirname "$0")/../../lib/mock.sh"

test_init
make_test_certs >/dev/null
out="$TEST_TMPDIR/out"

# mode_gives MODE EXIT REGEX [NTS-QUERY-ARG...]
mode_gives() {
        local mode=$1 want=$2 regex=$3 ntp
        shift 3
        # The mock announces its NTP port in a Port record, as chronyd does.
        ntp=$(free_port)
        start_mock_server "$mode" --ntp-listen-port="$ntp" --ntp-port="$ntp" --sabotage="$mode"
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=2 "$@" "localhost:$MOCK_KE_PORT"
        stop_daemon "$MOCK_PID"
        log "--sabotage=$mode: exit $QUERY_RC, $(tail -n 1 "$out")"
        expect_exit "$want" "$out" "--sabotage=$mode"
        expect_output "$out" "$regex" "--sabotage=$mode"
}

test_unsabotaged_mock_verifies() {
        mode_gives none 0 '^Result: +2 of 2 exchanges verified'
}

test_tls_sabotage_is_a_tls_failure() {
        # libssl itself refuses an ALPN protocol it did not offer.
        mode_gives bad-alpn "$QUERY_EXIT_TLS" '^TLS: +failed: TLS handshake .*(bad extension|ALPN)'
        mode_gives no-alpn "$QUERY_EXIT_TLS" '^TLS: +failed: .*ALPN'
}

test_ke_sabotage_is_a_ke_protocol_failure() {
        mode_gives no-cookies "$QUERY_EXIT_KE" 'NTS-KE response has no cookies'
        mode_gives error-record "$QUERY_EXIT_KE" '^Error record: +code 2 \(server reported an internal error\)'
        mode_gives warning-record "$QUERY_EXIT_KE" '^Warning record: +code [0-9]+'
        mode_gives unknown-critical "$QUERY_EXIT_KE" 'unknown critical record'
        mode_gives wrong-aead "$QUERY_EXIT_KE" 'server chose an AEAD algorithm we did not offer \(AEAD_AES_(128_GCM_SIV, 30|256_GCM_SIV, 31)\)'
        mode_gives no-aead "$QUERY_EXIT_KE" 'names no AEAD algorithm'
        mode_gives endless-records "$QUERY_EXIT_KE" 'too long|timed out waiting for the response' --timeout=3
}

test_slow_response_is_a_ke_timeout() {
        mode_gives slow "$QUERY_EXIT_KE" 'timed out waiting for the response' --timeout=2
}

test_ntp_sabotage_leaves_no_verified_exchange() {
        mode_gives bad-auth "$QUERY_EXIT_NTP" 'refused: NTP response failed authentication'
        mode_gives wrong-uid "$QUERY_EXIT_NTP" 'refused: NTP response does not echo our Unique Identifier'
        mode_gives nak "$QUERY_EXIT_NTP" 'refused: server refused our cookie \(NTSN\)'
        mode_gives unauthenticated "$QUERY_EXIT_NTP" 'refused: NTP response lacks the NTS authenticator'
}

run_case test_unsabotaged_mock_verifies
run_case test_tls_sabotage_is_a_tls_failure
run_case test_ke_sabotage_is_a_ke_protocol_failure
run_case test_slow_response_is_a_ke_timeout
run_case test_ntp_sabotage_leaves_no_verified_exchange
