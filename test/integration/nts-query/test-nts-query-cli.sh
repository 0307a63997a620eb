#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nts-query without an NTS server: --help and --version, usage errors, and the exit codes of a
# name that does not resolve, a port nobody listens on and a server that never speaks TLS.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=nts-query.sh
. "$(dirname "$0")/../../lib/nts-query.sh"

test_init
out="$TEST_TMPDIR/out"

test_help_and_version_exit_zero() {
        nts_query "$out" --help
        expect_exit 0 "$out" "--help"
        expect_output "$out" 'HOST\[:KEPORT\]' "synopsis"
        expect_output "$out" '7 no verified' "the exit codes"
        expect_output "$out" 'srv:NAME' "the SRV synopsis"
        expect_output "$out" '8 SRV records not DNSSEC-authenticated' "the SRV exit code"
        nts_query "$out" --version
        expect_exit 0 "$out" "--version"
        expect_output "$out" '^nts-query \(timesyncd-nts\) [0-9]' "version line"
}

test_usage_errors_exit_2() {
        local args
        for args in "" "a b" "--count=0 a" "--count=65 a" "--count=x a" "--timeout=0 a" \
                    "--timeout=soon a" "--aead=99 a" "--aead=bogus a" "--aead=15,15 a" "--aead=, a" \
                    "a:0" "a:65536" "a:x" "[::1 a" "[]:4460" ":4460" "--plain=a:0 a" \
                    "--ca=$TEST_TMPDIR/missing a" "--no-such-option a" \
                    "srv:" "srv:a:4460" "srv:a_b" "srv:-a" "--sources=0 a" "--sources=17 a" "--sources=x a" \
                    "--plain --sources=2 a" "--plain srv:a"; do
                # shellcheck disable=SC2086 # one word per argument
                nts_query "$out" $args
                expect_exit "$QUERY_EXIT_USAGE" "$out" "nts-query $args"
        done
        nts_query "$out" --aead=bogus a
        expect_output "$out" "Unknown AEAD algorithm 'bogus'" "the --aead= message"
        nts_query "$out" srv:a:4460
        expect_output "$out" "srv:NAME takes a DNS name without port \(the SRV records give the ports\)" \
                "the srv: message"
        nts_query "$out" --plain --sources=2 a
        expect_output "$out" "--plain works with one server only" "the --plain message"
}

# docs/NTS.md, "AEAD algorithms": AEAD_AES_256_GCM_SIV is never offered, also not on request;
# the refusal names the algorithm and says why.
test_aead_256_gcm_siv_is_refused_by_name_and_number() {
        local a
        for a in 31 aead-aes-256-gcm-siv 15,31; do
                nts_query "$out" --aead="$a" localhost
                expect_exit "$QUERY_EXIT_USAGE" "$out" "nts-query --aead=$a"
                expect_output "$out" 'AEAD_AES_256_GCM_SIV \(31\) is never offered: no NTS server offers it' \
                        "the --aead=$a message"
        done
}

# AEAD_AES_128_GCM_SIV may be offered, by name or number, whatever libcrypto has (as the other
# algorithms): the query goes on to the key exchange, here with a port where nothing listens.
test_aead_128_gcm_siv_is_accepted_by_name_and_number() {
        local a port
        port=$(free_port)
        for a in 30 AES_128_GCM_SIV aead-aes-128-gcm-siv 30,15; do
                nts_query_json "$out" --aead="$a" "127.0.0.1:$port"
                expect_exit "$QUERY_EXIT_CONNECT" "$out" "nts-query --aead=$a"
                json_check "$out.json" "j['ke']['offered_aead'][0] == 30"
        done
}

# Inside an empty network namespace: the lookup cannot leave the machine.
test_unresolvable_name_is_a_resolve_failure() {
        netns_create
        QUERY_NETNS=$NETNS nts_query_json "$out" --timeout=2 does-not-exist.invalid
        expect_exit "$QUERY_EXIT_RESOLVE" "$out" "a name nobody knows"
        expect_output "$out" 'Cannot resolve does-not-exist\.invalid' "the message"
        json_check "$out.json" "${JSON_STABLE_KEYS[@]}" \
                "j['exit_code'] == $QUERY_EXIT_RESOLVE and j['status'] == 'resolve'" \
                "j['ke']['ok'] is False and j['exchanges'] == [] and j['verified'] == 0"
}

test_dead_port_is_a_connect_failure() {
        local port
        port=$(free_port)
        nts_query_json "$out" "127.0.0.1:$port"
        expect_exit "$QUERY_EXIT_CONNECT" "$out" "nothing listens on $port"
        json_check "$out.json" "${JSON_STABLE_KEYS[@]}" \
                "j['status'] == 'connect' and j['ke']['stage'] == 'connect'" \
                "j['ke']['address'] == '127.0.0.1:$port'"
}

# The connection works, the handshake never comes: a timeout in the TLS step is a TLS failure.
test_server_silent_after_connect_is_a_tls_failure() {
        local port
        port=$(free_port)
        /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("listening", flush=True)
c, _ = s.accept()
time.sleep(30)
' "$port" >"$TEST_TMPDIR/silent.log" 2>&1 &
        wait_for 5 grep -q listening "$TEST_TMPDIR/silent.log" || fail "the silent server did not start"
        nts_query "$out" --timeout=1 "127.0.0.1:$port"
        expect_exit "$QUERY_EXIT_TLS" "$out" "a server that never answers the ClientHello"
        expect_output "$out" 'timed out in the TLS handshake' "the reason"
}

run_case test_help_and_version_exit_zero
run_case test_usage_errors_exit_2
run_case test_aead_256_gcm_siv_is_refused_by_name_and_number
run_case test_aead_128_gcm_siv_is_accepted_by_name_and_number
run_case test_unresolvable_name_is_a_resolve_failure
run_case test_dead_port_is_a_connect_failure
run_case test_server_silent_after_connect_is_a_tls_failure
