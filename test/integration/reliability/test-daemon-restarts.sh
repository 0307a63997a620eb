#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon killed with SIGKILL (and stopped with SIGTERM) at bad moments: in the middle of a key
# exchange with a server that accepts and never answers, and over and over around the two writes
# of its cookie file (its removal when a start loads it, its write at a clean stop). On the next
# start the state must be the old one or the new one, never a corrupt one, no cookie may reach
# the server twice (the mock NTS server counts them), and the daemon must synchronize. What an
# unclean stop costs: one key exchange, no more. A corrupt file planted in the state directory
# is discarded, not trusted, and does not block synchronization.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs

export KILLS=${KILLS:-24}

kill9_timesyncd() {
        kill -KILL "$TIMESYNCD_PID" 2>/dev/null || true
        wait "$TIMESYNCD_PID" 2>/dev/null || true
}

# assert_no_cookie_twice NAME: the mock NTS server started as NAME received no cookie twice.
assert_no_cookie_twice() {
        [ "$(mock_count "$1" cookies_reused)" = 0 ] ||
                fail "the server received a cookie twice: $(grep -m 3 'received again' "$TEST_TMPDIR/mock-$1.log")"
}

# start_slow_mock NAME ADDRESS: the mock NTS server, its NTP through a relay on ADDRESS that
# delays each direction by 300 ms (its Server record names ADDRESS): a kill before the reply
# arrives leaves a spent cookie behind, so the jar runs dry and key exchanges get killed too.
start_slow_mock() {
        start_nts_mock "$1" --ntp-server="$2"
        start_fault_proxy "$1" "$2:$MOCK_NTP" "127.0.0.1:$MOCK_NTP" --delay=300
}

