#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The demo behind tools/demo.sh, built from the test harness (so the same safety rules hold:
# no daemon has CAP_SYS_TIME, the clock guard checks the kernel clock was not touched).
set -euo pipefail
. "$(dirname "$0")/../test/lib/chrony.sh"
. "$(dirname "$0")/../test/lib/timesyncd.sh"
daemon_test_init --certs --bus

start_nts_peer
ke=$NTS_PEER_KE_PORT
write_conf "$TEST_TMPDIR/timesyncd.conf" "NTS=localhost:$ke" "NTSTrustedCertificates=$CERTDIR/ca.pem"
chmod 0755 "$CERTDIR"
chmod 0644 "$CERTDIR"/*.pem

demo() {
        local sources=$TSNTS_BUILD_DIR/tools/timesync-sources
        echo "== timesyncd.conf"
        cat "$TEST_TMPDIR/timesyncd.conf"
        echo
        echo "== systemd-timesyncd --validate (what is in effect; exit 0 when it is sound)"
        run_nosystime "$TIMESYNCD" --validate --config="$TEST_TMPDIR/timesyncd.conf"
        echo
        start_timesyncd "$TEST_TMPDIR/timesyncd.conf"
        wait_log "NTS authenticated" 20
        echo
        echo "== daemon log (observe mode, no CAP_SYS_TIME)"
        grep -v "^Selected\|^Connecting\|^NTS-KE with\|bus" "$TIMESYNCD_LOG" | grep -iv "debug" | head -12
        echo
        echo "== timedatectl timesync-status"
        timedatectl timesync-status
        echo
        echo "== timedatectl show-timesync --all"
        timedatectl show-timesync --all
        echo
        echo "== timesync-sources"
        "$sources"
        echo
        echo "== timesync-sources --check (0: synchronized over NTS)"
        "$sources" --check
        echo
        echo "== timesync-sources --openmetrics (for node_exporter's textfile collector)"
        "$sources" --openmetrics
}

in_systemd_run demo
