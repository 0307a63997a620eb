#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SIGHUP (systemctl reload) reads the configuration again: the server in use and its keys stay
# when the server lists did not change; new lists take over at once, also from a hanging key
# exchange and from plain NTP to NTS; runtime servers stay first; a configuration that cannot be
# read leaves the one in use. One daemon for all cases, against a real chronyd NTS server.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus

plain=$(free_port)
start_nts_peer
ke=$NTS_PEER_KE_PORT srv=$NTS_PEER_DIR
start_ntp_test_server plain "$plain"
conf=$TEST_TMPDIR/ts.conf
notify=$TEST_TMPDIR/notify.txt

ke_accepted() { chrony_serverstat "$srv" "NTS-KE connections accepted"; }
nts_status_is() { [ "$(timesync_property NTSStatus)" = "$1" ]; }

ready_count() { grep -c "READY=1" "$notify" || true; }
_ready_count_above() { [ "$(ready_count)" -gt "$1" ]; }

# reload [PATTERN]: SIGHUP; once the daemon has told the service manager READY=1 again (the
# reload is done), PATTERN must be in the log once more than before.
reload() {
        local n ready
        n=$(log_count "${1:-.}")
        ready=$(ready_count)
        kill -HUP "$TIMESYNCD_PID"
        wait_for 10 _ready_count_above "$ready" || fail "no READY=1 within 10 s of SIGHUP"
        [ -z "${1:-}" ] || [ "$(log_count "$1")" -gt "$n" ] || fail "no '$1' in the daemon log after the reload"
}

test_reload_with_the_same_servers_keeps_the_server_and_its_keys() {
        local sock=$TEST_TMPDIR/notify.sock selected
        /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/notify-listen.py" "$sock" "$notify" >"$TEST_TMPDIR/notify.log" 2>&1 &
        track_pid $!
        wait_for 5 grep -q READY "$TEST_TMPDIR/notify.log" || fail "notify listener did not start"
        chmod 0777 "$sock"

        write_nts_conf "$conf" "localhost:$ke"
        NOTIFY_SOCKET=$sock start_timesyncd "$conf"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        [ "$(ke_accepted)" = 1 ] || fail "chronyd counted $(ke_accepted) key exchanges at start"
        selected=$(log_count "Selected server localhost:$ke")

        # Only the poll interval changes.
        write_nts_conf "$conf" "localhost:$ke" "PollIntervalMinSec=64" "PollIntervalMaxSec=128"
        reload "Configuration reloaded, servers unchanged."
        wait_for 5 grep -q "RELOADING=1" "$notify" || fail "no RELOADING=1: $(cat "$notify")"
        grep -A20 "RELOADING=1" "$notify" | grep_q "READY=1" || fail "no READY=1 after RELOADING=1: $(cat "$notify")"
        grep "RELOADING=1" "$notify" | grep_q -E "MONOTONIC_USEC=[0-9]+" || fail "RELOADING=1 without MONOTONIC_USEC="
        [ "$(timesync_property PollIntervalMinUSec)" = "1min 4s" ] ||
                fail "PollIntervalMinUSec is $(timesync_property PollIntervalMinUSec), not 1min 4s"
        [ "$(timesync_property PollIntervalMaxUSec)" = "2min 8s" ] ||
                fail "PollIntervalMaxUSec is $(timesync_property PollIntervalMaxUSec), not 2min 8s"
        [ "$(timesync_property ServerName)" = "localhost:$ke" ] || fail "ServerName changed"
        nts_authenticated_on_bus || fail "NTSAuthenticated is no longer yes"
        [ "$(log_count "Selected server localhost:$ke")" = "$selected" ] || fail "the server was selected again"
        [ "$(ke_accepted)" = 1 ] || fail "a reload that changed no server ran a key exchange"
}

test_new_servers_take_over_a_hanging_key_exchange_and_saved_cookies_come_back() {
        local stall replies
        stall=$(free_port)
        start_stalling_listener "$stall"
        write_nts_conf "$conf" "localhost:$stall"
        reload "Configuration reloaded, servers changed: selecting a server again."
        wait_for 10 grep -q ACCEPTED "$TEST_TMPDIR/stall.log" || fail "no key exchange with the new server"
        [ "$(timesync_property SystemNTSServers)" = "localhost:$stall" ] || fail "SystemNTSServers is not localhost:$stall"

        # Back to chronyd while the exchange hangs (its timeout is 10 s): it is closed at once,
        # and the cookies saved when localhost:$ke was dropped are used without a key exchange.
        replies=$(log_count "NTP reply from")
        write_nts_conf "$conf" "localhost:$ke"
        reload "Configuration reloaded, servers changed: selecting a server again."
        wait_for 5 grep -q CLOSED "$TEST_TMPDIR/stall.log" || fail "the abandoned key exchange was not closed"
        wait_log_count "NTP reply from" $((replies + 1)) 5
        wait_for 5 nts_authenticated_on_bus || fail "NTSAuthenticated is not yes after the switch back"
        [ "$(timesync_property ServerName)" = "localhost:$ke" ] || fail "ServerName is not localhost:$ke"
        log_has "NTS key exchange with localhost:$stall failed" && fail "the abandoned key exchange came back"
        [ "$(ke_accepted)" = 1 ] || fail "chronyd counted $(ke_accepted) key exchanges: the saved cookies were not used"
}

