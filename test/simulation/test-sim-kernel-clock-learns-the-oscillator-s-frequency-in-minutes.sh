#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An oscillator 50 ppm slow, the clock right at the start, one server on a LAN, the kernel clock
# model (SIM_CLOCK=kernel): the daemon estimates the frequency from its first samples and sets
# it (ADJ_FREQUENCY), so within ten minutes the kernel's frequency is within 1 ppm of +50 and
# stays there, and the clock within 1 ms. Without the frequency set the clock loses 3 ms
# per minute between samples. Loose correctness bounds: the figures are bench/accuracy.sh's.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

SIM_CLOCK=kernel SIM_CLOCK_ERROR=0 SIM_DRIFT=-50 SIM_WANDER=1e-9 SIM_SEED=4 \
        SIM_SERVERS="port=10001,oneway=0.0005,expjitter=0.00005" sim_run 0.02 "NTS=127.0.0.1:10001"

[ "$(sim_count step)" = 0 ] || fail "a clock right at the start was stepped: $(grep ' step ' "$SIM_REC")"
awk '$2 == "kclock" && $1 >= 600 { f = substr($4, 6) + 0; if (f > 51 || f < 49) { print; exit 1 } }' "$SIM_REC" ||
        fail "the kernel's frequency is not within 1 ppm of +50 after ten minutes"
awk '$2 == "kclock" && $1 >= 600 { o = substr($3, 8) + 0; if (o > 0.001 || o < -0.001) { print; exit 1 } }' "$SIM_REC" ||
        fail "the clock is more than 1 ms off after ten minutes"
