#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The qemu guest's 50 ms start (fifty_ms_start_suite of test/mkosi/guest/usr/local/lib/
# nts-test/guest-checks.sh) in simulated time, on the kernel clock model (SIM_CLOCK=kernel): the
# clock 50 ms ahead, slewed (under the 0.4 s step), a perfect oscillator, the kernel's
# frequency 0 at the start, one NTS server on the guest's loopback as emulation makes it (a few
# milliseconds each way, expect-50ms-start.txt says why). From each time after the first
# synchronization that expect-50ms-start.txt lists to the end of the guest's five minutes, the
# clock's offset from true time, the phase the kernel still has to slew and the kernel's
# frequency stay within that row's bounds, in every seed: the guest holds its kernel to the
# same bounds at those times, so that what the guest measures is what the simulation says.
# Without the phase kept out of the integrator and slewed over a quarter of the poll interval
# the phase is still 13 ms off at 120 s. Loose correctness bounds: the figures are
# docs/ACCURACY.md's.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

expect=$(dirname "$0")/expect-50ms-start.txt
[ -f "$expect" ] || fail "no $expect"

for seed in 1 2 3 4 5 6 7 8; do
        SIM_CLOCK=kernel SIM_CLOCK_ERROR=0.05 SIM_DRIFT=0 SIM_WANDER=0 SIM_SEED=$seed \
                SIM_SERVERS="port=10001,oneway=0.001,expjitter=0.004" sim_run 0.0035 "NTS=127.0.0.1:10001"
        [ "$(sim_count step)" = 0 ] || fail "seed $seed: a clock 50 ms off was stepped: $(grep ' step ' "$SIM_REC")"
        # Every trace line from a row's time after the first slew on, against that row.
        awk -v seed=$seed 'FNR == NR { if (!/^#/ && NF) { n++; after[n] = $1; omax[n] = $2; pmax[n] = $3; fmax[n] = $4 }; next }
             $2 == "slew" && t0 == "" { t0 = $1 }
             $2 == "kclock" && t0 != "" {
                     o = substr($3, 8) + 0; f = substr($4, 6) + 0; p = substr($6, 7) + 0
                     for (i = 1; i <= n; i++)
                             if ($1 - t0 >= after[i] && (o > omax[i] || -o > omax[i] || p > pmax[i] || -p > pmax[i] ||
                                                         f > fmax[i] || -f > fmax[i])) {
                                     printf "seed %d, %.0f s after the first sync, bounds of %s s: %s\n", seed, $1 - t0, after[i], $0
                                     bad = 1
                                     exit 1
                             }
             }
             END { if (t0 == "") { print "seed " seed ": no slew"; exit 1 }; exit bad }' "$expect" "$SIM_REC" ||
                fail "the 50 ms start left the bounds of $expect"
done
