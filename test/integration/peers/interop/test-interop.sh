#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One NTS server implementation against the daemon and nts-query, the cells of one column of
# docs/INTEROP.md:
#   test-interop.sh PEER      PEER: chrony-bookworm, chrony-trixie, chrony-forky,
#                                   ntpsec-bookworm, ntpsec-trixie, ntpsec-forky,
#                                   ntpd-rs-trixie, ntpd-rs-forky
# chronyd and NTPsec's ntpd of trixie and forky need a newer glibc than the host's: they run
# chrooted in a tree of their suite (CHRONY_TREE, NTPSEC_TREE in test/lib).
# The whole test runs in a network namespace of its own (NTPsec's ports are fixed), where the
# server, the daemon and nts-query meet on loopback.
# Each case asserts what it records; the records (row, value, case) go to
# BUILD/test/integration/peers/interop/PEER.tsv, which interop-matrix.sh turns into the table.
# A peer that fetch-peers.sh did not fetch skips the test.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../../lib source=../../../lib/chrony.sh
. "$(dirname "$0")/../../../lib/chrony.sh"
# shellcheck source-path=SCRIPTDIR/../../../lib source=../../../lib/ntpsec.sh
. "$(dirname "$0")/../../../lib/ntpsec.sh"
# shellcheck source-path=SCRIPTDIR/../../../lib source=../../../lib/ntpd-rs.sh
. "$(dirname "$0")/../../../lib/ntpd-rs.sh"
# shellcheck source-path=SCRIPTDIR/../../../lib source=../../../lib/nts-query.sh
. "$(dirname "$0")/../../../lib/nts-query.sh"
# shellcheck source-path=SCRIPTDIR/../../../lib source=../../../lib/timesyncd.sh
. "$(dirname "$0")/../../../lib/timesyncd.sh"

peer=${1:?usage: test-interop.sh PEER}
if [ -z "${_TSNTS_INTEROP_NETNS:-}" ]; then
        [ "$(id -u)" = 0 ] || missing_prerequisite "integration tests need root (network namespaces, setpriv)"
        _TSNTS_INTEROP_NETNS=1 exec unshare --net -- "$BASH" "$0" "$@"
fi
ip link set lo up

case $peer in
chrony-bookworm | ntpsec-bookworm) ;;
chrony-trixie | chrony-forky | ntpsec-trixie | ntpsec-forky)
        tree=$TSNTS_PEERS_DIR/${peer#*-}/tree
        if [ ! -e "$TSNTS_PEERS_DIR/${peer#*-}/.tree-stamp" ]; then
                skip "no ${peer#*-} tree ($tree); run: test/tools/fixtures/fetch-peers.sh $TSNTS_PEERS_DIR"
        fi
        case $peer in
        chrony-*) CHRONY_TREE=$tree ;;
        ntpsec-*) NTPSEC_TREE=$tree ;;
        esac
        ;;
ntpd-rs-trixie | ntpd-rs-forky) NTPD_RS=$(ntpd_rs_bin "${peer#ntpd-rs-}") ;;
*) fail "unknown peer $peer" ;;
esac

daemon_test_init --certs --timedatectl --bus
if [ "${peer%-*}" = ntpsec ]; then
        ntp=$NTPSEC_NTP_PORT ke=$NTPSEC_KE_PORT
else
        ntp=$(free_port)
        ke=$(free_port)
fi
rundir=$TEST_TMPDIR/peer
out=$TEST_TMPDIR/out

# ---- the peer: start (with its keys of an earlier start, if any) and its label ----

# peer_start [--server-record]: starts the server on NTP port $ntp and KE port $ke; with
# --server-record it names "localhost" as the NTP server in a Server record (not NTPsec, which
# has no setting for that).
peer_start() {
        local server=()
        case $peer in
        ntpsec-*)
                [ "${1:-}" != --server-record ] || fail "NTPsec sends no Server record"
                start_ntpsec_nts_server "$rundir" "$CERTDIR" -
                ;;
        chrony-*)
                [ "${1:-}" != --server-record ] || server=("ntsntpserver localhost")
                start_chrony_nts_server "$rundir" "$CERTDIR" "$ntp" "$ke" ${server[@]+"${server[@]}"}
                ;;
        ntpd-rs-*)
                [ "${1:-}" != --server-record ] || server=('ntp-server = "localhost"')
                start_ntpd_rs_nts_server "$NTPD_RS" "$rundir" "$CERTDIR" "$ntp" "$ke" ${server[@]+"${server[@]}"}
                ;;
        esac
}

