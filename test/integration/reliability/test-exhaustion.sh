#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Exhaustion: a flood of forged replies (blind ones with random origin timestamps, and on-path
# ones that echo the origin but carry a wrong Unique Identifier or a garbage authenticator)
# while the daemon synchronizes; a file descriptor limit that leaves no room for a socket; a
# state directory on a full tmpfs; allocations that fail. Each time the daemon must log, survive and synchronize (or
# recover once the resource is back), with bounded log lines and bounded CPU time.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs

export SPOOF_FLOOD=$TSNTS_SRC_DIR/test/tools/faults/spoof-flood.py
export FLOOD_SECONDS=45 FLOOD_RATE=3000 CPU_BOUND=3

replies_at_least() { [ "$(log_count "NTP reply from")" -ge "$1" ]; }

authenticated_at_least() {
        [ "$(chrony_serverstat "$TEST_TMPDIR/chrony" "Authenticated NTP packets")" -ge "$1" ]
}

# The local port of the daemon's UDP socket, from ss.
daemon_udp_port() {
        ss -Hunap 2>/dev/null | awk -v p="pid=$1," '!done && index($0, p) { n = split($4, a, ":"); print a[n]; done = 1 }'
}

# ---- forged replies, blind and on-path, in a namespace of their own ----
# NTP goes through the relay with 1.4 s of delay each way, so that the flood is running before
# the first reply arrives; a round trip of 2.8 s stays below the 3 s above which no sample is
# used (timesyncd-filter.h, NTP_FILTER_DELAY_MAX_NSEC).
flood_inner() {
        local port t0 cpu flood_pid warned lines total
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$NTP" "$KE" "ntsntpserver 127.0.0.2"
        start_fault_proxy slow "127.0.0.2:$NTP" "127.0.0.1:$NTP" --delay=1400
        nts_conf "localhost:$KE"
        t0=$EPOCHREALTIME
        # At info level, as in production: the per-packet debug lines are not what is counted.
        start_daemon "$TIMESYNCD_LOG" env SYSTEMD_LOG_LEVEL=info SYSTEMD_LOG_TARGET=console \
                "$TIMESYNCD" --observe --config="$TEST_TMPDIR/ts.conf" --state-dir="$TEST_TMPDIR/state" \
                --runtime-dir="$TEST_TMPDIR/runtime"
        TIMESYNCD_PID=$DAEMON_PID
        wait_exec "$TIMESYNCD_PID" systemd-timesyncd
        # shellcheck disable=SC2016 # expanded by eval, at each try of wait_for
        wait_for 10 eval '[ -n "$(daemon_udp_port "$TIMESYNCD_PID")" ]' || fail "no UDP socket of the daemon"
        port=$(daemon_udp_port "$TIMESYNCD_PID")
        /usr/bin/python3 "$SPOOF_FLOOD" --server="127.0.0.2:$NTP" --client-port="$port" \
                --seconds="$FLOOD_SECONDS" --blind-rate="$FLOOD_RATE" --stats="$TEST_TMPDIR/flood.stats" \
                >"$TEST_TMPDIR/flood.log" 2>&1 &
        flood_pid=$!
        wait_for 5 grep -q READY "$TEST_TMPDIR/flood.log" || fail "flood sender did not start"
        wait_log "$(synced_line "localhost:$KE")" 30
        echo "result: synchronized under the flood after $(seconds_since "$t0") s"
        wait_for 60 authenticated_at_least 3 || fail "fewer than 3 authenticated exchanges under the flood"
        wait "$flood_pid" || fail "flood sender failed: $(cat "$TEST_TMPDIR/flood.log")"
        grep -q '^requests_seen=[1-9]' "$TEST_TMPDIR/flood.stats" || fail "the flood never saw a request"
        assert_only_authenticated_sync
        # Forgeries that pass the origin check fail NTS verification: one warning per kind
        # of failure and 10 minutes, not one line per packet.
        warned=$(log_count "fails NTS verification")
        [ "$warned" -ge 1 ] || fail "no forged reply reached the NTS check"
        [ "$warned" -le 4 ] || fail "$warned verification warnings: not rate-limited"
        lines=$(wc -l <"$TIMESYNCD_LOG")
        [ "$lines" -le 40 ] || fail "$lines log lines under the flood"
        # Every forged packet costs a receive and a parse; a busy loop would cost one CPU second
        # per second whatever the flood. Bound: 20 us per forged packet plus CPU_BOUND.
        total=$(awk -F= '{ s += $2 } $1 == "requests_seen" { s -= $2 } END { print s }' "$TEST_TMPDIR/flood.stats")
        cpu=$(assert_cpu_below "$TIMESYNCD_PID" "$(awk -v n="$total" -v b="$CPU_BOUND" 'BEGIN { print b + n * 0.00002 }')" flood)
        # The jar stayed full: what a clean stop saves (8, or 7 with a request in flight).
        stop_timesyncd
        [ "$(jar_cookies "localhost:$KE")" -ge 7 ] ||
                fail "the cookie jar did not stay full under the flood: $(jar_cookies "localhost:$KE") cookies saved at stop"
        echo "result: flood $(tr '\n' ' ' <"$TEST_TMPDIR/flood.stats");" \
             "$(chrony_serverstat "$TEST_TMPDIR/chrony" "Authenticated NTP packets") authenticated exchanges," \
             "$warned verification warnings, $lines log lines in all; CPU $cpu s for $total forged packets"
        grep "fails NTS verification" "$TIMESYNCD_LOG" | sed 's/^/result:   /'
}

