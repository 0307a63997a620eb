#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTS against a real chronyd 4.3 on loopback: authenticated synchronization, the NTS D-Bus
# properties seen by Debian's timedatectl, libssl loaded only when NTS is configured, cookies
# that survive a restart (and state files that must not be trusted), the Server/Port records
# of the key exchange, and NTS servers set at runtime over D-Bus.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus

start_nts_peer
ntp=$NTS_PEER_NTP_PORT ke=$NTS_PEER_KE_PORT srv=$NTS_PEER_DIR
conf=$TEST_TMPDIR/ts.conf
write_nts_conf "$conf" "localhost:$ke" "PollIntervalMinSec=16"

ke_accepted() { chrony_serverstat "$1" "NTS-KE connections accepted"; }
served_at_least() { [ "$(chrony_serverstat "$srv" "NTP packets received")" -ge "$1" ]; }

maps_have_libssl() { grep -Eq '/libssl\.so|/libcrypto\.so' "/proc/$1/maps"; }

test_nts_sync_with_chronyd_is_authenticated_and_shown_on_dbus() {
        start_timesyncd "$conf"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        log_has "Contacted time server 127.0.0.1:$ntp (localhost:$ke), NTS authenticated\." ||
                fail "the 'Contacted time server' line does not say NTS authenticated"
        # chronyd 4.3 answers AES-SIV-CMAC-256 whatever the client prefers.
        assert_nts_on_bus "localhost:$ke" AEAD_AES_SIV_CMAC_256 "chronyd 4.3, NTS-KE localhost:$ke"
        [ "$(timesync_property SystemNTSServers)" = "localhost:$ke" ] || fail "SystemNTSServers is not localhost:$ke"
        [ "$(chrony_serverstat "$srv" "Authenticated NTP packets")" -ge 1 ] ||
                fail "chronyd counted no authenticated NTP packet"
}

test_libssl_is_mapped_after_nts_key_exchange() {
        maps_have_libssl "$TIMESYNCD_PID" || fail "no libssl/libcrypto in /proc/$TIMESYNCD_PID/maps after the key exchange"
}

# The cookies are written at a clean stop, to a file only the daemon's user may read.
test_state_file_is_written_private_at_a_clean_stop() {
        local jar mode
        jar=$(nts_jar_file "localhost:$ke")
        [ ! -e "$jar" ] || fail "a state file $jar while the daemon runs: it lists cookies it may send"
        stop_timesyncd
        [ -f "$jar" ] || fail "no NTS state file $jar after a clean stop"
        mode=$(stat -c %a "$jar")
        [ "$mode" = 600 ] || fail "NTS state file $jar has mode $mode, not 600"
}

test_restart_resumes_with_saved_cookies_without_key_exchange() {
        local before
        before=$(ke_accepted "$srv")
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$conf"
        wait_log "Resuming NTS with localhost:$ke: [1-8] cookies from .*, no key exchange needed"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        log_has "Starting NTS key exchange" && fail "a key exchange ran although cookies were saved"
        [ "$(ke_accepted "$srv")" = "$before" ] || fail "chronyd accepted a new NTS-KE connection after the restart"
        [ ! -e "$(nts_jar_file "localhost:$ke")" ] || fail "the state file is still there while its cookies are in use"
}

# restart_with_state CONTENT_FILE: restart the daemon with CONTENT_FILE as its state file.
restart_with_state() {
        local jar
        jar=$(nts_jar_file "localhost:$ke")
        ! pid_alive "$TIMESYNCD_PID" || stop_timesyncd
        cp "$1" "$jar"
        chown --reference="$TEST_TMPDIR/state" "$jar"
        chmod 0600 "$jar"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$conf"
}