test_reload_from_plain_ntp_to_nts_leaves_plain_ntp() {
        local served
        write_conf "$conf" "NTP=127.0.0.1:$plain"
        reload "Configuration reloaded, servers changed"
        wait_for 10 bash -c "[ \$(cat '$TEST_TMPDIR/ntp-plain.count' 2>/dev/null || echo 0) -ge 1 ]" ||
                fail "the plain NTP server of the reloaded configuration was not asked"
        [ "$(timesync_property NTS)" = no ] || fail "NTS is not no with NTP= alone"

        # NTS= added, NTP= kept: only NTS from now on.
        write_nts_conf "$conf" "localhost:$ke" "NTP=127.0.0.1:$plain"
        served=$(ntp_served plain)
        reload "Configuration reloaded, servers changed"
        wait_for 10 nts_authenticated_on_bus || fail "not NTS authenticated after NTS= was added"
        [ "$(timesync_property ServerName)" = "localhost:$ke" ] || fail "ServerName is not localhost:$ke"
        [ "$(timesync_property NTS)" = yes ] || fail "NTS is not yes"
        [ "$(ntp_served plain)" = "$served" ] || fail "the plain NTP server was asked after NTS= came"
}

test_runtime_servers_stay_first_across_a_reload() {
        local stall
        in_systemd_run busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTSServers as 1 "localhost:$ke"
        stall=$(free_port)
        start_stalling_listener "$stall"
        write_nts_conf "$conf" "localhost:$stall"
        reload "Configuration reloaded, servers changed"
        wait_for 10 nts_authenticated_on_bus || fail "not NTS authenticated after the reload"
        [ "$(timesync_property RuntimeNTSServers)" = "localhost:$ke" ] || fail "the runtime servers were lost"
        [ "$(timesync_property ServerName)" = "localhost:$ke" ] || fail "ServerName is not the runtime server"
        sleep 1
        grep -q ACCEPTED "$TEST_TMPDIR/stall.log" && fail "the file's server was asked before the runtime one"
        in_systemd_run busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTSServers as 0
        write_nts_conf "$conf" "localhost:$ke"
        reload "Configuration reloaded, servers changed"
        wait_for 10 nts_authenticated_on_bus || fail "not NTS authenticated with the file's server"
}

test_reload_to_only_invalid_nts_names_never_falls_back_to_plain_ntp() {
        local served
        served=$(ntp_served plain)
        write_conf "$conf" "NTS=bad_name!x" "NTP=127.0.0.1:$plain"
        reload "NTS= names no valid server. There is no fallback to unauthenticated NTP"
        wait_for 5 nts_status_is "NTS= names no valid server" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        [ "$(timesync_property NTS)" = yes ] || fail "NTS is not yes"
        [ -z "$(timesync_property ServerName)" ] || fail "ServerName is $(timesync_property ServerName)"
        sleep 2
        [ "$(ntp_served plain)" = "$served" ] || fail "the plain NTP server was asked"
        write_nts_conf "$conf" "localhost:$ke"
        reload "Configuration reloaded, servers changed"
        wait_for 10 nts_authenticated_on_bus || fail "not NTS authenticated again"
}

test_configuration_that_cannot_be_read_leaves_the_one_in_use() {
        local kept="Failed to read the configuration again, keeping the one in use" n
        n=$(log_count "$kept")
        mv "$conf" "$conf.away"
        reload
        [ "$(timesync_property SystemNTSServers)" = "localhost:$ke" ] || fail "SystemNTSServers changed"
        [ "$(timesync_property ServerName)" = "localhost:$ke" ] || fail "ServerName changed"
        [ "$(timesync_property NTS)" = yes ] || fail "NTS is no longer on"
        [ "$(log_count "$kept")" = $((n + 1)) ] || fail "no '$kept' for a missing file"
        # A directory where the file was: it opens, but reading it fails.
        mkdir "$conf"
        reload
        [ "$(timesync_property SystemNTSServers)" = "localhost:$ke" ] || fail "SystemNTSServers changed"
        [ "$(log_count "$kept")" = $((n + 2)) ] || fail "no '$kept' for a directory"
        rmdir "$conf"
        mv "$conf.away" "$conf"
        reload "Configuration reloaded, servers unchanged."
        nts_authenticated_on_bus || fail "NTSAuthenticated is no longer yes"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon is gone"
        stop_timesyncd
}

run_case test_reload_with_the_same_servers_keeps_the_server_and_its_keys
run_case test_new_servers_take_over_a_hanging_key_exchange_and_saved_cookies_come_back
run_case test_reload_from_plain_ntp_to_nts_leaves_plain_ntp
run_case test_runtime_servers_stay_first_across_a_reload
run_case test_reload_to_only_invalid_nts_names_never_falls_back_to_plain_ntp
run_case test_configuration_that_cannot_be_read_leaves_the_one_in_use
