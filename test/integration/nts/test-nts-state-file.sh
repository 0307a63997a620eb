#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The NTS state file when it cannot be written or removed, and when it must not be trusted,
# against the mock NTS server, which records every cookie it receives and counts each one it
# receives again (RFC 8915 section 5.7: a cookie is used once; section 9.1: a reused cookie links
# requests). chronyd could not tell.
#
# The file is written at a clean stop and removed when a start loads it, before any of its
# cookies goes. Spent cookies: a first run writes the file; then the state directory gets a
# leftover .tmp directory (every write fails), or is a full tmpfs (the write at stop fails), or
# a read-only one (the removal at start fails, so the file's cookies must never be sent), each
# in a private mount namespace so that the host is untouched, and the daemon runs three more
# times. No cookie may reach the server twice; every run gets authenticated replies, says once
# why the file is not written or not used, and burns no CPU in a loop.
set -euo pipefail
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs

export STARTS=3 REPLIES=6

start_nts_mock state
export MOCK_KE MOCK_NTP
write_nts_conf "$TEST_TMPDIR/ts.conf" "localhost:$MOCK_KE" "ConnectionRetrySec=1"
JAR=$(nts_jar_file "localhost:$MOCK_KE")
export JAR

mock_answered_at_least() { [ "$(mock_count state ntp_requests)" -ge "$1" ]; }

# one_run NAME [CMD...]: the daemon (log TEST_TMPDIR/NAME.log, info level as in production) until
# the mock answered REPLIES more requests, then CMD, then SIGTERM. Fails if it did not synchronize
# over NTS, used more CPU than a quarter of the time it ran (a loop that spins uses all of it),
# or if any cookie reached the mock twice.
one_run() {
        local name=$1 before t0 bound
        shift
        before=$(mock_count state ntp_requests)
        t0=$EPOCHREALTIME
        TIMESYNCD_LOG=$TEST_TMPDIR/$name.log
        TIMESYNCD_LOG_LEVEL=info start_timesyncd "$TEST_TMPDIR/ts.conf" --test-poll-interval=200ms
        wait_for 30 mock_answered_at_least $((before + REPLIES)) ||
                fail "$name: fewer than $REPLIES answered requests within 30 s"
        wait_log "$(synced_line "localhost:$MOCK_KE")" 10
        bound=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f\n", 0.5 + (b - a) / 4 }')
        assert_cpu_below "$TIMESYNCD_PID" "$bound" "$name" >/dev/null
        "$@"
        stop_timesyncd
        [ "$(mock_count state cookies_reused)" = 0 ] ||
                fail "$name: the server received a cookie twice: $(grep -m 3 'received again' "$TEST_TMPDIR/mock-state.log")"
}

# fill_disk: takes the room a start freed by removing the state file.
fill_disk() { dd if=/dev/zero of="$TEST_TMPDIR/state/filler-$RANDOM" bs=4k 2>/dev/null || true; }

