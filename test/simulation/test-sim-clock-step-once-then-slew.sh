#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon's clock starts 5 s fast (and, in a second run, 3 s slow): it is stepped once, by
# the error as measured, and from then on only slewed; the step leaves it within a millisecond
# of true time, and the slews over the rest of the day measure no more than that.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

for error in 5 -3; do
        SIM_SERVERS="port=10001,delay=0.02,jitter=0.001" SIM_CLOCK_ERROR=$error SIM_SEED=11 sim_run 1 "NTS=127.0.0.1:10001"
        [ "$(sim_count step)" = 1 ] || fail "error $error s: $(sim_count step) steps: $(grep ' step ' "$SIM_REC")"
        step=$(awk '$2 == "step" { print $3 }' "$SIM_REC")
        awk -v s="$step" -v e="$error" 'BEGIN { d = s + e; exit !(d < 0.01 && d > -0.01) }' ||
                fail "a clock $error s off was stepped by $step s"
        # The step comes with the first answers; slews follow.
        first_slew=$(awk '$2 == "slew" { print $1; exit }' "$SIM_REC")
        step_at=$(awk '$2 == "step" { print $1 }' "$SIM_REC")
        awk -v a="$step_at" -v b="$first_slew" 'BEGIN { exit !(a < 300 && b >= a) }' ||
                fail "error $error s: stepped at $step_at s, first slew at $first_slew s"
        [ "$(sim_count slew)" -gt 10 ] || fail "error $error s: only $(sim_count slew) slews"
        awk -v e="$(sim_clock_error)" 'BEGIN { exit !(e < 0.001 && e > -0.001) }' ||
                fail "error $error s: the clock ends $(sim_clock_error) s off"
        awk '$2 == "slew" && ($3 > 0.001 || $3 < -0.001) { print; bad = 1 } END { exit bad }' "$SIM_REC" ||
                fail "error $error s: a slew after the step is larger than a millisecond"
done
