# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Shared test harness for integration tests (bash, sourced). A test does:
#   . "$TSNTS_SRC_DIR/test/lib/common.sh"; test_init
# and gets a private temp dir, a cleanup trap that stops everything it started, and a guard
# that fails the test if the kernel clock discipline changed while it ran.
#
# Environment (meson passes the first three; all have defaults for running a test by hand):
#   TSNTS_SRC_DIR         source tree (default: two levels above this file)
#   TSNTS_BUILD_DIR       meson build dir (default: $TSNTS_SRC_DIR/build)
#   TSNTS_ADJTIMEX_READ   test/tools/probes/adjtimex-read (default: the one in $TSNTS_BUILD_DIR)
#   TSNTS_PEERS_DIR       tree made by test/tools/fixtures/fetch-peers.sh
#                         (default: ${XDG_CACHE_HOME:-$HOME/.cache}/timesyncd-nts/peers)
#   TSNTS_KEEP_TMP=1      keep the temp dir after the test
[ -n "${_TSNTS_COMMON_SH:-}" ] && return 0
_TSNTS_COMMON_SH=1

set -euo pipefail

TSNTS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TSNTS_SRC_DIR=${TSNTS_SRC_DIR:-$(cd "$TSNTS_LIB_DIR/../.." && pwd)}
export TSNTS_BUILD_DIR=${TSNTS_BUILD_DIR:-$TSNTS_SRC_DIR/build}
export TSNTS_ADJTIMEX_READ=${TSNTS_ADJTIMEX_READ:-$TSNTS_BUILD_DIR/test/tools/probes/adjtimex-read}
export TSNTS_PEERS_DIR=${TSNTS_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/timesyncd-nts/peers}

# Meson's exit code for a skipped test.
readonly EXIT_SKIP=77
# CAP_SYS_TIME, linux/capability.h.
readonly CAP_SYS_TIME_BIT=25

_tsnts_pids=()
_tsnts_cleanups=()
_tsnts_port_dir="${TMPDIR:-/tmp}/tsnts-ports"

log() { echo "[$(date +%T.%3N)] $*" >&2; }
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit "$EXIT_SKIP"; }

# A prerequisite that CI always provides is missing: fail in CI, skip for a local run.
missing_prerequisite() {
        if [ -n "${CI:-}" ]; then
                fail "$* (CI must provide this)"
        fi
        skip "$*"
}

# run_case FUNCTION ARG...: runs one named check of a test script; the first failure ends it.
run_case() {
        log "RUN  $1"
        "$@"
        log "PASS $1"
}

# Runs CMD with CAP_SYS_TIME gone from the bounding and inheritable sets, so neither it nor
# anything it executes can ever set the clock.
NOSYSTIME=(setpriv --bounding-set=-sys_time --inh-caps=-sys_time --)
run_nosystime() {
        "${NOSYSTIME[@]}" "$@"
}

# Stopped (TERM, then KILL) by the cleanup trap; for processes that leave our process tree,
# like a forking daemon. Children of the test shell are found without this.
track_pid() {
        _tsnts_pids+=("$1")
}

# Runs CMD... at cleanup, after all processes are gone; last registered runs first.
at_cleanup() {
        _tsnts_cleanups+=("$(printf '%q ' "$@")")
}

# Starts CMD... in the background without CAP_SYS_TIME, output appended to LOGFILE (a restart
# keeps the earlier run). Sets DAEMON_PID.
start_daemon() {
        local logfile=$1
        shift
        # A simple command, not a function, so that $! is the daemon itself after setpriv's exec.
        "${NOSYSTIME[@]}" "$@" >>"$logfile" 2>&1 &
        DAEMON_PID=$!
        track_pid "$DAEMON_PID"
}

# stop_daemon PID: TERM (then KILL) a process from start_daemon and reap it.
stop_daemon() {
        kill_pids "$1"
        wait "$1" 2>/dev/null || true
}

_descendants() {
        local parent=$1 child
        for child in $(ps -o pid= --ppid "$parent" 2>/dev/null); do
                echo "$child"
                _descendants "$child"
        done
}

# A zombie counts as gone: it only waits for its parent (maybe a PID 1 that is slow to reap).
pid_alive() {
        local state
        state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
        [ "${state:0:1}" != Z ]
}

_all_gone() {
        local p
        for p; do
                ! pid_alive "$p" || return 1
        done
}

