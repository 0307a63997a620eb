#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# chronyd as NTS client of the mock server, in query mode (-Q: measures, never sets the clock;
# also without CAP_SYS_TIME): honest, it gets authenticated samples; with bad-auth, none.
# chronyd comes from $CHRONYD, the peers tree ($TSNTS_PEERS_DIR, default as in test/lib/common.sh;
# made by test/tools/fixtures/fetch-peers.sh) or PATH; without it the test is skipped.
set -euo pipefail

server=${1:?usage: $0 NTS-MOCK-SERVER MAKE-CERTS}
make_certs=${2:?}
peers_dir=${TSNTS_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/timesyncd-nts/peers}
peers_chronyd=$peers_dir/root/usr/sbin/chronyd
[ -x "$peers_chronyd" ] || peers_chronyd=
chronyd=${CHRONYD:-${peers_chronyd:-$(command -v chronyd || :)}}
[ -x "$chronyd" ] || { echo "chronyd not found (set CHRONYD=)"; exit 77; }

. "$(dirname "$0")/../../lib/mock-selftest.sh"

# run_chronyd SABOTAGE SECONDS: output of chronyd -Q against a fresh mock server.
run_chronyd() {
        mock_start --sabotage="$1"
        # chronyd keeps cookies in ntsdumpdir: a fresh one per run, so each run starts with KE.
        rm -rf "$dir/dump"
        mkdir -m 0700 "$dir/dump"
        cat > "$dir/chrony.conf" <<CONF
server 127.0.0.1 port $ntp_port nts ntsport $ke_port iburst maxsamples 2
ntstrustedcerts $dir/certs/ca.pem
nosystemcert
ntsdumpdir $dir/dump
cmdport 0
pidfile $dir/chronyd.pid
CONF
        setpriv --bounding-set=-sys_time --inh-caps=-sys_time \
                "$chronyd" -Q -x -u root -f "$dir/chrony.conf" -t "$2" -L 0 2>&1 || :
        mock_stop
}

out=$(run_chronyd none 20)
grep -q 'System clock wrong by' <<< "$out" || fail "chronyd got no authenticated sample: $out"
grep -q '^ke_sessions=1$' "$dir/counts" || fail "expected one KE session: $(cat "$dir/counts")"
grep -q '^ntp_requests=[1-9]' "$dir/counts" || fail "no NTP request answered: $(cat "$dir/counts")"

out=$(run_chronyd bad-auth 5)
grep -q 'System clock wrong by' <<< "$out" && fail "chronyd accepted a bad authenticator: $out"
grep -q '^ntp_requests=[1-9]' "$dir/counts" || fail "no NTP request answered: $(cat "$dir/counts")"

echo "ok"
