#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon killed with SIGKILL (and stopped with SIGTERM) at bad moments: in the middle of a key exchange with a server
# that accepts and never answers, and over and over right after start, when it loads, spends
# and rewrites its cookie file. On the next start the state must be the old one or the new one,
# never a corrupt one, and the daemon must synchronize. A corrupt file planted in the state
# directory is discarded, not trusted, and does not block synchronization.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs

export KILLS=${KILLS:-24}

kill9_timesyncd() {
        kill -KILL "$TIMESYNCD_PID"
        wait "$TIMESYNCD_PID" 2>/dev/null || true
}

# A jar file is either absent or complete: the header lines, two keys and only whole cookies.
assert_jar_complete() {
        local f=$1
        [ -e "$f" ] || return 0
        { grep -qx 'version=1' "$f" && grep -q '^server=' "$f" && grep -q '^aead=' "$f" &&
                grep -Eq '^c2s=[0-9a-f]{64}$' "$f" && grep -Eq '^s2c=[0-9a-f]{64}$' "$f"; } ||
                fail "incomplete state file after SIGKILL: $(cat "$f")"
        ! grep -Ev '^(#.*|version=1|server=.*|aead=[0-9]+|ke-realtime=[0-9]+|ntp-server=.*|ntp-port=[0-9]+|(c2s|s2c|cookie)=([0-9a-f]{2})+)$' "$f" ||
                fail "a line of the state file is cut short"
}

# Accepts TCP connections on 127.0.0.1:PORT and never says a word (an NTS-KE server stuck
# before its ServerHello). Prints ACCEPTED for each connection.
start_silent_listener() {
        /usr/bin/python3 - "$1" >"$TEST_TMPDIR/silent.log" 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("READY", flush=True)
held = []
end = time.monotonic() + 120
s.settimeout(1)
while time.monotonic() < end:
    try:
        held.append(s.accept()[0])
        print("ACCEPTED", flush=True)
    except socket.timeout:
        pass
PY
        SILENT_PID=$!
        wait_for 5 grep -q READY "$TEST_TMPDIR/silent.log" || fail "silent listener did not start"
}

test_sigkill_in_the_middle_of_a_key_exchange_leaves_no_state_that_blocks_sync() {
        local ke ntp jar
        ke=$(free_port)
        ntp=$(free_port)
        jar=$(nts_jar_file "localhost:$ke")
        start_silent_listener "$ke"
        nts_conf "localhost:$ke"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_for 10 grep -q ACCEPTED "$TEST_TMPDIR/silent.log" || fail "the daemon never connected"
        wait_log "NTS-KE with localhost: connecting to" 10
        kill9_timesyncd
        log_has "NTS key exchange with localhost:$ke .* done" && fail "key exchange finished with a silent server"
        [ ! -e "$jar" ] || fail "a state file exists although no key exchange ever finished"
        stop_daemon "$SILENT_PID"

        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$ntp" "$ke"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$ke")" 30
        assert_jar_complete "$jar"
        stop_daemon "$TIMESYNCD_PID"
        stop_chrony "$TEST_TMPDIR/chrony"
}

test_sigkill_loop_during_cookie_writes_never_corrupts_the_state() {
        local ke ntp jar i delay t0 discarded counts=""
        ke=$(free_port)
        ntp=$(free_port)
        jar=$(nts_jar_file "localhost:$ke")
        : >"$TIMESYNCD_LOG"
        # NTP through a relay that delays each direction by 300 ms: a kill before the reply
        # arrives leaves a spent cookie behind, so the jar runs dry and key exchanges get killed
        # too.
        start_chrony_nts_server "$TEST_TMPDIR/chrony2" "$CERTDIR" "$ntp" "$ke" "ntsntpserver 127.0.0.2"
        start_fault_proxy slow "127.0.0.2:$ntp" "127.0.0.1:$ntp" --delay=300
        nts_conf "localhost:$ke"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$ke")" 30
        kill9_timesyncd

        # Each start loads the jar, spends a cookie (and saves the jar before sending) or runs
        # a key exchange once the jar is empty; kills land anywhere in there, 0 to 595 ms in, mostly before the reply.
        for (( i = 0; i < KILLS; i++ )); do
                delay=$(printf '0.%03d' $(( SRANDOM % 120 * 5 )))
                start_timesyncd "$TEST_TMPDIR/ts.conf"
                sleep "$delay"
                kill9_timesyncd
                assert_jar_complete "$jar"
                counts+=" $(jar_cookies "localhost:$ke")"
        done
        discarded=$(log_count "Discarding NTS state file")
        [ "$discarded" = 0 ] || fail "a state file written before SIGKILL was unreadable: $(grep Discarding "$TIMESYNCD_LOG")"

        t0=$EPOCHREALTIME
        : >"$TIMESYNCD_LOG.final"
        TIMESYNCD_LOG=$TIMESYNCD_LOG.final start_timesyncd "$TEST_TMPDIR/ts.conf"
        TIMESYNCD_LOG=$TIMESYNCD_LOG.final wait_log "$(synced_line "localhost:$ke")" 30
        echo "result: $KILLS kills, $(log_count "Resuming NTS with") starts resumed from the file," \
             "$(chrony_serverstat "$TEST_TMPDIR/chrony2" "NTS-KE connections accepted") key exchanges at the server," \
             "0 unreadable files, cookies left after each kill:$counts; synchronized $(seconds_since "$t0") s after the last start"
        stop_daemon "$TIMESYNCD_PID"
}

