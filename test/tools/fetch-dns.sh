#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Puts Debian's NSD (authoritative DNS server) and systemd-resolved under DEST/dns/root without
# installing either package: nsd's maintainer scripts start a service, and systemd-resolved
# takes over /etc/resolv.conf and the host's name resolution. Only their runtime libraries are
# installed (never upgraded); the .debs are downloaded and unpacked. A sibling of
# fetch-peers.sh with its own tree and stamp, so that a peers tree in use is never unpacked over.
#   fetch-dns.sh DEST
# Then: DEST/dns/root/usr/sbin/nsd, DEST/dns/root/lib/systemd/systemd-resolved,
#       DEST/dns/root/usr/bin/resolvectl (test/lib/dnssec.sh runs them).
# systemd-resolved links libsystemd-shared of the installed systemd package, so its version
# must be the installed systemd's exactly: the stamp records it, and a changed systemd makes the
# next run fetch again.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=fetch-lib.sh
. "$(dirname "$0")/fetch-lib.sh"

dest=${1:?usage: fetch-dns.sh DEST}
# What nsd links against besides libc, libssl and libsystemd (ldd on the unpacked binary).
runtime_libs=(libevent-2.1-7 libfstrm0 libprotobuf-c1 libssl3 libsystemd0)

mkdir -p "$dest/dns"
dir=$(cd "$dest/dns" && pwd)
stamp="$dir/.stamp"
systemd_version=$(dpkg-query -W -f='${Version}' systemd 2>/dev/null) ||
        { echo "fetch-dns: the systemd package is not installed" >&2; exit 1; }

report() {
        echo "nsd:              $dir/root/usr/sbin/nsd"
        echo "systemd-resolved: $dir/root/lib/systemd/systemd-resolved"
        echo "resolvectl:       $dir/root/usr/bin/resolvectl"
}

current() {
        [ -e "$stamp" ] && grep -qxF "systemd-resolved $systemd_version" "$stamp"
}

if current; then
        report
        exit 0
fi

exec 9>"$dir/.lock"
flock 9
if current; then
        report
        exit 0
fi

install_runtime_libs "${runtime_libs[@]}"
rm -f "$stamp"
fetch_and_unpack "$dir" nsd "systemd-resolved=$systemd_version"
check_binaries "$dir/root" fetch-dns usr/sbin/nsd lib/systemd/systemd-resolved usr/bin/resolvectl

{
        echo "nsd $(dpkg-deb -f "$dir/debs/nsd_"*.deb Version)"
        echo "systemd-resolved $systemd_version"
} >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
report