# Keys saved almost NTS_JAR_MAX_AGE_USEC (7 days) ago: loaded and used, then renewed by a new key
# exchange while the daemon runs, at a random time in the last day before that limit
# (timesyncd-backoff), which is the 3 s left here.
test_keys_older_than_seven_days_are_renewed_while_running() {
        local jar before ke_time
        jar=$(nts_jar_file "localhost:$ke")
        ! pid_alive "$TIMESYNCD_PID" || stop_timesyncd
        [ -s "$jar" ] || fail "no state file to age"
        ke_time=$(( $(date +%s%6N) - 7 * 86400 * 1000000 + 3000000 ))
        sed "s/^ke-realtime=.*/ke-realtime=$ke_time/" "$jar" >"$TEST_TMPDIR/aged.jar"
        before=$(ke_accepted "$srv")
        cp "$TEST_TMPDIR/aged.jar" "$jar"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$conf" --test-poll-interval=500ms
        wait_log "Resuming NTS with localhost:$ke: [1-8] cookies from .*, no key exchange needed"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        # Renewed at a random time in the last day before the limit: here within the 3 s left,
        # on the client's renewal timer while the keys serve the polls (every 0.5 s). The age
        # is logged to the minute: "1w old" for a time drawn close to the limit.
        wait_log "Renewing the NTS keys of localhost:$ke, \(6d 23h 59min\|1w\) old: a new key exchange at a random time in the last 1d before their limit of 1w\." 10
        wait_log "NTS key exchange with localhost:$ke (.*) done" 10
        [ "$(ke_accepted "$srv")" = $((before + 1)) ] || fail "chronyd counted $(ke_accepted "$srv") key exchanges, expected $((before + 1))"
        wait_for 10 bash -c "sed -n '/NTS key exchange with localhost:$ke (.*) done/,\$p' '$TIMESYNCD_LOG' | grep -q 'NTP reply from'" ||
                fail "no reply used after the new key exchange"
        log_has "more than 1w old" && fail "the keys were used up to their limit, not renewed before it"
        stop_timesyncd
        grep -q "^ke-realtime=$ke_time\$" "$jar" && fail "the state file still holds the old keys"
        start_timesyncd "$conf"
}

test_garbage_state_file_is_discarded_and_key_exchange_runs() {
        local before
        head -c 600 /dev/urandom | base64 >"$TEST_TMPDIR/garbage"
        before=$(ke_accepted "$srv")
        restart_with_state "$TEST_TMPDIR/garbage"
        wait_log "Discarding NTS state file .*nts-localhost_$ke.jar: malformed"
        wait_log "NTS key exchange with localhost:$ke (.*) done"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        log_has "Resuming NTS" && fail "a garbage state file was used"
        [ "$(ke_accepted "$srv")" -gt "$before" ] || fail "chronyd saw no new NTS-KE connection"
}

test_state_file_of_another_server_is_discarded() {
        local ntp2 ke2 before
        ntp2=$(free_port)
        ke2=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony-other" "$CERTDIR" "$ntp2" "$ke2"
        # Valid cookies and keys, but for localhost:$ke2: the file names its server.
        stop_timesyncd
        write_nts_conf "$TEST_TMPDIR/other.conf" "localhost:$ke2"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/other.conf"
        wait_log "Initial clock synchronization to localhost:$ke2 (offset .*, NTS authenticated"
        stop_timesyncd
        cp "$(nts_jar_file "localhost:$ke2")" "$TEST_TMPDIR/other-server.jar"

        before=$(ke_accepted "$srv")
        restart_with_state "$TEST_TMPDIR/other-server.jar"
        wait_log "Discarding NTS state file .*nts-localhost_$ke.jar: malformed"
        wait_log "NTS key exchange with localhost:$ke (.*) done"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        log_has "Resuming NTS" && fail "the state file of another server was used"
        [ "$(ke_accepted "$srv")" -gt "$before" ] || fail "chronyd saw no new NTS-KE connection"
        stop_chrony "$TEST_TMPDIR/chrony-other"
}

# The KE server is reached over ::1 only, and its Server record sends NTP to 127.0.0.1: an
# address the daemon can only have from the record. The NTP port likewise only from the Port
# record (chronyd sends one for any port but 123).
test_negotiated_ntp_server_and_port_are_used() {
        local ntp3 ke3
        ntp3=$(free_port)
        ke3=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony-negotiate" "$CERTDIR" "$ntp3" "$ke3" "ntsntpserver 127.0.0.1"
        stop_timesyncd
        write_nts_conf "$TEST_TMPDIR/negotiate.conf" "[::1]:$ke3"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/negotiate.conf"
        wait_log "NTS key exchange with \[::1\]:$ke3 (\[::1\]:$ke3) done: .* NTP server 127.0.0.1 port $ntp3\."
        wait_log "Contacted time server 127.0.0.1:$ntp3 (\[::1\]:$ke3)"
        wait_log "Initial clock synchronization to \[::1\]:$ke3 (offset .*, NTS authenticated"
        [ "$(chrony_serverstat "$TEST_TMPDIR/chrony-negotiate" "Authenticated NTP packets")" -ge 1 ] ||
                fail "chronyd counted no authenticated NTP packet"
}

