#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Key-exchange pools in the daemon (NTS=pool:NAME, issue 17): the mock NTS server as a pool
# (test/lib/mock.sh, mock-pool.h) whose members are mock servers on 127.0.0.2, .3, ... sharing its
# cookie key. One pool name gives NTSMaxSources= distinct members: the key exchanges run one at a
# time and deny the members in use; a pool that ignores the deny records still gives distinct
# sources (repeats are turned down by name), two names for one server are turned down by
# address; a member that stops answering is replaced by a new key exchange that denies it; a
# member that lies about the time (--time-offset) is outvoted by the others; a restart resumes
# every member from its own state file without a key exchange; a pool with fewer members than
# wanted, and a server that is no pool, give what they have, say once why the rest do not come,
# and are not asked for more until an hour or so later.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=mock.sh
. "$(dirname "$0")/../../lib/mock.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=timesyncd.sh
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus
start_notify_listener

declare -A POOL_MEMBER_ARGS=()
CONF_EXTRA=()

# pool N [ARG...]: the pool "p" of N members with ARGs, and NTS=pool:localhost:ITS_PORT.
pool() {
        local n=$1
        shift
        start_mock_pool p "$n" "$@"
        POOL="pool:localhost:$MOCK_KE_PORT"
        POOL_PID=$MOCK_PID
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$POOL" "ConnectionRetrySec=1" ${CONF_EXTRA[@]+"${CONF_EXTRA[@]}"}
}

client() {
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
}

stop_all() {
        local pid
        stop_timesyncd
        stop_daemon "$POOL_PID"
        for pid in "${POOL_MEMBER_PIDS[@]}"; do
                stop_daemon "$pid"
        done
        rm -f "$TEST_TMPDIR"/state/nts-*.jar "$TEST_TMPDIR"/mock-p*.count
        POOL_MEMBER_ARGS=()
        CONF_EXTRA=()
}

# The members in use, as Sources names them (their addresses), sorted, one line.
members() {
        sources_json | /usr/bin/python3 -c 'import json, sys
print(" ".join(sorted(s["Name"] for s in json.load(sys.stdin) if s["Pool"] == sys.argv[1])))' "$POOL"
}

_members_are() { [ "$(members)" = "$1" ]; }

# wait_members "A B C" [SECS]: Sources lists exactly these members of the pool.
wait_members() {
        wait_for "${2:-30}" _members_are "$1" || fail "the pool's sources are '$(members)', not '$1'"
}

_addresses_distinct() {
        sources_json | /usr/bin/python3 -c 'import json, sys
a = [s["Address"].rsplit(":", 1)[0] for s in json.load(sys.stdin) if s["Pool"] == sys.argv[1]]
sys.exit(not (len(a) == int(sys.argv[2]) and "" not in a and len(set(a)) == len(a)))' "$POOL" "$1"
}

test_one_pool_name_gives_four_distinct_members() {
        pool 5
        client
        wait_log "Initial clock synchronization to 127\.0\.0\.[2-6] (offset .*, NTS authenticated, [34] of 4 NTS sources agree" 30
        log_has "Using up to 4 NTS sources together, 4 of them from 1 pool" || fail "no line on the sources used"
        wait_members "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5"
        _addresses_distinct 4 || fail "the pool's sources do not poll four distinct addresses: $(sources_json)"
        wait_log "4 of 4 NTS sources agree\." 20
        # The key exchanges ran one after the other, each denying the members before it: one per
        # member, no repeat, nothing given against a deny record.
        [ "$(mock_count p ke_sessions)" = 4 ] || fail "$(mock_count p ke_sessions) key exchanges with the pool, not 4"
        [ "$(mock_count p pool_denied_given)" = 0 ] || fail "the pool handed out a denied member"
        log_has "NTS key exchange with $POOL denies pool member 127\.0\.0\.2\." || fail "no deny record for 127.0.0.2"
        [ "$(log_count "NTS key exchange with $POOL denies pool member")" = 6 ] ||
                fail "$(log_count "NTS key exchange with $POOL denies pool member") deny records, not 0+1+2+3"
        [ "$(source_field 127.0.0.3 KeyExchangeServer)" = "localhost:$MOCK_KE_PORT" ] ||
                fail "the member's key exchange server is not the pool"
        # Every member answers with the pool's cookies.
        local i
        for i in 2 3 4 5; do
                [ "$(mock_count "p-member-$i" ntp_requests)" -gt 0 ] || fail "member 127.0.0.$i was never asked"
        done
        [ "$(mock_count p-member-6 ntp_requests)" = 0 ] || fail "the fifth member was used as well"
        # Stock's view: a pool member with the pool's name.
        [ "$(timesync_property ServerName)" = "$POOL" ] || fail "ServerName is '$(timesync_property ServerName)'"
        stop_all
}

