#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Network faults between the daemon and a real chronyd NTS server, each in a network namespace
# of its own, all five at once: 30% loss, 200 ms delay with 100 ms jitter, reordering (late
# copies of old replies),
# duplication and corruption, each applied to both directions of NTP. For each the daemon must
# reach NTS-authenticated synchronization, refill its cookie jar to 8 after the losses, never
# use an unauthenticated sample, and stay far from a busy loop in CPU time.
#
# Faults come from tc netem on the namespace's loopback where the kernel has sch_netem (then
# they also hit the TCP key exchange). Without it (CONFIG_NET_SCH_NETEM unset, as on the
# development machine) test/tools/faults/fault-proxy.py relays NTP with the same faults: chronyd
# names 127.0.0.2 in its NTS-KE Server record, the relay listens there and forwards to
# chronyd on 127.0.0.1. The relay's seed is fixed, so its decisions are reproducible.
set -euo pipefail
. "$(dirname "$0")/../../lib/chrony.sh"
. "$(dirname "$0")/../../lib/timesyncd.sh"
. "$(dirname "$0")/../../lib/reliability.sh"
daemon_test_init --certs

# Bounds, generous on purpose (CI machines are slow and the faults random): sync, then three
# more authenticated replies, then a full jar, each within its own bound. CPU: a busy loop would
# use about one CPU second per second of the run.
export SYNC_BOUND=150 REPLIES_BOUND=150 JAR_BOUND=80 CPU_BOUND=3

replies() { log_count "NTP reply from"; }
replies_at_least() { [ "$(replies)" -ge "$1" ]; }

# fault_scenario NAME EXPECTED "NETEM ARGS" PROXY-ARG...: runs inside its namespace. EXPECTED is
# a pattern of the daemon's log that shows the fault reached it and was handled.
fault_scenario() {
        local name=$1 expected=$2 netem=$3 t0 t_sync n cpu server_line=() proxy_args
        shift 3
        if netem_available; then
                # shellcheck disable=SC2086 # netem arguments are words
                tc qdisc add dev lo root netem $netem
                echo "faults: tc netem $netem"
        else
                server_line=("ntsntpserver 127.0.0.2")
                proxy_args=("$@")
                echo "faults: fault-proxy.py ${proxy_args[*]}"
        fi
        start_chrony_nts_server "$TEST_TMPDIR/chrony" "$CERTDIR" "$NTP" "$KE" "${server_line[@]}"
        [ -n "${proxy_args+x}" ] && start_fault_proxy "$name" "127.0.0.2:$NTP" "127.0.0.1:$NTP" "${proxy_args[@]}"

        nts_conf "localhost:$KE"
        t0=$EPOCHREALTIME
        start_timesyncd "$TEST_TMPDIR/ts.conf"
        wait_log "$(synced_line "localhost:$KE")" "$SYNC_BOUND"
        t_sync=$(seconds_since "$t0")

        n=$(replies)
        wait_for "$REPLIES_BOUND" replies_at_least $(( n + 3 )) ||
                fail "$name: only $(replies) authenticated replies $REPLIES_BOUND s after synchronizing"
        wait_for "$JAR_BOUND" jar_is_full ||
                fail "$name: the cookie jar holds $(jar_in_memory) cookies after the daemon's last reply, not 7 or 8"
        assert_only_authenticated_sync
        wait_for 40 log_has "$expected" || fail "$name: the fault never showed in the daemon log ('$expected')"
        cpu=$(assert_cpu_below "$TIMESYNCD_PID" "$CPU_BOUND" "$name")
        echo "result: sync after ${t_sync} s; $(replies) authenticated replies," \
             "$(log_count "Timed out waiting for reply") timeouts," \
             "$(log_count "NTS key exchange with .* done") key exchanges," \
             "$(log_count "fails NTS verification") verification failures logged," \
             "$(log_count "$expected") x '$expected', jar 8 after $(seconds_since "$t0") s, CPU ${cpu} s"
        [ -z "${proxy_args+x}" ] || echo "relay: $(tr '\n' ' ' <"$TEST_TMPDIR/proxy-$name.stats")"
}

start_fault() {
        netns_create
        NTP=$(free_port) KE=$(free_port) start_case "$1" netns_exec "$NETNS" fault_scenario "$@"
}

start_fault loss "Timed out waiting for reply" "loss 30%" --loss=0.3 --seed=1
start_fault delay "NTP reply from .* delay 0\.[2-9]" "delay 200ms 100ms" --delay=200 --jitter=100 --seed=2
# Every packet twice, each copy held back 17 s half of the time: copies of old replies arrive
# during the next poll (16 s) on the same socket. A daemon that times out opens a new socket,
# which is why a plain "hold past the timeout" would never reach it.
start_fault reorder "does not match our request\|Unexpected reply, ignoring" "duplicate 100% delay 17s reorder 50%" \
        --duplicate=1 --reorder=0.5 --reorder-delay=17000 --seed=3
start_fault duplicate "Unexpected reply, ignoring" "duplicate 50%" --duplicate=0.5 --seed=4
start_fault corrupt "fails NTS verification\|refused our cookie (NTSN)" "corrupt 30%" --corrupt=0.3 --seed=5

test_sync_and_jar_recover_under_30_percent_loss() { finish_case loss; }
test_sync_and_jar_recover_under_200ms_delay_with_jitter() { finish_case delay; }
test_late_reordered_replies_are_ignored_and_sync_recovers() { finish_case reorder; }
test_duplicated_replies_are_used_once() { finish_case duplicate; }
test_corrupted_packets_never_become_time() { finish_case corrupt; }

run_case test_sync_and_jar_recover_under_30_percent_loss
run_case test_sync_and_jar_recover_under_200ms_delay_with_jitter
run_case test_late_reordered_replies_are_ignored_and_sync_recovers
run_case test_duplicated_replies_are_used_once
run_case test_corrupted_packets_never_become_time
