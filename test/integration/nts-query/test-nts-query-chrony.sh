#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nts-query against chronyd 4.3 as NTS server on loopback: verified exchanges, the negotiated
# port, the JSON keys, AEAD probing, certificate and connection failures, and --plain.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=chrony.sh
. "$(dirname "$0")/../../lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=nts-query.sh
. "$(dirname "$0")/../../lib/nts-query.sh"

test_init
make_test_certs >/dev/null
ntpport=$(free_port)
keport=$(free_port)
start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$ntpport" "$keport"
out="$TEST_TMPDIR/out"
# The SANs of make-certs.sh's server chains, as nts-query prints them (text: a regex) and in JSON.
SANS_TEXT='DNS:localhost, DNS:ntp\.test, DNS:\*\.nts\.test, IP:127\.0\.0\.1, IP:::1'
SANS_JSON="['DNS:localhost', 'DNS:ntp.test', 'DNS:*.nts.test', 'IP:127.0.0.1', 'IP:::1']"

test_query_verifies_every_exchange() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" "localhost:$keport"
        save_output chrony "$out"
        expect_exit 0 "$out" "query to chronyd"
        expect_output "$out" '^Offered AEAD: +AEAD_AES_SIV_CMAC_512 \(17\) AEAD_AES_SIV_CMAC_384 \(16\) AEAD_AES_SIV_CMAC_256 \(15\)$' \
                "the default offer: AES-SIV-CMAC only, strongest first"
        expect_output "$out" '^TLS: +TLSv1\.3, ' "TLS version and cipher"
        expect_output "$out" '^Certificate: +subject .*CN=server' "certificate subject"
        expect_output "$out" "^ +SANs +$SANS_TEXT\$" "certificate SANs"
        expect_output "$out" 'issuer .*timesyncd-nts test CA' "certificate issuer"
        expect_output "$out" 'verification ok \(name localhost, trusting .*/ca\.pem\)' "verification result"
        expect_output "$out" '^AEAD: +AEAD_AES_SIV_CMAC_256 \(15\)' "negotiated AEAD"
        expect_output "$out" '^Cookies: +8, sizes( 100){8} bytes' "chrony's eight 100-byte cookies"
        expect_output "$out" "port $ntpport \\(negotiated\\)" "chrony's Port Negotiation"
        [ "$(grep -c '^Exchange [0-9]*: .*stratum 1, .*, verified' "$out")" = 4 ] ||
                fail "not 4 verified exchanges: $(cat "$out")"
        expect_output "$out" '^Result: +4 of 4 exchanges verified' "summary"
}

test_json_has_stable_keys_and_the_negotiated_values() {
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=2 "localhost:$keport"
        save_output chrony-json "$out.json"
        expect_exit 0 "$out" "--json query to chronyd"
        json_check "$out.json" "${JSON_STABLE_KEYS[@]}" \
                "j['exit_code'] == 0 and j['status'] == 'verified' and j['error'] is None" \
                "j['verified'] == 2 and len(j['exchanges']) == 2" \
                "all(x['verified'] and x['authenticated'] and x['stratum'] == 1 for x in j['exchanges'])" \
                "j['ke']['aead'] == 15 and j['ke']['aead_name'] == 'AEAD_AES_SIV_CMAC_256'" \
                "j['ke']['cookie_sizes'] == [100] * 8" \
                "j['ke']['ntp_port'] == $ntpport and j['ke']['ntp_address'] == '127.0.0.1:$ntpport'" \
                "j['ke']['tls']['version'] == 'TLSv1.3' and j['ke']['tls']['verification'] == 'ok'" \
                "j['ke']['tls']['sans'] == $SANS_JSON" \
                "[r['type'] for r in j['ke']['records']][-1] == 0" \
                "j['ke']['errors'] == [] and j['ke']['warnings'] == [] and j['plain'] is None"
}

test_cookies_are_refilled_beyond_the_first_eight() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=12 "localhost:$keport"
        expect_exit 0 "$out" "12 exchanges with 8 cookies from the KE"
        expect_output "$out" '^Result: +12 of 12 exchanges verified' "12 verified exchanges"
}

test_ipv6_address_literal_with_port() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" -6 --count=1 "[::1]:$keport"
        expect_exit 0 "$out" "query over IPv6"
        expect_output "$out" "^NTP address: +\\[::1\\]:$ntpport" "NTP over IPv6 to the KE address"
}

# PEERS.md says chrony answers 15 to a 16/17 request; chronyd 4.3 measured here answers an empty
# AEAD record unless 15 is offered too, and takes 15 when it is.
test_aead_probe_of_siv_cmac_384_and_512_finds_no_common_algorithm() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" -v --aead=AES_SIV_CMAC_384,17 "localhost:$keport"
        save_output chrony-aead-16-17 "$out"
        expect_exit "$QUERY_EXIT_KE" "$out" "--aead=16,17 against chronyd"
        expect_output "$out" 'server supports none of our AEAD algorithms' "the reason"
        expect_output "$out" 'type +4 AEAD Algorithm Negotiation +critical +0 bytes' "the empty AEAD record"
}

