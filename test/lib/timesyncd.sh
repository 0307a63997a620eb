# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Helpers for tests of the daemon itself, on top of common.sh and dbus.sh (sourced here).
# The daemon always runs with --observe and without CAP_SYS_TIME (start_daemon drops it).
[ -n "${_TSNTS_TIMESYNCD_SH:-}" ] && return 0
_TSNTS_TIMESYNCD_SH=1
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/dbus.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/mock.sh"

export TIMESYNCD=${TSNTS_TIMESYNCD:-$TSNTS_BUILD_DIR/src/timesync/systemd-timesyncd}
export NTP_TEST_SERVER=${TSNTS_NTP_TEST_SERVER:-$TSNTS_BUILD_DIR/test/tools/mock-server/ntp-test-server}

# The daemon drops to the systemd-timesync user when it exists: let it reach its directories.
timesyncd_prepare() {
        [ -x "$TIMESYNCD" ] || fail "$TIMESYNCD not built"
        chmod 0755 "$TEST_TMPDIR"
        mkdir -p "$TEST_TMPDIR/state" "$TEST_TMPDIR/runtime"
        export TIMESYNCD_LOG=$TEST_TMPDIR/timesyncd.log
}

# daemon_test_init [--certs] [--timedatectl] [--bus]: the start of every daemon test: test_init
# and timesyncd_prepare; --certs: the test PKI (make_test_certs, sets CERTDIR); --timedatectl:
# Debian's timedatectl is a prerequisite; --bus: a private system bus (start_system_bus).
daemon_test_init() {
        local certs=0 timedatectl=0 bus=0 a
        for a in "$@"; do
                case $a in
                --certs) certs=1 ;;
                --timedatectl) timedatectl=1 ;;
                --bus) bus=1 ;;
                *) fail "daemon_test_init: unknown option $a" ;;
                esac
        done
        test_init
        timesyncd_prepare
        if [ "$certs" = 1 ]; then
                make_test_certs >/dev/null
        fi
        if [ "$timedatectl" = 1 ]; then
                command -v timedatectl >/dev/null || missing_prerequisite "timedatectl not installed (package systemd)"
        fi
        if [ "$bus" = 1 ]; then
                start_system_bus
        fi
}

# write_conf FILE LINE...: a timesyncd.conf with a [Time] section. Its first line is an empty
# FallbackNTS=, so that a daemon without NTS= and NTP= never looks up the compiled-in public
# NTS servers (-Ddefault-nts-servers=); a LINE that sets FallbackNTS= comes after it and wins.
write_conf() {
        local f=$1
        shift
        { echo "[Time]"; echo "FallbackNTS="; printf '%s\n' "$@"; } >"$f"
        chmod 0644 "$f"
}

# start_timesyncd CONF [ARG...]: the daemon in observe mode, logs in $TIMESYNCD_LOG. An empty
# CONF: no --config=, the standard search (see use_config_root).
# Optional: TIMESYNCD_LOG_LEVEL (default debug), TIMESYNCD_LOG_TARGET (default console); the array TIMESYNCD_WRAPPER, commands put
# before the daemon (an unshare that changes its mount namespace...), each of which must exec
# the next so that the PID stays the daemon's. Both may be unset (inside netns_exec...).
start_timesyncd() {
        local conf=$1 config=()
        shift
        [ -z "$conf" ] || config=(--config="$conf")
        # The compiled-in FallbackNTS= names public servers: a daemon of a test never uses it
        # through this machine's resolver (see write_conf and use_config_root); a test of the
        # default itself sets TSNTS_DEFAULT_NTS_OK=1 in a namespace with its own hosts file.
        if [ "${TSNTS_DEFAULT_NTS_OK:-0}" != 1 ]; then
                if [ -n "$conf" ]; then
                        grep -q '^FallbackNTS=' "$conf" ||
                                fail "start_timesyncd: $conf has no FallbackNTS= line (use write_conf)"
                else
                        [ -n "${TIMESYNCD_WRAPPER+x}" ] ||
                                fail "start_timesyncd: the standard search needs use_config_root"
                fi
        fi
        start_daemon "$TIMESYNCD_LOG" ${TIMESYNCD_WRAPPER[@]+"${TIMESYNCD_WRAPPER[@]}"} \
                env SYSTEMD_LOG_LEVEL="${TIMESYNCD_LOG_LEVEL:-debug}" SYSTEMD_LOG_TARGET="${TIMESYNCD_LOG_TARGET:-console}" \
                "$TIMESYNCD" --observe ${config[@]+"${config[@]}"} --state-dir="$TEST_TMPDIR/state" \
                --runtime-dir="$TEST_TMPDIR/runtime" "$@"
        TIMESYNCD_PID=$DAEMON_PID
        wait_exec "$TIMESYNCD_PID" systemd-timesyncd
        wait_signals_blocked "$TIMESYNCD_PID"
        assert_no_sys_time "$TIMESYNCD_PID" systemd-timesyncd
}

