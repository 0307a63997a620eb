# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# The mock NTS server (test/tools/mock-server/nts-mock-server) for shell tests: a correct
# server, one with a sabotage mode, or a key-exchange pool naming other mock servers as members
# (mock-pool.h).
#
#   start_mock_server NAME [ARG...]  on 127.0.0.1 with $CERTDIR's server chain (make_test_certs),
#                                    ports from the kernel, unless ARGs say otherwise (a later
#                                    option wins); log $TEST_TMPDIR/mock-NAME.log, counts
#                                    $TEST_TMPDIR/mock-NAME.count. Sets MOCK_PID, MOCK_KE_PORT,
#                                    MOCK_NTP_PORT.
#   stop_mock_server                 SIGTERM to the last one started (MOCK_PID); fails unless it
#                                    exits 0
#   mock_count NAME KEY              a figure of that count file (ke_sessions, ntp_requests,
#                                    ntp_naks, pool_denied_given); 0 before the first
#   start_pool_members NAME N        N mock servers on 127.0.0.2, .3, ... that share a cookie key
#                                    ($TEST_TMPDIR/mock-NAME.keys), to be members of a pool (of
#                                    them only NTP is used). Sets POOL_MEMBERS (ADDRESS:NTPPORT
#                                    each) and POOL_MEMBER_PIDS. The associative array
#                                    POOL_MEMBER_ARGS (optional), indexed by the last byte of a
#                                    member's address, gives that member more options (words),
#                                    e.g. POOL_MEMBER_ARGS[3]=--time-offset=3600: a liar.
#   start_mock_pool NAME N ARG...    such members and a pool naming them by their addresses
#                                    (--pool-member=ADDRESS:NTPPORT), with ARGs. Sets MOCK_PID
#                                    and MOCK_KE_PORT to the pool's.
[ -n "${_TSNTS_MOCK_SH:-}" ] && return 0
_TSNTS_MOCK_SH=1
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

export TSNTS_MOCK_SERVER=${TSNTS_MOCK_SERVER:-$TSNTS_BUILD_DIR/test/tools/mock-server/nts-mock-server}

start_mock_server() {
        local name=$1 log="$TEST_TMPDIR/mock-$1.log" ready
        shift
        [ -x "$TSNTS_MOCK_SERVER" ] || missing_prerequisite "the mock NTS server is not built ($TSNTS_MOCK_SERVER)"
        # Emptied first: a READY left by an earlier server of that name would pass for this one's
        # while the child is still the shell, before its exec (and before setpriv's capabilities).
        : >"$log"
        start_daemon "$log" "$TSNTS_MOCK_SERVER" --cert="$CERTDIR/server-chain.pem" --key="$CERTDIR/server.key" \
                --address=127.0.0.1 --ke-port=0 --ntp-listen-port=0 --count-file="$TEST_TMPDIR/mock-$name.count" "$@"
        MOCK_PID=$DAEMON_PID
        wait_for 10 grep -q '^READY ' "$log" || fail "nts-mock-server $name did not get ready: $(tail -n 5 "$log")"
        ready=$(grep '^READY ' "$log")
        # shellcheck disable=SC2034 # for the caller
        MOCK_KE_PORT=$(sed -n 's/.*ke-port=\([0-9]*\).*/\1/p' <<<"$ready")
        MOCK_NTP_PORT=$(sed -n 's/.*ntp-port=\([0-9]*\).*/\1/p' <<<"$ready")
        assert_no_sys_time "$MOCK_PID" nts-mock-server
}

stop_mock_server() {
        kill -TERM "$MOCK_PID"
        wait "$MOCK_PID" || fail "nts-mock-server did not exit cleanly on SIGTERM (status $?)"
}

mock_count() {
        sed -n "s/^$2=//p" "$TEST_TMPDIR/mock-$1.count" 2>/dev/null | grep . || echo 0
}

start_pool_members() {
        local name=$1 n=$2 i
        rm -f "$TEST_TMPDIR/mock-$name.keys"
        POOL_MEMBERS=()
        POOL_MEMBER_PIDS=()
        # One after the other: the first creates the shared cookie key.
        for i in $(seq 2 $((n + 1))); do
                # shellcheck disable=SC2086 # the member's options are words
                start_mock_server "$name-member-$i" --address="127.0.0.$i" --keys-file="$TEST_TMPDIR/mock-$name.keys" \
                        ${POOL_MEMBER_ARGS[$i]:-}
                POOL_MEMBERS+=("127.0.0.$i:$MOCK_NTP_PORT")
                POOL_MEMBER_PIDS+=("$MOCK_PID")
        done
}

start_mock_pool() {
        local name=$1 n=$2 m args=()
        shift 2
        start_pool_members "$name" "$n"
        for m in "${POOL_MEMBERS[@]}"; do
                args+=(--pool-member="$m")
        done
        start_mock_server "$name" --keys-file="$TEST_TMPDIR/mock-$name.keys" "${args[@]}" "$@"
}
