#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The learned frequency survives a reboot (the kernel model starts at 0 each run): a first run
# on an oscillator 20 ppm fast, one server on a LAN, the kernel clock model, leaves about
# -20 ppm in the state directory's frequency file. The next run ("reboot", the same
# oscillator, the clock 1 ms off) starts its discipline from it: the kernel's frequency is
# within 1 ppm of -20 from the first adjustment on, where without the file it stays 0 until
# the fit has four samples (about 100 s). A file that does not parse is refused with a log
# line and the run starts from 0; one far from what the samples say is dropped, logged.
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/sim.sh"
sim_init

export SIM_CLOCK=kernel SIM_DRIFT=20 SIM_WANDER=1e-9 SIM_SEED=2 SIM_SERVERS="port=10001,oneway=0.0005,expjitter=0.00005"

SIM_CLOCK_ERROR=0.1 sim_run 0.05 "NTS=127.0.0.1:10001"
state=$(dirname "$SIM_REC")/state
[ -f "$state/frequency" ] || fail "no frequency file after a run: $(ls "$state")"
saved=$(cat "$state/frequency")
awk -v f="$saved" 'BEGIN { exit !(f < -19 && f > -21) }' || fail "the saved frequency is $saved ppm, not about -20"

# From the first adjustment (a few ms into the run) to 120 s: within 1 ppm of -20.
freq_early() {
        awk '$2 == "kclock" && $1 >= 1 && $1 <= 120 { f = substr($4, 6) + 0; if (f > -19 || f < -21) { print $1, f; exit 1 } }' "$SIM_REC"
}

# Only the frequency file: the clock file's time (the first run's end) lies ahead of the
# second run's clock, and the cookies are the first run's servers'.
mkdir -p "$TEST_TMPDIR/kept" && cp -a "$state/frequency" "$TEST_TMPDIR/kept/"
SIM_STATE_FROM=$TEST_TMPDIR/kept SIM_CLOCK_ERROR=0.001 sim_run 0.01 "NTS=127.0.0.1:10001"
bad=$(freq_early) || fail "the kernel's frequency left -20 ppm in the first two minutes after a reboot: $bad"
# Rounded as the daemon rounds a double (bash's printf rounds -20.0545 the other way).
sim_log_has "Starting the clock's discipline from the frequency learned before, $(awk -v f="$saved" 'BEGIN { printf "%+.3f", f }') ppm" ||
        fail "the saved frequency was not used: $(grep -i frequency "$SIM_LOG" | head -n 3)"
! sim_log_has "dropping it" || fail "a frequency that agrees was dropped"

# Not ours: refused, logged, the run starts from 0 as without a file.
mkdir -p "$TEST_TMPDIR/bad" && printf 'twenty\n' >"$TEST_TMPDIR/bad/frequency"
SIM_STATE_FROM=$TEST_TMPDIR/bad SIM_CLOCK_ERROR=0.001 sim_run 0.01 "NTS=127.0.0.1:10001"
sim_log_has "does not hold a frequency" || fail "a bad frequency file was not refused with a log line"
! freq_early >/dev/null || fail "without a usable file the frequency was right from the start"

# 30 ppm off what the samples say: the first fitted frequency replaces it, and it is logged.
mkdir -p "$TEST_TMPDIR/far" && printf '+10.0\n' >"$TEST_TMPDIR/far/frequency"
SIM_STATE_FROM=$TEST_TMPDIR/far SIM_CLOCK_ERROR=0.001 sim_run 0.01 "NTS=127.0.0.1:10001"
sim_log_has "(+10.000 ppm) is -3[0-9].[0-9]* ppm off what the samples say, dropping it" ||
        fail "a frequency 30 ppm off was not dropped: $(grep -i "frequency" "$SIM_LOG" | head -n 3)"
awk '$2 == "kclock" && $1 >= 600 { f = substr($4, 6) + 0; if (f > -19 || f < -21) { exit 1 } }' "$SIM_REC" ||
        fail "after dropping the saved frequency the kernel's is not -20 ppm"
