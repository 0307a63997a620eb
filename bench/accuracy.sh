#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/accuracy.sh [--quick] [--seeds N] [--hours H] [--conditions "NAME..."] [--clients "ours stock"]
#                   [--out DIR] [--build DIR]
# How close to true time the real binaries keep the clock (docs/ACCURACY.md, issue 34): ours
# and Debian 12's stock systemd-timesyncd (test/tools/fixtures/fetch-stock.sh), each on the simulation
# preload's kernel clock model (test/simulation/sim.sh, SIM_CLOCK=kernel), against the same
# simulated servers, network and oscillator, seed for seed. Ours speaks NTS, stock plain NTP;
# neither ever has CAP_SYS_TIME, no clock write reaches the kernel.
#
# Per run (client, condition, start, seed) one row of DIR/accuracy.tsv:
#   client condition start seed rms_s max_s freq_rms_ppm settle_s packets
# RMS and maximum |offset| from true time and RMS rate error (the model's per-second trace:
# the kernel's frequency and slewing included) from the first hour to the end, the last second
# outside 1 ms (LAN) or 10 ms (internet) over the whole run (bench/accuracy-stats.awk), and the
# NTP requests the client sent in the whole run. Then DIR/accuracy-offset.png (offset over the
# day, seed 1, lan-1 and internet-1, cold) and the median table, which replaces the part of
# DIR/ACCURACY.md between its "accuracy-table" markers.
#
# Default: every condition, 5 seeds, 24 h, DIR = docs/ (a few minutes: one simulated day takes
# about a second). --quick: lan-1 and internet-1 cold, seed 1, 2 h, into a temporary DIR that
# is printed, to check the harness. Runs as root (setpriv, mount namespaces), like the tests.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
export TSNTS_SRC_DIR=$SRC
export TSNTS_BUILD_DIR=${TSNTS_BUILD_DIR:-$SRC/build}
export TSNTS_PEERS_DIR=${TSNTS_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/timesyncd-nts/peers}
STATS=$SRC/bench/accuracy-stats.awk

ALL_CONDITIONS="lan-1 internet-1 internet-4 step-1s osc-300ppm server-change suspend-1h asym-10ms loss-5pct"
seeds=5 hours=24 conditions=$ALL_CONDITIONS clients="ours stock" out=$SRC/docs quick=false
while [ $# -gt 0 ]; do
        case $1 in
        --quick) quick=true; shift ;;
        --seeds) seeds=$2; shift 2 ;;
        --hours) hours=$2; shift 2 ;;
        --conditions) conditions=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --build) TSNTS_BUILD_DIR=$(cd "$2" && pwd); shift 2 ;;
        *) echo "usage: bench/accuracy.sh [--quick] [--seeds N] [--hours H] [--conditions \"...\"] [--clients \"ours stock\"] [--out DIR] [--build DIR]" >&2
           exit 2 ;;
        esac
done
if $quick; then
        seeds=1 hours=2 conditions="lan-1 internet-1"
        out=$(mktemp -d /tmp/accuracy-quick.XXXXXX)
        [ -e "$SRC/docs/ACCURACY.md" ] && cp "$SRC/docs/ACCURACY.md" "$out/"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source-path=SCRIPTDIR/../test/simulation
. "$SRC/test/simulation/sim-stock.sh"
sim_init
if [[ " $clients " == *" stock "* ]] && [ ! -x "$STOCK_TIMESYNCD" ]; then
        log "stock systemd-timesyncd not found (test/tools/fixtures/fetch-stock.sh $TSNTS_PEERS_DIR): ours only"
        clients=ours
fi

LAN="oneway=0.0005,expjitter=0.00005"
WAN="oneway=0.020,expjitter=0.002"

# condition_servers NAME: SIM_SERVERS of the condition. Four servers of one kind for
# internet-4; server-change: the first server goes silent for good after 6 h and the second,
# whose way back is 2 ms longer (its time looks 1 ms behind), is left.
condition_servers() {
        case $1 in
        lan-1) echo "port=10001,$LAN" ;;
        internet-4) echo "port=10001,$WAN;port=10002,$WAN;port=10003,$WAN;port=10004,$WAN" ;;
        server-change) echo "port=10001,$WAN,down=21600-1e9;port=10002,$WAN,asym=0.002" ;;
        asym-10ms) echo "port=10001,$WAN,asym=0.010" ;;
        loss-5pct) echo "port=10001,$WAN,loss=0.05" ;;
        *) echo "port=10001,$WAN" ;;
        esac
}

# The bound of the settling time: 1 ms on a LAN, 10 ms on the internet.
condition_bound() {
        case $1 in
        lan-*) echo 0.001 ;;
        *) echo 0.010 ;;
        esac
}