test_pool_ignoring_deny_still_gives_distinct_sources() {
        # Member 0 three times in a row, then 1 twice: a pool that picks at random, or one that
        # does not know the deny record.
        pool 4 --pool-ignore-deny --pool-sequence=0,0,0,1,1,2,3
        client
        wait_members "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5" 40
        _addresses_distinct 4 || fail "the pool's sources do not poll four distinct addresses: $(sources_json)"
        [ "$(mock_count p pool_denied_given)" -ge 3 ] ||
                fail "the pool handed out $(mock_count p pool_denied_given) denied members, the deny records did not reach it"
        wait_log "Pool $POOL named 127\.0\.0\.2, a member in use or denied, named again: asking it again\."
        wait_log "4 of 4 NTS sources agree\." 20
        stop_all
}

# Two names for one server: 127.0.0.2 and alias.test (127.0.0.2 in a private /etc/hosts).
test_second_name_for_a_member_in_use_is_turned_down_by_address() {
        local hosts=$TEST_TMPDIR/hosts
        { cat /etc/hosts; echo "127.0.0.2 alias.test"; } >"$hosts"
        start_pool_members p 2
        start_mock_server p --keys-file="$TEST_TMPDIR/mock-p.keys" --pool-member="${POOL_MEMBERS[0]}" \
                --pool-member="alias.test:${POOL_MEMBERS[0]#*:}" --pool-member="${POOL_MEMBERS[1]}"
        POOL="pool:localhost:$MOCK_KE_PORT"
        POOL_PID=$MOCK_PID
        CONF_EXTRA=(NTSMaxSources=3)
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$POOL" "ConnectionRetrySec=1" "${CONF_EXTRA[@]}"
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(unshare --mount --propagation private
                bash -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$hosts")
        client
        unset TIMESYNCD_WRAPPER
        wait_log "Pool member alias\.test of $POOL is a new name for an NTP address in use: turning it down\." 30
        # The third place finds nothing new (the pool has no third server), and stays empty.
        wait_log "the pool named only members in use or turned down" 30
        wait_log "Pool $POOL names no member beyond the 2 in use" 30
        wait_members "127.0.0.2 127.0.0.3" 30
        wait_log "2 of 2 NTS sources agree\." 20
        stop_all
}

test_member_that_stops_answering_is_replaced_by_a_new_key_exchange() {
        local before
        pool 5
        client
        wait_members "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5"
        wait_log "4 of 4 NTS sources agree\." 20
        before=$(mock_count p ke_sessions)
        stop_daemon "${POOL_MEMBER_PIDS[1]}"
        wait_log "Pool member 127\.0\.0\.3 of $POOL did not answer 2 times in a row: turning it down" 40
        wait_members "127.0.0.2 127.0.0.4 127.0.0.5 127.0.0.6" 20
        log_has "NTS key exchange with $POOL denies pool member 127\.0\.0\.3\." || fail "the dead member was not denied"
        [ "$(mock_count p ke_sessions)" = $((before + 1)) ] ||
                fail "$(( $(mock_count p ke_sessions) - before )) key exchanges to replace one member"
        # The silent member kept its place in the count until replaced, so the set's line need
        # not change: the new member agrees with the others.
        wait_source_field 127.0.0.6 Verdict truechimer
        stop_all
}

test_member_lying_about_the_time_is_outvoted() {
        local offset
        POOL_MEMBER_ARGS[2]=--time-offset=3600
        pool 4
        client
        wait_log "Initial clock synchronization to 127\.0\.0\.[345] (offset .*, NTS authenticated, 3 of 4 NTS sources agree" 30
        offset=$(sed -n 's/.*Initial clock synchronization to .* (offset \([-+][0-9.]*\) s.*/\1/p' "$TIMESYNCD_LOG")
        # The truth, not the liar's hour (a loaded machine's first samples may be tens of ms off).
        awk -v o="$offset" 'BEGIN { exit !(o < 0.5 && o > -0.5) }' || fail "initial offset $offset s is not the truth"
        wait_log "NTS source 127\.0\.0\.2 is a falseticker: its offset +3\(599\|600\)\.[0-9]* s"
        wait_source_field 127.0.0.2 Verdict falseticker
        log_has "Selected server 127\.0\.0\.2 " && fail "the liar was selected"
        log_has "would step the clock" && fail "the daemon would have stepped the clock"
        [ "$(mock_count p-member-2 ntp_requests)" -gt 0 ] || fail "the liar was not asked"
        stop_all
}

test_restart_resumes_every_member_without_a_key_exchange() {
        local i
        pool 5
        client
        wait_members "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5"
        stop_timesyncd
        # One file per source of the pool, each with its pair (pool, member).
        for i in 1 2 3 4; do
                [ -f "$TEST_TMPDIR/state/nts-pool_localhost_${MOCK_KE_PORT}%23$i.jar" ] ||
                        fail "no state file for source $i of the pool: $(ls "$TEST_TMPDIR/state")"
        done
        grep -q "^ntp-server=127\.0\.0\.2$" "$TEST_TMPDIR/state/nts-pool_localhost_${MOCK_KE_PORT}%231.jar" ||
                fail "the first source's state file is not for member 127.0.0.2"
        grep -q "^server=pool:localhost:$MOCK_KE_PORT#1$" "$TEST_TMPDIR/state/nts-pool_localhost_${MOCK_KE_PORT}%231.jar" ||
                fail "the first source's state file does not name its pool and place"
        client
        wait_log_count "Resuming NTS with $POOL: [0-9]* cookies from .*nts-pool_localhost_${MOCK_KE_PORT}%23[1-4]\.jar" 4 20
        wait_members "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5"
        wait_log "4 of 4 NTS sources agree\." 20
        [ "$(mock_count p ke_sessions)" = 4 ] || fail "the restart ran $(( $(mock_count p ke_sessions) - 4 )) key exchanges"
        log_has "Starting NTS key exchange" && fail "a key exchange after the restart"
        stop_all
}

_pool_ntp_at_least() {
        local i sum=0
        for i in $1; do
                sum=$((sum + $(mock_count "$i" ntp_requests)))
        done
        [ "$sum" -ge "$2" ]
}

# assert_pool_left_alone MOCKS: the pool gets no key exchange while the mock servers MOCKS (their
# names for mock_count) answer 10 more NTP requests (1 s polls): the places it has no member for
# stay empty instead of asking it again and again.
assert_pool_left_alone() {
        local ke sum=0 i
        ke=$(mock_count "$POOL_COUNTS" ke_sessions)
        for i in $1; do
                sum=$((sum + $(mock_count "$i" ntp_requests)))
        done
        wait_for 40 _pool_ntp_at_least "$1" $((sum + 10)) || fail "the sources in use stopped polling"
        [ "$(mock_count "$POOL_COUNTS" ke_sessions)" = "$ke" ] ||
                fail "$(( $(mock_count "$POOL_COUNTS" ke_sessions) - ke )) more key exchanges with a pool that has no more members"
}

# Two members, four places: the two others find only members in use (asked twice each), and then
# leave; the pool is not asked again for an hour or so.
test_pool_with_fewer_members_than_wanted_gives_what_it_has() {
        pool 2
        client
        wait_log "NTS key exchange with $POOL failed: the pool named only members in use or turned down (the last one: 127\.0\.0\.[23], a member in use or denied, named again)" 30
        wait_members "127.0.0.2 127.0.0.3"
        wait_log "Pool $POOL names no member beyond the 2 in use (.*): leaving 2 of its 4 places empty; asking it for more in an hour or so, not before\." 5
        wait_log "2 of 2 NTS sources agree\." 20
        log_has "Initial clock synchronization to 127\.0\.0\.[23] " || fail "the two members did not synchronize"
        POOL_COUNTS=p
        assert_pool_left_alone "p-member-2 p-member-3"
        [ "$(log_count "names no member beyond")" = 1 ] || fail "said more than once"
        stop_all
}

# A pool that answers every key exchange with Error record 2 (internal server error): its four
# sources keep asking it (ConnectionRetrySec=1, each on its own ladder): the cap of 16 key
# exchanges per name and hour is the pool name's, shared by all its sources, not 16 for each.
test_key_exchange_cap_is_shared_by_the_sources_of_one_pool() {
        pool 2 --sabotage=error-record
        client
        wait_log "Postponing the NTS key exchange with $POOL: 16 within 1h already" 60
        sleep 5
        [ "$(mock_count p ke_sessions)" -le 16 ] ||
                fail "$(mock_count p ke_sessions) key exchanges with one pool name within the hour, not at most 16"
        [ "$(log_count "Postponing the NTS key exchange with $POOL:")" -ge 1 ] || fail "no postponement logged"
        stop_all
}

test_server_without_server_record_is_one_source() {
        local ke ntp
        ntp=$(free_port)
        start_mock_server plain --ntp-listen-port="$ntp" --ntp-port="$ntp"
        ke=$MOCK_KE_PORT
        POOL="pool:localhost:$ke"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$POOL" "ConnectionRetrySec=1"
        client
        wait_log "it is one server, not a pool" 30
        wait_log "Initial clock synchronization to 127\.0\.0\.1 (offset .*, NTS authenticated, 1 of 1 NTS sources agree" 30
        # One source has the server; the other places stay empty, said once.
        wait_members "127.0.0.1"
        wait_log "Pool $POOL names no member beyond the 1 in use (.*it is one server, not a pool.*): leaving 3 of its 4 places empty; asking it for more in an hour or so, not before\." 5
        POOL_COUNTS=plain
        assert_pool_left_alone plain
        [ "$(log_count "names no member beyond")" = 1 ] || fail "said more than once"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
}

_one_member_in_use() { [[ "$(members)" =~ ^127\.0\.0\.[23]$ ]]; }

# A pool listed after a server, NTSMaxSources=1: the server alone is used until it refuses
# service; then the pool takes its place at once (not by the stall check, which runs every
# second here and would say "a bug").
test_pool_takes_the_place_of_a_server_that_refuses_service() {
        local ntp deny deny_pid
        ntp=$(free_port)
        start_mock_server deny --ntp-listen-port="$ntp" --ntp-port="$ntp" --kiss=DENY --kiss-after=2
        deny=localhost:$MOCK_KE_PORT
        deny_pid=$MOCK_PID
        pool 2
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$deny $POOL" "ConnectionRetrySec=1" "NTSMaxSources=1"
        client
        wait_log "Initial clock synchronization to $deny (offset .*, NTS authenticated, 1 of 1 NTS sources agree" 30
        [ "$(members)" = "" ] || fail "the pool was used beside the server: '$(members)'"
        wait_log "Server $deny refuses service (kiss code DENY), not using it any more\." 30
        wait_for 20 _one_member_in_use || fail "the pool's sources are '$(members)', not one member"
        wait_log "Selected server 127\.0\.0\.[23] (1 of 1 NTS sources agree)\." 20
        log_has "(a bug)" && fail "the daemon stalled: $(grep -m1 "(a bug)" "$TIMESYNCD_LOG")"
        [ "$(mock_count deny ntp_kisses)" = 1 ] || fail "the server that refused was asked again"
        stop_all
        stop_daemon "$deny_pid"
}

# Off the loopback a server is its address, whatever the port: a pool that names one liar on two
# ports of 192.0.2.1, once by its address and once as twin.test (192.0.2.1 in a private
# /etc/hosts), and an honest member on 198.51.100.1, all on a veth interface in a network
# namespace of the test's own. The pool's address check lets twin.test through (another port);
# the set counts it once, so the liar has one vote of two and the clock, the daemon's fake one,
# stays where it is. Counted per member, two of three agree and step it by an hour.
one_address_on_two_ports_inner() {
        local hosts=$TEST_TMPDIR/hosts liar honest twin pids=() n
        ip link add tsnts0 type veth peer name tsnts1
        ip addr add 192.0.2.1/24 dev tsnts0
        ip addr add 198.51.100.1/24 dev tsnts0
        ip link set tsnts0 up
        ip link set tsnts1 up
        { cat /etc/hosts; echo "192.0.2.1 twin.test"; } >"$hosts"
        printf 'nameserver 127.0.0.1\n' >"$TEST_TMPDIR/resolv.conf"
        rm -f "$TEST_TMPDIR/mock-p.keys"
        start_mock_server p-liar --address=192.0.2.1 --keys-file="$TEST_TMPDIR/mock-p.keys" --time-offset=3600
        liar=192.0.2.1:$MOCK_NTP_PORT
        pids+=("$MOCK_PID")
        start_mock_server p-honest --address=198.51.100.1 --keys-file="$TEST_TMPDIR/mock-p.keys"
        honest=198.51.100.1:$MOCK_NTP_PORT
        pids+=("$MOCK_PID")
        start_mock_server p-twin --address=192.0.2.1 --keys-file="$TEST_TMPDIR/mock-p.keys" --time-offset=3600
        twin=twin.test:$MOCK_NTP_PORT
        pids+=("$MOCK_PID")
        start_mock_server p --keys-file="$TEST_TMPDIR/mock-p.keys" --pool-member="$liar" --pool-member="$honest" \
                --pool-member="$twin"
        POOL="pool:localhost:$MOCK_KE_PORT"
        POOL_PID=$MOCK_PID
        POOL_MEMBER_PIDS=("${pids[@]}")
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$POOL" "ConnectionRetrySec=1" "NTSMaxSources=3"
        : >"$TIMESYNCD_LOG"
        # shellcheck disable=SC2016 # $0, $1 and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(unshare --mount --propagation private
                bash -c 'mount --bind "$0" /etc/hosts && mount --bind "$1" /etc/resolv.conf && shift && exec "$@"'
                "$hosts" "$TEST_TMPDIR/resolv.conf")
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s --test-clock-offset=0s
        unset TIMESYNCD_WRAPPER
        wait_members "192.0.2.1 198.51.100.1 twin.test" 30
        # Several rounds of all three, then what they did.
        for n in p-liar p-honest p-twin; do
                wait_for 20 _pool_ntp_at_least $n 5 || fail "$n is not polled"
        done
        log_has "Test clock: stepped" && fail "the clock was stepped: $(grep -m1 "Test clock: stepped" "$TIMESYNCD_LOG")"
        log_has "Initial clock synchronization" && fail "the daemon synchronized: $(grep -m1 "Initial clock" "$TIMESYNCD_LOG")"
        log_has "Selected server" && fail "a source was selected: $(grep -m1 "Selected server" "$TIMESYNCD_LOG")"
        wait_log "NTS source twin\.test is the same server as 192\.0\.2\.1 (same NTP address 192\.0\.2\.1); it counts once\." 5
        wait_source_field twin.test Verdict duplicate 10
        wait_log "2 NTS sources disagree by 3600 s; clock left alone" 10
        echo "result: one address on two ports off the loopback: $(grep -m1 "is the same server as" "$TIMESYNCD_LOG")"
        stop_all
}

test_pool_naming_one_address_on_two_ports_off_the_loopback_counts_it_once() {
        run_in_netns one_address_on_two_ports_inner
}

run_case test_one_pool_name_gives_four_distinct_members
run_case test_pool_ignoring_deny_still_gives_distinct_sources
run_case test_second_name_for_a_member_in_use_is_turned_down_by_address
run_case test_member_that_stops_answering_is_replaced_by_a_new_key_exchange
run_case test_member_lying_about_the_time_is_outvoted
run_case test_restart_resumes_every_member_without_a_key_exchange
run_case test_pool_with_fewer_members_than_wanted_gives_what_it_has
run_case test_key_exchange_cap_is_shared_by_the_sources_of_one_pool
run_case test_server_without_server_record_is_one_source
run_case test_pool_takes_the_place_of_a_server_that_refuses_service
run_case test_pool_naming_one_address_on_two_ports_off_the_loopback_counts_it_once