# Cookies saved before the server changed its keys (chronyd restarted without its ntskeys
# file while the daemon was down) are refused: one NAK, then at once a key exchange, no backoff.
test_saved_cookies_refused_after_server_key_change_lead_to_key_exchange() {
        pid_alive "$TIMESYNCD_PID" && stop_timesyncd
        stop_chrony "$srv"
        rm -f "$srv/ntskeys"
        start_chrony_nts_server "$srv" "$CERTDIR" "$ntp" "$ke"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$conf"
        wait_log "Resuming NTS with localhost:$ke"
        wait_log "NTS server localhost:$ke refused our cookie (NTSN), running a new key exchange"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        log_has "NTS key exchange with .* failed" && fail "the refusal of saved cookies was taken for a failure"
        [ "$(ke_accepted "$srv")" = 1 ] || fail "chronyd did not see exactly one key exchange"
}

test_libssl_is_not_mapped_without_nts_servers() {
        pid_alive "$TIMESYNCD_PID" && stop_timesyncd
        write_conf "$TEST_TMPDIR/plain.conf" "NTP=127.0.0.1:$ntp" "NTSTrustedCertificates=$CERTDIR/ca.pem" \
                "PollIntervalMinSec=16"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/plain.conf"
        wait_log "Initial clock synchronization to 127.0.0.1:$ntp"
        log_has "NTS authenticated" && fail "a plain NTP server counted as NTS authenticated"
        ! maps_have_libssl "$TIMESYNCD_PID" || fail "libssl/libcrypto mapped although no NTS server is configured"
        [ "$(timesync_property NTS)" = no ] || fail "NTS property is not no without NTS servers"
}

# Continues the daemon of the case before: plain NTP, then NTS servers set over D-Bus.
test_runtime_nts_servers_replace_ntp_and_load_libssl() {
        rm -f "$(nts_jar_file "localhost:$ke")"
        in_systemd_run busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTSServers as 1 "localhost:$ke"
        wait_log "NTS key exchange with localhost:$ke (.*) done"
        wait_for 10 nts_authenticated_on_bus || fail "NTSAuthenticated never became yes on the bus"
        [ "$(timesync_property RuntimeNTSServers)" = "localhost:$ke" ] || fail "RuntimeNTSServers is not localhost:$ke"
        [ "$(timesync_property ServerName)" = "localhost:$ke" ] || fail "ServerName is not localhost:$ke"
        maps_have_libssl "$TIMESYNCD_PID" || fail "no libssl/libcrypto in /proc/$TIMESYNCD_PID/maps after the key exchange"
}

# Continues the daemon of the case before. A key exchange hangs (a TCP listener that accepts
# and never answers) when the runtime NTS servers are switched back: the new server takes over
# at once, the hanging connection is closed, and the old server's exchange never comes back.
test_runtime_servers_switched_during_a_key_exchange_take_over() {
        local stall before
        stall=$(free_port)
        start_stalling_listener "$stall"
        in_systemd_run busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTSServers as 1 "localhost:$stall"
        wait_for 10 grep -q ACCEPTED "$TEST_TMPDIR/stall.log" || fail "no key exchange with the stalling server"
        before=$(log_count "NTP reply from")
        in_systemd_run busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTSServers as 1 "localhost:$ke"
        wait_for 5 grep -q CLOSED "$TEST_TMPDIR/stall.log" || fail "the abandoned key exchange was not closed"
        wait_log_count "NTP reply from" $((before + 1)) 20
        [ "$(timesync_property ServerName)" = "localhost:$ke" ] || fail "ServerName is not localhost:$ke"
        log_has "NTS key exchange with localhost:$stall failed" && fail "the abandoned key exchange came back"
        return 0
}

