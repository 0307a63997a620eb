#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An oscillator 50 ppm fast (and, in a second run, 120 ppm slow) under one honest NTS server
# for two simulated days: the daemon's slews through the kernel's PLL (whose time constant it
# matches to the poll interval) teach the kernel the frequency error to within 1 ppm, the clock
# ends within 2 ms without a step, and the poll interval still climbs to 2048 s.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

for drift in 50 -120; do
        SIM_SERVERS="port=10001,delay=0.02,jitter=0.001" SIM_DRIFT=$drift SIM_SEED=17 sim_run 2 "NTS=127.0.0.1:10001"
        freq=$(sim_end_field freq_ppm)
        awk -v f="$freq" -v d="$drift" 'BEGIN { e = f + d; exit !(e < 1 && e > -1) }' ||
                fail "drift $drift ppm: the kernel frequency ends at $freq ppm"
        [ "$(sim_end_field steps)" = 0 ] || fail "drift $drift ppm: the clock was stepped: $(grep ' step ' "$SIM_REC")"
        awk -v e="$(sim_end_field clock_error)" 'BEGIN { exit !(e < 0.002 && e > -0.002) }' ||
                fail "drift $drift ppm: the clock ends $(sim_end_field clock_error) s off"
        awk '$2 == "request" && $5 ~ /^interval=204[0-9]/ { n++ } END { exit !(n >= 10) }' "$SIM_REC" ||
                fail "drift $drift ppm: the poll interval did not settle at 2048 s"
done