peer_stop() {
        case $peer in
        chrony-*) stop_chrony "$rundir" ;;
        ntpsec-*) stop_ntpsec "$rundir" ;;
        ntpd-rs-*) stop_ntpd_rs "$rundir" ;;
        esac
}

# The server's file of its cookie keys: without it a restart makes new keys.
peer_keys_file() {
        case $peer in
        chrony-*) echo "$rundir/ntskeys" ;;
        ntpsec-*) echo "$rundir/nts-keys" ;;
        ntpd-rs-*) echo "$rundir/keys" ;;
        esac
}

peer_label() {
        case $peer in
        chrony-*) echo "chrony $(chrony_version) (${peer##*-})" ;;
        ntpsec-*) echo "NTPsec $(ntpsec_version) (${peer##*-})" ;;
        ntpd-rs-*) echo "ntpd-rs $(ntpd_rs_version "$NTPD_RS") (${peer##*-})" ;;
        esac
}

# ---- nts-query with AES-128-GCM-SIV ----

# The host's OpenSSL 3.0 has no AES-GCM-SIV, trixie's 3.5 and forky's 3.6 have: nts-query of
# this build runs chrooted in a tree of one of those (suite_tree_run), for peers of trixie or
# forky in their own, for the others in trixie's. Empty when no such tree was fetched.
gcm_tree=
case $peer in
*-forky) gcm_tree=$TSNTS_PEERS_DIR/forky/tree ;;
*) gcm_tree=$TSNTS_PEERS_DIR/trixie/tree ;;
esac
[ -e "$(dirname "$gcm_tree")/.tree-stamp" ] || gcm_tree=

# tree_query_json ARG...: like query_json, with the tree's libcrypto (--ca is given here).
tree_query_json() {
        local dir=$TEST_TMPDIR/tree-query
        mkdir -p "$dir"
        cp "$TSNTS_NTS_QUERY" "$CERTDIR/ca.pem" "$dir/"
        QUERY_RC=0
        suite_tree_run "$gcm_tree" "$dir" nts-query --json --ca=/mnt/ca.pem "$@" "localhost:$ke" \
                >"$out.json" 2>"$out.err" || QUERY_RC=$?
        cat "$out.json" "$out.err" >"$out"
}

# ---- the records ----

records_dir="$TSNTS_BUILD_DIR/test/integration/peers/interop"
records="$records_dir/$peer.tsv"
mkdir -p "$records_dir"
# A file of an earlier run would mix with this one's: made anew, and complete only at the end.
printf '#\t%s\n' "$(peer_label)" >"$records.tmp"

# record ROW VALUE: one cell, checked by the case that runs now ($current_case).
record() {
        printf '%s\t%s\t%s\n' "$1" "$2" "test-interop-$peer: $current_case" >>"$records.tmp"
}

case_() {
        current_case=$1
        run_case "$@"
}

# ---- nts-query ----

# query_json ARG...: nts-query --json against the peer, trusting only the test CA.
query_json() {
        nts_query_json "$out" --ca="$CERTDIR/ca.pem" "$@" "localhost:$ke"
}

# jq_ EXPR: a value of the last query's JSON (Python expression over j).
jq_() {
        /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$out.json" "$1"
}

aead_name() {
        case $1 in
        15) echo AEAD_AES_SIV_CMAC_256 ;;
        16) echo AEAD_AES_SIV_CMAC_384 ;;
        17) echo AEAD_AES_SIV_CMAC_512 ;;
        30) echo AEAD_AES_128_GCM_SIV ;;
        esac
}

# What NTPsec (every version here) answers is known, so its column is also an expectation: it
# takes the first AEAD of the client's list that it has (17 of ours) and never refuses 15, 16 or
# 17; its cookie is the key id (4 bytes), a nonce (16), and sealed under AES-SIV (a 16-byte tag)
# the AEAD and key length (2 + 2) and both keys: 40 bytes and twice the AEAD's key length.
ntpsec_cookie_size() {
        case $1 in
        15) echo 104 ;;
        16) echo 136 ;;
        17) echo 168 ;;
        esac
}

