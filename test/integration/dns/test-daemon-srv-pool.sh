#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SRV pools in the daemon (NTS=srv:NAME, issue 17) against the DNSSEC fixture (test/lib/dnssec.sh:
# NSD with the signed zone nts.test, a standalone systemd-resolved with DNSSEC=yes on the test's
# bus). The targets are mock NTS servers on loopback at ports the records give; their names exist
# only in the signed zone:
#   _ntske._tcp.pool       10 60 m1, 10 40 m2, 20 0 m3
#   _ntske._tcp.wrongname  10 10 bad (a certificate for wrong.test only), 20 0 m3
#   _ntske._tcp.short      10 10 m1, with a TTL of 10 s
#   _ntske._tcp.many       10 10 s1 ... s8, TTL 10 s: eight targets of equal weight, each its own
#                          mock server on its own address (127.0.1.N)
#   _ntske._tcp.long       30 targets with long names (member-NN-...), all m1, TTL 10 s
# A signed SRV set gives sources from its targets at their SRV ports; an unsigned zone, a broken
# signature and a stopped resolved are each one clear error, and nothing of the entry is used (no
# key exchange, no fallback to the name's A/AAAA records); a target whose certificate does not
# match its name is refused and the next target takes its place; the records are looked up again
# when their TTL ends and when a source fails, and a lookup that failed is repeated when the
# clock is stepped. A lookup keeps the sources that work (a new draw of the targets does not move
# them), a failed lookup keeps them too and says so once, and the list of targets is logged once
# per change, whole records only. The weighted order itself (RFC 2782) is
# checked statistically on the lookup module the daemon uses (test-srv-lookup,
# test_weights_are_respected_over_many_orderings).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=dnssec.sh
. "$(dirname "$0")/../../lib/dnssec.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=mock.sh
. "$(dirname "$0")/../../lib/mock.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=timesyncd.sh
. "$(dirname "$0")/../../lib/timesyncd.sh"

daemon_test_init --certs --bus

# start_target NAME [ARG...]: a mock NTS server that sends its NTP port in a Port record (the
# target's own NTP service, as an SRV target is a whole NTS server). Sets KE[NAME], PID[NAME].
declare -A KE=() PID=()
start_target() {
        local name=$1 ntp
        shift
        ntp=$(free_port)
        start_mock_server "$name" --ntp-listen-port="$ntp" --ntp-port="$ntp" "$@"
        KE[$name]=$MOCK_KE_PORT
        PID[$name]=$MOCK_PID
}

start_target m1
start_target m2
start_target m3
start_target bad --cert="$CERTDIR/wrongname-chain.pem"
MANY=(s1 s2 s3 s4 s5 s6 s7 s8)
for _i in "${!MANY[@]}"; do
        start_target "${MANY[$_i]}" --address="127.0.1.$((_i + 1))"
done

DNS_FIXTURE_RECORDS="_ntske._tcp.pool SRV 10 60 ${KE[m1]} m1
_ntske._tcp.pool SRV 10 40 ${KE[m2]} m2
_ntske._tcp.pool SRV 20 0 ${KE[m3]} m3
_ntske._tcp.wrongname SRV 10 10 ${KE[bad]} bad
_ntske._tcp.wrongname SRV 20 0 ${KE[m3]} m3
_ntske._tcp.short 10 SRV 10 10 ${KE[m1]} m1
_ntske._tcp.badaddr SRV 10 10 ${KE[m1]} badsig
m1 A 127.0.0.1
m2 A 127.0.0.1
m3 A 127.0.0.1
bad A 127.0.0.1
pool A 127.0.0.1
wrongname A 127.0.0.1"
for _i in "${!MANY[@]}"; do
        DNS_FIXTURE_RECORDS+="
_ntske._tcp.many 10 SRV 10 10 ${KE[${MANY[$_i]}]} ${MANY[$_i]}
${MANY[$_i]} A 127.0.1.$((_i + 1))"
done
LONG_NAME=of-an-srv-pool-whose-targets-have-rather-long-names
for _i in $(seq -w 1 30); do
        DNS_FIXTURE_RECORDS+="
