# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# chronyd 4.3 (from test/tools/fixtures/fetch-peers.sh) as NTS server on loopback, and as the reference
# NTS client. Facts behind the configuration: /work/shared/PEERS.md.
[ -n "${_TSNTS_CHRONY_SH:-}" ] && return 0
_TSNTS_CHRONY_SH=1
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/suite-tree.sh"

# Exported so that functions run through netns_exec or in_systemd_run see them.
CHRONYD=$(peers_bin usr/sbin/chronyd)
CHRONYC=$(peers_bin usr/bin/chronyc)
export CHRONYD CHRONYC

_chrony_listening() {
        local rundir=$1 ntpport=$2 keport=$3 bind4=${4//./\\.}
        pid_alive "$(cat "$rundir/daemon.pid")" || fail "chronyd exited during startup: $(tail -n 5 "$rundir/chronyd.log")"
        [ -S "$rundir/chronyd.sock" ] &&
                ss -Hltn "sport = :$keport" | grep_q "$bind4" &&
                ss -Hltn "sport = :$keport" | grep_q '\[::1\]' &&
                ss -Hlun "sport = :$ntpport" | grep_q "$bind4" &&
                ss -Hlun "sport = :$ntpport" | grep_q '\[::1\]'
}

# start_chrony_nts_server RUNDIR CERTDIR NTPPORT KEPORT [CONFIG-LINE...]
# Serves stratum 1 with NTS on 127.0.0.1 and ::1, without CAP_SYS_TIME and with -x. Returns once
# both ports and the command socket are up. Sets CHRONYD_PID. Log: RUNDIR/chronyd.log.
# Optional: the array CHRONY_ENV, VAR=VALUE words for chronyd's environment (true-time.so), and
# CHRONY_BIND4, another loopback address instead of 127.0.0.1 (chronyd as a client takes no two
# sources on one address, so the bench's four servers of one chronyd sit on 127.0.0.1 to .4),
# and CHRONY_TREE, a Debian tree of a newer suite (fetch-peers.sh: DEST/SUITE/tree) whose
# chronyd runs instead, chrooted, in a mount namespace of its own where RUNDIR (with a copy of
# the server certificate and key) is bind-mounted on the tree's /mnt.
start_chrony_nts_server() {
        local rundir=$1 certdir=$2 ntpport=$3 keport=$4 bind4=${CHRONY_BIND4:-127.0.0.1} line
        local dir=$1 chronyd=("$CHRONYD")
        shift 4
        mkdir -p "$rundir"
        # chronyd refuses a command socket directory that others can read.
        chmod 0700 "$rundir"
        rm -f "$rundir/chronyd.sock"
        if [ -n "${CHRONY_TREE:-}" ]; then
                suite_tree_command chronyd "$CHRONY_TREE" "$rundir" "$certdir" /usr/sbin/chronyd
                dir=/mnt certdir=/mnt
        fi
        {
                echo "local stratum 1"
                echo "allow 127.0.0.0/8"
                echo "allow ::1"
                echo "bindaddress $bind4"
                echo "bindaddress ::1"
                echo "port $ntpport"
                echo "ntsport $keport"
                echo "ntsservercert $certdir/server-chain.pem"
                echo "ntsserverkey $certdir/server.key"
                echo "ntsdumpdir $dir"
                echo "ntsprocesses 0"
                echo "cmdport 0"
                echo "bindcmdaddress $dir/chronyd.sock"
                echo "pidfile $dir/chronyd.pid"
                for line; do echo "$line"; done
        } >"$rundir/chrony.conf"
        start_daemon "$rundir/chronyd.log" ${CHRONY_ENV[@]+env "${CHRONY_ENV[@]}"} \
                "${chronyd[@]}" -x -d -u root -f "$dir/chrony.conf"
        CHRONYD_PID=$DAEMON_PID
        echo "$CHRONYD_PID" >"$rundir/daemon.pid"
        wait_for 10 _chrony_listening "$rundir" "$ntpport" "$keport" "$bind4" ||
                fail "chronyd did not listen on $ntpport/udp and $keport/tcp within 10 s"
        assert_no_sys_time "$CHRONYD_PID" chronyd
}

# start_nts_peer [CONFIG-LINE...]: the NTS server of a test: chronyd on two free loopback ports
# with the test PKI (make_test_certs first), run directory TEST_TMPDIR/chrony. Sets
# NTS_PEER_DIR, NTS_PEER_NTP_PORT, NTS_PEER_KE_PORT (and CHRONYD_PID).
start_nts_peer() {
        [ -n "${CERTDIR:-}" ] || fail "start_nts_peer: no test PKI (make_test_certs, daemon_test_init --certs)"
        NTS_PEER_DIR=$TEST_TMPDIR/chrony
        NTS_PEER_NTP_PORT=$(free_port)
        NTS_PEER_KE_PORT=$(free_port)
        start_chrony_nts_server "$NTS_PEER_DIR" "$CERTDIR" "$NTS_PEER_NTP_PORT" "$NTS_PEER_KE_PORT" "$@"
}

# chrony_version: "4.3", the version of the chronyd that start_chrony_nts_server starts.
chrony_version() {
        if [ -n "${CHRONY_TREE:-}" ]; then
                chroot "$CHRONY_TREE" /usr/sbin/chronyd -v
        else
                "$CHRONYD" -v
        fi | sed -n 's/^chronyd (chrony) version \([^ ]*\).*/\1/p'
}

# stop_chrony RUNDIR: stops the server started with that RUNDIR (its ntskeys file stays).
stop_chrony() {
        stop_daemon "$(cat "$1/daemon.pid")"
}

# chrony_serverstats RUNDIR: prints `chronyc serverstats` as NAME=VALUE lines, e.g.
#   NTS-KE connections accepted=1
#   Authenticated NTP packets=3
chrony_serverstats() {
        "$CHRONYC" -n -h "$1/chronyd.sock" serverstats |
                sed -n 's/^\(.*[^ ]\) *: *\([0-9][0-9.]*\)$/\1=\2/p'
}

# chrony_serverstat RUNDIR NAME: prints one counter of chrony_serverstats.
chrony_serverstat() {
        local value
        value=$(chrony_serverstats "$1" | sed -n "s/^$2=//p")
        [ -n "$value" ] || fail "chronyc serverstats has no counter '$2'"
        echo "$value"
}

# chrony_query_nts [--netns NS] HOST NTPPORT KEPORT CAFILE [CONFIG-LINE...]
# One measurement with the reference client (`chronyd -Q`, clock never touched), trusting only
# CAFILE. Succeeds only if chronyd printed "System clock wrong by": an NTS-authenticated
# response was accepted. Its output goes to stdout. CHRONY_QUERY_TIMEOUT (default 5 s) bounds
# how long it tries.
chrony_query_nts() {
        local prefix=() dir line rc=0
        if [ "$1" = --netns ]; then
                prefix=(ip netns exec "$2")
                shift 2
        fi
        local host=$1 ntpport=$2 keport=$3 cafile=$4
        shift 4
        dir=$(mktemp -d "$TEST_TMPDIR/chrony-query.XXXXXX")
        {
                echo "server $host port $ntpport nts ntsport $keport iburst minpoll -6 maxpoll -6"
                echo "ntstrustedcerts $cafile"
                echo "nosystemcert"
                echo "pidfile $dir/chronyd.pid"
                echo "cmdport 0"
                for line; do echo "$line"; done
        } >"$dir/client.conf"
        "${prefix[@]}" "${NOSYSTIME[@]}" "$CHRONYD" -Q -t "${CHRONY_QUERY_TIMEOUT:-5}" -u root -f "$dir/client.conf" >"$dir/query.log" 2>&1 || rc=$?
        cat "$dir/query.log"
        [ "$rc" = 0 ] && grep -q 'System clock wrong by' "$dir/query.log"
}
