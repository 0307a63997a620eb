#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nts-query srv:NAME against the DNSSEC fixture (test/lib/dnssec.sh): a signed SRV set whose
# targets are NTS servers on loopback at the ports the records give, found through
# systemd-resolved on the test's bus (the targets' names exist only in the signed zone):
#   _ntske._tcp.pool  10 60 m1 (the mock server), 10 40 c1 (chronyd), 20 0 bad (the mock
#                     server with a certificate for wrong.test only), each on an address of its
#                     own (127.0.0.11 to .13)
#   _ntske._tcp.twin  u1 (the mock server) and u2 (the mock server an hour ahead), both on
#                     192.0.2.1 in the fixture's network namespace: one server, under two names
#   _ntske._tcp.twin2 t1 and t3 (the mock server, honest) on two ports of 127.0.0.14
# The records are shown with the authenticated flag; each target is checked against its own
# name at its own port; every answer that is not an authenticated set of targets is refused
# before any target is asked. Servers are counted by the daemon's rule (source_identity_same()):
# off the loopback, targets on one address are one server: they count once, and two of them
# that disagree fail the query; on the loopback the ports tell servers apart.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=dnssec.sh
. "$(dirname "$0")/../../lib/dnssec.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=chrony.sh
. "$(dirname "$0")/../../lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=mock.sh
. "$(dirname "$0")/../../lib/mock.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=nts-query.sh
. "$(dirname "$0")/../../lib/nts-query.sh"

test_init
make_test_certs >/dev/null
out="$TEST_TMPDIR/out"

# The targets first: the zone names their ports.
ntp=$(free_port)
start_mock_server m1 --address=127.0.0.11 --ntp-listen-port="$ntp" --ntp-port="$ntp"
M1_KE=$MOCK_KE_PORT
ntp=$(free_port)
start_mock_server bad --address=127.0.0.13 --cert="$CERTDIR/wrongname-chain.pem" --ntp-listen-port="$ntp" --ntp-port="$ntp"
BAD_KE=$MOCK_KE_PORT
C1_NTP=$(free_port)
C1_KE=$(free_port)
CHRONY_BIND4=127.0.0.12 start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$C1_NTP" "$C1_KE"
ntp=$(free_port)
start_mock_server t1 --address=127.0.0.14 --ntp-listen-port="$ntp" --ntp-port="$ntp"
T1_KE=$MOCK_KE_PORT
ntp=$(free_port)
start_mock_server t3 --address=127.0.0.14 --ntp-listen-port="$ntp" --ntp-port="$ntp"
T3_KE=$MOCK_KE_PORT
U1_KE=$(free_port)
U1_NTP=$(free_port)
U2_KE=$(free_port)
U2_NTP=$(free_port)

DNS_FIXTURE_RECORDS="_ntske._tcp.pool SRV 10 60 $M1_KE m1
_ntske._tcp.pool SRV 10 40 $C1_KE c1
_ntske._tcp.pool SRV 20 0 $BAD_KE bad
_ntske._tcp.twin SRV 10 50 $U1_KE u1
_ntske._tcp.twin SRV 20 50 $U2_KE u2
_ntske._tcp.twin2 SRV 10 50 $T1_KE t1
_ntske._tcp.twin2 SRV 20 50 $T3_KE t3
m1 A 127.0.0.11
c1 A 127.0.0.12
bad A 127.0.0.13
t1 A 127.0.0.14
t3 A 127.0.0.14
u1 A 192.0.2.1
u2 A 192.0.2.1"
export DNS_FIXTURE_RECORDS
dns_fixture_start

# u1 and u2 off the loopback: on 192.0.2.1 of the fixture's namespace (its veth), at the ports
# the records name.
mock_in_netns=$TEST_TMPDIR/mock-in-netns
printf '#!/bin/sh\nexec ip netns exec %q %q "$@"\n' "$DNS_NETNS" "$TSNTS_MOCK_SERVER" >"$mock_in_netns"
chmod +x "$mock_in_netns"
TSNTS_MOCK_SERVER=$mock_in_netns start_mock_server u1 --address=192.0.2.1 --ke-port="$U1_KE" \
        --ntp-listen-port="$U1_NTP" --ntp-port="$U1_NTP"
