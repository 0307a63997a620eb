# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# ntpd-rs (ntp-daemon of Debian 13 "trixie" and testing "forky", from test/tools/fixtures/fetch-peers.sh)
# as NTS server on loopback. It never touches the clock: its configuration has no [[source]]
# (it then logs "No sources configured. Daemon will not change system time.", checked here),
# and it runs without CAP_SYS_TIME like every peer. Facts: /work/shared/PEERS.md.
[ -n "${_TSNTS_NTPD_RS_SH:-}" ] && return 0
_TSNTS_NTPD_RS_SH=1
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ntpd_rs_bin SUITE: prints the ntp-daemon of that suite's tree. A suite that fetch-peers.sh
# could not fetch skips the test, in CI too: a download is not a prerequisite CI can promise.
ntpd_rs_bin() {
        local bin="$TSNTS_PEERS_DIR/$1/root/usr/bin/ntp-daemon"
        if [ ! -x "$bin" ]; then
                [ ! -e "$TSNTS_PEERS_DIR/$1/.stamp" ] || fail "fetch-peers.sh completed $TSNTS_PEERS_DIR/$1 but ntp-daemon is missing"
                skip "ntpd-rs of $1 not fetched ($bin missing); run: test/tools/fixtures/fetch-peers.sh $TSNTS_PEERS_DIR"
        fi
        echo "$bin"
}

# ntpd_rs_version BIN: "1.9.0" from `ntp-daemon --version`.
ntpd_rs_version() {
        "$1" --version 2>&1 | sed -n 's/^ntp-daemon \([0-9][0-9.]*\).*/\1/p'
}

_ntpd_rs_listening() {
        local rundir=$1 ntpport=$2 keport=$3
        pid_alive "$(cat "$rundir/daemon.pid")" || fail "ntp-daemon exited during startup: $(tail -n 5 "$rundir/ntpd-rs.log")"
        [ -S "$rundir/observe" ] &&
                ss -Hltn "sport = :$keport" | grep_q '127\.0\.0\.1' &&
                ss -Hltn "sport = :$keport" | grep_q '\[::1\]' &&
                ss -Hlun "sport = :$ntpport" | grep_q '127\.0\.0\.1' &&
                ss -Hlun "sport = :$ntpport" | grep_q '\[::1\]'
}

# start_ntpd_rs_nts_server BIN RUNDIR CERTDIR NTPPORT KEPORT [KE-SERVER-LINE...]
# Serves stratum 1 NTP on port NTPPORT and NTS-KE on port KEPORT of 127.0.0.1 and ::1 with the
# test certificate, announcing NTPPORT in a Port record; KE-SERVER-LINEs go into its
# [[nts-ke-server]] tables (ntp-server = "NAME" adds a Server record). Its server keys are kept
# in RUNDIR/keys: a restart with that file keeps them, one without it makes new ones. Returns
# once it listens. Sets NTPD_RS_PID. Log: RUNDIR/ntpd-rs.log.
start_ntpd_rs_nts_server() {
        local bin=$1 rundir=$2 certdir=$3 ntpport=$4 keport=$5 line address
        shift 5
        mkdir -p "$rundir"
        rm -f "$rundir/observe"
        {
                echo "[observability]"
                echo "log-level = \"info\""
                echo "observation-path = \"$rundir/observe\""
                echo
                echo "[synchronization]"
                echo "local-stratum = 1"
                echo
                echo "[keyset]"
                echo "key-storage-path = \"$rundir/keys\""
                echo
                echo "[[server]]"
                echo "listen = \"127.0.0.1:$ntpport\""
                echo
                echo "[[server]]"
                echo "listen = \"[::1]:$ntpport\""
                for address in 127.0.0.1 "[::1]"; do
                        echo
                        echo "[[nts-ke-server]]"
                        echo "listen = \"$address:$keport\""
                        echo "certificate-chain-path = \"$certdir/server-chain.pem\""
                        echo "private-key-path = \"$certdir/server.key\""
                        echo "ntp-port = $ntpport"
                        for line; do echo "$line"; done
                done
        } >"$rundir/ntp.toml"
        # Its colours make the log hard to grep.
        start_daemon "$rundir/ntpd-rs.log" env NO_COLOR=1 "$bin" -c "$rundir/ntp.toml"
        NTPD_RS_PID=$DAEMON_PID
        echo "$NTPD_RS_PID" >"$rundir/daemon.pid"
        wait_for 10 _ntpd_rs_listening "$rundir" "$ntpport" "$keport" ||
                fail "ntp-daemon did not listen on $ntpport/udp and $keport/tcp within 10 s"
        assert_no_sys_time "$NTPD_RS_PID" ntp-daemon
        grep -q "No sources configured. Daemon will not change system time" "$rundir/ntpd-rs.log" ||
                fail "ntp-daemon did not say that it leaves the clock alone"
}

# stop_ntpd_rs RUNDIR: stops the server started with that RUNDIR (its keys file stays).
stop_ntpd_rs() {
        stop_daemon "$(cat "$1/daemon.pid")"
}
