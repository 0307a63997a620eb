#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The server changes its keys while the daemon runs (chronyd restarted without its ntskeys
# file): our cookies are refused with an NTSN kiss, and the daemon runs a new key exchange and
# is authenticated again, without ever using an unauthenticated reply.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs

start_nts_peer
ntp=$NTS_PEER_NTP_PORT ke=$NTS_PEER_KE_PORT srv=$NTS_PEER_DIR

# A reply used (it passed verification) after the NAK.
_reply_after_nak() {
        sed -n '/refused our cookie (NTSN)/,$p' "$TIMESYNCD_LOG" | grep_q "NTP reply from 127.0.0.1:$ntp"
}

test_nak_after_server_key_change_leads_to_new_key_exchange() {
        # The shortest poll interval there is, so that the request with an old cookie comes
        # within one interval of the server's restart.
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke" "PollIntervalMinSec=16" "PollIntervalMaxSec=16"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        wait_log_count "NTS key exchange with localhost:$ke (.*) done" 1

        # Right after a reply the next request is a whole poll interval away: the server is
        # back long before it.
        stop_chrony "$srv"
        rm -f "$srv/ntskeys"
        start_chrony_nts_server "$srv" "$CERTDIR" "$ntp" "$ke"

        wait_log "NTS server localhost:$ke refused our cookie (NTSN), running a new key exchange" 60
        wait_log_count "NTS key exchange with localhost:$ke (.*) done" 2 20
        wait_for 20 _reply_after_nak || fail "no authenticated reply used after the new key exchange"
        [ "$(chrony_serverstat "$srv" "NTS-KE connections accepted")" = 1 ] ||
                fail "the restarted chronyd did not see exactly one new key exchange"
        [ "$(chrony_serverstat "$srv" "Authenticated NTP packets")" -ge 1 ] ||
                fail "the restarted chronyd did not get an authenticated request after the key exchange"
        log_has "Ignoring reply from .* that fails NTS verification" &&
                fail "a reply failed verification"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died"
}

run_case test_nak_after_server_key_change_leads_to_new_key_exchange
