#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-timesyncd --validate: the settings in effect after the main file and every drop-in of
# the standard search (a private root, use_config_root), each warning with its file and line,
# exit status 1 on errors and 0 otherwise; and it touches nothing: no socket of any kind (so no
# bus, no DNS, no NTP), no file written (strace). A --config= that does not exist is said once.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init

root=$TEST_TMPDIR/root
use_config_root "$root"
main=$root/etc/systemd/timesyncd.conf
dropins=$root/etc/systemd/timesyncd.conf.d

# validate OUT: runs --validate on the private root; sets RC, stdout in OUT, stderr in OUT.err.
validate() {
        RC=0
        "${TIMESYNCD_WRAPPER[@]}" "${NOSYSTIME[@]}" "$TIMESYNCD" --validate >"$1" 2>"$1.err" || RC=$?
}

# Line numbers count write_conf's FallbackNTS= as line 2.
test_dropins_apply_and_warnings_are_listed() {
        local out=$TEST_TMPDIR/ok.out
        write_conf "$main" "NTS=a.example" "PollIntervalMinSec=5" "Foo=1"
        mkdir -p "$dropins"
        write_conf "$dropins/50-more.conf" "NTS=b.example:4461" "NTSMaxSources=2"
        validate "$out"
        [ "$RC" = 0 ] || fail "exit status $RC for warnings only: $(cat "$out.err")"
        grep -qx "NTS=a.example b.example:4461" "$out" || fail "NTS= not merged: $(grep ^NTS= "$out")"
        grep -qx "NTSMaxSources=2" "$out" || fail "the drop-in's NTSMaxSources= not in effect"
        grep -qx "PollIntervalMinSec=32s" "$out" || fail "PollIntervalMinSec=5 not replaced by the default"
        grep -qx "FallbackNTS=" "$out" || fail "FallbackNTS= of the test root not empty"
        grep -qx "# Time from: NTS= (NTS only)" "$out" || fail "no source line: $(tail -1 "$out")"
        grep -q "timesyncd.conf:4: PollIntervalMinSec=5 is below 16s, using the default 32s." "$out.err" ||
                fail "range warning missing: $(cat "$out.err")"
        grep -q "timesyncd.conf:5: Unknown key name 'Foo' in section 'Time', ignoring." "$out.err" ||
                fail "unknown key warning missing"
        grep -qx "0 errors, 2 warnings." "$out.err" || fail "summary: $(tail -1 "$out.err")"
        echo "PASS test_dropins_apply_and_warnings_are_listed"
}

test_errors_give_a_non_zero_exit() {
        local out=$TEST_TMPDIR/err.out
        rm -rf "$dropins"
        write_conf "$main" "NTSServers=a.example" "FallbackNTP=192.0.2.1"
        validate "$out"
        [ "$RC" = 1 ] || fail "exit status $RC for a mistyped NTS key"
        grep -q "Unknown key name 'NTSServers' in section 'Time' looks like an NTS setting (did you mean NTS=?)" \
                "$out.err" || fail "no error naming NTS=: $(cat "$out.err")"
        grep -qx "NTSRequired=yes" "$out" || fail "NTSRequired= not shown as in effect"
        grep -qx "1 error, 0 warnings." "$out.err" || fail "summary: $(tail -1 "$out.err")"
        write_conf "$main" "NTS=bad_name!x"
        validate "$out"
        [ "$RC" = 1 ] || fail "exit status $RC for NTS= without a valid server"
        grep -q "NTS= names no valid server" "$out.err" || fail "no error for NTS= without a valid server"
        # No fallback either, as in the daemon (timesync_config_uses_fallback_nts()).
        grep -qx "# Time from: nothing: NTS= names no valid server (runtime NTS servers only)" "$out" ||
                fail "source line: $(grep '^# Time from' "$out")"
        echo "PASS test_errors_give_a_non_zero_exit"
}

test_it_touches_nothing() {
        local out=$TEST_TMPDIR/strace.out
        command -v strace >/dev/null || missing_prerequisite "strace not installed"
        write_conf "$main" "NTP=192.0.2.1" "FallbackNTS=localhost:9"
        RC=0
        # LeakSanitizer cannot run under ptrace (an ASan build would exit 1 for that alone).
        "${TIMESYNCD_WRAPPER[@]}" "${NOSYSTIME[@]}" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -o "$out" -e trace=socket,connect,mkdir,unlink,rename \
                -e trace=/open.* "$TIMESYNCD" --validate >/dev/null 2>&1 || RC=$?
        [ "$RC" = 0 ] || fail "exit status $RC"
        ! grep -E "^[0-9]+ +(socket|connect)\(" "$out" || fail "--validate opened a socket"
        ! grep -E "^[0-9]+ +(mkdir|unlink|rename)\(" "$out" || fail "--validate changed a file"
        ! grep -E "open.*O_(WRONLY|RDWR|CREAT)" "$out" || fail "--validate opened a file for writing"
        grep -q "timesyncd.conf" "$out" || fail "strace saw no configuration read: $(head -5 "$out")"
        echo "PASS test_it_touches_nothing"
}

# A --config= that does not exist is an error, said once: by the daemon, which then exits, and
# by --validate.
test_missing_config_file_is_said_once() {
        local out=$TEST_TMPDIR/absent.out absent=$TEST_TMPDIR/absent.conf
        RC=0
        run_nosystime env SYSTEMD_LOG_TARGET=console "$TIMESYNCD" --observe --config="$absent" \
                --state-dir="$TEST_TMPDIR/state" --runtime-dir="$TEST_TMPDIR/runtime" >"$out" 2>&1 || RC=$?
        cat "$out"
        [ "$RC" = 1 ] || fail "the daemon exited with $RC for a missing --config="
        [ "$(grep -c "absent\.conf'\?  *does not exist" "$out")" = 1 ] || fail "the daemon did not say it once: $(cat "$out")"
        RC=0
        run_nosystime "$TIMESYNCD" --validate --config="$absent" >"$out" 2>&1 || RC=$?
        [ "$RC" = 1 ] || fail "--validate exited with $RC for a missing --config="
        [ "$(grep -c "absent\.conf'\?  *does not exist" "$out")" = 1 ] || fail "--validate did not say it once: $(cat "$out")"
        echo "PASS test_missing_config_file_is_said_once"
}

run_case test_dropins_apply_and_warnings_are_listed
run_case test_errors_give_a_non_zero_exit
run_case test_it_touches_nothing
run_case test_missing_config_file_is_said_once
