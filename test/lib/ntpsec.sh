# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# NTPsec ntpd (1.2.2 from test/tools/fixtures/fetch-peers.sh; 1.2.3 and 1.2.5 from its trees of trixie
# and forky) as NTS server. Its ports are fixed (NTS-KE
# 4460, NTP 123) and it binds the wildcard addresses, so it only ever runs inside a network
# namespace of the test. Facts behind the configuration: /work/shared/PEERS.md.
[ -n "${_TSNTS_NTPSEC_SH:-}" ] && return 0
_TSNTS_NTPSEC_SH=1
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/suite-tree.sh"

# Exported so that functions run through netns_exec or in_systemd_run see them.
NTPD=$(peers_bin usr/sbin/ntpd)
NTPQ=$(peers_bin usr/bin/ntpq)
export NTPD NTPQ
# Fixed in NTPsec: the NTS-KE port is compiled in.
export NTPSEC_NTP_PORT=123 NTPSEC_KE_PORT=4460

# _ntpsec_in NS CMD...: CMD inside NS; "-" is the namespace the caller is in.
_ntpsec_in() {
        local ns=$1
        shift
        if [ "$ns" = - ]; then
                "$@"
        else
                ip netns exec "$ns" "$@"
        fi
}

_ntpsec_ke_listening() {
        local rundir=$1 ns=$2
        pid_alive "$(cat "$rundir/daemon.pid")" || fail "ntpd exited during startup: $(tail -n 5 "$rundir/ntpd.log")"
        _ntpsec_in "$ns" ss -Hltn "sport = :$NTPSEC_KE_PORT" | grep_q LISTEN
}

# Orphan mode needs a second or two before ntpd stops answering "unsynchronised".
_ntpsec_synchronised() {
        local ns=$1 answer leap stratum probe_in=()
        [ "$ns" = - ] || probe_in=(--netns "$ns")
        answer=$(ntp_probe ${probe_in[@]+"${probe_in[@]}"} 127.0.0.1 "$NTPSEC_NTP_PORT" 2>/dev/null) || return 1
        read -r leap stratum <<<"$answer"
        [ "$leap" != 3 ] && [ "$stratum" != 16 ]
}

# start_ntpsec_nts_server RUNDIR CERTDIR NS [CONFIG-LINE...]
# Runs ntpd inside NS (see netns_create; "-": the namespace of the caller, which the test
# made its own) without CAP_SYS_TIME, as a stratum-1 orphan with NTS on
# 4460/tcp and 123/udp. Returns when the KE port listens and NTP answers are synchronised.
# Sets NTPSEC_PID. Logs: RUNDIR/ntpd.log (its own log) and RUNDIR/ntpd.out.log.
# With NTPSEC_TREE, a Debian tree of a newer suite (fetch-peers.sh: DEST/SUITE/tree), that
# tree's ntpd runs instead, chrooted, in a mount namespace of its own where RUNDIR (with a copy
# of the server certificate and key) is bind-mounted on the tree's /mnt.
start_ntpsec_nts_server() {
        local rundir=$1 certdir=$2 ns=$3 line dir=$1 ntpd=("$NTPD")
        shift 3
        mkdir -p "$rundir"
        if [ -n "${NTPSEC_TREE:-}" ]; then
                suite_tree_command ntpd "$NTPSEC_TREE" "$rundir" "$certdir" /usr/sbin/ntpd
                dir=/mnt certdir=/mnt
        fi
        {
                echo "nts enable"
                echo "nts cert $certdir/server-chain.pem"
                echo "nts key $certdir/server.key"
                echo "nts cookie $dir/nts-keys"
                echo "nts mintls TLS1.3"
                # Orphan parent at stratum 1 after a second with no source. Not orphanwait 0:
                # since 1.2.5 a value below 1 means the default of 300 s, and until then ntpd
                # answers leap 3 (unsynchronised).
                echo "tos orphan 1 orphanwait 1"
                echo "disable ntp"
                echo "disable kernel"
                echo "restrict default kod limited nomodify noquery"
                echo "restrict 127.0.0.1"
                echo "restrict ::1"
                echo "statsdir $dir/"
                for line; do echo "$line"; done
        } >"$rundir/ntp.conf"
        # No -u: without CAP_SYS_TIME ntpd cannot drop root and would exit.
        local run_in=()
        [ "$ns" = - ] || run_in=(ip netns exec "$ns")
        start_daemon "$rundir/ntpd.out.log" ${run_in[@]+"${run_in[@]}"} "${NOSYSTIME[@]}" \
                "${ntpd[@]}" -n -c "$dir/ntp.conf" -p "$dir/ntpd.pid" -l "$dir/ntpd.log"
        NTPSEC_PID=$DAEMON_PID
        echo "$NTPSEC_PID" >"$rundir/daemon.pid"
        wait_for 10 _ntpsec_ke_listening "$rundir" "$ns" ||
                fail "ntpd did not listen on $NTPSEC_KE_PORT/tcp in $ns within 10 s"
        wait_for 10 _ntpsec_synchronised "$ns" ||
                fail "ntpd still answers unsynchronised after 10 s"
        assert_no_sys_time "$NTPSEC_PID" ntpd
}

# ntpsec_version: "1.2.2", the version of the ntpd that start_ntpsec_nts_server starts.
ntpsec_version() {
        if [ -n "${NTPSEC_TREE:-}" ]; then
                chroot "$NTPSEC_TREE" /usr/sbin/ntpd --version 2>&1
        else
                "$NTPD" --version 2>&1
        fi | sed -n 's/^ntpd ntpsec-\([0-9][0-9.]*\).*/\1/p'
}

# stop_ntpsec RUNDIR
stop_ntpsec() {
        stop_daemon "$(cat "$1/daemon.pid")"
}

# ntpsec_ntpq NS ARG...: NTPsec's ntpq from the fetch-peers tree, run inside NS.
ntpsec_ntpq() {
        local ns=$1
        shift
        PYTHONPATH="$TSNTS_PEERS_DIR/root/usr/lib/python3/dist-packages" \
                ip netns exec "$ns" /usr/bin/python3 "$NTPQ" "$@"
}
