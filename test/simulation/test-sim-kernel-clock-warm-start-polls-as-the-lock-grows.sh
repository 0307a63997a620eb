#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A warm start over the internet (one server 20 ms + 2 ms away, the clock +1 ms off, the
# oscillator's frequency already right) on the kernel clock model: the poll interval grows as
# the filter says and as far as the lock allows, the lock being the one of the steer that this
# very sample led to. Judged only against the lock of the sample before, a level the filter
# let grow fell back to where it was and stayed there a whole interval more, though the new
# lock allowed it (seeds 1 and 3: 14 requests in the first 3000 s each, and 2048 s polls from
# 4451 s on for seed 3; now 12 and 12, 2048 s from 3330 and 3490 s on).
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

for seed in 1 3; do
        SIM_CLOCK=kernel SIM_CLOCK_ERROR=0.001 SIM_DRIFT=0 SIM_WANDER=1e-9 SIM_SEED=$seed \
                SIM_SERVERS="port=10001,oneway=0.020,expjitter=0.002" sim_run 0.07 "NTS=127.0.0.1:10001"

        early=$(awk '$2 == "request" && $1 < 3000' "$SIM_REC" | wc -l)
        [ "$early" -le 12 ] || fail "seed $seed: $early requests in the first 3000 s of a warm start"
        # From the first 2048 s interval on, the level stays.
        first=$(awk '$2 == "request" { if (n++ && $1 - p >= 2047) { print int(p); exit } p = $1 }' "$SIM_REC")
        if [ -z "$first" ] || [ "$first" -gt 3600 ]; then
                fail "seed $seed: 2048 s polls only from ${first:-never} s on"
        fi
        [ "$(sim_count step)" = 0 ] || fail "seed $seed: a 1 ms start was stepped"
done