_ntske._tcp.long 10 SRV 10 10 ${KE[m1]} member-$_i-$LONG_NAME
member-$_i-$LONG_NAME A 127.0.0.1"
done
unset _i
export DNS_FIXTURE_RECORDS
dns_fixture_start

client() {
        local entry=$1
        shift
        : >"$TIMESYNCD_LOG"
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$entry" "ConnectionRetrySec=1" "$@"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
}

# The names of the sources of ENTRY, sorted, one line.
pool_sources() {
        sources_json | /usr/bin/python3 -c 'import json, sys
print(" ".join(sorted(s["Name"] for s in json.load(sys.stdin) if s["Pool"] == sys.argv[1])))' "$1"
}

_pool_sources_are() { [ "$(pool_sources "$1")" = "$2" ]; }

wait_pool_sources() {
        wait_for "${3:-30}" _pool_sources_are "$1" "$2" || fail "the sources of $1 are '$(pool_sources "$1")', not '$2'"
}

# Nothing of a refused entry is used: no key exchange with anything, no address looked up for
# the pool's own name (its A record exists: no fallback to it), no time.
assert_entry_unused() {
        log_has "Starting NTS key exchange" && fail "a key exchange although the SRV lookup was refused"
        log_has "Resolved address .* for $1" && fail "fell back to the A/AAAA records of $1"
        assert_never_synchronized
        local n
        for n in m1 m2 m3 bad; do
                [ "$(ke "$n")" = 0 ] || fail "target $n was asked although the lookup was refused"
        done
}

# The mock servers count from their start: each case counts from its own (ke NAME, ntp NAME).
declare -A KE_BASE=() NTP_BASE=()
reset_counts() {
        local n
        for n in m1 m2 m3 bad "${MANY[@]}"; do
                KE_BASE[$n]=$(mock_count "$n" ke_sessions)
                NTP_BASE[$n]=$(mock_count "$n" ntp_requests)
        done
}
ke() { echo $(( $(mock_count "$1" ke_sessions) - KE_BASE[$1] )); }
ntp() { echo $(( $(mock_count "$1" ntp_requests) - NTP_BASE[$1] )); }
# The key exchanges and the NTP requests of s1 ... s8 together.
many_ke() { local n sum=0; for n in "${MANY[@]}"; do sum=$((sum + $(ke "$n"))); done; echo "$sum"; }
many_ntp() { local n sum=0; for n in "${MANY[@]}"; do sum=$((sum + $(ntp "$n"))); done; echo "$sum"; }
_many_ntp_at_least() { [ "$(many_ntp)" -ge "$1" ]; }

test_signed_srv_set_gives_sources_from_its_targets_at_their_ports() {
        reset_counts
        client "srv:pool.$DNS_ZONE" NTSMaxSources=2
        wait_log "SRV pool srv:pool\.$DNS_ZONE: 3 targets, DNSSEC-authenticated, TTL 300 s: " 20
        # Priority 10 first: m1 and m2, in either order of the weighted draw; m3 (priority 20) waits.
        wait_pool_sources "srv:pool.$DNS_ZONE" "m1.$DNS_ZONE:${KE[m1]} m2.$DNS_ZONE:${KE[m2]}"
        wait_log "Initial clock synchronization to m[12]\.$DNS_ZONE:[0-9]* (offset .*, NTS authenticated, 2 of 2 NTS sources agree" 30
        # Each target's own key exchange, at the port its record gives (the default 4460 is
        # nobody's here), its certificate checked against its own name.
        [ "$(ke m1)" = 1 ] || fail "m1 had $(ke m1) key exchanges, not 1"
        [ "$(ke m2)" = 1 ] || fail "m2 had $(ke m2) key exchanges, not 1"
        [ "$(ke m3)" = 0 ] || fail "m3 (priority 20) was used while two of priority 10 serve"
        log_has "NTS key exchange with m1\.$DNS_ZONE:${KE[m1]} (127\.0\.0\.1:${KE[m1]}) done" ||
                fail "m1's key exchange was not at its SRV port"
        [ "$(source_field "m2.$DNS_ZONE:${KE[m2]}" KeyExchangeServer)" = "m2.$DNS_ZONE:${KE[m2]}" ] ||
                fail "m2's key exchange server is '$(source_field "m2.$DNS_ZONE:${KE[m2]}" KeyExchangeServer)'"
        log_has "Resolved address 127\.0\.0\.1 for m1\.$DNS_ZONE\." || fail "m1 was not resolved through resolved"
        stop_timesyncd
}