# No write per request: file system calls and syncs of the running daemon, traced by strace
# over 30 polls after the first synchronization, touch nothing in the state directory, neither
# the cookie jar nor the clock file (that one at the first synchronization, then by its own
# timer, SaveIntervalSec=, 60 s); at a clean stop every unspent cookie is written.
test_state_file_is_not_written_per_request_but_whole_at_stop() {
        local jar tracer sends writes cookies
        command -v strace >/dev/null || missing_prerequisite "strace not installed (package strace)"
        ! pid_alive "$TIMESYNCD_PID" || stop_timesyncd
        jar=$(nts_jar_file "localhost:$ke")
        rm -f "$jar"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$conf" --test-poll-interval=100ms
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        strace -qq -e trace=%file,sendto,fsync,fdatasync,sync,syncfs -o "$TEST_TMPDIR/writes.strace" -p "$TIMESYNCD_PID" &
        tracer=$!
        sleep 0.5 # strace attached
        wait_log_count "NTP reply from" 30 20
        kill -INT "$tracer"
        wait "$tracer" 2>/dev/null || true
        # NTP requests: sendto() with a destination; the bus and sd_notify use sendmsg().
        sends=$(grep -c '^sendto(' "$TEST_TMPDIR/writes.strace" || true)
        writes=$(grep -E "$TEST_TMPDIR/state|^f(data)?sync\(|^sync" "$TEST_TMPDIR/writes.strace" || true)
        [ "$sends" -ge 12 ] || fail "only $sends requests traced"
        [ -z "$writes" ] || fail "the state directory was written while polling: $writes"
        stop_timesyncd
        cookies=$(grep -c '^cookie=' "$jar" || true)
        [ "$cookies" -ge 7 ] || fail "$cookies cookies in the state file after a clean stop, expected 7 or 8"
        echo "result: no system call on the state directory over $sends requests; $cookies cookies saved at stop"
}

# _ntpmsg_signals_at_least N: the monitor has written N NTPMessage signals or more.
_ntpmsg_signals_at_least() {
        [ "$(grep -c 'STRING "NTPMessage"' "$TEST_TMPDIR/signals.txt" || true)" -ge "$1" ]
}

# One PropertiesChanged signal per poll, sent with the reply: NTPMessage every time, the
# properties that did not change (poll interval, frequency, NTSAuthenticated, the cookie count
# back at 8 after each reply) only when they change; the frequency, which observe mode neither
# changes nor reads per poll, once. busctl monitor sees every signal the daemon sends from its
# start; the count it announced last equals the property's value.
test_properties_changed_once_per_poll_and_only_when_changed() {
        local monitor replies signals ntpmsg cookies poll auth freq read i
        ! pid_alive "$TIMESYNCD_PID" || stop_timesyncd
        : >"$TIMESYNCD_LOG"
        busctl --system --match "type='signal',path='/org/freedesktop/timesync1',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'" \
                monitor >"$TEST_TMPDIR/signals.txt" 2>&1 &
        monitor=$!
        track_pid "$monitor"
        sleep 0.5 # subscribed
        start_timesyncd "$conf" --test-poll-interval=100ms
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        wait_log_count "NTP reply from" 20 20
        # The replies so far have their signals in the monitor's file once it caught up (a
        # loaded machine delays busctl); the daemon goes on polling meanwhile, so the lower
        # bound counts the replies before the wait and the upper bounds those before the kill.
        replies=$(log_count "NTP reply from")
        wait_for 10 _ntpmsg_signals_at_least $((replies - 1)) || true
        kill "$monitor" 2>/dev/null || true
        wait "$monitor" 2>/dev/null || true
        ntpmsg=$(grep -c 'STRING "NTPMessage"' "$TEST_TMPDIR/signals.txt" || true)
        [ "$ntpmsg" -ge $((replies - 1)) ] || fail "$ntpmsg NTPMessage signals for $replies replies"
        replies=$(log_count "NTP reply from")
        signals=$(grep -c 'Member=PropertiesChanged' "$TEST_TMPDIR/signals.txt" || true)
        cookies=$(grep -c 'STRING "NTSCookies"' "$TEST_TMPDIR/signals.txt" || true)
        poll=$(grep -c 'STRING "PollIntervalUSec"' "$TEST_TMPDIR/signals.txt" || true)
        auth=$(grep -c 'STRING "NTSAuthenticated"' "$TEST_TMPDIR/signals.txt" || true)
        freq=$(grep -c 'STRING "Frequency"' "$TEST_TMPDIR/signals.txt" || true)
        echo "result: $replies replies, $signals signals: NTPMessage $ntpmsg, NTSCookies $cookies, PollIntervalUSec $poll, NTSAuthenticated $auth, Frequency $freq"
        # The start announces the server, the key exchange and the first sample: a few more.
        [ "$signals" -le $((replies + 8)) ] || fail "$signals signals for $replies replies, expected about one per poll"
        [ "$poll" -le 2 ] || fail "PollIntervalUSec announced $poll times at a fixed poll interval"
        [ "$auth" -le 3 ] || fail "NTSAuthenticated announced $auth times while it stayed yes"
        [ "$cookies" -le 4 ] || fail "NTSCookies announced $cookies times while every reply refilled the jar"
        # Observe mode: the daemon does not change the frequency; announced with the first sample.
        [ "$freq" -le 1 ] || fail "Frequency announced $freq times in observe mode, which never changes it"
        # What the last NTSCookies signal said is the value a client reads now.
        awk '/STRING "NTSCookies"/ { c = 1; next } c && /UINT32/ { v = $2; sub(/;$/, "", v); c = 0 } END { print v }' \
                "$TEST_TMPDIR/signals.txt" >"$TEST_TMPDIR/last-cookies"
        # The daemon still polls every 100 ms: while a request is out (about a millisecond on
        # loopback) the jar holds one cookie less, unannounced by design. A few reads see the
        # steady value; a count that was never announced is seen by none of them.
        for i in 1 2 3 4 5; do
                read=$(timesync_property NTSCookies)
                [ "$read" = "$(cat "$TEST_TMPDIR/last-cookies")" ] && break
                sleep 0.03
        done
        [ "$read" = "$(cat "$TEST_TMPDIR/last-cookies")" ] ||
                fail "last announced NTSCookies $(cat "$TEST_TMPDIR/last-cookies") is not the property's $read (5 reads)"
        stop_timesyncd
}

