#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The names of the upstream NTS patch set for systemd-timesyncd (pendulum-project/nts-timesyncd)
# work as there: SecureServers= (another name for NTS=), KeyExchangeTimeoutSec= (the bound of a
# whole key exchange, checked against a listener that accepts and never answers), and the D-Bus
# properties NTSKeyExchangeServers (the configured NTS-KE servers) and SecureTime (the time in
# use is NTS authenticated), with PropertiesChanged when they change. Real chronyd, a private
# D-Bus, Debian's timedatectl and busctl; one daemon, reloaded between the cases.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus

plain=$(free_port)
start_nts_peer
ke=$NTS_PEER_KE_PORT
start_ntp_test_server plain "$plain"
start_notify_listener
conf=$TEST_TMPDIR/ts.conf
monitor=$TEST_TMPDIR/monitor.json

# upstream_conf LINE...: a configuration in the patch set's words, trusting the test CA.
upstream_conf() {
        write_conf "$conf" "NTSTrustedCertificates=$CERTDIR/ca.pem" "ConnectionRetrySec=1" "$@"
}

# changed_values PROPERTY: every value PROPERTY had in a PropertiesChanged signal so far, one
# per line, oldest first (busctl monitor --json=short: one message per line).
changed_values() {
        /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("member") != "PropertiesChanged":
        continue
    changed = m["payload"]["data"][1]
    if sys.argv[2] in changed:
        print(json.dumps(changed[sys.argv[2]]["data"]))' "$monitor" "$1"
}

secure_time_is() { [ "$(timesync_property SecureTime 2>/dev/null)" = "$1" ]; }
# last_change_is PROPERTY JSON: the last PropertiesChanged value of PROPERTY was JSON.
last_change_is() { [ "$(changed_values "$1" | tail -n 1)" = "$2" ]; }

# A KE server that never answers: KeyExchangeTimeoutSec=2 ends the exchange after about 2 s,
# not the default 10 s; KeyExchangeTimeoutSec=20 lets it run past 10 s. Order of magnitude only.
test_key_exchange_timeout_sec_bounds_the_whole_exchange() {
        local stall took
        stall=$(free_port)
        start_stalling_listener "$stall"
        upstream_conf "SecureServers=localhost:$stall" "KeyExchangeTimeoutSec=2"
        start_timesyncd "$conf"
        wait_for 10 grep -q ACCEPTED "$TEST_TMPDIR/stall.log" || fail "no key exchange with the SecureServers= server"
        wait_for 15 grep -q CLOSED "$TEST_TMPDIR/stall.log" || fail "the stalled key exchange was not ended"
        took=$(stalled_seconds)
        echo "KeyExchangeTimeoutSec=2: the stalled exchange was ended after ${took} s (whole seconds)"
        { [ "$took" -ge 1 ] && [ "$took" -le 5 ]; } || fail "the exchange ended after $took s, not about 2 s"
        wait_log "NTS key exchange with localhost:$stall failed"
        [ "$(timesync_property NTSKeyExchangeServers)" = "localhost:$stall" ] ||
                fail "NTSKeyExchangeServers is '$(timesync_property NTSKeyExchangeServers)'"

        stall=$(free_port)
        start_stalling_listener "$stall"
        upstream_conf "SecureServers=localhost:$stall" "KeyExchangeTimeoutSec=20"
        reload_timesyncd
        wait_for 10 grep -q ACCEPTED "$TEST_TMPDIR/stall.log" || fail "no key exchange after the reload"
        sleep 12
        ! grep -q CLOSED "$TEST_TMPDIR/stall.log" || fail "KeyExchangeTimeoutSec=20 ended the exchange after $(stalled_seconds) s"
        echo "KeyExchangeTimeoutSec=20: the stalled exchange still open after 12 s"
}

# SecureServers= and NTS= together, against chronyd: one list, NTS authenticated; the patch
# set's properties say so, and change with PropertiesChanged as the authenticated state does.
test_secure_time_and_nts_key_exchange_servers_follow_the_authenticated_state() {
        local show=$TEST_TMPDIR/show.txt
        timeout 90 busctl --system --json=short --match \
                "type='signal',sender='org.freedesktop.timesync1',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'" \
                monitor >"$monitor" 2>"$TEST_TMPDIR/monitor.log" &
        track_pid $!
        sleep 0.5
        upstream_conf "SecureServers=localhost:$ke" "NTS=127.0.0.1:$ke" "KeyExchangeTimeoutSec=32"
        reload_timesyncd
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated" 20
        wait_for 10 secure_time_is yes ||
                fail "SecureTime is '$(timesync_property SecureTime)' after an NTS authenticated reply"
        in_systemd_run timedatectl show-timesync --all >"$show"
        cat "$show"
        grep -qx "SecureTime=yes" "$show" || fail "show-timesync --all: no SecureTime=yes"
        grep -qx "NTSAuthenticated=yes" "$show" || fail "show-timesync --all: no NTSAuthenticated=yes"
        grep -qx "NTSKeyExchangeServers=localhost:$ke 127.0.0.1:$ke" "$show" ||
                fail "show-timesync --all: NTSKeyExchangeServers is not the SecureServers= and NTS= list"
        grep -qx "SystemNTSServers=localhost:$ke 127.0.0.1:$ke" "$show" || fail "SystemNTSServers differs"
        wait_for 5 last_change_is SecureTime true ||
                fail "no PropertiesChanged with SecureTime true: $(changed_values SecureTime)"
        last_change_is NTSKeyExchangeServers "[\"localhost:$ke\", \"127.0.0.1:$ke\"]" ||
                fail "no PropertiesChanged with the new NTSKeyExchangeServers: $(changed_values NTSKeyExchangeServers)"

        # Plain NTP only: the next reply is not authenticated, and the properties say it.
        write_conf "$conf" "NTP=127.0.0.1:$plain"
        reload_timesyncd
        wait_for 10 secure_time_is no ||
                fail "SecureTime is '$(timesync_property SecureTime)' with plain NTP"
        [ "$(timesync_property NTSAuthenticated)" = no ] || fail "NTSAuthenticated is not no"
        [ -z "$(timesync_property NTSKeyExchangeServers)" ] || fail "NTSKeyExchangeServers is not empty"
        wait_for 5 last_change_is SecureTime false ||
                fail "no PropertiesChanged with SecureTime false: $(changed_values SecureTime)"
        last_change_is NTSKeyExchangeServers "[]" ||
                fail "no PropertiesChanged with an empty NTSKeyExchangeServers: $(changed_values NTSKeyExchangeServers)"
        stop_timesyncd
}

run_case test_key_exchange_timeout_sec_bounds_the_whole_exchange
run_case test_secure_time_and_nts_key_exchange_servers_follow_the_authenticated_state
