# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# A private system-type D-Bus for tests, and a way to run Debian's timedatectl 252 against it
# although PID 1 is not systemd (see /work/shared/PEERS.md). The host's bus and /run are never
# used or changed.
[ -n "${_TSNTS_DBUS_SH:-}" ] && return 0
_TSNTS_DBUS_SH=1
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# start_system_bus [--policy FILE]: starts dbus-daemon with a system-bus configuration of our
# own: a unix socket in TEST_TMPDIR/dbus, no activatable services, and a policy that allows
# anyone to own any name and to send and receive anything; with --policy, the default policy of
# Debian's system bus instead (no name owned, no method called, unless a policy allows it) and
# FILE included, a daemon's bus policy to be tested as it is shipped. Exports
# DBUS_SYSTEM_BUS_ADDRESS; sets DBUS_PID.
start_system_bus() {
        local dir="$TEST_TMPDIR/dbus" policy
        command -v dbus-daemon >/dev/null || missing_prerequisite "dbus-daemon not installed (package dbus)"
        mkdir -p "$dir"
        if [ "${1:-}" = --policy ]; then
                policy="  <policy context=\"default\">
    <allow user=\"*\"/>
    <deny own=\"*\"/>
    <deny send_type=\"method_call\"/>
    <allow send_type=\"signal\"/>
    <allow send_requested_reply=\"true\" send_type=\"method_return\"/>
    <allow send_requested_reply=\"true\" send_type=\"error\"/>
    <allow receive_type=\"method_call\"/>
    <allow receive_type=\"method_return\"/>
    <allow receive_type=\"error\"/>
    <allow receive_type=\"signal\"/>
    <allow send_destination=\"org.freedesktop.DBus\" send_interface=\"org.freedesktop.DBus\"/>
    <allow send_destination=\"org.freedesktop.DBus\" send_interface=\"org.freedesktop.DBus.Introspectable\"/>
    <allow send_destination=\"org.freedesktop.DBus\" send_interface=\"org.freedesktop.DBus.Properties\"/>
  </policy>
  <include>$2</include>"
        else
                policy='  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>'
        fi
        # Others (an unprivileged user of a test) reach the socket too. services/: bus
        # activation files a test may put there (dbus-daemon starts their Exec= itself).
        chmod 0755 "$dir"
        mkdir -p "$dir/services"
        cat >"$dir/system.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$dir/services</servicedir>
$policy
</busconfig>
CONF
        # --fork returns once the bus listens; the daemon leaves our process tree, so track it.
        run_nosystime dbus-daemon --config-file="$dir/system.conf" --fork --print-pid=3 --nopidfile \
                --nosyslog 3>"$dir/dbus.pid" >"$dir/dbus.log" 2>&1
        DBUS_PID=$(cat "$dir/dbus.pid")
        track_pid "$DBUS_PID"
        [ -S "$dir/system_bus_socket" ] || fail "dbus-daemon did not create $dir/system_bus_socket"
        assert_no_sys_time "$DBUS_PID" dbus-daemon
        export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/system_bus_socket"
}

# in_systemd_run CMD...: runs CMD (a program, or a function of the test with everything it
# starts) in a private mount namespace where
#  - a directory of ours holding system/ is bind-mounted onto /run/systemd, which is how systemd
#    tools such as timedatectl decide that systemd is PID 1;
#  - /etc/hosts is a private copy that also resolves ntp.test to 127.0.0.1 and ::1 (a name in
#    the test certificates that is not "localhost").
# A test that needs the daemon and timedatectl together runs both from one function, inside one
# namespace. It composes with netns_exec: `netns_exec "$NETNS" in_systemd_run FUNCTION`.
in_systemd_run() {
        local dir="$TEST_TMPDIR/run-systemd" hosts="$TEST_TMPDIR/hosts" prefix
        [ -d /run/systemd ] || missing_prerequisite "/run/systemd does not exist to bind-mount over"
        mkdir -p "$dir/system"
        if [ ! -e "$hosts" ]; then
                cat /etc/hosts >"$hosts"
                printf '127.0.0.1 ntp.test\n::1 ntp.test\n' >>"$hosts"
        fi
        # unshare makes all mounts private first, so neither bind mount ever reaches the host.
        # shellcheck disable=SC2016,SC2034 # $0/$1/$@ are the inner shell's; run_with_prefix reads it
        prefix=(unshare --mount --propagation private
                bash -c 'mount --bind "$0" /run/systemd && mount --bind "$1" /etc/hosts && shift && exec "$@"'
                "$dir" "$hosts")
        run_with_prefix prefix "$@"
}
