#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Soak: SOAK_POLLS (default 10 000) authenticated polls against a real chronyd NTS server at a
# poll interval of SOAK_POLL_INTERVAL (default 50ms, --test-poll-interval=). Every
# SOAK_SAMPLE_EVERY replies (default 500) the daemon's open descriptors, VmRSS and CPU time are
# sampled; the series goes to the test log and to $SOAK_SERIES_FILE when set. Passes when every
# reply was authenticated, the descriptor count never changed after the first sample, and RSS
# grew by at most 64 KiB from the first sample (taken after 500 polls, when the heap has
# settled) to the last: a leak of even a few bytes per poll shows over 10 000 polls.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs

polls=${SOAK_POLLS:-10000}
interval=${SOAK_POLL_INTERVAL:-50ms}
every=${SOAK_SAMPLE_EVERY:-500}
series=$TEST_TMPDIR/series.tsv
start_nts_peer
ke=$NTS_PEER_KE_PORT
nts_conf "localhost:$ke"

replies() { log_count "NTP reply from"; }
replies_at_least() { [ "$(replies)" -ge "$1" ]; }
# The fewest of five readings 30 ms apart: a cookie-file write in progress holds two more
# descriptors for a moment (long on a disk, where it waits for two fsync()); a leak stays.
fds() {
        local n min=""
        for _ in 1 2 3 4 5; do
                n=$(find "/proc/$TIMESYNCD_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
                [ -n "$min" ] && [ "$min" -le "$n" ] || min=$n
                sleep 0.03
        done
        echo "$min"
}
rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$TIMESYNCD_PID/status"; }

test_fds_and_rss_are_stable_over_many_polls() {
        local t0 target n_fds rss first_fds="" first_rss="" last_rss=0 cpu
        t0=$EPOCHREALTIME
        TIMESYNCD_LOG_LEVEL=debug start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval="$interval"
        wait_log "$(synced_line "localhost:$ke")" 60
        printf 'replies\tseconds\tfds\trss_kib\tcpu_s\n' >"$series"
        for (( target = every; target <= polls; target += every )); do
                # 10 s of slack per 500 polls beyond their nominal time; a stall fails the test.
                wait_for $(( every / 10 + 30 )) replies_at_least "$target" ||
                        fail "only $(replies) replies after $(seconds_since "$t0") s (wanted $target)"
                n_fds=$(fds)
                rss=$(rss_kib)
                cpu=$(cpu_seconds "$TIMESYNCD_PID")
                printf '%s\t%s\t%s\t%s\t%s\n' "$target" "$(seconds_since "$t0")" "$n_fds" "$rss" "$cpu" >>"$series"
                [ -n "$first_fds" ] || { first_fds=$n_fds; first_rss=$rss; }
                # shellcheck disable=SC2012 # a listing for the reader of the failure
                [ "$n_fds" = "$first_fds" ] ||
                        fail "descriptor count went from $first_fds to $n_fds at $target polls: $(ls -l "/proc/$TIMESYNCD_PID/fd" | tail -n +2)"
                last_rss=$rss
        done
        cat "$series"
        [ -z "${SOAK_SERIES_FILE:-}" ] || cp "$series" "$SOAK_SERIES_FILE"
        assert_only_authenticated_sync
        [ "$(log_count "failed authentication")" = 0 ] || fail "replies failed authentication"
        (( last_rss - first_rss <= 64 )) || fail "RSS grew from $first_rss KiB to $last_rss KiB"
        log "measured: $(replies) replies in $(seconds_since "$t0") s, $(log_count "NTS key exchange with .* done") key exchanges," \
            "fds $first_fds, RSS $first_rss -> $last_rss KiB, CPU $(cpu_seconds "$TIMESYNCD_PID") s"
        stop_timesyncd
}

run_case test_fds_and_rss_are_stable_over_many_polls
