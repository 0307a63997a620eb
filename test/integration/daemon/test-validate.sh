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
        write_conf "$dropins/50-more.conf" "NTS=b.example:4461 c.example" "NTSMaxSources=2"
        validate "$out"
        [ "$RC" = 0 ] || fail "exit status $RC for warnings only: $(cat "$out.err")"
        grep -qx "NTS=a.example b.example:4461 c.example" "$out" || fail "NTS= not merged: $(grep ^NTS= "$out")"
        grep -qx "NTSMaxSources=2" "$out" || fail "the drop-in's NTSMaxSources= not in effect"
        grep -qx "PollIntervalMinSec=32s" "$out" || fail "PollIntervalMinSec=5 not replaced by the default"
        grep -qx "FallbackNTS=" "$out" || fail "FallbackNTS= of the test root not empty"
        grep -qx "# Time from: NTS= (NTS only)" "$out" || fail "no source line: $(tail -1 "$out")"
        grep -q "timesyncd.conf:4: PollIntervalMinSec=5 is below 16s, using the default 32s." "$out.err" ||
                fail "range warning missing: $(cat "$out.err")"
        grep -q "timesyncd.conf:5: Unknown key name 'Foo' in section 'Time', ignoring." "$out.err" ||
                fail "unknown key warning missing"
        # Two of three servers used together (NTSMaxSources=2): both must agree.
        grep -qx "NTS= names 2 NTS servers, used together: both must agree, so one that fails or cannot be reached stops synchronization. Name three or more to survive one failure." "$out.err" ||
                fail "no warning that two servers tolerate no failure: $(cat "$out.err")"
        grep -qx "0 errors, 3 warnings." "$out.err" || fail "summary: $(tail -1 "$out.err")"
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

# expect_error LINE CONF_LINE...: --validate of a main file of CONF_LINEs (with write_conf's empty
# FallbackNTS=) exits 1 and says LINE (a fixed string) on stderr.
expect_error() {
        local out=$TEST_TMPDIR/expect.out text=$1
        shift
        write_conf "$main" "$@"
        validate "$out"
        [ "$RC" = 1 ] || fail "exit status $RC for $*: $(cat "$out.err")"
        grep -qF -- "$text" "$out.err" || fail "no '$text' for $*: $(cat "$out.err")"
}

# Each of these gives no time, or not the time meant; each says why in one line.
test_configurations_without_time_fail() {
        rm -rf "$dropins"
        expect_error "NTSRequired=yes and no NTS= server: the clock would not be synchronized" "NTSRequired=yes"
        # FallbackNTS= not emptied: NTSRequired=yes does not use it either.
        printf '[Time]\nNTSRequired=yes\nNTP=192.0.2.1\n' >"$main"
        rm -f "$root/usr/lib/systemd/timesyncd.conf.d/00-test-no-fallback-nts.conf"
        validate "$TEST_TMPDIR/nofb.out"
        [ "$RC" = 1 ] || fail "exit status $RC for NTSRequired=yes with the default FallbackNTS="
        grep -q "NTSRequired=yes and no NTS= server" "$TEST_TMPDIR/nofb.out.err" || fail "no reason: $(cat "$TEST_TMPDIR/nofb.out.err")"
        printf '[Time]\nFallbackNTS=\n' >"$root/usr/lib/systemd/timesyncd.conf.d/00-test-no-fallback-nts.conf"
        expect_error "NTSMinAgreeingSources=3 is above NTSMaxSources=2: it can never be met, and the clock would never be set." \
                "NTS=a.example b.example c.example" "NTSMaxSources=2" "NTSMinAgreeingSources=3"
        expect_error "NTSMinAgreeingSources=3 is more than the 2 NTS servers of NTS= used together: it can never be met" \
                "NTS=a.example b.example" "NTSMinAgreeingSources=3"
        expect_error "NTSTrustedCertificates=$TEST_TMPDIR/absent-ca.pem: No such file or directory: every NTS key exchange would fail." \
                "NTS=a.example b.example c.example" "NTSTrustedCertificates=$TEST_TMPDIR/absent-ca.pem"
        echo "PASS test_configurations_without_time_fail"
}

