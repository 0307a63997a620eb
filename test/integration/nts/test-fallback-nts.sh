#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# FallbackNTS=: where stock would use FallbackNTP= (no NTS=, no NTP=, nothing from the network or
# at runtime) the daemon takes NTS servers instead, and never FallbackNTP=, also when none of them
# can be reached (then one status line says so). NTP= still comes first, as in stock. An unknown
# key that looks like an NTS setting (NTSServers=) gives no time at all and names NTS=. The last
# case runs the compiled-in list (-Ddefault-nts-servers=) in a network namespace of the test
# whose own hosts file (and nsswitch.conf "files", an empty resolv.conf) points every name of
# the list at 127.0.0.1: nothing is looked up through this machine's resolver.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus

start_notify_listener
plain=$(free_port)
start_ntp_test_server plain "$plain"

restart_with() {
        mark_ntp_served plain
        write_conf "$TEST_TMPDIR/ts.conf" "NTSTrustedCertificates=$CERTDIR/ca.pem" "ConnectionRetrySec=1" "$@"
        restart_fresh_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
}

test_fallback_nts_is_used_and_fallback_ntp_never() {
        start_nts_mock fb
        restart_with "FallbackNTS=localhost:$MOCK_KE" "FallbackNTP=127.0.0.1:$plain"
        wait_log "using the 1 NTS servers of FallbackNTS="
        wait_log "Initial clock synchronization to localhost:$MOCK_KE.*NTS authenticated" 20
        wait_log_count "NTS reply from localhost:$MOCK_KE verified" 3 20
        assert_ntp_servers_unused plain
        [ "$(timesync_property FallbackNTSServers)" = "localhost:$MOCK_KE" ] || fail "FallbackNTSServers is wrong"
        [ -z "$(timesync_property SystemNTSServers)" ] || fail "SystemNTSServers shows the fallback"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
        echo "PASS test_fallback_nts_is_used_and_fallback_ntp_never"
}

test_unreachable_fallback_nts_gives_no_time_and_one_status_line() {
        local dead
        dead=$(free_port)
        restart_with "FallbackNTS=localhost:$dead" "FallbackNTP=127.0.0.1:$plain"
        wait_for 20 grep -q "STATUS=No FallbackNTS= server reachable (TCP port 4460 blocked? DNS?)" "$NOTIFY_OUT" ||
                fail "no status line for unreachable FallbackNTS= servers: $(grep STATUS= "$NOTIFY_OUT" | tail -3)"
        assert_plain_servers_unused plain
        stop_timesyncd
        # Several fallback servers are used together: the same line from the set.
        restart_with "FallbackNTS=localhost:$dead 127.0.0.1:$dead" "FallbackNTP=127.0.0.1:$plain"
        wait_for 40 grep -q "STATUS=No FallbackNTS= server reachable (TCP port 4460 blocked? DNS?)" "$NOTIFY_OUT" ||
                fail "no status line for two unreachable FallbackNTS= servers: $(grep STATUS= "$NOTIFY_OUT" | tail -3)"
        case "$(timesync_property NTSStatus)" in
                "No FallbackNTS= server reachable"*) ;;
                *) fail "NTSStatus is '$(timesync_property NTSStatus)'" ;;
        esac
        assert_plain_servers_unused plain
        stop_timesyncd
        echo "PASS test_unreachable_fallback_nts_gives_no_time_and_one_status_line"
}

test_ntp_comes_before_fallback_nts_as_in_stock() {
        start_nts_mock fb2
        restart_with "NTP=127.0.0.1:$plain" "FallbackNTS=localhost:$MOCK_KE"
        wait_log "Initial clock synchronization to 127.0.0.1:$plain" 20
        [ "$(mock_count fb2 ke_sessions)" = 0 ] || fail "FallbackNTS= was asked although NTP= is set"
        ! log_has "FallbackNTS=" || fail "FallbackNTS= in use although NTP= is set"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
        echo "PASS test_ntp_comes_before_fallback_nts_as_in_stock"
}