test_aead_probe_with_siv_cmac_256_last_gets_256() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 --aead=17,16,15 "localhost:$keport"
        expect_exit 0 "$out" "--aead=17,16,15 against chronyd"
        expect_output "$out" '^AEAD: +AEAD_AES_SIV_CMAC_256 \(15\)' "chrony's only algorithm"
}

# start_chrony_with_chain NAME CHAIN: another chronyd, whose certificate is CHAIN; sets
# CHAIN_KEPORT. (Not in a command substitution: the server must stay a child of the test.)
start_chrony_with_chain() {
        local dir="$TEST_TMPDIR/certs-$1"
        mkdir -p "$dir"
        cp "$CERTDIR/server.key" "$dir/server.key"
        cp "$CERTDIR/$2" "$dir/server-chain.pem"
        CHAIN_KEPORT=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony-$1" "$dir" "$(free_port)" "$CHAIN_KEPORT"
}


# refused_certificate_is_shown NAME KEPORT CA SUBJECT SANS-REGEX SANS-LIST ISSUER NOT-BEFORE NOT-AFTER ERROR
# [MESSAGE]: nts-query to KEPORT trusting CA fails in the TLS step (exit 5) and still shows the
# certificate, in text and in JSON; the reason is MESSAGE (a regex; default ERROR), said once on
# standard output, and the JSON keeps the verifier's own ERROR. NOT-BEFORE/AFTER are dates
# (regexes).
refused_certificate_is_shown() {
        local name=$1 port=$2 ca=$3 subject=$4 sans=$5 sans_json=$6 issuer=$7 nb=$8 na=$9 error=${10}
        local message=${11:-${10}}
        nts_query "$out" --ca="$ca" "localhost:$port"
        save_output "chrony-$name" "$out"
        expect_exit "$QUERY_EXIT_TLS" "$out" "$name certificate"
        expect_output "$out" "^TLS: +failed: TLS handshake with 127\\.0\\.0\\.1:$port failed: certificate verification failed: $message\$" \
                "$name: the TLS failure"
        # Standard output alone (nts_query appends standard error, which ends with the reason).
        [ "$(head -n "-$(wc -l <"$out.err")" "$out" | grep -Ec -- "$message")" = 1 ] ||
                fail "$name: the reason is not said once on standard output: $(cat "$out")"
        expect_output "$out" "^Certificate: +subject /CN=$subject\$" "$name: subject"
        expect_output "$out" "^ +SANs +$sans\$" "$name: SANs"
        expect_output "$out" "^ +issuer +/CN=$issuer\$" "$name: issuer"
        expect_output "$out" "^ +valid +${nb}T[0-9:]+Z to ${na}T[0-9:]+Z\$" "$name: validity"
        expect_output "$out" "^ +verification FAILED, see TLS above \\(name localhost, trusting " "$name: the failure named"
        nts_query_json "$out" --ca="$ca" "localhost:$port"
        expect_exit "$QUERY_EXIT_TLS" "$out" "$name certificate, --json"
        json_check "$out.json" "${JSON_STABLE_KEYS[@]}" \
                "j['status'] == 'tls' and j['ke']['stage'] == 'TLS' and not j['ke']['tls']['handshake']" \
                "j['ke']['tls']['certificate'] is True and j['ke']['tls']['version'] is None" \
                "j['ke']['tls']['subject'] == '/CN=$subject' and j['ke']['tls']['issuer'] == '/CN=$issuer'" \
                "j['ke']['tls']['sans'] == $sans_json" \
                "__import__('re').fullmatch('${nb}T[0-9:]+Z', j['ke']['tls']['not_before'])" \
                "__import__('re').fullmatch('${na}T[0-9:]+Z', j['ke']['tls']['not_after'])" \
                "j['ke']['tls']['verification'] == '$error'" \
                "j['exchanges'] == [] and j['verified'] == 0"
}

test_certificate_from_another_ca_is_shown_and_refused() {
        # OpenSSL calls a chain whose root is not trusted "self-signed certificate in certificate
        # chain"; the reason names the issuer that is not trusted and the settings that decide.
        refused_certificate_is_shown otherca "$keport" "$CERTDIR/other-ca.pem" server "$SANS_TEXT" "$SANS_JSON" \
                "timesyncd-nts test CA" 2024-01-01 2099-12-31 "self-signed certificate in certificate chain" \
                "its issuer /CN=timesyncd-nts test CA is not a trusted CA \\(the trusted CAs are set by NTSTrustedCertificates=, for nts-query by --ca=\\)"
        start_chrony_with_chain otherca otherca-chain.pem
        refused_certificate_is_shown otherca-chain "$CHAIN_KEPORT" "$CERTDIR/ca.pem" otherca "$SANS_TEXT" "$SANS_JSON" \
                "timesyncd-nts other CA" 2024-01-01 2099-12-31 "self-signed certificate in certificate chain" \
                "its issuer /CN=timesyncd-nts other CA is not a trusted CA \\(the trusted CAs are set by NTSTrustedCertificates=, for nts-query by --ca=\\)"
}