# A mistyped value of an NTS setting fails closed: NTS only, said with file and line, exit 1.
test_mistyped_nts_values_fail_closed() {
        local out=$TEST_TMPDIR/expect.out
        expect_error "timesyncd.conf:3: NTSRequired=ture is not a boolean (yes or no): using yes, and time comes only from NTS servers, as with NTSRequired=yes." \
                "NTSRequired=ture" "NTP=192.0.2.1"
        grep -qx "NTSRequired=yes" "$out" || fail "NTSRequired= not shown as yes"
        grep -qx "# Time from: nothing: NTS only (NTSRequired=ture is not a boolean) and no NTS= server (runtime NTS servers only)" "$out" ||
                fail "source line: $(grep '^# Time from' "$out")"
        expect_error "timesyncd.conf:3: Invalid NTS server name or address, ignoring: nts://b.example (a URL: give the host name alone, without a scheme such as nts://)" \
                "NTS=a.example nts://b.example c.example"
        grep -qx "# Time from: NTS= (NTS only)" "$out" || fail "source line: $(grep '^# Time from' "$out")"
        expect_error "timesyncd.conf:3: Invalid NTS server name or address, ignoring: a.example:99999 (the port is not a number from 1 to 65535)" \
                "FallbackNTS=a.example:99999" "FallbackNTP=192.0.2.1"
        grep -qx "# Time from: nothing: NTS only (FallbackNTS= names an invalid server) and no NTS= server (runtime NTS servers only)" "$out" ||
                fail "an invalid FallbackNTS= leaves: $(grep '^# Time from' "$out")"
        expect_error "NTSMinAgreeingSources=3x is not a number from 1 to 16 or empty: every NTS source in use must agree" \
                "NTS=a.example b.example c.example" "NTSMinAgreeingSources=3x"
        grep -qx "NTSMinAgreeingSources=3" "$out" || fail "NTSMinAgreeingSources= not all three: $(grep ^NTSMinAgreeing "$out")"
        expect_error "NTSTrustedCertificates=ca.pem is not an absolute path" "NTS=a.example b.example c.example" \
                "NTSTrustedCertificates=ca.pem"
        echo "PASS test_mistyped_nts_values_fail_closed"
}

# A drop-in whose section header is mistyped is lost whole: said, and with an NTS key in it an
# error; a stock FallbackNTP= that FallbackNTS= replaces is a notice; neither is silent.
test_settings_that_silently_change_meaning_are_said() {
        local out=$TEST_TMPDIR/silent.out
        write_conf "$main" "NTS=a.example b.example c.example"
        mkdir -p "$dropins"
        printf '[time]\nNTSTrustedCertificates=/etc/ssl/our-ca.pem\n' >"$dropins/50-ca.conf"
        validate "$out"
        [ "$RC" = 1 ] || fail "exit status $RC for an NTS drop-in with [time]: $(cat "$out.err")"
        grep -qF "50-ca.conf:1: Unknown section 'time' (section names are case-sensitive: did you mean [Time]?). Ignoring." "$out.err" ||
                fail "no hint at [Time]: $(cat "$out.err")"
        grep -qF "50-ca.conf: none of its 1 assignment is in section [Time]: the whole file is ignored." "$out.err" ||
                fail "not said that the file is ignored: $(cat "$out.err")"
        grep -qF "50-ca.conf:2: NTS setting NTSTrustedCertificates= is in section [time], not in [Time], and ignored" "$out.err" ||
                fail "no error for the lost NTS key: $(cat "$out.err")"
        printf 'NTP=192.0.2.1\n' >"$dropins/50-ca.conf"
        validate "$out"
        [ "$RC" = 0 ] || fail "exit status $RC for a plain NTP drop-in without a header: $(cat "$out.err")"
        grep -qF "50-ca.conf: none of its 1 assignment is in section [Time]: the whole file is ignored." "$out.err" ||
                fail "not said that the headerless file is ignored: $(cat "$out.err")"
        rm -rf "$dropins"

        printf '[Time]\nFallbackNTP=192.0.2.1\n' >"$main"
        mkdir -p "$dropins"
        printf '[Time]\nFallbackNTS=a.example b.example c.example\n' >"$dropins/10-nts.conf"
        validate "$out"
        [ "$RC" = 0 ] || fail "exit status $RC for FallbackNTP= under FallbackNTS=: $(cat "$out.err")"
        grep -qxF 'FallbackNTP=192.0.2.1 is not used: FallbackNTS= takes its place where nothing else names a server (NTS servers only). An empty "FallbackNTS=" line uses FallbackNTP= instead.' \
                "$out.err" || fail "no notice of the ignored FallbackNTP=: $(cat "$out.err")"
        rm -rf "$dropins"
        echo "PASS test_settings_that_silently_change_meaning_are_said"
}

