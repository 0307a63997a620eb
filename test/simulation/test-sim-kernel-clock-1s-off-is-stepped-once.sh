#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon on its kernel clock backend, the clock 1 s fast (and, in a second run, 1 s slow):
# one ADJ_SETOFFSET step by the error as measured leaves the clock's true offset below a
# millisecond, slews follow, and no second step. The step makes the daemon's clock-change
# watch (a TFD_TIMER_CANCEL_ON_SET timer) readable, which the daemon sets up anew after its
# own step: it must not take its own step for another program's ("System clock changed"). A
# step by another program (SIM_CLOCK_JUMP) it must see, and undo.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

for error in 1 -1; do
        SIM_CLOCK=kernel SIM_CLOCK_ERROR=$error SIM_SEED=3 \
                SIM_SERVERS="port=10001,delay=0.001,jitter=0.0001" sim_run 0.1 "NTS=127.0.0.1:10001"
        [ "$(sim_count step)" = 1 ] || fail "error $error s: $(sim_count step) steps: $(grep ' step ' "$SIM_REC")"
        awk -v e="$error" '$2 == "step" { d = $3 + e; o = substr($4, 8) + 0
                                          exit !(d < 0.001 && d > -0.001 && o < 0.001 && o > -0.001) }' "$SIM_REC" ||
                fail "error $error s: $(grep ' step ' "$SIM_REC")"
        [ "$(sim_count slew)" -gt 5 ] || fail "error $error s: only $(sim_count slew) slews"
        awk '$2 == "kclock" && $1 >= 60 { o = substr($3, 8) + 0; if (o > 0.001 || o < -0.001) { print; exit 1 } }' "$SIM_REC" ||
                fail "error $error s: the clock is more than 1 ms off after the step"
        ! sim_log_has "System clock changed" || fail "error $error s: the daemon took its own step for another's"
done

# Another program steps the clock 0.5 s at 3000 s: the watch fires, the daemon starts over and
# steps the clock back.
SIM_CLOCK=kernel SIM_CLOCK_JUMP=3000:0.5 SIM_SEED=3 \
        SIM_SERVERS="port=10001,delay=0.001,jitter=0.0001" sim_run 0.1 "NTS=127.0.0.1:10001"
[ "$(sim_log_times "System clock changed")" = 3000.000000 ] ||
        fail "the clock-change watch fired at '$(sim_log_times "System clock changed")', not at the jump (3000 s)"
awk '$2 == "step" { d = $3 + 0.5; if ($1 > 3000 && d < 0.001 && d > -0.001) found = 1 } END { exit !found }' "$SIM_REC" ||
        fail "the jump was not stepped back: $(grep -E ' (step|clock-jump) ' "$SIM_REC")"
