#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Puts Debian's chrony and NTPsec binaries under DEST/root without installing those packages:
# their maintainer scripts would start system services, and the two packages conflict.
# Only their runtime libraries are installed (never upgraded); the .debs are downloaded and
# unpacked. Idempotent: DEST/.stamp marks a complete tree and makes a second run instant.
#   fetch-peers.sh DEST
# Then: DEST/root/usr/sbin/chronyd, DEST/root/usr/bin/chronyc, DEST/root/usr/sbin/ntpd,
#       DEST/root/usr/bin/ntpq (needs PYTHONPATH, see test/lib/ntpsec.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=fetch-lib.sh
. "$(dirname "$0")/fetch-lib.sh"

dest=${1:?usage: fetch-peers.sh DEST}
packages=(chrony ntpsec python3-ntp)
# What chronyd, chronyc, ntpd, libntpc and ntpq link against or run on (found with ldd on the
# unpacked binaries). python3 is Debian's interpreter: ntpq's #! is /usr/bin/python3. netbase
# (/etc/services) is a dependency of the ntpsec package, kept for its name lookups.
runtime_libs=(libc6 libcap2 libedit2 libgnutls30 libnettle8 libseccomp2 libbsd0 libssl3 python3 netbase)

report() {
        echo "chronyd: $dest/root/usr/sbin/chronyd"
        echo "chronyc: $dest/root/usr/bin/chronyc"
        echo "ntpd:    $dest/root/usr/sbin/ntpd"
        echo "ntpq:    $dest/root/usr/bin/ntpq (PYTHONPATH=$dest/root/usr/lib/python3/dist-packages)"
}

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
stamp="$dest/.stamp"

if [ -e "$stamp" ]; then
        report
        exit 0
fi

# Two runs at once (parallel CI steps) must not unpack over each other.
exec 9>"$dest/.lock"
flock 9
if [ -e "$stamp" ]; then
        report
        exit 0
fi

install_runtime_libs "${runtime_libs[@]}"
fetch_and_unpack "$dest" "${packages[@]}"

# ntp/ntpc.py looks for libntpc.so next to itself first; point that at the unpacked library so
# ntpq works from the tree without touching the host's /usr/lib.
libntpc=$(find "$dest/root/usr/lib" -name 'libntpc.so.*.*' -type f | head -n1)
[ -n "$libntpc" ] || { echo "fetch-peers: libntpc not found in python3-ntp" >&2; exit 1; }
ln -sfn "$(realpath --relative-to="$dest/root/usr/lib/python3/dist-packages/ntp" "$libntpc")" \
        "$dest/root/usr/lib/python3/dist-packages/ntp/libntpc.so"

check_binaries "$dest/root" fetch-peers usr/sbin/chronyd usr/bin/chronyc usr/sbin/ntpd

dpkg-deb -f "$dest/debs/chrony_"*.deb Version > "$stamp.tmp"
dpkg-deb -f "$dest/debs/ntpsec_"*.deb Version >> "$stamp.tmp"
mv "$stamp.tmp" "$stamp"
report
