#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The mock NTS server seen by openssl s_client: READY on stdout, TLS 1.3 only, ALPN ntske/1
# selected, a KE request answered (Next Protocol record first, counted in the count file),
# sabotage no-alpn switched off by SIGUSR1, clean exit on SIGTERM.
set -euo pipefail

server=${1:?usage: $0 NTS-MOCK-SERVER MAKE-CERTS}
make_certs=${2:?}
. "$(dirname "$0")/../../lib/mock-selftest.sh"

s_client() {
        openssl s_client -connect "127.0.0.1:$ke_port" -servername localhost -CAfile "$dir/certs/ca.pem" \
                -verify_return_error "$@" < /dev/null 2>&1 || :
}

# A KE request: Next Protocol NTPv4, AEAD AES-SIV-CMAC-256, End of Message (all critical).
request='\x80\x01\x00\x02\x00\x00\x80\x04\x00\x02\x00\x0f\x80\x00\x00\x00'

mock_start
out=$(s_client -alpn ntske/1 -tls1_3)
grep -q '^ALPN protocol: ntske/1$' <<< "$out" || fail "ntske/1 not selected: $out"
grep -q '^New, TLSv1.3, ' <<< "$out" || fail "not TLS 1.3: $out"
grep -q 'Verify return code: 0 (ok)' <<< "$out" || fail "certificate not verified: $out"

out=$(s_client -alpn ntske/1 -tls1_2)
grep -q '^ALPN protocol: ntske/1$' <<< "$out" && fail "TLS 1.2 handshake succeeded: $out"

# shellcheck disable=SC2059 # the request's bytes are written as escapes of the format
printf "$request" | openssl s_client -connect "127.0.0.1:$ke_port" -servername localhost -alpn ntske/1 \
        -tls1_3 -CAfile "$dir/certs/ca.pem" -verify_return_error -quiet -ign_eof \
        > "$dir/response" 2> "$dir/s_client.err" || fail "KE exchange failed: $(cat "$dir/s_client.err")"
head -c 6 "$dir/response" | od -An -tx1 | tr -d ' \n' | grep -qx '800100020000' \
        || fail "response does not start with Next Protocol NTPv4: $(od -An -tx1 "$dir/response" | head -3)"
grep -q '^ke_sessions=1$' "$dir/counts" || fail "KE session not counted: $(cat "$dir/counts")"
mock_stop

mock_start --sabotage=no-alpn
out=$(s_client -alpn ntske/1 -tls1_3)
grep -q '^No ALPN negotiated$' <<< "$out" || fail "no-alpn sabotage still negotiated ALPN: $out"
kill -USR1 "$pid"
for _ in $(seq 100); do
        grep -q 'SIGUSR1: sabotage no-alpn off' "$dir/err" && break
        sleep 0.1
done
out=$(s_client -alpn ntske/1 -tls1_3)
grep -q '^ALPN protocol: ntske/1$' <<< "$out" || fail "SIGUSR1 did not switch the sabotage off: $out"
mock_stop

echo "ok"
