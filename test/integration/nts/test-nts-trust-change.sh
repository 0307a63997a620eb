#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTSTrustedCertificates= narrowed: the mock NTS server's certificate is signed by the test CA,
# which the trusted file first holds beside another CA and then no longer does (the file
# rewritten in place, or the setting naming a file of the other CA alone). The keys and cookies
# obtained under the test CA were bound to it: across a restart and across a reload they are
# dropped, the log says why, the key exchange runs again and fails on the certificate, and the
# server gets no NTP request any more. Before, the saved jar kept it in use for up to 7 days.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs

start_nts_mock trust
KE=$MOCK_KE
TRUST=$TEST_TMPDIR/trust.pem
CONF=$TEST_TMPDIR/ts.conf
JAR=$(nts_jar_file "localhost:$KE")
DROPPED="Not resuming NTS with localhost:$KE from $JAR: trust settings changed since the cookies were obtained; running a new key exchange\."
KE_FAILED="NTS key exchange with localhost:$KE failed: .*certificate"

# trusted FILE: the trust file holds FILE's certificates, rewritten in place.
trusted() {
        cat "$@" >"$TRUST"
        chmod 0644 "$TRUST"
}

# synced_under_both_cas NAME: a daemon (log NAME.log) that trusts both CAs got keys from the
# mock and synchronized; it still runs.
synced_under_both_cas() {
        trusted "$CERTDIR/ca.pem" "$CERTDIR/other-ca.pem"
        write_conf "$CONF" "NTS=localhost:$KE" "NTSTrustedCertificates=$TRUST" "ConnectionRetrySec=1"
        rm -f "$JAR"
        TIMESYNCD_LOG=$TEST_TMPDIR/$1.log
        start_timesyncd "$CONF" --test-poll-interval=1s
        wait_log "$(synced_line "localhost:$KE")" 30
}

# not_used_again: the key exchange fails on the certificate, twice (the retry comes), and no NTP
# request reaches the server from now on; nothing was synchronized to it again.
not_used_again() {
        local requests syncs
        requests=$(mock_count trust ntp_requests)
        syncs=$(log_count "$(synced_line "localhost:$KE")")
        wait_log_count "$KE_FAILED" 2 20
        [ "$(mock_count trust ntp_requests)" = "$requests" ] ||
                fail "$(( $(mock_count trust ntp_requests) - requests )) NTP requests reached the server after its CA was removed"
        [ "$(log_count "$(synced_line "localhost:$KE")")" = "$syncs" ] || fail "synchronized to the server again"
        log_has "Resuming NTS with localhost:$KE" && fail "resumed with the keys of the old trust"
        echo "result: $(grep -m 1 -o "Not resuming NTS.*" "$TIMESYNCD_LOG")"
        echo "result: $(grep -m 1 -o "NTS key exchange with localhost:$KE failed: .*certificate[^.]*" "$TIMESYNCD_LOG")"
}

test_keys_of_a_ca_removed_while_stopped_are_dropped_at_the_next_start() {
        synced_under_both_cas restart-first
        stop_timesyncd
        [ -s "$JAR" ] || fail "no state file saved at the stop"
        grep -Eq '^trust-sha256=[0-9a-f]{64}$' "$JAR" || fail "the state file is not bound to its trust"

        trusted "$CERTDIR/other-ca.pem"
        TIMESYNCD_LOG=$TEST_TMPDIR/restart.log
        start_timesyncd "$CONF" --test-poll-interval=1s
        wait_log "$DROPPED" 10
        [ ! -e "$JAR" ] || fail "the state file of the old trust is still there"
        not_used_again
        stop_timesyncd
}

# reload_narrowed HOW: while the daemon uses the server, its CA goes (HOW: in-place, the trusted
# file rewritten; path, the setting names another file), and a reload follows.
reload_narrowed() {
        synced_under_both_cas "reload-$1"
        case $1 in
        in-place) trusted "$CERTDIR/other-ca.pem" ;;
        path) write_conf "$CONF" "NTS=localhost:$KE" "NTSTrustedCertificates=$CERTDIR/other-ca.pem" "ConnectionRetrySec=1" ;;
        esac
        kill -HUP "$TIMESYNCD_PID"
        wait_log "$DROPPED" 10
        not_used_again
        stop_timesyncd
}

test_keys_of_a_ca_removed_in_place_are_dropped_at_a_reload() {
        reload_narrowed in-place
        log_has "Configuration reloaded, the trusted certificates changed: NTS keys obtained under the old ones are dropped" ||
                fail "the reload did not say that the trusted certificates changed"
}

test_keys_of_a_ca_no_longer_named_are_dropped_at_a_reload() {
        reload_narrowed path
}

# Nothing changed: the keys stay, across a reload and a restart (no key exchange).
test_keys_stay_while_the_trust_is_unchanged() {
        local sessions
        synced_under_both_cas unchanged
        sessions=$(mock_count trust ke_sessions)
        kill -HUP "$TIMESYNCD_PID"
        wait_log "Configuration reloaded, servers unchanged" 10
        stop_timesyncd
        TIMESYNCD_LOG=$TEST_TMPDIR/unchanged-restart.log
        start_timesyncd "$CONF" --test-poll-interval=1s
        wait_log "Resuming NTS with localhost:$KE: .* no key exchange needed" 10
        wait_log "$(synced_line "localhost:$KE")" 30
        stop_timesyncd
        [ "$(mock_count trust ke_sessions)" = "$sessions" ] || fail "a key exchange ran while the trust was unchanged"
}

run_case test_keys_of_a_ca_removed_while_stopped_are_dropped_at_the_next_start
run_case test_keys_of_a_ca_removed_in_place_are_dropped_at_a_reload
run_case test_keys_of_a_ca_no_longer_named_are_dropped_at_a_reload
run_case test_keys_stay_while_the_trust_is_unchanged
