#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# timesync-sources, the sources of a running daemon as `chronyc sources` and `chronyc -N
# authdata` show chronyd's: four chronyd NTS servers, one an hour off, and the tool run as an
# unprivileged user (nobody) on a bus whose policy is the system bus's default (method calls
# denied unless a policy allows them) plus the daemon's shipped one
# (units/org.freedesktop.timesync1.conf): the table and --json show every source, the selected
# one, the falseticker, the NTS state and the authentication; --openmetrics parses and says
# what --json says; --check and --wait give the documented exit status for NTS, plain NTP, a
# failing source and no daemon; a key exchange the server refuses counts once in "KE fails".
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs
TIMESYNC_SOURCES=$TSNTS_BUILD_DIR/tools/timesync-sources
[ -x "$TIMESYNC_SOURCES" ] || fail "$TIMESYNC_SOURCES not built"
id nobody >/dev/null 2>&1 || missing_prerequisite "no user nobody"

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# _nts_status_starts PREFIX: NTSStatus begins with PREFIX.
_nts_status_starts() { [[ "$(timesync_property NTSStatus)" == "$1"* ]]; }

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
        grep -Eq "^S Name +Address +Auth +State +St +Poll +Last +Source-local +Root dist\.$" "$out" || fail "no header"
        # The liar's clock is an hour ahead: the header says source minus local, so +3600.
        grep -Eq "^x localhost:${KE[liar]} +127\.0\.0\.1:[0-9]+ +NTS +[a-z-]+ +1 +1s +[0-9]+s +\+3600\.[0-9]{6}s +0\.[0-9]{6}s$" "$out" ||
                fail "the liar is not shown as an authenticated falseticker an hour ahead"
        grep -q "^Source-local: the source's clock minus the local clock (+: the source is ahead)$" "$out" ||
                fail "the table does not say the offset's sign"
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
    assert s["NTS"] is True and s["Origin"] == "nts" and s["Authentication"] == "NTS", s
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

test_version() {
        "$TIMESYNC_SOURCES" --version | grep_q -E "^timesync-sources \(timesyncd-nts\) [0-9]" || fail "no --version"
}

test_check_says_synchronized_over_nts() {
        local out rc=0
        out=$(as_nobody "$TIMESYNC_SOURCES" --check) || rc=$?
        echo "$out"
        [ "$rc" = 0 ] || fail "--check exits $rc while synchronized over NTS"
        # The liar is named, with its offset, as NTSStatus names it.
        grep -Eq "^Synchronized over NTS to localhost:[0-9]+ \(127\.0\.0\.1:[0-9]+\), offset [+-]0\.[0-9]{6}s \(source-local\)\. Falseticker: localhost:${KE[liar]} \(\+3600\.[0-9]{6} s\)\.$" <<<"$out" ||
                fail "--check does not say so"
}

# A strict reader of the OpenMetrics text format (the subset the tool writes: gauges, counters
# whose samples end in _total, info families whose samples end in _info, UNIT, HELP, labels,
# # EOF last) and of the Prometheus text format of --prometheus, which also compares the values
# with --json; where Debian's python3-prometheus-client is installed, its parsers of both formats
# read the texts too.
test_openmetrics_parses_and_says_what_the_daemon_says() {
        local rc tries
        for tries in 1 2 3 4 5; do
                rc=0
                openmetrics_matches_json || rc=$?
                [ "$rc" = 3 ] || break
                log "every source answered between the two reads (try $tries): again"
        done
        [ "$rc" = 0 ] || fail "the OpenMetrics text is not valid or not what the daemon says"
}