TSNTS_MOCK_SERVER=$mock_in_netns start_mock_server u2 --address=192.0.2.1 --ke-port="$U2_KE" --time-offset=3600 \
        --ntp-listen-port="$U2_NTP" --ntp-port="$U2_NTP"

POOL=pool.$DNS_ZONE

test_srv_records_are_shown_authenticated_and_each_target_checked_at_its_port() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 "srv:$POOL"
        save_output srv "$out"
        # The wrong-name target fails its TLS check, and with it the query.
        expect_exit "$QUERY_EXIT_TLS" "$out" "a set with one target of the wrong name"
        expect_output "$out" "^SRV lookup: +_ntske\._tcp\.$POOL, DNSSEC-authenticated, 3 targets, TTL 300 s$" \
                "the lookup line"
        expect_output "$out" "^  priority +10 weight +60 port +$M1_KE target m1\.$DNS_ZONE \(TTL 300 s\)$" "the m1 record"
        expect_output "$out" "^  priority +10 weight +40 port +$C1_KE target c1\.$DNS_ZONE \(TTL 300 s\)$" "the c1 record"
        expect_output "$out" "^  priority +20 weight +0 port +$BAD_KE target bad\.$DNS_ZONE \(TTL 300 s\)$" "the bad record"
        expect_output "$out" "^NTS-KE server: +m1\.$DNS_ZONE \(127\.0\.0\.11:$M1_KE\)$" "m1 asked at its SRV port"
        expect_output "$out" "^NTS-KE server: +c1\.$DNS_ZONE \(127\.0\.0\.12:$C1_KE\)$" "c1 asked at its SRV port"
        expect_output "$out" "verification ok \(name c1\.$DNS_ZONE," "c1's certificate checked against c1's name"
        expect_output "$out" "verification FAILED, see TLS above \(name bad\.$DNS_ZONE," "bad's certificate refused for bad's name"
        expect_output "$out" "^Sources: +2 of 3 verified$" "the summary"
        expect_output "$out" "Source 3 \(bad\.$DNS_ZONE\): NTS-KE with bad\.$DNS_ZONE failed \(TLS stage\)" "the reason"
        ! grep -q "^Same server:" "$out" || fail "targets on addresses of their own taken for one server"
}

# One server under two target names (one address off the loopback, two ports): one vote. u2
# answers an hour ahead of u1; one server cannot be right twice, so the query fails (9), and
# says why. nts-query runs in the fixture's namespace, where 192.0.2.1 is.
test_two_targets_on_one_address_are_one_server() {
        QUERY_NETNS=$DNS_NETNS nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 "srv:twin.$DNS_ZONE"
        save_output srv-twin "$out"
        expect_exit "$QUERY_EXIT_DISAGREE" "$out" "two targets on one address an hour apart"
        expect_output "$out" "^Same server: +u1\.$DNS_ZONE and u2\.$DNS_ZONE are the same server \(same NTP address 192\.0\.2\.1\): they count once$" \
                "the twins named"
        expect_output "$out" "^Sources: +1 of 1 verified \(distinct servers\)$" "one server counted"
        expect_output "$out" "u1\.$DNS_ZONE and u2\.$DNS_ZONE are the same server \(same NTP address 192\.0\.2\.1\) and disagree by \+(3599\.9|3600\.0)[0-9]{2} s$" \
                "the disagreement"
        QUERY_NETNS=$DNS_NETNS nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 "srv:twin.$DNS_ZONE"
        expect_exit "$QUERY_EXIT_DISAGREE" "$out" "twins, JSON"
        json_check "$out.json" "j['status'] == 'disagree' and j['verified'] == 1 and j['servers'] == 1" \
                "j['same_server'] == [{'first': 'u1.$DNS_ZONE', 'second': 'u2.$DNS_ZONE', 'address': '192.0.2.1', 'reason': 'same NTP address 192.0.2.1'}]" \
                "[s['status'] for s in j['sources']] == ['verified', 'verified']"
}

# Two targets on two ports of one loopback address: two servers, as the daemon counts them.
test_two_targets_on_two_loopback_ports_are_two_servers() {
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 "srv:twin2.$DNS_ZONE"
        expect_exit 0 "$out" "two agreeing targets on one loopback address"
        ! grep -q "^Same server:" "$out" || fail "two loopback ports taken for one server: $(grep "^Same server:" "$out")"
        expect_output "$out" "^Sources: +2 of 2 verified$" "two servers counted"
}

