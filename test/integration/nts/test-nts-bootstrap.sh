#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTSBootstrap= (docs/NTS.md, "Bootstrap with a wrong clock"). The daemon runs in observe mode
# with the fake clock of --test-clock-offset= and a clock file of the test's choosing; chronyd
# serves a time of its own through true-time.so (years ahead, no clock touched). So each case
# is one boot situation: the bootstrap works from a clock still at its floor (set by the daemon,
# or by PID 1 early in boot), and is refused for a correct clock, whatever the certificate;
# an expired certificate is never bootstrapped; bootstrap time outside the certificate's
# validity is refused; NTSBootstrap=no turns it off.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs
chmod 0755 "$CERTDIR"
chmod 0644 "$CERTDIR"/*.pem
{ [ -x "$TSNTS_TRUE_TIME_BASE" ] && [ -f "$TSNTS_TRUE_TIME" ]; } || fail "true-time.so or true-time-base not built"

DAY=86400
YEAR=$((365 * DAY))

# CLOCK_BOOTTIME in whole seconds: /proc/uptime is read from it.
uptime_sec() { cut -d. -f1 /proc/uptime; }

n_servers=0
# start_server CHAIN AHEAD: chronyd with CERTDIR/CHAIN, its clock AHEAD seconds ahead of the
# system's (0: the system's). Sets ke.
start_server() {
        local chain=$1 ahead=$2 base
        [ -n "${CHRONY_RUNDIR:-}" ] && stop_chrony "$CHRONY_RUNDIR"
        n_servers=$((n_servers + 1))
        CHRONY_RUNDIR=$TEST_TMPDIR/chrony-$n_servers
        mkdir -p "$CHRONY_RUNDIR/certs"
        cp "$CERTDIR/$chain" "$CHRONY_RUNDIR/certs/server-chain.pem"
        cp "$CERTDIR/server.key" "$CHRONY_RUNDIR/certs/server.key"
        CHRONY_ENV=()
        if [ "$ahead" != 0 ]; then
                base=$("$TSNTS_TRUE_TIME_BASE")
                CHRONY_ENV=("LD_PRELOAD=$TSNTS_TRUE_TIME" "TRUE_TIME_BASE=$((${base%:*} + ahead * 1000000000)):${base#*:}")
        fi
        start_chrony_nts_server "$CHRONY_RUNDIR" "$CHRONY_RUNDIR/certs" "$(free_port)" "$(free_port)"
        ke=$(sed -n 's/^ntsport //p' "$CHRONY_RUNDIR/chrony.conf")
}

# start_client OFFSET CLOCK_FILE_MTIME [CONF-LINE...]: a daemon for the server of start_server,
# with a fresh state directory whose clock file has that mtime (epoch seconds; "none": no file)
# and, unless OFFSET is "real", the fake clock OFFSET seconds off the system's.
start_client() { start_fresh_timesyncd "$1" "$2" "localhost:$ke" "${@:3}"; }

_refused_or_synchronized() {
        log_has "Bootstrap with localhost:$ke refused: " || log_has "Initial clock synchronization"
}

# assert_bootstrap_refused REASON: the daemon refused the bootstrap, said why (REASON, a
# pattern) in one warning, and neither took a sample nor stepped the clock.
assert_bootstrap_refused() {
        wait_for 20 _refused_or_synchronized || fail "no bootstrap decision within 20 s"
        if log_has "Initial clock synchronization"; then
                grep -E "bootstrapping|Initial clock synchronization|Test clock" "$TIMESYNCD_LOG"
                fail "a not yet valid certificate moved the clock"
        fi
        grep "Bootstrap with localhost:$ke refused: " "$TIMESYNCD_LOG"
        log_has "Bootstrap with localhost:$ke refused: its certificate is not yet valid by our clock, and $1" ||
                fail "the refusal does not say '$1'"
        log_has "bootstrapping" && fail "bootstrap key exchange despite the refusal"
        log_has "Test clock: stepped" && fail "the clock was stepped"
        true
}

# assert_bootstrapped: the bootstrap stepped the clock, the key exchange was repeated with every
# check against the corrected clock, and replies verify with those keys, which a clean stop
# saves (the daemon is stopped).
assert_bootstrapped() {
        wait_log "bootstrapping (its time is used only within" 20
        wait_log "Bootstrap: the clock took the time of localhost:$ke" 30
        wait_log_count "NTS key exchange with localhost:$ke .* done" 2 30
        wait_log_count "NTS reply from localhost:$ke verified" 2 30
        grep -E "advancing|bootstrapping|Bootstrap|Initial clock|Test clock: stepped" "$TIMESYNCD_LOG"
        log_has "Refusing bootstrap time" && fail "bootstrap time refused"
        # One server, one line saying so: its client's.
        [ "$(log_count "Bootstrap: the clock took the time")" = 1 ] ||
                fail "$(log_count "Bootstrap: the clock took the time") lines say the clock took the bootstrap time"
        # Saved at a clean stop, unlike bootstrap keys.
        stop_timesyncd
        TIMESYNCD_PID=
        ls "$TEST_TMPDIR"/state/nts-* >/dev/null 2>&1 || fail "the keys of the full key exchange were not saved at stop"
        true
}

# The issue's reproduction: a correct clock, a server two years fast whose certificate for its
# name is valid from two years ahead. Unsynchronized is true at every boot; before the fix the
# daemon took that time ("Initial clock synchronization ... offset +63158399 s, NTS
# authenticated"). The clock file was written just now: a daemon restarted on a running machine.
test_correct_clock_is_never_moved_by_a_not_yet_valid_certificate() {
        make_test_cert ahead $((2 * YEAR - DAY)) $((3 * YEAR))
        start_server ahead-chain.pem $((2 * YEAR))
        # At info level, with key exchanges 1, 2 and 4 s apart: the refusal is one warning.
        TIMESYNCD_LOG_LEVEL=info start_client 0 "$(date +%s)" "ConnectionRetrySec=1"
        assert_bootstrap_refused "nothing says that the clock is behind: its floor (clock file, .*) lies [0-9]* s after the moment of boot"
        wait_log "NTS key exchange with localhost:$ke failed: .*certificate is not yet valid: valid from [0-9-]* [0-9:]* UTC; no bootstrap: the clock is not known to be behind"
        wait_log_count "NTS key exchange with localhost:$ke failed" 3 20
        [ "$(log_count "Bootstrap with localhost:$ke refused")" = 1 ] || fail "the refusal was logged more than once"
        log_has "Initial clock synchronization" && fail "a later key exchange moved the clock"
        true
}

# A correct clock after a quick reboot: the clock file was written as the machine went down,
# 5 s before the (fake) clock says this boot began. The clock is close to the floor, and
# ahead of it by more than the time since boot: an RTC set it, not the floor.
test_correct_clock_after_a_quick_reboot_is_never_bootstrapped() {
        local up now offset
        up=$(uptime_sec)
        now=$(date +%s)
        offset=$((up + 5))
        make_test_cert reboot $((offset + 2 * YEAR - DAY)) $((offset + 3 * YEAR))
        start_server reboot-chain.pem $((offset + 2 * YEAR))
        start_client "$offset" "$now"
        assert_bootstrap_refused "nothing says that the clock is behind: the clock reads [4-6] s later than its floor (clock file, .*) plus the time since boot"
}

# The host's own clock (observe mode, no fake clock) is correct and never bootstrapped: the
# kernel calls it synchronized, or nothing says it is behind its floor.
test_observe_mode_never_bootstraps_the_host_clock() {
        start_server future-chain.pem 0
        start_client real none
        assert_bootstrap_refused "\(the kernel does not report the clock unsynchronized\|nothing says that the clock is behind\)"
}

# A clock years behind (a dead RTC battery), which the daemon advances to the floor at start;
# the server's certificate was issued after the floor and the server tells the time a day on.
test_bootstrap_works_from_the_floor_the_daemon_set() {
        make_test_cert fresh 3600 $((30 * DAY))
        start_server fresh-chain.pem "$DAY"
        start_client $((-2 * YEAR)) $(($(date +%s) - 600))
        wait_log "System clock is behind the last recorded time, advancing it to"
        assert_bootstrapped
        log_has "which is not synchronized and behind (the daemon advanced the clock to its floor" ||
                fail "the bootstrap does not name its evidence"
}

# A board without RTC whose clock PID 1 set to the clock file's time 30 s after boot (systemd
# >= 256 does so): the daemon finds it past the floor by the time since then, no advance.
test_bootstrap_works_from_the_floor_pid1_set_early_in_boot() {
        local up now offset
        up=$(uptime_sec)
        now=$(date +%s)
        offset=$((up - 30))
        make_test_cert early $((offset + 3600)) $((offset + 30 * DAY))
        start_server early-chain.pem $((offset + DAY))
        start_client "$offset" "$now"
        assert_bootstrapped
        log_has "advancing" && fail "the daemon advanced a clock that PID 1 had set"
        log_has "which is not synchronized and behind (the clock reads as set to its floor (clock file, .*) [23][0-9] s after boot" ||
                fail "the bootstrap does not name its evidence"
}

# From the floor (the clock file, written now: after the test CA was made, so only the leaf's
# dates fail), a certificate that expired in 2021.
test_expired_certificate_is_never_bootstrapped() {
        start_server expired-chain.pem 0
        start_client $((-2 * YEAR)) "$(date +%s)"
        wait_log "certificate has expired"
        log_has "bootstrapping" && fail "an expired certificate was bootstrapped"
        log_has "Initial clock synchronization" && fail "synchronized with an expired certificate"
        true
}

# From the floor, a server whose time lies outside its certificate's validity (valid from
# 2099): the bootstrap exchange happens, its time is refused.
test_bootstrap_time_outside_the_certificate_is_refused() {
        start_server future-chain.pem 0
        start_client $((-2 * YEAR)) none
        wait_log "bootstrapping (its time is used only within" 20
        wait_log "Refusing bootstrap time from localhost:$ke: it lies outside the validity period of its certificate chain" 20
        log_has "Initial clock synchronization" && fail "synchronized with time outside the certificate's validity"
        stop_timesyncd
        TIMESYNCD_PID=
        ls "$TEST_TMPDIR"/state/nts-* 2>/dev/null && fail "bootstrap keys were saved"
        true
}

# A leaf valid now under an intermediate CA valid only from 30 days ahead (a rotation staged
# early): the "not yet valid" is the intermediate's, found before the leaf is looked at. A
# server a day ahead is inside the leaf's period but before the intermediate's: refused, as
# no certificate chain is valid at that time.
test_bootstrap_time_must_lie_within_every_certificate_of_the_chain() {
        make_test_cert staged $((-DAY)) "$YEAR" $((30 * DAY)) "$YEAR"
        start_server staged-chain.pem "$DAY"
        start_client $((-2 * YEAR)) "$(date +%s)"
        wait_log "bootstrapping (its time is used only within" 20
        wait_log "Refusing bootstrap time from localhost:$ke: it lies outside the validity period of its certificate chain" 20
        log_has "Initial clock synchronization" && fail "synchronized to a time at which the chain is not valid"
        true
}

test_bootstrap_can_be_turned_off() {
        make_test_cert off 3600 $((30 * DAY))
        start_server off-chain.pem "$DAY"
        start_client $((-2 * YEAR)) none "NTSBootstrap=no"
        assert_bootstrap_refused "NTSBootstrap=no"
}

run_case test_correct_clock_is_never_moved_by_a_not_yet_valid_certificate
run_case test_correct_clock_after_a_quick_reboot_is_never_bootstrapped
run_case test_observe_mode_never_bootstraps_the_host_clock
run_case test_bootstrap_works_from_the_floor_the_daemon_set
run_case test_bootstrap_works_from_the_floor_pid1_set_early_in_boot
run_case test_expired_certificate_is_never_bootstrapped
run_case test_bootstrap_time_outside_the_certificate_is_refused
run_case test_bootstrap_time_must_lie_within_every_certificate_of_the_chain
run_case test_bootstrap_can_be_turned_off
