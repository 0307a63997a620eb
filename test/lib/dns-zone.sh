# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# A DNSSEC-signed zone and NSD's configuration to serve it, for test/lib/dnssec.sh (the DNS
# fixture of the tests on this machine) and for the qemu guest of test/mkosi (run.sh signs the
# guest's zone with dns_sign; the guest's guest-checks.sh writes NSD's configuration with
# dns_nsd_conf, from its own copy of this file). Needs ldnsutils for dns_sign, nothing else.

# dns_sign DIR ORIGIN: makes a KSK and a ZSK in DIR (ECDSA P-256, ldns-keygen), writes
# DIR/ORIGIN.signed from DIR/ORIGIN.zone (ldns-signzone: NSEC, signatures valid from now for
# four weeks) and DIR/ORIGIN.ds, the KSK's DS (SHA-256) without its TTL, as systemd-resolved's
# dnssec-trust-anchors.d files take it. False when no DS came out.
dns_sign() {
        local dir=$1 origin=$2 ksk zsk
        (
                cd "$dir" || exit 1
                ksk=$(ldns-keygen -a ECDSAP256SHA256 -k "$origin.")
                zsk=$(ldns-keygen -a ECDSAP256SHA256 "$origin.")
                ldns-signzone -o "$origin." -f "$origin.signed" "$origin.zone" "$zsk" "$ksk"
                # "nts.test. 3600 IN DS 1234 13 2 HEX" -> without the TTL.
                ldns-key2ds -n -2 "$ksk.key" | awk '{ print $1, $3, $4, $5, $6, $7, $8 }' >"$origin.ds"
        )
        [ -s "$dir/$origin.ds" ]
}

# dns_nsd_conf DIR ADDRESS ZONESDIR ZONE=FILE...: writes DIR/nsd.conf for an NSD in the
# foreground (nsd -d -c DIR/nsd.conf) that serves each ZONE from ZONESDIR/FILE on ADDRESS port
# 53, as the user that starts it, with its state files in DIR and no control socket.
dns_nsd_conf() {
        local dir=$1 address=$2 zonesdir=$3 z
        shift 3
        {
                cat <<CONF
server:
  ip-address: $address
  port: 53
  username: ""
  chroot: ""
  database: ""
  zonelistfile: "$dir/zone.list"
  xfrdfile: "$dir/xfrd.state"
  xfrdir: "$dir"
  pidfile: "$dir/nsd.pid"
  zonesdir: "$zonesdir"
  server-count: 1
  verbosity: 2
remote-control:
  control-enable: no
CONF
                for z in "$@"; do
                        printf 'zone:\n  name: %s\n  zonefile: %s\n' "${z%%=*}" "${z#*=}"
                done
        } >"$dir/nsd.conf"
}
