#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTSRequired=yes: no unauthenticated time, from any plain server (NTP=, FallbackNTP=, per-link,
# runtime NTP servers), also while no NTS server is configured at all; the reason in the log
# (once), in NTSStatus and in STATUS=; it holds across a reload and lets runtime NTS servers
# work. It comes from a drop-in, as a distribution would ship it: the daemon reads the
# standard search of a private root (use_config_root), with networkd's state there giving a
# per-link server. Every plain server is an ntp-test-server that counts what it gets; the
# compiled-in fallback (the Debian pool) is always replaced by one of them.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus

start_nts_peer
ke=$NTS_PEER_KE_PORT srv=$NTS_PEER_DIR
# The ports of the four plain servers, set by printf -v.
declare port_plain port_fallback port_link port_runtime
for s in plain fallback link runtime; do
        port=$(free_port)
        printf -v "port_$s" '%s' "$port"
        start_ntp_test_server "$s" "$port"
done

root=$TEST_TMPDIR/root
use_config_root "$root"
main=$root/etc/systemd/timesyncd.conf
required=$root/usr/lib/systemd/timesyncd.conf.d/50-nts-required.conf
mkdir -p "$(dirname "$required")"
# networkd's state: one link server.
mkdir -p "$root/run/systemd/netif"
printf 'OPER_STATE=routable\nNTP=127.0.0.1:%s\n' "$port_link" >"$root/run/systemd/netif/state"
chmod -R a+rX "$root"

start_notify_listener

missing="NTSRequired=yes but no NTS server is configured"

# start: the daemon on the private root, polling every second, so that a daemon that used a
# plain server would send it something within any of the waits below.
start() {
        restart_fresh_timesyncd "" --test-poll-interval=1s
}

plain_servers=(plain fallback link runtime)

nts_status_is() { [ "$(timesync_property NTSStatus 2>/dev/null)" = "$1" ]; }

call() {
        in_systemd_run busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager "$@"
}

# The control: without NTSRequired=, the same root gives time from the link server (it comes
# before the fallback server), so the counters below can see a daemon that falls back.
test_without_nts_required_the_link_server_is_used() {
        write_conf "$main" "FallbackNTP=127.0.0.1:$port_fallback" "NTSTrustedCertificates=$CERTDIR/ca.pem" \
                "ConnectionRetrySec=1"
        start
        wait_log "Initial clock synchronization to 127.0.0.1:$port_link"
        [ "$(ntp_served link)" -ge 1 ] || fail "the link server got nothing"
        [ "$(timesync_property LinkNTPServers)" = "127.0.0.1:$port_link" ] || fail "LinkNTPServers is wrong"
}

# A reload that brings the drop-in, and nothing else, stops plain NTP at once.
test_nts_required_dropin_on_reload_stops_every_plain_server() {
        write_conf "$required" "NTSRequired=yes"
        reload_timesyncd
        # The reload is done (the reason was logged before READY=1): from here on, nothing.
        mark_ntp_served "${plain_servers[@]}"
        cp "$TIMESYNCD_LOG" "$TEST_TMPDIR/reload.log"
        : >"$TIMESYNCD_LOG"
        sleep 3
        assert_plain_servers_unused "${plain_servers[@]}"
        grep -q "$missing" "$TEST_TMPDIR/reload.log" || fail "no '$missing' in the log after the reload"
        nts_status_is "$missing" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        [ "$(timesync_property NTS)" = yes ] || fail "NTS is not yes"
        [ -z "$(timesync_property ServerName)" ] || fail "ServerName is '$(timesync_property ServerName)'"
}

# From the start, with no NTS server at all: not one packet to any plain server, also after
# SetRuntimeNTPServers; the reason logged once, on the bus and in STATUS=.
test_nts_required_without_nts_servers_sends_nothing_to_any_plain_server() {
        write_conf "$main" "NTP=127.0.0.1:$port_plain" "FallbackNTP=127.0.0.1:$port_fallback" \
                "NTSTrustedCertificates=$CERTDIR/ca.pem" "ConnectionRetrySec=1"
        mark_ntp_served "${plain_servers[@]}"
        start
        # Time for three stall checks (ConnectionRetrySec=1) and three polls.
        sleep 3
        assert_plain_servers_unused "${plain_servers[@]}"
        call SetRuntimeNTPServers as 1 "127.0.0.1:$port_runtime"
        [ "$(timesync_property RuntimeNTPServers)" = "127.0.0.1:$port_runtime" ] || fail "runtime server not set"
        sleep 3
        assert_plain_servers_unused "${plain_servers[@]}"
        [ "$(ntp_served plain)" = 0 ] || fail "the NTP= server got $(ntp_served plain) packets"
        [ "$(ntp_served runtime)" = 0 ] || fail "the runtime NTP server got $(ntp_served runtime) packets"
        log_has "$missing: the clock is not synchronized" || fail "no '$missing' in the log"
        nts_status_is "$missing" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        [ "$(log_count "$missing")" = 1 ] || fail "'$missing' logged $(log_count "$missing") times, expected once"
        [ "$(last_status)" = "$missing." ] || fail "STATUS= is '$(last_status)'"
        [ "$(chrony_serverstat "$srv" "NTS-KE connections accepted")" = 0 ] || fail "chronyd saw a key exchange"
}