# openmetrics_matches_json: exit 0, 3 when no source kept its sample between the two reads.
openmetrics_matches_json() {
        local out=$TEST_TMPDIR/metrics.txt prom=$TEST_TMPDIR/metrics.prom json=$TEST_TMPDIR/sources2.json
        as_nobody "$TIMESYNC_SOURCES" --openmetrics >"$out"
        as_nobody "$TIMESYNC_SOURCES" --json >"$json"
        as_nobody "$TIMESYNC_SOURCES" --prometheus >"$prom"
        echo "---- transcript: timesync-sources --openmetrics (first lines) ----"
        head -n 40 "$out"
        echo "---- end of transcript ----"
        /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/metrics-check.py" --prometheus "$prom" >/dev/null ||
                fail "--prometheus is not valid"
        /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/metrics-check.py" --openmetrics "$out" >"$TEST_TMPDIR/metrics.json" ||
                fail "--openmetrics is not valid"
        /usr/bin/python3 - "$TEST_TMPDIR/metrics.json" "$json" "${KE[liar]}" <<'PY'
import json, sys
families = json.load(open(sys.argv[1]))
sources = json.load(open(sys.argv[2]))
liar = "localhost:" + sys.argv[3]
values = {}
for fam, f in families.items():
    for sample, labels, value in f["samples"]:
        values.setdefault(sample, {}).setdefault(labels.get("name"), []).append((labels, value))

def one(sample, name):
    (labels, value), = values[sample][name]
    return labels, value

by_name = {s["Name"]: s for s in sources}
same_sample = 0
for sample in ("timesyncd_source_info", "timesyncd_source_offset_seconds", "timesyncd_source_root_distance_seconds",
               "timesyncd_source_reachable", "timesyncd_source_nts", "timesyncd_source_nts_cookies",
               "timesyncd_source_nts_key_exchange_failures", "timesyncd_source_refused_replies_total",
               "timesyncd_source_failures_total", "timesyncd_source_packets_total", "timesyncd_source_selected",
               "timesyncd_source_state", "timesyncd_source_verdict", "timesyncd_source_nts_conflict"):
    assert set(values[sample]) == set(by_name), (sample, values[sample].keys())
# Counters are typed so, with _total; the state and the verdict are series per value, not labels
# of the info family (whose series would end at each change).
for fam in ("timesyncd_source_failures", "timesyncd_source_packets", "timesyncd_source_refused_replies"):
    assert families[fam]["type"] == "counter", (fam, families[fam]["type"])
assert families["timesyncd_source"]["type"] == families["timesyncd_build"]["type"] == "info"
for name, s in by_name.items():
    info = one("timesyncd_source_info", name)[0]
    assert info["authentication"] == "NTS" and info["origin"] == "nts", info
    assert info["address"] == s["Address"] and info["key_exchange_server"] == s["KeyExchangeServer"], info
    assert info["aead"] == "AEAD_AES_SIV_CMAC_256" and set(info) == {"name", "authentication", "address", "origin",
        "pool", "key_exchange_server", "aead", "conflict_with"}, info
    # Four servers of their own: no conflict of claims.
    assert info["conflict_with"] == s["ConflictWith"] == "", info
    assert one("timesyncd_source_nts_conflict", name)[1] == 0
    states = {l["state"]: v for l, v in values["timesyncd_source_state"][name]}
    verdicts = {l["verdict"]: v for l, v in values["timesyncd_source_verdict"][name]}
    assert len(states) >= 7 and sum(states.values()) == 1, states
    assert len(verdicts) >= 7 and sum(verdicts.values()) == 1, verdicts
    # The verdict may change between the two reads; within one it is consistent.
    assert one("timesyncd_source_selected", name)[1] == verdicts["selected"], verdicts
    assert one("timesyncd_source_nts", name)[1] == 1
    assert one("timesyncd_source_reachable", name)[1] == 1
    assert one("timesyncd_source_refused_replies_total", name)[1] == s["RefusedReplies"]
    assert one("timesyncd_source_nts_key_exchange_failures", name)[1] == s["KeyExchangeFailures"] == 0
    assert one("timesyncd_source_nts_cookies", name)[1] >= 1
    # Read a moment apart (1 s polls): the same sample gives the same offset to the nanosecond.
    if round(one("timesyncd_source_last_sample_timestamp_seconds", name)[1] * 1e6) == s["LastSampleTimestamp"]:
        assert round(one("timesyncd_source_offset_seconds", name)[1] * 1e9) == s["OffsetNSec"], name
        same_sample += 1
assert abs(one("timesyncd_source_offset_seconds", liar)[1] - 3600) < 1
assert {l["verdict"]: v for l, v in values["timesyncd_source_verdict"][liar]}["falseticker"] == 1
assert sum(v for name in by_name for _, v in values["timesyncd_source_selected"][name]) == 1
top = {sample: v[None][0][1] for sample, v in values.items() if None in v}
assert top["timesyncd_up"] == 1 and top["timesyncd_synchronized"] == 1 and top["timesyncd_synchronized_nts"] == 1, top
assert top["timesyncd_sources"] == 4, top
assert values["timesyncd_build_info"][None][0][0]["version"], values["timesyncd_build_info"]
# The system's figures, as chronyc tracking gives them: the selected source's.
selected = [s for s in sources if s["Verdict"] == "selected"][0]
assert abs(top["timesyncd_offset_seconds"]) < 1 and top["timesyncd_root_distance_seconds"] > 0, top
assert top["timesyncd_poll_interval_seconds"] > 0 and "timesyncd_frequency_ppm" in top, top
assert top["timesyncd_last_update_timestamp_seconds"] > 1.6e9, top
# Every source polled between the two reads: no offset compared, read again.
sys.exit(0 if same_sample > 0 else 3)
PY
}

