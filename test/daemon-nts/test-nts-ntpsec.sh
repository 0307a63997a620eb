#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTS against a real NTPsec 1.2.2 (fixed ports 4460 and 123, so in a network namespace of the
# test, with the daemon and timedatectl in the same one), reached by a name that is not
# "localhost": ntp.test from the harness's private /etc/hosts.
set -euo pipefail
. "$(dirname "$0")/../lib/ntpsec.sh"
. "$(dirname "$0")/../lib/dbus.sh"
. "$(dirname "$0")/../daemon/lib-timesyncd.sh"
test_init
timesyncd_prepare
make_test_certs >/dev/null
command -v timedatectl >/dev/null || missing_prerequisite "timedatectl not installed (package systemd)"

netns_create
start_ntpsec_nts_server "$TEST_TMPDIR/ntpsec" "$CERTDIR" "$NETNS"
start_system_bus
write_nts_conf "$TEST_TMPDIR/ts.conf" "ntp.test" "PollIntervalMinSec=16"
export TIMESYNCD_LOG

nts_authenticated_on_bus() { [ "$(timesync_property NTSAuthenticated 2>/dev/null)" = yes ]; }

# Runs inside the namespace, where ntp.test resolves to 127.0.0.1 and ::1.
sync_and_show() {
        local show=$TEST_TMPDIR/show-timesync.txt aead
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        # NTPsec, unlike chronyd, accepts the client's first choice of AES-SIV key size.
        wait_log "NTS key exchange with ntp.test (.*:4460) done: AEAD_AES_SIV_CMAC_[0-9]*, 8 cookies, NTP server .* port 123\."
        aead=$(grep -o "done: AEAD_AES_SIV_CMAC_[0-9]*" "$TIMESYNCD_LOG" | tail -n 1)
        aead=${aead#done: }
        wait_log "Initial clock synchronization to ntp.test (offset .*, NTS authenticated"
        wait_for 10 nts_authenticated_on_bus || fail "NTSAuthenticated never became yes on the bus"
        timedatectl show-timesync --all >"$show"
        echo "---- transcript: timedatectl show-timesync --all (NTPsec 1.2.2, NTS-KE ntp.test:4460) ----"
        cat "$show"
        echo "---- end of transcript ----"
        grep -qx "NTS=yes" "$show" || fail "NTS is not yes"
        grep -qx "NTSAuthenticated=yes" "$show" || fail "NTSAuthenticated is not yes"
        grep -qx "NTSAEAD=$aead" "$show" || fail "NTSAEAD is not $aead, the AEAD of the key exchange"
        grep -Eqx "NTSCookies=[1-8]" "$show" || fail "NTSCookies is not between 1 and 8"
        grep -qx "NTSKeyExchangeServer=ntp.test:4460" "$show" || fail "NTSKeyExchangeServer is not ntp.test:4460"
        [ "$(timedatectl show-timesync -p NTSAuthenticated --value)" = yes ] ||
                fail "show-timesync -p NTSAuthenticated does not say yes"
        log_has "Ignoring reply from .* that fails NTS verification" && fail "a reply failed verification"
        true
}

test_nts_sync_with_ntpsec_is_authenticated() {
        netns_exec "$NETNS" in_systemd_run sync_and_show
}

run_case test_nts_sync_with_ntpsec_is_authenticated
