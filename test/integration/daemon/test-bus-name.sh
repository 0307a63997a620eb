#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Another process owns org.freedesktop.timesync1 (here: a first instance of the daemon) when a
# second one starts on the same bus: the second logs one clear error naming the bus name, keeps
# its connection and keeps synchronizing (like stock, which runs on without the name), and
# takes the name over when the first one ends. It used to log "Lost the connection to the
# system bus, reconnecting" every 2 to 3 seconds, about 2,500 times an hour.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --timedatectl --bus

first=$(free_port)
second=$(free_port)
start_ntp_test_server first "$first"
start_ntp_test_server second "$second"

server_on_bus_is() { [ "$(timesync_property ServerName 2>/dev/null)" = "$1" ]; }

test_taken_bus_name_is_one_error_and_passes_over_when_released() {
        local first_pid log=$TEST_TMPDIR/second.log
        write_conf "$TEST_TMPDIR/first.conf" "NTP=127.0.0.1:$first"
        start_timesyncd "$TEST_TMPDIR/first.conf"
        first_pid=$TIMESYNCD_PID
        wait_for 10 server_on_bus_is "127.0.0.1:$first" || fail "the first instance is not on the bus"

        mkdir -p "$TEST_TMPDIR/state-second" "$TEST_TMPDIR/runtime-second"
        write_conf "$TEST_TMPDIR/second.conf" "NTP=127.0.0.1:$second"
        TIMESYNCD_LOG=$log start_timesyncd "$TEST_TMPDIR/second.conf" \
                --state-dir="$TEST_TMPDIR/state-second" --runtime-dir="$TEST_TMPDIR/runtime-second"
        wait_for 10 grep -q "The bus name org.freedesktop.timesync1 is owned by process $first_pid" "$log" ||
                fail "no error naming org.freedesktop.timesync1 and its owner: $(cat "$log")"
        wait_for 10 grep -q "Initial clock synchronization to 127.0.0.1:$second" "$log" ||
                fail "the second instance does not synchronize without the bus name"
        # The old behaviour reconnected every 2 to 3 seconds: 8 seconds show it.
        sleep 8
        grep -i "bus" "$log"
        [ "$(grep -c "org.freedesktop.timesync1" "$log")" = 1 ] || fail "the bus name error was repeated"
        ! grep -q "Lost the connection to the system bus" "$log" || fail "the second instance loses its bus connection"
        server_on_bus_is "127.0.0.1:$first" || fail "the bus name moved away from the first instance"

        # The owner goes: the name passes to the instance that waits for it.
        stop_daemon "$first_pid"
        wait_for 10 grep -q "Acquired the bus name org.freedesktop.timesync1: its previous owner released it" "$log" ||
                fail "the second instance did not take the name over"
        wait_for 10 server_on_bus_is "127.0.0.1:$second" || fail "timedatectl does not reach the second instance"
        stop_timesyncd
}

run_case test_taken_bus_name_is_one_error_and_passes_over_when_released
