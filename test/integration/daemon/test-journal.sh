#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The journal side of the daemon's messages: the catalog (catalog/timesyncd-nts.catalog) builds
# with journalctl --update-catalog under a private root and has an entry for every ID of
# src/timesync/timesyncd-messages.h but stock's; and with SYSTEMD_LOG_TARGET=journal the daemon
# sends "Initial clock synchronization" with stock's MESSAGE_ID and the server as a field, and a
# failed NTS key exchange with our ID and NTS_SERVER, NTS_ADDRESS, NTS_ERROR. journald is a
# listener of the test (test/tools/journal-listen.py) on a private /run/systemd/journal.
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
        journalctl --root="$root" --dump-catalog a5beb081efe2414895e3f50fc4a39fb3 | grep -q "Subject: NTS key exchange with @NTS_SERVER@ failed" ||
                fail "the key exchange entry does not read back"
        echo "PASS test_catalog_builds_and_explains_every_id"
}

_journal_case() {
        local jdir=$TEST_TMPDIR/journal dead ke
        mkdir -p "$jdir"
        chmod 0755 "$jdir"
        start_daemon "$TEST_TMPDIR/journal-listen.log" /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/journal-listen.py" \
                "$jdir/socket" "$TEST_TMPDIR/journal.txt"
        wait_for 5 grep -q READY "$TEST_TMPDIR/journal-listen.log" || fail "journal listener did not start"
        # Two servers that agree and a dead one: a majority of the three in use synchronizes, and
        # the dead one's key exchanges fail.
        start_nts_mock j
        ke=$MOCK_KE
        start_nts_mock j2
        dead=$(free_port)
        write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$ke localhost:$MOCK_KE 127.0.0.1:$dead" "NTSMaxSources=3"
        # A /run of its own (tmpfs): the journal socket there is the listener's, and nothing of the
        # host's /run is seen or changed.
        # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(unshare --mount --propagation private
                bash -c 'mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal &&
                        mount --bind "$0" /run/systemd/journal && exec "$@"' "$jdir")
        TIMESYNCD_LOG_TARGET=journal start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=1s
        wait_for 20 grep -q "MESSAGE=Initial clock synchronization" "$TEST_TMPDIR/journal.txt" ||
                fail "no initial synchronization in the journal: $(tail -3 "$TEST_TMPDIR/journal.txt")"
        grep "MESSAGE=Initial clock synchronization" "$TEST_TMPDIR/journal.txt" | grep -q "MESSAGE_ID=$stock_id" ||
                fail "the initial synchronization has no MESSAGE_ID=$stock_id"
        grep "MESSAGE=Initial clock synchronization" "$TEST_TMPDIR/journal.txt" | grep -q "NTS_AUTHENTICATED=yes" ||
                fail "the initial synchronization has no NTS_AUTHENTICATED=yes"
        wait_for 20 grep -q "MESSAGE=NTS key exchange with 127.0.0.1:$dead failed" "$TEST_TMPDIR/journal.txt" ||
                fail "no failed key exchange in the journal"
        grep "MESSAGE=NTS key exchange with 127.0.0.1:$dead failed" "$TEST_TMPDIR/journal.txt" | head -1 |
                grep "MESSAGE_ID=a5beb081efe2414895e3f50fc4a39fb3" | grep "NTS_SERVER=127.0.0.1:$dead" |
                grep -q "NTS_ERROR=" || fail "the failed key exchange lacks its ID or fields: $(grep "$dead failed" "$TEST_TMPDIR/journal.txt" | head -1)"
        stop_timesyncd
}

test_daemon_messages_carry_ids_and_fields() {
        _journal_case
        echo "PASS test_daemon_messages_carry_ids_and_fields"
}

run_case test_catalog_builds_and_explains_every_id
run_case test_daemon_messages_carry_ids_and_fields
