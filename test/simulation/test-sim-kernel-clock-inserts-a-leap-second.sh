#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A leap second inserted at the next midnight UTC, on the kernel clock backend: the server
# announces it for hours before and half an hour after (leap=A-B), and its time repeats
# 23:59:59 as a POSIX clock does (jump=MIDNIGHT:-1). The daemon arms STA_INS through its vote,
# the kernel model goes TIME_INS, inserts the second at midnight (TIME_OOP, the clock a second
# behind true time, which has no leap) and waits (TIME_WAIT) until the daemon stops arming it;
# the daemon never steps, its clock-change watch wakes it at the leap, and its clock stays with
# the server's.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

# The run starts at SIM_START (now): the next midnight UTC is so many seconds in.
midnight=$((86400 - SIM_START % 86400))
from=$((midnight > 20000 ? midnight - 20000 : 0))
SIM_CLOCK=kernel SIM_SEED=8 \
        SIM_SERVERS="port=10001,delay=0.001,jitter=0.0001,leap=$from-$((midnight + 1800)),jump=$midnight:-1" \
        sim_run "$(awk -v m="$midnight" 'BEGIN { printf "%.6f", (m + 7200) / 86400 }')" "NTS=127.0.0.1:10001"

[ "$(sim_count step)" = 0 ] || fail "a step: $(grep ' step ' "$SIM_REC")"
awk -v m="$midnight" '$2 == "kclock" && $1 < m && $7 == "state=INS" { found = 1 } END { exit !found }' "$SIM_REC" ||
        fail "the kernel never armed the insertion before midnight ($midnight s)"
awk -v m="$midnight" '$2 == "kclock" && $1 >= m && $1 <= m + 1 && $7 == "state=OOP" { found = 1 } END { exit !found }' "$SIM_REC" ||
        fail "no TIME_OOP at midnight: $(awk -v m="$midnight" '$2 == "kclock" && $1 >= m - 1 && $1 <= m + 2' "$SIM_REC")"
# The leap second is a clock change (the kernel's clock_was_set()): the daemon's watch wakes it
# at midnight, and it resynchronizes.
awk -v m="$midnight" -v t="$(sim_log_times "System clock changed" | head -n 1)" 'BEGIN { exit !(t != "" && t >= m - 0.1 && t <= m + 1) }' ||
        fail "the clock-change watch fired at '$(sim_log_times "System clock changed")', not at midnight ($midnight s)"
# A second behind true time from midnight on, give or take the loop's milliseconds; and back
# to TIME_OK once the announcement is over.
awk -v m="$midnight" '$2 == "kclock" && $1 >= m + 2 { o = substr($3, 8) + 1; if (o > 0.005 || o < -0.005) { print; exit 1 } }' "$SIM_REC" ||
        fail "the clock left the server's time after the leap second"
[ "$(sim_end_field kclock_state)" = OK ] || fail "the clock ends in state $(sim_end_field kclock_state)"
