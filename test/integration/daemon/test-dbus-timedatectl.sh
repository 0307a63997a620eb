#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The D-Bus surface, seen by Debian's own timedatectl and busctl over a private system bus:
# the stock org.freedesktop.timesync1.Manager interface with its signatures, timesync-status,
# show-timesync --all, SetRuntimeNTPServers (validation, privileges, effect) and LogControl1.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --timedatectl --bus

srv1=$(free_port)
srv2=$(free_port)
start_ntp_test_server one "$srv1"
start_ntp_test_server two "$srv2"
write_conf "$TEST_TMPDIR/ts.conf" "NTP=127.0.0.1:$srv1" "PollIntervalMinSec=16" "PollIntervalMaxSec=64"
export TEST_TMPDIR TIMESYNCD_LOG srv1 srv2

# Stock systemd-timesyncd 252's interface: name, type, signature (busctl introspect columns).
export STOCK_MEMBERS="\
.SetRuntimeNTPServers method as
.FallbackNTPServers property as
.Frequency property x
.LinkNTPServers property as
.NTPMessage property (uuuuittayttttbtt)
.PollIntervalMaxUSec property t
.PollIntervalMinUSec property t
.PollIntervalUSec property t
.RootDistanceMaxUSec property t
.RuntimeNTPServers property as
.ServerAddress property (iay)
.ServerName property s
.SystemNTPServers property as"