# What a poll costs in system calls, counted by strace over 30 polls or more:
# at most 12 (chronyd 4.3 as a client makes 12.3, docs/BENCHMARKS.md), and none of the
# thread check libsystemd makes on every iteration of the default event loop (a gettid() per
# wakeup, two per poll: the daemon runs a loop of its own). Log level info, as in a unit: at
# debug every reply writes its log line.
test_a_poll_costs_at_most_12_system_calls_and_no_gettid() {
        local tracer before polls total gettid
        command -v strace >/dev/null || missing_prerequisite "strace not installed (package strace)"
        ! pid_alive "$TIMESYNCD_PID" || stop_timesyncd
        : >"$TIMESYNCD_LOG"
        TIMESYNCD_LOG_LEVEL=info start_timesyncd "$conf" --test-poll-interval=100ms
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        sleep 0.5 # past the first replies and their one-time work
        strace -c -f -o "$TEST_TMPDIR/poll.strace" -p "$TIMESYNCD_PID" &
        tracer=$!
        sleep 0.5 # strace attached
        before=$(chrony_serverstat "$srv" "NTP packets received")
        wait_for 20 served_at_least $((before + 30)) || fail "fewer than 30 polls in 20 s"
        kill -INT "$tracer"
        wait "$tracer" 2>/dev/null || true
        # A request is one sendto() (the bus and sd_notify use sendmsg()).
        polls=$(awk '$NF == "sendto" { print $4 }' "$TEST_TMPDIR/poll.strace")
        total=$(awk '$NF == "total" { print $4 }' "$TEST_TMPDIR/poll.strace")
        gettid=$(awk '$NF == "gettid" { print $4 }' "$TEST_TMPDIR/poll.strace")
        echo "result: $total system calls for $polls polls, gettid ${gettid:-0}"
        cat "$TEST_TMPDIR/poll.strace"
        [ -z "$gettid" ] || fail "$gettid gettid() calls over $polls polls: the default event loop's thread check"
        [ "$total" -le $((polls * 12)) ] || fail "$total system calls over $polls polls, more than 12 per poll"
        stop_timesyncd
}

# The same trace: in observe mode a poll reads no kernel clock state. The daemon changes
# nothing there, so the frequency of the Frequency property is read when a client asks for it
# (nobody on this test's bus does while the trace runs), not by an adjtimex() per sample.
test_an_observing_poll_makes_no_adjtimex_call() {
        local polls adj
        polls=$(awk '$NF == "sendto" { print $4 }' "$TEST_TMPDIR/poll.strace")
        adj=$(awk '$NF == "clock_adjtime" || $NF == "adjtimex" { n += $4 } END { print n + 0 }' "$TEST_TMPDIR/poll.strace")
        echo "result: $adj clock_adjtime()/adjtimex() calls over $polls polls"
        [ "$adj" = 0 ] || fail "$adj clock_adjtime()/adjtimex() calls over $polls polls in observe mode"
}