# ---- out of file descriptors ----
# One daemon per limit from 6 to 16 descriptors, 4 s each: it either runs on, logging why it
# cannot proceed and retrying, or (only when even its start-up descriptors are missing) exits
# with a logged error. Never a signal or a sanitizer report; at 16 it synchronizes.
start_with_nofile() {
        local n=$1
        TIMESYNCD_LOG=$TEST_TMPDIR/nofile-$n.log
        mkdir -p "$TEST_TMPDIR/state-$n" "$TEST_TMPDIR/runtime-$n"
        chown systemd-timesync: "$TEST_TMPDIR/state-$n" "$TEST_TMPDIR/runtime-$n" 2>/dev/null || true
        start_daemon "$TIMESYNCD_LOG" prlimit --nofile="$n:$n" env SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console \
                "$TIMESYNCD" --observe --config="$TEST_TMPDIR/ts.conf" --state-dir="$TEST_TMPDIR/state-$n" \
                --runtime-dir="$TEST_TMPDIR/runtime-$n"
        TIMESYNCD_PID=$DAEMON_PID
}

fd_limit() {
        local ke ntp n rc outcome summary="" pids=() alive=()
        ke=$(free_port)
        ntp=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$ntp" "$ke"
        nts_conf "localhost:$ke"
        for n in 6 7 8 9 10 11 12 13 14 15 16; do
                start_with_nofile "$n"
                pids[n]=$TIMESYNCD_PID
        done
        sleep 4
        for n in 6 7 8 9 10 11 12 13 14 15 16; do
                TIMESYNCD_LOG=$TEST_TMPDIR/nofile-$n.log
                if pid_alive "${pids[n]}"; then
                        alive[n]=1
                        if log_has "$(synced_line "localhost:$ke")"; then
                                outcome=synced
                        elif log_has "NTS key exchange with .* failed"; then
                                outcome="alive, retrying ($(grep -m1 -o 'failed: [^.]*' "$TIMESYNCD_LOG"))"
                        elif log_has "Failed to set up server .*: Too many open files"; then
                                # Its NTS client's timers did not fit: no source, a retry later.
                                outcome="alive, retrying ($(grep -m1 -o 'Failed to set up server .*' "$TIMESYNCD_LOG"))"
                        else
                                fail "--nofile=$n: running, but neither synchronized nor saying why not"
                        fi
                        assert_cpu_below "${pids[n]}" "$CPU_BOUND" "--nofile=$n" >/dev/null
                        stop_daemon "${pids[n]}"
                else
                        rc=0
                        wait "${pids[n]}" || rc=$?
                        [ "$rc" = 1 ] || fail "--nofile=$n: the daemon ended with $rc (a signal is > 128)"
                        log_has "Too many open files" || fail "--nofile=$n: exited without saying why"
                        outcome="exit 1 at start ($(grep -m1 'Too many open files' "$TIMESYNCD_LOG"))"
                fi
                summary+=$'\n'"result:   --nofile=$n: $outcome"
        done
        TIMESYNCD_LOG=$TEST_TMPDIR/nofile-16.log
        log_has "$(synced_line "localhost:$ke")" || fail "no synchronization with 16 descriptors"
        # An unreadable network state used to end the daemon (it said "ignoring"), at 8 until
        # the bus's inotify watch took one descriptor more at start: wherever it happens, the
        # daemon lives on.
        local unreadable=0
        for n in 6 7 8 9 10 11 12 13 14 15 16; do
                grep -q "Failed to read network state" "$TEST_TMPDIR/nofile-$n.log" || continue
                unreadable=$((unreadable + 1))
                [ -n "${alive[n]:-}" ] || fail "--nofile=$n: the daemon did not survive an unreadable network state"
        done
        [ "$unreadable" -gt 0 ] || fail "no limit made the network state unreadable: the case tests nothing"
        echo "result: file descriptor limits:$summary"
}

