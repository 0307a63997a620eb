#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One server, one vote (docs/ARCHITECTURE.md, "Several sources"): a server listed under several
# names (two names of the test certificate, one in other letter case, and its address) is one
# source in the selection and in the bootstrap rule; the later-listed entries are duplicates,
# said once in the log and shown as such in Sources. Real chronyd NTS servers, one of them
# lying through true-time.so; the daemon in observe mode on its fake clock
# (--test-clock-offset=), which it steps exactly as it would step the real one. On the loopback
# ports tell servers apart and keys are not compared: the liar's names all reach one port of
# 127.0.0.1, the honest server sits on 127.0.0.2 with a key of its own. A pool naming one
# address on two ports is the unit test's (test-timesyncd-source-identity), on an address that
# is not the loopback.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=mock.sh
. "$(dirname "$0")/../../lib/mock.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus
chmod 0755 "$CERTDIR"
chmod 0644 "$CERTDIR"/*.pem

HOUR=$((3600 * 1000000000))
DAY=86400
YEAR=$((365 * DAY))

# start_other_server NAME OFFSET: a chronyd on 127.0.0.2 with a key and certificate of its own
# (SAN IP:127.0.0.2, issued by the test CA), OFFSET nanoseconds ahead. Sets CHRONY_KE.
start_other_server() {
        local dir=$TEST_TMPDIR/own-$1
        mkdir -p "$dir"
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$dir/server.key" \
                -subj "/CN=$1" -out "$dir/server.csr" 2>/dev/null
        printf 'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.2\n' \
                >"$dir/ext.cnf"
        openssl x509 -req -in "$dir/server.csr" -CA "$CERTDIR/ca.pem" -CAkey "$CERTDIR/ca.key" -set_serial 4242 \
                -days 30 -extfile "$dir/ext.cnf" -out "$dir/server.pem" 2>/dev/null
        cat "$dir/server.pem" "$CERTDIR/ca.pem" >"$dir/server-chain.pem"
        chmod 0755 "$dir"
        chmod 0644 "$dir"/*.pem "$dir/server.key"
        CHRONY_BIND4=127.0.0.2 CERTDIR=$dir start_chrony_at "$1" "$2"
}

# assert_merged DUPLICATE FIRST: the log says once that DUPLICATE is FIRST's server, and
# Sources shows it as a duplicate.
assert_merged() {
        local text="NTS source $1 is the same server as $2 (same [a-z -]*\(127\.0\.0\.1\|, SHA-256 [0-9a-f.]*\)); it counts once\."
        wait_log "$text" 20
        [ "$(log_count "$text")" = 1 ] || fail "the merge of $1 was logged $(log_count "$text") times"
        wait_source_field "$1" Verdict duplicate 10
}

# A liar an hour ahead listed three ways before one honest server: two sources, which
# disagree; the clock stays where it is. Counted per entry, the liar has three votes of four
# and steps the clock by an hour.
test_liar_listed_three_ways_beside_an_honest_server_moves_nothing() {
        local liar honest text="2 NTS sources disagree by 3600 s; clock left alone" n
        start_chrony_at liar "$HOUR"
        liar=$CHRONY_KE
        start_other_server honest 0
        honest=127.0.0.2:$CHRONY_KE
        start_fresh_timesyncd 0 none "localhost:$liar LOCALHOST:$liar 127.0.0.1:$liar $honest" \
                ConnectionRetrySec=1 -- --test-poll-interval=1s
        wait_log "$text" 30
        assert_merged "LOCALHOST:$liar" "localhost:$liar"
        assert_merged "127.0.0.1:$liar" "localhost:$liar"
        # Several more rounds of every source: still nothing.
        n=$(log_count "NTS reply from $honest verified")
        wait_log_count "NTS reply from $honest verified" $((n + 3)) 20
        n=$(log_count "NTS reply from LOCALHOST:$liar verified")
        wait_log_count "NTS reply from LOCALHOST:$liar verified" $((n + 3)) 20
        log_has "Test clock: stepped" && fail "the clock was stepped: $(grep -m1 "Test clock: stepped" "$TIMESYNCD_LOG")"
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        log_has "would s[tl][ea][pw]" && fail "the daemon would have moved the clock"
        log_has "Selected server" && fail "a source was selected: $(grep -m1 "Selected server" "$TIMESYNCD_LOG")"
        case "$(timesync_property NTSStatus)" in
        "$text since "*) ;;
        *) fail "NTSStatus is '$(timesync_property NTSStatus)'" ;;
        esac
        [ "$(sources_json | /usr/bin/python3 -c 'import json, sys
print(sorted(s["Verdict"] for s in json.load(sys.stdin)))')" = "['duplicate', 'duplicate', 'undecided', 'undecided']" ] ||
                fail "the verdicts are not two duplicates and two undecided: $(sources_json)"
        stop_timesyncd
        stop_chronys
}

# A clock years behind, advanced to its floor; a server a day ahead whose certificate was issued
# after the floor, listed under two key-exchange names (localhost and 127.0.0.1), and a second
# server that does not answer. Counted per entry, the two names are a majority of three with two
# key-exchange names and bootstrap the clock a day ahead; counted once, one server of two in use
# is no majority.
test_no_bootstrap_from_one_server_under_two_names() {
        local a dead n
        make_test_cert fresh 3600 $((30 * DAY))
        mkdir -p "$TEST_TMPDIR/srv"
        cp "$CERTDIR/fresh-chain.pem" "$TEST_TMPDIR/srv/server-chain.pem"
        cp "$CERTDIR/server.key" "$TEST_TMPDIR/srv/server.key"
        CERTDIR=$TEST_TMPDIR/srv start_chrony_at ahead $((DAY * 1000000000))
        a=$CHRONY_KE
        dead=$(free_port)
        start_fresh_timesyncd $((-2 * YEAR)) $(($(date +%s) - 600)) "localhost:$a 127.0.0.1:$a localhost:$dead" \
                ConnectionRetrySec=1 -- --test-poll-interval=1s
        wait_log "The certificate of 127.0.0.1:$a is not yet valid by our clock, which is not synchronized and behind" 20
        assert_merged "127.0.0.1:$a" "localhost:$a"
        # One of two sources in use: too few for any agreement, a bootstrap least of all.
        wait_log "1 of 2 NTS sources agree.*; clock left alone" 30
        n=$(log_count "NTS reply from 127.0.0.1:$a verified")
        wait_log_count "NTS reply from 127.0.0.1:$a verified" $((n + 3)) 20
        log_has "Test clock: stepped" && fail "the clock was stepped: $(grep -m1 "Test clock: stepped" "$TIMESYNCD_LOG")"
        log_has "Bootstrap: the clock took" && fail "the clock took bootstrap time"
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        stop_timesyncd
        stop_chronys
}

run_case test_liar_listed_three_ways_beside_an_honest_server_moves_nothing
run_case test_no_bootstrap_from_one_server_under_two_names
