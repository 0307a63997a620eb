# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Scenarios of the real daemon in simulated time (sim-preload.c; docs/ARCHITECTURE.md, "The
# daemon in simulated time"). A scenario script does:
#   . "$TSNTS_SRC_DIR/test/simulation/sim.sh"; sim_init
#   SIM_SERVERS="port=10001,delay=0.02" sim_run DAYS [CONF_LINE...]
# and then reads the record ($SIM_REC) and the daemon's log ($SIM_LOG). The daemon runs without
# CAP_SYS_TIME, as every daemon a test starts, on one of two clocks (SIM_CLOCK):
#   fake    (the default) with --observe, steering a fake clock (--test-clock-offset=) whose steps
#           and slews it logs; sim_run adds them to the record. Slews are not applied.
#   kernel  on its kernel clock backend, not in observe mode: the preload answers every clock
#           call (adjtimex(), clock_settime(), ...) with its model of the kernel's discipline
#           (sim-kclock.c), and tells the daemon it kept CAP_SYS_TIME while it has none. The
#           daemon's clocks are the model's: true time, plus the oscillator's error (SIM_DRIFT
#           ppm, a random walk of SIM_WANDER per second, e.g. 1e-9), plus what the daemon's
#           steps and the kernel's PLL made of it. The preload records the clock calls:
#             TIME step DELTA offset=OFFSET [by=CALL]   a step (ADJ_SETOFFSET, or CALL)
#             TIME slew OFFSET tc=TC                    ADJ_OFFSET with the PLL on
#             TIME frequency PPM                        ADJ_FREQUENCY
#             TIME adjtime OFFSET                       adjtime() / ADJ_OFFSET_SINGLESHOT
#           and, every SIM_KCLOCK_TRACE seconds of true time (default 1; 0: none), from 0 on,
#           a trace line of the clock:
#             TIME kclock offset=S freq=PPM rate=PPM phase=S state=NAME
#           offset: the daemon's CLOCK_REALTIME minus true time (s, 9 decimals); freq: the
#           kernel's frequency (ppm, as adjtimex() reports it, 6 decimals); rate: the clock's
#           total rate error against true time in the second under way (ppm: oscillator,
#           frequency, tick, the PLL's phase slew and adjtime()'s); phase: the offset the PLL
#           still has to slew (s); state: adjtimex()'s return value, OK, INS, DEL, OOP, WAIT,
#           or ERROR (unsynchronized). The end line adds kclock_offset=, kclock_freq=,
#           kclock_state= and cap_sys_time_pretended= (whether the daemon asked to keep it).
#           SIM_CLOCK_ERROR is the model's offset at the start; SIM_CLOCK_JUMP=T:S has another
#           program step the clock by S seconds at T ("TIME clock-jump DELTA offset=OFFSET");
#           SIM_SUSPEND=T:D suspends the machine at T for D seconds ("TIME suspend D", then
#           "TIME resume offset=OFFSET" at T + D): MONOTONIC stops, BOOTTIME and CLOCK_REALTIME
#           go on, and the trace lines of the seconds asleep show the clock as it resumed.
[ -n "${_TSNTS_SIM_SH:-}" ] && return 0
_TSNTS_SIM_SH=1
# shellcheck source-path=SCRIPTDIR/../lib
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

export TIMESYNCD=${TSNTS_TIMESYNCD:-$TSNTS_BUILD_DIR/src/timesync/systemd-timesyncd}
export SIM_PRELOAD=${TSNTS_SIM_PRELOAD:-$TSNTS_BUILD_DIR/test/simulation/sim-preload.so}

sim_init() {
        [ -x "$TIMESYNCD" ] || fail "$TIMESYNCD not built"
        [ -f "$SIM_PRELOAD" ] || fail "$SIM_PRELOAD not built"
        test_init
        make_test_certs >/dev/null
        # The servers start in the daemon's process after it became the systemd-timesync user.
        chmod 0644 "$CERTDIR/server.key"
        chmod 0755 "$TEST_TMPDIR" "$CERTDIR"
        SIM_N=0
        # One start for every run of the test: runs of one seed give one record.
        SIM_START=$(date +%s)
}

