#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# timesync-sources, the sources of a running daemon as `chronyc sources` and `chronyc -N
# authdata` show chronyd's: four chronyd NTS servers, one an hour off, and the tool run as an
# unprivileged user (nobody) on a bus whose policy is the system bus's default (method calls
# denied unless a policy allows them) plus the daemon's shipped one
# (units/org.freedesktop.timesync1.conf): the table and --json show every source, the selected
# one, the falseticker and the NTS state.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs
TIMESYNC_SOURCES=$TSNTS_BUILD_DIR/tools/timesync-sources
[ -x "$TIMESYNC_SOURCES" ] || fail "$TIMESYNC_SOURCES not built"
id nobody >/dev/null 2>&1 || missing_prerequisite "no user nobody"

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# The system bus's default policy and the shipped one of the daemon.
start_system_bus --policy "$TSNTS_SRC_DIR/units/org.freedesktop.timesync1.conf"
declare -A KE
names=()
for spec in liar:3600000000000 a:0 b:0 c:0; do
        start_chrony_at "${spec%%:*}" "${spec#*:}"
        KE[${spec%%:*}]=$CHRONY_KE
        names+=("localhost:$CHRONY_KE")
done
write_nts_conf "$TEST_TMPDIR/ts.conf" "${names[*]}"
start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
wait_log "Initial clock synchronization to .*3 of 4 NTS sources agree" 30
wait_log "is a falseticker" 10
# The bus name is taken once the daemon answers on it.
wait_for 10 as_nobody "$TIMESYNC_SOURCES" >/dev/null 2>&1 || fail "timesync-sources as nobody fails: $(as_nobody "$TIMESYNC_SOURCES" 2>&1)"

test_table_shows_every_source_and_their_verdicts() {
        local out=$TEST_TMPDIR/table.txt
        as_nobody "$TIMESYNC_SOURCES" >"$out"
        echo "---- transcript: timesync-sources (as nobody) ----"
        cat "$out"
        echo "---- end of transcript ----"
        grep -Eq "^S Name +Address +State +St +Poll +Last +Offset +Root dist\.$" "$out" || fail "no header"
        grep -Eq "^x localhost:${KE[liar]} +127\.0\.0\.1:[0-9]+ +[a-z-]+ +1 +1s +[0-9]+s +\+3600\.[0-9]{6}s +0\.[0-9]{6}s$" "$out" ||
                fail "the liar is not shown as a falseticker an hour off"
        [ "$(grep -c '^\* localhost:' "$out")" = 1 ] || fail "not one selected source"
        [ "$(grep -Ec '^[*+] localhost:' "$out")" = 3 ] || fail "not three agreeing sources"
        grep -Eq "^NTS source +Key exchange +AEAD +Cookies +KE fails +Last KE +Last error$" "$out" || fail "no NTS table"
        [ "$(grep -Ec "^localhost:[0-9]+ +localhost:[0-9]+ +AEAD_AES_SIV_CMAC_256 +[1-8] +0 +[0-9]+s" "$out")" = 4 ] ||
                fail "the NTS table does not show four keyed sources"
}

test_json_has_every_key_of_the_property() {
        local out=$TEST_TMPDIR/sources.json
        as_nobody "$TIMESYNC_SOURCES" --json >"$out"
        cat "$out"
        /usr/bin/python3 - "$out" "${KE[liar]}" <<'PY' || fail "the JSON does not say what the daemon knows"
import json, sys
sources = json.load(open(sys.argv[1]))
assert len(sources) == 4, sources
by_name = {s["Name"]: s for s in sources}
liar = by_name["localhost:" + sys.argv[2]]
assert liar["Verdict"] == "falseticker", liar
assert abs(liar["OffsetNSec"] - 3600e9) < 1e9, liar
assert [s["Verdict"] for s in sources].count("selected") == 1
for s in sources:
    assert s["NTS"] is True and s["Origin"] == "nts", s
    assert s["AEAD"] == "AEAD_AES_SIV_CMAC_256" and 1 <= s["Cookies"] <= 8, s
    for key in ("State", "Address", "KeyExchangeServer", "LastKeyExchangeTimestamp", "DelayNSec",
                "RootDistanceNSec", "PollIntervalUSec", "Failures", "KeyExchangeFailures", "LastError"):
        assert key in s, (key, s)
PY
}

test_reading_needs_no_privileges_but_the_policy_holds() {
        # nobody may read, but not own the name or set servers.
        as_nobody busctl --system get-property org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager ServerName >/dev/null || fail "nobody cannot read a property"
        if as_nobody busctl --system call org.freedesktop.timesync1 /org/freedesktop/timesync1 \
                org.freedesktop.timesync1.Manager SetRuntimeNTSServers as 0 2>/dev/null; then
                fail "nobody could set runtime NTS servers"
        fi
}

test_no_daemon_is_a_clear_error() {
        local out rc=0
        stop_timesyncd
        out=$(as_nobody "$TIMESYNC_SOURCES" 2>&1) || rc=$?
        [ "$rc" = 1 ] || fail "exit status $rc without a daemon"
        grep -q "Failed to read the time sources of systemd-timesyncd: " <<<"$out" || fail "no clear error: $out"
}

run_case test_table_shows_every_source_and_their_verdicts
run_case test_json_has_every_key_of_the_property
run_case test_reading_needs_no_privileges_but_the_policy_holds
run_case test_no_daemon_is_a_clear_error
