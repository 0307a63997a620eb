#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# After a fix, what failed is retried at once: a reload that names the same servers retries
# every source that backs off (the CA of the mock NTS server installed in the trusted file),
# and so does RetrySources (timesync-sources --retry; the key-exchange port opened); an
# unprivileged caller without polkit is refused. Before, both waited out the backoff
# (ConnectionRetrySec=, 30 s, then the jittered ladder): issue 35 measured 41 s and 30 s.
# Each case says how long the synchronization took after the fix; the bound checked is 10 s,
# a third of the shortest backoff.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs
TIMESYNC_SOURCES=$TSNTS_BUILD_DIR/tools/timesync-sources
[ -x "$TIMESYNC_SOURCES" ] || fail "$TIMESYNC_SOURCES not built"
id nobody >/dev/null 2>&1 || missing_prerequisite "no user nobody"
start_system_bus --policy "$TSNTS_SRC_DIR/units/org.freedesktop.timesync1.conf"

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# synced_within_10s_of T0 SERVER WHAT: the daemon synchronizes to SERVER within 10 s of T0 (an
# $EPOCHREALTIME value, taken at the fix), and says how long it took.
synced_within_10s_of() {
        wait_log "$(synced_line "$2")" 10
        echo "result: $3: synchronized $(seconds_since "$1") s after it (the backoff was 30 s or more)"
        stop_timesyncd
}

test_a_reload_after_the_ca_was_installed_retries_at_once() {
        local trust=$TEST_TMPDIR/trust.pem t0
        start_nts_mock ca
        cp "$CERTDIR/other-ca.pem" "$trust"
        chmod 0644 "$trust"
        write_conf "$TEST_TMPDIR/ca.conf" "NTS=localhost:$MOCK_KE" "NTSTrustedCertificates=$trust"
        TIMESYNCD_LOG=$TEST_TMPDIR/ca.log
        start_timesyncd "$TEST_TMPDIR/ca.conf"
        wait_log "NTS key exchange with localhost:$MOCK_KE failed: .*certificate.* Trying again in" 10

        cat "$CERTDIR/other-ca.pem" "$CERTDIR/ca.pem" >"$trust"
        t0=$EPOCHREALTIME
        kill -HUP "$TIMESYNCD_PID"
        wait_log "Configuration reloaded, servers unchanged: retrying 1 failing source now\." 10
        synced_within_10s_of "$t0" "localhost:$MOCK_KE" "a reload after the CA was installed"
}

test_a_retry_asked_after_the_port_was_opened_retries_at_once() {
        local ke ntp t0 out
        ke=$(free_port)
        ntp=$(free_port)
        write_nts_conf "$TEST_TMPDIR/port.conf" "localhost:$ke"
        TIMESYNCD_LOG=$TEST_TMPDIR/port.log
        start_timesyncd "$TEST_TMPDIR/port.conf"
        wait_log "NTS key exchange with localhost:$ke failed: .* Trying again in" 10
        wait_for 10 "$TIMESYNC_SOURCES" >/dev/null 2>&1 || fail "the daemon is not on the bus"

        start_mock_server port --ke-port="$ke" --ntp-listen-port="$ntp" --ntp-port="$ntp"
        # Without polkit only root may.
        if out=$(as_nobody "$TIMESYNC_SOURCES" --retry 2>&1); then
                fail "timesync-sources --retry as nobody succeeded: $out"
        fi
        [[ $out == *"Only root may retry sources here (no polkit)."* ]] || fail "nobody was refused with: $out"
        log_has "Retry asked over D-Bus" && fail "the refused call retried"

        t0=$EPOCHREALTIME
        out=$("$TIMESYNC_SOURCES" --retry) || fail "timesync-sources --retry failed: $out"
        [ "$out" = "Retrying 1 failing source now." ] || fail "timesync-sources --retry said: $out"
        wait_log "Retry asked over D-Bus: 1 failing source retried now\." 5
        synced_within_10s_of "$t0" "localhost:$ke" "timesync-sources --retry after the port was opened"
}

run_case test_a_reload_after_the_ca_was_installed_retries_at_once
run_case test_a_retry_asked_after_the_port_was_opened_retries_at_once