in_bus() {
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_for 10 bash -c 'timedatectl show-timesync -p ServerName --value 2>/dev/null | grep -q .' ||
                fail "ServerName never appeared on the bus"
        wait_log "Initial clock synchronization"

        # test_interface_matches_stock_signatures
        busctl --system introspect org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager | awk '$1 ~ /^\./ { print $1, $2, $3 }' \
                >"$TEST_TMPDIR/introspect.txt"
        while read -r member type sig; do
                grep -qxF "$member $type $sig" "$TEST_TMPDIR/introspect.txt" ||
                        fail "stock member $member ($type $sig) missing or different"
        done <<<"$STOCK_MEMBERS"
        echo "PASS test_interface_matches_stock_signatures"

        # test_upstream_patch_set_properties_are_served: the names of the NTS patch set
        # (pendulum-project/nts-timesyncd), so that its scripts work; here with plain NTP.
        grep -qxF ".NTSKeyExchangeServers property as" "$TEST_TMPDIR/introspect.txt" ||
                fail "NTSKeyExchangeServers (as) missing"
        grep -qxF ".SecureTime property b" "$TEST_TMPDIR/introspect.txt" || fail "SecureTime (b) missing"
        busctl --system get-property org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SecureTime | grep_q -x "b false" || fail "SecureTime is not false"
        busctl --system get-property org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager NTSKeyExchangeServers | grep_q -x "as 0" ||
                fail "NTSKeyExchangeServers is not empty"
        echo "PASS test_upstream_patch_set_properties_are_served"

        # test_timesync_status_shows_server_poll_offset_and_frequency
        timedatectl timesync-status >"$TEST_TMPDIR/status.txt"
        cat "$TEST_TMPDIR/status.txt"
        grep -q "Server: 127.0.0.1 (127.0.0.1:$srv1)" "$TEST_TMPDIR/status.txt" || fail "server not shown"
        grep -Eq "Poll interval: 16s \(min: 16s; max 1min 4s\)" "$TEST_TMPDIR/status.txt" || fail "poll interval not shown"
        grep -Eq "Offset: [-+][0-9.]+(us|ms)" "$TEST_TMPDIR/status.txt" || fail "offset not shown"
        grep -q "Stratum: 1" "$TEST_TMPDIR/status.txt" || fail "stratum not shown"
        # Read from the kernel when asked (observe mode reads it per request, not per poll).
        grep -Eq "Frequency: [-+][0-9]+\.[0-9]{3}ppm" "$TEST_TMPDIR/status.txt" || fail "frequency not shown"
        echo "PASS test_timesync_status_shows_server_poll_offset_and_frequency"

        # test_show_timesync_all_lists_every_property
        timedatectl show-timesync --all >"$TEST_TMPDIR/show.txt"
        for p in LinkNTPServers SystemNTPServers RuntimeNTPServers FallbackNTPServers ServerName \
                 ServerAddress RootDistanceMaxUSec PollIntervalMinUSec PollIntervalMaxUSec \
                 PollIntervalUSec NTPMessage Frequency; do
                grep -q "^$p=" "$TEST_TMPDIR/show.txt" || fail "show-timesync --all lacks $p"
        done
        grep -qx "SystemNTPServers=127.0.0.1:$srv1" "$TEST_TMPDIR/show.txt" || fail "SystemNTPServers wrong"
        grep -qx "ServerAddress=127.0.0.1" "$TEST_TMPDIR/show.txt" || fail "ServerAddress wrong"
        grep -Eqx "Frequency=-?[0-9]+" "$TEST_TMPDIR/show.txt" || fail "Frequency is not a number"
        grep -qx "SecureTime=no" "$TEST_TMPDIR/show.txt" || fail "show-timesync --all lacks SecureTime=no"
        grep -qx "NTSKeyExchangeServers=" "$TEST_TMPDIR/show.txt" || fail "show-timesync --all lacks NTSKeyExchangeServers="
        echo "PASS test_show_timesync_all_lists_every_property"

        # test_invalid_runtime_server_is_refused_with_invalid_args (an NTS list says NTS server)
        local kind
        for kind in NTP NTS; do
                if busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                                org.freedesktop.timesync1.Manager "SetRuntime${kind}Servers" as 1 "bad name!" \
                                2>"$TEST_TMPDIR/err.txt"; then
                        fail "invalid $kind server name accepted"
                fi
                grep -q "Invalid $kind server name or address, refusing: bad name!" "$TEST_TMPDIR/err.txt" ||
                        fail "no InvalidArgs error naming an $kind server: $(cat "$TEST_TMPDIR/err.txt")"
        done
        echo "PASS test_invalid_runtime_server_is_refused_with_invalid_args"

        # test_unprivileged_caller_is_denied_without_polkit
        if setpriv --reuid=65534 --regid=65534 --clear-groups busctl --system call org.freedesktop.timesync1 \
                        /org/freedesktop/timesync1 org.freedesktop.timesync1.Manager SetRuntimeNTPServers \
                        as 1 "127.0.0.1:$srv2" 2>"$TEST_TMPDIR/err.txt"; then
                fail "unprivileged caller allowed to set runtime servers"
        fi
        grep -qi "denied\|root" "$TEST_TMPDIR/err.txt" || fail "no access denied error: $(cat "$TEST_TMPDIR/err.txt")"
        echo "PASS test_unprivileged_caller_is_denied_without_polkit"

        # test_runtime_servers_take_precedence (and test_properties_changed_are_emitted)
        timeout 20 busctl --system --match "type='signal',sender='org.freedesktop.timesync1',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'" \
                monitor >"$TEST_TMPDIR/monitor.txt" 2>&1 &
        local monitor=$!
        sleep 0.5
        busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTPServers as 1 "127.0.0.1:$srv2"
        wait_for 10 bash -c "timedatectl show-timesync -p ServerName --value | grep -qx 127.0.0.1:$srv2" ||
                fail "runtime server not used"
        timedatectl show-timesync -p RuntimeNTPServers --value | grep_q -x "127.0.0.1:$srv2" ||
                fail "RuntimeNTPServers not updated"
        echo "PASS test_runtime_servers_take_precedence"

        wait_for 10 grep -q '"NTPMessage"' "$TEST_TMPDIR/monitor.txt" || fail "no PropertiesChanged for NTPMessage"
        # PollIntervalUSec is announced only when it changes: the new server starts at the
        # same minimum (test-nts-chrony counts the signals per poll).
        for p in ServerName ServerAddress RuntimeNTPServers; do
                grep -q "\"$p\"" "$TEST_TMPDIR/monitor.txt" || fail "no PropertiesChanged for $p"
        done
        kill "$monitor" 2>/dev/null || true
        echo "PASS test_properties_changed_are_emitted"

        # test_log_control_sets_level
        busctl --system set-property org.freedesktop.timesync1 /org/freedesktop/LogControl1 \
                org.freedesktop.LogControl1 LogLevel s info
        busctl --system get-property org.freedesktop.timesync1 /org/freedesktop/LogControl1 \
                org.freedesktop.LogControl1 LogLevel | grep_q '"info"' || fail "LogLevel not set"
        echo "PASS test_log_control_sets_level"
}

run_case in_systemd_run in_bus