# A jar file is either absent or complete: the header lines (with the key-exchange server's
# address, port and key hash), two keys (AES-SIV-CMAC-256, -384 or -512) and only whole
# cookies.
assert_jar_complete() {
        local f=$1
        [ -e "$f" ] || return 0
        { grep -qx 'version=1' "$f" && grep -q '^server=' "$f" && grep -q '^aead=' "$f" &&
                grep -Eq '^c2s=([0-9a-f]{64}|[0-9a-f]{96}|[0-9a-f]{128})$' "$f" &&
                grep -Eq '^s2c=([0-9a-f]{64}|[0-9a-f]{96}|[0-9a-f]{128})$' "$f"; } ||
                fail "incomplete state file after SIGKILL: $(cat "$f")"
        ! grep -Ev '^(#.*|version=1|server=.*|aead=[0-9]+|ke-realtime=[0-9]+|ntp-server=.*|ntp-port=[0-9]+|ke-address=[0-9a-f.:]+|ke-port=[0-9]+|ke-key-sha256=[0-9a-f]{64}|trust-sha256=[0-9a-f]{64}|ke-sha256=[0-9a-f]{64}|(c2s|s2c|cookie)=([0-9a-f]{2})+)$' "$f" ||
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

# Each start loads the file and removes it before a cookie of it goes, or runs a key exchange
# once there is none; every other round stops cleanly (SIGTERM: the cookies are written), and
# SIGKILL follows 0 to 20 ms later, inside that write or after it; the other rounds end with
# SIGKILL alone, 0 to 595 ms after the start, anywhere around the removal, the key exchange and
# the requests.
test_kills_around_the_state_file_writes_never_corrupt_it_nor_send_a_cookie_twice() {
        local jar i t0 discarded counts=""
        : >"$TIMESYNCD_LOG"
        start_slow_mock kills 127.0.0.2
        jar=$(nts_jar_file "localhost:$MOCK_KE")
        nts_conf "localhost:$MOCK_KE"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        stop_timesyncd

        for (( i = 0; i < KILLS; i++ )); do
                start_timesyncd "$TEST_TMPDIR/ts.conf"
                sleep "$(printf '0.%03d' $(( SRANDOM % 120 * 5 )))"
                if (( i % 2 )); then
                        kill -TERM "$TIMESYNCD_PID" 2>/dev/null || true
                        sleep "$(printf '0.%03d' $(( SRANDOM % 21 )))"
                fi
                kill9_timesyncd
                assert_jar_complete "$jar"
                counts+=" $(jar_cookies "localhost:$MOCK_KE")"
        done
        discarded=$(log_count "Discarding NTS state file")
        [ "$discarded" = 0 ] || fail "a state file written before SIGKILL was unreadable: $(grep Discarding "$TIMESYNCD_LOG")"

        t0=$EPOCHREALTIME
        : >"$TIMESYNCD_LOG.final"
        TIMESYNCD_LOG=$TIMESYNCD_LOG.final start_timesyncd "$TEST_TMPDIR/ts.conf"
        TIMESYNCD_LOG=$TIMESYNCD_LOG.final wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        stop_timesyncd
        assert_no_cookie_twice kills
        echo "result: $KILLS kills, $(log_count "Resuming NTS with") starts resumed from the file," \
             "$(mock_count kills ke_sessions) key exchanges and $(mock_count kills cookies_seen) cookies at the server, 0 received twice," \
             "0 unreadable files, cookies in the file after each kill:$counts; synchronized $(seconds_since "$t0") s after the last start"
}

# replies_at_least NAME N: the mock started as NAME answered N requests.
replies_at_least() { [ "$(mock_count "$1" ntp_requests)" -ge "$2" ]; }

# What a crash costs: a clean restart resumes from the file without a key exchange; after
# SIGKILL the next start finds no file (the start before removed it) and runs exactly one key
# exchange, and no cookie ever reaches the server twice.
test_unclean_stop_costs_one_key_exchange_and_never_a_cookie_twice() {
        local jar ke_clean ke_killed n
        : >"$TIMESYNCD_LOG"
        start_nts_mock unclean
        jar=$(nts_jar_file "localhost:$MOCK_KE")
        nts_conf "localhost:$MOCK_KE"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=200ms
        wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        wait_for 10 replies_at_least unclean 3 || fail "fewer than 3 replies"
        stop_timesyncd
        [ "$(jar_cookies "localhost:$MOCK_KE")" -ge 7 ] || fail "the clean stop saved $(jar_cookies "localhost:$MOCK_KE") cookies"

        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=200ms
        wait_log "Resuming NTS with localhost:$MOCK_KE: [78] cookies from $jar, no key exchange needed" 10
        n=$(mock_count unclean ntp_requests)
        wait_for 10 replies_at_least unclean $((n + 3)) || fail "fewer than 3 replies after the clean restart"
        ke_clean=$(mock_count unclean ke_sessions)
        [ "$ke_clean" = 1 ] || fail "the clean restart cost a key exchange ($ke_clean in all)"
        [ ! -e "$jar" ] || fail "the state file is still there while its cookies are in use"
        kill9_timesyncd
        [ ! -e "$jar" ] || fail "a state file is there after SIGKILL: its cookies may have been sent"

        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=200ms
        wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        n=$(mock_count unclean ntp_requests)
        wait_for 10 replies_at_least unclean $((n + 3)) || fail "fewer than 3 replies after the unclean restart"
        log_has "Resuming NTS" && fail "the start after SIGKILL resumed from a file"
        ke_killed=$(( $(mock_count unclean ke_sessions) - ke_clean ))
        [ "$ke_killed" = 1 ] || fail "the start after SIGKILL cost $ke_killed key exchanges, expected 1"
        stop_timesyncd
        assert_no_cookie_twice unclean
        echo "result: clean restart: 0 key exchanges; restart after SIGKILL: $ke_killed key exchange;" \
             "$(mock_count unclean cookies_seen) cookies at the server, 0 received twice"
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
        local ke jar i delay worst=0 counts=""
        ke=$(free_port)
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

        start_slow_mock term 127.0.0.3
        jar=$(nts_jar_file "localhost:$MOCK_KE")
        nts_conf "localhost:$MOCK_KE"
        for (( i = 0; i < KILLS / 2; i++ )); do
                delay=$(printf '0.%03d' $(( SRANDOM % 120 * 5 )))
                start_timesyncd "$TEST_TMPDIR/ts.conf"
                sleep "$delay"
                term_timesyncd
                awk -v a="$TERM_SECONDS" -v b="$worst" 'BEGIN { exit !(a > b) }' && worst=$TERM_SECONDS
                assert_jar_complete "$jar"
                counts+=" $(jar_cookies "localhost:$MOCK_KE")"
        done
        [ "$(log_count "Discarding NTS state file")" = 0 ] || fail "a state file written at SIGTERM was unreadable"
        : >"$TIMESYNCD_LOG.term"
        TIMESYNCD_LOG=$TIMESYNCD_LOG.term start_timesyncd "$TEST_TMPDIR/ts.conf"
        TIMESYNCD_LOG=$TIMESYNCD_LOG.term wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        stop_timesyncd
        assert_no_cookie_twice term
        echo "result: $((KILLS / 2)) SIGTERMs 0 to 595 ms after start: every exit 0, the slowest after $worst s;" \
             "$(mock_count term ke_sessions) key exchanges at the server, 0 cookies received twice;" \
             "cookies in the file after each:$counts"
}

# SIGTERM at the earliest moment start_timesyncd allows (the daemon blocks SIGTERM: from then
# on it must handle it), KILLS times in a row, with and without a key exchange under way: every
# exit is status 0, never 143 (killed by the signal's default action).
test_sigterm_the_moment_the_daemon_starts_exits_cleanly() {
        local i rc
        start_slow_mock early 127.0.0.4
        nts_conf "localhost:$MOCK_KE"
        for (( i = 0; i < KILLS; i++ )); do
                start_timesyncd "$TEST_TMPDIR/ts.conf"
                kill -TERM "$TIMESYNCD_PID"
                rc=0
                wait "$TIMESYNCD_PID" 2>/dev/null || rc=$?
                [ "$rc" = 0 ] || fail "SIGTERM $((i + 1)) right after the start: exit status $rc"
        done
        echo "result: $KILLS SIGTERMs the moment the daemon blocked them: every exit 0"
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
run_case test_kills_around_the_state_file_writes_never_corrupt_it_nor_send_a_cookie_twice
run_case test_unclean_stop_costs_one_key_exchange_and_never_a_cookie_twice
run_case test_sigterm_in_a_key_exchange_and_around_cookie_writes_exits_cleanly
run_case test_sigterm_the_moment_the_daemon_starts_exits_cleanly
run_case test_corrupt_state_file_is_discarded_and_sync_follows
