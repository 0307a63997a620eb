#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Several NTS servers while the daemon runs: a reload (SIGHUP) that changes NTSMaxSources= grows
# and shrinks the set of sources in use, down to one server as with one NTS= entry and back,
# without a new key exchange with a server that stays and never with plain NTP. Real chronyd
# NTS servers, the daemon in observe mode.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus
start_notify_listener

plain=$(free_port)
start_ntp_test_server plain "$plain"

declare -A KE
NAMES=()
# chrony NAME:OFFSET...: a chronyd for each (OFFSET in ns), its key-exchange port in KE[NAME].
chrony() {
        local spec
        for spec; do
                start_chrony_at "${spec%%:*}" "${spec#*:}"
                KE[${spec%%:*}]=$CHRONY_KE
        done
}

# servers NAME:OFFSET...: chrony, and NAMES lists them in that order.
servers() {
        local spec
        chrony "$@"
        NAMES=()
        for spec; do NAMES+=("localhost:${KE[${spec%%:*}]}"); done
}

# settings KEY=VALUE...: NTS= the servers of NAMES, and a plain NTP= server that must never be
# asked (no fallback), with these settings too.
settings() {
        write_nts_conf "$TEST_TMPDIR/ts.conf" "${NAMES[*]}" "NTP=127.0.0.1:$plain" "FallbackNTP=127.0.0.1:$plain" \
                "ConnectionRetrySec=1" "$@"
}

# client: the daemon afresh (no cookie jars), polling every second.
client() {
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
}

stop_all() {
        local d
        stop_timesyncd
        for d in "$TEST_TMPDIR"/chrony-*; do
                stop_chrony "$d"
                rm -rf "$d"
        done
        KE=() NAMES=()
}

# The daemon log from line MARK on (mark_log sets MARK): what it said since.
mark_log() { MARK=$(($(wc -l <"$TIMESYNCD_LOG") + 1)); }
new_log() { tail -n "+$MARK" "$TIMESYNCD_LOG"; }
new_log_has() { new_log | grep -q -- "$1"; }
wait_new_log() {
        wait_for "${2:-10}" new_log_has "$1" || fail "no '$1' in the daemon log within ${2:-10} s of the change"
}

# reload PATTERN: SIGHUP, READY=1 again, and PATTERN in the log since. Marks the log first.
reload() {
        mark_log
        reload_timesyncd
        wait_new_log "$1" 1
}

ke_accepted() { chrony_serverstat "$TEST_TMPDIR/chrony-$1" "NTS-KE connections accepted"; }
packets() { chrony_serverstat "$TEST_TMPDIR/chrony-$1" "Authenticated NTP packets"; }

# assert_ke_count NAME N WHEN: chronyd NAME counted N key exchanges so far.
assert_ke_count() {
        [ "$(ke_accepted "$1")" = "$2" ] || fail "$1 counted $(ke_accepted "$1") key exchanges $3, not $2"
}

nts_status_is() { [ "$(timesync_property NTSStatus)" = "$1" ]; }