# The NTP socket is connected to the server it polls: the kernel delivers nothing from any
# other address (an off-path forger must guess the server's address and port besides the
# origin timestamp, and its datagrams cost the daemon no wakeup), and keeps the route instead
# of looking it up for every request.
test_ntp_socket_takes_datagrams_from_the_polled_server_only() {
        local port peer
        ! pid_alive "$TIMESYNCD_PID" || stop_timesyncd
        : >"$TIMESYNCD_LOG"
        TIMESYNCD_LOG_LEVEL=debug start_timesyncd "$conf" --test-poll-interval=200ms
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        read -r port peer < <(ss -Huanp | awk -v p="pid=$TIMESYNCD_PID," 'index($0, p) { n = split($4, a, ":"); print a[n], $5; exit }')
        echo "result: the daemon's NTP socket, port $port, peer $peer"
        [ "$peer" = "127.0.0.1:$ntp" ] || fail "the NTP socket's peer is '$peer', not the server 127.0.0.1:$ntp"
        # Twenty datagrams of a header's size from 127.0.0.2 over a second of polls.
        /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.2", 0))
for _ in range(20):
    s.sendto(bytes(48), ("127.0.0.1", int(sys.argv[1])))
    time.sleep(0.05)' "$port"
        sleep 0.5
        ! log_has "Reply from unknown source" || fail "datagrams from 127.0.0.2 reached the daemon: $(log_count "Reply from unknown source")"
        log_has "NTP reply from" || fail "no NTP reply logged at debug level"
        stop_timesyncd
}

# --nts-state-dir=: the jars there, the clock file in --state-dir=. The unit keeps them apart
# (/var/lib/timesyncd-nts) because stock's package deletes /var/lib/systemd/timesync when purged,
# also after this daemon replaced it. Directories of its own: the other cases' state stays.
test_nts_state_dir_keeps_the_jars_apart_from_the_clock_file() {
        local clock_dir=$TEST_TMPDIR/clock-state nts_dir=$TEST_TMPDIR/nts-state jar
        ! pid_alive "$TIMESYNCD_PID" || stop_timesyncd
        : >"$TIMESYNCD_LOG"
        # The later --state-dir= wins over the one start_timesyncd passes.
        start_timesyncd "$conf" --state-dir="$clock_dir" --nts-state-dir="$nts_dir"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        jar=$nts_dir/$(basename "$(nts_jar_file "localhost:$ke")")
        wait_for 5 test -e "$clock_dir/clock" || fail "no clock file in --state-dir="
        # The jar is written at a clean stop.
        stop_timesyncd
        test -s "$jar" || fail "no NTS state file $jar"
        [ "$(stat -c %a "$jar")" = 600 ] || fail "$jar is not mode 600"
        compgen -G "$clock_dir/nts-*.jar" >/dev/null && fail "a jar was written to --state-dir= too"
        true
}

run_case test_nts_sync_with_chronyd_is_authenticated_and_shown_on_dbus
run_case test_libssl_is_mapped_after_nts_key_exchange
run_case test_state_file_is_written_private_at_a_clean_stop
run_case test_restart_resumes_with_saved_cookies_without_key_exchange
run_case test_keys_older_than_seven_days_are_renewed_while_running
run_case test_garbage_state_file_is_discarded_and_key_exchange_runs
run_case test_state_file_of_another_server_is_discarded
run_case test_nts_state_dir_keeps_the_jars_apart_from_the_clock_file
run_case test_negotiated_ntp_server_and_port_are_used
run_case test_saved_cookies_refused_after_server_key_change_lead_to_key_exchange
run_case test_libssl_is_not_mapped_without_nts_servers
run_case test_runtime_nts_servers_replace_ntp_and_load_libssl
run_case test_runtime_servers_switched_during_a_key_exchange_take_over
run_case test_state_file_is_not_written_per_request_but_whole_at_stop
run_case test_properties_changed_once_per_poll_and_only_when_changed
run_case test_a_poll_costs_at_most_12_system_calls_and_no_gettid
run_case test_an_observing_poll_makes_no_adjtimex_call
run_case test_ntp_socket_takes_datagrams_from_the_polled_server_only
