#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The NTPsec NTS server fixture works: inside the test's own network namespace it serves
# synchronised stratum-1 time, and the reference client gets NTS-authenticated time from it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=ntpsec.sh
. "$(dirname "$0")/../../lib/ntpsec.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=chrony.sh
. "$(dirname "$0")/../../lib/chrony.sh"

test_init
make_test_certs >/dev/null
netns_create
rundir="$TEST_TMPDIR/ntpsec"
start_ntpsec_nts_server "$rundir" "$CERTDIR" "$NETNS"

test_server_answers_synchronised_stratum_1() {
        local answer
        answer=$(ntp_probe --netns "$NETNS" 127.0.0.1 "$NTPSEC_NTP_PORT")
        [ "$answer" = "0 1" ] || fail "expected leap 0 stratum 1, got '$answer'"
        ntpsec_ntpq "$NETNS" -c "rv 0 stratum" 127.0.0.1 | grep_q 'stratum=1' ||
                fail "ntpq does not report stratum 1"
}

test_server_is_invisible_outside_its_namespace() {
        if ss -Hltnp "sport = :$NTPSEC_KE_PORT" | grep_q "pid=$NTPSEC_PID,"; then
                fail "ntpd listens on the host network"
        fi
}

test_query_in_namespace_succeeds() {
        chrony_query_nts --netns "$NETNS" localhost "$NTPSEC_NTP_PORT" "$NTPSEC_KE_PORT" "$CERTDIR/ca.pem" ||
                fail "chronyd -Q got no NTS-authenticated time from NTPsec"
}

# Same query, but run as a shell function inside the namespace: what netns_exec offers tests.
query_from_inside() {
        chrony_query_nts localhost "$NTPSEC_NTP_PORT" "$NTPSEC_KE_PORT" "$CERTDIR/ca.pem"
}

test_function_runs_inside_namespace() {
        netns_exec "$NETNS" query_from_inside || fail "query_from_inside failed inside $NETNS"
}

test_server_runs_without_cap_sys_time() {
        assert_no_sys_time "$NTPSEC_PID" ntpd
}

run_case test_server_answers_synchronised_stratum_1
run_case test_server_is_invisible_outside_its_namespace
run_case test_query_in_namespace_succeeds
run_case test_function_runs_inside_namespace
run_case test_server_runs_without_cap_sys_time
