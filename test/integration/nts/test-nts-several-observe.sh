#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Several NTS servers in observe mode on the real clock (no fake clock): the clock is never
# moved, so every sample must be judged against that one clock. Two servers an hour ahead that
# agree outvote one with the true time: the daemon says every round that it would step by an
# hour, the same two agree each time, and nothing is judged against a clock that was stepped
# only in its own books.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus

HOUR=$((3600 * 1000000000))

# start_true_and_two_liars: chronyd a with the true time, l1 and l2 an hour ahead, listed in
# that order in $TEST_TMPDIR/ts.conf. Sets NAMES.
start_true_and_two_liars() {
        local spec
        NAMES=()
        for spec in a:0 "l1:$HOUR" "l2:$HOUR"; do
                start_chrony_at "${spec%%:*}" "${spec#*:}"
                NAMES+=("localhost:$CHRONY_KE")
        done
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "${NAMES[*]}" "ConnectionRetrySec=1"
}

test_observe_mode_judges_every_sample_against_the_clock_as_it_is() {
        local n
        start_true_and_two_liars
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
        wait_log "Initial clock synchronization to .* (offset +3\(599\|600\)\.[0-9]* s, NTS authenticated, 2 of 3 NTS sources agree" 30
        n=$(log_count "Observe mode: would step the clock by +3\(599\|600\)\.")
        wait_log_count "Observe mode: would step the clock by +3\(599\|600\)\." $((n + 3)) 20
        # Before the first synchronization, the first two to answer may disagree; after it,
        # the same two agree every round.
        sed -n '/Initial clock synchronization/,$p' "$TIMESYNCD_LOG" | grep "disagree by" &&
                fail "samples were judged against a clock stepped only in the daemon's books"
        log_has "Observe mode: would step the clock by -" && fail "a step back was planned"
        [ "$(log_count "is a falseticker")" = 1 ] || fail "the falseticker verdict changed: $(grep 'falseticker' "$TIMESYNCD_LOG")"
        wait_source_field "${NAMES[0]}" Verdict falseticker
        stop_timesyncd
        stop_chronys
}

# Two liars an hour ahead and one true server, at info level: observe mode never moves the
# clock, so after the first synchronization every poll wants the same step again. It is one
# warning, not one per poll (issue 33).
test_observe_mode_warns_once_of_a_step_it_keeps_wanting() {
        local n
        start_true_and_two_liars
        TIMESYNCD_LOG_LEVEL=info start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
        wait_log "Initial clock synchronization to .* (offset +3\(599\|600\)\.[0-9]* s, NTS authenticated, 2 of 3 NTS sources agree" 30
        wait_log "Observe mode: would have stepped the clock by +3\(599\|600\)\.[0-9]* s after the first synchronization" 20
        # Polls at 1 s: several more rounds, each wanting the same step.
        sleep 8
        n=$(log_count "Observe mode: would have stepped the clock")
        echo "result: $n warnings of a step wanted at each poll for 8 s"
        [ "$n" = 1 ] || fail "$n warnings: $(grep "would have stepped" "$TIMESYNCD_LOG" | head -n 3)"
        stop_timesyncd
        stop_chronys
}

run_case test_observe_mode_judges_every_sample_against_the_clock_as_it_is
run_case test_observe_mode_warns_once_of_a_step_it_keeps_wanting