test_unsigned_zone_is_refused_and_nothing_used() {
        reset_counts
        client "srv:plain.$DNS_ZONE"
        wait_log "SRV pool srv:plain\.$DNS_ZONE is not used: the SRV records of _ntske\._tcp\.plain\.$DNS_ZONE are not DNSSEC-authenticated" 20
        sleep 3
        [ "$(log_count "SRV pool srv:plain\.$DNS_ZONE is not used")" = 1 ] || fail "the error was logged more than once"
        assert_entry_unused "plain.$DNS_ZONE"
        stop_timesyncd
}

test_broken_signature_is_refused_and_nothing_used() {
        reset_counts
        client "srv:broken.$DNS_ZONE"
        wait_log "SRV pool srv:broken\.$DNS_ZONE is not used: DNSSEC validation of _ntske\._tcp\.broken\.$DNS_ZONE failed" 20
        sleep 3
        assert_entry_unused "broken.$DNS_ZONE"
        stop_timesyncd
}

# A signed SRV set whose only target's address fails DNSSEC (badsig: its A record's signature
# is broken): the target's key exchange says so, not "no such host name", and nothing is used.
test_target_whose_address_fails_validation_says_so() {
        client "srv:badaddr.$DNS_ZONE"
        wait_log "SRV pool srv:badaddr\.$DNS_ZONE: 1 target, DNSSEC-authenticated" 20
        wait_log "NTS key exchange with badsig\.$DNS_ZONE:${KE[m1]} failed: cannot resolve badsig\.$DNS_ZONE: DNSSEC validation failed" 20
        log_has "no such host name" && fail "a failed validation was reported as: $(grep -m1 "no such host name" "$TIMESYNCD_LOG")"
        assert_never_synchronized
        stop_timesyncd
}

test_target_whose_certificate_does_not_match_its_name_is_refused() {
        reset_counts
        client "srv:wrongname.$DNS_ZONE" NTSMaxSources=1
        wait_log "NTS key exchange with bad\.$DNS_ZONE:${KE[bad]} failed: .*" 20
        # Refused twice: the next target, m3, takes its place, and the records are asked again.
        wait_log "SRV pool srv:wrongname\.$DNS_ZONE: bad\.$DNS_ZONE:${KE[bad]} failed 2 times in a row (.*); the next target takes its place" 30
        wait_pool_sources "srv:wrongname.$DNS_ZONE" "m3.$DNS_ZONE:${KE[m3]}"
        wait_log "Initial clock synchronization to m3\.$DNS_ZONE:${KE[m3]} (offset .*, NTS authenticated" 30
        log_has "Initial clock synchronization to bad\." && fail "synchronized to the target with the wrong name"
        grep -q "verif\|certificate" <<<"$(grep "NTS key exchange with bad\.$DNS_ZONE:${KE[bad]} failed" "$TIMESYNCD_LOG")" ||
                fail "the failure does not name the certificate: $(grep "key exchange with bad" "$TIMESYNCD_LOG")"
        [ "$(ntp bad)" = 0 ] || fail "the target with the wrong name was asked for time"
        stop_timesyncd
}