# expect_ntpsec_answer AEAD: the last query's JSON has NTPsec's answer to an offer led by AEAD.
expect_ntpsec_answer() {
        [ "${peer%-*}" = ntpsec ] || return 0
        json_check "$out.json" "j['ke']['aead'] == $1" \
                "set(j['ke']['cookie_sizes']) == {$(ntpsec_cookie_size "$1")}"
}

test_key_exchange_with_our_default_offer() {
        local aead sizes crit port
        nts_query "$out" --ca="$CERTDIR/ca.pem" "localhost:$ke"
        save_output "interop-$peer" "$out"
        expect_exit 0 "$out" "nts-query against $(peer_label)"
        expect_output "$out" '^Result: +4 of 4 exchanges verified' "4 verified exchanges"
        query_json --count=1
        expect_exit 0 "$out" "nts-query --json"
        json_check "$out.json" "${JSON_STABLE_KEYS[@]}" "j['verified'] == 1" "j['ke']['ntp_address'].endswith(':$ntp')"
        expect_ntpsec_answer 17
        aead=$(jq_ "j['ke']['aead']")
        sizes=$(jq_ "' '.join(sorted(set(str(s) for s in j['ke']['cookie_sizes'])))")
        crit=$(jq_ "[r['critical'] for r in j['ke']['records'] if r['type'] == 4][0]")
        port=$(jq_ "[r for r in j['ke']['records'] if r['type'] == 7] != []")
        [ "$port" = True ] || [ "$ntp" = 123 ] || fail "no Port Negotiation record although the NTP port is $ntp"
        record "AEAD chosen from our offer (17, 16, 15)" "$aead, $(aead_name "$aead")"
        record "cookies with that AEAD" "$(jq_ "len(j['ke']['cookie_sizes'])") of $sizes bytes"
        record "AEAD record critical bit" "$([ "$crit" = True ] && echo set || echo "not set")"
        if [ "$ntp" = 123 ]; then
                record "Port record" "$([ "$port" = True ] && echo "yes, although its port is 123" || echo "none (its port is 123)")"
        else
                record "Port record" "yes (its NTP port is not 123)"
        fi
        record "nts-query output" "interop-$peer.txt"
}

# Each AEAD of RFC 8915's registry that we implement, offered alone: either the server takes it
# and the exchange verifies, or it refuses in the key exchange (nts-query exit 6) and says how.
test_each_aead_offered_alone() {
        local aead value
        for aead in 15 16 17; do
                query_json --count=1 --aead="$aead"
                case $QUERY_RC in
                0)
                        json_check "$out.json" "j['ke']['aead'] == $aead" "j['verified'] == 1"
                        expect_ntpsec_answer "$aead"
                        value="accepted, $(jq_ "len(j['ke']['cookie_sizes'])") cookies of $(jq_ "j['ke']['cookie_sizes'][0]") bytes, verified"
                        ;;
                "$QUERY_EXIT_KE")
                        [ "$aead" != 15 ] || fail "AEAD 15, which RFC 8915 makes mandatory, refused: $(cat "$out")"
                        [ "${peer%-*}" != ntpsec ] || fail "NTPsec refused AEAD $aead: $(cat "$out")"
                        if [ "$(jq_ "[r for r in j['ke']['records'] if r['type'] == 2] != []")" = True ]; then
                                value="refused with an Error record: $(jq_ "j['ke']['error']" | sed 's/.*: server //')"
                        else
                                value="refused: no common algorithm (empty AEAD record)"
                        fi
                        ;;
                *) fail "--aead=$aead: exit $QUERY_RC: $(cat "$out")" ;;
                esac
                record "offer of only $aead ($(aead_name "$aead"))" "$value"
        done
}

