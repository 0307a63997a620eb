#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One server, one vote (docs/ARCHITECTURE.md, "Several sources"): a server listed under several
# names (two names of the test certificate, one in other letter case, and its address) is one
# source in the selection and in the bootstrap rule; the later-listed entries are duplicates,
# said once in the log and shown as such in Sources. Real chronyd NTS servers, one of them
# lying through true-time.so; the daemon in observe mode on its fake clock
# (--test-clock-offset=), which it steps exactly as it would step the real one. On the loopback
# ports tell servers apart and keys are not compared: the liar's names all reach one port of
# 127.0.0.1, the honest server sits on 127.0.0.2 with a key of its own. The cases with an
# attacker dropping the honest servers' packets run in a network namespace of their own. A pool
# naming one address on two ports is test-nts-pool.sh's, on addresses that are not the loopback
# (ports tell servers apart there), and the unit test's (test-timesyncd-source-identity). A
# key-exchange server that names another server's NTP address makes a claim, not a twin: both
# keep their vote (off the loopback, mock servers with keys of their own).
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR/../../lib source=mock.sh
. "$(dirname "$0")/../../lib/mock.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus
chmod 0755 "$CERTDIR"
chmod 0644 "$CERTDIR"/*.pem

# Exported for the cases that run in a network namespace (netns_exec).
export HOUR=$((3600 * 1000000000))
DAY=86400
YEAR=$((365 * DAY))

# own_cert NAME ADDRESS: a key and certificate of NAME's own (SAN IP:ADDRESS, issued by the test
# CA) in $TEST_TMPDIR/own-NAME, as a CERTDIR for one server.
own_cert() {
        local dir=$TEST_TMPDIR/own-$1 address=$2
        mkdir -p "$dir"
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$dir/server.key" \
                -subj "/CN=$1" -out "$dir/server.csr" 2>/dev/null
        printf 'basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:%s\n' "$address" \
                >"$dir/ext.cnf"
        openssl x509 -req -in "$dir/server.csr" -CA "$CERTDIR/ca.pem" -CAkey "$CERTDIR/ca.key" -set_serial 4242 \
                -days 30 -extfile "$dir/ext.cnf" -out "$dir/server.pem" 2>/dev/null
        cat "$dir/server.pem" "$CERTDIR/ca.pem" >"$dir/server-chain.pem"
        chmod 0755 "$dir"
        chmod 0644 "$dir"/*.pem "$dir/server.key"
}

# start_other_server NAME OFFSET [ADDRESS]: a chronyd on ADDRESS (default 127.0.0.2) with a key
# and certificate of its own (own_cert), OFFSET nanoseconds ahead. Sets CHRONY_KE and
# CHRONY_NTP, and so SERVER_KE[NAME] and SERVER_NTP[NAME] for drop.
start_other_server() {
        local address=${3:-127.0.0.2}
        own_cert "$1" "$address"
        CHRONY_BIND4=$address CERTDIR=$TEST_TMPDIR/own-$1 start_chrony_at "$1" "$2"
        SERVER_KE[$1]=$CHRONY_KE
        SERVER_NTP[$1]=$CHRONY_NTP
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
# and steps the clock by an hour. WHEN an attacker drops what the honest server sends: "never";
# "start": from the start, so that only the liar ever answers (counted per entry, three of four
# agree); "sync": after the first synchronization, which a second honest server (on 127.0.0.3)
# made possible, both honest servers then silenced (counted per entry, three of five answer and
# agree).
liar_listed_three_ways_inner() {
        local when=$1 liar honest text n
        declare -gA SERVER_KE=() SERVER_NTP=()
        start_chrony_at liar "$HOUR"
        liar=$CHRONY_KE
        start_other_server honest 0
        honest=127.0.0.2:$CHRONY_KE
        [ "$when" != sync ] || { start_other_server honest2 0 127.0.0.3; honest+=" 127.0.0.3:$CHRONY_KE"; }
        [ "$when" != start ] || drop honest
        # Five entries with two honest servers: all of them in use.
        start_fresh_timesyncd 0 none "localhost:$liar LOCALHOST:$liar 127.0.0.1:$liar $honest" \
                ConnectionRetrySec=1 NTSMaxSources=5 -- --test-poll-interval=1s
        case $when in
        never)
                text="2 NTS sources disagree by 3600 s; clock left alone"
                wait_log "$text" 30
                ;;
        start)
                text="Only 1 of 2 NTS sources agree, 2 needed (1 does not answer); clock left alone"
                wait_log "NTS source ${honest%% *} fails (.*); it is tried again, and still counts as in use" 40
                log_has "Test clock: stepped" && fail "the clock was stepped: $(grep -m1 "Test clock: stepped" "$TIMESYNCD_LOG")"
                wait_log "$text" 30
                ;;
        sync)
                wait_log "Initial clock synchronization to" 30
                log_has "Test clock: stepped" && fail "the clock was stepped: $(grep -m1 "Test clock: stepped" "$TIMESYNCD_LOG")"
                wait_log "Initial clock synchronization to 127\.0\.0\.[23]:[0-9]* (offset .*, NTS authenticated, 2 of 3 NTS sources agree" 1
                drop honest honest2
                wait_log "NTS source ${honest%% *} fails (no reply)" 30
                wait_log "NTS source ${honest#* } fails (no reply)" 30
                text="Only 0 of 3 NTS sources answer and agree, 2 needed (2 do not answer); clock left alone"
                wait_log "$text" 30
                ;;
        esac
        assert_merged "LOCALHOST:$liar" "localhost:$liar"
        assert_merged "127.0.0.1:$liar" "localhost:$liar"
        # Several more rounds of every source: still nothing.
        if [ "$when" = never ]; then
                n=$(log_count "NTS reply from $honest verified")
                wait_log_count "NTS reply from $honest verified" $((n + 3)) 20
        fi
        n=$(log_count "NTS reply from LOCALHOST:$liar verified")
        wait_log_count "NTS reply from LOCALHOST:$liar verified" $((n + 3)) 20
        log_has "Test clock: stepped" && fail "the clock was stepped: $(grep -m1 "Test clock: stepped" "$TIMESYNCD_LOG")"
        log_has "would s[tl][ea][pw]" && fail "the daemon would have moved the clock"
        log_has "Selected server [a-zA-Z0-9.]*:$liar " && fail "the liar was selected"
        if [ "$when" != sync ]; then
                log_has "Initial clock synchronization" && fail "the daemon synchronized"
                log_has "Selected server" && fail "a source was selected: $(grep -m1 "Selected server" "$TIMESYNCD_LOG")"
        fi
        case "$(timesync_property NTSStatus)" in
        "$text since "*) ;;
        *) fail "NTSStatus is '$(timesync_property NTSStatus)'" ;;
        esac
        [ "$when" != never ] || [ "$(sources_json | /usr/bin/python3 -c 'import json, sys
print(sorted(s["Verdict"] for s in json.load(sys.stdin)))')" = "['duplicate', 'duplicate', 'undecided', 'undecided']" ] ||
                fail "the verdicts are not two duplicates and two undecided: $(sources_json)"
        [ "$when" = never ] || echo "result: liar listed three ways, honest silenced ($when): $(dropped_packets) packets dropped; $text"
        stop_timesyncd
        stop_chronys
}

test_liar_listed_three_ways_beside_an_honest_server_moves_nothing() { liar_listed_three_ways_inner never; }
test_liar_listed_three_ways_gains_nothing_from_a_silenced_honest_server() { run_in_netns liar_listed_three_ways_inner start; }
test_liar_listed_three_ways_gains_nothing_from_honest_servers_silenced_after_sync() {
        run_in_netns liar_listed_three_ways_inner sync
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

# start_own_mock NAME ADDRESS [ARG...]: the mock NTS server on ADDRESS with a key and certificate
# of its own (own_cert), naming its NTP port in its key exchange (ARGs may name another); its PID
# is added to MOCK_PIDS. Sets MOCK_KE_PORT.
start_own_mock() {
        local name=$1 address=$2 ntp
        shift 2
        own_cert "$name" "$address"
        ntp=$(free_port)
        CERTDIR=$TEST_TMPDIR/own-$name start_mock_server "$name" --address="$address" --ntp-listen-port="$ntp" \
                --ntp-port="$ntp" "$@"
        MOCK_PIDS+=("$MOCK_PID")
}

# Issue 33: a claim is not a proof. Off the loopback, on a veth interface of a network namespace
# of the test's own, mock NTS servers each with a key and certificate of its own: S, a liar's
# key-exchange server with a valid certificate for its own address (198.51.100.10), names t1's
# NTP address (192.0.2.11, on another port: shared hosting, or anyone who can answer UDP sent
# there) as its NTP server, and answers there an hour ahead; L lies an hour ahead
# (198.51.100.20); t1 and t2 are honest (192.0.2.11, 192.0.2.12). Listed S, L, t1, t2. S and t1
# name one NTP address but differ in key-exchange address and key: a conflict, logged once and
# said in NTSStatus, not a merge. Four sources in use, three needed, two liars: the clock, the
# daemon's fake one, stays where it is. Merged on the NTP address (the rule before), t1 was S's
# duplicate, the majority two of three, and the liars stepped the clock by an hour.
claim_inner() {
        local s l t1 t2 ntp text n table
        MOCK_PIDS=()
        ip link add tsnts0 type veth peer name tsnts1
        ip addr add 192.0.2.11/24 dev tsnts0
        ip addr add 192.0.2.12/24 dev tsnts0
        ip addr add 198.51.100.10/24 dev tsnts0
        ip addr add 198.51.100.20/24 dev tsnts0
        ip link set tsnts0 up
        ip link set tsnts1 up
        start_own_mock t1 192.0.2.11
        t1=192.0.2.11:$MOCK_KE_PORT
        start_own_mock t2 192.0.2.12
        t2=192.0.2.12:$MOCK_KE_PORT
        start_own_mock l 198.51.100.20 --time-offset=3600
        l=198.51.100.20:$MOCK_KE_PORT
        ntp=$(free_port)
        start_own_mock s 198.51.100.10 --ntp-address=192.0.2.11 --ntp-listen-port="$ntp" --ntp-server=192.0.2.11 \
                --ntp-port="$ntp" --time-offset=3600
        s=198.51.100.10:$MOCK_KE_PORT
        start_fresh_timesyncd 0 none "$s $l $t1 $t2" ConnectionRetrySec=1 -- --test-poll-interval=1s
        text="4 NTS sources disagree by 3600 s; clock left alone"
        wait_log "$text" 30
        # Several more rounds of every source: still nothing.
        for n in "$s" "$l" "$t1" "$t2"; do
                wait_log_count "NTS reply from $n verified" 5 20
        done
        echo "result: a claim of t1's NTP address: $(grep -m1 "name one NTP address" "$TIMESYNCD_LOG" || true)"
        log_has "is the same server as" && fail "a claim merged two sources: $(grep -m1 "is the same server as" "$TIMESYNCD_LOG")"
        log_has "Test clock: stepped" && fail "the clock was stepped: $(grep -m1 "Test clock: stepped" "$TIMESYNCD_LOG")"
        log_has "Initial clock synchronization" && fail "the daemon synchronized: $(grep -m1 "Initial clock" "$TIMESYNCD_LOG")"
        text="NTS sources $t1 and $s name one NTP address 192\.0\.2\.11, though their key-exchange servers and certificate keys differ"
        wait_log "$text" 1
        [ "$(log_count "$text")" = 1 ] || fail "the conflict was logged $(log_count "$text") times"
        case "$(timesync_property NTSStatus)" in
        "4 NTS sources disagree by 3600 s; clock left alone since "*"; NTS sources $t1 and $s name one NTP address 192.0.2.11") ;;
        *) fail "NTSStatus is '$(timesync_property NTSStatus)'" ;;
        esac
        [ "$(sources_json | /usr/bin/python3 -c 'import json, sys
print(sorted(s["Verdict"] for s in json.load(sys.stdin)))')" = "['undecided', 'undecided', 'undecided', 'undecided']" ] ||
                fail "the verdicts are not four undecided: $(sources_json)"
        # Per source: S and t1 each name the other in ConflictWith, L and t2 no one; the table
        # of timesync-sources lists the two.
        sources_json | /usr/bin/python3 -c 'import json, sys
conflict_with = {s["Name"]: s["ConflictWith"] for s in json.load(sys.stdin)}
s, l, t1, t2 = sys.argv[1:]
assert conflict_with == {s: t1, l: "", t1: s, t2: ""}, conflict_with' "$s" "$l" "$t1" "$t2" ||
                fail "ConflictWith of Sources is wrong: $(sources_json)"
        table=$("$TSNTS_BUILD_DIR/tools/timesync-sources") || fail "timesync-sources failed: $table"
        echo "$table"
        grep -q "^Conflicting claims: NTS sources whose key-exchange servers" <<<"$table" || fail "no conflict in the table"
        grep -Eq "^  $s +polls 192\.0\.2\.11:$ntp; $t1 names that NTP address too$" <<<"$table" ||
                fail "the table does not show S's conflict"
        grep -Eq "^  $t1 +polls 192\.0\.2\.11:[0-9]+; $s names that NTP address too$" <<<"$table" ||
                fail "the table does not show t1's conflict"
        [ "$(grep -c "names that NTP address too$" <<<"$table")" = 2 ] || fail "the table shows other conflicts"
        # The metrics a fleet scrapes: S and t1 in conflict, L and t2 not.
        "$TSNTS_BUILD_DIR/tools/timesync-sources" --prometheus >"$TEST_TMPDIR/claim.prom"
        for n in "$s:1" "$t1:1" "$l:0" "$t2:0"; do
                grep_q -x "timesyncd_source_nts_conflict{name=\"${n%:*}\"} ${n##*:}" "$TEST_TMPDIR/claim.prom" ||
                        fail "timesyncd_source_nts_conflict of ${n%:*} is not ${n##*:}: $(grep conflict "$TEST_TMPDIR/claim.prom")"
        done
        stop_timesyncd
        for n in "${MOCK_PIDS[@]}"; do
                stop_daemon "$n"
        done
}

test_a_claimed_ntp_address_takes_no_vote_away() { run_in_netns claim_inner; }

run_case test_liar_listed_three_ways_beside_an_honest_server_moves_nothing
run_case test_liar_listed_three_ways_gains_nothing_from_a_silenced_honest_server
run_case test_liar_listed_three_ways_gains_nothing_from_honest_servers_silenced_after_sync
run_case test_no_bootstrap_from_one_server_under_two_names
run_case test_a_claimed_ntp_address_takes_no_vote_away
