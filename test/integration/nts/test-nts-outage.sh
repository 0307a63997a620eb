#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every way to end up without authenticated time says so where an operator looks: the journal
# (with the MESSAGE_ID the guide tells to alert on, once per outage, and another when it ends),
# NTSStatus, STATUS= and `timesync-sources --check`. UDP to the NTP port dropped by nftables
# while the key exchange's TCP port is open (in a network namespace of the test, real chronyd
# servers) is named as such, not as a blocked TCP port 4460; every server failing, NTS= with only
# invalid entries, and replies that fail NTS verification (the mock's bad-auth) carry their IDs.
# The daemon logs to a journal listener of the test (journal-listen.py), one message a line with
# its fields.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus
start_notify_listener
export NOTIFY_OUT

export SOURCES=${TSNTS_TIMESYNC_SOURCES:-$TSNTS_BUILD_DIR/tools/timesync-sources}
export NO_USABLE=5e72c619ab4b479a8430df815d36cbd5
export BACK=5e3060687da54a5680cb2528380e6d55
export REPLY_REFUSED=3fdd8706cf1241f3a7af1d3d9ce53978
export JDIR=$TEST_TMPDIR/journal
export JOURNAL=$JDIR/journal.txt
mkdir -p "$JDIR"
chmod 0755 "$JDIR"
start_daemon "$TEST_TMPDIR/journal-listen.log" /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/journal-listen.py" \
        "$JDIR/socket" "$JOURNAL"
wait_for 5 grep -q READY "$TEST_TMPDIR/journal-listen.log" || fail "journal listener did not start"
chmod 0777 "$JDIR/socket"

