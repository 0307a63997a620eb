#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# libssl and libcrypto are dlopen()ed: when they cannot be loaded, NTS servers give one clear
# error and no time at all (never plain NTP instead), the daemon keeps running and says why on
# D-Bus, and a plain NTP configuration works as before. The libraries are hidden from the
# daemon only: an empty file bind-mounted over them in a mount namespace of its own.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus

# The files the dynamic linker would open for these sonames.
# ldconfig's output is kept first: an awk that exits at its first match would leave ldconfig to
# die of SIGPIPE, which pipefail turns into a failed test.
ldcache=$(ldconfig -p)
hidden=()
for soname in libssl.so.3 libcrypto.so.3; do
        lib=$(awk -v s="$soname" '$1 == s && /x86-64|64bit/ { print $NF; exit }' <<<"$ldcache")
        [ -n "$lib" ] || lib=$(awk -v s="$soname" '$1 == s { print $NF; exit }' <<<"$ldcache")
        [ -n "$lib" ] || missing_prerequisite "$soname not in the dynamic linker cache (package libssl3)"
        hidden+=("$(realpath "$lib")")
done
: >"$TEST_TMPDIR/empty.so"
# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
TIMESYNCD_WRAPPER=(unshare --mount --propagation private
        bash -c 'for l in '"${hidden[*]}"'; do mount --bind "$0" "$l" || exit 1; done; exec "$@"' "$TEST_TMPDIR/empty.so")

start_nts_peer
ntp=$NTS_PEER_NTP_PORT ke=$NTS_PEER_KE_PORT srv=$NTS_PEER_DIR

server_name_is() { [ "$(timesync_property ServerName 2>/dev/null)" = "$1" ]; }

nts_status_on_bus() { timesync_property NTSStatus 2>/dev/null | grep_q .; }

test_nts_without_libssl_is_one_error_and_no_time() {
        local errors status
        write_nts_conf "$TEST_TMPDIR/nts.conf" "localhost:$ke" "NTP=127.0.0.1:$ntp" "PollIntervalMinSec=16"
        start_notify_listener
        # Warnings and errors only: what an administrator sees by default, and what is counted.
        TIMESYNCD_LOG_LEVEL=warning start_timesyncd "$TEST_TMPDIR/nts.conf"
        wait_log "NTS servers are configured but libssl.so.3 or libcrypto.so.3 is missing"
        # The daemon answers on the bus once it went past its start and selected a server.
        wait_for 10 nts_status_on_bus || fail "NTSStatus stayed empty on the bus"
        wait_for 10 server_name_is "localhost:$ke" ||
                fail "ServerName never became localhost:$ke"
        status=$(timesync_property NTSStatus)
        [ "$status" = "NTS unavailable: libssl.so.3 could not be loaded" ] || fail "NTSStatus is '$status'"
        # What `systemctl status` shows: the reason, not "Daemon is running".
        # shellcheck disable=SC2016 # expanded by eval, at each try of wait_for
        wait_for 10 eval '[ "$(last_status)" = "Not synchronizing. NTS unavailable: libssl.so.3 could not be loaded." ]' ||
                fail "STATUS= is '$(last_status)', not the reason"
        [ "$(timesync_property NTS)" = yes ] || fail "NTS property is not yes"
        [ "$(timesync_property NTSAuthenticated)" = no ] || fail "NTSAuthenticated is not no"
        errors=$(grep -c -i 'libssl\|libcrypto' "$TIMESYNCD_LOG" || true)
        [ "$errors" = 1 ] || fail "$errors log lines about libssl/libcrypto, expected exactly one"
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        [ "$(chrony_serverstat "$srv" "NTS-KE connections accepted")" = 0 ] || fail "chronyd saw a key exchange"
        [ "$(chrony_serverstat "$srv" "NTP packets received")" = 0 ] || fail "chronyd got an NTP request"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died"
        ! grep -Eq '/libssl\.so|/libcrypto\.so' "/proc/$TIMESYNCD_PID/maps" || fail "libssl/libcrypto mapped"
        stop_timesyncd
}

_stall_checks_seen() {
        [ "$(log_count "Stall check: nothing in progress, as intended")" -ge 3 ] || log_has "Nothing in progress with"
}

# Nothing is in flight on purpose: the stall check (every ConnectionRetrySec=, 1 s here) must not
# take that for a stall and "start over" each time (it did, every 30 s at the default).
test_missing_libssl_is_not_retried_by_the_stall_check() {
        write_nts_conf "$TEST_TMPDIR/nts.conf" "localhost:$ke" "ConnectionRetrySec=1"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/nts.conf"
        wait_log "NTS servers are configured but libssl.so.3 or libcrypto.so.3 is missing"
        wait_for 15 _stall_checks_seen || fail "the stall check did not run 3 times within 15 s"
        grep "Nothing in progress\|Stall check" "$TIMESYNCD_LOG"
        [ "$(log_count "Nothing in progress with")" = 0 ] || fail "the stall check started over"
        [ "$(log_count "NTS servers are configured but")" = 1 ] || fail "the libssl error was repeated"
        [ "$(chrony_serverstat "$srv" "NTS-KE connections accepted")" = 0 ] || fail "chronyd saw a key exchange"
        stop_timesyncd
}

test_plain_ntp_without_libssl_still_syncs() {
        write_conf "$TEST_TMPDIR/ntp.conf" "NTP=127.0.0.1:$ntp" "PollIntervalMinSec=16"
        : >"$TIMESYNCD_LOG"
        start_timesyncd "$TEST_TMPDIR/ntp.conf"
        wait_log "Initial clock synchronization to 127.0.0.1:$ntp"
        log_has "libssl\|libcrypto" && fail "libssl/libcrypto mentioned without NTS servers"
        [ "$(timesync_property NTSStatus)" = "" ] || fail "NTSStatus is not empty without NTS servers"
        stop_timesyncd
}

# nts-tls.c logs at debug level only, as nts-tls.h promises: without libssl (libcrypto is there),
# nts-query's failed key exchange names the cause once, without the loader's own warning beside it.
test_nts_query_without_libssl_names_the_cause_once() {
        local out=$TEST_TMPDIR/nts-query.out
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        unshare --mount --propagation private bash -c 'mount --bind "$0" "$1" && shift && exec "$@"' \
                "$TEST_TMPDIR/empty.so" "${hidden[0]}" env SYSTEMD_LOG_LEVEL=info \
                "$TSNTS_BUILD_DIR/tools/nts-query" "localhost:$ke" >"$out" 2>&1 || true
        cat "$out"
        grep -q "libssl cannot be loaded" "$out" || fail "nts-query does not say that libssl cannot be loaded"
        ! grep -q "Cannot load libssl" "$out" || fail "the loader's warning was logged beside the failure"
}

run_case test_nts_without_libssl_is_one_error_and_no_time
run_case test_missing_libssl_is_not_retried_by_the_stall_check
run_case test_plain_ntp_without_libssl_still_syncs
run_case test_nts_query_without_libssl_names_the_cause_once
