#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Several NTS servers while the daemon runs: a reload (SIGHUP) that changes NTSMaxSources= grows
# and shrinks the set of sources in use, down to one server as with one NTS= entry and back,
# without a new key exchange with a server that stays and never with plain NTP; runtime NTS
# servers (SetRuntimeNTSServers) are used together instead of NTS=, a liar among them is a
# falseticker, and clearing them brings NTS= back. Real chronyd NTS servers, a liar an hour
# ahead through true-time.so, the daemon in observe mode.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus
start_notify_listener

HOUR=$((3600 * 1000000000))
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
        stop_timesyncd
        stop_chronys
        KE=() NAMES=()
}

# The daemon log from line MARK on (mark_log sets MARK): what it said since.
mark_log() { MARK=$(($(wc -l <"$TIMESYNCD_LOG") + 1)); }
new_log() { tail -n "+$MARK" "$TIMESYNCD_LOG"; }
new_log_has() { new_log | grep_q -- "$1"; }
# log_since LINE: the new lines from the first one that matches LINE on (what the daemon logged
# as it made a change: what came between the mark and the change is no fault).
log_since() { new_log | sed -n "/$1/,\$p"; }

# _nts_status_names_falseticker NAME: NTSStatus is "Falseticker: NAME (+3600.x s)".
_nts_status_names_falseticker() { [[ "$(timesync_property NTSStatus)" == "Falseticker: $1 (+3600."*" s)" ]]; }

# answered_since LINE NAME...: whether one of the servers NAME... had a reply verified since LINE.
answered_since() {
        local line=$1 name
        shift
        for name; do
                log_since "$line" | grep_q -- "NTS reply from localhost:${KE[$name]} verified" && return 0
        done
        return 1
}
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
        local name
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
        log_since "Configuration reloaded" | grep "NTS sources agree" && fail "NTSMaxSources=1 still speaks of agreeing sources"
        [ "$(timesync_property NTSStatus)" = "" ] || fail "NTSStatus is '$(timesync_property NTSStatus)' with one server"
        # What the service manager got since the reload began (RELOADING=1; nothing runs in between).
        tac "$NOTIFY_OUT" | sed '/RELOADING=1/q' | grep "STATUS=.*NTS sources agree" &&
                fail "STATUS= still speaks of the set after NTSMaxSources=1"
        log_since "Configuration reloaded" | grep "NTS servers together" && fail "NTSMaxSources=1 still uses several servers"
        answered_since "Configuration reloaded" b c && fail "a dropped server still answered after the reload"
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

set_runtime_nts_servers() {
        in_systemd_run busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTSServers as "$#" "$@"
}