# sim_run DAYS [CONF_LINE...]: one run of the daemon for DAYS simulated days (a decimal), with
# a timesyncd.conf of CONF_LINEs after NTSTrustedCertificates=. The scenario is in the
# environment: SIM_SERVERS (required), and optionally SIM_SEED (default 1), SIM_CLOCK_ERROR (the
# daemon's clock minus true time at the start, in seconds), SIM_DRIFT (see sim-preload.c),
# SIM_CLOCK, SIM_WANDER, SIM_KCLOCK_TRACE, SIM_CLOCK_JUMP and SIM_SUSPEND (above), SIM_TEST_POLL
# (the daemon's --test-poll-interval=: every poll interval that long, for rules counted in
# polls), and SIM_STATE_FROM: a state directory (of an earlier run) whose
# files the daemon starts with, as after a restart that kept /var/lib/systemd/timesync. Sets SIM_LOG, SIM_REC and SIM_REAL_SECONDS (the run's real
# time). Fails if the daemon does not end by itself when the simulated time is over, if it
# tried to change a clock, or if it had CAP_SYS_TIME.
sim_run() {
        local days=$1 dir start clock_args
        shift
        SIM_N=$((SIM_N + 1))
        dir=$TEST_TMPDIR/run$SIM_N
        mkdir -p "$dir/state" "$dir/runtime"
        chmod -R 0755 "$dir"
        # Owner and mode kept: the daemon refuses a state file that others may read.
        [ -z "${SIM_STATE_FROM:-}" ] || cp -a "$SIM_STATE_FROM/." "$dir/state/"
        { echo "[Time]"; echo "FallbackNTS="; echo "NTSTrustedCertificates=$CERTDIR/ca.pem"; printf '%s\n' "$@"; } >"$dir/timesyncd.conf"
        chmod 0644 "$dir/timesyncd.conf"
        SIM_LOG=$dir/timesyncd.log
        SIM_REC=$dir/record
        SIM_OFFSET=${SIM_CLOCK_ERROR:-0}
        case ${SIM_CLOCK:-fake} in
                fake) clock_args=(--observe --test-clock-offset="$SIM_OFFSET") ;;
                # The one exception to observe mode: every clock call meets the model.
                kernel) clock_args=() ;;
                *) fail "SIM_CLOCK=$SIM_CLOCK: fake or kernel" ;;
        esac
        : >"$SIM_LOG"
        start=${EPOCHREALTIME/./}
        start_daemon "$SIM_LOG" env LD_PRELOAD="$SIM_PRELOAD" \
                SIM_DURATION="$(awk -v d="$days" 'BEGIN { printf "%.0f", d * 86400 }')" \
                SIM_SERVERS="$SIM_SERVERS" SIM_SEED="${SIM_SEED:-1}" SIM_START="$SIM_START" \
                SIM_DRIFT="${SIM_DRIFT:-0}" SIM_CLOCK="${SIM_CLOCK:-fake}" SIM_CLOCK_ERROR="$SIM_OFFSET" \
                SIM_WANDER="${SIM_WANDER:-0}" SIM_KCLOCK_TRACE="${SIM_KCLOCK_TRACE:-1}" \
                SIM_CLOCK_JUMP="${SIM_CLOCK_JUMP:-}" SIM_SUSPEND="${SIM_SUSPEND:-}" \
                SIM_RECORD="$dir/preload-record" SIM_CERT="$CERTDIR/server-chain.pem" SIM_KEY="$CERTDIR/server.key" \
                DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/no-bus" NOTIFY_SOCKET= \
                SYSTEMD_LOG_LEVEL="${SIM_LOG_LEVEL:-debug}" SYSTEMD_LOG_TARGET=console \
                "$TIMESYNCD" "${clock_args[@]}" ${SIM_TEST_POLL:+--test-poll-interval="$SIM_TEST_POLL"} --config="$dir/timesyncd.conf" --state-dir="$dir/state" --runtime-dir="$dir/runtime"
        sim_wait "the daemon" "$days" "$dir" "$start"
        sim_clock_lines | sort -s -g -k1,1 - "$dir/preload-record" >"$SIM_REC"
        sim_check_record "the daemon"
        log "$days simulated days in $SIM_REAL_SECONDS s ($(sim_count request) requests, $(sim_count step) steps, $(sim_count slew) slews)"
}