# spent_cookies CAUSE: see the header; runs in a private mount namespace.
spent_cookies() {
        local cause=$1 i warned key_exchanges=0 before_stop=()
        mount -t tmpfs -o size=64k,mode=0755 "tsnts-$cause" "$TEST_TMPDIR/state"
        chown systemd-timesync: "$TEST_TMPDIR/state" 2>/dev/null || true
        one_run "$cause-0"
        [ -s "$JAR" ] || fail "$cause: the first run wrote no state file at its stop"
        log_has "Failed to save" && fail "$cause: the first run could not save"

        case $cause in
        tmp-directory) mkdir -p "$JAR.tmp/keep" ;;
        # Full before each stop: the removal at start frees the room the file took.
        full-disk) fill_disk; before_stop=(fill_disk) ;;
        read-only) mount -o remount,ro "$TEST_TMPDIR/state" ;;
        esac
        cp "$JAR" "$TEST_TMPDIR/$cause-before.jar"

        for (( i = 1; i <= STARTS; i++ )); do
                one_run "$cause-$i" "${before_stop[@]}"
                # One warning per cause and run, not one per poll or per write.
                warned=$(log_count "Failed to save NTS cookies\|NTS cookies of .* cannot remove it")
                [ "$warned" = 1 ] || fail "$cause-$i: $warned warnings about the state file, expected 1"
                log_has "NTS key exchange with localhost:$MOCK_KE .* done" && key_exchanges=$((key_exchanges + 1))
                case $cause in
                tmp-directory)
                        log_has "Failed to save NTS cookies to $JAR: cannot remove the leftover $JAR.tmp: Is a directory. The next start needs a key exchange." ||
                                fail "$cause-$i: the warning does not name the leftover directory"
                        ;;
                full-disk)
                        log_has "Failed to save NTS cookies to $JAR: .*No space left on device" ||
                                fail "$cause-$i: the warning does not say that the disk is full"
                        ;;
                read-only)
                        log_has "Not using the [0-9]* NTS cookies of $JAR: cannot remove it: Read-only file system. A cookie goes out only once no file lists it" ||
                                fail "$cause-$i: the warning does not say that the file's cookies are not sent"
                        cmp -s "$JAR" "$TEST_TMPDIR/$cause-before.jar" || fail "$cause-$i: the read-only file changed"
                        ;;
                esac
                # Where the write failed, the file the start removed is not back: the cookies
                # of the run are lost, none is listed.
                [ "$cause" = read-only ] || [ ! -e "$JAR" ] || fail "$cause-$i: a state file is left after a failed write"
        done
        # The first start after the cause resumes from the file of the clean stop before it
        # (the start removes it, which a full disk and a .tmp directory allow), the later ones
        # find no file and need a key exchange. Read-only, every start does: the file's cookies
        # are never sent, since it cannot be removed.
        case $cause in
        tmp-directory | full-disk) [ "$key_exchanges" = $((STARTS - 1)) ] || fail "$cause: $key_exchanges key exchanges" ;;
        read-only) [ "$key_exchanges" = "$STARTS" ] || fail "$cause: $key_exchanges key exchanges" ;;
        esac
        echo "result: $cause: $STARTS starts, $key_exchanges with a key exchange," \
             "$(mock_count state cookies_seen) distinct cookies at the server so far, 0 received twice;" \
             "$(grep -h -m 1 "Failed to save NTS cookies\|Not using the" "$TEST_TMPDIR/$cause-1.log")"
        umount "$TEST_TMPDIR/state"
}

test_spent_cookie_is_never_sent_again_when_a_tmp_directory_blocks_the_write() { in_systemd_run spent_cookies tmp-directory; }
test_spent_cookie_is_never_sent_again_on_a_full_disk() { in_systemd_run spent_cookies full-disk; }
test_spent_cookie_is_never_sent_again_on_a_read_only_file_system() { in_systemd_run spent_cookies read-only; }

# refused NAME REASON SETUP...: a state file made by SETUP (a command) is refused with a log line
# that names the file and says REASON; a key exchange follows and the daemon synchronizes.
refused() {
        local name=$1 reason=$2
        shift 2
        rm -rf "$JAR"
        "$@"
        TIMESYNCD_LOG=$TEST_TMPDIR/refused-$name.log
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Discarding NTS state file $JAR: $reason" 10
        wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        stop_timesyncd
        echo "result: $name: $(grep -m 1 -o "Discarding NTS state file .*" "$TIMESYNCD_LOG")"
}

good_file() {
        TIMESYNCD_LOG=$TEST_TMPDIR/refused-good.log
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        stop_timesyncd
        [ -s "$JAR" ] || fail "no state file to spoil"
        cp -p "$JAR" "$TEST_TMPDIR/good.jar"
}
restore() { cp -p "$TEST_TMPDIR/good.jar" "$JAR"; }
with_mode() { restore; chmod "$1" "$JAR"; }
owned_by_root() { restore; chown root: "$JAR"; }
a_fifo() { mkfifo -m 0600 "$JAR"; chown --reference="$TEST_TMPDIR/state" "$JAR"; }
a_directory() { mkdir "$JAR"; }
too_big() { restore; head -c 70000 /dev/zero | tr '\0' '#' >>"$JAR"; }
junk_number() { restore; sed -i 's/^aead=\([0-9]*\)$/aead=\1junk/' "$JAR"; }

# Each refusal of a state file says what is wrong with it ("Operation not permitted" said
# nothing), and a FIFO in its place does not make the daemon wait for a writer.
test_refused_state_files_say_what_is_wrong() {
        good_file
        refused mode "mode 0644, expected 0600 (others may have read its keys)" with_mode 0644
        refused owner "owned by uid 0, expected uid $(id -u systemd-timesync) (the daemon's)" owned_by_root
        refused fifo "not a regular file but a FIFO" a_fifo
        refused directory "not a regular file but a directory" a_directory
        rmdir "$JAR"
        refused size "[0-9]* bytes, more than a state file ever has (65536)" too_big
        refused number "malformed: $(grep '^aead=' "$TEST_TMPDIR/good.jar")junk is not a decimal number" junk_number
}