test_source_that_fails_brings_the_next_target_and_a_new_lookup() {
        reset_counts
        client "srv:pool.$DNS_ZONE" NTSMaxSources=2
        wait_pool_sources "srv:pool.$DNS_ZONE" "m1.$DNS_ZONE:${KE[m1]} m2.$DNS_ZONE:${KE[m2]}"
        wait_log "2 of 2 NTS sources agree\." 30
        local before
        before=$(log_count "Looking up the SRV records of srv:pool\.$DNS_ZONE\.")
        stop_daemon "${PID[m2]}"
        wait_log "SRV pool srv:pool\.$DNS_ZONE: m2\.$DNS_ZONE:${KE[m2]} failed 2 times in a row (.*); the next target takes its place, and the records are looked up again\." 60
        wait_pool_sources "srv:pool.$DNS_ZONE" "m1.$DNS_ZONE:${KE[m1]} m3.$DNS_ZONE:${KE[m3]}"
        wait_log_count "Looking up the SRV records of srv:pool\.$DNS_ZONE\." $((before + 1)) 20
        wait_log "2 of 2 NTS sources agree\." 30
        stop_timesyncd
}

test_records_are_looked_up_again_when_their_ttl_ends() {
        reset_counts
        client "srv:short.$DNS_ZONE" NTSMaxSources=1
        wait_log "SRV pool srv:short\.$DNS_ZONE: 1 target, DNSSEC-authenticated, TTL 10 s: m1\.$DNS_ZONE:${KE[m1]}" 20
        # 10 s after the first answer, and again 10 s later; the same target, so the source stays.
        wait_log_count "Looking up the SRV records of srv:short\.$DNS_ZONE\." 3 40
        [ "$(ke m1)" = 1 ] || fail "the unchanged target's source was made anew"
        [ "$(log_count "SRV pool srv:short\.$DNS_ZONE: 1 target")" = 1 ] || fail "an unchanged answer logged at info level again"
        stop_timesyncd
}

# Eight targets of equal weight, two sources, the records looked up again every 10 s: each lookup
# draws a new order (RFC 2782), and the two sources that work stay anyway. Moving them would cost
# a key exchange each time and give every target, a bad one too, its chance to be drawn.
test_working_sources_are_kept_when_the_records_are_looked_up_again() {
        local pool="srv:many.$DNS_ZONE" first
        reset_counts
        client "$pool" NTSMaxSources=2
        wait_log "SRV pool srv:many\.$DNS_ZONE: 8 targets, DNSSEC-authenticated, TTL 10 s: " 20
        wait_log "Initial clock synchronization to s[1-8]\.$DNS_ZONE:[0-9]* (offset .*, 2 of 2 NTS sources agree" 30
        first=$(pool_sources "$pool")
        [ "$(wc -w <<<"$first")" = 2 ] || fail "the sources of $pool are '$first'"
        # Three lookups after the first (10 s apart), each with a new draw, answered before a
        # fifth starts.
        wait_log_count "Looking up the SRV records of $pool\." 5 70
        [ "$(pool_sources "$pool")" = "$first" ] || fail "the sources moved from '$first' to '$(pool_sources "$pool")'"
        [ "$(log_count "SRV pool srv:many\.$DNS_ZONE: no longer using")" = 0 ] ||
                fail "sources retired: $(grep "no longer using" "$TIMESYNCD_LOG" | tr '\n' ' ')"
        [ "$(many_ke)" = 2 ] || fail "$(many_ke) key exchanges for two sources that kept working"
        # The list of targets once: the same set in another order is no change.
        [ "$(log_count "SRV pool srv:many\.$DNS_ZONE: 8 targets")" = 1 ] ||
                fail "the unchanged targets were logged $(log_count "SRV pool srv:many\.$DNS_ZONE: 8 targets") times"
        stop_timesyncd
}

