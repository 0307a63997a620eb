#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nts-query against NTPsec 1.2.2 as NTS server in a network namespace of the test: verified
# exchanges with its own defaults (no Port or Server record, non-critical AEAD record, 104-byte
# cookies for AES-SIV-CMAC-256), the JSON keys, and AEAD probing.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=ntpsec.sh
. "$(dirname "$0")/../../lib/ntpsec.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=nts-query.sh
. "$(dirname "$0")/../../lib/nts-query.sh"

test_init
make_test_certs >/dev/null
netns_create
start_ntpsec_nts_server "$TEST_TMPDIR/ntpsec" "$CERTDIR" "$NETNS"
export QUERY_NETNS=$NETNS
out="$TEST_TMPDIR/out"

test_query_verifies_every_exchange() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" localhost
        save_output ntpsec "$out"
        expect_exit 0 "$out" "query to NTPsec"
        expect_output "$out" '^TLS: +TLSv1\.3, ' "TLS version and cipher"
        expect_output "$out" 'verification ok' "verification result"
        expect_output "$out" '^AEAD: +AEAD_AES_SIV_CMAC_512 \(17\)' "our first choice, which NTPsec takes"
        expect_output "$out" 'port 123 \(not negotiated: default\)' "no Port Negotiation from NTPsec"
        [ "$(grep -c '^Exchange [0-9]*: .*stratum 1, .*, verified' "$out")" = 4 ] ||
                fail "not 4 verified exchanges: $(cat "$out")"
        expect_output "$out" '^Result: +4 of 4 exchanges verified' "summary"
}

test_json_has_stable_keys_and_the_negotiated_values() {
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=2 --aead=15 localhost
        save_output ntpsec-json "$out.json"
        expect_exit 0 "$out" "--json query to NTPsec"
        json_check "$out.json" "${JSON_STABLE_KEYS[@]}" \
                "j['exit_code'] == 0 and j['verified'] == 2" \
                "all(x['verified'] and x['stratum'] == 1 and x['refid'] == 'LOOP' for x in j['exchanges'])" \
                "j['ke']['aead'] == 15 and j['ke']['cookie_sizes'] == [104] * 8" \
                "j['ke']['ntp_server'] is None and j['ke']['ntp_port'] is None" \
                "j['ke']['ntp_address'] == '127.0.0.1:123'" \
                "[r['critical'] for r in j['ke']['records'] if r['type'] == 4] == [False]"
}

test_aead_probe_siv_cmac_384_is_accepted() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 --aead=AEAD_AES_SIV_CMAC_384 localhost
        expect_exit 0 "$out" "--aead=16 against NTPsec"
        expect_output "$out" '^AEAD: +AEAD_AES_SIV_CMAC_384 \(16\)' "16 accepted"
        expect_output "$out" '^Exchange 1: .*, verified' "an exchange with 16"
}

test_aead_probe_siv_cmac_512_is_accepted() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 --aead=aes-siv-cmac-512 localhost
        expect_exit 0 "$out" "--aead=17 against NTPsec"
        expect_output "$out" '^AEAD: +AEAD_AES_SIV_CMAC_512 \(17\)' "17 accepted"
}

test_plain_query_is_labelled_unauthenticated() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 --plain localhost
        expect_exit 0 "$out" "--plain query"
        expect_output "$out" '^Plain NTP: +UNAUTHENTICATED query to 127\.0\.0\.1:123' "label and target"
        expect_output "$out" 'refid LOOP, .*, UNAUTHENTICATED$' "the plain reply"
}

run_case test_query_verifies_every_exchange
run_case test_json_has_stable_keys_and_the_negotiated_values
run_case test_aead_probe_siv_cmac_384_is_accepted
run_case test_aead_probe_siv_cmac_512_is_accepted
run_case test_plain_query_is_labelled_unauthenticated
