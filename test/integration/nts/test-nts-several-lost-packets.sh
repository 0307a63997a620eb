#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Several NTS servers, an attacker on the path who drops packets: real chronyd NTS servers in a
# network namespace of the test's own, one of them an hour ahead (true-time.so, valid
# certificates of the same CA), nftables in that namespace dropping what the honest ones send.
# The daemon runs on its fake clock (--test-clock-offset=0s), which it steps exactly as it would
# step the real one, in observe mode and without CAP_SYS_TIME. Losing packets stops
# synchronization; it never hands the clock to the server that still answers, and the daemon
# says so in the log, in NTSStatus and in STATUS=. The same rules with more forms of the attack
# (from the start, a turncoat, two liars, spares, a drifting liar) are scenarios in simulated
# time (test/simulation/test-sim-*.sh).
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
command -v nft >/dev/null || missing_prerequisite "nft not installed (package nftables)"
daemon_test_init --certs --bus
start_notify_listener
export NOTIFY_OUT

export HOUR=$((3600 * 1000000000))

# servers NAME:OFFSET...: a chronyd for each (OFFSET in ns), NTS= listing them in that order,
# polled every second. Sets the arrays SERVER_KE and SERVER_NTP (ports by name) and NAMES.
servers() {
        start_chronys "$@"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "${NAMES[*]}" "ConnectionRetrySec=1"
        rm -f "$TEST_TMPDIR"/state/nts-*.jar "$TEST_TMPDIR/runtime/synchronized"
        : >"$TIMESYNCD_LOG"
}

client() {
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s --test-clock-offset=0s
}

# The liar's verified replies go on, and nothing of its time reaches the clock.
assert_liar_never_steers() {
        local liar=localhost:$1 n
        n=$(log_count "NTS reply from $liar verified")
        wait_log_count "NTS reply from $liar verified" $((n + 5)) 20
        log_has "Test clock: stepped" && fail "the test clock was stepped: $(grep 'Test clock: stepped' "$TIMESYNCD_LOG")"
        log_has "the clock by .* after the first synchronization" && fail "the daemon stepped the clock"
        log_has "Selected server $liar " && fail "the liar was selected"
        [ "$(timesync_property ServerName)" != "$liar" ] || fail "ServerName is the liar"
        true
}

# _nts_status_starts TEXT: NTSStatus begins with TEXT.
_nts_status_starts() { [[ "$(timesync_property NTSStatus)" == "$1"* ]]; }

# _nts_status_ends_with TEXT: NTSStatus ends with TEXT.
_nts_status_ends_with() { [[ "$(timesync_property NTSStatus)" == *"$1" ]]; }

# The clock is left alone, and the log, NTSStatus and STATUS= say so: TEXT, " since ...".
assert_left_alone_says() {
        local text=$1
        wait_log "$text\." 40
        [ "$(log_count "$text")" = 1 ] || fail "'$text' was logged $(log_count "$text") times"
        nts_status_is "$text" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        wait_for 5 grep -q "STATUS=$text since [^|]*\." "$NOTIFY_OUT" || fail "STATUS= does not say so: $(last_status)"
        [ -z "$(timesync_property ServerName)" ] || fail "ServerName is '$(timesync_property ServerName)'"
}

# Four servers, one an hour ahead: while all answer it is a falseticker; then the attacker
# drops everything the three honest ones send. The liar keeps answering and never gets the
# clock; when the honest ones are back, the set agrees again.
lost_after_sync_inner() {
        local name n failing
        servers "liar:$HOUR" a:0 b:0 c:0
        client
        wait_log "Initial clock synchronization to localhost:[0-9]* (offset .*, NTS authenticated, 3 of 4 NTS sources agree" 30
        wait_log "NTS source localhost:${SERVER_KE[liar]} is a falseticker" 20

        drop a b c
        for name in a b c; do
                wait_log "NTS source localhost:${SERVER_KE[$name]} fails (no reply); it is tried again, and still counts as in use" 30
        done
        assert_left_alone_says "Only 0 of 4 NTS sources answer and agree, 3 needed (3 do not answer); clock left alone"
        # After its own sentence, NTSStatus names the servers that fail, as while they agree, and
        # STATUS= says the same.
        failing="3 of 4 NTS servers failing: localhost:${SERVER_KE[a]} (no reply), localhost:${SERVER_KE[b]} (no reply), localhost:${SERVER_KE[c]} (no reply)"
        wait_for 10 _nts_status_ends_with "; $failing" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        wait_for 5 grep -qF "; $failing." "$NOTIFY_OUT" || fail "STATUS= does not name them: $(last_status)"
        assert_liar_never_steers "${SERVER_KE[liar]}"
        [ "$(dropped_packets)" -gt 0 ] || fail "nothing was dropped"
        echo "result: 3 honest of 4 silenced after the first synchronization: $(dropped_packets) packets dropped," \
             "the liar's time never used; log: $(grep -m1 'Only 0 of 4' "$TIMESYNCD_LOG" | sed 's/^.*Only/Only/')"

        n=$(log_count "3 of 4 NTS sources agree, 1 falseticker\.")
        undrop
        wait_log_count "3 of 4 NTS sources agree, 1 falseticker\." $((n + 1)) 60
        # Nothing fails; the liar is named, with its offset.
        wait_for 5 _nts_status_starts "Falseticker: localhost:${SERVER_KE[liar]} (+3600." ||
                fail "NTSStatus is '$(timesync_property NTSStatus)' after the return"
        assert_liar_never_steers "${SERVER_KE[liar]}"
        stop_timesyncd
        stop_chronys
}

test_dropped_honest_replies_after_sync_leave_the_clock_alone() { run_in_netns lost_after_sync_inner; }

run_case test_dropped_honest_replies_after_sync_leave_the_clock_alone