# Five servers, one with nothing listening on its key-exchange port: the other four steer (three
# agree, the liar is a falseticker), and --check still exits 0 but names the failing one, as
# NTSStatus does.
test_check_names_failing_servers_while_synchronized() {
        local dead out rc=0 want
        dead=localhost:$(free_port)
        stop_timesyncd
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/degraded.conf" "${names[*]} $dead" "NTSMaxSources=5"
        start_timesyncd "$TEST_TMPDIR/degraded.conf" --test-poll-interval=1s
        wait_log "Initial clock synchronization to .*3 of [45] NTS sources agree" 30
        want="1 of 5 NTS servers failing: $dead (connecting to 127.0.0.1:${dead#localhost:} failed: Connection refused)"
        want="$want; Falseticker: localhost:${KE[liar]} (+3600."
        wait_for 10 _nts_status_starts "$want" ||
                fail "NTSStatus is '$(timesync_property NTSStatus)', not '$want...'"
        out=$(as_nobody "$TIMESYNC_SOURCES" --check) || rc=$?
        echo "$out"
        [ "$rc" = 0 ] || fail "--check exits $rc while four of five servers steer over NTS"
        grep -Eq "^Synchronized over NTS to localhost:[0-9]+ \(127\.0\.0\.1:[0-9]+\), offset [+-]0\.[0-9]{6}s \(source-local\)\. " <<<"$out" ||
                fail "--check does not say that it is synchronized over NTS"
        [[ $out == *"(source-local). $want"*" s)." ]] || fail "--check does not name the failing server"
}

