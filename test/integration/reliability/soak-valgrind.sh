#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Soak: the daemon under valgrind memcheck against a real chronyd NTS server for at least
# SOAK_EXCHANGES authenticated exchanges (default 100) and SOAK_REKEYS forced re-keyings
# (default 5), polling every SOAK_POLL_INTERVAL (default 500ms, --test-poll-interval=) so that
# the run takes minutes, not the hours of the 16 s floor. Re-keying is forced the way a real
# server does it: chronyd restarts without its key file, the daemon's next cookie is refused
# with an NTS NAK, and the daemon runs a new key exchange.
# Passes only with no valgrind error and no definitely or possibly lost block at exit.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs
command -v valgrind >/dev/null || missing_prerequisite "valgrind not installed"

exchanges=${SOAK_EXCHANGES:-100}
rekeys=${SOAK_REKEYS:-5}
interval=${SOAK_POLL_INTERVAL:-500ms}
vglog=$TEST_TMPDIR/valgrind.log
start_nts_peer
ntp=$NTS_PEER_NTP_PORT ke=$NTS_PEER_KE_PORT srv=$NTS_PEER_DIR

nts_conf "localhost:$ke"

replies() { log_count "NTP reply from"; }
key_exchanges() { log_count "NTS key exchange with localhost:$ke .* done"; }
replies_at_least() { [ "$(replies)" -ge "$1" ]; }
key_exchanges_at_least() { [ "$(key_exchanges)" -ge "$1" ]; }

restart_chrony_with_new_keys() {
        stop_chrony "$srv"
        rm -f "$srv/ntskeys"
        start_chrony_nts_server "$srv" "$CERTDIR" "$ntp" "$ke"
}

test_daemon_is_memcheck_clean_over_many_exchanges_and_rekeys() {
        local t0 per_rekey target i rc=0
        t0=$EPOCHREALTIME
        start_daemon "$TIMESYNCD_LOG" env SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console \
                valgrind --leak-check=full --errors-for-leak-kinds=definite,possible --error-exitcode=99 \
                --track-fds=no --log-file="$vglog" \
                "$TIMESYNCD" --observe --config="$TEST_TMPDIR/ts.conf" --state-dir="$TEST_TMPDIR/state" \
                --runtime-dir="$TEST_TMPDIR/runtime" --test-poll-interval="$interval"
        TIMESYNCD_PID=$DAEMON_PID
        wait_log "$(synced_line "localhost:$ke")" 120
        assert_no_sys_time "$TIMESYNCD_PID" "valgrind systemd-timesyncd"

        per_rekey=$(( exchanges / (rekeys + 1) + 1 ))
        for (( i = 1; i <= rekeys; i++ )); do
                target=$(( i * per_rekey ))
                wait_for $(( per_rekey * 40 )) replies_at_least "$target" ||
                        fail "only $(replies) replies after $(seconds_since "$t0") s (wanted $target)"
                restart_chrony_with_new_keys
                wait_for 120 key_exchanges_at_least $(( i + 1 )) ||
                        fail "no new key exchange after chronyd's restart number $i"
                log "re-keying $i done after $(seconds_since "$t0") s, $(replies) replies"
        done
        wait_for $(( exchanges * 40 )) replies_at_least "$exchanges" ||
                fail "only $(replies) replies after $(seconds_since "$t0") s"
        assert_only_authenticated_sync

        kill -TERM "$TIMESYNCD_PID"
        wait "$TIMESYNCD_PID" || rc=$?
        log "measured: $(replies) authenticated replies, $(key_exchanges) key exchanges," \
            "$(log_count "refused our cookie (NTSN)") NAKs, $(seconds_since "$t0") s"
        grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable" "$vglog" || true
        [ "$rc" = 0 ] || fail "the daemon under valgrind exited with $rc (99: memcheck found errors)"
        grep -q "ERROR SUMMARY: 0 errors" "$vglog" || fail "valgrind reported errors"
}

run_case test_daemon_is_memcheck_clean_over_many_exchanges_and_rekeys