# The starts each condition is run from: (a), (b), (c) cold and warm, the others cold.
condition_starts() {
        case $1 in
        lan-1 | internet-1 | internet-4) echo cold warm ;;
        *) echo cold ;;
        esac
}

# start_env CONDITION START: the oscillator and the clock at the start. Cold: +100 ms, +20 ppm
# (step-1s: +1 s; osc-300ppm: +300 ppm); warm: the frequency already learned (0 ppm left) and
# +1 ms. Always a random walk of 1e-9 per second. Where a warm start finds the frequency
# differs by client: stock in the kernel, at 0 ppm, which the oscillator matches (stock keeps
# nothing across a reboot: this is a restart of it); ours in its state directory's frequency
# file, as an earlier day's run left it (warm_state), the kernel at 0 ppm as after a reboot.
# suspend-1h: the machine sleeps from 12 h to 13 h (MONOTONIC stops, BOOTTIME and the clock go
# on: sim.sh's SIM_SUSPEND).
start_env() {
        local error=0.1 drift=20 suspend=
        [ "$2" = warm ] && error=0.001 drift=0
        [ "$1" = step-1s ] && error=1
        [ "$1" = osc-300ppm ] && drift=300
        [ "$1" = suspend-1h ] && suspend=43200:3600
        echo "SIM_CLOCK_ERROR=$error SIM_DRIFT=$drift SIM_WANDER=1e-9 SIM_SUSPEND=$suspend"
}

# warm_state DIR: ours' state directory for a warm start, a frequency file as a run of the day
# before would have left it. Not exactly right: the oscillator's random walk of 1e-9 per
# second moves its frequency by about 0.3 ppm in a day, so the file is 0.3 ppm off the
# oscillator (+0.3 where 0 is right).
warm_state() {
        mkdir -p "$1"
        printf '+0.3000\n' >"$1/frequency"
}

# ours_conf SERVERS: our daemon's NTS= line for them.
ours_conf() {
        tr ';' '\n' <<<"$1" | sed -n 's/^port=\([0-9]*\).*/127.0.0.1:\1/p' | paste -sd' ' | sed 's/^/NTS=/'
}

# trace_of RECORD: the model's per-second trace as "SECONDS OFFSET_S RATE_PPM".
trace_of() {
        awk '$2 == "kclock" { print $1, substr($3, 8), substr($5, 6) }' "$1"
}

# one_run CLIENT CONDITION START SEED: the run, its row on stdout; its trace kept for the plot.
one_run() {
        local client=$1 cond=$2 start=$3 seed=$4 servers figures
        servers=$(condition_servers "$cond")
        # shellcheck disable=SC2046 # KEY=VALUE words
        export $(start_env "$cond" "$start")
        export SIM_CLOCK=kernel SIM_SEED=$seed SIM_SERVERS=$servers
        if [ "$client" = ours ]; then
                local state=
                if [ "$start" = warm ]; then
                        state=$TEST_TMPDIR/warm-state
                        warm_state "$state"
                fi
                SIM_STATE_FROM=$state sim_run "$(awk -v h="$hours" 'BEGIN { print h / 24 }')" "$(ours_conf "$servers")" >&2
        else
                stock_run "$(awk -v h="$hours" 'BEGIN { print h / 24 }')" >&2
        fi
        trace_of "$SIM_REC" >"$TEST_TMPDIR/trace"
        figures=$(awk -v from=3600 -v to="$((hours * 3600))" -v bound="$(condition_bound "$cond")" -f "$STATS" "$TEST_TMPDIR/trace")
        [ "$seed" != 1 ] || [ "$start" != cold ] || awk 'NR % 60 == 1' "$TEST_TMPDIR/trace" >"$TEST_TMPDIR/plot.$client.$cond"
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$client" "$cond" "$start" "$seed" "$figures" "$(sim_count request)"
}

tsv=$out/accuracy.tsv
printf 'client\tcondition\tstart\tseed\trms_s\tmax_s\tfreq_rms_ppm\tsettle_s\tpackets\n' >"$tsv"
begin=$SECONDS
for cond in $conditions; do
        for start in $(condition_starts "$cond"); do
                for seed in $(seq 1 "$seeds"); do
                        for client in $clients; do
                                one_run "$client" "$cond" "$start" "$seed" >>"$tsv"
                        done
                done
        done
done
log "$(($(wc -l <"$tsv") - 1)) runs of $hours simulated hours in $((SECONDS - begin)) s: $tsv"