# term_timesyncd: SIGTERM, and the daemon must be gone with exit status 0 within 5 s.
term_timesyncd() {
        local t0=$EPOCHREALTIME
        kill -TERM "$TIMESYNCD_PID"
        wait_for 5 bash -c "! kill -0 $TIMESYNCD_PID 2>/dev/null" || fail "the daemon ignored SIGTERM for 5 s"
        stop_timesyncd # reaps it and checks the exit status
        TERM_SECONDS=$(seconds_since "$t0")
}

# SIGTERM where SIGKILL struck above: in a key exchange that hangs, and over and over around
# the cookie writes. Each time a prompt, clean exit (status 0) and a complete file or none.
test_sigterm_in_a_key_exchange_and_around_cookie_writes_exits_cleanly() {
        local ke ntp jar i delay worst=0 counts=""
        ke=$(free_port)
        ntp=$(free_port)
        jar=$(nts_jar_file "localhost:$ke")
        : >"$TIMESYNCD_LOG"
        start_silent_listener "$ke"
        nts_conf "localhost:$ke"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_for 10 grep -q ACCEPTED "$TEST_TMPDIR/silent.log" || fail "the daemon never connected"
        wait_log "NTS-KE with localhost: connecting to" 10
        term_timesyncd
        [ ! -e "$jar" ] || fail "a state file exists although no key exchange ever finished"
        echo "result: SIGTERM in a hanging key exchange: exit 0 after $TERM_SECONDS s, no state file"
        stop_daemon "$SILENT_PID"

        start_chrony_nts_server "$TEST_TMPDIR/chrony4" "$CERTDIR" "$ntp" "$ke" "ntsntpserver 127.0.0.3"
        start_fault_proxy slowterm "127.0.0.3:$ntp" "127.0.0.1:$ntp" --delay=300
        for (( i = 0; i < KILLS / 2; i++ )); do
                delay=$(printf '0.%03d' $(( SRANDOM % 120 * 5 )))
                start_timesyncd "$TEST_TMPDIR/ts.conf"
                sleep "$delay"
                term_timesyncd
                awk -v a="$TERM_SECONDS" -v b="$worst" 'BEGIN { exit !(a > b) }' && worst=$TERM_SECONDS
                assert_jar_complete "$jar"
                counts+=" $(jar_cookies "localhost:$ke")"
        done
        [ "$(log_count "Discarding NTS state file")" = 0 ] || fail "a state file written at SIGTERM was unreadable"
        : >"$TIMESYNCD_LOG.term"
        TIMESYNCD_LOG=$TIMESYNCD_LOG.term start_timesyncd "$TEST_TMPDIR/ts.conf"
        TIMESYNCD_LOG=$TIMESYNCD_LOG.term wait_log "$(synced_line "localhost:$ke")" 30
        echo "result: $((KILLS / 2)) SIGTERMs 0 to 595 ms after start: every exit 0, the slowest after $worst s;" \
             "cookies in the file after each:$counts"
        stop_daemon "$TIMESYNCD_PID"
}

test_corrupt_state_file_is_discarded_and_sync_follows() {
        local ke ntp jar
        ke=$(free_port)
        ntp=$(free_port)
        jar=$(nts_jar_file "localhost:$ke")
        start_chrony_nts_server "$TEST_TMPDIR/chrony3" "$CERTDIR" "$ntp" "$ke"
        printf 'version=1\nserver=localhost:%s\naead=15\nc2s=00ff\ncookie=zz\n' "$ke" >"$jar"
        chmod 0600 "$jar"
        # The daemon's own user (systemd-timesync when it exists) owns its state.
        chown --reference="$TEST_TMPDIR/state" "$jar"
        nts_conf "localhost:$ke"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Discarding NTS state file $jar: malformed" 10
        wait_log "$(synced_line "localhost:$ke")" 30
        assert_jar_complete "$jar"
}

run_case test_sigkill_in_the_middle_of_a_key_exchange_leaves_no_state_that_blocks_sync
run_case test_sigkill_loop_during_cookie_writes_never_corrupts_the_state
run_case test_sigterm_in_a_key_exchange_and_around_cookie_writes_exits_cleanly
run_case test_corrupt_state_file_is_discarded_and_sync_follows
