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

# A fresh machine may have no package lists yet: refresh them once and retry.
apt_retry() {
        "$@" || { apt-get update && "$@"; }
}

missing=()
for p in "${runtime_libs[@]}"; do
        dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt_retry apt-get install -y --no-upgrade --no-install-recommends "${missing[@]}"
fi

rm -rf "$dest/debs" "$dest/root"
mkdir -p "$dest/debs" "$dest/root"
# apt's sandbox user cannot write into an arbitrary directory; download where it can, then move.
dl=$(mktemp -d)
trap 'rm -rf "$dl"' EXIT
chmod 0777 "$dl"
(cd "$dl" && apt_retry apt-get download "${packages[@]}")
mv "$dl"/*.deb "$dest/debs/"
for deb in "$dest"/debs/*.deb; do
        dpkg-deb -x "$deb" "$dest/root"
done

# ntp/ntpc.py looks for libntpc.so next to itself first; point that at the unpacked library so
# ntpq works from the tree without touching the host's /usr/lib.
libntpc=$(find "$dest/root/usr/lib" -name 'libntpc.so.*.*' -type f | head -n1)
[ -n "$libntpc" ] || { echo "fetch-peers: libntpc not found in python3-ntp" >&2; exit 1; }
ln -sfn "$(realpath --relative-to="$dest/root/usr/lib/python3/dist-packages/ntp" "$libntpc")" \
        "$dest/root/usr/lib/python3/dist-packages/ntp/libntpc.so"

for bin in usr/sbin/chronyd usr/bin/chronyc usr/sbin/ntpd; do
        [ -x "$dest/root/$bin" ] || { echo "fetch-peers: $bin missing after unpacking" >&2; exit 1; }
        if ldd "$dest/root/$bin" | grep -q 'not found'; then
                echo "fetch-peers: $bin has unresolved libraries:" >&2
                ldd "$dest/root/$bin" | grep 'not found' >&2
                exit 1
        fi
done

dpkg-deb -f "$dest/debs/chrony_"*.deb Version > "$stamp.tmp"
dpkg-deb -f "$dest/debs/ntpsec_"*.deb Version >> "$stamp.tmp"
mv "$stamp.tmp" "$stamp"
report
