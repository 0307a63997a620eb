#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The journal side of the daemon's messages: the catalog (catalog/timesyncd-nts.catalog) builds
# with journalctl --update-catalog under a private root and has an entry for every ID of
# src/timesync/timesyncd-messages.h but stock's; and with SYSTEMD_LOG_TARGET=journal the daemon
# sends "Initial clock synchronization" with stock's MESSAGE_ID and the server as a field, and a
# failed NTS key exchange with our ID and NTS_SERVER, NTS_ADDRESS, NTS_ERROR; a real conflict
# of claims (two NTS sources naming one NTP address) is warned of once with its ID and
# NTS_SERVER, NTS_OTHER_SERVER, NTP_ADDRESS. journald is a
# listener of the test (test/tools/readers/journal-listen.py) on a private /run/systemd/journal, and
# each entry carries the caller's CODE_FILE=, CODE_LINE= and CODE_FUNC= once.
# Last, what an operator sees: a real systemd-journald in a mount namespace of the test (its own
# /run, /var/log/journal and catalog database) records a failed key exchange, and journalctl -x
# shows it with the catalog's explanation.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
daemon_test_init --certs
command -v journalctl >/dev/null || missing_prerequisite "journalctl not installed (package systemd)"

messages=$TSNTS_SRC_DIR/src/timesync/timesyncd-messages.h
catalog=$TSNTS_SRC_DIR/catalog/timesyncd-nts.catalog
stock_id=7c8a41f37b764941a0e1780b1be2f037

test_catalog_builds_and_explains_every_id() {
        local root=$TEST_TMPDIR/catroot id n=0
        mkdir -p "$root/usr/lib/systemd/catalog" "$root/var/lib/systemd/catalog"
        cp "$catalog" "$root/usr/lib/systemd/catalog/"
        journalctl --root="$root" --update-catalog 2>"$TEST_TMPDIR/catalog.err" ||
                fail "journalctl --update-catalog failed: $(cat "$TEST_TMPDIR/catalog.err")"
        ! grep -q . "$TEST_TMPDIR/catalog.err" || fail "journalctl warned: $(cat "$TEST_TMPDIR/catalog.err")"
        journalctl --root="$root" --list-catalog >"$TEST_TMPDIR/catalog.list"
        while read -r id; do
                [ "$id" != "$stock_id" ] || continue
                grep -q "^$id " "$TEST_TMPDIR/catalog.list" || fail "no catalog entry for $id"
                n=$((n + 1))
        done < <(sed -n 's/^#define TIMESYNC_MESSAGE_[A-Z_]* "\([0-9a-f]\{32\}\)"$/\1/p' "$messages")
        [ "$n" -ge 7 ] || fail "only $n IDs found in $messages"
        # systemd's convention: Support: is an http(s) URL, man pages go in Documentation:.
        ! grep -n '^Support:' "$catalog" | grep -v '^[0-9]*:Support: https\?://' ||
                fail "a Support: field that is not an http(s) URL"
        journalctl --root="$root" --dump-catalog a5beb081efe2414895e3f50fc4a39fb3 | grep_q "Subject: NTS key exchange with @NTS_SERVER@ failed" ||
                fail "the key exchange entry does not read back"
        echo "PASS test_catalog_builds_and_explains_every_id"
}

