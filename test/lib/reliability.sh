# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Helpers of the reliability tests, on top of common.sh and timesyncd.sh: CPU
# time of a process, the NTS state file's cookie count, the "never unauthenticated" check,
# and a UDP fault relay (or tc netem where the kernel has it).
[ -n "${_TSNTS_RELIABILITY_SH:-}" ] && return 0
_TSNTS_RELIABILITY_SH=1

export FAULT_PROXY=$TSNTS_SRC_DIR/test/tools/faults/fault-proxy.py
CLK_TCK=$(getconf CLK_TCK)
export CLK_TCK

# cpu_seconds PID: user + system CPU time of PID so far, from /proc/PID/stat (fields 14 and 15,
# counted after the parenthesised command name, which may contain spaces).
cpu_seconds() {
        local stat
        stat=$(cat "/proc/$1/stat") || fail "process $1 is gone"
        awk -v t="$CLK_TCK" '{ printf "%.2f\n", ($12 + $13) / t }' <<<"${stat##*) }"
}

# assert_cpu_below PID SECONDS WHAT: fails if PID used more CPU time than SECONDS, which is
# what a busy loop would do (it burns one second per second).
assert_cpu_below() {
        local used
        used=$(cpu_seconds "$1")
        awk -v u="$used" -v b="$2" 'BEGIN { exit !(u < b) }' ||
                fail "$3: the daemon used $used s of CPU time (bound $2 s): busy loop?"
        echo "$used"
}

# jar_cookies NAME: number of cookies in the state file (0 without a file).
jar_cookies() {
        local f
        f=$(nts_jar_file "$1")
        [ -e "$f" ] || { echo 0; return 0; }
        grep -c '^cookie=' "$f" || true
}

# jar_in_memory: the cookies in the daemon's jar after its last verified reply (debug log).
jar_in_memory() {
        grep "cookies in the jar" "$TIMESYNCD_LOG" | tail -n1 | sed -n 's/.*verified: \([0-9]*\) cookies.*/\1/p' | grep . || echo 0
}

# jar_is_full: the daemon's jar is full again after a verified reply (7 or 8 cookies). The
# state file says nothing while the daemon runs: it is written at a clean stop only.
jar_is_full() { [ "$(jar_in_memory)" -ge 7 ]; }

# Every synchronization the daemon reported was NTS-authenticated, and it never selected a
# server that is not an NTS= one: no unauthenticated sample was ever used as time.
assert_only_authenticated_sync() {
        local bad
        bad=$(grep "Initial clock synchronization" "$TIMESYNCD_LOG" | grep -v "NTS authenticated" || true)
        [ -z "$bad" ] || fail "unauthenticated synchronization: $bad"
}

# nts_conf NAME: TEST_TMPDIR/ts.conf with NTS=NAME, the test CA, the shortest poll interval (16 s)
# and ConnectionRetrySec=1, so that retries and backoffs are short.
nts_conf() {
        write_conf "$TEST_TMPDIR/ts.conf" "NTS=$1" "NTSTrustedCertificates=$CERTDIR/ca.pem" \
                "PollIntervalMinSec=16" "PollIntervalMaxSec=16" "ConnectionRetrySec=1"
}

# synced_line NAME: the log line of an NTS-authenticated first synchronization with NAME.
synced_line() { echo "Initial clock synchronization to $1 (offset .*, NTS authenticated"; }

# seconds_since T0: elapsed wall time since T0 (an $EPOCHREALTIME value), two decimals.
seconds_since() {
        awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f\n", b - a }'
}

