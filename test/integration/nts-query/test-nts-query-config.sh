#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nts-query --config: every NTS server of the daemon's configuration in one command, read with
# the daemon's own reader (timesyncd.conf and its drop-ins, or one file), trusting what
# NTSTrustedCertificates= says. A chronyd NTS server and the mock server (honest, then one that
# refuses every key exchange) as the configured servers.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=chrony.sh
. "$(dirname "$0")/../../lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=nts-query.sh
. "$(dirname "$0")/../../lib/nts-query.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=timesyncd.sh
. "$(dirname "$0")/../../lib/timesyncd.sh"

test_init
make_test_certs >/dev/null
chrony_ke=$(free_port)
start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$(free_port)" "$chrony_ke"
# The mock announces its NTP port in a Port record, as chronyd does.
ntp=$(free_port)
start_mock_server honest --ntp-listen-port="$ntp" --ntp-port="$ntp"
honest_ke=$MOCK_KE_PORT
start_mock_server refusing --sabotage=bad-request
refusing_ke=$MOCK_KE_PORT
out="$TEST_TMPDIR/out"

test_one_file_every_server_verified() {
        write_conf "$TEST_TMPDIR/two.conf" "NTS=localhost:$chrony_ke localhost:$honest_ke" \
                "NTSTrustedCertificates=$CERTDIR/ca.pem"
        nts_query "$out" --count=2 --config="$TEST_TMPDIR/two.conf"
        cat "$out"
        expect_exit 0 "$out" "two good servers"
        expect_output "$out" "^Configuration: +$TEST_TMPDIR/two\\.conf$" "the file read"
        expect_output "$out" "^Trusted CAs: +$CERTDIR/ca\\.pem \\(NTSTrustedCertificates=\\)$" "the CA setting used"
        expect_output "$out" "^=== NTS server 1 of 2: localhost:$chrony_ke ===$" "the first server"
        expect_output "$out" "^=== NTS server 2 of 2: localhost:$honest_ke ===$" "the second server"
        [ "$(grep -Ec '^Result: +2 of 2 exchanges verified' "$out")" = 2 ] || fail "not both servers verified"
        expect_output "$out" "^Servers: +2 of 2 verified$" "the summary"
}

test_the_configured_ca_is_the_one_trusted() {
        # Without NTSTrustedCertificates= the system's store is trusted, which does not know the
        # test CA: both fail as the daemon would, for the certificate.
        write_conf "$TEST_TMPDIR/nostore.conf" "NTS=localhost:$chrony_ke localhost:$honest_ke"
        nts_query "$out" --count=1 --config="$TEST_TMPDIR/nostore.conf"
        expect_exit "$QUERY_EXIT_TLS" "$out" "the system's store"
        expect_output "$out" "^Trusted CAs: +the system's store$" "the store named"
        expect_output "$out" "^Servers: +0 of 2 verified$" "nothing verified"
        # --ca= takes the place of the setting.
        nts_query "$out" --count=1 --ca="$CERTDIR/ca.pem" --config="$TEST_TMPDIR/nostore.conf"
        expect_exit 0 "$out" "--ca= instead of the store"
        expect_output "$out" "^Trusted CAs: +$CERTDIR/ca\\.pem \\(--ca=\\)$" "--ca= named"
        # A value the daemon refuses: it refuses every key exchange, and so does the check.
        write_conf "$TEST_TMPDIR/badca.conf" "NTS=localhost:$chrony_ke" "NTSTrustedCertificates=relative/ca.pem"
        nts_query "$out" --count=1 --config="$TEST_TMPDIR/badca.conf"
        expect_exit "$QUERY_EXIT_TLS" "$out" "a refused NTSTrustedCertificates="
        expect_output "$out" "NTSTrustedCertificates= has no valid value" "the reason"
}

test_a_failing_server_gives_its_status() {
        write_conf "$TEST_TMPDIR/three.conf" "NTS=localhost:$chrony_ke localhost:$refusing_ke localhost:$honest_ke" \
                "NTSTrustedCertificates=$CERTDIR/ca.pem"
        nts_query_json "$out" --count=1 --config="$TEST_TMPDIR/three.conf"
        expect_exit "$QUERY_EXIT_KE" "$out" "one server refuses"
        json_check "$out.json" "j['mode'] == 'config' and j['verified'] == 2 and j['status'] == 'ke'" \
                "[s['status'] for s in j['servers']] == ['verified', 'ke', 'verified']" \
                "j['servers'][1]['name'] == 'localhost:$refusing_ke' and 'refused' in j['servers'][1]['error']" \
                "j['trusted_certificates'] == '$CERTDIR/ca.pem'" \
                "all(len(s['sources']) == 1 for s in j['servers'])"
        grep -q "NTS server 2 (localhost:$refusing_ke): " "$out.err" || fail "stderr does not name the failing server"
}