# Sends TERM to each PID, waits up to 5 s for them to go, then KILLs what is left.
kill_pids() {
        local pid left=()
        [ "$#" -gt 0 ] || return 0
        kill -TERM "$@" 2>/dev/null || true
        wait_for 5 _all_gone "$@" || {
                for pid; do pid_alive "$pid" && left+=("$pid"); done
                log "still running after SIGTERM, killing: ${left[*]}"
                kill -KILL "${left[@]}" 2>/dev/null || true
        }
}

# grep_q ARG...: `grep -q` that reads its whole input. In `producer | grep -q` under pipefail,
# grep leaving at the first match ends the pipe under a producer still writing (a log longer
# than the pipe's buffer), and its broken pipe fails the pipeline: a line that is there would
# read as missing.
grep_q() { grep "$@" >/dev/null; }

# Polls CMD... until it succeeds; returns 1 after TIMEOUT seconds (a guard against hangs, not a
# measurement). Starts with 5 ms between tries and backs off to 100 ms.
wait_for() {
        local timeout=$1 delay=0.005 deadline now
        shift
        deadline=$(( ${EPOCHREALTIME/./} + timeout * 1000000 ))
        while ! "$@"; do
                now=${EPOCHREALTIME/./}
                [ "$now" -lt "$deadline" ] || return 1
                sleep "$delay"
                case $delay in
                        0.005) delay=0.01 ;;
                        0.01) delay=0.02 ;;
                        0.02) delay=0.05 ;;
                        *) delay=0.1 ;;
                esac
        done
}

_port_in_use() {
        [ -n "$(ss -Htuan "sport = :$1" 2>/dev/null)" ]
}

# Reserves PORT for this test across concurrently running tests: mkdir is atomic. A reservation
# whose owner died is taken over.
_port_reserve() {
        local dir="$_tsnts_port_dir/$1" owner
        if ! mkdir "$dir" 2>/dev/null; then
                owner=$(cat "$dir/owner" 2>/dev/null || true)
                [ -n "$owner" ] && ! pid_alive "$owner" || return 1
        fi
        # $$ is the test shell even inside $(free_port).
        echo $$ >"$dir/owner"
}