test_mistyped_nts_key_gives_no_time_and_names_nts() {
        start_nts_mock typo
        restart_with "NTSServers=localhost:$MOCK_KE" "FallbackNTP=127.0.0.1:$plain" \
                "FallbackNTS=localhost:$MOCK_KE"
        wait_log "Unknown key name 'NTSServers' in section 'Time' looks like an NTS setting (did you mean NTS=?)"
        # The whole line: the reason once, not twice (STATUS= carries NTSStatus where it differs).
        wait_for 10 grep -qxF "STATUS=Unknown key NTSServers= (did you mean NTS=?): no NTS server, not synchronizing." \
                "$NOTIFY_OUT" || fail "no status line for the mistyped key: $(grep STATUS= "$NOTIFY_OUT" | tail -3)"
        [ "$(timesync_property NTSStatus)" = "Unknown key NTSServers= (did you mean NTS=?): no NTS server" ] ||
                fail "NTSStatus: $(timesync_property NTSStatus)"
        # Polling every second: a plain or fallback server would have been asked by now.
        wait_log "Unknown key NTSServers= (did you mean NTS=?) in the configuration: the clock is not synchronized"
        wait_for 3 false || true   # three polls' time for a plain server to be asked
        assert_plain_servers_unused plain
        [ "$(mock_count typo ke_sessions)" = 0 ] || fail "FallbackNTS= was used despite the mistyped key"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
        echo "PASS test_mistyped_nts_key_gives_no_time_and_names_nts"
}

# Inside the test's network namespace: a mock NTS server on 127.0.0.1:4460 stands in for every
# name of the compiled-in list. Its certificate names localhost, not them: each key exchange
# fails on the name, which is what shows that the names of the list were asked, over NTS only.
_default_list_case() {
        local dir=$TEST_TMPDIR/default-root name
        mkdir -p "$dir"
        { echo "127.0.0.1 localhost"; for name in $DEFAULT_NTS; do echo "127.0.0.1 ${name%:*}"; done; } >"$dir/hosts"
        echo "hosts: files" >"$dir/nsswitch.conf"
        : >"$dir/resolv.conf"
        chmod -R a+rX "$dir"
        start_ntp_test_server plain2 "$plain"
        start_mock_server dflt --ke-port=4460
        write_conf "$TEST_TMPDIR/default.conf" "NTSTrustedCertificates=$CERTDIR/ca.pem" "ConnectionRetrySec=1" \
                "FallbackNTP=127.0.0.1:$plain"
        # The one line that turns the compiled-in list back on.
        sed -i '/^FallbackNTS=$/d' "$TEST_TMPDIR/default.conf"
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(unshare --mount --propagation private bash -c 'for f in hosts nsswitch.conf resolv.conf; do
                mount --bind "$0/$f" "/etc/$f" || exit 1; done; exec "$@"' "$dir")
        : >"$TIMESYNCD_LOG"
        TSNTS_DEFAULT_NTS_OK=1 start_timesyncd "$TEST_TMPDIR/default.conf" --test-poll-interval=1s
        wait_log "using the $(echo "$DEFAULT_NTS" | wc -w) NTS servers of FallbackNTS="
        local first=${DEFAULT_NTS%% *}
        wait_log "NTS-KE with $first: connecting to 127\.0\.0\.1:4460" 20
        wait_log "NTS-KE with $first failed (TLS stage): .*hostname mismatch" 20
        [ "$(ntp_served plain2)" = 0 ] || fail "the FallbackNTP= server was asked"
        ! log_has "Initial clock synchronization" || fail "synchronized with a certificate that names none of them"
        ! log_has "Selected server 127.0.0.1:" || fail "a plain NTP server was selected"
}

test_compiled_in_list_is_used_when_nothing_is_configured() {
        if [ -z "$DEFAULT_NTS" ]; then
                echo "SKIP test_compiled_in_list_is_used_when_nothing_is_configured: built with -Ddefault-nts-servers="
                return 0
        fi
        netns_create
        export DEFAULT_NTS plain TIMESYNCD_LOG CERTDIR TEST_TMPDIR TIMESYNCD NTP_TEST_SERVER
        netns_exec "$NETNS" _default_list_case
        echo "PASS test_compiled_in_list_is_used_when_nothing_is_configured"
}

DEFAULT_NTS=$(sed -n 's/^#FallbackNTS=//p' "$TSNTS_BUILD_DIR/src/timesync/timesyncd.conf")

run_case test_fallback_nts_is_used_and_fallback_ntp_never
run_case test_unreachable_fallback_nts_gives_no_time_and_one_status_line
run_case test_ntp_comes_before_fallback_nts_as_in_stock
run_case test_mistyped_nts_key_gives_no_time_and_names_nts
run_case test_compiled_in_list_is_used_when_nothing_is_configured
