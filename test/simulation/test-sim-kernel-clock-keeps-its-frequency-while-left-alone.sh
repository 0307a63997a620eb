#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Two servers over the internet, a cold start (+100 ms, an oscillator +20 ppm) on the kernel
# clock model; the first server goes silent for good after 2 h. One of two is no majority, so
# the clock is left alone from then on (the quorum is a rule against a lying server), but not
# on a free oscillator: the kernel keeps the frequency the discipline learned (about -20 ppm,
# STA_FREQHOLD keeps the PLL from moving it), so the clock drifts only by the oscillator's
# wander and what the fitted frequency missed (2 ms by the end on this seed), where a kernel frequency
# back at 0 would carry it 20 ppm away (115 ms).
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

SIM_CLOCK=kernel SIM_CLOCK_ERROR=0.1 SIM_DRIFT=20 SIM_WANDER=1e-9 SIM_SEED=1 \
        SIM_SERVERS="port=10001,oneway=0.020,expjitter=0.002,down=7200-1e9;port=10002,oneway=0.020,expjitter=0.002" \
        sim_run 0.15 "NTS=127.0.0.1:10001 127.0.0.1:10002"

sim_log_has "clock left alone" || fail "the clock was not left alone with one server of two: $(tail -n 5 "$SIM_LOG")"
# After the last adjustment (the first one after 2 h that the set could not make): the kernel's
# frequency stays the learned one, and the clock stays within 5 ms.
bad=$(awk '$2 == "kclock" && $1 >= 9000 { f = substr($4, 6) + 0; o = substr($3, 8) + 0
                                           if (f > -19 || f < -21 || o > 0.005 || o < -0.005) { print $1, f, o; exit } }' "$SIM_REC")
[ -z "$bad" ] || fail "while the clock was left alone it left the learned frequency or drifted (time, ppm, s): $bad"
last=$(awk '$2 == "slew" { t = $1 } END { print int(t) }' "$SIM_REC")
[ "$last" -lt 9000 ] || fail "the clock was still adjusted at $last s, with one server of two"
