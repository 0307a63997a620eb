#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Which polkit action each privileged method asks about for an unprivileged caller, with a
# stand-in for polkit (fake-polkit) on a private system bus: SetRuntimeNTPServers and
# SetRuntimeNTSServers stock's org.freedesktop.timesync1.set-runtime-servers, RetrySources its
# own org.freedesktop.timesync1.retry-sources (a retry sets no server: the question polkit puts
# to the caller must say what is asked), each declared by a policy file the build installs.
# A refusal names the action asked about. Root is never asked about (test-dbus-timedatectl).
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --bus
FAKE_POLKIT=${TSNTS_FAKE_POLKIT:-$TSNTS_BUILD_DIR/test/integration/daemon/fake-polkit}
[ -x "$FAKE_POLKIT" ] || fail "$FAKE_POLKIT not built"
id nobody >/dev/null 2>&1 || missing_prerequisite "no user nobody"
command -v busctl >/dev/null || missing_prerequisite "busctl not installed (package systemd)"
# busctl says "Access denied" for every refusal; dbus-send prints the daemon's own words.
command -v dbus-send >/dev/null || missing_prerequisite "dbus-send not installed (package dbus)"

srv=$(free_port)
start_ntp_test_server one "$srv"
write_conf "$TEST_TMPDIR/ts.conf" "NTP=127.0.0.1:$srv"
start_timesyncd "$TEST_TMPDIR/ts.conf"
wait_log "Initial clock synchronization"
wait_for 10 busctl --system status org.freedesktop.timesync1 >/dev/null 2>&1 || fail "the daemon is not on the bus"

POLKIT_LOG=$TEST_TMPDIR/polkit.log

# start_polkit yes|no: the stand-in, answering every question so.
start_polkit() {
        [ -z "${POLKIT_PID:-}" ] || stop_daemon "$POLKIT_PID"
        : >"$POLKIT_LOG"
        start_daemon "$POLKIT_LOG" "$FAKE_POLKIT" "$1"
        POLKIT_PID=$DAEMON_PID
        wait_for 10 grep -qx ready "$POLKIT_LOG" || fail "fake-polkit did not start: $(cat "$POLKIT_LOG")"
}

# call_as_nobody METHOD [ARG...]: a method of the daemon (dbus-send's argument syntax), called
# by an unprivileged user.
call_as_nobody() {
        local method=$1
        shift
        setpriv --reuid=nobody --regid=nogroup --clear-groups dbus-send --system --print-reply \
                --dest=org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                "org.freedesktop.timesync1.Manager.$method" "$@"
}

# asked ACTION: the one question to polkit since it started was about ACTION, which a policy
# file of units/ declares.
asked() {
        local questions
        questions=$(grep -v '^ready$' "$POLKIT_LOG" || true)
        [ "$questions" = "$1" ] || fail "polkit was asked about '${questions//$'\n'/, }', not $1"
        grep -qF "<action id=\"$1\">" "$TSNTS_SRC_DIR"/units/*.policy || fail "no policy file of units/ declares $1"
}

test_each_method_asks_about_its_own_action() {
        local out
        start_polkit yes
        out=$(call_as_nobody RetrySources 2>&1) || fail "RetrySources as nobody, allowed by polkit, failed: $out"
        [[ $out == *"uint32 0"* ]] || fail "RetrySources said: $out"
        wait_log "Retry asked over D-Bus: 0 failing sources retried now\." 5
        asked org.freedesktop.timesync1.retry-sources

        local kind
        for kind in NTP NTS; do
                start_polkit yes
                out=$(call_as_nobody "SetRuntime${kind}Servers" "array:string:127.0.0.1:$srv" 2>&1) ||
                        fail "SetRuntime${kind}Servers as nobody, allowed by polkit, failed: $out"
                wait_log "Runtime $kind servers set over D-Bus\." 5
                asked org.freedesktop.timesync1.set-runtime-servers
        done
}

test_a_refusal_names_the_action() {
        local out
        start_polkit no
        if out=$(call_as_nobody RetrySources 2>&1); then
                fail "RetrySources as nobody, refused by polkit, succeeded: $out"
        fi
        [[ $out == *"Access denied to org.freedesktop.timesync1.retry-sources."* ]] ||
                fail "the refusal does not name the action: $out"
        asked org.freedesktop.timesync1.retry-sources
}

test_without_polkit_only_root_may_and_the_refusal_says_what() {
        local out
        stop_daemon "$POLKIT_PID"
        POLKIT_PID=
        # The name goes with the process; the bus may say so a moment later.
        wait_for 10 bash -c '! busctl --system status org.freedesktop.PolicyKit1 >/dev/null 2>&1' ||
                fail "org.freedesktop.PolicyKit1 stays on the bus"
        if out=$(call_as_nobody SetRuntimeNTSServers "array:string:127.0.0.1:$srv" 2>&1); then
                fail "SetRuntimeNTSServers as nobody without polkit succeeded: $out"
        fi
        [[ $out == *"Only root may set runtime NTS servers here (no polkit)."* ]] ||
                fail "the refusal does not say what was refused: $out"
}

run_case test_each_method_asks_about_its_own_action
run_case test_a_refusal_names_the_action
run_case test_without_polkit_only_root_may_and_the_refusal_says_what
stop_timesyncd