_ports_release() {
        local owner pid
        for owner in "$_tsnts_port_dir"/*/owner; do
                # read, a builtin: a fork per reservation took 20 s with a few hundred of them.
                read -r pid <"$owner" 2>/dev/null || continue
                [ "$pid" != $$ ] || rm -rf "${owner%/owner}"
        done
}

# Prints a random port, below the kernel's ephemeral range, that no TCP or UDP socket uses and
# that no other running test has reserved. Call it as port=$(free_port): the reservation is
# kept by the test shell and released at cleanup.
free_port() {
        local port
        mkdir -p "$_tsnts_port_dir"
        for _ in $(seq 1 200); do
                port=$(( 10000 + SRANDOM % 22000 ))
                _port_in_use "$port" && continue
                _port_reserve "$port" || continue
                echo "$port"
                return 0
        done
        fail "no free port found"
}

_comm_is() {
        [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

# wait_exec PID COMM: waits until PID runs the program named COMM. Right after `&` the PID is
# still a copy of the shell with all capabilities, so check capabilities only after this (or
# after the daemon is known to be listening).
wait_exec() {
        wait_for 5 _comm_is "$1" "${2:0:15}" || fail "process $1 did not become '$2' within 5 s"
}

_sigterm_blocked() {
        local mask
        mask=$(awk '$1 == "SigBlk:" { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
        [ -n "$mask" ] && (( (0x$mask >> 14) & 1 ))
}

# wait_signals_blocked PID: waits until PID blocks SIGTERM (bit 14 of SigBlk in /proc/PID/status),
# the moment from which a daemon of ours handles SIGTERM: between its exec and then the dynamic
# loader (and a sanitizer's runtime) run, and a SIGTERM kills by default action (status 143).
wait_signals_blocked() {
        wait_for 5 _sigterm_blocked "$1" || fail "process $1 did not block SIGTERM within 5 s"
}

# Fails unless bit 25 (CAP_SYS_TIME) is clear in the bounding, permitted and effective sets of
# PID, read from /proc/PID/status.
assert_no_sys_time() {
        local pid=$1 name=${2:-pid $1} field value
        [ -r "/proc/$pid/status" ] || fail "$name ($pid) is not running"
        for field in CapBnd CapPrm CapEff; do
                value=$(awk -v f="$field:" '$1 == f { print $2 }' "/proc/$pid/status")
                [ -n "$value" ] || fail "$name: no $field in /proc/$pid/status"
                if (( (0x$value >> CAP_SYS_TIME_BIT) & 1 )); then
                        fail "$name ($pid) has CAP_SYS_TIME in $field=$value"
                fi
        done
}

# The discipline fields that any clock adjustment would change. maxerror/esterror are left out:
# the kernel grows maxerror by itself as time passes.
_clock_snapshot() {
        "$TSNTS_ADJTIMEX_READ" | grep -E '^(status|offset|freq|tick)='
}

# clock_guard_start DIR: saves the snapshot to DIR/clock.before.
clock_guard_start() {
        [ -x "$TSNTS_ADJTIMEX_READ" ] || fail "adjtimex-read not found at $TSNTS_ADJTIMEX_READ (build first)"
        _clock_snapshot >"$1/clock.before"
}

# clock_guard_check DIR: returns 1 (and says what differs) if the kernel clock discipline
# changed since clock_guard_start DIR.
clock_guard_check() {
        local dir=$1
        [ -e "$dir/clock.before" ] || return 0
        _clock_snapshot >"$dir/clock.after"
        if ! diff -u "$dir/clock.before" "$dir/clock.after" >&2; then
                echo "FAIL: the kernel clock discipline changed during the test (see diff above)" >&2
                return 1
        fi
}

# Stops the tracked processes and every descendant of this shell ($BASHPID: a subshell's own).
_stop_started() {
        # Read here: inside $(...) BASHPID would be that command substitution's own.
        local pids=() pid self=$BASHPID
        for pid in "${_tsnts_pids[@]}" $(_descendants "$self"); do
                pid_alive "$pid" && pids+=("$pid")
        done
        kill_pids "${pids[@]}"
        wait 2>/dev/null || true
}

# A process that escaped the test's tree (a daemon of a subshell that ended, reparented to PID 1)
# is out of reach of _stop_started, and would run on after the test. Every daemon a test starts
# names a path under TEST_TMPDIR in its command line: one still there now is stopped, and a
# failure, so that the leak gets fixed.
_left_behind_check() {
        local left
        left=$(pgrep -d, -f -- "$TEST_TMPDIR/" || true)
        [ -n "$left" ] || return 0
        echo "FAIL: processes left behind by the test:" >&2
        ps -o pid=,args= -p "$left" | cut -c 1-300 >&2
        # shellcheck disable=SC2086 # one PID per word
        kill_pids ${left//,/ }
        return 1
}

_test_cleanup() {
        local rc=$? i f
        set +e
        trap - EXIT INT TERM
        _stop_started
        for (( i = ${#_tsnts_cleanups[@]} - 1; i >= 0; i-- )); do
                eval "${_tsnts_cleanups[i]}"
        done
        _ports_release
        _left_behind_check || rc=1
        clock_guard_check "$TEST_TMPDIR" || rc=1
        # Programs built with ASan/UBSan report into their logs, often only when they exit.
        if grep -rlE --include='*.log' 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TEST_TMPDIR" >&2 2>/dev/null; then
                echo "FAIL: sanitizer report in the log(s) above" >&2
                rc=1
        fi
        if [ "$rc" != 0 ] && [ "$rc" != "$EXIT_SKIP" ]; then
                while IFS= read -r -d '' f; do
                        echo "---- ${f#"$TEST_TMPDIR"/} (last 40 lines)" >&2
                        tail -n 40 "$f" >&2
                done < <(find "$TEST_TMPDIR" -name '*.log' -size +0 -print0 2>/dev/null)
        fi
        if [ -n "${TSNTS_KEEP_TMP:-}" ]; then
                echo "kept $TEST_TMPDIR" >&2
        else
                rm -rf "$TEST_TMPDIR"
        fi
        exit "$rc"
}

# Makes TEST_TMPDIR, snapshots the clock discipline, and installs the cleanup trap.
test_init() {
        [ "$(id -u)" = 0 ] || missing_prerequisite "integration tests need root (network namespaces, setpriv)"
        local t
        for t in setpriv ss ip unshare ps; do
                command -v "$t" >/dev/null || missing_prerequisite "$t not installed"
        done
        TEST_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/tsnts-$(basename "$0" .sh).XXXXXX")
        export TEST_TMPDIR
        trap _test_cleanup EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM
        clock_guard_start "$TEST_TMPDIR"
}

# make_test_certs: the test PKI of test/tools/fixtures/make-certs.sh in TEST_TMPDIR/certs.
# Sets CERTDIR.
make_test_certs() {
        CERTDIR="$TEST_TMPDIR/certs"
        export CERTDIR
        bash "$TSNTS_SRC_DIR/test/tools/fixtures/make-certs.sh" "$CERTDIR"
}

# make_test_cert NAME FROM UNTIL [CA_FROM CA_UNTIL]: after make_test_certs, CERTDIR/NAME-chain.pem
# with the names of the test certificates, valid from FROM to UNTIL seconds from now; with
# CA_FROM and CA_UNTIL, issued by an intermediate CA valid then.
make_test_cert() {
        local name=$1 dates=() t
        shift
        for t; do
                dates+=("$(date -u -d "@$(($(date +%s) + t))" +%Y%m%d%H%M%SZ)")
        done
        bash "$TSNTS_SRC_DIR/test/tools/fixtures/make-certs.sh" "$CERTDIR" "$name" "${dates[@]}" >/dev/null
        chmod 0644 "$CERTDIR"/*.pem
}

# Prints the path of a binary from the fetch-peers tree (usr/sbin/chronyd ...). A missing tree
# skips a local run; a tree that fetch-peers completed but lacks the binary is a failure.
peers_bin() {
        local bin="$TSNTS_PEERS_DIR/root/$1"
        [ -x "$bin" ] && { echo "$bin"; return 0; }
        [ -e "$TSNTS_PEERS_DIR/.stamp" ] && fail "fetch-peers.sh completed in $TSNTS_PEERS_DIR but $1 is missing"
        missing_prerequisite "$1 not found; run: test/tools/fixtures/fetch-peers.sh $TSNTS_PEERS_DIR"
}

# run_with_prefix ARRAY CMD...: runs CMD through the command prefix in the array named ARRAY
# (ip netns exec NS, unshare ...). CMD may be a shell function of the test: all function
# definitions are carried over, the inner shell sees exported variables only, and whatever the
# function started in the background is stopped when it returns (the namespace would otherwise
# outlive the call, and the processes would leave the test's process tree).
run_with_prefix() {
        local -n _prefix=$1
        shift
        if declare -F "$1" >/dev/null; then
                "${_prefix[@]}" bash -c "set -euo pipefail
                        $(declare -f)
                        $(declare -p EXIT_SKIP CAP_SYS_TIME_BIT TSNTS_LIB_DIR NOSYSTIME _tsnts_port_dir)
                        _TSNTS_COMMON_SH=1
                        _tsnts_pids=()
                        trap _stop_started EXIT
                        \"\$@\"" bash "$@"
        else
                "${_prefix[@]}" "$@"
        fi
}

# Prints "LEAP STRATUM" from one plain NTPv4 client exchange with HOST PORT (1 s timeout), or
# fails. Debian's python3 on purpose: the first python3 on PATH may be a private build.
ntp_probe() {
        local prefix=()
        if [ "$1" = --netns ]; then
                prefix=(ip netns exec "$2")
                shift 2
        fi
        [ -x /usr/bin/python3 ] || missing_prerequisite "/usr/bin/python3 not installed (fetch-peers.sh installs it)"
        "${prefix[@]}" /usr/bin/python3 - "$1" "$2" <<'PY'
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
family = socket.AF_INET6 if ":" in host else socket.AF_INET
with socket.socket(family, socket.SOCK_DGRAM) as s:
    s.settimeout(1)
    s.sendto(bytes([0x23]) + bytes(47), (host, port))  # LI 0, version 4, mode 3 (client)
    reply = s.recv(2048)
if len(reply) < 48 or reply[0] & 7 != 4:
    sys.exit("not an NTP server reply")
print(reply[0] >> 6, reply[1])
PY
}

# netns_create: makes a network namespace with a unique name and lo up, deleted (with everything
# running in it) at cleanup. Sets NETNS.
netns_create() {
        export NETNS="tsnts-$$-$SRANDOM"
        ip netns add "$NETNS"
        at_cleanup netns_delete "$NETNS"
        ip netns exec "$NETNS" ip link set lo up
}

netns_delete() {
        local pids
        pids=$(ip netns pids "$1" 2>/dev/null || true)
        # shellcheck disable=SC2086 # one PID per word
        [ -z "$pids" ] || kill_pids $pids
        ip netns delete "$1"
}

# netns_exec NS CMD...: runs CMD (a program or a function of the test) inside NS.
netns_exec() {
        local prefix=(ip netns exec "$1")
        shift
        run_with_prefix prefix "$@"
}
