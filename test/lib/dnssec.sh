# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# A DNSSEC-signed test zone served by NSD, and Debian's systemd-resolved 252 validating it, both
# offline and without touching the host: NSD and resolved run in a network namespace of the test,
# resolved also in a mount namespace with a private /run and /etc/passwd, and resolved answers on
# the test's private system bus (dbus.sh). NSD and resolved come from test/tools/fixtures/fetch-dns.sh;
# ldns-keygen/ldns-signzone/ldns-key2ds from the ldnsutils package. Facts behind the setup:
# /work/shared/DNSSEC.md.
#
#   dns_fixture_start            zones, keys, NSD, the bus and resolved with DNSSEC=yes
#   start_resolved no            restart resolved with DNSSEC=no (also: yes)
#   stop_resolved                stop it (the bus name goes away)
#
# The zones, with keys made anew for each run:
#   nts.test.        signed (ECDSA P-256 KSK + ZSK, NSEC); its DS is resolved's trust anchor
#     _ntske._tcp              SRV 10 60 4460 ke1, 10 20 4461 ke2, 20 0 4462 ke3
#     _ntske._tcp.broken       SRV 10 10 4460 ke1, whose RRSIG is corrupted after signing
#     _ntske._tcp.dot          SRV 0 0 0 . ("no such service", RFC 2782)
#     none                     A only: _ntske._tcp.none has no SRV records (NXDOMAIN)
#     ke1, ke2                 A 127.0.0.1       ke3  AAAA ::1
#     host                     A 127.0.0.1, AAAA ::1 (not in any /etc/hosts)
#     badsig                   A 127.0.0.1, whose RRSIG is corrupted after signing
#     plain                    NS: an insecure delegation (no DS) to the zone below
#   plain.nts.test.  unsigned
#     _ntske._tcp              SRV 10 10 4460 ke1.nts.test.
# DNS_FIXTURE_RECORDS (optional, set before dns_fixture_start): more lines for nts.test.,
# relative to its origin; they are signed with the rest.
[ -n "${_TSNTS_DNSSEC_SH:-}" ] && return 0
_TSNTS_DNSSEC_SH=1
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/dbus.sh"
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/dns-zone.sh"

# The tree of test/tools/fixtures/fetch-dns.sh (default: beside the peers tree).
export TSNTS_DNS_DIR=${TSNTS_DNS_DIR:-$TSNTS_PEERS_DIR/dns}
# Where NSD listens inside the namespace; resolved's only DNS server.
export DNS_SERVER=127.0.0.2
export DNS_ZONE=nts.test

# dns_bin PATH: a binary of the fetch-dns tree, as peers_bin does for the peers tree.
dns_bin() {
        local bin="$TSNTS_DNS_DIR/root/$1"
        [ -x "$bin" ] && { echo "$bin"; return 0; }
        [ -e "$TSNTS_DNS_DIR/.stamp" ] && fail "fetch-dns.sh completed in $TSNTS_DNS_DIR but $1 is missing"
        missing_prerequisite "$1 not found; run: test/tools/fixtures/fetch-dns.sh $(dirname "$TSNTS_DNS_DIR")"
}

NSD=$(dns_bin usr/sbin/nsd)
RESOLVED=$(dns_bin lib/systemd/systemd-resolved)
RESOLVECTL=$(dns_bin usr/bin/resolvectl)
export NSD RESOLVED RESOLVECTL
for _t in ldns-keygen ldns-signzone ldns-key2ds busctl; do
        command -v "$_t" >/dev/null || missing_prerequisite "$_t not installed (tools/install-deps.sh)"
done
unset _t

# _dns_break_signature FILE OWNER TYPE: corrupts the signature of the RRSIG covering TYPE at
# OWNER (fully qualified) in a signed zone file. The base64 keeps its length, so the record still
# parses; only the ECDSA check fails.
_dns_break_signature() {
        local file=$1 owner=$2 type=$3
        awk -v owner="$owner" -v type="$type" '
                $1 == owner && $4 == "RRSIG" && $5 == type {
                        sig = $NF
                        c = substr(sig, 20, 1) == "A" ? "B" : "A"
                        $NF = substr(sig, 1, 19) c substr(sig, 21)
                        done++
                }
                { print }
                END { if (!done) exit 1 }' "$file" >"$file.tmp" || fail "no RRSIG $type at $owner in $file"
        mv "$file.tmp" "$file"
}

