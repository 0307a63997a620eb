#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the daemon says about NTS, and that it says it consistently: the D-Bus properties that
# describe the selected server agree with each other after every transition (read through
# Debian's timedatectl), and STATUS= (what `systemctl status` shows, collected by
# notify-listen.py) names a real address.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --timedatectl --bus
chmod 0755 "$CERTDIR"
chmod 0644 "$CERTDIR"/*.pem
start_notify_listener

# start_chrony CHAIN: a chronyd NTS server presenting CERTDIR/CHAIN; sets ntp, ke, srv.
start_chrony() {
        ntp=$(free_port)
        ke=$(free_port)
        srv=$TEST_TMPDIR/chrony-$ke
        mkdir -p "$srv-certs"
        cp "$CERTDIR/$1" "$srv-certs/server-chain.pem"
        cp "$CERTDIR/server.key" "$srv-certs/server.key"
        start_chrony_nts_server "$srv" "$srv-certs" "$ntp" "$ke"
}

# restart_timesyncd CONF [ARG...]: a fresh daemon without state, log or earlier STATUS= lines.
restart_timesyncd() {
        [ -n "${TIMESYNCD_PID:-}" ] && pid_alive "$TIMESYNCD_PID" && stop_timesyncd
        rm -f "$TEST_TMPDIR"/state/nts-*.jar "$TEST_TMPDIR/runtime/synchronized"
        : >"$TIMESYNCD_LOG"
        : >"$NOTIFY_OUT"
        start_timesyncd "$@"
}

# assert_bus_consistent WHEN: the properties that describe the selected server agree. Without
# a selected server there is no address, no key exchange server, no keys and nothing
# authenticated; NTSAuthenticated=yes needs a server, its address and its key exchange server.
assert_bus_consistent() {
        local show=$TEST_TMPDIR/show-timesync.txt name addr auth kes aead cookies
        in_systemd_run timedatectl show-timesync --all >"$show"
        echo "---- show-timesync ($1) ----"
        grep -E '^(ServerName|ServerAddress|NTS[A-Za-z]*)=' "$show"
        name=$(sed -n 's/^ServerName=//p' "$show")
        addr=$(sed -n 's/^ServerAddress=//p' "$show")
        auth=$(sed -n 's/^NTSAuthenticated=//p' "$show")
        kes=$(sed -n 's/^NTSKeyExchangeServer=//p' "$show")
        aead=$(sed -n 's/^NTSAEAD=//p' "$show")
        cookies=$(sed -n 's/^NTSCookies=//p' "$show")
        if [ -z "$name" ]; then
                [ -z "$addr" ] || fail "$1: ServerAddress=$addr without a ServerName"
                [ -z "$kes" ] || fail "$1: NTSKeyExchangeServer=$kes without a ServerName"
                [ -z "$aead" ] || fail "$1: NTSAEAD=$aead without a ServerName"
                [ "$cookies" = 0 ] || fail "$1: NTSCookies=$cookies without a ServerName"
                [ "$auth" = no ] || fail "$1: NTSAuthenticated=$auth without a ServerName"
        fi
        if [ "$auth" = yes ]; then
                [ -n "$addr" ] || fail "$1: NTSAuthenticated=yes without a ServerAddress"
                [ -n "$kes" ] || fail "$1: NTSAuthenticated=yes without an NTSKeyExchangeServer"
        fi
        return 0
}

# The address in STATUS= was formatted inside a debug log call's arguments, which are not
# evaluated below debug level: at the default level `systemctl status` showed
# "Connecting to time server  (localhost:4460)."
test_connecting_status_names_the_address_at_info_level() {
        start_chrony server-chain.pem
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke"
        TIMESYNCD_LOG_LEVEL=info restart_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        notify_statuses
        notify_statuses | grep_q -xF "Connecting to time server 127.0.0.1:$ntp (localhost:$ke)." ||
                fail "no 'Connecting to time server 127.0.0.1:$ntp (localhost:$ke).' in STATUS="
        notify_statuses | grep_q "Connecting to time server  " && fail "STATUS= without an address"
        assert_bus_consistent "synchronized"
        [ "$(timesync_property NTSAuthenticated)" = yes ] || fail "NTSAuthenticated is not yes once synchronized"
}

# The only server stops answering after a sync: after the reply timeout every server was tried
# and none is selected while the daemon waits (ConnectionRetrySec=); the authenticated sample
# of before must not be shown as the time in use without a server.
test_server_lost_after_sync_leaves_no_authenticated_state() {
        # test_connecting_status_names_the_address_at_info_level left a synchronized daemon.
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke" "ConnectionRetrySec=120"
        restart_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        wait_for 10 nts_authenticated_on_bus || fail "NTSAuthenticated never became yes"
        stop_chrony "$srv"
        wait_log "Timed out waiting for reply from 127.0.0.1:$ntp (localhost:$ke)" 20
        wait_log "Tried every server, waiting 2min before trying again."
        [ "$(timesync_property ServerName)" = "" ] || fail "a server is still selected"
        assert_bus_consistent "server lost after sync"
}

# A bootstrap whose time lies outside the certificate's validity is refused; nothing of that
# reply may look used: no "Contacted", no NTSAuthenticated=yes, no ServerName-less NTS state.
# The daemon's fake clock starts two years behind, so it advances it to its floor: the only
# clock a bootstrap is for (docs/NTS.md).
test_refused_bootstrap_leaves_a_consistent_state() {
        start_chrony future-chain.pem
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke" "ConnectionRetrySec=120"
        restart_timesyncd "$TEST_TMPDIR/ts.conf" --test-clock-offset=-63072000s
        wait_log "Refusing bootstrap time from localhost:$ke: it lies outside the validity period of its certificate chain"
        # shellcheck disable=SC2016 # expanded by eval, at each try of wait_for
        wait_for 10 eval '[ "$(timesync_property NTSStatus 2>/dev/null)" = "Bootstrap with localhost:$ke refused" ]' ||
                fail "NTSStatus is '$(timesync_property NTSStatus)', not 'Bootstrap with localhost:$ke refused'"
        assert_bus_consistent "bootstrap refused"
        [ "$(timesync_property NTSAuthenticated)" = no ] || fail "NTSAuthenticated is not no after a refused bootstrap"
        log_has "Contacted time server" && fail "the refused reply was logged as 'Contacted time server'"
        notify_statuses | grep_q "^Contacted" && fail "STATUS= said 'Contacted' for the refused reply"
        stop_chrony "$srv"
}

nts_status_is() { [ "$(timesync_property NTSStatus 2>/dev/null)" = "$1" ]; }

# nts_status_matches PREFIX REGEX: NTSStatus is PREFIX (a fixed string) followed by REGEX (extended).
nts_status_matches() {
        local st
        st=$(timesync_property NTSStatus 2>/dev/null) || return 1
        [[ "$st" == "$1"* ]] && [[ "${st#"$1"}" =~ ^$2$ ]]
}

# refused_replies: the RefusedReplies property as busctl prints it.
refused_replies() {
        busctl get-property org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager RefusedReplies
}

# The server's keys change while the daemon runs (chronyd restarted without its key file): a
# NAK, a key exchange, the NTP address resolved again, a verified reply. Every state the daemon
# announces on the way (PropertiesChanged, recorded from before it started) agrees with itself;
# NTSAuthenticated stayed yes while the address was resolved again and none was selected.
test_announced_states_agree_through_a_rekey() {
        local mon=$TEST_TMPDIR/monitor.json monitor_pid
        busctl monitor --json=short \
                --match="type='signal',path='/org/freedesktop/timesync1',member='PropertiesChanged'" \
                >"$mon" 2>"$TEST_TMPDIR/monitor.log" &
        monitor_pid=$!
        track_pid "$monitor_pid"
        wait_for 5 grep -q "Monitoring bus message stream" "$TEST_TMPDIR/monitor.log" ||
                fail "busctl monitor did not start"
        start_chrony server-chain.pem
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke"
        restart_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        stop_chrony "$srv"
        rm -f "$srv/ntskeys"
        start_chrony_nts_server "$srv" "$srv-certs" "$ntp" "$ke"
        wait_log "NTS server localhost:$ke refused our cookie (NTSN), running a new key exchange" 20
        wait_for 20 eval "sed -n '/refused our cookie/,\$p' '$TIMESYNCD_LOG' | grep_q 'NTS reply from localhost:$ke verified'" ||
                fail "no verified reply after the new key exchange"
        stop_timesyncd
        stop_daemon "$monitor_pid"
        stop_chrony "$srv"
        /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/bus-state-check.py" "$mon" ||
                fail "an announced state contradicts itself"
}

# Every reply fails authentication (the mock's bad-auth): today's log said only "Timed out
# waiting for reply". The refusals are counted per cause, NTSStatus names the last cause with
# its count and first time, the log says it once per cause (rate-limited), RefusedReplies
# keeps the counts, and the first reply that verifies clears NTSStatus.
test_replies_failing_authentication_are_counted_and_named() {
        local want
        start_mock bad-auth
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE" "ConnectionRetrySec=1"
        TIMESYNCD_LOG_LEVEL=info restart_timesyncd "$TEST_TMPDIR/ts.conf"
        want="Reply from 127.0.0.1:$MOCK_NTP (localhost:$MOCK_KE) refused: NTP response failed authentication"
        wait_for 20 nts_status_matches "$want" ", 1 time since [A-Z][a-z]{2} [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} .+" ||
                fail "NTSStatus is '$(timesync_property NTSStatus)', not '$want, 1 time since ...'"
        log_has "Timed out waiting for reply from 127.0.0.1:$MOCK_NTP (localhost:$MOCK_KE): 1 reply was refused, the last one: NTP response failed authentication." ||
                fail "the reply timeout does not say that a reply was refused"
        wait_for 30 nts_status_matches "$want" ", 2 times since .+" ||
                fail "NTSStatus is '$(timesync_property NTSStatus)', not '$want, 2 times since ...'"
        [ "$(log_count "that fails NTS verification")" = 1 ] ||
                fail "$(log_count "that fails NTS verification") warnings for two refused replies of one cause"
        # shellcheck disable=SC2001 # a backslash before each of a set of characters
        expect_status "refused replies" "No server answered, retrying\\. $(sed 's/[.()]/\\&/g' <<<"$want"), 1 time since .+\\."
        refused_replies
        echo "---- transcript: timedatectl timesync-status (every reply refused) ----"
        in_systemd_run timedatectl timesync-status || true
        echo "---- end of transcript ----"
        # Two or more: the next request may have been refused since NTSStatus said two.
        refused_replies | grep_q -E "^a\\(sssutt\\) 1 \"localhost:$MOCK_KE\" \"nts-auth-failed\" \"NTP response failed authentication\" ([2-9]|[1-9][0-9]+) [0-9]+ [0-9]+\$" ||
                fail "RefusedReplies does not count 2 nts-auth-failed: $(refused_replies)"
        assert_bus_consistent "replies fail authentication"

        kill -USR1 "$MOCK_PID"
        wait_log "Initial clock synchronization to localhost:$MOCK_KE (offset .*, NTS authenticated" 30
        wait_for 10 nts_status_is "" || fail "NTSStatus '$(timesync_property NTSStatus)' stays after a verified reply"
        # At least the two counted above: a third request may have been refused before SIGUSR1.
        refused_replies | grep_q -E '"nts-auth-failed" "NTP response failed authentication" ([2-9]|[1-9][0-9]+) ' ||
                fail "RefusedReplies forgot the refusals: $(refused_replies)"
        stop_daemon "$MOCK_PID"
}

# status_seen REGEX: a STATUS= text so far is REGEX (extended, whole text).
status_seen() { notify_statuses | grep_q -Ex -- "$1"; }

# expect_status WHAT REGEX [SECS]: waits for such a STATUS= text.
expect_status() {
        wait_for "${3:-20}" status_seen "$2" || { notify_statuses; fail "$1: no STATUS= matching '$2'"; }
}

# STATUS= (`systemctl status`) carries why NTS does not work, not only "No NTS server usable,
# retrying": one key exchange failure of each kind.
test_status_says_why_the_key_exchange_fails() {
        local port usable="No NTS server usable, retrying\\."

        start_chrony expired-chain.pem
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke"
        TIMESYNCD_LOG_LEVEL=info restart_timesyncd "$TEST_TMPDIR/ts.conf"
        expect_status "expired certificate" "$usable Key exchange with localhost:$ke failed: .*certificate has expired: valid until 2021-01-01 00:00 UTC\\."
        stop_chrony "$srv"

        port=$(free_port)
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$port"
        TIMESYNCD_LOG_LEVEL=info restart_timesyncd "$TEST_TMPDIR/ts.conf"
        expect_status "connection refused" "$usable Key exchange with localhost:$port failed: .*Connection refused\\."

        port=$(free_port)
        start_stalling_listener "$port"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "127.0.0.1:$port" "KeyExchangeTimeoutSec=1s"
        TIMESYNCD_LOG_LEVEL=info restart_timesyncd "$TEST_TMPDIR/ts.conf"
        expect_status "timeout" "$usable Key exchange with 127.0.0.1:$port failed: timed out.*\\."

        start_mock wrong-aead
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE"
        TIMESYNCD_LOG_LEVEL=info restart_timesyncd "$TEST_TMPDIR/ts.conf"
        expect_status "AEAD" "$usable Key exchange with localhost:$MOCK_KE failed: .*AEAD algorithm we did not offer.*\\."
        notify_statuses
        stop_timesyncd
        stop_daemon "$MOCK_PID"
}

run_case test_connecting_status_names_the_address_at_info_level
run_case test_server_lost_after_sync_leaves_no_authenticated_state
run_case test_refused_bootstrap_leaves_a_consistent_state
run_case test_announced_states_agree_through_a_rekey
run_case test_replies_failing_authentication_are_counted_and_named
run_case test_status_says_why_the_key_exchange_fails