# Runtime NTS servers: NTS proceeds, and the reason goes away at once (not only once a key
# exchange succeeded); removed again, it comes back.
test_runtime_nts_servers_proceed_and_their_removal_says_why_again() {
        local stall
        mark_ntp_served "${plain_servers[@]}"
        stall=$(free_port)
        start_stalling_listener "$stall"
        call SetRuntimeNTSServers as 1 "localhost:$stall"
        wait_for 10 grep -q ACCEPTED "$TEST_TMPDIR/stall.log" || fail "no key exchange with the runtime server"
        nts_status_is "" || fail "NTSStatus is '$(timesync_property NTSStatus)' while a key exchange runs"
        call SetRuntimeNTSServers as 1 "localhost:$ke"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated" 20
        nts_status_is "" || fail "NTSStatus is still '$(timesync_property NTSStatus)'"
        [ "$(timesync_property NTSAuthenticated)" = yes ] || fail "NTSAuthenticated is not yes"
        call SetRuntimeNTSServers as 0
        wait_for 10 nts_status_is "$missing" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        [ "$(log_count "$missing")" = 2 ] || fail "'$missing' logged $(log_count "$missing") times, expected twice"
        sleep 2
        assert_ntp_servers_unused "${plain_servers[@]}"
}

# The mistake NTSRequired= is for: a mistyped NTS= key in one file, NTSRequired=yes in a
# vendor drop-in. "Unknown key" naming NTS=, the reason, and never the fallback (standing in for
# the pool).
test_mistyped_nts_key_with_nts_required_never_uses_the_fallback() {
        mark_ntp_served "${plain_servers[@]}"
        write_conf "$main" "NTSServers=localhost:$ke" "FallbackNTP=127.0.0.1:$port_fallback" \
                "NTSTrustedCertificates=$CERTDIR/ca.pem" "ConnectionRetrySec=1"
        rm -f "$root/run/systemd/netif/state"
        start
        sleep 3
        assert_plain_servers_unused "${plain_servers[@]}"
        [ "$(ntp_served fallback)" = 0 ] || fail "the FallbackNTP= server got $(ntp_served fallback) packets"
        # Line 3: write_conf's FallbackNTS= is line 2.
        log_has "timesyncd.conf:3: Unknown key name 'NTSServers' in section 'Time' looks like an NTS setting (did you mean NTS=?)" ||
                fail "no 'Unknown key' error for NTSServers="
        log_has "Unknown key NTSServers= (did you mean NTS=?) in the configuration: the clock is not synchronized" ||
                fail "no reason in the log"
        [ "$(timesync_property FallbackNTPServers)" = "127.0.0.1:$port_fallback" ] || fail "FallbackNTPServers is wrong"
        stop_timesyncd
}

# A mistyped value fails closed as a mistyped key does: NTSRequired=ture reads as yes, said with
# file and line, in NTSStatus and in STATUS=; not one packet to a plain server (before, it read
# as no and the daemon synchronized over plain NTP).
test_mistyped_nts_required_value_never_uses_plain_ntp() {
        local why="NTSRequired=ture is not a boolean"
        mark_ntp_served "${plain_servers[@]}"
        rm -f "$required"
        write_conf "$main" "NTSRequired=ture" "NTP=127.0.0.1:$port_plain" "FallbackNTP=127.0.0.1:$port_fallback" \
                "ConnectionRetrySec=1"
        start
        sleep 3
        assert_plain_servers_unused "${plain_servers[@]}"
        [ "$(ntp_served plain)" = 0 ] || fail "the NTP= server got $(ntp_served plain) packets"
        log_has "timesyncd.conf:3: $why (yes or no): using yes, and time comes only from NTS servers" ||
                fail "no error for NTSRequired=ture"
        log_has "$why in the configuration: the clock is not synchronized" || fail "no reason in the log"
        nts_status_is "$why: no NTS server" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        [ "$(last_status)" = "$why: no NTS server, not synchronizing." ] || fail "STATUS= is '$(last_status)'"
        stop_timesyncd
}

run_case test_without_nts_required_the_link_server_is_used
run_case test_nts_required_dropin_on_reload_stops_every_plain_server
run_case test_nts_required_without_nts_servers_sends_nothing_to_any_plain_server
run_case test_runtime_nts_servers_proceed_and_their_removal_says_why_again
run_case test_mistyped_nts_key_with_nts_required_never_uses_the_fallback
run_case test_mistyped_nts_required_value_never_uses_plain_ntp