# Issue 33: two NTS sources whose key-exchange servers (two ports of the loopback: two servers)
# name one NTP address and port, that of the first, which answers both (one cookie key): a
# conflict of claims. Each keeps its vote, the two agree and the clock follows them; every output
# says the conflict: --json in ConflictWith, --openmetrics and --prometheus in the gauge
# timesyncd_source_nts_conflict and the conflict_with label of the info series, and --check,
# still 0 (the clock is steered over NTS by sources that each count), at the end of its line.
test_a_conflict_of_claims_is_in_every_output() {
        local own claim out rc=0 json=$TEST_TMPDIR/conflict.json om=$TEST_TMPDIR/conflict.om
        local prom=$TEST_TMPDIR/conflict.prom pid text
        start_nts_conflict conflict
        own=$CONFLICT_OWN
        claim=$CONFLICT_CLAIM
        stop_timesyncd
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/conflict.conf" "$own $claim"
        start_timesyncd "$TEST_TMPDIR/conflict.conf" --test-poll-interval=1s
        wait_log "Initial clock synchronization to .*2 of 2 NTS sources agree" 30
        text="NTS sources $claim and $own name one NTP address 127\.0\.0\.1"
        wait_log "$text, though their key-exchange servers and certificate keys differ" 10

        as_nobody "$TIMESYNC_SOURCES" --json >"$json"
        as_nobody "$TIMESYNC_SOURCES" --openmetrics >"$om"
        as_nobody "$TIMESYNC_SOURCES" --prometheus >"$prom"
        grep -E "^timesyncd_source_(info|nts_conflict)\{" "$om"
        /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/metrics-check.py" --prometheus "$prom" >/dev/null ||
                fail "--prometheus is not valid"
        /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/metrics-check.py" --openmetrics "$om" >"$TEST_TMPDIR/conflict.json2" ||
                fail "--openmetrics is not valid"
        /usr/bin/python3 - "$json" "$TEST_TMPDIR/conflict.json2" "$own" "$claim" <<'PY' || fail "the outputs do not say the conflict"
import json, sys
sources, families = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
own, claim = sys.argv[3:]
assert {s["Name"]: s["ConflictWith"] for s in sources} == {own: claim, claim: own}, sources
conflict = {l["name"]: v for _, l, v in families["timesyncd_source_nts_conflict"]["samples"]}
assert conflict == {own: 1, claim: 1}, conflict
# The gauge has the name alone: one series through the conflict's start and end.
assert all(set(l) == {"name"} for _, l, _ in families["timesyncd_source_nts_conflict"]["samples"])
info = {l["name"]: l["conflict_with"] for _, l, _ in families["timesyncd_source"]["samples"]}
assert info == {own: claim, claim: own}, info
PY
        grep_q -x "timesyncd_source_nts_conflict{name=\"$own\"} 1" "$prom" || fail "--prometheus does not say the conflict"

        out=$(as_nobody "$TIMESYNC_SOURCES" --check) || rc=$?
        echo "$out"
        [ "$rc" = 0 ] || fail "--check exits $rc with a conflict of claims while synchronized over NTS"
        grep -Eq "^Synchronized over NTS to localhost:[0-9]+ .*\(source-local\)\. (.*; )?$text\.$" <<<"$out" ||
                fail "--check does not say the conflict"
        stop_timesyncd
        for pid in "${CONFLICT_PIDS[@]}"; do
                stop_daemon "$pid"
        done
}

test_no_daemon_is_a_clear_error() {
        local out rc=0
        stop_timesyncd
        out=$(as_nobody "$TIMESYNC_SOURCES" 2>&1) || rc=$?
        [ "$rc" = 1 ] || fail "exit status $rc without a daemon"
        grep -q "Failed to read the time sources of systemd-timesyncd: " <<<"$out" || fail "no clear error: $out"
        rc=0
        as_nobody "$TIMESYNC_SOURCES" --check >/dev/null 2>&1 || rc=$?
        [ "$rc" = 1 ] || fail "--check exits $rc without a daemon"
        rc=0
        as_nobody "$TIMESYNC_SOURCES" --wait=2 >/dev/null 2>&1 || rc=$?
        [ "$rc" = 1 ] || fail "--wait=2 exits $rc without a daemon"
        metrics_recipe_says_the_daemon_is_down
}

