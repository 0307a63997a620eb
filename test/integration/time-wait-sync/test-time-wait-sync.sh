#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-time-wait-sync, run without CAP_SYS_TIME (the clock guard of test/lib/common.sh
# checks that the kernel's clock discipline is untouched): it exits 0 when the flag file
# appears (also in a runtime directory made only after its start), waits and checks again
# while there is neither flag nor a synchronized kernel, and exits 0 when the kernel reports
# the clock synchronized. The kernel's state comes from fake-adjtimex.so where a case needs it
# one way or the other, and is the real one in the last case.
set -euo pipefail
. "$(dirname "$0")/../../lib/common.sh"
test_init

TWS=${TSNTS_TIME_WAIT_SYNC:-$TSNTS_BUILD_DIR/src/time-wait-sync/systemd-time-wait-sync}
FAKE=${TSNTS_FAKE_ADJTIMEX:-$TSNTS_BUILD_DIR/test/tools/preload/fake-adjtimex.so}
[ -x "$TWS" ] || fail "systemd-time-wait-sync not found at $TWS (build first)"
[ -e "$FAKE" ] || fail "fake-adjtimex.so not found at $FAKE (build first)"
# The shim is not built with the sanitizers; an ASan build must accept it in front of it.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console

# start_tws NAME RUNTIME_DIR [fake]: starts the program in the background, its output in
# TEST_TMPDIR/NAME.log; with "fake", the kernel's state is TEST_TMPDIR/NAME.kernel-synced
# (present: synchronized). Sets DAEMON_PID.
start_tws() {
        local name=$1 dir=$2 env=()
        [ "${3:-}" != fake ] || env=(env "LD_PRELOAD=$FAKE" "FAKE_ADJTIMEX_SYNCED=$TEST_TMPDIR/$name.kernel-synced")
        start_daemon "$TEST_TMPDIR/$name.log" ${env[@]+"${env[@]}"} "$TWS" "--runtime-dir=$dir"
}

checks() {
        grep -c '^Not synchronized yet' "$1" || true
}

# waiting LOG: the program said it waits (and is running without CAP_SYS_TIME then).
waiting() {
        grep -q '^Waiting for the system clock to be synchronized' "$1"
}

# checked_again LOG N: it looked more than N times.
checked_again() {
        [ "$(checks "$1")" -gt "$2" ]
}

# ends_with PID STATUS LOG: PID exits within 30 s, with exit status STATUS.
ends_with() {
        local pid=$1 want=$2 rc=0
        wait_for 30 bash -c "! kill -0 $pid 2>/dev/null || [ \"\$(ps -o stat= -p $pid)\" = Z ]" ||
                fail "systemd-time-wait-sync ($pid) still running: $(cat "$3")"
        wait "$pid" || rc=$?
        [ "$rc" = "$want" ] || fail "exit status $rc, not $want: $(cat "$3")"
}

test_exits_when_the_flag_appears() {
        local dir=$TEST_TMPDIR/flag/run log=$TEST_TMPDIR/flag.log n
        mkdir -p "$dir"
        start_tws flag "$dir" fake
        wait_for 30 waiting "$log" || fail "no waiting line: $(cat "$log")"
        assert_no_sys_time "$DAEMON_PID" systemd-time-wait-sync
        # Another file in the directory wakes it up: it looks again and goes on waiting.
        n=$(checks "$log")
        touch "$dir/clock"
        wait_for 30 checked_again "$log" "$n" || fail "not checked again after a file appeared: $(cat "$log")"
        pid_alive "$DAEMON_PID" || fail "exited with neither flag nor a synchronized kernel: $(cat "$log")"
        touch "$dir/synchronized"
        ends_with "$DAEMON_PID" 0 "$log"
        grep -qx "The system clock is synchronized ($dir/synchronized exists)." "$log" ||
                fail "no line naming the flag: $(cat "$log")"
        [ ! -e "$TEST_TMPDIR/flag.kernel-synced.writes" ] || fail "adjtimex() called to change something"
}

