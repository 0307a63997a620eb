#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An oscillator 50 ppm fast (and, in a second run, 120 ppm slow) under one honest NTS server
# for a simulated day. The fake clock records slews without applying them, so the clock runs
# away from true time at that rate: every slew the daemon asks for is the clock's true error at
# that moment to within a millisecond, and each time the error reaches 0.4 s the daemon steps
# the clock back by the error as measured, 10 (25) times in the day. At each request the clock
# is no more than 0.4 s off plus what it drifted since the request before.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

for drift in 50 -120; do
        SIM_SERVERS="port=10001,delay=0.02,jitter=0.001" SIM_DRIFT=$drift SIM_SEED=17 sim_run 1 "NTS=127.0.0.1:10001"
        # The daemon's clock minus true time at TIME: the drift so far plus the fake clock's offset.
        steps=$(awk -v d="$drift" 'function error(t) { return d * 1e-6 * t + o }
                function off(x) { return x > 0.001 || x < -0.001 }
                $2 == "step" { if (off($3 + error($1)) || ($3 < 0.4 && $3 > -0.4)) { print "bad: " $0; exit }
                               o = substr($4, 8) + 0; n++ }
                $2 == "slew" && off($3 + error($1)) { print "bad: " $0; exit }
                $2 == "request" { limit = 0.4 + 0.001 + (d < 0 ? -d : d) * 1e-6 * substr($5, 10)
                                  if (error($1) > limit || error($1) < -limit) { print "bad: " $0 " error " error($1); exit } }
                END { print n + 0 }' "$SIM_REC")
        expected=$(awk -v d="$drift" 'BEGIN { d = d < 0 ? -d : d; printf "%d", d * 1e-6 * 86400 / 0.4 }')
        [ "$steps" = "$expected" ] || fail "drift $drift ppm: $steps, not $expected steps of 0.4 s"
        awk -v e="$(sim_clock_error)" 'BEGIN { exit !(e < 0.5 && e > -0.5) }' ||
                fail "drift $drift ppm: the clock ends $(sim_clock_error) s off"
done