# Earlier versions named the file of "[::1]:PORT" "nts-___1__PORT.jar"; it is now
# "nts-%5B__1%5D_PORT.jar". The old file is removed, not read (a key exchange replaces it, once).
test_old_state_file_of_a_bracketed_address_is_removed_not_read() {
        local old new
        start_nts_mock v6 --address=::1
        write_nts_conf "$TEST_TMPDIR/v6.conf" "[::1]:$MOCK_KE"
        old=$TEST_TMPDIR/state/nts-___1__$MOCK_KE.jar
        new=$(nts_jar_file "[::1]:$MOCK_KE")
        [ "$new" = "$TEST_TMPDIR/state/nts-%5B__1%5D_$MOCK_KE.jar" ] || fail "unexpected file name $new"
        printf 'version=1\nserver=[::1]:%s\n' "$MOCK_KE" >"$old"
        chmod 0600 "$old"
        chown --reference="$TEST_TMPDIR/state" "$old"
        TIMESYNCD_LOG=$TEST_TMPDIR/v6.log
        start_timesyncd "$TEST_TMPDIR/v6.conf"
        wait_log "Removed $old, the NTS state file of \[::1\]:$MOCK_KE under its legacy name\."
        wait_log "Initial clock synchronization to \[::1\]:$MOCK_KE (offset .*, NTS authenticated" 30
        stop_timesyncd
        log_has "Discarding NTS state file" && fail "the old file was read"
        [ ! -e "$old" ] || fail "the old file is still there"
        [ -s "$new" ] || fail "no state file under the new name"
        echo "result: $(grep -o 'Removed .*' "$TIMESYNCD_LOG"); state now in $new"
}

# Which server the keys came from (its address and certificate key, for one server, one vote)
# is saved with them and comes back with a resumed start, which writes it again at its stop;
# a state file with a bad one is refused like any other flaw.
test_state_file_keeps_the_key_exchange_server_across_a_resume() {
        local address key
        rm -f "$JAR"
        TIMESYNCD_LOG=$TEST_TMPDIR/peer-ke.log
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        stop_timesyncd
        address=$(grep -x -E 'ke-address=(127\.0\.0\.1|::1)' "$JAR") || fail "no ke-address of the mock in $JAR"
        grep -qx "ke-port=$MOCK_KE" "$JAR" || fail "no ke-port=$MOCK_KE in $JAR"
        key=$(grep -x -E 'ke-key-sha256=[0-9a-f]{64}' "$JAR") || fail "no ke-key-sha256 in $JAR"

        TIMESYNCD_LOG=$TEST_TMPDIR/peer-resumed.log
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "Resuming NTS with localhost:$MOCK_KE: .* no key exchange needed" 10
        wait_log "NTS keys of localhost:$MOCK_KE are from the key exchange with .*:$MOCK_KE, key SHA-256 ${key:14:8}\.\.\." 10
        wait_log "$(synced_line "localhost:$MOCK_KE")" 30
        stop_timesyncd
        log_has "NTS key exchange with localhost:$MOCK_KE .* done" && fail "the resumed start ran a key exchange"
        { grep -qxF "$address" "$JAR" && grep -qxF "$key" "$JAR"; } || fail "the resumed start did not write them back"
        echo "result: $address, ${key:0:22}... kept across a resumed start"

        good_file
        refused ke-address "malformed: ke-address=localhost is not an IPv4 or IPv6 address" bad_ke_address
        refused ke-key "malformed: ke-key-sha256 is not 32 bytes in hex" short_ke_key
}
bad_ke_address() { restore; sed -i 's/^ke-address=.*$/ke-address=localhost/' "$JAR"; }
short_ke_key() { restore; sed -i 's/^ke-key-sha256=\(..\).*$/ke-key-sha256=\1/' "$JAR"; }

run_case test_spent_cookie_is_never_sent_again_when_a_tmp_directory_blocks_the_write
run_case test_spent_cookie_is_never_sent_again_on_a_full_disk
run_case test_spent_cookie_is_never_sent_again_on_a_read_only_file_system
run_case test_refused_state_files_say_what_is_wrong
run_case test_state_file_keeps_the_key_exchange_server_across_a_resume
# Last: it starts a mock of its own, which MOCK_KE then names.
run_case test_old_state_file_of_a_bracketed_address_is_removed_not_read