# /run/systemd/timesync may not exist yet when the unit starts at boot.
test_waits_for_the_directory_then_the_flag() {
        local dir=$TEST_TMPDIR/late/run/systemd/timesync log=$TEST_TMPDIR/late.log
        mkdir -p "$TEST_TMPDIR/late"
        start_tws late "$dir" fake
        wait_for 30 waiting "$log" || fail "no waiting line: $(cat "$log")"
        mkdir -p "$dir"
        pid_alive "$DAEMON_PID" || fail "exited when only the directory appeared: $(cat "$log")"
        touch "$dir/synchronized"
        ends_with "$DAEMON_PID" 0 "$log"
        grep -q "($dir/synchronized exists)" "$log" || fail "no line naming the flag: $(cat "$log")"
}

test_flag_already_there() {
        local dir=$TEST_TMPDIR/there log=$TEST_TMPDIR/there.log
        mkdir -p "$dir"
        touch "$dir/synchronized"
        start_tws there "$dir" fake
        ends_with "$DAEMON_PID" 0 "$log"
        ! waiting "$log" || fail "waited although the flag was there: $(cat "$log")"
}

test_exits_when_the_kernel_says_synchronized() {
        local dir=$TEST_TMPDIR/kernel log=$TEST_TMPDIR/kernel.log
        mkdir -p "$dir"
        start_tws kernel "$dir" fake
        wait_for 30 waiting "$log" || fail "no waiting line: $(cat "$log")"
        touch "$TEST_TMPDIR/kernel.kernel-synced"
        ends_with "$DAEMON_PID" 0 "$log"
        grep -qx "The system clock is synchronized (the kernel reports it synchronized)." "$log" ||
                fail "no line naming the kernel: $(cat "$log")"
        [ ! -e "$dir/synchronized" ] || fail "the flag file was made"
        [ ! -e "$TEST_TMPDIR/kernel.kernel-synced.writes" ] || fail "adjtimex() called to change something"
}

# The real kernel of this machine, whichever way it is.
test_real_kernel() {
        local dir=$TEST_TMPDIR/real log=$TEST_TMPDIR/real.log status
        mkdir -p "$dir"
        status=$("$TSNTS_ADJTIMEX_READ" | sed -n 's/^status=//p')
        start_tws real "$dir"
        if (( status & 0x40 )); then
                log "the kernel marks this machine's clock unsynchronized: the program must wait"
                wait_for 30 waiting "$log" || fail "no waiting line: $(cat "$log")"
                pid_alive "$DAEMON_PID" || fail "exited on an unsynchronized kernel: $(cat "$log")"
                touch "$dir/synchronized"
                ends_with "$DAEMON_PID" 0 "$log"
        else
                log "the kernel reports this machine's clock synchronized: the program must exit"
                ends_with "$DAEMON_PID" 0 "$log"
                grep -q "(the kernel reports it synchronized)" "$log" || fail "not the kernel's verdict: $(cat "$log")"
        fi
}

test_usage_errors() {
        local rc=0
        "$TWS" --runtime-dir=relative/dir >"$TEST_TMPDIR/usage.log" 2>&1 || rc=$?
        [ "$rc" = 1 ] || fail "exit status $rc for a relative --runtime-dir="
        grep -q "needs an absolute path" "$TEST_TMPDIR/usage.log" || fail "no message: $(cat "$TEST_TMPDIR/usage.log")"
        rc=0
        "$TWS" extra >/dev/null 2>&1 || rc=$?
        [ "$rc" = 1 ] || fail "exit status $rc for an argument"
}

run_case test_exits_when_the_flag_appears
run_case test_waits_for_the_directory_then_the_flag
run_case test_flag_already_there
run_case test_exits_when_the_kernel_says_synchronized
run_case test_real_kernel
run_case test_usage_errors
