#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test/simulation/sim-fleet.sh [--seeds N] [--jobs J] [--tables] [--data DIR]: the fleet of docs/POOLS.md
# ("A fleet against one pool") played by the real daemon under sim-preload.so. Each seed is one
# client, an independent run of systemd-timesyncd against one simulated NTS server; the pool's
# load is the sum over the runs, scaled to a fleet of 100 000. The story, in the pool's time:
#   t = 0      power returns; the client boots at a random moment of the first 10 s, without
#              keys; the key-exchange server refuses connections for 10 minutes ("outage");
#   days 6-7   the renewal of the keys from that recovery;
#   day 6.5    the whole fleet restarts within 10 s, in the middle of its renewal window: warm
#              (state directory kept, then one more day) or cold (state lost, one hour);
# and, run apart, the same boot with a 1-hour outage ("long").
# Fails unless the daemon's fleet keeps what docs/POOLS.md says of it: no retry sooner than
# ConnectionRetrySec= after a failure; every client has keys within about the outage's length
# after its end, and the retries are spread; each renewal comes in the last day before the
# 7-day limit, at the time it drew (its own timer, not the next request); the renewals after
# the mass restart stay spread; a warm restart costs the pool almost nothing against a cold
# one. With --tables it prints the
# figures of docs/POOLS.md from these runs; with --data the key-exchange times of every client
# stay in DIR (one file per scenario: "SEED TIME ok|refused"). Runs as root (setpriv, like every scenario).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"

seeds=50 jobs=1 tables=false data=""
while [ $# -gt 0 ]; do
        case $1 in
        --seeds) seeds=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --tables) tables=true; shift ;;
        --data) data=$2; shift 2 ;;
        *) fail "usage: sim-fleet.sh [--seeds N] [--jobs J] [--tables] [--data DIR]" ;;
        esac
done

FLEET=100000                    # the fleet the sample stands for
SPREAD=10                       # seconds over which the fleet boots, and restarts
OUTAGE=600 LONG_OUTAGE=3600
DAY=86400
RESTART=$((13 * DAY / 2 + 60))  # the mass restart, in the pool's time: after every first run ended
RETRY=30                        # ConnectionRetrySec='s default
SLACK=60                        # how long a renewal may take after its drawn time

sim_init
W=${data:-$TEST_TMPDIR/fleet}
mkdir -p "$W"
W=$(cd "$W" && pwd)
T0=$SIM_START

# boot_offset SEED SALT: when in the SPREAD seconds this client (re)boots.
boot_offset() {
        awk -v s="$1" -v salt="$2" -v w=$SPREAD 'BEGIN { srand(s * 7 + salt); printf "%.6f", rand() * w }'
}