# start_fault_proxy NAME LISTEN UPSTREAM [FAULT-ARG...]: the relay of fault-proxy.py, stats in
# $TEST_TMPDIR/proxy-NAME.stats. Sets FAULT_PROXY_PID.
start_fault_proxy() {
        local name=$1 listen=$2 upstream=$3 out
        shift 3
        out=$TEST_TMPDIR/proxy-$name.log
        : >"$out"       # no READY of an earlier proxy of that name (start_nts_mock)
        [ -x /usr/bin/python3 ] || missing_prerequisite "/usr/bin/python3 not installed"
        "${NOSYSTIME[@]}" /usr/bin/python3 "$FAULT_PROXY" --listen="$listen" --upstream="$upstream" \
                --stats="$TEST_TMPDIR/proxy-$name.stats" --max-seconds=600 "$@" >"$out" 2>&1 &
        FAULT_PROXY_PID=$!
        track_pid "$FAULT_PROXY_PID"
        wait_for 5 grep -q READY "$out" || fail "fault proxy $name did not start: $(cat "$out")"
}

# proxy_stat NAME KEY: one counter of the relay.
proxy_stat() {
        sed -n "s/^$2=//p" "$TEST_TMPDIR/proxy-$1.stats" 2>/dev/null | grep . || echo 0
}

# assert_in_netns: a guard for tc commands, which must never reach the host's interfaces.
assert_in_netns() {
        [ -n "$(ip netns identify $$ 2>/dev/null)" ] || fail "not inside a network namespace of the test"
}

# netem_available: whether this kernel has sch_netem (asked inside the test's netns only).
netem_available() {
        assert_in_netns
        tc qdisc add dev lo root netem delay 0ms 2>/dev/null && tc qdisc del dev lo root 2>/dev/null
}

# start_case NAME CMD...: runs CMD (a program or a function of the test, maybe through
# netns_exec) in the background with TEST_TMPDIR set to TEST_TMPDIR/NAME, so that its daemon
# log, state and peers are its own. Cases wait for the network most of the time: running them
# side by side keeps a test short. Output in TEST_TMPDIR/NAME.out; finish_case collects it.
declare -A _case_pids
start_case() {
        local name=$1
        shift
        mkdir -p "$TEST_TMPDIR/$name"
        _case_run "$name" "$@" >"$TEST_TMPDIR/$name.out" 2>&1 &
        _case_pids[$name]=$!
}

# _case_run NAME CMD...: a case, in the background subshell that start_case starts: its own
# TEST_TMPDIR, process list and cleanup.
_case_run() {
        export TEST_TMPDIR=$TEST_TMPDIR/$1
        shift
        _tsnts_pids=()
        _tsnts_cleanups=()
        trap _case_cleanup EXIT
        timesyncd_prepare
        "$@"
}

# A case's subshell does not run the test's cleanup, and the daemons it started are no
# descendants of the test once it has ended (they were left running, reparented to PID 1):
# it stops them, and runs its own at_cleanup commands, itself.
_case_cleanup() {
        local rc=$? i
        set +e
        _stop_started
        for (( i = ${#_tsnts_cleanups[@]} - 1; i >= 0; i-- )); do
                eval "${_tsnts_cleanups[i]}"
        done
        echo "$rc" >"$TEST_TMPDIR.rc"
        exit "$rc"
}

# finish_case NAME: waits for the case, shows its "result:" lines (the measurements), and fails
# with its last output lines if it failed.
finish_case() {
        local rc=0
        wait "${_case_pids[$1]}" 2>/dev/null || rc=$?
        # The status the case wrote itself decides: bash forgets the status of a background job
        # that has ended once it forks another child that gets the same PID (pid_max 32768 comes
        # round within minutes under the suite's load); "wait" then answers 127 (not a child) or
        # the other child's status. It failed a case of test-network-faults that had passed.
        if [ -s "$TEST_TMPDIR/$1.rc" ]; then
                rc=$(<"$TEST_TMPDIR/$1.rc")
        fi
        grep -E '^(faults|result|relay):' "$TEST_TMPDIR/$1.out" || true
        [ "$rc" = 0 ] || { tail -n 40 "$TEST_TMPDIR/$1.out"; fail "$1: case failed ($rc)"; }
}