# The man page's recipe for node_exporter's textfile collector, run with a file that says
# "synchronized 1" from before, and no daemon: the file says the daemon is down and not
# synchronized, and no temporary file is left, however often it runs.
metrics_recipe_says_the_daemon_is_down() {
        local dir=$TEST_TMPDIR/textfile recipe
        mkdir -p "$dir"
        printf 'timesyncd_up 1\ntimesyncd_synchronized 1\n' >"$dir/timesyncd.prom"
        recipe=$(sed -n '/^# textfile recipe$/,/^```$/p' "$TSNTS_SRC_DIR/man/timesync-sources.1.scd" | sed '1d;$d')
        [ -n "$recipe" ] || fail "no recipe in the man page"
        for _ in 1 2 3; do
                PATH=$(dirname "$TIMESYNC_SOURCES"):$PATH TEXTFILE_DIR=$dir bash -c "$recipe" 2>/dev/null || true
        done
        cat "$dir/timesyncd.prom"
        grep -qx "timesyncd_up 0" "$dir/timesyncd.prom" || fail "the recipe's file does not say the daemon is down"
        grep -qx "timesyncd_synchronized 0" "$dir/timesyncd.prom" || fail "the recipe's file still says synchronized"
        [ "$(ls "$dir")" = timesyncd.prom ] || fail "the recipe leaves files behind: $(ls "$dir")"
        /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/metrics-check.py" --prometheus "$dir/timesyncd.prom" >/dev/null ||
                fail "the recipe's file is not valid"
}

# check_exits N: timesync-sources --check (as nobody) exits N.
check_exits() {
        local rc=0
        as_nobody "$TIMESYNC_SOURCES" --check >/dev/null 2>&1 || rc=$?
        [ "$rc" = "$1" ]
}

# Only a plain NTP server: synchronized, but --check says it is not authenticated (3), and the
# table and the metrics say "none".
test_plain_ntp_is_not_nts() {
        local port out rc=0
        port=$(free_port)
        start_ntp_test_server plain "$port"
        : >"$TIMESYNCD_LOG"
        write_conf "$TEST_TMPDIR/plain.conf" "NTP=127.0.0.1:$port"
        start_timesyncd "$TEST_TMPDIR/plain.conf" --test-poll-interval=1s
        wait_log "Initial clock synchronization to " 30
        wait_for 10 check_exits 3 || true
        out=$(as_nobody "$TIMESYNC_SOURCES" --check) || rc=$?
        echo "$out"
        [ "$rc" = 3 ] || fail "--check exits $rc over plain NTP"
        grep -q "^Synchronized over plain NTP, NOT authenticated to 127\.0\.0\.1:$port " <<<"$out" || fail "--check does not say so"
        out=$(as_nobody "$TIMESYNC_SOURCES")
        echo "$out"
        grep -Eq "^\* 127\.0\.0\.1:$port +127\.0\.0\.1:$port +none " <<<"$out" || fail "the table does not say 'none'"
        as_nobody "$TIMESYNC_SOURCES" --openmetrics | grep_q '^timesyncd_synchronized_nts 0$' || fail "metrics say NTS"
        stop_timesyncd
}

# The clock an hour ahead (the fake clock of --test-clock-offset=), one server, polled every 30 s:
# right after the step, the source's last answer says what it says against the stepped clock
# (about 0 s), not the hour it said before the step as if the source still agreed an hour off.
test_offsets_after_a_step_are_against_the_stepped_clock() {
        local json=$TEST_TMPDIR/stepped.json
        stop_timesyncd
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/stepped.conf" "localhost:${KE[a]}"
        start_timesyncd "$TEST_TMPDIR/stepped.conf" --test-poll-interval=30s --test-clock-offset=3600s
        wait_log "Initial clock synchronization to localhost:${KE[a]} (offset \(-3600\.\|-3599\.99\)" 30
        as_nobody "$TIMESYNC_SOURCES" --json >"$json"
        as_nobody "$TIMESYNC_SOURCES" | sed -n 1,3p
        /usr/bin/python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))[0]
assert abs(s["OffsetNSec"]) < 10**9, s["OffsetNSec"]' "$json" || fail "the offset is not against the stepped clock"
        stop_timesyncd
}

# Four servers, NTSMaxSources=2: the two the daemon does not use are listed too, "not started".
test_servers_beyond_nts_max_sources_are_listed() {
        local out
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/two.conf" "${names[*]}" "NTSMaxSources=2"
        start_timesyncd "$TEST_TMPDIR/two.conf" --test-poll-interval=1s
        wait_log "Using 2 NTS servers together" 10
        out=$(as_nobody "$TIMESYNC_SOURCES")
        echo "$out"
        grep -Eq "^  ${names[2]} +- +NTS +not started " <<<"$out" || fail "${names[2]} is not listed as not started"
        grep -Eq "^  ${names[3]} +- +NTS +not started " <<<"$out" || fail "${names[3]} is not listed as not started"
        [ "$(grep -c "not started " <<<"$out")" = 2 ] || fail "not two servers not started"
        stop_timesyncd
}