# client SCENARIO SEED: one run of one client. Appends "SEED TIME ok|refused" for each of its
# key-exchange connections to $W/SCENARIO.SEED (TIME: the pool's time, seconds since the power
# came back), and keeps the daemon's state directory for a warm restart. In a subshell: sim_run
# numbers its directory by SIM_N, made unique here.
client() {
        local scenario=$1 seed=$2 boot days down="" id start=$T0
        case $scenario in
        outage) id=1 boot=$(boot_offset "$seed" 0) days=6.5 down=$OUTAGE ;;
        long) id=2 boot=$(boot_offset "$seed" 0) days=0.125 down=$LONG_OUTAGE ;;
        warm | cold)
                id=3 boot=$(awk -v r=$RESTART -v b="$(boot_offset "$seed" 1)" 'BEGIN { printf "%.6f", r + b }')
                [ "$scenario" = cold ] && id=4
                # Its real time ran on from the first boot; the machines were off in between.
                start=$(awk -v t="$T0" -v b="$boot" -v b0="$(boot_offset "$seed" 0)" 'BEGIN { printf "%.0f", t + b - b0 }')
                days=1
                [ "$scenario" = cold ] && days=0.0417
                ;;
        esac
        (
                SIM_N=$((id * 1000000 + seed - 1)) SIM_SEED=$((id * 1000000 + seed)) SIM_START=$start
                # The server's NTP port (the key exchange names it, the state file keeps it)
                # and cookie key stay the same in the warm restart: one pool, up all along.
                SIM_SERVERS="port=10001,delay=0.02,jitter=0.001,ntp_port=${ntp_ports[seed]},cookie_key=$W/cookie-keys/$seed"
                # The outage in the client's own time, which starts at its boot.
                [ -z "$down" ] || SIM_SERVERS+=",down=0-$(awk -v d="$down" -v b="$boot" 'BEGIN { printf "%.6f", d - b }')"
                [ "$scenario" = warm ] && SIM_STATE_FROM=$W/state.$seed
                sim_run "$days" "NTS=127.0.0.1:10001" 2>>"$W/runs.log"
                awk -v s="$seed" -v b="$boot" '$2 == "ke-connect" { printf "%d %.6f %s\n", s, $1 + b, $5 == "refused" ? "refused" : "ok" }' \
                        "$SIM_REC" >"$W/$scenario.$seed"
                [ "$scenario" = outage ] && rm -rf "$W/state.$seed" && cp -a "$(dirname "$SIM_REC")/state" "$W/state.$seed"
                # A fleet's logs would fill the disk: the figures are in $W.
                rm -rf "$(dirname "$SIM_REC")"
        )
}

# scenario NAME: every seed's client, JOBS at a time; then $W/NAME holds all their lines.
scenario() {
        local name=$1 seed running=0
        for seed in $(seq 1 "$seeds"); do
                client "$name" "$seed" &
                running=$((running + 1))
                if [ "$running" -ge "$jobs" ]; then
                        wait -n || fail "$name: a client failed: $(grep FAIL "$W/runs.log" | tail -n 3)"
                        running=$((running - 1))
                fi
        done
        while [ "$running" -gt 0 ]; do
                wait -n || fail "$name: a client failed: $(grep FAIL "$W/runs.log" | tail -n 3)"
                running=$((running - 1))
        done
        for seed in $(seq 1 "$seeds"); do
                [ -f "$W/$name.$seed" ] || fail "$name: client $seed left no record"
                cat "$W/$name.$seed"
        done >"$W/$name"
        log "$name: $seeds clients, $(wc -l <"$W/$name") key-exchange connections"
}