test_expired_certificate_is_shown_and_refused() {
        start_chrony_with_chain expired expired-chain.pem
        refused_certificate_is_shown expired "$CHAIN_KEPORT" "$CERTDIR/ca.pem" expired "$SANS_TEXT" "$SANS_JSON" \
                "timesyncd-nts test CA" 2020-01-01 2021-01-01 "certificate has expired" \
                "certificate has expired: valid until 2021-01-01 00:00 UTC"
}

test_not_yet_valid_certificate_is_shown_and_refused() {
        start_chrony_with_chain future future-chain.pem
        refused_certificate_is_shown future "$CHAIN_KEPORT" "$CERTDIR/ca.pem" future "$SANS_TEXT" "$SANS_JSON" \
                "timesyncd-nts test CA" 2099-01-01 2099-12-31 "certificate is not yet valid" \
                "certificate is not yet valid: valid from 2099-01-01 00:00 UTC"
}

test_certificate_for_another_name_is_shown_and_refused() {
        start_chrony_with_chain wrongname wrongname-chain.pem
        refused_certificate_is_shown wrongname "$CHAIN_KEPORT" "$CERTDIR/ca.pem" wrongname 'DNS:wrong\.test' \
                "['DNS:wrong.test']" "timesyncd-nts test CA" 2024-01-01 2099-12-31 "hostname mismatch" \
                "hostname mismatch: the certificate is for DNS:wrong\\.test, not for localhost"
}

test_self_signed_certificate_is_shown_and_refused() {
        start_chrony_with_chain selfsigned selfsigned-chain.pem
        refused_certificate_is_shown selfsigned "$CHAIN_KEPORT" "$CERTDIR/ca.pem" selfsigned "$SANS_TEXT" "$SANS_JSON" \
                selfsigned '[0-9-]+' '[0-9-]+' "self-signed certificate"
}

# A --ca file without a certificate is named as such, not "Invalid argument".
test_ca_file_without_a_certificate_says_so() {
        : >"$TEST_TMPDIR/empty.pem"
        nts_query "$out" --ca="$TEST_TMPDIR/empty.pem" "localhost:$keport"
        expect_exit "$QUERY_EXIT_TLS" "$out" "--ca=empty.pem"
        expect_output "$out" "^TLS: +failed: setting up TLS failed: CA file $TEST_TMPDIR/empty\\.pem contains no certificate\$" \
                "the reason"
        ! grep -q "Invalid argument" "$out" || fail "'Invalid argument' in: $(cat "$out")"
}

test_dead_port_is_a_connect_failure() {
        local dead
        dead=$(free_port)
        nts_query "$out" --ca="$CERTDIR/ca.pem" "127.0.0.1:$dead"
        expect_exit "$QUERY_EXIT_CONNECT" "$out" "nothing listens on $dead"
        expect_output "$out" 'Connection refused' "the reason"
}

test_plain_query_is_labelled_unauthenticated() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 --plain "localhost:$keport"
        save_output chrony-plain "$out"
        expect_exit 0 "$out" "--plain query"
        expect_output "$out" "^Plain NTP: +UNAUTHENTICATED query to 127\\.0\\.0\\.1:$ntpport" "label and target"
        expect_output "$out" 'stratum 1, .*, UNAUTHENTICATED$' "the plain reply"
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 --plain "localhost:$keport"
        json_check "$out.json" \
                "j['plain']['address'] == '127.0.0.1:$ntpport'" \
                "j['plain']['reply']['authenticated'] is False and j['plain']['reply']['verified'] is False" \
                "j['plain']['reply']['stratum'] == 1"
}

test_plain_query_to_a_given_server_after_a_failed_key_exchange() {
        nts_query "$out" --ca="$CERTDIR/other-ca.pem" --plain="127.0.0.1:$ntpport" "localhost:$keport"
        expect_exit "$QUERY_EXIT_TLS" "$out" "the KE fails, the plain query does not change that"
        expect_output "$out" "^Plain NTP: +UNAUTHENTICATED query to 127\\.0\\.0\\.1:$ntpport" "label"
}

run_case test_query_verifies_every_exchange
run_case test_json_has_stable_keys_and_the_negotiated_values
run_case test_cookies_are_refilled_beyond_the_first_eight
run_case test_ipv6_address_literal_with_port
run_case test_aead_probe_of_siv_cmac_384_and_512_finds_no_common_algorithm
run_case test_aead_probe_with_siv_cmac_256_last_gets_256
run_case test_certificate_from_another_ca_is_shown_and_refused
run_case test_expired_certificate_is_shown_and_refused
run_case test_not_yet_valid_certificate_is_shown_and_refused
run_case test_certificate_for_another_name_is_shown_and_refused
run_case test_self_signed_certificate_is_shown_and_refused
run_case test_ca_file_without_a_certificate_says_so
run_case test_dead_port_is_a_connect_failure
run_case test_plain_query_is_labelled_unauthenticated
run_case test_plain_query_to_a_given_server_after_a_failed_key_exchange