_dns_write_zones() {
        local dir=$1
        mkdir -p "$dir"
        {
                echo "\$ORIGIN $DNS_ZONE."
                echo "\$TTL 300"
                echo "@ SOA ns hostmaster 1 3600 600 86400 300"
                echo "@ NS ns"
                echo "ns A $DNS_SERVER"
                echo "_ntske._tcp SRV 10 60 4460 ke1"
                echo "_ntske._tcp SRV 10 20 4461 ke2"
                echo "_ntske._tcp SRV 20 0 4462 ke3"
                echo "_ntske._tcp.broken SRV 10 10 4460 ke1"
                echo "_ntske._tcp.dot SRV 0 0 0 ."
                echo "none A 127.0.0.1"
                echo "ke1 A 127.0.0.1"
                echo "ke2 A 127.0.0.1"
                echo "ke3 AAAA ::1"
                echo "host A 127.0.0.1"
                echo "host AAAA ::1"
                echo "badsig A 127.0.0.1"
                echo "plain NS ns"
                echo "${DNS_FIXTURE_RECORDS:-}"
        } >"$dir/$DNS_ZONE.zone"
        dns_sign "$dir" "$DNS_ZONE" || fail "ldns-key2ds made no DS for $DNS_ZONE"
        _dns_break_signature "$dir/$DNS_ZONE.signed" "_ntske._tcp.broken.$DNS_ZONE." SRV
        _dns_break_signature "$dir/$DNS_ZONE.signed" "badsig.$DNS_ZONE." A
        {
                echo "\$ORIGIN plain.$DNS_ZONE."
                echo "\$TTL 300"
                echo "@ SOA ns.$DNS_ZONE. hostmaster.$DNS_ZONE. 1 3600 600 86400 300"
                echo "@ NS ns.$DNS_ZONE."
                echo "_ntske._tcp SRV 10 10 4460 ke1.$DNS_ZONE."
        } >"$dir/plain.$DNS_ZONE.zone"
}

_nsd_answers() {
        pid_alive "$NSD_PID" || fail "nsd exited during startup: $(tail -n 5 "$1/nsd.log")"
        ip netns exec "$DNS_NETNS" ss -Hlun "sport = :53" | grep_q "$DNS_SERVER"
}

# _start_nsd DIR: serves the zones of DIR on DNS_SERVER port 53 inside DNS_NETNS. Sets NSD_PID.
_start_nsd() {
        local dir=$1
        dns_nsd_conf "$dir" "$DNS_SERVER" "$dir" "$DNS_ZONE=$DNS_ZONE.signed" "plain.$DNS_ZONE=plain.$DNS_ZONE.zone"
        # -d: foreground, so that the PID is NSD's main process.
        start_daemon "$dir/nsd.log" ip netns exec "$DNS_NETNS" "$NSD" -d -c "$dir/nsd.conf"
        NSD_PID=$DAEMON_PID
        wait_for 10 _nsd_answers "$dir" || fail "nsd did not listen on $DNS_SERVER:53 within 10 s"
        assert_no_sys_time "$NSD_PID" nsd
}

# resolved drops its privileges to the user systemd-resolve and exits when there is none; the
# bus (on the host) must find a name for the same uid, or it drops resolved's connection. So
# the private /etc/passwd maps systemd-resolve to nobody's uid, which the host knows.
_resolved_prepare_root() {
        local dir=$1
        mkdir -p "$dir/run/systemd/resolved.conf.d" "$dir/run/dnssec-trust-anchors.d"
        { cat /etc/passwd; echo "systemd-resolve:x:65534:65534::/run/systemd/resolve:/usr/sbin/nologin"; } >"$dir/passwd"
        { cat /etc/group; echo "systemd-resolve:x:65534:"; } >"$dir/group"
        # resolved ignores a DNSKEY anchor under its built-in negative anchor "test"; a DS one
        # overrides it (DNSSEC.md).
        cp "$DNS_DIR/$DNS_ZONE.ds" "$dir/run/dnssec-trust-anchors.d/$DNS_ZONE.positive"
}