# The servers, in the daemon's process, write their cookie keys as its user.
mkdir -p "$W/cookie-keys"
rm -f "$W/cookie-keys"/*
chmod 1777 "$W/cookie-keys"
declare -a ntp_ports
for seed in $(seq 1 "$seeds"); do
        ntp_ports[seed]=$(free_port)
done

started=$SECONDS
scenario outage
scenario warm
scenario cold
$tables && scenario long
log "the fleet ran in $((SECONDS - started)) s"

# ---- the properties ----

# No client retries sooner than ConnectionRetrySec= after a failure.
fast=$(for f in "$W/outage" "$W/long"; do [ ! -f "$f" ] || sort -k1,1n -k2,2g "$f" |
               awk -v r=$RETRY '$1 == s && prev == "refused" && $2 - t < r { print "client " $1 " at " $2 " s, " $2 - t " s after a failure" }
                                { s = $1; t = $2; prev = $3 }'; done | head -n 3)
[ -z "$fast" ] || fail "a retry sooner than ConnectionRetrySec=: $fast"

# The first retry of each client, after the refusal at boot, comes at the time its backoff drew
# (30 to 60 s later), not on a tick of the manager's ConnectionRetrySec= timer, which would
# bring a fleet that failed together back together: no 10 s hold more than half of them.
first_retries=$(sort -k1,1n -k2,2g "$W/outage" | awk '!n[$1]++ { next } n[$1] == 2 { print int($2 / 10) }' |
                sort | uniq -c | sort -rn | head -n 1)
[ "$(( ${first_retries% *} * 2))" -le "$seeds" ] ||
        fail "${first_retries% *} of $seeds first retries in the same 10 s (from $(( ${first_retries##* } * 10 )) s)"

# The first key exchange after the outage, per client: "SEED TIME".
first_ok() { awk '$3 == "ok" && !seen[$1]++ { print $1, $2 }' "$1"; }
first_ok "$W/outage" >"$W/keys"
[ "$(wc -l <"$W/keys")" = "$seeds" ] || fail "only $(wc -l <"$W/keys") of $seeds clients got keys after the outage"
late=$(awk -v o=$OUTAGE -v r=$RETRY '$2 - o > o + r { print "client " $1 " at " $2 " s" }' "$W/keys" | head -n 3)
[ -z "$late" ] || fail "keys later than the outage's length after its end: $late"
# Spread: no 10-second stretch after the outage holds more than a third of the fleet's retries.
bunched=$(awk -v o=$OUTAGE '$2 >= o { n[int(($2 - o) / 10)]++ } END { m = 0; for (b in n) if (n[b] > m) m = n[b]; print m }' "$W/outage")
[ "$((bunched * 3))" -le "$seeds" ] || fail "$bunched of $seeds clients came back in the same 10 s after the outage"

# A warm restart in the renewal window: no burst, only the renewals already due; a cold one
# costs every client a key exchange at once.
warm_hour=$(awk -v r=$RESTART '$2 < r + 3600' "$W/warm" | wc -l)
warm_minute=$(awk -v r=$RESTART '$2 < r + 60 + '$SPREAD "$W/warm" | wc -l)
cold_hour=$(wc -l <"$W/cold")
[ "$(awk -v r=$RESTART '$2 < r + 60 + '$SPREAD "$W/cold" | wc -l)" = "$seeds" ] || fail "a cold client did not run a key exchange at once"
[ "$((warm_minute * 10))" -le "$seeds" ] || fail "$warm_minute of $seeds warm clients ran a key exchange in the first minute"
log "warm restart: $warm_hour key exchanges in the first hour ($warm_minute in the first minute), cold: $cold_hour"

# Renewals: each key exchange after the first is 6 days to 7 days after the one before (a
# renewal starts at its drawn time, not with the next request, which could be 2048 s later),
# over the first run and the warm restart's; every client renewed once.
cat "$W/outage" "$W/warm" | sort -k1,1n -k2,2g | awk '$3 == "ok"' >"$W/ok"
awk -v d=$DAY '$1 == s { print $1, $2 - t, $2 } { s = $1; t = $2 }' "$W/ok" >"$W/renewals"
[ "$(wc -l <"$W/renewals")" = "$seeds" ] || fail "$(wc -l <"$W/renewals") renewals for $seeds clients in 7.5 days"
outside=$(awk -v d=$DAY -v s=$SLACK '$2 < 6 * d || $2 > 7 * d + s { print "client " $1 ": " $2 / d " days" }' "$W/renewals" | head -n 3)
[ -z "$outside" ] || fail "a renewal outside the last day before 7 days: $outside"
# busiest FILE: the most key exchanges of FILE ("SEED TIME ...") within any SPREAD seconds.
busiest() {
        awk '{ print $2 }' "$1" | sort -g |
                awk -v w=$SPREAD '{ t[NR] = $1; while (t[NR] - t[lo + 1] >= w) lo++; if (NR - lo > m) m = NR - lo } END { print m + 0 }'
}
# The clients of the warm restart poll in step from then on (they restarted within 10 s): the
# renewals still due after it must come at their drawn times, not in waves at those shared
# poll instants. At most a tenth of the fleet (and 2 of a small one) within any 10 s.
awk '$3 == "ok"' "$W/warm" >"$W/warm-renewals"
wave=$(busiest "$W/warm-renewals")
[ "$wave" -le 2 ] || [ "$((wave * 10))" -le "$seeds" ] ||
        fail "$wave of the $(wc -l <"$W/warm-renewals") renewals after the warm restart within 10 s"
log "renewals: latest $(sort -k2,2g "$W/renewals" | awk -v d=$DAY 'END { printf "%.4f", $2 / d }') days after the key exchange; after the warm restart at most $wave within 10 s"
# Spread over the window, not in one place: the fleet's renewals span more than half a day.
span=$(awk '{ if (!n++ || $3 < lo) lo = $3; if ($3 > hi) hi = $3 } END { print hi - lo }' "$W/renewals")
awk -v s="$span" -v d=$DAY 'BEGIN { exit !(s > d / 2) }' || fail "the renewals span only $span s"

$tables || exit 0

# ---- the tables of docs/POOLS.md ----

# peak FILE FROM TO BIN: the busiest BIN seconds of key-exchange connections between FROM and
# TO, per second, scaled to the fleet.
peak() {
        awk -v a="$2" -v b="$3" -v w="$4" -v f=$FLEET -v n="$seeds" \
                '$2 >= a && $2 < b { c[int(($2 - a) / w)]++ } END { m = 0; for (i in c) if (c[i] > m) m = c[i]; r = m * f / n / w; printf r < 10 ? "%.1f" : "%.0f", r }' "$1"
}
# count FILE FROM TO: key-exchange connections between FROM and TO, scaled to the fleet.
count() { awk -v a="$2" -v b="$3" -v f=$FLEET -v n="$seeds" '$2 >= a && $2 < b { c++ } END { printf "%.0f", c * f / n }' "$1"; }
# keys FILE OUTAGE: minutes after the outage's end until 50 %, 99 % and all had keys.
keys() {
        first_ok "$1" | awk -v o="$2" '{ print ($2 - o) / 60 }' | sort -g |
                awk '{ v[NR] = $1 } END { printf "%.1f / %.1f / %.1f", v[int((NR - 1) * 0.5) + 1], v[int((NR - 1) * 0.99) + 1], v[NR] }'
}
echo
echo "The daemon's fleet: $seeds clients scaled to $FLEET (peaks: the busiest 10 s, per second)."
echo
echo "| outage | boot: peak /s | after the outage: peak /s | mean /s in its first hour | keys after the outage (min): 50 % / 99 % / all |"
echo "|---|---|---|---|---|"
for o in $OUTAGE $LONG_OUTAGE; do
        f=$W/outage
        [ "$o" = $LONG_OUTAGE ] && f=$W/long
        printf '| %d min | %s | %s | %s | %s |\n' $((o / 60)) "$(peak "$f" 0 $SPREAD 10)" "$(peak "$f" "$o" $((o + 3600)) 10)" \
                "$(awk -v c="$(count "$f" "$o" $((o + 3600)))" 'BEGIN { printf "%.1f", c / 3600 }')" "$(keys "$f" "$o")"
done
awk '{ print $1, $3, "ok" }' "$W/renewals" >"$W/renewal-times"
echo
echo "| renewal: first / last (days after the key exchange) | after 7 days | busiest hour /s | busiest 10 s /s | warm restart at day 6.5: KEs in 1 h (busiest 10 s /s) | cold restart: KEs in 1 h (busiest 10 s /s) |"
echo "|---|---|---|---|---|---|"
printf '| %s | %s of %s | %s | %s | %s (%s) | %s (%s) |\n' \
        "$(sort -k2,2g "$W/renewals" | awk -v d=$DAY 'NR == 1 { a = $2 } { b = $2 } END { printf "%.3f / %.3f", a / d, b / d }')" \
        "$(awk -v d=$DAY '$2 > 7 * d' "$W/renewals" | wc -l)" "$seeds" \
        "$(peak "$W/renewal-times" $((6 * DAY)) $((8 * DAY)) 3600)" "$(peak "$W/renewal-times" $((6 * DAY)) $((8 * DAY)) 10)" \
        "$(count "$W/warm" $RESTART $((RESTART + 3600)))" "$(peak "$W/warm" $RESTART $((RESTART + 3600)) 10)" \
        "$(count "$W/cold" $RESTART $((RESTART + 3600)))" "$(peak "$W/cold" $RESTART $((RESTART + 3600)) 10)"