# ---- the state directory on a full 4 KiB tmpfs ----
disk_full_inner() {
        local cpu
        mount -t tmpfs -o size=4k,mode=0755 tsnts-full "$TEST_TMPDIR/state"
        chown systemd-timesync: "$TEST_TMPDIR/state" 2>/dev/null || true
        dd if=/dev/zero of="$TEST_TMPDIR/state/filler" bs=1k count=64 2>/dev/null || true
        df -k "$TEST_TMPDIR/state" | tail -n 1 | awk '{ print "result: state dir " $2 " KiB, " $4 " KiB free" }'
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$KE")" 30
        wait_for 60 replies_at_least 3 || fail "fewer than 3 replies with a full state disk"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died on a full disk"
        cpu=$(assert_cpu_below "$TIMESYNCD_PID" "$CPU_BOUND" disk_full)
        # The cookies are written at a clean stop only: that write fails, once, and says why.
        stop_timesyncd
        wait_log "Failed to save NTS cookies to .*: No space left on device. The next start needs a key exchange." 1
        [ "$(log_count "Failed to save NTS cookies")" = 1 ] || fail "$(log_count "Failed to save NTS cookies") save warnings, expected 1"
        echo "result: $(log_count "Failed to save NTS cookies") save warning at stop, $(log_count "NTP reply from") replies; CPU $cpu s"
        umount "$TEST_TMPDIR/state"
}

disk_full() {
        NTP=$(free_port)
        KE=$(free_port)
        export NTP KE
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$NTP" "$KE"
        nts_conf "localhost:$KE"
        in_systemd_run disk_full_inner
}