test_daemon_is_nts_authenticated_on_dbus() {
        local aead retry=()
        # A request NTPsec leaves unanswered costs a cookie, the timeout and this wait
        # (test_new_server_keys_lead_to_ntsn_and_new_key_exchange spends all 8 of them).
        [ "${peer%-*}" != ntpsec ] || retry=("ConnectionRetrySec=1")
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke" "PollIntervalMinSec=16" "PollIntervalMaxSec=16" \
                ${retry[@]+"${retry[@]}"}
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Initial clock synchronization to localhost:$ke (offset .*, NTS authenticated"
        aead=$(grep -o "NTS key exchange with localhost:$ke (.*) done: AEAD_[A-Z0-9_]*" "$TIMESYNCD_LOG" | tail -n 1)
        aead=${aead##*: }
        [ -n "$aead" ] || fail "no AEAD in the key exchange log line"
        assert_nts_on_bus "localhost:$ke" "$aead" "$(peer_label), NTS-KE localhost:$ke"
        record "daemon reaches NTSAuthenticated=yes (timedatectl)" "yes, $aead"
}

# A reply used (it passed verification) after the NAK.
_reply_after_nak() {
        sed -n '/refused our cookie (NTSN)/,$p' "$TIMESYNCD_LOG" | grep_q "NTP reply from 127.0.0.1:$ntp\|NTP reply from \[::1\]:$ntp"
}

_timeout_after_restart() {
        tail -n "+$((lines_before + 1))" "$TIMESYNCD_LOG" | grep_q "Timed out waiting for reply from 127.0.0.1:$ntp\|Timed out waiting for reply from \[::1\]:$ntp"
}

# wait_fresh_reply: returns right after a new authenticated reply, when the next request is a
# whole poll interval (16 s) away: a restart of the server then falls between two requests.
wait_fresh_reply() {
        wait_log_count "NTP reply from .*:$ntp" "$(($(log_count "NTP reply from .*:$ntp") + 1))" 40
}

_since_restart() {
        tail -n "+$((lines_before + 1))" "$TIMESYNCD_LOG"
}

_reply_since_restart() {
        _since_restart | grep_q "NTP reply from 127.0.0.1:$ntp\|NTP reply from \[::1\]:$ntp"
}

# NTPsec makes a new cookie key every 24 h, checked hourly from an hour after its start (a
# compile-time constant, no setting), so a test cannot wait for it; it keeps the older keys (up
# to 10) in its cookie key file, the new one first. The test writes that file as a rotation
# would (a new random key before the one our cookies are sealed with) and restarts NTPsec on
# it: the cookies the daemon holds are still answered, with no new key exchange.
test_ntpsec_rotated_keys_still_open_our_cookies() {
        local keys length id key
        wait_log_count "NTS key exchange with localhost:$ke (.*) done" 1
        wait_fresh_reply
        peer_stop
        keys=$(peer_keys_file)
        length=$(sed -n 's/^L: //p' "$keys")
        if [ "$(grep -c '^I: ' "$keys")" != 1 ] || [ -z "$length" ]; then
                fail "not one key in $keys: $(cat "$keys")"
        fi
        id=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
        key=$(od -An -N"$length" -tx1 /dev/urandom | tr -d ' \n')
        {
                echo "T: $(date +%s)"
                echo "L: $length"
                echo "I: $id"
                echo "K: $key"
                sed -n '/^[IK]: /p' "$keys"
        } >"$keys.new"
        mv "$keys.new" "$keys"
        lines_before=$(wc -l <"$TIMESYNCD_LOG")
        peer_start
        grep -q "Read cookie file, 2 keys" "$rundir/ntpd.log" || fail "NTPsec did not load both keys: $(grep -i cookie "$rundir/ntpd.log")"
        wait_for 40 _reply_since_restart || fail "no authenticated reply with the cookies of the old key: $(_since_restart)"
        _since_restart | grep_q "NTS key exchange\|NTSN\|Timed out" &&
                fail "a key exchange, NAK or timeout after the rotation: $(_since_restart)"
        record "server key rotation, the old key kept" "our cookies of the old key still answered, no new key exchange"
}

# The server restarts with new keys while the daemon runs: our cookies are refused with an NTSN
# kiss, and a new key exchange follows, then authenticated replies again.
test_new_server_keys_lead_to_ntsn_and_new_key_exchange() {
        local since_reply jar timeouts
        wait_log_count "NTS key exchange with localhost:$ke (.*) done" 1
        wait_fresh_reply
        peer_stop
        rm -f "$(peer_keys_file)"
        lines_before=$(wc -l <"$TIMESYNCD_LOG")
        peer_start
        if [ "${peer%-*}" = ntpsec ]; then
                # NTPsec sends no NTS NAK for a cookie it cannot open: the request goes
                # unanswered, and the daemon spends every cookie of its jar, one per timeout,
                # then runs a new key exchange.
                wait_for 60 _timeout_after_restart || fail "no timeout after the server's new keys"
                wait_log_count "NTS key exchange with localhost:$ke (.*) done" 2 240
                wait_for 40 _reply_since_restart || fail "no authenticated reply after the new key exchange"
                _since_restart | grep_q "NTSN" && fail "an NTSN from NTPsec: $(_since_restart)"
                # Up to the new key exchange: no reply since the restart, and since the last
                # reply (which left the jar full), one timeout for each cookie of the jar.
                since_reply=$(awk -v restart="$lines_before" '
                        /Starting NTS key exchange/ && ++n == 2 { exit }
                        /cookies in the jar/ { jar = $0 }
                        /NTP reply from/ { seg = ""; if (NR > restart) late = 1; next }
                        { seg = seg $0 "\n" }
                        END { print (late ? "reply" : jar); printf "%s", seg }' "$TIMESYNCD_LOG")
                jar=$(head -n 1 <<<"$since_reply" | sed -n 's/.*verified: \([0-9]*\) cookies in the jar.*/\1/p')
                timeouts=$(grep -c "Timed out waiting for reply" <<<"$since_reply" || true)
                [ "$timeouts" = "${jar:-none}" ] ||
                        fail "$timeouts timeouts before the new key exchange, ${jar:-a reply or no} cookies in the jar: $(_since_restart)"
                stop_timesyncd
                record "new server keys" "no NTSN: the requests with the old cookies go unanswered; a new key exchange once all $jar are spent"
                return 0
        fi
        wait_log "NTS server localhost:$ke refused our cookie (NTSN), running a new key exchange" 60
        wait_log_count "NTS key exchange with localhost:$ke (.*) done" 2 20
        wait_for 20 _reply_after_nak || fail "no authenticated reply used after the new key exchange"
        log_has "Ignoring reply from .* that fails NTS verification" && fail "a reply failed verification"
        stop_timesyncd
        record "new server keys" "NTSN, then a new key exchange"
}

test_server_record_names_the_ntp_server() {
        peer_stop
        if [ "${peer%-*}" = ntpsec ]; then
                peer_start
                query_json --count=1
                expect_exit 0 "$out" "nts-query"
                json_check "$out.json" "[r for r in j['ke']['records'] if r['type'] == 6] == []"
                record "Server record" "none (no setting for it)"
                return 0
        fi
        peer_start --server-record
        query_json --count=1
        expect_exit 0 "$out" "nts-query with a Server record"
        json_check "$out.json" "j['ke']['ntp_server'] == 'localhost'" "j['ke']['ntp_port'] == $ntp" "j['verified'] == 1"
        record "Server record" "yes, followed"
}

# AEAD_AES_128_GCM_SIV (30) offered alone by nts-query with a libcrypto that has it: the
# servers that take it (chrony 4.6.1 and later) echo record 1024, so both sides derive the
# RFC's keys, and the exchanges verify; the others have no algorithm in common. For the servers
# that take it, the packets are measured against AEAD_AES_SIV_CMAC_256, their other algorithm.
test_aes_128_gcm_siv_offered_alone() {
        local value sizes="" s30 s15
        if [ -z "$gcm_tree" ]; then
                log "no trixie or forky tree (a libcrypto with AES-GCM-SIV): not checked"
                return 0
        fi
        # Our default offer there: 30 and record 1024 added, which a server without them skips.
        tree_query_json --count=2
        expect_exit 0 "$out" "our default offer with the tree's libcrypto"
        json_check "$out.json" "j['ke']['offered_aead'] == [17, 16, 30, 15]" "j['verified'] == 2"
        record "AEAD chosen from our offer with OpenSSL 3.5/3.6 (17, 16, 30, 15)" \
                "$(jq_ "j['ke']['aead']"), $(jq_ "j['ke']['aead_name']"), verified"

        tree_query_json --count=2 --aead=30
        case $QUERY_RC in
        0)
                json_check "$out.json" "j['ke']['aead'] == 30" "j['ke']['aead_name'] == 'AEAD_AES_128_GCM_SIV'" \
                        "j['verified'] == 2" "j['ke']['offered_aead'] == [30]"
                # Record 1024 in the answer: the keys of RFC 8915 section 5.1, with 30 in the context.
                json_check "$out.json" "[r for r in j['ke']['records'] if r['type'] == 1024 and r['length'] == 0] != []"
                value="accepted, record 1024 echoed, $(jq_ "len(j['ke']['cookie_sizes'])") cookies of $(jq_ "j['ke']['cookie_sizes'][0]") bytes, verified"
                s30=$(jq_ "'%d / %d' % (j['exchanges'][0]['request_size'], j['exchanges'][0]['reply_size'])")
                tree_query_json --count=2 --aead=15
                expect_exit 0 "$out" "--aead=15 with the tree's libcrypto"
                s15=$(jq_ "'%d / %d' % (j['exchanges'][0]['request_size'], j['exchanges'][0]['reply_size'])")
                sizes="30: $s30; 15: $s15"
                ;;
        "$QUERY_EXIT_KE")
                # How a server without it says no differs: an empty AEAD record (RFC 8915
                # section 4.1.5), an Error record, or an algorithm we did not offer.
                if [ "$(jq_ "[r for r in j['ke']['records'] if r['type'] == 2] != []")" = True ]; then
                        value="refused with an Error record: $(jq_ "j['ke']['error']" | sed 's/.*: server //')"
                elif [ "$(jq_ "'did not offer' in (j['ke']['error'] or '')")" = True ]; then
                        value="the server chose $(jq_ "j['ke']['error']" | sed 's/.*did not offer (\(.*\))$/\1/') anyway; refused as not offered"
                else
                        json_check "$out.json" "[r for r in j['ke']['records'] if r['type'] == 4 and r['length'] == 0] != []"
                        value="refused: no common algorithm (empty AEAD record)"
                fi
                ;;
        *) fail "--aead=30 with the tree's libcrypto: exit $QUERY_RC: $(cat "$out")" ;;
        esac
        record "offer of only 30 (AEAD_AES_128_GCM_SIV), with OpenSSL 3.5/3.6" "$value"
        [ -z "$sizes" ] || record "NTP request / reply bytes (one cookie back), 30 against 15" "$sizes"
}