# _start_journal_listener NAME: the listener (journal-listen.py) on $TEST_TMPDIR/NAME/socket,
# recording to $TEST_TMPDIR/NAME.txt, and TIMESYNCD_WRAPPER set so that the daemon's
# /run/systemd/journal is that directory: a /run of its own (tmpfs), where the journal socket is
# the listener's, and nothing of the host's /run is seen or changed. Sets JOURNAL_PID.
_start_journal_listener() {
        local jdir=$TEST_TMPDIR/$1
        mkdir -p "$jdir"
        chmod 0755 "$jdir"
        start_daemon "$TEST_TMPDIR/$1-listen.log" /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/journal-listen.py" \
                "$jdir/socket" "$TEST_TMPDIR/$1.txt"
        JOURNAL_PID=$DAEMON_PID
        wait_for 5 grep -q READY "$TEST_TMPDIR/$1-listen.log" || fail "journal listener did not start"
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(unshare --mount --propagation private
                bash -c 'mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal &&
                        mount --bind "$0" /run/systemd/journal && exec "$@"' "$jdir")
}

_journal_case() {
        local dead ke
        _start_journal_listener journal
        # Two servers that agree and a dead one: a majority of the three in use synchronizes, and
        # the dead one's key exchanges fail.
        start_nts_mock j
        ke=$MOCK_KE
        start_nts_mock j2
        dead=$(free_port)
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke localhost:$MOCK_KE 127.0.0.1:$dead" "NTSMaxSources=3"
        TIMESYNCD_LOG_TARGET=journal start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
        wait_for 20 grep -q "MESSAGE=Initial clock synchronization" "$TEST_TMPDIR/journal.txt" ||
                fail "no initial synchronization in the journal: $(tail -3 "$TEST_TMPDIR/journal.txt")"
        grep "MESSAGE=Initial clock synchronization" "$TEST_TMPDIR/journal.txt" | grep_q "MESSAGE_ID=$stock_id" ||
                fail "the initial synchronization has no MESSAGE_ID=$stock_id"
        grep "MESSAGE=Initial clock synchronization" "$TEST_TMPDIR/journal.txt" | grep_q "NTS_AUTHENTICATED=yes" ||
                fail "the initial synchronization has no NTS_AUTHENTICATED=yes"
        wait_for 20 grep -q "MESSAGE=NTS key exchange with 127.0.0.1:$dead failed" "$TEST_TMPDIR/journal.txt" ||
                fail "no failed key exchange in the journal"
        grep "MESSAGE=NTS key exchange with 127.0.0.1:$dead failed" "$TEST_TMPDIR/journal.txt" | head -1 |
                grep "MESSAGE_ID=a5beb081efe2414895e3f50fc4a39fb3" | grep "NTS_SERVER=127.0.0.1:$dead" |
                grep -q "NTS_ERROR=" || fail "the failed key exchange lacks its ID or fields: $(grep "$dead failed" "$TEST_TMPDIR/journal.txt" | head -1)"
        stop_timesyncd
        _each_entry_has_one_code_location "$TEST_TMPDIR/journal.txt"
}

# _each_entry_has_one_code_location FILE: every entry the listener recorded carries CODE_FILE=,
# CODE_LINE= and CODE_FUNC= once each, those of the daemon's caller (not of src/shared/log.c).
_each_entry_has_one_code_location() {
        local bad
        bad=$(awk -F ' [|] ' '{ f = l = c = 0
                for (i = 1; i <= NF; i++) {
                        if ($i ~ /^CODE_FILE=/) { f++; if ($i ~ /log\.c$/) f += 10 }
                        if ($i ~ /^CODE_LINE=/) l++
                        if ($i ~ /^CODE_FUNC=/) c++
                }
                if (f != 1 || l != 1 || c != 1) { print; exit } }' "$1")
        [ -z "$bad" ] || fail "an entry without exactly one caller's CODE_FILE/LINE/FUNC: $bad"
        [ "$(wc -l <"$1")" -ge 5 ] || fail "only $(wc -l <"$1") entries recorded"
}

test_daemon_messages_carry_ids_and_fields() {
        _journal_case
        echo "PASS test_daemon_messages_carry_ids_and_fields"
}

# A real conflict of claims (start_nts_conflict: two key-exchange servers on the loopback, the
# second naming the first one's NTP address and port): the warning, logged once, carries the
# conflict's MESSAGE_ID and the fields NTS_SERVER (the later source, the claimant here),
# NTS_OTHER_SERVER and NTP_ADDRESS, so that a fleet can alert on it.
test_a_conflict_of_claims_carries_its_id_and_fields() {
        local out=$TEST_TMPDIR/conflict-journal.txt id entry field pid
        id=$(sed -n 's/^#define TIMESYNC_MESSAGE_NTS_CONFLICT "\([0-9a-f]\{32\}\)"$/\1/p' "$messages")
        [ -n "$id" ] || fail "no TIMESYNC_MESSAGE_NTS_CONFLICT in $messages"
        _start_journal_listener conflict-journal
        start_nts_conflict conflict
        write_nts_conf "$TEST_TMPDIR/conflict.conf" "$CONFLICT_OWN $CONFLICT_CLAIM"
        TIMESYNCD_LOG_TARGET=journal start_timesyncd "$TEST_TMPDIR/conflict.conf" --test-poll-interval=1s
        wait_for 20 grep -q "MESSAGE=NTS sources .* name one NTP address" "$out" ||
                fail "no conflict of claims in the journal: $(tail -3 "$out")"
        # Each keeps its vote: the two agree and steer, which also gives the warning time to be
        # logged only once.
        wait_for 20 grep -q "MESSAGE=Initial clock synchronization" "$out" ||
                fail "no synchronization by the two sources in conflict"
        stop_timesyncd
        [ "$(grep -c "MESSAGE=NTS sources .* name one NTP address" "$out")" = 1 ] ||
                fail "the conflict is not logged once: $(grep "name one NTP address" "$out")"
        entry=$(grep "MESSAGE=NTS sources .* name one NTP address" "$out")
        echo "$entry"
        grep_q "MESSAGE=NTS sources $CONFLICT_CLAIM and $CONFLICT_OWN name one NTP address 127\.0\.0\.1, though their key-exchange servers and certificate keys differ: one of them claims a server that is not its own; not merged, each keeps its vote\. |" <<<"$entry" ||
                fail "the conflict's text changed: $entry"
        for field in "MESSAGE_ID=$id" "PRIORITY=4" "NTS_SERVER=$CONFLICT_CLAIM" "NTS_OTHER_SERVER=$CONFLICT_OWN" \
                "NTP_ADDRESS=127.0.0.1"; do
                grep_q -F " | $field |" <<<"$entry | " || fail "the conflict's entry lacks $field: $entry"
        done
        _each_entry_has_one_code_location "$out"
        for pid in "${CONFLICT_PIDS[@]}" "$JOURNAL_PID"; do
                stop_daemon "$pid"
        done
        unset TIMESYNCD_WRAPPER
        echo "PASS test_a_conflict_of_claims_carries_its_id_and_fields"
}

# _start_private_journald DIR: the daemon's wrapper for a real systemd-journald of the test: a
# tmpfs on /run, DIR/journal on /run/log/journal and an empty DIR/var on /var/log/journal (the
# host's journal is neither read nor written), journald started there, its PID in
# DIR/journald.pid, then the daemon. Sets TIMESYNCD_WRAPPER.
_start_private_journald() {
        mkdir -p "$1/journal" "$1/var"
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(unshare --mount --propagation private
                bash -c 'mount -t tmpfs tmpfs /run && mkdir -p /run/log/journal /run/systemd/journal &&
                        mount --bind "$0/journal" /run/log/journal && mount --bind "$0/var" /var/log/journal &&
                        { /lib/systemd/systemd-journald & echo $! >"$0/journald.pid"; } &&
                        for _ in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.1; done &&
                        [ -S /run/systemd/journal/socket ] && exec "$@"' "$1")
}

test_journalctl_x_explains_a_failed_key_exchange() {
        local d=$TEST_TMPDIR/jx croot=$TEST_TMPDIR/jx/catroot dead
        [ -x /lib/systemd/systemd-journald ] || { echo "SKIP test_journalctl_x_explains_a_failed_key_exchange: no systemd-journald"; return 0; }
        mkdir -p "$croot/usr/lib/systemd/catalog"
        cp "$catalog" "$croot/usr/lib/systemd/catalog/"
        journalctl --root="$croot" --update-catalog 2>/dev/null || fail "journalctl --update-catalog failed"
        dead=$(free_port)
        write_nts_conf "$TEST_TMPDIR/jx.conf" "127.0.0.1:$dead"
        _start_private_journald "$d"
        TIMESYNCD_LOG_TARGET=journal start_timesyncd "$TEST_TMPDIR/jx.conf"
        # The journal files are in $d/journal, outside the namespace: read them as they grow.
        wait_for 20 _journal_has_ke_failure "$d/journal" || fail "no failed key exchange in the journal"
        stop_timesyncd
        kill "$(cat "$d/journald.pid")" 2>/dev/null || true
        # journalctl -x with the catalog database of the test in place of the host's.
        # shellcheck disable=SC2016 # $0 and $1 are the inner shell's
        unshare --mount --propagation private bash -c 'mount --bind "$0" /var/lib/systemd/catalog &&
                exec journalctl -x --no-pager --directory="$1" MESSAGE_ID=a5beb081efe2414895e3f50fc4a39fb3' \
                "$croot/var/lib/systemd/catalog" "$d/journal" >"$TEST_TMPDIR/jx.out" 2>&1 ||
                fail "journalctl -x failed: $(cat "$TEST_TMPDIR/jx.out")"
        cat "$TEST_TMPDIR/jx.out"
        grep -q "NTS key exchange with 127.0.0.1:$dead failed" "$TEST_TMPDIR/jx.out" ||
                fail "journalctl -x does not show the failure"
        grep -q "Subject: NTS key exchange with 127.0.0.1:$dead failed" "$TEST_TMPDIR/jx.out" ||
                fail "journalctl -x shows no catalog entry with the server filled in"
        grep -q "outgoing TCP port 4460" "$TEST_TMPDIR/jx.out" ||
                fail "journalctl -x lacks the catalog's advice"
        echo "PASS test_journalctl_x_explains_a_failed_key_exchange"
}

_journal_has_ke_failure() {
        journalctl --no-pager --directory="$1" MESSAGE_ID=a5beb081efe2414895e3f50fc4a39fb3 2>/dev/null | grep_q "failed"
}

run_case test_catalog_builds_and_explains_every_id
run_case test_daemon_messages_carry_ids_and_fields
run_case test_a_conflict_of_claims_carries_its_id_and_fields
run_case test_journalctl_x_explains_a_failed_key_exchange
