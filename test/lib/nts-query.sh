# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Helpers of the nts-query tests. The tool comes from meson ($TSNTS_NTS_QUERY); by hand it
# defaults to the build tree.
[ -n "${_TSNTS_NTS_QUERY_SH:-}" ] && return 0
_TSNTS_NTS_QUERY_SH=1
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

export TSNTS_NTS_QUERY=${TSNTS_NTS_QUERY:-$TSNTS_BUILD_DIR/tools/nts-query}
[ -x "$TSNTS_NTS_QUERY" ] || fail "nts-query not built: $TSNTS_NTS_QUERY"

# Exit codes of nts-query(1).
export QUERY_EXIT_USAGE=2 QUERY_EXIT_RESOLVE=3 QUERY_EXIT_CONNECT=4 QUERY_EXIT_TLS=5 QUERY_EXIT_KE=6 QUERY_EXIT_NTP=7 QUERY_EXIT_DNSSEC=8
export QUERY_EXIT_DISAGREE=9

# With QUERY_NETNS set, nts-query runs inside that network namespace.
_query_prefix() {
        if [ -n "${QUERY_NETNS:-}" ]; then
                echo ip netns exec "$QUERY_NETNS"
        fi
}

# nts_query OUT ARG...: runs nts-query (never with CAP_SYS_TIME, like any other client here)
# with stdout and stderr in OUT, and sets QUERY_RC. Never fails itself.
nts_query() {
        local out=$1
        shift
        QUERY_RC=0
        # shellcheck disable=SC2046 # the prefix is words
        $(_query_prefix) "${NOSYSTIME[@]}" "$TSNTS_NTS_QUERY" "$@" >"$out" 2>"$out.err" || QUERY_RC=$?
        cat "$out.err" >>"$out"
}

# expect_exit WANT OUT WHAT: fails unless the last nts_query exited with WANT.
expect_exit() {
        [ "$QUERY_RC" = "$1" ] || fail "$3: exit code $QUERY_RC, expected $1; output:
$(cat "$2")"
}

# expect_output OUT REGEX WHAT
expect_output() {
        grep -Eq -- "$2" "$1" || fail "$3: output lacks /$2/:
$(cat "$1")"
}

# json_check FILE PYTHON-EXPRESSION...: every expression over the parsed object `j` is true.
# FILE holds stdout only (nts_query's OUT without the appended stderr: OUT.json).
json_check() {
        local file=$1
        shift
        /usr/bin/python3 - "$file" "$@" <<'PY' || fail "JSON check failed on $file: $(cat "$file")"
import json, sys
with open(sys.argv[1]) as f:
    j = json.load(f)
for expr in sys.argv[2:]:
    if not eval(expr, {"j": j}):
        print("false: " + expr, file=sys.stderr)
        sys.exit(1)
PY
}

# nts_query_json OUT ARG...: like nts_query with --json; stdout alone also lands in OUT.json.
nts_query_json() {
        local out=$1
        shift
        QUERY_RC=0
        # shellcheck disable=SC2046 # the prefix is words
        $(_query_prefix) "${NOSYSTIME[@]}" "$TSNTS_NTS_QUERY" --json "$@" >"$out.json" 2>"$out.err" || QUERY_RC=$?
        cat "$out.json" "$out.err" >"$out"
}

# The keys a monitoring system may rely on: present in every JSON answer, success or not.
# shellcheck disable=SC2034 # for the tests that source this file
JSON_STABLE_KEYS=(
        "set(j) >= {'host', 'port', 'exit_code', 'status', 'error', 'verified', 'ke', 'exchanges', 'plain'}"
        "set(j['ke']) >= {'ok', 'stage', 'error', 'address', 'tls', 'offered_aead', 'aead', 'aead_name', 'cookie_sizes', 'ntp_server', 'ntp_port', 'ntp_address', 'records', 'errors', 'warnings'}"
        "set(j['ke']['tls']) >= {'handshake', 'version', 'cipher', 'certificate', 'subject', 'issuer', 'sans', 'not_before', 'not_after', 'verification'}"
        "all(set(x) >= {'authenticated', 'verified', 'error', 'offset', 'delay', 'stratum', 'refid', 'leap', 'root_distance', 'kiss', 'new_cookies'} for x in j['exchanges'])"
)

# save_output NAME FILE: keeps FILE as build/test/integration/nts-query/NAME.txt (for the docs) and prints
# it into the test log.
save_output() {
        local dir="$TSNTS_BUILD_DIR/test/integration/nts-query"
        mkdir -p "$dir"
        # Certificate paths differ per run; the rest is what a user sees.
        sed "s|$TEST_TMPDIR|TMPDIR|g" "$2" >"$dir/$1.txt"
        log "nts-query output ($1), also in $dir/$1.txt:"
        cat "$dir/$1.txt" >&2
}
