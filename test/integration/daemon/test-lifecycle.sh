#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon's life as a service, like stock timesyncd: sd_notify READY=1 and STATUS= lines,
# watchdog pings when WATCHDOG_USEC is set, the systemd-timesync user, a system bus that appears
# only after the daemon started and one that restarts, and systemd-networkd's state: link NTP
# servers and offline/online.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init

srv=$(free_port)
link=$(free_port)
start_ntp_test_server srv "$srv"
start_ntp_test_server link "$link"
export srv link

test_notify_ready_status_and_watchdog() {
        local out
        start_notify_listener
        out=$NOTIFY_OUT

        write_conf "$TEST_TMPDIR/ts.conf" "NTP=127.0.0.1:$srv"
        WATCHDOG_USEC=400000 start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_for 10 grep -q "READY=1" "$out" || fail "no READY=1"
        wait_for 10 grep -q "STATUS=Contacted time server 127.0.0.1:$srv (127.0.0.1:$srv), plain NTP, not authenticated." "$out" ||
                fail "no 'Contacted time server' status: $(cat "$out")"
        wait_for 10 bash -c "[ \$(grep -c WATCHDOG=1 '$out') -ge 2 ]" || fail "no watchdog pings"
        kill -TERM "$TIMESYNCD_PID"
        wait "$TIMESYNCD_PID" || fail "daemon did not exit cleanly"
        grep -q "STOPPING=1" "$out" || fail "no STOPPING=1"
        TIMESYNCD_PID=
}

test_runs_as_systemd_timesync_where_it_exists() {
        getent passwd systemd-timesync >/dev/null || skip "no systemd-timesync user here"
        write_conf "$TEST_TMPDIR/ts.conf" "NTP=127.0.0.1:$srv"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        # The exec is seen before the daemon has dropped privileges; this line follows the drop
        # (a slow start under ASan read uid 0 in CI).
        wait_log "Observe mode: measuring only"
        local uid
        uid=$(awk '$1 == "Uid:" { print $2 }' "/proc/$TIMESYNCD_PID/status")
        [ "$uid" = "$(id -u systemd-timesync)" ] || fail "daemon runs as uid $uid"
        [ "$(awk '$1 == "CapEff:" { print $2 }' "/proc/$TIMESYNCD_PID/status")" = 0000000000000000 ] ||
                fail "observe mode keeps capabilities"
        kill -TERM "$TIMESYNCD_PID"; wait "$TIMESYNCD_PID" || true
        TIMESYNCD_PID=
}