test_json_names_records_flag_and_per_target_results() {
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 "srv:$POOL"
        expect_exit "$QUERY_EXIT_TLS" "$out" "JSON"
        json_check "$out.json" \
                "j['mode'] == 'srv' and j['name'] == '$POOL' and j['status'] == 'tls' and j['verified'] == 2" \
                "j['srv']['authenticated'] is True and j['srv']['ttl'] == 300 and j['srv']['error'] is None" \
                "j['srv']['name'] == '_ntske._tcp.$POOL'" \
                "sorted((r['target'], r['port'], r['priority'], r['weight']) for r in j['srv']['records']) == sorted([('m1.$DNS_ZONE', $M1_KE, 10, 60), ('c1.$DNS_ZONE', $C1_KE, 10, 40), ('bad.$DNS_ZONE', $BAD_KE, 20, 0)])" \
                "[s['host'] for s in j['sources']][2] == 'bad.$DNS_ZONE'" \
                "[s['port'] for s in j['sources']] == [r['port'] for r in j['srv']['records']]" \
                "[s['status'] for s in j['sources']] == ['verified', 'verified', 'tls']" \
                "j['sources'][2]['ke']['tls']['verification'] != 'ok' and j['sources'][2]['ke']['tls']['sans'] == ['DNS:wrong.test']" \
                "j['pool'] is None"
}

test_sources_limits_the_targets_checked() {
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 --sources=2 "srv:$POOL"
        expect_exit 0 "$out" "the two targets of priority 10"
        json_check "$out.json" \
                "sorted(s['host'] for s in j['sources']) == ['c1.$DNS_ZONE', 'm1.$DNS_ZONE']" \
                "len(j['srv']['records']) == 3 and j['verified'] == 2"
}

# expect_refused NAME EXIT PATTERN: nothing but the refusal, and no target asked.
expect_refused() {
        local name=$1 want=$2 pattern=$3
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 "srv:$name"
        expect_exit "$want" "$out" "srv:$name"
        expect_output "$out" "$pattern" "srv:$name"
        json_check "$out.json" "j['sources'] == [] and j['srv']['authenticated'] is False and j['srv']['records'] == []"
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 "srv:$name"
        expect_exit "$want" "$out" "srv:$name, text"
        expect_output "$out" "^SRV lookup: +_ntske\._tcp\.$name refused \(E[A-Z]+\)$" "srv:$name, text"
        ! grep -q "^NTS-KE server:" "$out" || fail "srv:$name: a target was asked after the refusal: $(cat "$out")"
        log "refused as expected: $(tail -n 1 "$out")"
}

test_unsigned_srv_set_is_refused() {
        expect_refused "plain.$DNS_ZONE" "$QUERY_EXIT_DNSSEC" "not DNSSEC-authenticated"
        json_check "$out.json" "j['srv']['errno'] == 'ENOKEY' and j['status'] == 'dnssec'"
}

test_broken_signature_is_refused() {
        expect_refused "broken.$DNS_ZONE" "$QUERY_EXIT_DNSSEC" "DNSSEC validation of _ntske\._tcp\.broken\.$DNS_ZONE failed"
}

test_resolved_with_dnssec_off_is_refused() {
        start_resolved no
        expect_refused "$POOL" "$QUERY_EXIT_DNSSEC" "runs with DNSSEC=no"
        start_resolved yes
}

test_name_without_srv_records_is_a_resolve_failure() {
        expect_refused "none.$DNS_ZONE" "$QUERY_EXIT_RESOLVE" "has no SRV records"
}

test_stopped_resolved_is_a_resolve_failure() {
        stop_resolved
        expect_refused "$POOL" "$QUERY_EXIT_RESOLVE" "systemd-resolved is not running"
        start_resolved yes
}

run_case test_srv_records_are_shown_authenticated_and_each_target_checked_at_its_port
run_case test_json_names_records_flag_and_per_target_results
run_case test_sources_limits_the_targets_checked
run_case test_two_targets_on_one_address_are_one_server
run_case test_two_targets_on_two_loopback_ports_are_two_servers
run_case test_unsigned_srv_set_is_refused
run_case test_broken_signature_is_refused
run_case test_resolved_with_dnssec_off_is_refused
run_case test_name_without_srv_records_is_a_resolve_failure
run_case test_stopped_resolved_is_a_resolve_failure
