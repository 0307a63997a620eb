#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The statistics step of bench/accuracy.sh (bench/accuracy-stats.awk) on a synthetic trace whose
# figures are known by hand: two hours, the first outside the window and outside the bound.
#   t < 1000       offset +2 ms, rate 50 ppm (outside the window: must not count)
#   t = 2000       offset -1.5 ms: the last second outside 1 ms, so settle = 2000
#   3600 <= t      offset alternating +-0.5 ms, but -1 ms at 4000 and +1 ms at 5000 (not outside
#                  the bound: that is "> 1 ms"); rate alternating +-0.1 ppm
# Window [3600, 7200): 3600 samples, mean square (3598 * 0.25 + 2 * 1) / 3600 = 0.2504167 ms^2,
# RMS 0.500416 ms, max 1 ms, rate RMS 0.1 ppm.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../lib
. "$(dirname "$0")/../lib/common.sh"
test_init

STATS=$TSNTS_SRC_DIR/bench/accuracy-stats.awk

awk 'BEGIN {
        for (t = 0; t < 7200; t++) {
                o = t < 1000 ? 0.002 : t % 2 ? 0.0005 : -0.0005; r = t < 1000 ? 50 : t % 2 ? 0.1 : -0.1
                if (t == 2000) o = -0.0015
                if (t == 4000) o = -0.001
                if (t == 5000) o = 0.001
                printf "%d %.9f %.6f\n", t, o, r
        }
        print "# a comment line and a record line are skipped"
        print "7200 step +0.1"
}' >"$TEST_TMPDIR/trace"

check() {
        local got
        got=$(awk -v from=3600 -v to=7200 -v bound=0.001 -f "$STATS" "$TEST_TMPDIR/trace")
        [ "$got" = "$(printf '0.000500416\t0.001000000\t0.100000\t2000')" ] ||
                fail "statistics of the known trace: got '$got'"
}
run_case check

# The window matters: from 0 the first second's +2 ms and 50 ppm count.
window() {
        local got
        got=$(awk -v from=0 -v to=7200 -v bound=0.001 -f "$STATS" "$TEST_TMPDIR/trace" | cut -f2,3)
        [ "$got" = "$(printf '0.002000000\t%s' "$(awk 'BEGIN { printf "%.6f", sqrt((1000 * 2500 + 6200 * 0.01) / 7200) }')")" ] ||
                fail "statistics from 0: got '$got'"
}
run_case window

# A bound of 10 ms: never outside, settle 0. An empty window fails loudly.
bounds() {
        local got
        got=$(awk -v from=3600 -v to=7200 -v bound=0.01 -f "$STATS" "$TEST_TMPDIR/trace" | cut -f4)
        [ "$got" = 0 ] || fail "settle with a 10 ms bound: got '$got'"
        ! awk -v from=9000 -v to=9999 -v bound=0.01 -f "$STATS" "$TEST_TMPDIR/trace" 2>/dev/null ||
                fail "a window without samples gave figures"
}
run_case bounds