resolved_on_bus() {
        busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
                NameHasOwner s org.freedesktop.resolve1 2>/dev/null | grep_q -x 'b true'
}

_resolved_up() {
        pid_alive "$RESOLVED_PID" || fail "systemd-resolved exited during startup: $(tail -n 5 "$1/resolved.log")"
        resolved_on_bus
}

# start_resolved yes|no: (re)starts systemd-resolved with DNSSEC= set so, DNS_SERVER as its only
# server, inside DNS_NETNS with /run and /etc/passwd of its own (TEST_TMPDIR/resolved/run is
# bind-mounted on /run: the host's /run/systemd/resolve stays untouched). Returns when it owns
# org.freedesktop.resolve1 on the test's bus. Sets RESOLVED_PID.
start_resolved() {
        local dnssec=$1 dir="$TEST_TMPDIR/resolved"
        [ -n "${RESOLVED_PID:-}" ] && stop_resolved
        _resolved_prepare_root "$dir"
        cat >"$dir/run/systemd/resolved.conf.d/test.conf" <<CONF
[Resolve]
DNS=$DNS_SERVER
Domains=~$DNS_ZONE
DNSSEC=$dnssec
DNSOverTLS=no
LLMNR=no
MulticastDNS=no
FallbackDNS=
DNSStubListener=no
CONF
        # shellcheck disable=SC2016 # $0, $1 and $@ belong to the inner shell
        SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console start_daemon "$dir/resolved.log" \
                ip netns exec "$DNS_NETNS" unshare --mount --propagation private \
                bash -c 'mount --bind "$0/run" /run && mount --bind "$0/passwd" /etc/passwd &&
                         mount --bind "$0/group" /etc/group && exec "$1"' "$dir" "$RESOLVED"
        RESOLVED_PID=$DAEMON_PID
        wait_for 10 _resolved_up "$dir" || fail "systemd-resolved did not take org.freedesktop.resolve1 within 10 s"
        assert_no_sys_time "$RESOLVED_PID" systemd-resolved
}

_resolved_gone() {
        ! resolved_on_bus
}

# stop_resolved: stops systemd-resolved and waits until its bus name is gone.
stop_resolved() {
        stop_daemon "$RESOLVED_PID"
        RESOLVED_PID=
        wait_for 5 _resolved_gone || true
        ! resolved_on_bus || fail "org.freedesktop.resolve1 still owned after stopping systemd-resolved"
}

# dns_fixture_start: the zones (keys made anew), a network namespace with a veth link (resolved
# reports every lookup as NetworkDown when only lo is up), NSD, the private system bus, and
# resolved with DNSSEC=yes. Sets DNS_NETNS, DNS_DIR, NSD_PID, RESOLVED_PID, and exports
# DBUS_SYSTEM_BUS_ADDRESS.
dns_fixture_start() {
        export DNS_DIR="$TEST_TMPDIR/dns"
        _dns_write_zones "$DNS_DIR"
        netns_create
        export DNS_NETNS=$NETNS
        ip netns exec "$DNS_NETNS" ip link add tsnts0 type veth peer name tsnts1
        ip netns exec "$DNS_NETNS" ip address add 192.0.2.1/24 dev tsnts0
        ip netns exec "$DNS_NETNS" ip link set tsnts0 up
        ip netns exec "$DNS_NETNS" ip link set tsnts1 up
        _start_nsd "$DNS_DIR"
        [ -n "${DBUS_PID:-}" ] || start_system_bus
        # resolved reaches the bus socket as systemd-resolve (nobody): let it through the
        # directories, which mktemp made 0700.
        chmod a+x "$TEST_TMPDIR" "$TEST_TMPDIR/dbus"
        start_resolved yes
}

# resolvectl_query NAME TYPE: resolvectl query on the test's bus; its output and exit status.
resolvectl_query() {
        "$RESOLVECTL" --legend=yes query -t "$2" "$1"
}