# use_config_root ROOT: the daemon that start_timesyncd "" starts next reads the files of the
# standard search (timesyncd.conf and its drop-ins) and networkd's state from ROOT: in a mount
# namespace of the daemon's own, ROOT/etc/systemd, ROOT/run/systemd, ROOT/usr/lib/systemd (and
# ROOT/usr/local/lib/systemd if the host has that directory) are bind-mounted over the real
# ones, which neither the daemon nor the test ever sees or changes. Sets TIMESYNCD_WRAPPER.
use_config_root() {
        local d
        for d in /etc/systemd /run/systemd /usr/local/lib/systemd /usr/lib/systemd; do
                mkdir -p "$1$d"
        done
        # As in write_conf: no compiled-in public NTS server, unless a test's own drop-in
        # (named after this one) sets FallbackNTS= again.
        mkdir -p "$1/usr/lib/systemd/timesyncd.conf.d"
        printf '[Time]\nFallbackNTS=\n' >"$1/usr/lib/systemd/timesyncd.conf.d/00-test-no-fallback-nts.conf"
        chmod -R a+rX "$1"
        # shellcheck disable=SC2016 # $0, $d and $@ are the inner shell's
        TIMESYNCD_WRAPPER=(unshare --mount --propagation private
                bash -c 'for d in /etc/systemd /run/systemd /usr/local/lib/systemd /usr/lib/systemd; do
                        [ ! -d "$d" ] || mount --bind "$0$d" "$d" || exit 1; done; exec "$@"' "$1")
}

log_has() { grep -q -- "$1" "$TIMESYNCD_LOG"; }

# nts_status_is TEXT: NTSStatus is TEXT; a TEXT that ends in "clock left alone" is followed by
# " since TIME", as the daemon says it.
nts_status_is() {
        local s
        s=$(timesync_property NTSStatus)
        [ "$s" = "$1" ] || { [[ $1 == *"clock left alone" ]] && [[ $s == "$1 since "* ]]; }
}

# wait_log PATTERN [SECS]: fails the test with the log excerpt if PATTERN does not appear.
wait_log() {
        wait_for "${2:-10}" log_has "$1" || fail "no '$1' in the daemon log within ${2:-10} s"
}

# start_ntp_test_server NAME PORT [ARG...]: sets NTS_SERVER_PID_<NAME>; waits for READY.
start_ntp_test_server() {
        local name=$1 port=$2 out
        shift 2
        out=$TEST_TMPDIR/ntp-$name.log
        : >"$out"       # no READY of an earlier server of that name (start_mock_server)
        "${NOSYSTIME[@]}" "$NTP_TEST_SERVER" --listen="127.0.0.1:$port" \
                --count-file="$TEST_TMPDIR/ntp-$name.count" "$@" >"$out" 2>&1 &
        track_pid $!
        printf -v "NTP_SERVER_PID_$name" '%s' $!
        wait_for 5 grep -q READY "$out" || fail "ntp-test-server $name did not start"
}

ntp_served() { cat "$TEST_TMPDIR/ntp-$1.count" 2>/dev/null || echo 0; }

# mark_ntp_served NAME...: remember what the ntp-test-servers NAME... got so far, for
# assert_ntp_servers_unused (which counts from 0 for a server never marked).
mark_ntp_served() {
        local n
        for n; do printf -v "NTP_SERVED_MARK_$n" '%s' "$(ntp_served "$n")"; done
}

# assert_ntp_servers_unused NAME...: the ntp-test-servers NAME... (plain NTP servers) got no
# request since mark_ntp_served, no server at 127.0.0.1 was selected (in the log since it was
# last emptied: plain servers are configured by address), and the daemon still runs.
assert_ntp_servers_unused() {
        local n mark
        for n; do
                mark=NTP_SERVED_MARK_$n
                [ "$(ntp_served "$n")" = "${!mark:-0}" ] ||
                        fail "the plain server $n got $(($(ntp_served "$n") - ${!mark:-0})) requests"
        done
        ! log_has "Selected server 127.0.0.1:" || fail "a plain NTP server was selected"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died"
}

# assert_never_synchronized: no time from any server (in the log since it was last emptied),
# no synchronized flag, and the daemon still runs.
assert_never_synchronized() {
        log_has "Initial clock synchronization" && fail "the daemon synchronized"
        log_has "Contacted time server" && fail "the daemon used a time server"
        [ ! -e "$TEST_TMPDIR/runtime/synchronized" ] || fail "synchronized flag written"
        pid_alive "$TIMESYNCD_PID" || fail "the daemon died"
}

# assert_plain_servers_unused NAME...: "no fallback": nothing synchronized, and the plain
# servers NAME... were neither asked nor selected.
assert_plain_servers_unused() {
        assert_never_synchronized
        assert_ntp_servers_unused "$@"
}

# ---- NTS (test/integration/nts) ----

# stop_timesyncd: SIGTERM the daemon of start_timesyncd and reap it; fails unless it exits 0,
# and when its stall check found it with nothing in progress (that check's "(a bug)" line: a
# state the daemon should never reach, which it only leaves by starting over).
stop_timesyncd() {
        local rc=0
        kill -TERM "$TIMESYNCD_PID" 2>/dev/null || true
        wait "$TIMESYNCD_PID" 2>/dev/null || rc=$?
        [ "$rc" = 0 ] || fail "systemd-timesyncd exited with $rc on SIGTERM"
        ! grep -q "(a bug)" "$TIMESYNCD_LOG" 2>/dev/null || fail "the daemon stalled: $(grep -m1 "(a bug)" "$TIMESYNCD_LOG")"
}

# restart_fresh_timesyncd CONF [ARG...]: stops the daemon of an earlier start_timesyncd if it
# runs, forgets the cookie jars, empties the daemon log (and the notification log if there is
# one), and starts it again with CONF and ARGs: each case of a test from the same state.
restart_fresh_timesyncd() {
        if [ -n "${TIMESYNCD_PID:-}" ] && pid_alive "$TIMESYNCD_PID"; then
                stop_timesyncd
        fi
        rm -f "$TEST_TMPDIR"/state/nts-*.jar
        : >"$TIMESYNCD_LOG"
        [ -z "${NOTIFY_OUT:-}" ] || : >"$NOTIFY_OUT"
        start_timesyncd "$@"
}

# write_nts_conf FILE KEHOST:KEPORT [LINE...]: NTS= that one server, trusting only the test CA
# of make_test_certs.
write_nts_conf() {
        local f=$1 server=$2
        shift 2
        write_conf "$f" "NTS=$server" "NTSTrustedCertificates=$CERTDIR/ca.pem" "$@"
}

# log_count PATTERN: how many daemon log lines match.
log_count() { grep -c -- "$1" "$TIMESYNCD_LOG" || true; }

_log_count_at_least() { [ "$(log_count "$1")" -ge "$2" ]; }

# wait_log_count PATTERN N [SECS]: waits until PATTERN appeared N times in the daemon log.
wait_log_count() {
        wait_for "${3:-10}" _log_count_at_least "$1" "$2" ||
                fail "'$1' not $2 times in the daemon log within ${3:-10} s (seen $(log_count "$1"))"
}

# timesync_property NAME: one property of org.freedesktop.timesync1.Manager, as timedatectl
# show-timesync prints its value. Needs start_system_bus.
timesync_property() {
        in_systemd_run timedatectl show-timesync -p "$1" --value
}

# nts_jar_file KEHOST:KEPORT: where the daemon keeps the cookies of that NTS server (the mapping of
# nts_jar_file_name() in timesyncd-nts-jar.c: letters, digits, '.' and '-' kept, ':' to '_', any
# other byte to %XX).
nts_jar_file() {
        local name=$1 out="" c i
        for (( i = 0; i < ${#name}; i++ )); do
                c=${name:i:1}
                case $c in
                [a-zA-Z0-9.-]) out+=$c ;;
                :) out+=_ ;;
                *) printf -v c '%%%02X' "'$c"; out+=$c ;;
                esac
        done
        echo "$TEST_TMPDIR/state/nts-$out.jar"
}

# ---- the mock NTS server (test/tools/mock-server/nts-mock-server, started by mock.sh) ----

# start_nts_mock NAME [ARG...]: start_mock_server on free ports that it announces as its NTP
# server (start_mock_server's mock announces none of its own): with the test certificates,
# honest unless an ARG says --sabotage=MODE (or --kiss=CODE); its counts (KE sessions, NTP
# requests, NAKs, kiss codes, distinct and reused cookies) in $TEST_TMPDIR/mock-NAME.count
# (mock_count), its log in mock-NAME.log. Sets MOCK_PID, MOCK_KE, MOCK_NTP.
start_nts_mock() {
        local name=$1
        shift
        MOCK_KE=$(free_port)
        MOCK_NTP=$(free_port)
        start_mock_server "$name" --ke-port="$MOCK_KE" --ntp-listen-port="$MOCK_NTP" --ntp-port="$MOCK_NTP" "$@"
}

# start_nts_conflict NAME: a conflict of claims on the loopback. An honest mock (NAME-own, from
# start_nts_mock) and a second one (NAME-claim) on a key-exchange port of its own that names the
# first one's NTP address and port; both share one cookie key ($TEST_TMPDIR/mock-NAME.keys), so
# the first answers both. On the loopback, key-exchange ports tell servers apart, so the two are
# not one server. Sets CONFLICT_OWN and CONFLICT_CLAIM (localhost:KEPORT each; listed in that
# order, the claim is the later source, the one the daemon's message names first) and the array
# CONFLICT_PIDS.
# shellcheck disable=SC2034 # CONFLICT_OWN and CONFLICT_CLAIM are the caller's
start_nts_conflict() {
        local keys=$TEST_TMPDIR/mock-$1.keys
        start_nts_mock "$1-own" --keys-file="$keys"
        CONFLICT_OWN=localhost:$MOCK_KE
        CONFLICT_PIDS=("$MOCK_PID")
        start_mock_server "$1-claim" --keys-file="$keys" --ntp-server=127.0.0.1 --ntp-port="$MOCK_NTP"
        CONFLICT_CLAIM=localhost:$MOCK_KE_PORT
        CONFLICT_PIDS+=("$MOCK_PID")
}

# start_fresh_timesyncd OFFSET CLOCK_FILE_MTIME NTS-LIST [CONF-LINE...] [-- OPTION...]: stops
# the daemon of an earlier call and starts one with NTS=NTS-LIST and CONF-LINEs, a fresh state
# directory whose clock file has that mtime (epoch seconds; "none": no file), unless OFFSET is
# "real" the fake clock OFFSET seconds off the system's, and the daemon OPTIONs (the bootstrap
# tests).
start_fresh_timesyncd() {
        local offset=$1 mtime=$2 nts=$3 conf_lines=() options=()
        shift 3
        while [ $# -gt 0 ] && [ "$1" != -- ]; do
                conf_lines+=("$1")
                shift
        done
        [ $# -eq 0 ] || { shift; options=("$@"); }
        if [ -n "${TIMESYNCD_PID:-}" ]; then
                stop_timesyncd
                TIMESYNCD_PID=
        fi
        rm -rf "$TEST_TMPDIR/state"
        mkdir -p "$TEST_TMPDIR/state"
        [ "$mtime" = none ] || touch -d "@$mtime" "$TEST_TMPDIR/state/clock"
        [ "$offset" = real ] || options+=(--test-clock-offset="${offset}s")
        : >"$TIMESYNCD_LOG"
        write_nts_conf "$TEST_TMPDIR/ts.conf" "$nts" ${conf_lines[@]+"${conf_lines[@]}"}
        start_timesyncd "$TEST_TMPDIR/ts.conf" ${options[@]+"${options[@]}"}
}

# for_each_mode ONLY CHECK LABEL: CHECK MODE PATTERN for each line "SIDE MODE PATTERN" of $MODES
# whose SIDE or MODE is ONLY (every line when ONLY is empty); fails when no line is.
for_each_mode() {
        local only=$1 check=$2 label=$3 side mode pattern n=0
        while read -r side mode pattern; do
                [ -z "$only" ] || [ "$side" = "$only" ] || [ "$mode" = "$only" ] || continue
                log "$label: $mode"
                "$check" "$mode" "$pattern"
                n=$((n + 1))
        done <<<"$MODES"
        [ "$n" -gt 0 ] || fail "no $label mode for '$only'"
}

# start_mock MODE: start_nts_mock MODE --sabotage=MODE (see the mock's --help; SIGUSR1 to
# MOCK_PID makes it behave).
start_mock() { start_nts_mock "$1" --sabotage="$1"; }

nts_authenticated_on_bus() { [ "$(timesync_property NTSAuthenticated 2>/dev/null)" = yes ]; }

# assert_nts_on_bus KESERVER AEAD TITLE: `timedatectl show-timesync --all` says that the time
# comes NTS-authenticated, with AEAD, from the key exchange with KESERVER (host:port). The whole
# transcript goes to stdout, the test log, under TITLE. Needs start_system_bus.
assert_nts_on_bus() {
        local ke=$1 aead=$2 show=$TEST_TMPDIR/show-timesync.txt
        # The daemon may still be connecting to the bus when it synchronizes.
        wait_for 10 nts_authenticated_on_bus || fail "NTSAuthenticated never became yes on the bus"
        in_systemd_run timedatectl show-timesync --all >"$show"
        echo "---- transcript: timedatectl show-timesync --all ($3) ----"
        cat "$show"
        echo "---- end of transcript ----"
        grep -qx "NTS=yes" "$show" || fail "NTS is not yes"
        grep -qx "NTSAuthenticated=yes" "$show" || fail "NTSAuthenticated is not yes"
        grep -qx "NTSAEAD=$aead" "$show" || fail "NTSAEAD is not $aead"
        grep -Eqx "NTSCookies=[1-8]" "$show" || fail "NTSCookies is not between 1 and 8"
        grep -qx "NTSKeyExchangeServer=$ke" "$show" || fail "NTSKeyExchangeServer is not $ke"
        grep -qx "NTSKeyExchangeFailures=0" "$show" || fail "NTSKeyExchangeFailures is not 0"
        grep -qx "NTSStatus=" "$show" || fail "NTSStatus is not empty"
        # A point in time: timedatectl prints it as a date only if the name ends in Timestamp.
        grep -Eqx "NTSLastKeyExchangeTimestamp=[A-Z][a-z]{2} [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} .*" "$show" ||
                fail "NTSLastKeyExchangeTimestamp is not shown as a date"
        [ "$(timesync_property NTSAuthenticated)" = yes ] ||
                fail "show-timesync -p NTSAuthenticated does not say yes"
}

# start_stalling_listener PORT: a TCP listener on 127.0.0.1:PORT that accepts one connection
# (a key exchange) and never answers; $TEST_TMPDIR/stall.log says READY, ACCEPTED, CLOSED, the
# last two followed by " t=SECONDS" (CLOCK_MONOTONIC; see stalled_seconds).
start_stalling_listener() {
        : >"$TEST_TMPDIR/stall.log"     # no READY of an earlier listener (start_mock_server)
        /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4); print("READY", flush=True)
c, _ = s.accept(); print("ACCEPTED t=%.3f" % time.monotonic(), flush=True)
while c.recv(4096): pass
print("CLOSED t=%.3f" % time.monotonic(), flush=True)' "$1" >"$TEST_TMPDIR/stall.log" 2>&1 &
        track_pid $!
        wait_for 5 grep -q READY "$TEST_TMPDIR/stall.log" || fail "stalling listener did not start"
}

# stalled_seconds: how long the connection of start_stalling_listener stayed open, whole seconds.
stalled_seconds() {
        awk -F't=' '/^ACCEPTED/ { a = $2 } /^CLOSED/ { c = $2 } END { printf "%d\n", c - a }' "$TEST_TMPDIR/stall.log"
}

# start_notify_listener: a stand-in for the service manager's notification socket
# (notify-listen.py); exports NOTIFY_SOCKET for the daemons started after it and sets NOTIFY_OUT,
# the file that gets one line per message.
start_notify_listener() {
        local sock=$TEST_TMPDIR/notify.sock
        NOTIFY_OUT=$TEST_TMPDIR/notify.txt
        rm -f "$sock"
        : >"$TEST_TMPDIR/notify.log"    # no READY of an earlier listener (start_mock_server)
        /usr/bin/python3 "$TSNTS_SRC_DIR/test/tools/readers/notify-listen.py" "$sock" "$NOTIFY_OUT" \
                >"$TEST_TMPDIR/notify.log" 2>&1 &
        track_pid $!
        wait_for 5 grep -q READY "$TEST_TMPDIR/notify.log" || fail "notify listener did not start"
        # The daemon may run as systemd-timesync.
        chmod 0777 "$sock"
        export NOTIFY_SOCKET=$sock
}

# reload_timesyncd: SIGHUP, and wait for the READY=1 that ends the reload (needs
# start_notify_listener before start_timesyncd).
reload_timesyncd() {
        local ready
        ready=$(grep -c "READY=1" "$NOTIFY_OUT" || true)
        kill -HUP "$TIMESYNCD_PID"
        wait_for 10 _notify_ready_above "$ready" || fail "no READY=1 within 10 s of SIGHUP"
}

_notify_ready_above() { [ "$(grep -c "READY=1" "$NOTIFY_OUT" || true)" -gt "$1" ]; }

# notify_statuses: every STATUS= text the daemon sent so far, one per line, oldest first.
notify_statuses() { sed -n 's/.*STATUS=\([^|]*[^| ]\).*/\1/p' "$NOTIFY_OUT"; }

# last_status: the STATUS= text `systemctl status` would show now.
last_status() { notify_statuses | tail -n 1; }

# ---- several NTS sources (test/daemon-nts/test-nts-several*.sh) ----

# sources_json: the Sources property (one object per source, keys as on D-Bus, plain values) as
# a JSON array. Needs start_system_bus.
sources_json() {
        in_systemd_run busctl --system --json=short get-property org.freedesktop.timesync1 \
                /org/freedesktop/timesync1 org.freedesktop.timesync1.Manager Sources |
                /usr/bin/python3 -c 'import json, sys
print(json.dumps([{k: v["data"] for k, v in s.items()} for s in json.load(sys.stdin)["data"]]))'
}

# source_field NAME KEY: one value of the source NAME (as configured) in Sources; empty when
# there is no such source or key.
source_field() {
        sources_json | /usr/bin/python3 -c 'import json, sys
for s in json.load(sys.stdin):
    if s.get("Name") == sys.argv[1]:
        v = s.get(sys.argv[2], "")
        print(str(v).lower() if isinstance(v, bool) else v)' "$1" "$2"
}

_source_field_is() { [ "$(source_field "$1" "$2")" = "$3" ]; }

# wait_source_field NAME KEY VALUE [SECS]: fails the test unless Sources says so in time.
wait_source_field() {
        wait_for "${4:-20}" _source_field_is "$1" "$2" "$3" ||
                fail "Sources: $2 of $1 is '$(source_field "$1" "$2")', not '$3' within ${4:-20} s"
}

# stop_chronys: stops every chronyd of start_chrony_at and removes its run directory.
stop_chronys() {
        local d
        for d in "$TEST_TMPDIR"/chrony-*; do
                [ -d "$d" ] || continue
                stop_chrony "$d"
                rm -rf "$d"
        done
}

# start_chronys NAME:OFFSET[/DRIFT]...: start_chrony_at for each; their ports by NAME in the global
# associative arrays SERVER_KE and SERVER_NTP, and NAMES the NTS= entries ("localhost:KE-PORT")
# in that order.
# shellcheck disable=SC2034 # SERVER_KE, SERVER_NTP and NAMES are the caller's
start_chronys() {
        local spec
        declare -gA SERVER_KE=() SERVER_NTP=()
        NAMES=()
        for spec; do
                start_chrony_at "${spec%%:*}" "${spec#*:}"
                SERVER_KE[${spec%%:*}]=$CHRONY_KE
                SERVER_NTP[${spec%%:*}]=$CHRONY_NTP
                NAMES+=("localhost:$CHRONY_KE")
        done
}

# start_chrony_at NAME OFFSET[/DRIFT]: a chronyd NTS server (test certificates) whose clock is
# OFFSET nanoseconds ahead of the system's (0: the system's; true-time.so otherwise) and, with
# DRIFT, gains DRIFT nanoseconds per second from its start on (negative: loses them); its run
# directory $TEST_TMPDIR/chrony-NAME. Sets CHRONY_KE and CHRONY_NTP (its ports).
start_chrony_at() {
        CHRONY_NTP=$(free_port)
        CHRONY_KE=$(free_port)
        _start_chrony_at "$1" "$2"
}

# restart_chrony_at NAME OFFSET[/DRIFT]: the chronyd NAME of start_chronys stopped and started
# again on its ports with that clock (a server that starts lying); the cookies it issued stay
# valid, as its keys do.
restart_chrony_at() {
        stop_chrony "$TEST_TMPDIR/chrony-$1"
        CHRONY_NTP=${SERVER_NTP[$1]}
        CHRONY_KE=${SERVER_KE[$1]}
        _start_chrony_at "$1" "$2"
}

# shellcheck disable=SC2034 # CHRONY_ENV is read by start_chrony_nts_server, which this calls
_start_chrony_at() {
        local name=$1 offset=${2%%/*} drift=0 base
        local CHRONY_ENV=()
        [ "$2" = "$offset" ] || drift=${2#*/}
        if [ "$offset" != 0 ] || [ "$drift" != 0 ]; then
                if [ ! -f "$TSNTS_TRUE_TIME" ] || [ ! -x "$TSNTS_TRUE_TIME_BASE" ]; then
                        fail "true-time.so not built"
                fi
                base=$("$TSNTS_TRUE_TIME_BASE")
                CHRONY_ENV=("LD_PRELOAD=$TSNTS_TRUE_TIME" "TRUE_TIME_BASE=$((${base%:*} + offset)):${base#*:}"
                        "TRUE_TIME_DRIFT=$drift")
        fi
        start_chrony_nts_server "$TEST_TMPDIR/chrony-$name" "$CERTDIR" "$CHRONY_NTP" "$CHRONY_KE"
}

# drop NAME...: from now on every packet the servers NAME of SERVER_NTP and SERVER_KE send (NTP
# replies, key-exchange segments) is dropped, as an attacker on the path would. Only in a
# network namespace of the test's own (netns_create), with nft.
drop() {
        local name udp=() tcp=()
        command -v nft >/dev/null || missing_prerequisite "nft not installed (package nftables)"
        for name; do
                udp+=("${SERVER_NTP[$name]}")
                tcp+=("${SERVER_KE[$name]}")
        done
        nft -f - <<NFT
table inet tsnts_drop {
        chain out {
                type filter hook output priority 0; policy accept;
                udp sport { $(IFS=,; echo "${udp[*]}") } counter drop
                tcp sport { $(IFS=,; echo "${tcp[*]}") } counter drop
        }
}
NFT
}

# undrop: the packets of drop go through again.
undrop() { nft delete table inet tsnts_drop; }

# dropped_packets: how many packets drop dropped so far.
dropped_packets() {
        nft list table inet tsnts_drop | awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}

# run_in_netns FUNCTION [ARG...]: a network namespace of the test's own, FUNCTION run in it.
run_in_netns() {
        netns_create
        netns_exec "$NETNS" "$@"
}