# The medians over the seeds, ours beside stock and chronyd's anchor (docs/ACCURACY.md).
table() {
        awk -F'\t' -v hours="$hours" '
        function median(list,    a, n, i, j, t) {
                n = split(list, a, " ")
                for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
                return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        function ms(s) { return sprintf("%.3g", s * 1000) }
        function settle(s) { return s + 0 >= hours * 3600 - 1 ? "never" : sprintf("%d s", s) }
        NR == 1 { next }
        {
                k = $2 " " $3
                if (!(k in seen)) { seen[k] = 1; order[++n] = k }
                rms[$1, k] = rms[$1, k] " " $5; max[$1, k] = max[$1, k] " " $6; fr[$1, k] = fr[$1, k] " " $7
                st[$1, k] = st[$1, k] " " $8; pk[$1, k] = pk[$1, k] " " $9; runs[$1, k]++
        }
        END {
                anchor["lan-1 cold"] = "0.074 / 0.27, 131 s"
                anchor["internet-1 cold"] = "0.71 / 1.54"
                anchor["internet-4 cold"] = "0.69 / 1.51"
                print "| condition | start | ours: RMS / max (ms) | ours: freq RMS (ppm) | ours: settled | ours: packets | stock: RMS / max (ms) | stock: freq RMS (ppm) | stock: settled | stock: packets | chronyd 4.3: RMS / max (ms) |"
                print "|---|---|---|---|---|---|---|---|---|---|---|"
                for (i = 1; i <= n; i++) {
                        k = order[i]; split(k, kk, " ")
                        line = "| " kk[1] " | " kk[2]
                        for (c = 1; c <= 2; c++) {
                                cl = c == 1 ? "ours" : "stock"
                                if (runs[cl, k])
                                        line = line sprintf(" | %s / %s | %.3g | %s | %d", ms(median(rms[cl, k])), ms(median(max[cl, k])),
                                                            median(fr[cl, k]), settle(median(st[cl, k])), median(pk[cl, k]))
                                else
                                        line = line " | | | |"
                        }
                        print line " | " (k in anchor ? anchor[k] : "") " |"
                }
        }' "$tsv"
}
table >"$out/accuracy-table.md"
cat "$out/accuracy-table.md"

# The table and the commit into ACCURACY.md, between its markers.
if [ -e "$out/ACCURACY.md" ]; then
        commit=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)
        # Its own outputs aside.
        git -C "$SRC" diff --quiet HEAD -- . ':!docs/ACCURACY.md' ':!docs/accuracy.tsv' ':!docs/accuracy-offset.png' 2>/dev/null ||
                commit="$commit (with uncommitted changes)"
        awk -v table="$out/accuracy-table.md" -v head="Generated by \`bench/accuracy.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC from commit $commit: $seeds seeds, $hours simulated hours, figures from the first hour on, medians over the seeds." '
                /<!-- accuracy-table -->/ { print; print ""; print head; print ""; while ((getline l < table) > 0) print l; print ""; skip = 1; next }
                /<!-- \/accuracy-table -->/ { skip = 0 }
                !skip' "$out/ACCURACY.md" >"$out/ACCURACY.md.new"
        mv "$out/ACCURACY.md.new" "$out/ACCURACY.md"
fi
rm -f "$out/accuracy-table.md"

# Offset over the day, seed 1, cold: ours and stock on a LAN and on the internet.
if command -v gnuplot >/dev/null; then
        plots=() for_cond=""
        for cond in lan-1 internet-1; do
                [ -e "$TEST_TMPDIR/plot.ours.$cond" ] || continue
                for_cond+=" $cond"
        done
        if [ -n "$for_cond" ]; then
                {
                        echo 'set terminal pngcairo size 1000,700 font "DejaVu Sans,10" noenhanced'
                        echo "set output \"$out/accuracy-offset.png\""
                        echo "set multiplot layout $(wc -w <<<"$for_cond"),1 title \"Offset from true time, cold start (+100 ms, +20 ppm), seed 1 (bench/accuracy.sh)\""
                        echo 'set grid; set key top right; set xlabel "hours"; set ylabel "offset (ms)"'
                        echo 'set yrange [-50:110]'
                        for cond in $for_cond; do
                                plots=()
                                for client in $clients; do
                                        [ -e "$TEST_TMPDIR/plot.$client.$cond" ] &&
                                                plots+=("\"$TEST_TMPDIR/plot.$client.$cond\" using (\$1/3600):(\$2*1000) with lines title \"$client\"")
                                done
                                echo "set title \"$cond\""
                                (IFS=,; echo "plot ${plots[*]}")
                        done
                        echo 'unset multiplot'
                } | gnuplot
                log "plot: $out/accuracy-offset.png"
        fi
else
        log "gnuplot not installed (apt-get install gnuplot-nox): no plot"
fi
$quick && log "quick run: $out"
exit 0
