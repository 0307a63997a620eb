#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Clock events, on a clock the daemon may really correct without touching this machine's:
# --test-clock-offset= gives it a fake clock that runs with CLOCK_REALTIME but starts off by a
# set amount, and SIGUSR1 moves it by that amount again as another program setting the clock
# would. The jump takes the path of the CLOCK_REALTIME timerfd (TFD_TIMER_CANCEL_ON_SET), which
# only a real clock change can fire: that part is checked in the qemu guest (test/mkosi).
# The daemon runs in observe mode without CAP_SYS_TIME as everywhere, and the harness checks
# that the kernel clock discipline was left alone.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs

start_nts_peer
ntp=$NTS_PEER_NTP_PORT ke=$NTS_PEER_KE_PORT srv=$NTS_PEER_DIR

# last_number PATTERN: the signed number after "by" / "offset" in the last log line matching it.
last_number() {
        grep -- "$1" "$TIMESYNCD_LOG" | tail -n1 | grep -oE '[-+][0-9]+\.[0-9]+' | head -n1
}
# within NUMBER LOW HIGH. The bounds allow 50 ms of measurement error: on loopback the offset
# is off by half the difference of the two directions' delays, which on a machine loaded by
# CI's other lanes reached more than 10 ms. Every rule checked here is wrong by seconds or by
# its sign when broken.
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }

test_wrong_clock_at_start_is_stepped_over_nts() {
        local by left
        # 64 s between polls: any reply within seconds of a jump is the resync, not the poll.
        write_nts_conf "$TEST_TMPDIR/nts.conf" "localhost:$ke" "PollIntervalMinSec=64"
        start_timesyncd "$TEST_TMPDIR/nts.conf" --test-clock-offset=30min
        # The measured offset is -1800 s give or take the exchange's microseconds: either side.
        wait_log "Initial clock synchronization to localhost:$ke (offset -\(1800\.\|1799\.9\)[0-9]* s, NTS authenticated"
        [ "$(log_count "Test clock: stepped by")" = 1 ] || fail "not exactly one step"
        by=$(last_number "Test clock: stepped by")
        within "$by" -1800.05 -1799.95 || fail "stepped by $by s, expected -1800 s"
        left=$(grep "Test clock: stepped by" "$TIMESYNCD_LOG" | sed -n 's/.*now \([-+][0-9.]*\) s from.*/\1/p')
        within "$left" -0.05 0.05 || fail "the test clock is $left s off after the step"
}

test_foreign_jump_resynchronizes_at_once() {
        local replies by
        replies=$(log_count "NTP reply from")
        kill -USR1 "$TIMESYNCD_PID"
        wait_log "Test clock: jumped by +1800"
        wait_log "System clock changed, resynchronizing." 5
        # The next request goes out at once, not after the 64 s poll interval.
        wait_log_count "NTP reply from" $((replies + 1)) 5
        wait_log_count "Test clock: stepped by" 2 5
        by=$(last_number "Test clock: stepped by")
        within "$by" -1800.05 -1799.95 || fail "stepped back by $by s, expected -1800 s"
        # The samples from before the jump are gone: the step follows the first new reply,
        # a filter still holding them would have called the +1800 s a spike.
        [ "$(log_count "System clock changed")" = 1 ] || fail "clock change logged $(log_count "System clock changed") times for one jump"
        [ "$(chrony_serverstat "$srv" "Authenticated NTP packets")" -ge 2 ] ||
                fail "chronyd did not see two authenticated requests"
        # Once synchronized, a step is a warning with its size and its server.
        wait_log "Stepped the clock by -1\(799\|800\)\.[0-9]* s after the first synchronization, following localhost:$ke, NTS authenticated (the test clock)\." 5
        [ "$(log_count "after the first synchronization")" = 1 ] || fail "the first step was warned about too"
}

test_repeated_jumps_are_each_corrected() {
        local i
        for i in 3 4 5; do
                kill -USR1 "$TIMESYNCD_PID"
                wait_log_count "Test clock: stepped by" "$i" 5
        done
        [ "$(log_count "System clock changed")" = 4 ] || fail "$(log_count "System clock changed") clock changes logged for 4 jumps"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died"
        stop_timesyncd
}

test_clock_behind_is_stepped_forward_over_plain_ntp() {
        local by
        write_conf "$TEST_TMPDIR/ntp.conf" "NTP=127.0.0.1:$ntp" "PollIntervalMinSec=64"
        : >"$TIMESYNCD_LOG"
        rm -f "$TEST_TMPDIR/state/clock"
        start_timesyncd "$TEST_TMPDIR/ntp.conf" --test-clock-offset=-45s
        wait_log "Test clock: stepped by"
        by=$(last_number "Test clock: stepped by")
        # Within 45 s of the last commit (TIME_EPOCH, the floor of every clock) the daemon first
        # advances the fake clock to that floor, as it would a real one: the step is smaller then.
        if log_has "System clock is behind the last recorded time, advancing it"; then
                within "$by" 0 45.05 || fail "stepped by $by s after the advance, expected 0..+45 s"
        else
                within "$by" 44.95 45.05 || fail "stepped by $by s, expected +45 s"
        fi
        left=$(grep "Test clock: stepped by" "$TIMESYNCD_LOG" | sed -n 's/.*now \([-+][0-9.]*\) s from.*/\1/p')
        within "$left" -0.05 0.05 || fail "the test clock is $left s off after the step"
        stop_timesyncd
}

test_small_offset_is_slewed_not_stepped() {
        local by
        write_conf "$TEST_TMPDIR/ntp.conf" "NTP=127.0.0.1:$ntp" "PollIntervalMinSec=64"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ntp.conf" --test-clock-offset=50ms
        wait_log "Test clock: slewing by"
        by=$(last_number "Test clock: slewing by")
        within "$by" -0.09 -0.01 || fail "slewing by $by s, expected -0.05 s"
        log_has "Test clock: stepped" && fail "a 50 ms offset was stepped"
        stop_timesyncd
}

test_fake_clock_requires_observe_and_a_valid_time() {
        local rc=0 bad
        run_nosystime "$TIMESYNCD" --test-clock-offset=1s --config="$TEST_TMPDIR/ntp.conf" >"$TEST_TMPDIR/nofake.log" 2>&1 || rc=$?
        [ "$rc" = 1 ] || fail "--test-clock-offset= without --observe: exit $rc, expected 1"
        grep -q "requires --observe" "$TEST_TMPDIR/nofake.log" || fail "no reason given: $(cat "$TEST_TMPDIR/nofake.log")"
        for bad in "" - --1s 1parsec 200y; do
                rc=0
                run_nosystime "$TIMESYNCD" --observe --test-clock-offset="$bad" --config="$TEST_TMPDIR/ntp.conf" \
                        >"$TEST_TMPDIR/badfake.log" 2>&1 || rc=$?
                [ "$rc" = 1 ] || fail "--test-clock-offset='$bad': exit $rc, expected 1"
                grep -q "Invalid --test-clock-offset=" "$TEST_TMPDIR/badfake.log" ||
                        fail "--test-clock-offset='$bad': $(cat "$TEST_TMPDIR/badfake.log")"
        done
}

run_case test_wrong_clock_at_start_is_stepped_over_nts
run_case test_foreign_jump_resynchronizes_at_once
run_case test_repeated_jumps_are_each_corrected
run_case test_clock_behind_is_stepped_forward_over_plain_ntp
run_case test_small_offset_is_slewed_not_stepped
run_case test_fake_clock_requires_observe_and_a_valid_time