# The standard search: timesyncd.conf and a drop-in that adds a server and the CA, as the
# daemon would read them, in a mount namespace whose /etc/systemd is the test's.
test_standard_search_reads_the_drop_ins() {
        local root=$TEST_TMPDIR/root
        use_config_root "$root"
        write_conf "$root/etc/systemd/timesyncd.conf" "NTS=localhost:$chrony_ke"
        mkdir -p "$root/etc/systemd/timesyncd.conf.d"
        write_conf "$root/etc/systemd/timesyncd.conf.d/50-nts.conf" "NTS=localhost:$honest_ke" \
                "NTSTrustedCertificates=$CERTDIR/ca.pem"
        chmod -R a+rX "$root"
        QUERY_RC=0
        "${TIMESYNCD_WRAPPER[@]}" "${NOSYSTIME[@]}" "$TSNTS_NTS_QUERY" --count=1 --config >"$out" 2>&1 || QUERY_RC=$?
        cat "$out"
        expect_exit 0 "$out" "the standard search"
        expect_output "$out" "^Configuration: +timesyncd\\.conf and its drop-ins$" "the search named"
        expect_output "$out" "^=== NTS server 2 of 2: localhost:$honest_ke ===$" "the drop-in's server"
}

test_no_nts_server_and_no_file() {
        write_conf "$TEST_TMPDIR/plain.conf" "NTP=127.0.0.1"
        nts_query "$out" --config="$TEST_TMPDIR/plain.conf"
        expect_exit 1 "$out" "no NTS server"
        expect_output "$out" "names no NTS server \\(NTS= is empty\\): the daemon takes unauthenticated time" "the reason"
        nts_query "$out" --config="$TEST_TMPDIR/absent.conf"
        expect_exit "$QUERY_EXIT_USAGE" "$out" "a file that does not exist"
        [ "$(grep -c "absent\\.conf' does not exist" "$out")" = 1 ] || fail "not said once: $(cat "$out")"
        nts_query "$out" --config localhost
        expect_exit "$QUERY_EXIT_USAGE" "$out" "--config with a server"
}

# Without NTS= and NTP= the daemon uses FallbackNTS=, and so the check does. The list here is
# explicit and local: the compiled-in one is never looked up through this machine's resolver.
# With NTP= beside it, the daemon takes plain NTP instead, and the check says so.
test_fallback_nts_is_checked_when_nothing_else_is_configured() {
        write_conf "$TEST_TMPDIR/fallback.conf" "FallbackNTS=localhost:$chrony_ke localhost:$honest_ke" \
                "FallbackNTP=127.0.0.1" "NTSTrustedCertificates=$CERTDIR/ca.pem"
        nts_query "$out" --count=1 --config="$TEST_TMPDIR/fallback.conf"
        cat "$out"
        expect_exit 0 "$out" "two FallbackNTS= servers"
        expect_output "$out" "^NTS servers: +2 of FallbackNTS= \\(no NTS= or NTP=: used unless the network names NTP servers\\)$" \
                "the list named"
        expect_output "$out" "^=== NTS server 1 of 2: localhost:$chrony_ke ===$" "the first fallback server"
        expect_output "$out" "^=== NTS server 2 of 2: localhost:$honest_ke ===$" "the second fallback server"
        expect_output "$out" "^Servers: +2 of 2 verified$" "the summary"
        nts_query_json "$out" --count=1 --config="$TEST_TMPDIR/fallback.conf"
        expect_exit 0 "$out" "two FallbackNTS= servers, JSON"
        json_check "$out.json" "j['list'] == 'FallbackNTS=' and j['verified'] == 2" \
                "[s['name'] for s in j['servers']] == ['localhost:$chrony_ke', 'localhost:$honest_ke']"

        write_conf "$TEST_TMPDIR/ntp-and-fallback.conf" "FallbackNTS=localhost:$chrony_ke" "NTP=127.0.0.1" \
                "NTSTrustedCertificates=$CERTDIR/ca.pem"
        nts_query "$out" --count=1 --config="$TEST_TMPDIR/ntp-and-fallback.conf"
        expect_exit 1 "$out" "NTP= before FallbackNTS="
        expect_output "$out" "names no NTS server \\(NTS= is empty\\): the daemon takes unauthenticated time from NTP=" \
                "the reason"

        write_conf "$TEST_TMPDIR/nts-and-fallback.conf" "NTS=localhost:$honest_ke" "FallbackNTS=localhost:$refusing_ke" \
                "NTSTrustedCertificates=$CERTDIR/ca.pem"
        nts_query_json "$out" --count=1 --config="$TEST_TMPDIR/nts-and-fallback.conf"
        expect_exit 0 "$out" "NTS= before FallbackNTS="
        json_check "$out.json" "j['list'] == 'NTS=' and [s['name'] for s in j['servers']] == ['localhost:$honest_ke']"
}

run_case test_one_file_every_server_verified
run_case test_the_configured_ca_is_the_one_trusted
run_case test_a_failing_server_gives_its_status
run_case test_standard_search_reads_the_drop_ins
run_case test_no_nts_server_and_no_file
run_case test_fallback_nts_is_checked_when_nothing_else_is_configured
