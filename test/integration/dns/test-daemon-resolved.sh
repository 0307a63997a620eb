#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon resolves host names through systemd-resolved when it is on the bus, and through
# getaddrinfo() when it is not (src/shared/resolve-util.c), saying which in its debug log:
# an NTS= name that exists only in the DNSSEC fixture's signed zone (in no /etc/hosts, and no
# DNS server the host's getaddrinfo() could ask) reaches chronyd; with resolved stopped, a name
# from /etc/hosts still does; a name whose signature fails validation is not worked around,
# unless SYSTEMD_NSS_RESOLVE_VALIDATE=0 (as the unit sets it) turns validation off.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=dnssec.sh
. "$(dirname "$0")/../../lib/dnssec.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=chrony.sh
. "$(dirname "$0")/../../lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=timesyncd.sh
. "$(dirname "$0")/../../lib/timesyncd.sh"

daemon_test_init --certs
dns_fixture_start
start_nts_peer
ke=$NTS_PEER_KE_PORT

test_nts_name_from_the_signed_zone_is_resolved_through_resolved() {
        local conf=$TEST_TMPDIR/resolved.conf
        ! grep -q "host.$DNS_ZONE" /etc/hosts || fail "host.$DNS_ZONE is in the host's /etc/hosts"
        write_nts_conf "$conf" "host.$DNS_ZONE:$ke"
        start_timesyncd "$conf"
        wait_log "Initial clock synchronization to host.$DNS_ZONE:$ke (offset .*, NTS authenticated"
        log_has "Resolved address 127.0.0.1 for host.$DNS_ZONE\." || fail "no 'Resolved address' line for host.$DNS_ZONE"
        log_has "Resolved address ::1 for host.$DNS_ZONE\." || fail "the AAAA record of host.$DNS_ZONE is missing"
        ! log_has "using getaddrinfo" || fail "getaddrinfo was used although resolved runs"
        stop_timesyncd
}

# resolved 252 drops an address whose validation failed from a ResolveHostname answer; with no
# other address left it answers NoSuchRR. Asked for IPv4 alone it says DnssecFailed: the daemon
# asks so, and says what failed, not "no such host name". Nothing is asked of getaddrinfo().
test_failed_validation_of_a_host_name_is_not_worked_around() {
        local conf=$TEST_TMPDIR/badsig.conf
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$conf" "badsig.$DNS_ZONE:$ke"
        start_timesyncd "$conf"
        wait_log "NTS key exchange with badsig.$DNS_ZONE:$ke failed: cannot resolve badsig.$DNS_ZONE: DNSSEC validation failed"
        log_has "systemd-resolved failed to resolve badsig.$DNS_ZONE" || fail "no error from resolved in the log"
        grep -q "DNSSEC validation failed for question badsig.$DNS_ZONE IN A: invalid" \
                "$TEST_TMPDIR/resolved/resolved.log" || fail "resolved did not fail the validation of badsig.$DNS_ZONE"
        ! log_has "using getaddrinfo" || fail "fell back to getaddrinfo after a failed DNSSEC validation"
        ! log_has "Initial clock synchronization" || fail "synchronized through a name that failed validation"
        stop_timesyncd
}

# The unit sets SYSTEMD_NSS_RESOLVE_VALIDATE=0 (validation needs the right time first); it
# reaches resolved through the D-Bus path as it does through nss-resolve. TLS still checks the
# certificate against the name.
test_nss_resolve_validate_0_turns_validation_off_as_the_unit_sets_it() {
        local conf=$TEST_TMPDIR/badsig.conf
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$conf" "badsig.$DNS_ZONE:$ke"
        TIMESYNCD_WRAPPER=(env SYSTEMD_NSS_RESOLVE_VALIDATE=0)
        start_timesyncd "$conf"
        unset TIMESYNCD_WRAPPER
        wait_log "Initial clock synchronization to badsig.$DNS_ZONE:$ke (offset .*, NTS authenticated"
        log_has "Resolved address 127.0.0.1 for badsig.$DNS_ZONE\." || fail "no 'Resolved address' line for badsig.$DNS_ZONE"
        stop_timesyncd
}

# sync_to_ntp_test_from_etc_hosts [ENV...]: the daemon (with the environment ENV..., through
# env) on NTS=ntp.test, a name only the test's /etc/hosts knows (bound over the real one in a
# mount namespace of the daemon's), synchronizes; the log must say that getaddrinfo was used.
sync_to_ntp_test_from_etc_hosts() {
        local conf=$TEST_TMPDIR/gai.conf
        : >"$TIMESYNCD_LOG"
        # Saved cookies would skip the key exchange, and with it the lookup.
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        write_nts_conf "$conf" "ntp.test:$ke"
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(env "$@" unshare --mount --propagation private
                bash -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$TEST_TMPDIR/hosts")
        start_timesyncd "$conf"
        unset TIMESYNCD_WRAPPER
        wait_log "Initial clock synchronization to ntp.test:$ke (offset .*, NTS authenticated"
        log_has "Failed to connect to systemd-resolved, using getaddrinfo" ||
                fail "no 'Failed to connect to systemd-resolved, using getaddrinfo' line"
}

test_without_resolved_getaddrinfo_resolves_from_etc_hosts() {
        stop_resolved
        { cat /etc/hosts; echo "127.0.0.1 ntp.test"; } >"$TEST_TMPDIR/hosts"
        sync_to_ntp_test_from_etc_hosts
        ! log_has "Resolved address" || fail "a 'Resolved address' line without resolved"
        stop_timesyncd
}

# resolved masked on a real system: its package's bus activation file stays, the bus tries to
# start it and answers with the failure (measured in the qemu guest: "Unit
# dbus-org.freedesktop.resolve1.service failed to load properly ..."). Here an activation file
# whose program exits at once gets dbus-daemon's own failure (Spawn.ChildExited). Either comes
# from the bus, not from resolved: resolved is absent, and getaddrinfo() resolves the name.
test_resolved_that_the_bus_cannot_start_counts_as_absent() {
        local services=$TEST_TMPDIR/dbus/services
        ! resolved_on_bus || fail "resolved still on the bus"
        printf '[D-BUS Service]\nName=org.freedesktop.resolve1\nExec=/bin/false\n' >"$services/org.freedesktop.resolve1.service"
        busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig >/dev/null
        sync_to_ntp_test_from_etc_hosts
        log_has "Failed to connect to systemd-resolved, using getaddrinfo: .*exit" ||
                fail "the getaddrinfo line does not name the failed start"
        stop_timesyncd
        rm -f "$services/org.freedesktop.resolve1.service"
        busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig >/dev/null
}

# Started before any bus exists (early boot): the query's own connection fails at once.
test_without_a_system_bus_getaddrinfo_is_used() {
        sync_to_ntp_test_from_etc_hosts DBUS_SYSTEM_BUS_ADDRESS="unix:path=$TEST_TMPDIR/no-such-bus"
        stop_timesyncd
}

run_case test_nts_name_from_the_signed_zone_is_resolved_through_resolved
run_case test_failed_validation_of_a_host_name_is_not_worked_around
run_case test_nss_resolve_validate_0_turns_validation_off_as_the_unit_sets_it
run_case test_without_resolved_getaddrinfo_resolves_from_etc_hosts
run_case test_resolved_that_the_bus_cannot_start_counts_as_absent
run_case test_without_a_system_bus_getaddrinfo_is_used
