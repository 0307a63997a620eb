#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# adjtimex-script-compare.sh KERNEL MODEL: compares two outputs of adjtimex-script (the
# kernel's, the model's) second by second: the clock state, status, maxerror, time constant and
# adjtime()'s remainder exactly, the frequency to 1 (ppm << 16, the kernel's rounding), the
# offset to 2 ns plus 1e-6 of it (the kernel slews each second in two NTP intervals, the model
# in one). A line read away from half past its second (at= outside 100..900 ms) is left out;
# more than 10 such lines fail. Prints one summary line; exit 0 when they agree.
set -euo pipefail

[ $# = 2 ] || { echo "usage: $0 KERNEL MODEL" >&2; exit 2; }
paste -d ' ' "$1" "$2" | awk '
        function v(f) { sub(/^[a-z]+=/, "", f); return f }
        function abs(x) { return x < 0 ? -x : x }
        NF != 18 || $1 != $10 { printf "line %d: the outputs do not line up: %s\n", NR, $0; bad = 1; exit }
        v($9) < 100 || v($9) > 900 { late++; next }
        {
                n++
                for (i = 2; i <= 8; i++) {
                        if (i == 3) {
                                d = abs(v($3) - v($12))
                                if (d > 2 + abs(v($12)) * 1e-6) { printf "second %s: offset %s, model %s\n", $1, v($3), v($12); bad = 1 }
                                if (d > maxoff) maxoff = d
                        } else if (i == 4) {
                                d = abs(v($4) - v($13))
                                if (d > 1) { printf "second %s: freq %s, model %s\n", $1, v($4), v($13); bad = 1 }
                                if (d > maxfreq) maxfreq = d
                        } else if ($i != $(i + 9)) {
                                printf "second %s: %s, model %s\n", $1, $i, $(i + 9); bad = 1
                        }
                }
        }
        END {
                if (late > 10) { printf "%d lines read away from half past the second\n", late; bad = 1 }
                printf "%d seconds compared, %d left out; largest difference: offset %d ns, freq %d (ppm << 16)\n",
                       n, late, maxoff, maxfreq
                exit bad
        }'