# journal_timesyncd CONF [ARG...]: the daemon (polling every second) with its log in $JOURNAL,
# which starts empty: a /run of its own whose journal socket is the listener's.
journal_timesyncd() {
        local conf=$1
        shift
        : >"$JOURNAL"
        : >"$NOTIFY_OUT"
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(unshare --mount --propagation private
                bash -c 'mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal &&
                        mount --bind "$0" /run/systemd/journal && exec "$@"' "$JDIR")
        TIMESYNCD_LOG_TARGET=journal start_timesyncd "$conf" --test-poll-interval=1s "$@"
        unset TIMESYNCD_WRAPPER
}

journal_has() { grep -q -- "$1" "$JOURNAL"; }
journal_count() { grep -c -- "$1" "$JOURNAL" || true; }
wait_journal() {
        wait_for "${2:-20}" journal_has "$1" ||
                fail "no '$1' in the journal within ${2:-20} s: $(sed -n 's/.*MESSAGE=\([^|]*\).*/\1/p' "$JOURNAL" | tail -5)"
}

# assert_alert TEXT: the "no usable NTS server" message, with its ID, at warning level, its
# NTS_STATUS field containing TEXT, logged once.
assert_alert() {
        local line
        wait_journal "MESSAGE_ID=$NO_USABLE" 40
        line=$(grep "MESSAGE_ID=$NO_USABLE" "$JOURNAL")
        [ "$(wc -l <<<"$line")" = 1 ] || fail "the alert was logged $(wc -l <<<"$line") times: $line"
        grep -qF "NTS_STATUS=$1" <<<"$line" || fail "the alert's NTS_STATUS does not say '$1': $line"
        grep -q "PRIORITY=4" <<<"$line" || fail "the alert is not at warning level: $line"
        echo "alert: $(sed -n 's/.*MESSAGE=\([^|]*\).*/\1/p' <<<"$line")"
}

# block_udp PORT...: from now on UDP to these ports is dropped; TCP goes through.
block_udp() {
        nft -f - <<NFT
table inet tsnts_udp {
        chain out {
                type filter hook output priority 0; policy accept;
                udp dport { $(IFS=,; echo "$*") } counter drop
        }
}
NFT
}

unblock_udp() { nft delete table inet tsnts_udp; }

_status_has() { grep -qF "$1" "$NOTIFY_OUT"; }
_nts_status_has() { [[ "$(timesync_property NTSStatus)" == *"$1"* ]]; }

udp_blocked_one_server_inner() {
        local want check rc=0
        start_chrony_at a 0
        block_udp "$CHRONY_NTP"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$CHRONY_KE" "ConnectionRetrySec=1"
        journal_timesyncd "$TEST_TMPDIR/ts.conf"
        want="localhost:$CHRONY_KE: key exchange works, no NTP reply: UDP port $CHRONY_NTP blocked?"
        wait_journal "MESSAGE=NTS key exchange with localhost:$CHRONY_KE .* done"
        assert_alert "$want"
        wait_for 10 nts_status_is "$want" || fail "NTSStatus is '$(timesync_property NTSStatus)'"
        wait_for 5 _status_has "STATUS=No server answered, retrying. $want" || fail "STATUS= does not say it: $(last_status)"
        ! grep -qF "blocked?." "$NOTIFY_OUT" || fail "STATUS= puts a full stop after the question: $(last_status)"
        ! grep -q "TCP port 4460 blocked" "$NOTIFY_OUT" || fail "STATUS= blames TCP port 4460: $(last_status)"
        check=$(in_systemd_run "$SOURCES" --check) || rc=$?
        [ "$rc" = 4 ] || fail "timesync-sources --check exits $rc: $check"
        grep -qF "key exchange works, no NTP reply: UDP port $CHRONY_NTP blocked?" <<<"$check" ||
                fail "timesync-sources --check does not say it: $check"
        grep -qF "(1 source, 1 failing)" <<<"$check" || fail "timesync-sources --check miscounts: $check"
        echo "check: $check"
        # The table marks it not usable ("-"), not blank as a server out of use.
        in_systemd_run "$SOURCES" | grep_q -E "^- localhost:$CHRONY_KE " ||
                fail "the table does not mark the server '-': $(in_systemd_run "$SOURCES")"
        # Retries (every second here) repeat nothing at warning level.
        wait_for 15 _retried || fail "no second round of requests"
        assert_alert "$want"

        unblock_udp
        wait_journal "MESSAGE_ID=$BACK" 30
        grep "MESSAGE_ID=$BACK" "$JOURNAL" | grep_q "NTP_SERVER=localhost:$CHRONY_KE" ||
                fail "the end of the outage does not name the server: $(grep "MESSAGE_ID=$BACK" "$JOURNAL")"
        wait_for 10 nts_status_is "" || fail "NTSStatus is '$(timesync_property NTSStatus)' after UDP is open again"
        stop_timesyncd
        stop_chronys
}

_retried() { [ "$(journal_count "MESSAGE=Timed out waiting for reply")" -ge 2 ]; }

test_blocked_udp_with_working_key_exchange_is_named() { run_in_netns udp_blocked_one_server_inner; }

# FallbackNTS= (two servers, used together): the set's words, not "TCP port 4460 blocked?".
udp_blocked_fallback_inner() {
        local text
        start_chronys a:0 b:0
        block_udp "${SERVER_NTP[a]}" "${SERVER_NTP[b]}"
        write_conf "$TEST_TMPDIR/ts.conf" "FallbackNTS=${NAMES[*]}" "NTSTrustedCertificates=$CERTDIR/ca.pem"
        journal_timesyncd "$TEST_TMPDIR/ts.conf"
        text="No NTS source answers: key exchanges work, no NTP reply (outgoing UDP blocked?)"
        wait_for 40 _status_has "STATUS=$text; 2 of 2" || fail "STATUS= does not say it: $(last_status)"
        ! grep -q "TCP port 4460 blocked" "$NOTIFY_OUT" || fail "STATUS= blames TCP port 4460: $(notify_statuses)"
        [ "$(last_status | grep -o "No NTS source answers" | wc -l)" = 1 ] || fail "STATUS= repeats itself: $(last_status)"
        wait_for 10 _nts_status_has "; 2 of 2 NTS servers failing: ${NAMES[0]} (key exchange works" ||
                fail "NTSStatus does not name both servers: '$(timesync_property NTSStatus)'"
        _nts_status_has "${NAMES[1]} (key exchange works, no NTP reply: UDP port ${SERVER_NTP[b]} blocked?)" ||
                fail "NTSStatus does not name both servers: '$(timesync_property NTSStatus)'"
        assert_alert "$text"
        echo "status: $(last_status)"
        stop_timesyncd
        stop_chronys
}

test_blocked_udp_is_named_with_fallback_nts_servers() { run_in_netns udp_blocked_fallback_inner; }

# Every NTS server down (nothing listens): one alert, naming why, for one server and for several.
test_every_server_failing_raises_the_alert_once() {
        local dead1 dead2
        dead1=$(free_port)
        dead2=$(free_port)
        write_nts_conf "$TEST_TMPDIR/ts.conf" "127.0.0.1:$dead1" "ConnectionRetrySec=1"
        journal_timesyncd "$TEST_TMPDIR/ts.conf"
        assert_alert "Key exchange with 127.0.0.1:$dead1 failed"
        wait_for 20 _ke_failed_twice "$dead1" || fail "no second key exchange"
        assert_alert "Key exchange with 127.0.0.1:$dead1 failed"
        stop_timesyncd

        write_nts_conf "$TEST_TMPDIR/ts.conf" "127.0.0.1:$dead1 127.0.0.1:$dead2"
        journal_timesyncd "$TEST_TMPDIR/ts.conf"
        assert_alert "No NTS source answers; 2 of 2 NTS servers failing: 127.0.0.1:$dead1 ("
        stop_timesyncd
}

_ke_failed_twice() { [ "$(journal_count "MESSAGE=NTS key exchange with 127.0.0.1:$1 failed")" -ge 2 ]; }

test_nts_with_only_invalid_entries_raises_the_alert() {
        write_nts_conf "$TEST_TMPDIR/ts.conf" "bad_name!x"
        journal_timesyncd "$TEST_TMPDIR/ts.conf"
        assert_alert "NTS= names no valid server"
        stop_timesyncd
}

# Replies that fail NTS verification: a warning with its ID and the server, the cause as field.
test_replies_failing_verification_carry_an_id() {
        local line
        start_nts_mock bad-auth --sabotage=bad-auth
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE"
        journal_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_journal "MESSAGE_ID=$REPLY_REFUSED" 20
        line=$(grep -m1 "MESSAGE_ID=$REPLY_REFUSED" "$JOURNAL")
        grep -q "NTP_SERVER=localhost:$MOCK_KE" <<<"$line" || fail "no NTP_SERVER: $line"
        grep -q "NTS_ERROR=." <<<"$line" || fail "no NTS_ERROR: $line"
        grep -q "PRIORITY=4" <<<"$line" || fail "not at warning level: $line"
        echo "refused: $(sed -n 's/.*MESSAGE=\([^|]*\).*/\1/p' <<<"$line")"
        stop_timesyncd
        stop_daemon "$MOCK_PID"
}

run_case test_blocked_udp_with_working_key_exchange_is_named
run_case test_blocked_udp_is_named_with_fallback_nts_servers
run_case test_every_server_failing_raises_the_alert_once
run_case test_nts_with_only_invalid_entries_raises_the_alert
run_case test_replies_failing_verification_carry_an_id
