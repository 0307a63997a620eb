#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian 12's stock systemd-timesyncd (test/tools/fixtures/fetch-stock.sh; skipped without it) runs under
# the simulation preload on the kernel clock model (sim-stock.sh), as bench/accuracy.sh runs it
# beside ours: it gets plain NTP answers from the simulated server, without CAP_SYS_TIME and
# without a clock write reaching the kernel, and disciplines the model's clock as its source
# says: a 0.1 s error slewed through the kernel PLL with the time constant log2(poll) - 4 of
# each poll, a 1 s error stepped once; and one seed gives one record.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim-stock.sh"
sim_init
stock_init

LAN="port=10001,oneway=0.0005,expjitter=0.00005"

# Every slew's time constant against the poll interval it comes with (stock sets the next
# interval, then adjusts the clock: the interval until its next request), and the server
# answered every request in plain NTP.
slews_follow_the_poll() {
        SIM_SERVERS=$LAN SIM_CLOCK_ERROR=0.1 SIM_DRIFT=20 stock_run 0.25
        local requests plain bad
        requests=$(sim_count request)
        plain=$(sim_server_field 0 plain)
        [ "$requests" -ge 8 ] || fail "stock sent $requests requests in 6 h"
        [ "$plain" = "$requests" ] || fail "$plain plain answers to $requests requests"
        [ "$(sim_count step)" = 0 ] || fail "a 0.1 s error was stepped: $(grep ' step ' "$SIM_REC")"
        bad=$(awk '$2 == "slew" { tc = substr($4, 4) + 0; at = $1 }
                   $2 == "request" && tc != "" { p = substr($5, 10) + 0; want = int(log(p) / log(2) + 0.5) - 4
                                                 if (tc != want) print at, "tc", tc, "next poll", p, "want", want
                                                 tc = "" }' "$SIM_REC")
        [ -z "$bad" ] || fail "time constants that are not log2(poll) - 4: $bad"
        [ "$(sim_count slew)" -ge 8 ] || fail "only $(sim_count slew) slews"
        # The loop closed: the +20 ppm oscillator and the 0.1 s are mostly gone after 6 h.
        awk -v o="$(sim_end_field kclock_offset)" 'BEGIN { exit !(o < 0.01 && o > -0.01) }' ||
                fail "stock's clock is still off at the end: $(grep ' end ' "$SIM_REC")"
}
run_case slews_follow_the_poll

stepped_once() {
        SIM_SERVERS=$LAN SIM_CLOCK_ERROR=1 stock_run 0.05
        [ "$(sim_count step)" = 1 ] || fail "a 1 s error gave $(sim_count step) steps"
        awk '$2 == "step" { o = substr($4, 8) + 0; exit !(o < 0.002 && o > -0.002) }' "$SIM_REC" ||
                fail "the step did not bring the clock within 2 ms: $(grep ' step ' "$SIM_REC")"
}
run_case stepped_once

# One seed, one run, line for line, as for ours, also when stock resolves a second server: the
# resolver's workers hold virtual time from a query's send until they answered (sim-preload.c,
# worker_state); before, the first request came at 0 s in most runs and after a 5-minute timer
# in others, and a switch to the second server came some 40 minutes late.
one_seed_one_record() {
        local first servers="$LAN,down=50-1e9;${LAN/10001/10002}"
        SIM_SERVERS=$servers SIM_CLOCK_ERROR=0.1 SIM_DRIFT=20 SIM_SEED=3 stock_run 0.01
        first=$SIM_REC
        [ "$(sim_count request 1)" -ge 1 ] || fail "stock never turned to the second server"
        for _ in 1 2 3 4 5 6 7; do
                SIM_SERVERS=$servers SIM_CLOCK_ERROR=0.1 SIM_DRIFT=20 SIM_SEED=3 stock_run 0.01
                cmp -s "$first" "$SIM_REC" || fail "two runs of one seed differ: $(diff "$first" "$SIM_REC" | head -n 6)"
        done
}
run_case one_seed_one_record
