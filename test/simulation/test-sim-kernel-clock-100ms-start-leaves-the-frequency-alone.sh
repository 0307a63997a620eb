#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A clock 100 ms fast on a perfect oscillator, one server on a LAN, the kernel clock model
# (SIM_CLOCK=kernel): the daemon slews the 100 ms as a phase, outside the kernel PLL's
# integrator (STA_FREQHOLD), and sets the frequency itself. So the kernel's frequency never
# leaves 0 by more than a few ppm while the first samples are fitted, and by more than one from
# the tenth minute on (fed to the integrator, the 100 ms wound it to about -40 ppm),
# and the slew is done within minutes (with the time constant log2(poll) the phase took an
# e-fold per two minutes: still over 1 ms after five). Loose correctness bounds: the figures
# are bench/accuracy.sh's.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

SIM_CLOCK=kernel SIM_CLOCK_ERROR=0.1 SIM_DRIFT=0 SIM_WANDER=0 SIM_SEED=3 \
        SIM_SERVERS="port=10001,oneway=0.0005,expjitter=0.00005" sim_run 0.02 "NTS=127.0.0.1:10001"

[ "$(sim_count step)" = 0 ] || fail "a clock 100 ms off was stepped: $(grep ' step ' "$SIM_REC")"
awk '$2 == "kclock" { f = substr($4, 6) + 0; b = $1 >= 600 ? 1 : 10; if (f > b || f < -b) { print; exit 1 } }' "$SIM_REC" ||
        fail "the kernel's frequency left 0 on a perfect oscillator"
awk '$2 == "kclock" && $1 >= 300 { o = substr($3, 8) + 0; if (o > 0.001 || o < -0.001) { print; exit 1 } }' "$SIM_REC" ||
        fail "the clock is more than 1 ms off after 300 s"
