#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The network of the accuracy benchmark (sim-preload.c, packet_delay()): per direction a base
# delay plus a jitter times an exponential draw, the way back longer by asym=. Seen from both
# ends: in the record, every request reaches the server no sooner than the base delay, and the
# mean excess is the jitter's; in the daemon, whose clock starts right, the first measured offset
# is minus half the asymmetry (the way back 10 ms longer makes the server's time look 5 ms
# behind), as NTP's arithmetic says.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

SIM_CLOCK=kernel SIM_SEED=3 SIM_SERVERS="port=10001,oneway=0.02,expjitter=0.0002,asym=0.01" \
        sim_run 1 "NTS=127.0.0.1:10001"

# The request's way out: from its send to the server's answer, which is at once.
awk '$2 == "request" { sent = $1 }
     $2 == "reply" { d = $1 - sent - 0.02; n++; sum += d; if (d < -1e-6) bad++ }
     END { printf "%d requests, mean excess %.6f s, %d under the base delay\n", n, sum / n, bad
           exit !(n >= 30 && !bad && sum / n > 0.0001 && sum / n < 0.0003) }' "$SIM_REC" >&2 ||
        fail "the way out is not 20 ms plus an exponential jitter of mean 0.2 ms"

awk '$2 == "slew" { o = $3 + 0; exit !(o > -0.0056 && o < -0.0044) }' "$SIM_REC" ||
        fail "the first measured offset is not about -5 ms: $(grep -m1 ' slew ' "$SIM_REC")"
