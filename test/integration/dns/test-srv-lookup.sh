#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The SRV pool lookup (src/timesync/timesyncd-srv.c, through test/tools/probes/srv-lookup) against
# systemd-resolved validating a signed zone: the targets and ports of an authenticated SRV set
# come back in RFC 2782 order; everything that is not an authenticated set of targets is one
# clear error and no targets: unsigned zone, broken signature, no records, target ".",
# resolved with DNSSEC=no, resolved stopped, no bus.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=dnssec.sh
. "$(dirname "$0")/../../lib/dnssec.sh"

SRV_LOOKUP=${TSNTS_SRV_LOOKUP:-$TSNTS_BUILD_DIR/test/tools/probes/srv-lookup}
[ -x "$SRV_LOOKUP" ] || fail "srv-lookup not found at $SRV_LOOKUP (build first)"

test_init
dns_fixture_start

# expect_refused NAME ERRNO PATTERN: the lookup fails with ERRNO, its message matches PATTERN,
# and nothing that looks like a target is printed.
expect_refused() {
        local name=$1 errno=$2 pattern=$3 out
        out=$("$SRV_LOOKUP" "$name" 2>&1) && fail "lookup of $name succeeded: $out"
        grep -q "^srv-lookup: $errno: " <<<"$out" || fail "lookup of $name: expected $errno, got: $out"
        grep -qE -- "$pattern" <<<"$out" || fail "lookup of $name: message lacks /$pattern/: $out"
        ! grep -q '^target:' <<<"$out" || fail "lookup of $name gave targets although it failed: $out"
        ! grep -q 'Sanitizer' <<<"$out" || fail "sanitizer report from srv-lookup: $out"
        log "refused as expected: $out"
}

test_signed_srv_set_gives_targets_in_priority_order_with_their_ports() {
        local out targets
        out=$("$SRV_LOOKUP" "$DNS_ZONE") || fail "lookup failed: $out"
        grep -qx 'authenticated: yes' <<<"$out" || fail "not authenticated: $out"
        grep -qx 'ttl: 300' <<<"$out" || fail "TTL of the records not reported: $out"
        targets=$(grep '^target:' <<<"$out")
        [ "$(wc -l <<<"$targets")" = 3 ] || fail "expected 3 targets: $out"
        grep -qx "target: ke1.$DNS_ZONE port 4460 priority 10 weight 60" <<<"$targets" || fail "ke1 wrong: $out"
        grep -qx "target: ke2.$DNS_ZONE port 4461 priority 10 weight 20" <<<"$targets" || fail "ke2 wrong: $out"
        # Priority 20 comes after both of priority 10, whatever the weighted draw.
        [ "$(tail -n1 <<<"$targets")" = "target: ke3.$DNS_ZONE port 4462 priority 20 weight 0" ] ||
                fail "ke3 (priority 20) not last: $out"
}

test_weights_are_respected_over_many_orderings() {
        local out first n=2000 count
        out=$("$SRV_LOOKUP" --orderings "$n" "$DNS_ZONE") || fail "lookup failed: $out"
        first=$(grep -v -e '^authenticated:' -e '^ttl:' -e '^target:' <<<"$out" | awk '{ print $1 }')
        [ "$(wc -l <<<"$first")" = "$n" ] || fail "expected $n orderings"
        # ke1 (weight 60) comes first with probability 60/81 or 61/81 against ke2 (weight 20),
        # depending on which of the two is first in line: 1481 or 1506 in 2000, standard
        # deviation 20; six of them either way. Weights ignored would give 1000.
        count=$(grep -cx "ke1.$DNS_ZONE" <<<"$first" || true)
        log "ke1 first in $count of $n orderings (expected 1481 or 1506, +- 20)"
        if [ "$count" -le 1361 ] || [ "$count" -ge 1626 ]; then
                fail "ke1 first $count times in $n, weights not respected"
        fi
}

test_unsigned_zone_is_refused() {
        expect_refused "plain.$DNS_ZONE" ENOKEY "not DNSSEC-authenticated.*DNSSEC=yes"
}

test_broken_signature_is_refused() {
        expect_refused "broken.$DNS_ZONE" EBADMSG "DNSSEC validation of _ntske._tcp.broken.$DNS_ZONE failed .*invalid"
}

test_name_without_srv_records_is_refused() {
        expect_refused "none.$DNS_ZONE" ENOENT "_ntske._tcp.none.$DNS_ZONE has no SRV records"
}

test_dot_target_means_no_service() {
        expect_refused "dot.$DNS_ZONE" ENOENT "no NTS-KE service"
}

test_resolved_with_dnssec_off_is_named_in_the_error() {
        start_resolved no
        expect_refused "$DNS_ZONE" ENOKEY "runs with DNSSEC=no.*set DNSSEC=yes in resolved.conf"
        start_resolved yes
}

test_stopped_resolved_is_a_clear_error() {
        stop_resolved
        expect_refused "$DNS_ZONE" ENOTCONN "systemd-resolved is not running"
        start_resolved yes
}

test_missing_system_bus_is_a_clear_error() {
        local out
        out=$(DBUS_SYSTEM_BUS_ADDRESS="unix:path=$TEST_TMPDIR/no-such-bus" "$SRV_LOOKUP" "$DNS_ZONE" 2>&1) &&
                fail "lookup without a bus succeeded: $out"
        grep -q "cannot connect to the system bus" <<<"$out" || fail "unexpected: $out"
}

run_case test_signed_srv_set_gives_targets_in_priority_order_with_their_ports
run_case test_weights_are_respected_over_many_orderings
run_case test_unsigned_zone_is_refused
run_case test_broken_signature_is_refused
run_case test_name_without_srv_records_is_refused
run_case test_dot_target_means_no_service
run_case test_resolved_with_dnssec_off_is_named_in_the_error
run_case test_stopped_resolved_is_a_clear_error
run_case test_missing_system_bus_is_a_clear_error
