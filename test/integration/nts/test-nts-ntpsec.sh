#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTS against a real NTPsec 1.2.2 (fixed ports 4460 and 123, so in a network namespace of the
# test, with the daemon and timedatectl in the same one), reached by a name that is not
# "localhost": ntp.test from the harness's private /etc/hosts.
set -euo pipefail
. "$(dirname "$0")/../../lib/ntpsec.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus

netns_create
start_ntpsec_nts_server "$TEST_TMPDIR/ntpsec" "$CERTDIR" "$NETNS"
write_nts_conf "$TEST_TMPDIR/ts.conf" "ntp.test" "PollIntervalMinSec=16"
export TIMESYNCD_LOG

# Runs inside the namespace, where ntp.test resolves to 127.0.0.1 and ::1.
sync_and_show() {
        local aead
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        # NTPsec, unlike chronyd, accepts the client's first choice of AES-SIV key size.
        wait_log "NTS key exchange with ntp.test (.*:4460) done: AEAD_AES_SIV_CMAC_[0-9]*, 8 cookies, NTP server .* port 123\."
        aead=$(grep -o "done: AEAD_AES_SIV_CMAC_[0-9]*" "$TIMESYNCD_LOG" | tail -n 1)
        wait_log "Initial clock synchronization to ntp.test (offset .*, NTS authenticated"
        assert_nts_on_bus ntp.test:4460 "${aead#done: }" "NTPsec 1.2.2, NTS-KE ntp.test:4460"
        log_has "Ignoring reply from .* that fails NTS verification" && fail "a reply failed verification"
        true
}

test_nts_sync_with_ntpsec_is_authenticated() {
        netns_exec "$NETNS" in_systemd_run sync_and_show
}

run_case test_nts_sync_with_ntpsec_is_authenticated
