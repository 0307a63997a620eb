#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guards of test/lib/common.sh catch what they are there for: a changed clock discipline, a
# daemon holding CAP_SYS_TIME, and processes or namespaces a test leaves behind; the parallel
# cases of reliability.sh keep their exit status.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=common.sh
. "$(dirname "$0")/../../lib/common.sh"

test_init

test_clock_guard_passes_when_nothing_changed() {
        clock_guard_check "$TEST_TMPDIR" || fail "clock guard reports a change although nothing touched the clock"
}

test_clock_guard_detects_a_changed_discipline() {
        local scratch="$TEST_TMPDIR/guard"
        mkdir -p "$scratch"
        sed 's/^freq=.*/freq=424242/' "$TEST_TMPDIR/clock.before" >"$scratch/clock.before"
        if clock_guard_check "$scratch" 2>/dev/null; then
                fail "clock guard missed a changed freq"
        fi
}

test_daemon_started_by_harness_lacks_cap_sys_time() {
        start_daemon "$TEST_TMPDIR/sleep.log" sleep 600
        wait_exec "$DAEMON_PID" sleep
        assert_no_sys_time "$DAEMON_PID" sleep
        stop_daemon "$DAEMON_PID"
}

test_cap_check_rejects_process_with_cap_sys_time() {
        local pid
        sleep 600 &
        pid=$!
        wait_exec "$pid" sleep
        if (assert_no_sys_time "$pid" "plain sleep") 2>/dev/null; then
                fail "assert_no_sys_time accepted a process that may set the clock"
        fi
        stop_daemon "$pid"
}

test_wait_for_gives_up_after_timeout() {
        if wait_for 1 false; then
                fail "wait_for succeeded on a condition that never holds"
        fi
        wait_for 1 true || fail "wait_for failed on a condition that holds"
}

test_free_port_returns_distinct_unused_ports() {
        local ports=() p
        for _ in 1 2 3 4 5; do ports+=("$(free_port)"); done
        [ "$(printf '%s\n' "${ports[@]}" | sort -u | wc -l)" = 5 ] || fail "free_port repeated a port: ${ports[*]}"
        for p in "${ports[@]}"; do
                [ -z "$(ss -Htuan "sport = :$p")" ] || fail "free_port returned port $p which is in use"
        done
}

# A test that leaves a child, a process outside its tree, a network namespace and a port
# reservation behind.
write_leaky_test() {
        cat >"$1" <<LEAKY
set -euo pipefail
. "$TSNTS_LIB_DIR/common.sh"
test_init
start_daemon "\$TEST_TMPDIR/daemon.log" sleep 600
sleep 600 &
child=\$!
(sleep 600 >/dev/null 2>&1 & echo \$! >"$2.orphan")
track_pid "\$(cat "$2.orphan")"
netns_create
port=\$(free_port)
echo "\$DAEMON_PID \$child \$(cat "$2.orphan") \$NETNS \$TEST_TMPDIR \$port" >"$2"
exit "\${LEAKY_EXIT:-0}"
LEAKY
}

test_cleanup_stops_everything_the_test_started() {
        local script="$TEST_TMPDIR/leaky.sh" state="$TEST_TMPDIR/leaky.state" pid rc=0
        local daemon child orphan ns tmp port
        write_leaky_test "$script" "$state"
        LEAKY_EXIT=3 bash "$script" 2>"$TEST_TMPDIR/leaky.log" || rc=$?
        [ "$rc" = 3 ] || fail "cleanup changed the test's exit code 3 into $rc"
        read -r daemon child orphan ns tmp port <"$state"
        for pid in "$daemon" "$child" "$orphan"; do
                ! pid_alive "$pid" || fail "process $pid survived the test's cleanup"
        done
        ! ip netns list | grep_q -w "$ns" || fail "network namespace $ns survived the test's cleanup"
        [ ! -e "$tmp" ] || fail "temp dir $tmp survived the test's cleanup"
        [ ! -e "$_tsnts_port_dir/$port" ] || fail "reservation of port $port survived the test's cleanup"
}

