#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the daemon must refuse: plain NTP while NTS servers are configured (even when their key
# exchange fails, or NTS= names only invalid servers), and NTS-KE servers whose certificate does not verify (wrong name, unknown
# CA, expired). Each time: no synchronization, the reason in the log, the daemon keeps running.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs

restart_with() {
        if [ -n "${TIMESYNCD_PID:-}" ] && pid_alive "$TIMESYNCD_PID"; then
                stop_timesyncd
        fi
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$@"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
}

test_failed_key_exchange_never_falls_back_to_plain_ntp() {
        local dead plain fallback
        dead=$(free_port)
        plain=$(free_port)
        fallback=$(free_port)
        start_ntp_test_server plain "$plain"
        start_ntp_test_server fallback "$fallback"
        restart_with "localhost:$dead" "NTP=127.0.0.1:$plain" "FallbackNTP=127.0.0.1:$fallback" "ConnectionRetrySec=1"
        # The first failure, then the retry after backing off: both without a word to the others.
        wait_log_count "NTS key exchange with localhost:$dead failed: .* Trying again in" 2 30
        assert_plain_servers_unused plain fallback
}

# A typo in every NTS= name leaves no NTS server, and still no plain NTP.
test_nts_with_only_invalid_names_never_falls_back_to_plain_ntp() {
        local plain fallback
        plain=$(free_port)
        fallback=$(free_port)
        start_ntp_test_server plain2 "$plain"
        start_ntp_test_server fallback2 "$fallback"
        restart_with "bad_name!x" "NTP=127.0.0.1:$plain" "FallbackNTP=127.0.0.1:$fallback"
        wait_log "Invalid NTS server name or address, ignoring: bad_name!x"
        wait_log "NTS= names no valid server. There is no fallback to unauthenticated NTP"
        # A daemon that fell back would ask the plain server at once.
        sleep 2
        assert_plain_servers_unused plain2 fallback2
}

# A relative NTSTrustedCertificates= is refused; the system store must not be trusted instead:
# no key exchange reaches the server at all (before, one did and failed on its certificate).
test_invalid_trusted_certificates_do_not_fall_back_to_the_system_store() {
        local ntp ke
        ntp=$(free_port)
        ke=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony-trust" "$CERTDIR" "$ntp" "$ke"
        ! pid_alive "$TIMESYNCD_PID" || stop_timesyncd
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        : >"$TIMESYNCD_LOG"
        write_conf "$TEST_TMPDIR/ts.conf" "NTS=localhost:$ke" "NTSTrustedCertificates=ca.pem"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "NTSTrustedCertificates=ca.pem is not an absolute path: key exchanges are refused"
        wait_log "NTS key exchange with localhost:$ke failed: NTSTrustedCertificates= has no valid value" 20
        assert_never_synchronized
        [ "$(chrony_serverstat "$TEST_TMPDIR/chrony-trust" "NTS-KE connections accepted")" = 0 ] ||
                fail "a key exchange reached the server"
        stop_chrony "$TEST_TMPDIR/chrony-trust"
}

# NTSTrustedCertificates= naming a file without a certificate (empty, a private key) or a
# directory without subject-hash links: each key exchange fails naming the file and what is
# wrong with it (it said "setting up TLS failed: Invalid argument"); nothing synchronizes.
test_trusted_certificates_without_a_certificate_say_so() {
        local ntp ke f
        ntp=$(free_port)
        ke=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony-noca" "$CERTDIR" "$ntp" "$ke"
        mkdir -p "$TEST_TMPDIR/noca/dir"
        : >"$TEST_TMPDIR/noca/empty.pem"
        cp "$CERTDIR/server.key" "$TEST_TMPDIR/noca/key.pem"
        chmod 0644 "$TEST_TMPDIR/noca/key.pem"
        for f in "$TEST_TMPDIR/noca/empty.pem" "$TEST_TMPDIR/noca/key.pem" "$TEST_TMPDIR/noca/dir"; do
                restart_with "localhost:$ke" "NTSTrustedCertificates=$f"
                wait_log "NTS key exchange with localhost:$ke failed: setting up TLS failed: CA [a-z]* $f contains no certificate" 20
                ! log_has "Invalid argument" || fail "'Invalid argument' in the log for $f"
                assert_never_synchronized
        done
        stop_timesyncd
        stop_chrony "$TEST_TMPDIR/chrony-noca"
}

# certdir_with CHAIN: a copy of the test PKI whose server-chain.pem is CHAIN (same key).
certdir_with() {
        local dir=$TEST_TMPDIR/certs-$1
        mkdir -p "$dir"
        cp "$CERTDIR/server.key" "$dir/"
        cp "$CERTDIR/$1-chain.pem" "$dir/server-chain.pem"
        echo "$dir"
}

# check_certificate_refused CHAIN REASON: chronyd serves CHAIN; the key exchange must fail with
# REASON (the verification error, a regex) in the log, and nothing synchronizes.
check_certificate_refused() {
        local chain=$1 reason=$2 ntp ke
        ntp=$(free_port)
        ke=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony-$chain" "$(certdir_with "$chain")" "$ntp" "$ke"
        restart_with "localhost:$ke"
        wait_log "NTS key exchange with localhost:$ke failed: .*$reason" 20
        assert_never_synchronized
        [ "$(chrony_serverstat "$TEST_TMPDIR/chrony-$chain" "NTP packets received")" = 0 ] ||
                fail "an NTP request went to the server with the $chain certificate"
        stop_chrony "$TEST_TMPDIR/chrony-$chain"
}

test_certificate_for_another_name_is_refused() {
        check_certificate_refused wrongname "certificate verification failed: hostname mismatch"
}

test_certificate_from_unknown_ca_is_refused() {
        check_certificate_refused otherca "certificate verification failed: its issuer /CN=timesyncd-nts other CA is not a trusted CA (the trusted CAs are set by NTSTrustedCertificates=, for nts-query by --ca=)\\. Trying"
}

test_expired_certificate_is_refused() {
        check_certificate_refused expired "certificate verification failed: certificate has expired: valid until 2021-01-01 00:00 UTC\\. Trying"
}

run_case test_failed_key_exchange_never_falls_back_to_plain_ntp
run_case test_nts_with_only_invalid_names_never_falls_back_to_plain_ntp
run_case test_invalid_trusted_certificates_do_not_fall_back_to_the_system_store
run_case test_trusted_certificates_without_a_certificate_say_so
run_case test_certificate_for_another_name_is_refused
run_case test_certificate_from_unknown_ca_is_refused
run_case test_expired_certificate_is_refused