# The daemon says the same as it starts: two servers, a FallbackNTP= that is not used, an
# agreement that can never be met, a CA file that does not exist. Loopback
# addresses where nothing listens: no name is looked up, and no time is got.
test_the_daemon_says_it_at_start() {
        mkdir -p "$dropins"
        printf '[Time]\nFallbackNTP=127.0.0.1:9\n' >"$main"
        printf '[Time]\nFallbackNTS=127.0.0.1:%s 127.0.0.1:%s\n' "$(free_port)" "$(free_port)" >"$dropins/10-nts.conf"
        start_timesyncd ""
        wait_log "FallbackNTP=127.0.0.1:9 is not used: FallbackNTS= takes its place"
        wait_log "FallbackNTS= names 2 NTS servers, used together: both must agree"
        stop_timesyncd
        printf '[Time]\nNTS=127.0.0.1:%s 127.0.0.1:%s 127.0.0.1:%s\nNTSMaxSources=2\nNTSMinAgreeingSources=3\nNTSTrustedCertificates=%s\n' \
                "$(free_port)" "$(free_port)" "$(free_port)" "$TEST_TMPDIR/absent-ca.pem" >"$dropins/10-nts.conf"
        : >"$TIMESYNCD_LOG"
        start_timesyncd ""
        wait_log "NTSMinAgreeingSources=3 is above NTSMaxSources=2: it can never be met"
        wait_log "NTSTrustedCertificates=$TEST_TMPDIR/absent-ca.pem: No such file or directory: every NTS key exchange would fail."
        stop_timesyncd
        rm -rf "$dropins"
        echo "PASS test_the_daemon_says_it_at_start"
}

# The README's examples survive one failed server: --validate takes each NTS= line it shows
# without an error or the warning that all servers must agree.
test_readme_examples_survive_one_failure() {
        local out=$TEST_TMPDIR/readme.out line n=0
        rm -rf "$dropins"
        while read -r line; do
                write_conf "$main" "$line"
                validate "$out"
                [ "$RC" = 0 ] || fail "README's $line: exit status $RC: $(cat "$out.err")"
                ! grep -q "must agree" "$out.err" || fail "README's $line: $(cat "$out.err")"
                n=$((n + 1))
        done < <(grep -oE "NTS=[a-z0-9.: ]+" "$TSNTS_SRC_DIR/README.md" | grep '\.' | sed 's/ *$//' | sort -u)
        [ "$n" -ge 2 ] || fail "only $n NTS= examples found in README.md"
        echo "PASS test_readme_examples_survive_one_failure"
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
run_case test_configurations_without_time_fail
run_case test_mistyped_nts_values_fail_closed
run_case test_settings_that_silently_change_meaning_are_said
run_case test_the_daemon_says_it_at_start
run_case test_readme_examples_survive_one_failure
run_case test_it_touches_nothing
run_case test_missing_config_file_is_said_once