# A daemon that escaped the test's process tree (double fork, as a subshell's daemon ends up
# once the subshell is gone): the cleanup stops it and fails the test.
test_cleanup_fails_a_test_that_leaves_a_process_behind() {
        local script="$TEST_TMPDIR/escaped.sh" state="$TEST_TMPDIR/escaped.state" rc=0 pid
        cat >"$script" <<ESCAPED
set -euo pipefail
. "$TSNTS_LIB_DIR/common.sh"
test_init
mkdir -p "\$TEST_TMPDIR/d"
(setsid bash -c 'exec -a "sleeper \$1" sleep 600' bash "\$TEST_TMPDIR/d" </dev/null >/dev/null 2>&1 &)
wait_for 5 pgrep -f -- "\$TEST_TMPDIR/d" >/dev/null
pgrep -f -- "\$TEST_TMPDIR/d" >"$state"
ESCAPED
        bash "$script" 2>"$TEST_TMPDIR/escaped.log" || rc=$?
        [ "$rc" = 1 ] || fail "a test that left a process behind exited $rc, not 1"
        grep -q "processes left behind by the test" "$TEST_TMPDIR/escaped.log" || fail "no 'left behind' message"
        pid=$(cat "$state")
        [ -n "$pid" ] || fail "the escaped process was not seen"
        ! pid_alive "$pid" || fail "the escaped process $pid is still running"
}

start_sleeper_and_return() {
        start_daemon "$TEST_TMPDIR/inner-sleep.log" sleep 600
        echo "$DAEMON_PID" >"$TEST_TMPDIR/inner.pid"
}

test_function_in_namespace_leaves_nothing_running() {
        local pid
        netns_create
        netns_exec "$NETNS" start_sleeper_and_return
        pid=$(cat "$TEST_TMPDIR/inner.pid")
        ! pid_alive "$pid" || fail "a process started inside netns_exec outlived the call"
}

# A case of reliability.sh (start_case) that has ended, then a child of the test's shell that
# gets the same PID, as happens when the PIDs come round: bash has forgotten the case's status
# ("wait" says 127), and finish_case must still pass a passing case and fail a failing one. In a
# PID namespace of its own, where ns_last_pid picks the next PID without touching the host's.
write_reused_pid_test() {
        cat >"$1" <<REUSED
set -euo pipefail
. "$TSNTS_LIB_DIR/timesyncd.sh"
. "$TSNTS_LIB_DIR/reliability.sh"
TEST_TMPDIR=\$1
start_case "exit-\$2" bash -c "exit \$2"
pid=\${_case_pids[exit-\$2]}
wait_for 10 eval "[ ! -e /proc/\$pid ]" || fail "the case did not end"
echo \$((pid - 1)) >/proc/sys/kernel/ns_last_pid
/bin/true
rc=0
wait "\$pid" 2>/dev/null || rc=\$?
[ "\$rc" = 127 ] || fail "bash still knows the case's status (wait: \$rc): the PID was not reused"
finish_case "exit-\$2"
REUSED
}

test_case_status_outlives_a_reused_pid() {
        local script="$TEST_TMPDIR/reused-pid.sh" rc=0
        write_reused_pid_test "$script"
        unshare --pid --fork --mount-proc bash "$script" "$TEST_TMPDIR" 0 2>"$TEST_TMPDIR/reused-0.log" ||
                fail "a passing case failed once its PID was reused: $(cat "$TEST_TMPDIR/reused-0.log")"
        unshare --pid --fork --mount-proc bash "$script" "$TEST_TMPDIR" 3 2>"$TEST_TMPDIR/reused-3.log" || rc=$?
        grep -q "exit-3: case failed (3)" "$TEST_TMPDIR/reused-3.log" ||
                fail "a case that exited 3 was not failed with its status once its PID was reused (exit $rc): $(cat "$TEST_TMPDIR/reused-3.log")"
}

test_skip_keeps_exit_code_77() {
        local rc=0
        bash -c ". '$TSNTS_LIB_DIR/common.sh'; test_init; skip 'on purpose'" 2>/dev/null || rc=$?
        [ "$rc" = 77 ] || fail "skip exited $rc instead of 77"
}

run_case test_clock_guard_passes_when_nothing_changed
run_case test_clock_guard_detects_a_changed_discipline
run_case test_daemon_started_by_harness_lacks_cap_sys_time
run_case test_cap_check_rejects_process_with_cap_sys_time
run_case test_wait_for_gives_up_after_timeout
run_case test_free_port_returns_distinct_unused_ports
run_case test_cleanup_stops_everything_the_test_started
run_case test_function_in_namespace_leaves_nothing_running
run_case test_cleanup_fails_a_test_that_leaves_a_process_behind
run_case test_case_status_outlives_a_reused_pid
run_case test_skip_keeps_exit_code_77
