#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nts-query against a key-exchange pool (the mock server's pool mode, test/lib/mock.sh): one
# query shows the member the pool named; --sources=N runs key exchanges with NTP Server Deny
# records for the members it has and lists the distinct ones, each checked with NTP; a pool
# with fewer members, a pool that ignores the records, two names for one member and a server
# that is no pool end the round with the reason.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=nts-query.sh
. "$(dirname "$0")/../../lib/nts-query.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=mock.sh
. "$(dirname "$0")/../../lib/mock.sh"

test_init
make_test_certs >/dev/null
out="$TEST_TMPDIR/out"

# nts_query_with_hosts HOSTS OUT ARG...: nts_query with HOSTS as /etc/hosts, read by
# getaddrinfo() (no system bus for resolved); stdout alone also in OUT.json.
nts_query_with_hosts() {
        local hosts=$1 out=$2
        shift 2
        QUERY_RC=0
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        unshare --mount --propagation private bash -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$hosts" \
                env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$TEST_TMPDIR/no-bus" "${NOSYSTIME[@]}" "$TSNTS_NTS_QUERY" \
                "$@" >"$out.json" 2>"$out.err" || QUERY_RC=$?
        cat "$out.json" "$out.err" >"$out"
}

# The members' names in the order the pool was given them (start_mock_pool: 127.0.0.2, ...).
member() { echo "127.0.0.$(($1 + 2))"; }

test_one_query_shows_the_member_the_pool_named() {
        start_mock_pool one 3
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "one key exchange with the pool"
        expect_output "$out" "^NTP server: +$(member 0) \(negotiated\), port ${POOL_MEMBERS[0]#*:} \(negotiated\)" \
                "the member named"
        expect_output "$out" "^NTP address: +$(member 0):${POOL_MEMBERS[0]#*:}$" "the member's address"
        stop_daemon "$MOCK_PID"
}

# Member 0 comes first three times in the pool's order: without the deny records every key
# exchange would name it.
test_sources_lists_distinct_members_with_growing_deny_lists() {
        start_mock_pool deny 3 --pool-sequence=0,0,0,1,2
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 --sources=3 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "three members asked of a pool of three"
        json_check "$out.json" \
                "j['mode'] == 'pool' and j['status'] == 'verified' and j['verified'] == 3" \
                "[k['member'] for k in j['pool']['key_exchanges']] == ['$(member 0)', '$(member 1)', '$(member 2)']" \
                "[k['denied'] for k in j['pool']['key_exchanges']] == [[], ['$(member 0)'], ['$(member 0)', '$(member 1)']]" \
                "all(k['verdict'] == 'new' for k in j['pool']['key_exchanges'])" \
                "j['pool']['members'] == ['$(member 0)', '$(member 1)', '$(member 2)'] and j['pool']['stopped'] is None" \
                "[s['ke']['ntp_address'] for s in j['sources']] == ['${POOL_MEMBERS[0]}', '${POOL_MEMBERS[1]}', '${POOL_MEMBERS[2]}']" \
                "all(s['verified'] == 1 and s['host'] == 'localhost' for s in j['sources'])"
        [ "$(mock_count deny pool_denied_given)" = 0 ] || fail "the pool had to name a denied member"
        save_output pool-json "$out.json"

        # The pool goes on from where the first query left its order.
        nts_query "$out" --ca="$CERTDIR/ca.pem" --count=1 --sources=3 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "text output"
        expect_output "$out" "^Key exchange 3: +2 denied, member 127\.0\.0\.[234]: new member$" "the third key exchange"
        expect_output "$out" "^--- Source 3 of 3: 127\.0\.0\.[234] ---$" "the third source"
        expect_output "$out" "^Sources: +3 of 3 verified$" "the summary"
        save_output pool "$out"
        stop_daemon "$MOCK_PID"
}

# Every member denied: the pool names one anyway, nts-query notices and stops after
# NTS_POOL_MAX_FRUITLESS (2) such answers, with the members it has; no failure.
test_asking_for_more_members_than_the_pool_has_stops_with_the_reason() {
        start_mock_pool small 2
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 --sources=4 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "four members asked of a pool of two"
        json_check "$out.json" \
                "j['pool']['members'] == ['$(member 0)', '$(member 1)'] and j['verified'] == 2" \
                "[k['verdict'] for k in j['pool']['key_exchanges']] == ['new', 'new', 'denied-again', 'denied-again']" \
                "'no new member' in j['pool']['stopped']" \
                "len(j['sources']) == 2"
        [ "$(mock_count small pool_denied_given)" = 2 ] || fail "the pool did not name a denied member twice"
        stop_daemon "$MOCK_PID"
}

# A pool that ignores the records and repeats itself (the order stands in for a random pick).
test_pool_ignoring_deny_still_gives_distinct_members() {
        start_mock_pool ignoring 3 --pool-ignore-deny --pool-sequence=0,0,1,0,2
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 --sources=3 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "three members of a pool that ignores NTP Server Deny"
        json_check "$out.json" \
                "[k['verdict'] for k in j['pool']['key_exchanges']] == ['new', 'denied-again', 'new', 'denied-again', 'new']" \
                "j['pool']['members'] == ['$(member 0)', '$(member 1)', '$(member 2)'] and j['verified'] == 3"
        [ "$(mock_count ignoring pool_denied_given)" = 2 ] || fail "the pool did not repeat a denied member"
        stop_daemon "$MOCK_PID"
}

