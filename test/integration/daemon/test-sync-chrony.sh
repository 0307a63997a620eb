#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon reaches synchronization against a real chronyd on loopback, in observe mode and
# without CAP_SYS_TIME, and measures a same-host offset below 1 ms. The clock guard of the
# harness checks that the kernel clock discipline was not touched.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs

start_nts_peer
ntp=$NTS_PEER_NTP_PORT

test_observe_mode_syncs_with_chronyd() {
        write_conf "$TEST_TMPDIR/ts.conf" "NTP=127.0.0.1:$ntp" "PollIntervalMinSec=16"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Initial clock synchronization to 127.0.0.1:$ntp"
        log_has "Observe mode" || fail "observe mode not announced"
        # The flag tells systemd-time-wait-sync the clock is right: never in observe mode.
        [ ! -e "$TEST_TMPDIR/runtime/synchronized" ] || fail "observe mode wrote the synchronized flag"
        [ -e "$TEST_TMPDIR/state/clock" ] || fail "clock file not written"
}

test_same_host_offset_is_below_one_millisecond() {
        local line offset
        line=$(grep -m1 "Initial clock synchronization" "$TIMESYNCD_LOG")
        offset=$(sed -n 's/.*offset \([-+][0-9.]*\) s.*/\1/p' <<<"$line")
        [ -n "$offset" ] || fail "no offset in: $line"
        awk -v o="$offset" 'BEGIN { exit !(o < 0.001 && o > -0.001) }' || fail "offset $offset s is not below 1 ms"
}

test_sigterm_ends_cleanly() {
        kill -TERM "$TIMESYNCD_PID"
        local rc=0
        wait "$TIMESYNCD_PID" || rc=$?
        [ "$rc" = 0 ] || fail "daemon exited with $rc on SIGTERM"
}

test_test_poll_interval_requires_observe() {
        local rc=0
        run_nosystime "$TIMESYNCD" --test-poll-interval=1s --config="$TEST_TMPDIR/ts.conf" >"$TEST_TMPDIR/nopoll.log" 2>&1 || rc=$?
        [ "$rc" = 1 ] || fail "--test-poll-interval= without --observe: exit $rc, expected 1"
        grep -q "requires --observe" "$TEST_TMPDIR/nopoll.log" || fail "no reason given: $(cat "$TEST_TMPDIR/nopoll.log")"
}

test_test_poll_interval_polls_below_the_floor() {
        write_conf "$TEST_TMPDIR/fast.conf" "NTP=127.0.0.1:$ntp"
        TIMESYNCD_LOG=$TEST_TMPDIR/fast.log
        start_timesyncd "$TEST_TMPDIR/fast.conf" --test-poll-interval=200ms
        # Ten replies in far less than one interval of the 16 s floor.
        wait_log_count "NTP reply from 127.0.0.1:$ntp" 10 12
        stop_timesyncd
}

run_case test_observe_mode_syncs_with_chronyd
run_case test_same_host_offset_is_below_one_millisecond
run_case test_sigterm_ends_cleanly
run_case test_test_poll_interval_requires_observe
run_case test_test_poll_interval_polls_below_the_floor
