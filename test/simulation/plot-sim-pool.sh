#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test/simulation/plot-sim-pool.sh SIM_POOL: runs the fleet simulation (sim-pool.c) with its
# defaults, draws docs/sim-pool.png with gnuplot (gnuplot-nox), and prints the tables of
# docs/POOLS.md ("A fleet against one pool"): the default case, then the ratio of the peaks
# after the outage for other boot spreads and outage lengths. `ninja -C build sim-pool-plot`.
# Simulated time only: no network, no daemon, about half a minute.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
SIM=${1:?usage: plot-sim-pool.sh PATH-TO-sim-pool}
PNG=$SRC/docs/sim-pool.png
command -v gnuplot >/dev/null || { echo "gnuplot is needed (apt-get install gnuplot-nox)" >&2; exit 1; }

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

"$SIM" --data "$W/sim" | tee "$W/default.md"

# One line per case: the columns "after the outage: peak /s" and "keys after the outage" of
# both schedules. sim-pool fails its own checks for some of these cases (that is the point of
# the table), so its exit status is not looked at here.
row() {
        local label=$1
        shift
        { "$SIM" "$@" 2>/dev/null || true; } | awk -F'|' -v label="$label" '
                function trim(s) { gsub(/^ +| +$/, "", s); return s }
                $2 ~ /deterministic/ { fp = $4 + 0; fk = trim($6) }
                $2 ~ /jitter/ { jp = $4 + 0; jk = trim($6) }
                END { printf "| %s | %d | %d | %.1f | %s | %s |\n", label, fp, jp, fp / (jp ? jp : 1), fk, jk }'
}
echo
echo "| case | peak /s deterministic | peak /s jitter | ratio | keys after (min) deterministic | keys after (min) jitter |"
echo "|---|---|---|---|---|---|"
for b in 1 10 30 60 120; do
        row "boot spread $b s, outage 10 min" --boot-spread "$b"
done
for o in 120 1800 3600; do
        row "boot spread 10 s, outage $((o / 60)) min" --outage "$o"
done
row "boot spread 10 s, outage 10 min, pool without a capacity limit" --capacity 0

gnuplot <<EOF
set terminal pngcairo size 1000,1050 font "DejaVu Sans,10" noenhanced
set output "$PNG"
set multiplot layout 3,1 title "100 000 NTS clients against one key-exchange pool (sim-pool, simulated time)"
set grid
set key top right
set logscale y
set yrange [0.5:*]

set title "Power returns at 0 s, the fleet boots within 10 s, the pool is unreachable until 600 s (capacity 2000 key exchanges/s)"
set xlabel "seconds"
set ylabel "key exchanges per second"
set xrange [0:4800]
set arrow 1 from 600, graph 0 to 600, graph 1 nohead dashtype 2
plot "$W/sim-recovery.dat" using 1:(\$2 > 0 ? \$2 : 1/0) with impulses lc rgb "#c0392b" title "deterministic (30 s doubling)", \
     "" using 1:(\$3 > 0 ? \$3 : 1/0) with lines lc rgb "#2471a3" title "jitter (timesyncd-backoff)"
unset arrow 1

set title "The weekly renewal of those keys (per second, mean of each minute)"
set xlabel "days"
set xrange [5.5:8]
set yrange [0.01:*]
plot "$W/sim-renewal.dat" using 1:(\$2 > 0 ? \$2 : 1/0) with lines lc rgb "#c0392b" title "deterministic (7 days, at the next poll)", \
     "" using 1:(\$3 > 0 ? \$3 : 1/0) with lines lc rgb "#2471a3" title "jitter (the last day before 7 days)"

set title "Day 10: the whole fleet restarts within 10 s (jittered schedule)"
set xlabel "seconds after the restart"
set xrange [-60:600]
unset logscale y
set yrange [0:*]
plot "$W/sim-restart.dat" using 1:2 with impulses lc rgb "#7d3c98" title "cold: state files lost", \
     "" using 1:3 with lines lw 2 lc rgb "#1e8449" title "warm: cookies and keys in the state file (0 key exchanges)"
unset multiplot
EOF
echo
echo "wrote $PNG"