# chronyd with ntsaeads 30, the one algorithm it allows: with the tree's libcrypto our default
# offer gets 30 and verified time; the host's OpenSSL 3.0 offers no 30, so the host's
# nts-query finds no algorithm in common (and against chronyd's default it gets 15,
# test_key_exchange_with_our_default_offer).
test_chrony_with_ntsaeads_30() {
        if [ -z "$gcm_tree" ]; then
                log "no trixie or forky tree (a libcrypto with AES-GCM-SIV): not checked"
                return 0
        fi
        peer_stop
        start_chrony_nts_server "$rundir" "$CERTDIR" "$ntp" "$ke" "ntsaeads 30"
        tree_query_json --count=2
        expect_exit 0 "$out" "our default offer with the tree's libcrypto against ntsaeads 30"
        json_check "$out.json" "j['ke']['offered_aead'] == [17, 16, 30, 15]" "j['ke']['aead'] == 30" \
                "j['verified'] == 2"
        query_json --count=1
        expect_exit "$QUERY_EXIT_KE" "$out" "the host's nts-query (OpenSSL 3.0) against ntsaeads 30"
        json_check "$out.json" "j['ke']['offered_aead'] == [17, 16, 15]"
        record "chronyd with ntsaeads 30" "with OpenSSL 3.5/3.6 our default offer gets 30, verified; with the host's 3.0 no algorithm in common"
        peer_stop
        peer_start
}

peer_start
case_ test_key_exchange_with_our_default_offer
case_ test_each_aead_offered_alone
case_ test_daemon_is_nts_authenticated_on_dbus
[ "${peer%-*}" != ntpsec ] || case_ test_ntpsec_rotated_keys_still_open_our_cookies
case_ test_new_server_keys_lead_to_ntsn_and_new_key_exchange
case_ test_server_record_names_the_ntp_server
case_ test_aes_128_gcm_siv_offered_alone
case "$peer" in
chrony-trixie | chrony-forky) case_ test_chrony_with_ntsaeads_30 ;;
esac
mv "$records.tmp" "$records"
