# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash disable=SC2154 # $server and $make_certs come from the script that sources this
# Sourced by the shell tests of the mock server. Expects $server (nts-mock-server) and
# $make_certs (test/tools/fixtures/make-certs.sh). Gives: $dir (private temporary directory with the
# test PKI in $dir/certs, removed on exit), fail MESSAGE, mock_start [ARGS...] (sets $pid,
# $ke_port, $ntp_port once READY; stdout/stderr in $dir/out and $dir/err, counts in
# $dir/counts), mock_stop (SIGTERM, requires a clean exit).

dir=$(mktemp -d)
chmod 0700 "$dir"
pid=
mock_cleanup() {
        if [ -n "$pid" ]; then
                kill "$pid" 2>/dev/null || :
        fi
        rm -rf "$dir"
}
trap mock_cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$make_certs" "$dir/certs"

mock_start() {
        : > "$dir/out"
        : > "$dir/err"
        "$server" --cert="$dir/certs/server-chain.pem" --key="$dir/certs/server.key" \
                --ke-port=0 --ntp-listen-port=0 --count-file="$dir/counts" "$@" \
                > "$dir/out" 2> "$dir/err" &
        pid=$!
        for _ in $(seq 100); do
                grep -q '^READY ' "$dir/out" && break
                kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$dir/err")"
                sleep 0.1
        done
        # shellcheck disable=SC2034 # ke_port and ntp_port are for the script that sources this
        read -r ke_port ntp_port < <(sed -n 's/^READY ke-port=\([0-9]*\) ntp-port=\([0-9]*\)$/\1 \2/p' "$dir/out") \
                || fail "no READY line: $(cat "$dir/out") $(cat "$dir/err")"
}

mock_stop() {
        kill -TERM "$pid"
        wait "$pid" || fail "server did not exit cleanly on SIGTERM: $(cat "$dir/err")"
        pid=
}