# Thirty targets with long names: the list would not fit in one log line (2 KiB). It ends after a
# whole record with "... and N more", and comes once, not at every lookup.
test_long_list_of_targets_is_logged_once_and_whole_records_only() {
        local pool="srv:long.$DNS_ZONE" line listed more
        reset_counts
        client "$pool" NTSMaxSources=1
        wait_log "SRV pool srv:long\.$DNS_ZONE: 30 targets, DNSSEC-authenticated, TTL 10 s: " 20
        # Two lookups after the first, answered before a fourth starts.
        wait_log_count "Looking up the SRV records of $pool\." 4 50
        [ "$(log_count "SRV pool srv:long\.$DNS_ZONE: 30 targets")" = 1 ] ||
                fail "the unchanged targets were logged $(log_count "SRV pool srv:long\.$DNS_ZONE: 30 targets") times"
        line=$(grep "SRV pool srv:long\.$DNS_ZONE: 30 targets" "$TIMESYNCD_LOG")
        [ "${#line}" -lt 2000 ] || fail "the line is ${#line} bytes long"
        # Whole records, then the count of the others, and the line's own end.
        grep -Eq ": (member-[0-9]{2}-$LONG_NAME\.$DNS_ZONE:${KE[m1]} \(priority 10, weight 10\), )+\.\.\. and [0-9]+ more\.$" \
                <<<"$line" || fail "not whole records and '... and N more.': $line"
        listed=$(grep -o "member-[0-9]*-$LONG_NAME\.$DNS_ZONE:${KE[m1]} (priority 10, weight 10)" <<<"$line" | wc -l)
        more=$(sed -n 's/.*\.\.\. and \([0-9]*\) more\.$/\1/p' <<<"$line")
        [ $((listed + more)) = 30 ] || fail "$listed records listed and $more more, not 30"
        stop_timesyncd
}

# resolved goes away while the pool's two sources work: the lookups fail, the sources stay and go
# on polling, the log says once that the lookup fails, NTSStatus says it; when resolved is back
# the same sources go on.
test_failed_lookup_keeps_the_working_sources_and_says_so_once() {
        local pool="srv:many.$DNS_ZONE" first before mark
        reset_counts
        client "$pool" NTSMaxSources=2
        wait_log "Initial clock synchronization to s[1-8]\.$DNS_ZONE:[0-9]* (offset .*, 2 of 2 NTS sources agree" 30
        first=$(pool_sources "$pool")
        mark=$(wc -l <"$TIMESYNCD_LOG")
        stop_resolved
        wait_log "SRV pool srv:many\.$DNS_ZONE: looking its records up again fails: .*systemd-resolved is not running.*\. Its 2 sources in use are kept; looking it up again in " 30
        [[ "$(timesync_property NTSStatus)" == "$pool: its sources in use are kept, but looking its SRV records up again fails: "*"systemd-resolved is not running"* ]] ||
                fail "NTSStatus is '$(timesync_property NTSStatus)'"
        # Two more failed lookups (ConnectionRetrySec=1: within seconds), and the sources poll on.
        before=$(log_count "Looking up the SRV records of $pool\.")
        wait_log_count "Looking up the SRV records of $pool\." $((before + 2)) 30
        wait_for 20 _many_ntp_at_least $(( $(many_ntp) + 6 )) || fail "the sources stopped polling"
        [ "$(pool_sources "$pool")" = "$first" ] || fail "the sources are '$(pool_sources "$pool")', not '$first'"
        [ "$(log_count "looking its records up again fails")" = 1 ] || fail "the failure was logged more than once"
        ! tail -n "+$((mark + 1))" "$TIMESYNCD_LOG" | grep_q "No NTS source answers" ||
                fail "the sources were dropped: 'No NTS source answers' after resolved stopped"
        log_has "no longer using" && fail "a source was retired: $(grep -m1 "no longer using" "$TIMESYNCD_LOG")"
        log_has "SRV pool $pool is not used" && fail "the pool was declared unused"
        start_resolved yes
        wait_log "SRV pool srv:many\.$DNS_ZONE can be used again\." 60
        [ "$(timesync_property NTSStatus)" = "" ] || fail "NTSStatus is still '$(timesync_property NTSStatus)'"
        [ "$(pool_sources "$pool")" = "$first" ] || fail "the sources are '$(pool_sources "$pool")', not '$first'"
        [ "$(many_ke)" = 2 ] || fail "$(many_ke) key exchanges for two sources that kept working"
        stop_timesyncd
}

