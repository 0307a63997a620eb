#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Another program steps the clock 50 ms (below the step threshold) two hours into a run on a
# perfect oscillator, one server on a LAN, the kernel clock model (SIM_CLOCK=kernel). The
# discipline sees the step (CLOCK_REALTIME moved against CLOCK_MONOTONIC), forgets the samples
# before it and keeps the frequency: the kernel's frequency stays within 1 ppm of 0 and the
# 50 ms is slewed back. Had the samples before the step been kept, the fit would read the 50 ms
# as a frequency (50 ms over the samples' span: tens of ppm). Loose correctness bounds.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

SIM_CLOCK=kernel SIM_CLOCK_ERROR=0.001 SIM_DRIFT=0 SIM_WANDER=0 SIM_CLOCK_JUMP=7200:0.05 SIM_SEED=6 \
        SIM_SERVERS="port=10001,oneway=0.0005,expjitter=0.00005" sim_run 0.125 "NTS=127.0.0.1:10001"

[ "$(sim_count step)" = 0 ] || fail "a clock 50 ms off was stepped by the daemon: $(grep ' step ' "$SIM_REC")"
awk '$2 == "kclock" && $1 >= 600 { f = substr($4, 6) + 0; if (f > 1 || f < -1) { print; exit 1 } }' "$SIM_REC" ||
        fail "the kernel's frequency left 0 by more than 1 ppm on a perfect oscillator"
awk -v e="$(sim_clock_error)" 'BEGIN { exit !(e < 0.001 && e > -0.001) }' ||
        fail "the clock ends $(sim_clock_error) s off"
