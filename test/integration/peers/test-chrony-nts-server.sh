#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The chrony NTS server fixture works: the reference client gets authenticated time from it with
# the test CA, is refused with another CA, and serverstats sees the key exchanges.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=chrony.sh
. "$(dirname "$0")/../../lib/chrony.sh"

test_init
make_test_certs >/dev/null
rundir="$TEST_TMPDIR/chrony"
ntpport=$(free_port)
keport=$(free_port)
start_chrony_nts_server "$rundir" "$CERTDIR" "$ntpport" "$keport"

test_query_with_test_ca_succeeds() {
        chrony_query_nts localhost "$ntpport" "$keport" "$CERTDIR/ca.pem" ||
                fail "chronyd -Q got no NTS-authenticated time from the chrony server"
}

test_serverstats_count_key_exchange_and_authenticated_packets() {
        local ke auth
        ke=$(chrony_serverstat "$rundir" "NTS-KE connections accepted")
        auth=$(chrony_serverstat "$rundir" "Authenticated NTP packets")
        [ "$ke" -ge 1 ] || fail "serverstats counted $ke NTS-KE connections after a query"
        [ "$auth" -ge 1 ] || fail "serverstats counted $auth authenticated NTP packets after a query"
}

test_query_with_other_ca_fails() {
        local out auth_before auth_after
        auth_before=$(chrony_serverstat "$rundir" "Authenticated NTP packets")
        if out=$(CHRONY_QUERY_TIMEOUT=2 chrony_query_nts localhost "$ntpport" "$keport" "$CERTDIR/other-ca.pem"); then
                fail "chronyd -Q accepted a server certificate from an untrusted CA: $out"
        fi
        grep -qi 'certificate' <<<"$out" || fail "the failed query did not blame the certificate: $out"
        auth_after=$(chrony_serverstat "$rundir" "Authenticated NTP packets")
        [ "$auth_after" = "$auth_before" ] ||
                fail "authenticated packets went from $auth_before to $auth_after without a trusted KE"
}

# Tests of "no new key exchange after a restart" stop and start the server on the same ports.
test_restart_on_same_ports_serves_again() {
        stop_chrony "$rundir"
        ! pid_alive "$CHRONYD_PID" || fail "chronyd still runs after stop_chrony"
        [ -s "$rundir/ntskeys" ] || fail "chronyd left no ntskeys file in its ntsdumpdir"
        start_chrony_nts_server "$rundir" "$CERTDIR" "$ntpport" "$keport"
        [ "$(chrony_serverstat "$rundir" "NTS-KE connections accepted")" = 0 ] ||
                fail "serverstats of the restarted server did not start from zero"
        chrony_query_nts localhost "$ntpport" "$keport" "$CERTDIR/ca.pem" >/dev/null ||
                fail "chronyd -Q got no NTS-authenticated time after the restart"
}

test_server_runs_without_cap_sys_time() {
        assert_no_sys_time "$CHRONYD_PID" chronyd
}

run_case test_query_with_test_ca_succeeds
run_case test_serverstats_count_key_exchange_and_authenticated_packets
run_case test_query_with_other_ca_fails
run_case test_restart_on_same_ports_serves_again
run_case test_server_runs_without_cap_sys_time
