#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Peers that go away and come back, or are only partly there: an NTS-KE server that is down
# and then up (the daemon recovers after its backoff), a server restart while synchronized, a
# KE server whose NTP address is dead (timeouts, never plain NTP), a name whose first address
# is dead (the daemon moves on to the next one, for the key exchange and for NTP) and a server
# on ::1 only. The cases run side by side, each with its own daemon and chronyd.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs

export CPU_BOUND=3

# ---- the KE server is down at start, then comes up; later it restarts while we are synced ----
ke_down_then_up() {
        local ntp ke t_up t0 cpu
        ntp=$(free_port)
        ke=$(free_port)
        nts_conf "localhost:$ke"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log_count "NTS key exchange with localhost:$ke failed: .*Connection refused" 3 30
        t_up=$EPOCHREALTIME
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$ntp" "$ke"
        wait_log "$(synced_line "localhost:$ke")" 90
        echo "result: $(log_count "NTS key exchange with .* failed") failed key exchanges while down," \
             "synchronized $(seconds_since "$t_up") s after the server came up"

        # Stopped with its keys kept: the restarted server still takes our cookies.
        stop_chrony "$TEST_TMPDIR/chrony"
        wait_log "Timed out waiting for reply from" 60
        local replies_before
        replies_before=$(log_count "NTP reply from")
        t0=$EPOCHREALTIME
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$ntp" "$ke"
        wait_for 60 bash -c "[ \$(grep -c 'NTP reply from' '$TIMESYNCD_LOG') -gt $replies_before ]" ||
                fail "no authenticated reply within 60 s of the server's restart"
        [ "$(log_count "NTS key exchange with .* done")" = 1 ] ||
                fail "a restart with the same server keys must not need a new key exchange"
        assert_only_authenticated_sync
        cpu=$(assert_cpu_below "$TIMESYNCD_PID" "$CPU_BOUND" ke_down_then_up)
        echo "result: server restart while synced: reply again $(seconds_since "$t0") s after it was back," \
             "no new key exchange; CPU $cpu s"
}

# ---- the key exchange over a bad TCP path (tcp-fault-proxy.py: no netem here) ----
# First every chunk 200 ms late and cut into 7-byte segments: the exchange must still complete.
# Then the first two connections reset after 300 bytes from the server, in the middle of its
# TLS records: two failed exchanges with backoff, then sync. Never time from a broken one.
ke_path_faults() {
        local ntp ke slow cut out t0
        ntp=$(free_port)
        ke=$(free_port)
        slow=$(free_port)
        cut=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$ntp" "$ke"
        for p in slow cut; do
                local args=(--delay=200 --piece=7)
                [ "$p" = cut ] && args=(--reset-after=300 --reset-connections=2)
                out=$TEST_TMPDIR/tcp-$p.log
                "${NOSYSTIME[@]}" /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/faults/tcp-fault-proxy.py" \
                        --listen="127.0.0.1:${!p}" --upstream="127.0.0.1:$ke" --stats="$TEST_TMPDIR/tcp-$p.stats" \
                        --max-seconds=300 "${args[@]}" >"$out" 2>&1 &
                track_pid $!
                wait_for 5 grep -q READY "$out" || fail "tcp-fault-proxy $p did not start: $(cat "$out")"
        done

        nts_conf "localhost:$slow"
        t0=$EPOCHREALTIME
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$slow")" 60
        echo "result: key exchange with every chunk 200 ms late in 7-byte segments: synchronized after" \
             "$(seconds_since "$t0") s ($(sed -n 's/^bytes_down=//p' "$TEST_TMPDIR/tcp-slow.stats") bytes from the server)"
        stop_timesyncd

        : >"$TIMESYNCD_LOG"
        rm -f "$TEST_TMPDIR"/state/nts-*
        nts_conf "localhost:$cut"
        t0=$EPOCHREALTIME
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$cut")" 60
        [ "$(sed -n 's/^resets=//p' "$TEST_TMPDIR/tcp-cut.stats")" = 2 ] || fail "the relay did not cut two connections"
        [ "$(log_count "NTS key exchange with localhost:$cut failed: .*reset")" -ge 2 ] ||
                fail "the cut key exchanges were not reported as failed by a reset (at once, not by a timeout)"
        assert_only_authenticated_sync
        echo "result: two key exchanges reset mid-record: $(grep -m1 -o 'failed: [^.]*' "$TIMESYNCD_LOG");" \
             "synchronized after $(seconds_since "$t0") s"
        stop_timesyncd
}

# ---- 30% of the key exchange's TCP segments dropped by the kernel, each way ----
# No netem here, but nf_tables: in a namespace of its own, an output rule drops 30% of the
# packets from and to the KE port at random (loopback traffic passes the output hook once),
# so TCP itself retransmits, SYNs included. Exchanges that run out of time are retried with
# backoff; the NTP port is left alone. Never time from a broken exchange.
tcp_loss_inner() {
        local t0 dropped
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$NTP" "$KE"
        nft -f - <<NFT
table inet tsnts_loss {
        chain out {
                type filter hook output priority 0; policy accept;
                tcp sport $KE numgen random mod 100 < 30 counter drop
                tcp dport $KE numgen random mod 100 < 30 counter drop
        }
}
NFT
        nts_conf "localhost:$KE"
        t0=$EPOCHREALTIME
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$KE")" 150
        assert_only_authenticated_sync
        dropped=$(nft list table inet tsnts_loss | awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }')
        [ "$dropped" -gt 0 ] || fail "no segment of the key exchange was dropped"
        echo "result: 30% of KE segments dropped each way ($dropped dropped):" \
             "$(log_count "NTS key exchange with localhost:$KE failed") failed exchanges," \
             "synchronized after $(seconds_since "$t0") s; CPU $(assert_cpu_below "$TIMESYNCD_PID" "$CPU_BOUND" tcp_loss) s"
}

