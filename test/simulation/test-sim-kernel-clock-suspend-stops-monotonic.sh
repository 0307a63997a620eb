#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The machine sleeps for an hour (SIM_SUSPEND) under the daemon on its kernel clock backend,
# with an oscillator 20 ppm fast: nothing is sent while it sleeps, CLOCK_REALTIME comes back
# ahead by what the oscillator gained over the hour (72 ms: a suspend-nonstop clocksource
# counts the sleep without the kernel's frequency), the kernel's clock_was_set() at the resume
# fires the daemon's clock-change watch, and it asks its server at once. (That MONOTONIC and
# MONOTONIC_RAW stop while BOOTTIME goes on is the model's, checked by test-sim-kclock.)
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

SIM_CLOCK=kernel SIM_DRIFT=20 SIM_SUSPEND=3000.3:3600 SIM_SEED=4 \
        SIM_SERVERS="port=10001,delay=0.001,jitter=0.0001" sim_run 0.2 "NTS=127.0.0.1:10001"

[ "$(awk '$2 == "suspend" { print $1, $3 }' "$SIM_REC")" = "3000.300000 3600.000" ] ||
        fail "no suspend at 3000.3 s: $(grep -E ' (suspend|resume) ' "$SIM_REC")"
awk '$2 == "request" && $1 > 3000.3 && $1 < 6600.3 { print; exit 1 }' "$SIM_REC" ||
        fail "a request while the machine slept"
[ "$(sim_log_times "System clock changed")" = 6600.300000 ] ||
        fail "the clock-change watch fired at '$(sim_log_times "System clock changed")', not at the resume (6600.3 s)"
[ "$(awk '$2 == "request" && $1 >= 6600.3 { print $1; exit }' "$SIM_REC")" = 6600.300000 ] ||
        fail "no request at the resume: $(awk '$2 == "request" && $1 >= 6600.3' "$SIM_REC" | head -n 2)"
# The oscillator's 72 ms over the hour, on top of where the clock was.
awk '$2 == "kclock" && $1 == 3000 { before = substr($3, 8) }
     $2 == "resume" { d = substr($3, 8) - before - 0.072; exit !(d < 0.001 && d > -0.001) }' "$SIM_REC" ||
        fail "the clock did not come back 72 ms further ahead: $(awk '$2 == "kclock" && $1 == 3000' "$SIM_REC"; grep ' resume ' "$SIM_REC")"
[ "$(sim_count step)" = 0 ] || fail "a step: $(grep ' step ' "$SIM_REC")"
