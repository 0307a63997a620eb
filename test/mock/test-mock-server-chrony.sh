#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# chronyd as NTS client of the mock server, in query mode (-Q: measures, never sets the clock;
# also without CAP_SYS_TIME): honest, it gets authenticated samples; with bad-auth, none.
# chronyd comes from $CHRONYD or PATH; without it the test is skipped.
set -euo pipefail

server=${1:?usage: $0 NTS-MOCK-SERVER MAKE-CERTS}
make_certs=${2:?}
chronyd=${CHRONYD:-$(command -v chronyd || :)}
[ -x "$chronyd" ] || { echo "chronyd not found (set CHRONYD=)"; exit 77; }

dir=$(mktemp -d)
chmod 0700 "$dir"
pid=
cleanup() {
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || :
        rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$make_certs" "$dir/certs"

# run_chronyd SABOTAGE SECONDS: output of chronyd -Q against a fresh mock server.
run_chronyd() {
        : > "$dir/out"
        "$server" --cert="$dir/certs/server-chain.pem" --key="$dir/certs/server.key" --ke-port=0 \
                --ntp-listen-port=0 --count-file="$dir/counts" --sabotage="$1" > "$dir/out" 2> "$dir/err" &
        pid=$!
        for _ in $(seq 100); do
                grep -q '^READY ' "$dir/out" && break
                sleep 0.1
        done
        read -r ke ntp < <(sed -n 's/^READY ke-port=\([0-9]*\) ntp-port=\([0-9]*\)$/\1 \2/p' "$dir/out")
        [ -n "$ntp" ] || fail "no READY line: $(cat "$dir/err")"
        # chronyd keeps cookies in ntsdumpdir: a fresh one per run, so each run starts with KE.
        rm -rf "$dir/dump"
        mkdir -m 0700 "$dir/dump"
        cat > "$dir/chrony.conf" <<CONF
server 127.0.0.1 port $ntp nts ntsport $ke iburst maxsamples 2
ntstrustedcerts $dir/certs/ca.pem
nosystemcert
ntsdumpdir $dir/dump
cmdport 0
pidfile $dir/chronyd.pid
CONF
        setpriv --bounding-set=-sys_time --inh-caps=-sys_time \
                "$chronyd" -Q -x -u root -f "$dir/chrony.conf" -t "$2" -L 0 2>&1 || :
        kill -TERM "$pid"
        wait "$pid" || fail "mock server did not exit cleanly"
        pid=
}

out=$(run_chronyd none 20)
grep -q 'System clock wrong by' <<< "$out" || fail "chronyd got no authenticated sample: $out"
grep -q '^ke_sessions=1$' "$dir/counts" || fail "expected one KE session: $(cat "$dir/counts")"
grep -q '^ntp_requests=[1-9]' "$dir/counts" || fail "no NTP request answered: $(cat "$dir/counts")"

out=$(run_chronyd bad-auth 5)
grep -q 'System clock wrong by' <<< "$out" && fail "chronyd accepted a bad authenticator: $out"
grep -q '^ntp_requests=[1-9]' "$dir/counts" || fail "no NTP request answered: $(cat "$dir/counts")"

echo "ok"