# ---- allocations that fail: windows of ENOMEM at rising rates (test/tools/preload/failmalloc.c) ----
# After the first sync, four windows of 3 s: 5%, 30% and 100% of allocations fail, the last
# one (30%) while chronyd restarts with new keys, so that a NAK and a new key exchange (TLS,
# libcrypto) run out of memory too. After each window the daemon must be alive and get fresh
# authenticated replies; at the end it must stop cleanly.
enomem() {
        local ke ntp fail log pid rate n rc=0 summary=""
        [ -n "${TSNTS_FAILMALLOC:-}" ] || { echo "result: skipped (sanitizer build: no allocator shim)"; return 0; }
        ke=$(free_port)
        ntp=$(free_port)
        fail=$TEST_TMPDIR/enomem.window
        log=$TEST_TMPDIR/enomem.log
        start_chrony_nts_server "$TEST_TMPDIR/chrony-enomem" "$CERTDIR" "$ntp" "$ke"
        write_conf "$TEST_TMPDIR/enomem.conf" "NTS=localhost:$ke" "NTSTrustedCertificates=$CERTDIR/ca.pem" "ConnectionRetrySec=1"
        mkdir -p "$TEST_TMPDIR/state-enomem" "$TEST_TMPDIR/runtime-enomem"
        chown systemd-timesync: "$TEST_TMPDIR/state-enomem" "$TEST_TMPDIR/runtime-enomem" 2>/dev/null || true
        start_daemon "$log" env LD_PRELOAD="$TSNTS_FAILMALLOC" FAILMALLOC_FILE="$fail" \
                SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console "$TIMESYNCD" --observe \
                --config="$TEST_TMPDIR/enomem.conf" --state-dir="$TEST_TMPDIR/state-enomem" \
                --runtime-dir="$TEST_TMPDIR/runtime-enomem" --test-poll-interval=100ms
        pid=$DAEMON_PID
        TIMESYNCD_LOG=$log wait_log "$(synced_line "localhost:$ke")" 30
        for rate in 0.05 0.3 1 rekey; do
                n=$(TIMESYNCD_LOG=$log log_count "NTP reply from")
                if [ "$rate" = rekey ]; then
                        echo 0.3 >"$fail"
                        stop_chrony "$TEST_TMPDIR/chrony-enomem"
                        rm -f "$TEST_TMPDIR/chrony-enomem/ntskeys"
                        start_chrony_nts_server "$TEST_TMPDIR/chrony-enomem" "$CERTDIR" "$ntp" "$ke"
                else
                        echo "$rate" >"$fail"
                fi
                sleep 3
                rm -f "$fail"
                if ! pid_alive "$pid"; then
                        wait "$pid" || rc=$?
                        tail -n 5 "$log"
                        fail "enomem: the daemon ended with status $rc in the window of rate $rate"
                fi
                TIMESYNCD_LOG=$log wait_for 40 _log_count_at_least "NTP reply from" $((n + 5)) ||
                        fail "enomem: no fresh replies after the window of rate $rate"
                summary+=" $rate: $(( $(TIMESYNCD_LOG=$log log_count "NTP reply from") - n )) replies;"
        done
        TIMESYNCD_LOG=$log assert_only_authenticated_sync
        kill -TERM "$pid"
        wait "$pid" || rc=$?
        [ "$rc" = 0 ] || fail "enomem: the daemon exited with $rc on SIGTERM"
        echo "result: after each ENOMEM window (rate: replies until checked):$summary" \
             "$(grep -c "NTS key exchange with .* done" "$log") key exchanges," \
             "$(grep -ci "out of memory\|Cannot allocate memory" "$log") log lines about memory"
}

netns_create
NTP=$(free_port) KE=$(free_port) start_case flood netns_exec "$NETNS" flood_inner
start_case fd_limit fd_limit
start_case disk_full disk_full
start_case enomem enomem

test_forged_reply_flood_does_not_stop_sync_and_logs_little() { finish_case flood; }
test_fd_limits_are_logged_and_survived() { finish_case fd_limit; }
test_full_state_disk_warns_and_sync_continues() { finish_case disk_full; }
test_enomem_windows_are_survived_and_sync_resumes() { finish_case enomem; }

run_case test_forged_reply_flood_does_not_stop_sync_and_logs_little
run_case test_fd_limits_are_logged_and_survived
run_case test_full_state_disk_warns_and_sync_continues
run_case test_enomem_windows_are_survived_and_sync_resumes
