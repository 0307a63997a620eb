#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# NTSBootstrap= with several NTS servers (docs/NTS.md, "Bootstrap from several sources"): time
# from bootstrap keys moves the clock only when a majority of every source in use agrees on it,
# with two different key-exchange names among them; with that agreement a clock far ahead (every
# certificate looks expired) is set back too, which one server can never do. The daemon runs in
# observe mode with the fake clock of --test-clock-offset=; chronyd servers tell a time of their
# own through true-time.so; no clock is touched.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs --bus
chmod 0755 "$CERTDIR"
chmod 0644 "$CERTDIR"/*.pem

DAY=86400
YEAR=$((365 * DAY))

n_servers=0
# start_server CHAIN AHEAD: one more chronyd with CERTDIR/CHAIN whose clock is AHEAD seconds
# ahead of the system's. Sets ke.
start_server() {
        local dir
        n_servers=$((n_servers + 1))
        dir=$TEST_TMPDIR/srv-$n_servers
        mkdir -p "$dir"
        cp "$CERTDIR/$1" "$dir/server-chain.pem"
        cp "$CERTDIR/server.key" "$dir/server.key"
        CERTDIR=$dir start_chrony_at "$n_servers" $(($2 * 1000000000))
        ke=$CHRONY_KE
}

# start_client OFFSET CLOCK_FILE_MTIME NTS-NAME...: the daemon with the fake clock OFFSET seconds
# off, a fresh state directory whose clock file has that mtime ("none": no file), NTS= NAMES.
start_client() {
        local offset=$1 mtime=$2
        shift 2
        start_fresh_timesyncd "$offset" "$mtime" "$*" "ConnectionRetrySec=1" -- --test-poll-interval=1s
}

# assert_refused REASON: the sources agreed, the bootstrap was refused for REASON, once, and the
# clock did not move.
assert_refused() {
        wait_log "NTS sources agree, but not enough for a bootstrap ($1); clock left alone" 30
        sleep 2
        log_has "Test clock: stepped" && fail "the clock was stepped"
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        [ "$(log_count "not enough for a bootstrap")" = 1 ] || fail "the refusal was logged more than once"
}

# assert_bootstrapped NAME... DIRECTION: the clock took the agreed time in one step that way,
# and every source then ran a key exchange with every check and verifies replies with it.
assert_bootstrapped() {
        local direction=$1 name
        shift
        wait_log "Bootstrap: the clock took the time that 2 NTS sources agree on" 30
        log_has "Test clock: stepped by $direction" || fail "the clock was not stepped $direction"
        [ "$(log_count "Test clock: stepped")" = 1 ] || fail "the clock was stepped more than once"
        for name; do
                wait_log "Bootstrap: the clock took the time of $name; repeating the key exchange" 10
                wait_log_count "NTS key exchange with $name .* done" 2 30
        done
        wait_log "Initial clock synchronization to .*NTS authenticated, 2 of 2 NTS sources agree" 10
        grep -E "bootstrapping|Bootstrap|Test clock: stepped|agree" "$TIMESYNCD_LOG" | head -n 20
        log_has "Refusing bootstrap time" && fail "bootstrap time refused"
        true
}

# A clock years behind, advanced by the daemon to its floor; two servers a day ahead whose
# certificates were issued after the floor, one named localhost, the other 127.0.0.1.
test_bootstrap_from_the_floor_needs_two_key_exchange_names() {
        local a b
        make_test_cert fresh 3600 $((30 * DAY))
        start_server fresh-chain.pem "$DAY"
        a=$ke
        start_server fresh-chain.pem "$DAY"
        b=$ke
        start_client $((-2 * YEAR)) $(($(date +%s) - 600)) "localhost:$a" "127.0.0.1:$b"
        wait_log "System clock is behind the last recorded time, advancing it to"
        wait_log "The certificate of localhost:$a is not yet valid by our clock, which is not synchronized and behind"
        wait_log "The certificate of 127.0.0.1:$b is not yet valid by our clock, which is not synchronized and behind"
        assert_bootstrapped + "localhost:$a" "127.0.0.1:$b"

        # Two entries with one key-exchange name are one operator as far as anyone can tell.
        start_client $((-2 * YEAR)) $(($(date +%s) - 600)) "localhost:$a" "localhost:$b"
        assert_refused "it needs the agreement of two sources with different key-exchange names"
}

# The second server is down: the one that answers is not a majority of the sources in use.
test_bootstrap_needs_a_majority_of_the_sources_in_use() {
        local a dead
        make_test_cert alone 3600 $((30 * DAY))
        start_server alone-chain.pem "$DAY"
        a=$ke
        dead=$(free_port)
        start_client $((-2 * YEAR)) $(($(date +%s) - 600)) "localhost:$a" "127.0.0.1:$dead"
        wait_log "Only 1 of 2 NTS sources agree, 2 needed (1 does not answer); clock left alone\." 30
        sleep 2
        log_has "Test clock: stepped" && fail "the clock was stepped"
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        true
}

# A clock a year ahead (an RTC set wrong, a clock file from the future): every certificate
# looks expired. Two servers with true time set it back; one cannot.
test_clock_far_ahead_is_set_back_by_two_agreeing_sources_only() {
        local a b
        make_test_cert now $((-DAY)) $((30 * DAY))
        start_server now-chain.pem 0
        a=$ke
        start_server now-chain.pem 0
        b=$ke
        start_client "$YEAR" none "localhost:$a" "127.0.0.1:$b"
        wait_log "The certificate of localhost:$a has expired by our clock, which is not synchronized and may be ahead (the agreement of several NTS sources decides"
        assert_bootstrapped - "localhost:$a" "127.0.0.1:$b"

        # One server: as before, no way out.
        start_client "$YEAR" none "localhost:$a"
        wait_log "NTS key exchange with localhost:$a failed: .*certificate has expired: valid until [0-9-]* [0-9:]* UTC\. Trying again" 20
        sleep 2
        log_has "bootstrapping" && fail "one server bootstrapped an expired certificate"
        log_has "Bootstrap with" && fail "the refusal was said for one server"
        log_has "Initial clock synchronization" && fail "synchronized with an expired certificate"
        true
}

# _nts_status_like A B C: NTSStatus is A, anything, B, anything, C.
_nts_status_like() { [[ "$(timesync_property NTSStatus)" == "$1"*"$2"*"$3" ]]; }

# A clock that is right but not synchronized yet, two servers with good certificates and one
# whose certificate expired in 2021: the others answer with keys our clock found valid, so
# that certificate is just expired. Each failure is the key exchange's line with the expiry
# date, also the ones after the others answered; no bootstrap is tried (no long notice, no
# exchange without the date checks, no refused time), and NTSStatus names the failing server
# while the two others steer.
test_expired_certificate_beside_answering_sources_is_one_short_line() {
        local a b c n failed
        make_test_cert good $((-DAY)) $((30 * DAY))
        start_server good-chain.pem 0
        a=$ke
        start_server good-chain.pem 0
        b=$ke
        start_server expired-chain.pem 0
        c=$ke
        start_client 0 none "localhost:$a" "127.0.0.1:$b" "localhost:$c"
        failed="NTS key exchange with localhost:$c failed: .*certificate has expired: valid until 2021-[0-9-]* [0-9:]* UTC\. Trying again in [^ ]* at the earliest\.$"
        wait_log "Initial clock synchronization to .*NTS authenticated, 2 of 3 NTS sources agree" 30
        # The first failure came while the others had not answered yet; the next one after.
        n=$(log_count "$failed")
        [ "$n" -ge 1 ] || wait_log_count "$failed" 1 30
        wait_log_count "$failed" 2 60
        grep "localhost:$c" "$TIMESYNCD_LOG" | grep -v "^\(NTP\|NTS\) reply\|^Starting NTS key exchange"
        log_has "bootstrapping" && fail "the expired certificate was bootstrapped"
        log_has "Refusing bootstrap time" && fail "bootstrap time was refused: the bootstrap was tried"
        log_has "Bootstrap with" && fail "a bootstrap refusal was said"
        log_has "NTS key exchange with localhost:$c .* done" && fail "a key exchange with the expired certificate was done"
        log_has "Test clock: stepped" && fail "the clock was stepped"
        wait_for 10 _nts_status_like "1 of 3 NTS servers failing: localhost:$c (" \
                "certificate has expired: valid until 2021-" ")" ||
                fail "NTSStatus is '$(timesync_property NTSStatus)'"
}

run_case test_expired_certificate_beside_answering_sources_is_one_short_line
run_case test_bootstrap_from_the_floor_needs_two_key_exchange_names
run_case test_bootstrap_needs_a_majority_of_the_sources_in_use
run_case test_clock_far_ahead_is_set_back_by_two_agreeing_sources_only
