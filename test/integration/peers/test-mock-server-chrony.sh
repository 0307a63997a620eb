#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# chronyd as NTS client of the mock server, in query mode (-Q: measures, never sets the clock;
# also without CAP_SYS_TIME): honest, it gets authenticated samples; with bad-auth, none.
# chronyd comes from the peers tree (test/tools/fixtures/fetch-peers.sh, test/lib/chrony.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=../../lib/chrony.sh
. "$(dirname "$0")/../../lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=../../lib/mock.sh
. "$(dirname "$0")/../../lib/mock.sh"
test_init
make_test_certs >/dev/null

test_chronyd_gets_authenticated_samples_from_an_honest_mock() {
        start_mock_server honest
        CHRONY_QUERY_TIMEOUT=20 chrony_query_nts 127.0.0.1 "$MOCK_NTP_PORT" "$MOCK_KE_PORT" "$CERTDIR/ca.pem" \
                >"$TEST_TMPDIR/honest.out" || fail "chronyd got no authenticated sample: $(cat "$TEST_TMPDIR/honest.out")"
        stop_mock_server
        [ "$(mock_count honest ke_sessions)" = 1 ] ||
                fail "expected one KE session: $(cat "$TEST_TMPDIR/mock-honest.count")"
        [ "$(mock_count honest ntp_requests)" -ge 1 ] ||
                fail "no NTP request answered: $(cat "$TEST_TMPDIR/mock-honest.count")"
}

test_chronyd_accepts_nothing_with_a_bad_authenticator() {
        start_mock_server bad-auth --sabotage=bad-auth
        ! chrony_query_nts 127.0.0.1 "$MOCK_NTP_PORT" "$MOCK_KE_PORT" "$CERTDIR/ca.pem" >"$TEST_TMPDIR/bad-auth.out" ||
                fail "chronyd accepted a bad authenticator: $(cat "$TEST_TMPDIR/bad-auth.out")"
        stop_mock_server
        [ "$(mock_count bad-auth ntp_requests)" -ge 1 ] ||
                fail "no NTP request answered: $(cat "$TEST_TMPDIR/mock-bad-auth.count")"
}

run_case test_chronyd_gets_authenticated_samples_from_an_honest_mock
run_case test_chronyd_accepts_nothing_with_a_bad_authenticator
