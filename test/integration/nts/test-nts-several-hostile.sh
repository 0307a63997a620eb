#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Several NTS servers at once (issue 16), one of them hostile: the mock NTS server in one
# sabotage mode (each breaks one rule of RFC 8915 in the key exchange or in the NTP replies), or
# a key-exchange server that accepts and never answers, listed first, and two chronyd servers
# that are fine. Each time: the time is right (the two agree), the hostile one is flagged (in
# the log once, and on D-Bus: unusable, with its error), and nothing stalls (the good ones keep
# answering while the hostile one fails and fails again).
# Usage: test-nts-several-hostile.sh [ke|ntp|MODE]: only the modes of that side, or one mode.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus

# side  mode              why the hostile source fails (extended regex, in its "fails (...)" line,
#                         or in the line of the key exchange that failed)
# nak-every-second answers the first request of each set of cookies and refuses the next: no
# single exchange fails, the key exchanges it asks for do; at one poll a second the cap of 16 per
# server name and hour is reached after about 32 s, and that is its failure.
MODES="\
ke    bad-alpn          TLS handshake .*alpn
ke    no-alpn           TLS handshake .*alpn
ke    no-cookies        response has no cookies
ke    error-record      server reported an internal error
ke    bad-request       refused our request as malformed
ke    warning-record    warning
ke    unknown-critical  unknown critical record
ke    wrong-aead        AEAD algorithm we did not offer
ke    no-aead           AEAD
ke    slow              timed out waiting for the response
ke    endless-records   too long
ke    silent            timed out
ntp   bad-auth          no reply
ntp   wrong-uid         no reply
ntp   unauthenticated   no reply
ntp   oversized         no reply
ntp   nak               refused the cookies it had just issued
ntp   nak-every-second  postponed: 16 key exchanges with this name"

start_chrony_at a 0
KE_A=$CHRONY_KE
start_chrony_at b 0
KE_B=$CHRONY_KE

# The good ones have answered COUNT replies between them (from the log's "NTP reply from"
# lines of their NTP ports).
good_replies() {
        local pa pb
        pa=$(sed -n 's/^port //p' "$TEST_TMPDIR/chrony-a/chrony.conf")
        pb=$(sed -n 's/^port //p' "$TEST_TMPDIR/chrony-b/chrony.conf")
        grep -cE "NTP reply from 127\.0\.0\.1:($pa|$pb):" "$TIMESYNCD_LOG" || true
}

_good_replies_above() { [ "$(good_replies)" -gt "$1" ]; }

# _hostile_flagged PORT PATTERN: the set's line for the source at PORT names PATTERN, or says
# "key exchange failed" after the key exchange's own line named it.
_hostile_flagged() {
        grep -Eiq "NTS source localhost:$1 fails \(.*($2)" "$TIMESYNCD_LOG" ||
                { log_has "NTS source localhost:$1 fails (key exchange failed); " &&
                  grep -Eiq "NTS key exchange with localhost:$1 failed: .*($2)" "$TIMESYNCD_LOG"; }
}

# check_hostile MODE PATTERN: see the header.
check_hostile() {
        local mode=$1 pattern=$2 hostile n offset first
        if [ "$mode" = silent ]; then
                hostile=$(free_port)
                start_stalling_listener "$hostile"
        else
                start_mock "$mode"
                hostile=$MOCK_KE
        fi
        rm -f "$TEST_TMPDIR"/state/nts-*.jar "$TEST_TMPDIR/runtime/synchronized"
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$hostile localhost:$KE_A localhost:$KE_B" "ConnectionRetrySec=1"
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s

        # The time: at once from the two good ones, whatever the hostile one does meanwhile.
        # nak-every-second's first reply of each set of cookies is authenticated and right: it
        # may be the source selected then.
        first="$KE_A\|$KE_B"
        [ "$mode" != nak-every-second ] || first="$first\|$hostile"
        wait_log "Initial clock synchronization to localhost:\($first\) (offset .*, NTS authenticated, 2 of [23] NTS sources agree" 10
        offset=$(sed -n 's/.*Initial clock synchronization to .* (offset \([-+][0-9.]*\) s.*/\1/p' "$TIMESYNCD_LOG")
        awk -v o="$offset" 'BEGIN { exit !(o < 0.01 && o > -0.01) }' || fail "$mode: offset $offset s"

        # Flagged: once in the log, and on the bus. A key exchange that failed says why in its own
        # line; the set's line then says only that, not the reason a second time.
        wait_for 60 _hostile_flagged "$hostile" "$pattern" ||
                fail "$mode: no 'NTS source localhost:$hostile fails (... $pattern' within 60 s"
        if grep -Eiq "NTS key exchange with localhost:$hostile failed: .*($pattern)" "$TIMESYNCD_LOG"; then
                log_has "NTS source localhost:$hostile fails (key exchange failed); " ||
                        fail "$mode: the set's line repeats the key exchange's reason: $(grep "NTS source localhost:$hostile fails" "$TIMESYNCD_LOG")"
        fi
        wait_source_field "localhost:$hostile" Verdict unusable
        [ -n "$(source_field "localhost:$hostile" LastError)" ] || fail "$mode: no LastError on the bus"
        [ "$(source_field "localhost:$hostile" Failures)" -ge 1 ] || fail "$mode: Failures is not counted"

        # Nothing stalls: the good ones keep answering, each poll; the hostile one is tried again.
        n=$(good_replies)
        wait_for 10 _good_replies_above $((n + 6)) || fail "$mode: the good sources stopped answering"
        log_has "is a falseticker" && fail "$mode: a source was called a falseticker"
        log_has "would step" && fail "$mode: the daemon would have stepped the clock"
        pid_alive "$TIMESYNCD_PID" || fail "$mode: the daemon died"
        [ "$(log_count "NTS source localhost:$hostile fails")" = 1 ] || fail "$mode: its failure was logged more than once"

        stop_timesyncd
        # The silent listener ends when its connection closes.
        [ "$mode" = silent ] || stop_daemon "$MOCK_PID"
}

test_one_hostile_source_among_good_ones_changes_nothing() {
        for_each_mode "$only" check_hostile "hostile source"
}

only=${1:-}
run_case test_one_hostile_source_among_good_ones_changes_nothing
