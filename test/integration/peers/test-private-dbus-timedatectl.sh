#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The D-Bus fixture works: Debian's timedatectl reaches the private system bus from inside
# in_systemd_run (also inside a test network namespace), ntp.test resolves there, and the
# host's /run/systemd and /etc/hosts are left as they were.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../../lib source=dbus.sh
. "$(dirname "$0")/../../lib/dbus.sh"

command -v timedatectl >/dev/null || missing_prerequisite "timedatectl not installed (package systemd)"
test_init
host_had_system_dir=no
[ -e /run/systemd/system ] && host_had_system_dir=yes
host_hosts_sum=$(sha256sum </etc/hosts)
start_system_bus

test_timedatectl_reaches_private_bus() {
        local out
        # timedatectl exits non-zero: nobody owns the name. Its message proves it asked the bus.
        out=$(in_systemd_run timedatectl timesync-status 2>&1) && fail "timedatectl succeeded with no timesyncd on the bus: $out"
        grep -q 'org.freedesktop.timesync1 was not provided by any .service files' <<<"$out" ||
                fail "timedatectl did not reach the private bus: $out"
}

# Runs inside the namespace as one function, as a test with the daemon and timedatectl will.
check_inside() {
        local out
        [ -d /run/systemd/system ] || fail "/run/systemd/system missing inside in_systemd_run"
        [ -n "$DBUS_SYSTEM_BUS_ADDRESS" ] || fail "DBUS_SYSTEM_BUS_ADDRESS not passed in"
        out=$(timedatectl timesync-status 2>&1 || true)
        grep -q 'org.freedesktop.timesync1 was not provided' <<<"$out" ||
                fail "timedatectl timesync-status did not reach the private bus: $out"
}

test_function_runs_inside_mount_namespace() {
        in_systemd_run check_inside
}

check_ntp_test_resolves() {
        getent ahosts ntp.test | grep_q '^127\.0\.0\.1 ' || fail "ntp.test does not resolve to 127.0.0.1"
        getent ahosts ntp.test | grep_q '^::1 ' || fail "ntp.test does not resolve to ::1"
}

test_ntp_test_resolves_inside() {
        in_systemd_run check_ntp_test_resolves
}

# Inside a network namespace of the test and in_systemd_run at once: only lo exists, and the
# private bus (a unix socket, not the network) is still reachable.
check_inside_netns() {
        [ "$(ip -o link show | wc -l)" = 1 ] || fail "not inside the test's network namespace: $(ip -o link show)"
        check_inside
}

test_composes_with_network_namespace() {
        netns_create
        netns_exec "$NETNS" in_systemd_run check_inside_netns
}

test_host_run_systemd_unchanged() {
        local now=no
        [ -e /run/systemd/system ] && now=yes
        [ "$now" = "$host_had_system_dir" ] || fail "/run/systemd/system on the host changed ($host_had_system_dir -> $now)"
        [ -z "$(ls -A "$TEST_TMPDIR/run-systemd/system")" ] || fail "something wrote into the fake /run/systemd/system"
        [ "$(sha256sum </etc/hosts)" = "$host_hosts_sum" ] || fail "the host's /etc/hosts changed"
        ! grep -q ntp.test /etc/hosts || fail "ntp.test leaked into the host's /etc/hosts"
}

test_bus_runs_without_cap_sys_time() {
        assert_no_sys_time "$DBUS_PID" dbus-daemon
}

run_case test_timedatectl_reaches_private_bus
run_case test_function_runs_inside_mount_namespace
run_case test_ntp_test_resolves_inside
run_case test_composes_with_network_namespace
run_case test_host_run_systemd_unchanged
run_case test_bus_runs_without_cap_sys_time