in_run() {
        # The bus is not there yet when the daemon starts (early boot): it waits for it. Its
        # socket's directory is BUSDIR (below).
        local busdir=$BUSDIR dir=$BUSDIR/dbus
        export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/system_bus_socket"
        write_conf "$TEST_TMPDIR/ts.conf" "NTP=127.0.0.1:$srv"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "System bus not available"
        # It waits for the socket to appear (inotify), without trying to connect again and
        # again: it tried every 2 s before, 43200 wakeups a day on a machine without a bus.
        timeout 5 strace -f -e trace=connect -o "$TEST_TMPDIR/connect.trace" -p "$TIMESYNCD_PID" 2>/dev/null || true
        grep -q "system_bus_socket" "$TEST_TMPDIR/connect.trace" &&
                fail "the daemon tried to connect to a bus that is not there: $(grep -c system_bus_socket "$TEST_TMPDIR/connect.trace") times in 5 s"
        TEST_TMPDIR=$busdir start_system_bus
        wait_for 10 bash -c 'timedatectl show-timesync -p ServerName --value 2>/dev/null | grep -q .' ||
                fail "the daemon did not connect to a bus that appeared later"
        wait_log "^Connected to the system bus\." 5
        echo "PASS test_bus_that_appears_later_is_joined"

        # The bus restarts: the daemon reconnects.
        kill -TERM "$DBUS_PID"
        wait_for 5 bash -c "! kill -0 $DBUS_PID 2>/dev/null" || fail "dbus-daemon did not stop"
        wait_log "Lost the connection to the system bus"
        rm -f "$dir/system_bus_socket"
        TEST_TMPDIR=$busdir start_system_bus
        wait_for 10 bash -c 'timedatectl show-timesync -p ServerName --value 2>/dev/null | grep -q .' ||
                fail "the daemon did not reconnect after a bus restart"
        echo "PASS test_bus_restart_is_survived"

        # systemd-networkd's state: link servers are used (no NTP= here), offline suspends.
        mkdir -p /run/systemd/netif
        printf 'OPER_STATE=routable\nCARRIER_STATE=carrier\nADDRESS_STATE=routable\nNTP=127.0.0.1:%s\n' "$link" \
                >/run/systemd/netif/state
        write_conf "$TEST_TMPDIR/ts.conf"
        kill -TERM "$TIMESYNCD_PID"; wait "$TIMESYNCD_PID" || true
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Initial clock synchronization to 127.0.0.1:$link"
        timedatectl show-timesync -p LinkNTPServers --value | grep_q -x "127.0.0.1:$link" ||
                fail "LinkNTPServers not shown"
        echo "PASS test_link_servers_from_networkd_are_used"

        printf 'OPER_STATE=no-carrier\nCARRIER_STATE=no-carrier\nADDRESS_STATE=off\n' >/run/systemd/netif/state.tmp
        mv /run/systemd/netif/state.tmp /run/systemd/netif/state
        wait_log "Network is offline, suspending synchronization"
        printf 'OPER_STATE=routable\nCARRIER_STATE=carrier\nADDRESS_STATE=routable\nNTP=127.0.0.1:%s\n' "$srv" \
                >/run/systemd/netif/state.tmp
        mv /run/systemd/netif/state.tmp /run/systemd/netif/state
        wait_log "Contacted time server 127.0.0.1:$srv"
        echo "PASS test_network_offline_suspends_and_online_resumes"

        # Servers set at runtime while offline wait for the network; they come first once it is up.
        local offline_seen served
        offline_seen=$(log_count "Network is offline")
        printf 'OPER_STATE=no-carrier\nCARRIER_STATE=no-carrier\nADDRESS_STATE=off\n' >/run/systemd/netif/state.tmp
        mv /run/systemd/netif/state.tmp /run/systemd/netif/state
        wait_log_count "Network is offline" $((offline_seen + 1))
        served=$(ntp_served link)
        busctl call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTPServers as 1 "127.0.0.1:$link"
        sleep 3
        [ "$(ntp_served link)" = "$served" ] || fail "a runtime server was contacted while offline"
        timedatectl show-timesync -p ServerName --value | grep_q . && fail "a server is selected while offline"
        printf 'OPER_STATE=routable\nCARRIER_STATE=carrier\nADDRESS_STATE=routable\n' >/run/systemd/netif/state.tmp
        mv /run/systemd/netif/state.tmp /run/systemd/netif/state
        # shellcheck disable=SC2016 # expanded by the inner bash, at each try of wait_for
        wait_for 10 bash -c '[ "$(cat "$TEST_TMPDIR/ntp-link.count" 2>/dev/null || echo 0)" -gt '"$served"' ]' ||
                fail "the runtime server set while offline was not contacted once online"
        echo "PASS test_runtime_servers_set_while_offline_wait_for_the_network"

        # A state that cannot be read changes nothing and does not end the watch.
        offline_seen=$(log_count "Network is offline")
        rm -f /run/systemd/netif/state
        mkdir /run/systemd/netif/state
        wait_log "Failed to read network state, keeping the last known state"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died on an unreadable network state"
        rmdir /run/systemd/netif/state
        printf 'OPER_STATE=no-carrier\nCARRIER_STATE=no-carrier\nADDRESS_STATE=off\n' >/run/systemd/netif/state.tmp
        mv /run/systemd/netif/state.tmp /run/systemd/netif/state
        wait_log_count "Network is offline" $((offline_seen + 1))
        echo "PASS test_unreadable_network_state_is_survived_and_the_watch_stays"
}

run_case test_notify_ready_status_and_watchdog
run_case test_runs_as_systemd_timesync_where_it_exists
# sd-bus watches every directory on the way to the socket, and one under /tmp would see the
# files other tests create there: a directory of its own under /run, made out here so that the
# cleanup (which in_systemd_run's process does not run) removes it.
BUSDIR=$(mktemp -d /run/tsnts-bus.XXXXXX)
at_cleanup rm -rf "$BUSDIR"
chmod 0755 "$BUSDIR"
export BUSDIR
run_case in_systemd_run in_run
