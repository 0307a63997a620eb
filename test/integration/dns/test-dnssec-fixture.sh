#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The DNSSEC fixture of test/lib/dnssec.sh works, and tells the cases apart that an SRV pool
# lookup depends on: a signed SRV set is authenticated, one from an unsigned zone is not, a
# broken signature fails validation, resolved with DNSSEC=no authenticates nothing, and a
# stopped resolved leaves the bus. The host's resolver files and port 53 are left alone.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=dnssec.sh
. "$(dirname "$0")/../../lib/dnssec.sh"

test_init
host_resolv_conf=$(sha256sum </etc/resolv.conf)
host_had_resolve_dir=no
[ -e /run/systemd/resolve ] && host_had_resolve_dir=yes
t0=${EPOCHREALTIME/./}
dns_fixture_start
log "fixture up in $(( (${EPOCHREALTIME/./} - t0) / 1000 )) ms"

# resolve_record NAME TYPE: ResolveRecord through busctl; prints the reply flags.
resolve_record_flags() {
        busctl --system call org.freedesktop.resolve1 /org/freedesktop/resolve1 \
                org.freedesktop.resolve1.Manager ResolveRecord isqqt 0 "$1" 1 "$2" 0 | awk '{ print $NF }'
}

SD_RESOLVED_AUTHENTICATED=$(( 1 << 9 ))

test_signed_srv_set_is_authenticated() {
        local out flags
        out=$(resolvectl_query "_ntske._tcp.$DNS_ZONE" SRV)
        grep -q 'Data is authenticated: yes' <<<"$out" || fail "signed SRV set not authenticated: $out"
        [ "$(grep -c "IN SRV" <<<"$out")" = 3 ] || fail "expected the 3 SRV records: $out"
        grep -q "IN SRV 10 60 4460 ke1.$DNS_ZONE" <<<"$out" || fail "SRV record for ke1 missing: $out"
        flags=$(resolve_record_flags "_ntske._tcp.$DNS_ZONE" 33)
        (( flags & SD_RESOLVED_AUTHENTICATED )) || fail "ResolveRecord flags $flags lack SD_RESOLVED_AUTHENTICATED"
}

test_unsigned_zone_is_not_authenticated() {
        local out flags
        out=$(resolvectl_query "_ntske._tcp.plain.$DNS_ZONE" SRV)
        grep -q 'Data is authenticated: no' <<<"$out" || fail "unsigned zone reported as authenticated: $out"
        flags=$(resolve_record_flags "_ntske._tcp.plain.$DNS_ZONE" 33)
        (( !(flags & SD_RESOLVED_AUTHENTICATED) )) || fail "ResolveRecord flags $flags claim authentication for an unsigned zone"
}

test_broken_signature_fails_validation() {
        local out
        out=$(resolvectl_query "_ntske._tcp.broken.$DNS_ZONE" SRV 2>&1) && fail "a broken signature resolved: $out"
        grep -q 'DNSSEC validation failed: invalid' <<<"$out" || fail "unexpected error for a broken signature: $out"
}

test_signed_host_name_is_authenticated() {
        local out
        out=$(resolvectl_query "host.$DNS_ZONE" A)
        grep -q "127.0.0.1" <<<"$out" || fail "host.$DNS_ZONE has no address: $out"
        grep -q 'Data is authenticated: yes' <<<"$out" || fail "host.$DNS_ZONE not authenticated: $out"
}

test_resolved_with_dnssec_off_authenticates_nothing() {
        local out
        start_resolved no
        out=$(resolvectl_query "_ntske._tcp.$DNS_ZONE" SRV)
        grep -q 'Data is authenticated: no' <<<"$out" || fail "DNSSEC=no still authenticated: $out"
        [ "$(busctl --system get-property org.freedesktop.resolve1 /org/freedesktop/resolve1 \
                org.freedesktop.resolve1.Manager DNSSEC)" = 's "no"' ] || fail "DNSSEC property is not \"no\""
        start_resolved yes
        out=$(resolvectl_query "_ntske._tcp.$DNS_ZONE" SRV)
        grep -q 'Data is authenticated: yes' <<<"$out" || fail "not authenticated again after DNSSEC=yes: $out"
}

test_stopped_resolved_leaves_the_bus() {
        local out
        stop_resolved
        out=$(busctl --system call org.freedesktop.resolve1 /org/freedesktop/resolve1 \
                org.freedesktop.resolve1.Manager ResolveRecord isqqt 0 "_ntske._tcp.$DNS_ZONE" 1 33 0 2>&1) &&
                fail "ResolveRecord answered with resolved stopped: $out"
        grep -q 'org.freedesktop.resolve1 was not provided' <<<"$out" || fail "unexpected error: $out"
        start_resolved yes
}

test_host_resolver_and_port_53_untouched() {
        local now=no
        [ "$(sha256sum </etc/resolv.conf)" = "$host_resolv_conf" ] || fail "the host's /etc/resolv.conf changed"
        [ -e /run/systemd/resolve ] && now=yes
        [ "$now" = "$host_had_resolve_dir" ] || fail "/run/systemd/resolve on the host changed ($host_had_resolve_dir -> $now)"
        [ -d "$TEST_TMPDIR/resolved/run/systemd/resolve" ] || fail "resolved did not use its private /run"
        ! ss -Hlun "sport = :53" | grep_q "$DNS_SERVER" || fail "NSD listens on the host's network"
}

run_case test_signed_srv_set_is_authenticated
run_case test_unsigned_zone_is_not_authenticated
run_case test_broken_signature_fails_validation
run_case test_signed_host_name_is_authenticated
run_case test_resolved_with_dnssec_off_authenticates_nothing
run_case test_stopped_resolved_leaves_the_bus
run_case test_host_resolver_and_port_53_untouched