# One NTS server that refuses every key exchange (an NTS-KE error record "bad request", which
# puts the retry at the top of the backoff ladder at once): the source is failing (S is "-"),
# "KE fails" counts the one failure, and --check says not synchronized (4); --wait gives up
# when its time is up, with the same status.
test_refusing_server_is_failing() {
        local out rc=0 json=$TEST_TMPDIR/refusing.json
        start_nts_mock refusing --sabotage=bad-request
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/refusing.conf" "localhost:$MOCK_KE"
        start_timesyncd "$TEST_TMPDIR/refusing.conf" --test-poll-interval=1s
        wait_log "NTS key exchange with localhost:$MOCK_KE failed" 30
        wait_for 10 check_exits 4 || true
        out=$(as_nobody "$TIMESYNC_SOURCES")
        echo "$out"
        grep -Eq "^- localhost:$MOCK_KE +- +NTS +[a-z-]+ " <<<"$out" || fail "the failing source is not marked '-'"
        grep -Eq "^localhost:$MOCK_KE +localhost:$MOCK_KE +- +0 +1 +- +KE response from 127\.0\.0\.1:$MOCK_KE refused" <<<"$out" ||
                fail "'KE fails' is not 1 after one refused key exchange"
        as_nobody "$TIMESYNC_SOURCES" --json >"$json"
        /usr/bin/python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))[0]; assert s["KeyExchangeFailures"] == 1, s' "$json" ||
                fail "KeyExchangeFailures is not 1"
        out=$(as_nobody "$TIMESYNC_SOURCES" --check) || rc=$?
        echo "$out"
        [ "$rc" = 4 ] || fail "--check exits $rc with no usable source"
        grep -q "^Not synchronized: no source selected (1 source, 1 failing): Key exchange with localhost:$MOCK_KE failed: " <<<"$out" ||
                fail "--check does not say why"
        rc=0
        as_nobody "$TIMESYNC_SOURCES" --wait=2 >/dev/null || rc=$?
        [ "$rc" = 4 ] || fail "--wait=2 exits $rc with no usable source"
        stop_timesyncd
}

# --wait started before the daemon: it waits for the daemon and for NTS, then exits 0.
test_wait_until_synchronized_over_nts() {
        local rc=0 pid
        : >"$TIMESYNCD_LOG"
        as_nobody "$TIMESYNC_SOURCES" --wait=120 >"$TEST_TMPDIR/wait.out" 2>/dev/null &
        pid=$!
        start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
        wait "$pid" || rc=$?
        cat "$TEST_TMPDIR/wait.out"
        [ "$rc" = 0 ] || fail "--wait exits $rc"
        grep -q "^Synchronized over NTS to localhost:" "$TEST_TMPDIR/wait.out" || fail "--wait does not say so"
        log_has "Initial clock synchronization to " || fail "--wait returned before the daemon synchronized"
}

run_case test_table_shows_every_source_and_their_verdicts
run_case test_json_has_every_key_of_the_property
run_case test_reading_needs_no_privileges_but_the_policy_holds
run_case test_version
run_case test_check_says_synchronized_over_nts
run_case test_openmetrics_parses_and_says_what_the_daemon_says
run_case test_check_names_failing_servers_while_synchronized
run_case test_a_conflict_of_claims_is_in_every_output
run_case test_no_daemon_is_a_clear_error
run_case test_plain_ntp_is_not_nts
run_case test_offsets_after_a_step_are_against_the_stepped_clock
run_case test_servers_beyond_nts_max_sources_are_listed
run_case test_refusing_server_is_failing
run_case test_wait_until_synchronized_over_nts