# ---- KE works, but the NTP address it names is dead ----
# chronyd names 127.0.0.2 (same port) in its Server record; nothing listens there.
ntp_dead() {
        local ntp ke cpu
        ntp=$(free_port)
        ke=$(free_port)
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$ntp" "$ke" "ntsntpserver 127.0.0.2"
        nts_conf "localhost:$ke"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log_count "Timed out waiting for reply from 127.0.0.2:$ntp" 3 60
        log_has "Initial clock synchronization" && fail "synchronized although no NTP server answered"
        # Not one packet reached chronyd's real NTP port: no plain NTP behind NTS's back.
        [ "$(chrony_serverstat "$TEST_TMPDIR/chrony" "NTP packets received")" = 0 ] ||
                fail "the daemon sent NTP packets to chronyd's own address"
        cpu=$(assert_cpu_below "$TIMESYNCD_PID" "$CPU_BOUND" ntp_dead)
        echo "result: $(log_count "Timed out waiting for reply") timeouts, $(log_count "NTS key exchange with .* done")" \
             "key exchanges, no sample, 0 packets at chronyd's NTP port; CPU $cpu s"
}

# ---- ntp.test resolves to a dead 127.0.0.7 first, then to 127.0.0.1 ----
# /etc/gai.conf gives 127.0.0.7 precedence: without it getaddrinfo() would sort 127.0.0.1 first
# (longest matching prefix with the source address).
first_address_dead_inner() {
        mount --bind "$TEST_TMPDIR/gai.conf" /etc/gai.conf
        getent ahosts ntp.test | awk '$2 == "STREAM" { print "resolves: " $1 }'
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "NTS-KE with ntp.test: connecting to 127.0.0.7:$KE failed: Connection refused" 30
        wait_log "NTS key exchange with ntp.test:$KE (127.0.0.1:$KE) done" 30
        wait_log "Timed out waiting for reply from 127.0.0.7:$NTP" 30
        wait_log "$(synced_line "ntp.test:$KE")" 60
        assert_only_authenticated_sync
        echo "result: KE moved from 127.0.0.7 to 127.0.0.1 at once (refused); NTP after one 10 s timeout;" \
             "CPU $(assert_cpu_below "$TIMESYNCD_PID" "$CPU_BOUND" first_address_dead) s"
}

first_address_dead() {
        NTP=$(free_port)
        KE=$(free_port)
        export NTP KE
        printf '127.0.0.7 ntp.test\n127.0.0.1 ntp.test\n' >"$TEST_TMPDIR/hosts"
        printf 'precedence %s\n' ::1/128\ 50 ::/0\ 40 2002::/16\ 30 ::/96\ 20 ::ffff:0:0/96\ 10 \
                ::ffff:127.0.0.7/128\ 100 >"$TEST_TMPDIR/gai.conf"
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$NTP" "$KE" "ntsntpserver ntp.test"
        nts_conf "ntp.test:$KE"
        in_systemd_run first_address_dead_inner
}

# ---- chronyd on ::1 only: the namespace's 127.0.0.1 is removed once chronyd listens ----
ipv6_only_inner() {
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$NTP" "$KE"
        ip addr del 127.0.0.1/8 dev lo
        nts_conf "[::1]:$KE"
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "NTS key exchange with \[::1\]:$KE (\[::1\]:$KE) done" 30
        wait_log "$(synced_line "\[::1\]:$KE")" 30
        assert_only_authenticated_sync
        echo "result: synchronized over IPv6 only (certificate SAN IP:::1);" \
             "CPU $(assert_cpu_below "$TIMESYNCD_PID" "$CPU_BOUND" ipv6_only) s"
}

start_case ke_down_then_up ke_down_then_up
start_case ntp_dead ntp_dead
start_case first_address_dead first_address_dead
start_case ke_path_faults ke_path_faults
netns_create
NTP=$(free_port) KE=$(free_port) start_case ipv6_only netns_exec "$NETNS" ipv6_only_inner
if command -v nft >/dev/null; then
        netns_create
        NTP=$(free_port) KE=$(free_port) start_case tcp_loss netns_exec "$NETNS" tcp_loss_inner
fi

test_ke_server_down_then_up_recovers_after_backoff() { finish_case ke_down_then_up; }
test_dead_ntp_address_times_out_and_never_uses_plain_ntp() { finish_case ntp_dead; }
test_first_dead_address_is_skipped_for_ke_and_ntp() { finish_case first_address_dead; }
test_ipv6_only_server_is_reached() { finish_case ipv6_only; }
test_key_exchange_survives_a_slow_fragmenting_path_and_resets() { finish_case ke_path_faults; }
test_key_exchange_survives_30_percent_tcp_segment_loss() {
        command -v nft >/dev/null || missing_prerequisite "nft not installed (package nftables)"
        finish_case tcp_loss
}

run_case test_ke_server_down_then_up_recovers_after_backoff
run_case test_key_exchange_survives_a_slow_fragmenting_path_and_resets
run_case test_key_exchange_survives_30_percent_tcp_segment_loss
run_case test_dead_ntp_address_times_out_and_never_uses_plain_ntp
run_case test_first_dead_address_is_skipped_for_ke_and_ntp
run_case test_ipv6_only_server_is_reached