n_sources() { sources_json | /usr/bin/python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'; }

# sources_in_use ORIGIN: the names of the sources of that origin (nts, nts-runtime) in Sources
# that run (a stopped one is idle), sorted, on one line.
sources_in_use() {
        sources_json | /usr/bin/python3 -c 'import json, sys
print(" ".join(sorted(s["Name"] for s in json.load(sys.stdin) if s["Origin"] == sys.argv[1] and s["State"] != "idle")))' "$1"
}

# sorted NAME...: the names sorted, on one line (as sources_in_use prints them).
sorted() { printf '%s\n' "$@" | LC_ALL=C sort | paste -sd ' '; }

_packets_grow() {
        local name before=$2
        name=$1
        [ "$(packets "$name")" -gt "$before" ]
}

# assert_polled NAME...: each chronyd NAME gets authenticated requests (3 s to show one).
assert_polled() {
        local name before
        for name; do
                before=$(packets "$name")
                wait_for 3 _packets_grow "$name" "$before" || fail "$name is not polled"
        done
}

# assert_not_polled NAME...: no chronyd NAME gets a request during 3 s (after a second for a
# request already out to arrive).
assert_not_polled() {
        local name
        declare -A before
        sleep 1
        for name; do before[$name]=$(packets "$name"); done
        sleep 3
        for name; do
                [ "$(packets "$name")" = "${before[$name]}" ] ||
                        fail "$name is still polled: $(( $(packets "$name") - ${before[$name]} )) requests in 3 s"
        done
}

# assert_nts_only: NTS authenticated on the bus, the plain server never asked, nothing planned
# a step (every server but a liar serves the system's time), the daemon alive.
assert_nts_only() {
        wait_for 10 nts_authenticated_on_bus || fail "NTSAuthenticated is not yes"
        [ "$(timesync_property NTS)" = yes ] || fail "NTS is not yes"
        [ "$(ntp_served plain)" = 0 ] || fail "the plain NTP server got $(ntp_served plain) requests"
        log_has "Selected server 127.0.0.1:$plain" && fail "the plain NTP server was selected"
        log_has "would step the clock" && fail "the daemon would have stepped the clock"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died"
}

# NTSMaxSources=2 of three servers, then 3 by a reload: the third is key-exchanged and joins,
# the two in use resume from the cookies saved when the reload dropped them (no key exchange).
# Then 1: the first server alone, as with one NTS= entry; the others are not polled any more.
# Then 2 again: the first two together, still without a key exchange.
test_reload_changing_nts_max_sources_resizes_the_set_in_use() {
        local name statuses
        servers a:0 b:0 c:0
        settings NTSMaxSources=2
        client
        wait_log "Using 2 NTS servers together" 10
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, 2 of 2 NTS sources agree" 30
        assert_ke_count c 0 "with NTSMaxSources=2"
        [ "$(n_sources)" = 2 ] || fail "Sources does not list 2 sources: $(sources_json)"

        settings NTSMaxSources=3
        reload "Configuration reloaded, servers changed"
        wait_new_log "Using 3 NTS servers together" 5
        wait_new_log "Starting NTS key exchange with localhost:${KE[c]}\." 5
        wait_new_log "3 of 3 NTS sources agree\." 20
        [ "$(n_sources)" = 3 ] || fail "Sources does not list 3 sources: $(sources_json)"
        [ "$(sources_in_use nts)" = "$(sorted "${NAMES[@]}")" ] || fail "not all three servers run: $(sources_json)"
        for name in a b; do
                new_log_has "Resuming NTS with localhost:${KE[$name]}: " ||
                        fail "localhost:${KE[$name]} did not resume from the cookies saved at the reload"
                assert_ke_count "$name" 1 "after NTSMaxSources=3"
        done
        assert_ke_count c 1 "after NTSMaxSources=3"
        assert_polled a b c
        assert_nts_only

        # A change that names no other server leaves the set running; NTSMinAgreeingSources= applies
        # at the next sample.
        settings NTSMaxSources=3 NTSMinAgreeingSources=4
        reload "Configuration reloaded, servers unchanged\."
        wait_new_log "Only 3 of 3 NTS sources agree, 4 needed; clock left alone\." 5
        wait_for 5 nts_status_is "Only 3 of 3 NTS sources agree, 4 needed; clock left alone" ||
                fail "NTSStatus is '$(timesync_property NTSStatus)'"
        new_log_has "Resuming NTS with\|NTS servers together\|Starting NTS key exchange" &&
                fail "a reload that changed no server started the sources again"

        # One server: what the set said is no longer why NTS gives no time, and no STATUS= repeats it.
        statuses=$(notify_statuses | wc -l)
        settings NTSMaxSources=1
        reload "Configuration reloaded, servers changed"
        wait_for 10 nts_authenticated_on_bus || fail "NTSAuthenticated is not yes with NTSMaxSources=1"
        [ "$(timesync_property ServerName)" = "localhost:${KE[a]}" ] ||
                fail "ServerName is '$(timesync_property ServerName)', not the first server"
        [ "$(timesync_property NTSKeyExchangeServer)" = "localhost:${KE[a]}" ] ||
                fail "NTSKeyExchangeServer is '$(timesync_property NTSKeyExchangeServer)'"
        [ "$(n_sources)" = 1 ] || fail "Sources does not list 1 source: $(sources_json)"
        wait_source_field "localhost:${KE[a]}" Verdict selected 5
        assert_not_polled b c
        assert_polled a
        new_log_has "NTS sources agree" && fail "NTSMaxSources=1 still speaks of agreeing sources"
        [ "$(timesync_property NTSStatus)" = "" ] || fail "NTSStatus is '$(timesync_property NTSStatus)' with one server"
        notify_statuses | tail -n "+$((statuses + 1))" | grep "NTS sources agree" &&
                fail "STATUS= still speaks of the set after NTSMaxSources=1"
        new_log_has "NTS servers together" && fail "NTSMaxSources=1 still uses several servers"
        new_log_has "NTS reply from localhost:${KE[b]} verified\|NTS reply from localhost:${KE[c]} verified" &&
                fail "a dropped server still answered after its requests were out"
        for name in a b c; do assert_ke_count "$name" 1 "after NTSMaxSources=1"; done
        assert_nts_only

        settings NTSMaxSources=2
        reload "Configuration reloaded, servers changed"
        wait_new_log "Using 2 NTS servers together" 5
        wait_new_log "2 of 2 NTS sources agree\." 20
        [ "$(n_sources)" = 2 ] || fail "Sources does not list 2 sources: $(sources_json)"
        assert_polled a b
        assert_not_polled c
        for name in a b c; do assert_ke_count "$name" 1 "after NTSMaxSources=2 again"; done
        assert_nts_only
        stop_all
}

run_case test_reload_changing_nts_max_sources_resizes_the_set_in_use