# Last: it leaves resolved stopped.
test_resolved_stopped_is_a_clear_error_and_nothing_used() {
        reset_counts
        stop_resolved
        client "srv:pool.$DNS_ZONE"
        wait_log "SRV pool srv:pool\.$DNS_ZONE is not used: .*systemd-resolved is not running" 20
        sleep 3
        assert_entry_unused "pool.$DNS_ZONE"
        stop_timesyncd
}

# A lookup that failed is repeated when the clock is stepped, not at the end of its backoff
# (ConnectionRetrySec=60 here: the next one 60 to 120 s later): DNSSEC signatures that looked
# expired or not yet valid may verify against the corrected clock (docs/NTS.md, "A wrong clock
# at boot"). Resolved is stopped (by the case before), so the lookups fail. First another
# program's jump (SIGUSR1 moves the test clock); then our own step, from a static NTS server
# beside the pool while the test clock is an hour ahead (the test certificates are not valid
# before their making), after which resolved comes back and
# the pool's repeated lookup succeeds.
test_failed_lookup_is_repeated_when_the_clock_is_stepped() {
        local pool="srv:pool.$DNS_ZONE" trigger="SRV pool srv:pool\.$DNS_ZONE: the system clock changed; looking its records up again"
        [ -z "${RESOLVED_PID:-}" ] || stop_resolved
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$pool" "ConnectionRetrySec=60"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-clock-offset=3600s
        # A wait of 60 s or more is written "1min ..." (FORMAT_TIMESPAN).
        wait_log "SRV pool srv:pool\.$DNS_ZONE is not used: .*systemd-resolved is not running.* Looking it up again in [0-9]*min" 20
        kill -USR1 "$TIMESYNCD_PID"
        wait_log "Test clock: jumped by +3600" 5
        wait_log "$trigger" 5
        # Not sooner than 10 s after the lookup before.
        wait_log_count "Looking up the SRV records of $pool\." 2 15
        stop_timesyncd

        start_target static
        : >"$TIMESYNCD_LOG"
        # No clock file: its floor would advance the test clock before the step.
        rm -f "$TEST_TMPDIR"/state/nts-*.jar "$TEST_TMPDIR/state/clock"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$pool localhost:${KE[static]}" "ConnectionRetrySec=60"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s --test-clock-offset=3600s
        wait_log "SRV pool srv:pool\.$DNS_ZONE is not used: .*systemd-resolved is not running" 20
        wait_log "Test clock: stepped by -3[56][0-9][0-9]\." 30
        wait_log "$trigger" 5
        start_resolved yes
        wait_log "SRV pool srv:pool\.$DNS_ZONE can be used again\." 20
        wait_log "SRV pool srv:pool\.$DNS_ZONE: 3 targets, DNSSEC-authenticated" 5
        wait_log "[234] of [234] NTS sources agree" 30
        stop_timesyncd
        stop_daemon "${PID[static]}"
}

run_case test_signed_srv_set_gives_sources_from_its_targets_at_their_ports
run_case test_unsigned_zone_is_refused_and_nothing_used
run_case test_broken_signature_is_refused_and_nothing_used
run_case test_target_whose_address_fails_validation_says_so
run_case test_target_whose_certificate_does_not_match_its_name_is_refused
run_case test_source_that_fails_brings_the_next_target_and_a_new_lookup
run_case test_records_are_looked_up_again_when_their_ttl_ends
run_case test_working_sources_are_kept_when_the_records_are_looked_up_again
run_case test_long_list_of_targets_is_logged_once_and_whole_records_only
run_case test_failed_lookup_keeps_the_working_sources_and_says_so_once
run_case test_resolved_stopped_is_a_clear_error_and_nothing_used
run_case test_failed_lookup_is_repeated_when_the_clock_is_stepped