# Two names that resolve to one member (a pool listing a server twice): the second is turned
# down by its NTP address, denied too, and the next key exchange gives another member. The
# names come from a private /etc/hosts, read by getaddrinfo() (no system bus for resolved).
test_second_name_for_a_member_is_turned_down_by_address() {
        local hosts=$TEST_TMPDIR/hosts
        start_pool_members names 2
        # alias.pool.test: the first member's address and port once more.
        start_mock_server names --keys-file="$TEST_TMPDIR/mock-names.keys" \
                --pool-member="m0.pool.test:${POOL_MEMBERS[0]#*:}" \
                --pool-member="m1.pool.test:${POOL_MEMBERS[1]#*:}" \
                --pool-member="alias.pool.test:${POOL_MEMBERS[0]#*:}" \
                --pool-ignore-deny --pool-sequence=0,2,1
        { cat /etc/hosts; echo "$(member 0) m0.pool.test alias.pool.test"; echo "$(member 1) m1.pool.test"; } >"$hosts"
        nts_query_with_hosts "$hosts" "$out" --json --ca="$CERTDIR/ca.pem" --count=1 --sources=2 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "two members, one of them under two names"
        json_check "$out.json" \
                "[(k['member'], k['verdict']) for k in j['pool']['key_exchanges']] == [('m0.pool.test', 'new'), ('alias.pool.test', 'same-address'), ('m1.pool.test', 'new')]" \
                "j['pool']['key_exchanges'][2]['denied'] == ['m0.pool.test', 'alias.pool.test']" \
                "j['pool']['members'] == ['m0.pool.test', 'm1.pool.test'] and j['verified'] == 2"
        stop_daemon "$MOCK_PID"
}

# Two members on one loopback address at two ports, under two names (a pool denies by name):
# two servers, as the daemon counts them (source_identity_same(): on the loopback the ports
# tell servers apart). Off the loopback one address is one server (test-nts-query-srv.sh).
test_two_members_on_two_loopback_ports_count_twice() {
        local hosts=$TEST_TMPDIR/hosts members=() m
        rm -f "$TEST_TMPDIR/mock-ports.keys"
        for m in p0 p1; do
                start_mock_server "ports-$m" --address=127.0.0.2 --keys-file="$TEST_TMPDIR/mock-ports.keys"
                members+=(--pool-member="$m.pool.test:$MOCK_NTP_PORT")
        done
        start_mock_server ports --keys-file="$TEST_TMPDIR/mock-ports.keys" "${members[@]}"
        { cat /etc/hosts; echo "127.0.0.2 p0.pool.test p1.pool.test"; } >"$hosts"
        nts_query_with_hosts "$hosts" "$out" --json --ca="$CERTDIR/ca.pem" --count=1 --sources=2 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "two members on two ports of 127.0.0.2"
        json_check "$out.json" \
                "j['pool']['members'] == ['p0.pool.test', 'p1.pool.test'] and len(j['sources']) == 2" \
                "j['same_server'] == [] and j['servers'] == 2 and j['verified'] == 2"
        nts_query_with_hosts "$hosts" "$out" --ca="$CERTDIR/ca.pem" --count=1 --sources=2 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "two members on two ports of 127.0.0.2, text"
        ! grep -q "^Same server:" "$out" || fail "two loopback ports taken for one server: $(grep "^Same server:" "$out")"
        expect_output "$out" "^Sources: +2 of 2 verified$" "two servers counted"
        stop_daemon "$MOCK_PID"
}

# No Server record: the key exchange server is the NTP server, and --sources= says it is one.
test_server_that_is_no_pool_gives_one_source() {
        local ntp
        ntp=$(free_port)
        start_mock_server plain --ntp-listen-port="$ntp" --ntp-port="$ntp"
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 --sources=3 "localhost:$MOCK_KE_PORT"
        expect_exit 0 "$out" "a plain server asked for three members"
        json_check "$out.json" \
                "[k['verdict'] for k in j['pool']['key_exchanges']] == ['new', 'no-member']" \
                "'no pool member' in j['pool']['stopped'] and len(j['sources']) == 1 and j['verified'] == 1" \
                "j['pool']['key_exchanges'][1]['denied'] == []"
        stop_daemon "$MOCK_PID"
}

# With several sources every one must verify: one member that does not answer NTP fails the
# query with the NTP exit status, naming the member, while the others are still listed.
test_member_that_does_not_answer_fails_the_query_and_is_named() {
        start_mock_pool silent 3
        stop_daemon "${POOL_MEMBER_PIDS[1]}"
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" --count=1 --timeout=1 --sources=3 "localhost:$MOCK_KE_PORT"
        expect_exit "$QUERY_EXIT_NTP" "$out" "a silent member"
        json_check "$out.json" \
                "j['status'] == 'ntp' and '$(member 1)' in j['error'] and j['verified'] == 2" \
                "[s['status'] for s in j['sources']] == ['verified', 'ntp', 'verified']"
        stop_daemon "$MOCK_PID"
}

run_case test_one_query_shows_the_member_the_pool_named
run_case test_sources_lists_distinct_members_with_growing_deny_lists
run_case test_asking_for_more_members_than_the_pool_has_stops_with_the_reason
run_case test_pool_ignoring_deny_still_gives_distinct_members
run_case test_second_name_for_a_member_is_turned_down_by_address
run_case test_two_members_on_two_loopback_ports_count_twice
run_case test_server_that_is_no_pool_gives_one_source
run_case test_member_that_does_not_answer_fails_the_query_and_is_named