_verdicts_are() {
        [ "$(sources_json | /usr/bin/python3 -c 'import json, sys
print(sorted(s["Verdict"] for s in json.load(sys.stdin) if s["Origin"] == sys.argv[1]))' "$1")" = "$2" ]
}

# NTS= names two servers; three runtime NTS servers, an hour-ahead liar first, take over: the
# three are used together, the liar a falseticker ("2 of 3 NTS sources agree"), NTS='s servers
# not polled, also across reloads that change NTSMaxSources=. Clearing the runtime list brings
# NTS='s two back, with the keys they had.
test_several_runtime_nts_servers_are_used_together_instead_of_nts() {
        local liar r1 r2 selected name
        servers a:0 b:0
        settings
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, 2 of 2 NTS sources agree" 30
        chrony "liar:$HOUR" r1:0 r2:0
        liar=localhost:${KE[liar]} r1=localhost:${KE[r1]} r2=localhost:${KE[r2]}

        mark_log
        set_runtime_nts_servers "$liar" "$r1" "$r2"
        [ "$(timesync_property RuntimeNTSServers)" = "$liar $r1 $r2" ] ||
                fail "RuntimeNTSServers is '$(timesync_property RuntimeNTSServers)'"
        wait_new_log "Using 3 NTS servers together" 5
        wait_new_log "NTS source $liar is a falseticker: its offset \(+3600\.\|+3599\.99\)[0-9]* s" 20
        wait_new_log "2 of 3 NTS sources agree, 1 falseticker\." 10
        wait_source_field "$liar" Verdict falseticker 5
        wait_for 5 _verdicts_are nts-runtime "['falseticker', 'selected', 'truechimer']" ||
                fail "the runtime sources are not one falseticker, one selected, one truechimer: $(sources_json)"
        [ "$(sources_in_use nts-runtime)" = "$(sorted "$liar" "$r1" "$r2")" ] ||
                fail "not all three runtime servers are in use: $(sources_json)"
        [ -z "$(sources_in_use nts)" ] || fail "NTS='s servers are still in use: $(sources_in_use nts)"
        # Not in use is not broken: "unused", not "unusable".
        _verdicts_are nts "['unused', 'unused']" || fail "NTS='s servers are not 'unused' in Sources: $(sources_json)"
        selected=$(timesync_property ServerName)
        [ "$selected" = "$r1" ] || [ "$selected" = "$r2" ] || fail "ServerName is '$selected', not r1 or r2"
        wait_for 5 grep -q "STATUS=2 of 3 NTS sources agree, 1 falseticker; selected localhost:[0-9]*\." "$NOTIFY_OUT" ||
                fail "STATUS= does not say so: $(last_status)"
        assert_not_polled a b
        assert_polled liar r1 r2
        answered_since "Using 3 NTS servers together" a b &&
                fail "NTS='s servers answered requests while the runtime servers were set"
        assert_nts_only

        # A reload applies NTSMaxSources= to the runtime list, which stays first: with 2, the liar
        # and r1 disagree and the clock is left alone; neither NTS= nor r2 fills in. Back to the
        # default, r2 rejoins with the keys it kept, the liar a falseticker again.
        settings NTSMaxSources=2
        reload "Configuration reloaded, servers changed"
        wait_new_log "Using 2 NTS servers together" 5
        wait_new_log "2 NTS sources disagree by 3600 s; clock left alone\." 10
        [ "$(timesync_property RuntimeNTSServers)" = "$liar $r1 $r2" ] || fail "the runtime servers were lost"
        [ "$(sources_in_use nts-runtime)" = "$(sorted "$liar" "$r1")" ] ||
                fail "not the first two runtime servers in use: $(sources_json)"
        [ -z "$(timesync_property ServerName)" ] || fail "ServerName is '$(timesync_property ServerName)'"
        nts_status_is "2 NTS sources disagree by 3600 s; clock left alone" ||
                fail "NTSStatus is '$(timesync_property NTSStatus)'"
        [ "$(source_field "$r2" Verdict)" = unused ] || fail "r2, left out by the reload, is '$(source_field "$r2" Verdict)'"
        assert_not_polled a b r2

        settings
        reload "Configuration reloaded, servers changed"
        wait_new_log "Using 3 NTS servers together" 5
        wait_new_log "2 of 3 NTS sources agree, 1 falseticker\." 10
        # The liar is named, with its offset.
        wait_for 5 _nts_status_names_falseticker "$liar" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        assert_polled r2
        assert_not_polled a b
        for name in liar r1 r2; do assert_ke_count "$name" 1 "after the reloads"; done
        assert_nts_only

        mark_log
        set_runtime_nts_servers
        [ -z "$(timesync_property RuntimeNTSServers)" ] || fail "RuntimeNTSServers is not empty"
        wait_new_log "Using 2 NTS servers together" 5
        wait_new_log "2 of 2 NTS sources agree\." 20
        [ "$(sources_in_use nts)" = "$(sorted "${NAMES[@]}")" ] ||
                fail "NTS='s servers are not both in use: $(sources_json)"
        selected=$(timesync_property ServerName)
        [ "$selected" = "localhost:${KE[a]}" ] || [ "$selected" = "localhost:${KE[b]}" ] ||
                fail "ServerName is '$selected', not one of NTS='s servers"
        assert_not_polled liar r1 r2
        assert_polled a b
        assert_ke_count a 1 "after the runtime servers went"
        assert_ke_count b 1 "after the runtime servers went"
        new_log_has "Starting NTS key exchange with localhost:${KE[a]}\.\|Starting NTS key exchange with localhost:${KE[b]}\." &&
                fail "NTS='s servers were key-exchanged again"
        assert_nts_only
        stop_all
}

run_case test_reload_changing_nts_max_sources_resizes_the_set_in_use
run_case test_several_runtime_nts_servers_are_used_together_instead_of_nts