# sim_wait WHO DAYS DIR START: waits for the run's daemon (DAEMON_PID), which the preload ends
# with SIGTERM once the simulated time is over; sets SIM_REAL_SECONDS from START
# (EPOCHREALTIME without its dot). Fails if it does not end by itself or ends in failure.
sim_wait() {
        local who=$1 days=$2 dir=$3 start=$4 end rc=0
        wait_for 100 sim_exited "$DAEMON_PID" || fail "$who did not finish $days simulated days in 100 s: $(tail -n 5 "$dir/preload-record")"
        wait "$DAEMON_PID" || rc=$?
        end=${EPOCHREALTIME/./}
        SIM_REAL_SECONDS=$(awk -v us=$((end - start)) 'BEGIN { printf "%.2f", us / 1e6 }')
        [ "$rc" = 0 ] || fail "$who exited with $rc: $(tail -n 20 "$SIM_LOG")"
}

# sim_check_record WHO: the record ($SIM_REC) is complete, no clock write reached the tripwire
# and the daemon never had CAP_SYS_TIME.
sim_check_record() {
        local who=$1 writes
        grep -q ' end ' "$SIM_REC" || fail "the record of the run has no end: $(tail -n 5 "$SIM_REC")"
        # The tripwire: any clock write the preload refused.
        writes=$(sim_end_field clock_writes)
        [ "$writes" = 0 ] || fail "$who tried to change the clock $writes times: $(grep ' clock-write ' "$SIM_REC" | head -n 5)"
        # A run is over in a fraction of a second: the preload reads the capabilities at the end.
        [ "$(sim_end_field cap_sys_time)" = no ] || fail "$who had CAP_SYS_TIME: $(grep ' end ' "$SIM_REC")"
}

sim_exited() { ! kill -0 "$1" 2>/dev/null; }

# The fake clock's steps and slews as record lines, at the simulated time of the preload's last
# "sim: at" line before them: "TIME step DELTA offset=OFFSET" (OFFSET: the fake clock minus
# the virtual system clock after the step) and "TIME slew OFFSET" (recorded, not applied).
sim_clock_lines() {
        awk 'BEGIN { t = "0.000000" }
             /^sim: at / { t = $3 }
             /^Test clock: stepped by / { printf "%s step %+.6f offset=%+.6f\n", t, $5, $8 }
             /^Test clock: slewing by / { printf "%s slew %+.6f\n", t, $5 }' "$SIM_LOG"
}

# sim_count KIND [SERVER]: how many lines of KIND (request, step, slew, ke-connect) the record has,
# with SERVER: those of that server only.
sim_count() {
        if [ $# -gt 1 ]; then
                awk -v k="$1" -v s="$2" '$2 == k && $3 == "server" && $4 == s' "$SIM_REC" | wc -l
        else
                awk -v k="$1" '$2 == k' "$SIM_REC" | wc -l
        fi
}

# sim_end_field NAME: a field of the record's end line (drift_error, clock_writes, cap_sys_time).
sim_end_field() {
        awk -v f="$1" '$2 == "end" { for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) print kv[2] } }' "$SIM_REC"
}

# sim_server_field SERVER NAME: a figure of that server's final line (requests, ke_sessions, ...).
sim_server_field() {
        awk -v s="$1" -v f="$2" '$2 == "server" && $3 == s && $4 ~ /^requests=/ {
                for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) print kv[2] } }' "$SIM_REC"
}

# The daemon's clock minus true time at the end of the run, in seconds: the kernel model's, or
# the fake clock's offset as last logged (slews are not applied) plus the drift of the system
# clock under it.
sim_clock_error() {
        local kernel
        kernel=$(sim_end_field kclock_offset)
        if [ -n "$kernel" ]; then
                echo "$kernel"
                return
        fi
        awk -v o="$SIM_OFFSET" '$2 == "step" { o = substr($4, 8) } $2 == "end" { d = substr($3, 13) }
                                END { printf "%+.6f\n", o + d }' "$SIM_REC"
}

sim_log_has() { grep -q -- "$1" "$SIM_LOG"; }

# sim_log_times REGEX: the simulated times of the daemon's log lines that match REGEX (awk's).
sim_log_times() {
        awk -v re="$1" 'BEGIN { t = "0.000000" } /^sim: at / { t = $3; next } $0 ~ re { print t }' "$SIM_LOG"
}
