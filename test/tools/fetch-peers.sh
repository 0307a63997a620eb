#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Puts Debian's chrony and NTPsec binaries under DEST/root without installing those packages:
# their maintainer scripts would start system services, and the two packages conflict.
# Only their runtime libraries are installed (never upgraded); the .debs are downloaded and
# unpacked. Also ntpd-rs, chrony and NTPsec of Debian 13 (trixie) and testing (forky): their
# .debs come from those suites of the machine's Debian archive through a private apt
# configuration (fetch_suite_packages), never installed. ntp-daemon needs no more than the
# host's glibc and runs from DEST/SUITE/root; chronyd and ntpd need their suite's, so they are
# also unpacked into DEST/SUITE/tree, a minimal debootstrap tree of the suite (about 230 MB and
# 3 minutes each), where the tests run them chrooted. Idempotent: DEST/.stamp,
# DEST/SUITE/.stamp and DEST/SUITE/.tree-stamp mark complete parts and make a second run
# instant. A suite that cannot be fetched is reported and left out (its tests skip); the
# bookworm peers are required.
#   fetch-peers.sh [--bookworm-only] DEST
# --bookworm-only: Debian 12's chrony and NTPsec alone, no newer suite and no debootstrap tree
# (tools/demo.sh, which runs one chronyd); a later run without it adds the rest.
# Then: DEST/root/usr/sbin/chronyd, DEST/root/usr/bin/chronyc, DEST/root/usr/sbin/ntpd,
#       DEST/root/usr/bin/ntpq (needs PYTHONPATH, see test/lib/ntpsec.sh),
#       DEST/trixie/root/usr/bin/ntp-daemon (ntpd-rs 1.4), DEST/forky/root/usr/bin/ntp-daemon
#       (ntpd-rs 1.9), DEST/trixie/tree/usr/sbin/{chronyd,ntpd} (chrony 4.6.1, NTPsec 1.2.3),
#       DEST/forky/tree/usr/sbin/{chronyd,ntpd} (chrony 4.9, NTPsec 1.2.5).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=fetch-lib.sh
. "$(dirname "$0")/fetch-lib.sh"

bookworm_only=0
if [ "${1:-}" = --bookworm-only ]; then
        bookworm_only=1
        shift
fi
dest=${1:?usage: fetch-peers.sh [--bookworm-only] DEST}
packages=(chrony ntpsec python3-ntp)
# What chronyd, chronyc, ntpd, libntpc and ntpq link against or run on (found with ldd on the
# unpacked binaries). python3 is Debian's interpreter: ntpq's #! is /usr/bin/python3. netbase
# (/etc/services) is a dependency of the ntpsec package, kept for its name lookups.
runtime_libs=(libc6 libcap2 libedit2 libgnutls30 libnettle8 libseccomp2 libbsd0 libssl3 python3 netbase)

# The packages of the newer suites, unpacked into DEST/SUITE/root. ntpd-rs runs from there on
# this host; chronyd and NTPsec's ntpd need that suite's glibc, so they run chrooted in
# DEST/SUITE/tree, a minimal tree of the suite (debootstrap) with their libraries, into which
# tree_packages are unpacked.
newer_suites=(trixie forky)
[ "$bookworm_only" = 0 ] || newer_suites=()
newer_packages=(ntpd-rs chrony ntpsec)
tree_packages=(chrony ntpsec)
tree_libs=(libcap2 libedit2 libgnutls30t64 libnettle8t64 libseccomp2 libbsd0 libssl3t64)

report() {
        local suite
        echo "chronyd: $dest/root/usr/sbin/chronyd"
        echo "chronyc: $dest/root/usr/bin/chronyc"
        echo "ntpd:    $dest/root/usr/sbin/ntpd"
        echo "ntpq:    $dest/root/usr/bin/ntpq (PYTHONPATH=$dest/root/usr/lib/python3/dist-packages)"
        for suite in "${newer_suites[@]}"; do
                if suite_fetched "$suite"; then
                        echo "$suite:  $dest/$suite/root ($(paste -sd, "$dest/$suite/.stamp"))"
                        [ ! -e "$dest/$suite/.tree-stamp" ] || echo "$suite:  chrooted: $dest/$suite/tree/usr/sbin/chronyd, .../ntpd"
                else
                        echo "$suite:  not fetched (its tests skip)"
                fi
        done
}

# suite_fetched SUITE: its .stamp lists every package of newer_packages (one of an older list
# of packages does not).
suite_fetched() {
        local p
        [ -e "$dest/$1/.stamp" ] || return 1
        for p in "${newer_packages[@]}"; do
                grep -q "^$p " "$dest/$1/.stamp" || return 1
        done
}

all_fetched() {
        local suite
        [ -e "$stamp" ] || return 1
        for suite in "${newer_suites[@]}"; do
                suite_fetched "$suite" && [ -e "$dest/$suite/.tree-stamp" ] || return 1
        done
}

# build_suite_tree SUITE: DEST/SUITE/tree from SUITE's debs of fetch_suite_packages.
build_suite_tree() {
        local suite=$1 tree=$dest/$1/tree uri script=() libs deb p bin
        uri=$(debian_archive_uri)
        [ -n "$uri" ] || return 1
        command -v debootstrap >/dev/null || install_runtime_libs debootstrap || return 1
        # debootstrap names testing's scripts only once it knows them; testing is built like sid.
        [ -e "/usr/share/debootstrap/scripts/$suite" ] || script=(/usr/share/debootstrap/scripts/sid)
        # A tree whose debootstrap ended is kept (3 minutes to make); a half-made one is not.
        if [ ! -e "$tree/.debootstrap-done" ]; then
                rm -rf "$tree"
                libs=$(IFS=,; echo "${tree_libs[*]}")
                debootstrap --variant=minbase --include="$libs" "$suite" "$tree" "$uri" ${script[@]+"${script[@]}"} >&2 || return 1
                touch "$tree/.debootstrap-done"
        fi
        for p in "${tree_packages[@]}"; do
                for deb in "$dest/$suite/debs/${p}_"*.deb; do
                        dpkg-deb -x "$deb" "$tree"
                done
        done
        # A minimal tree has no /etc/hosts: "localhost" would not resolve in it.
        printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$tree/etc/hosts"
        for bin in /usr/sbin/chronyd /usr/sbin/ntpd; do
                if ! chroot "$tree" ldd "$bin" >/dev/null || chroot "$tree" ldd "$bin" | grep -q 'not found'; then
                        echo "fetch-peers: $bin of $suite is missing or has unresolved libraries in its tree" >&2
                        return 1
                fi
        done
}

# fetch_newer_suite SUITE: the newer_packages of SUITE, or a warning.
fetch_newer_suite() {
        local suite=$1 deb
        if suite_fetched "$suite"; then
                fetch_newer_tree "$suite"
                return 0
        fi
        if ! fetch_suite_packages "$dest" "$suite" "${newer_packages[@]}" ||
                ! check_binaries "$dest/$suite/root" fetch-peers usr/bin/ntp-daemon; then
                echo "fetch-peers: WARNING: the $suite peers (${newer_packages[*]}) could not be fetched; their tests will skip" >&2
                rm -rf "${dest:?}/$suite/debs" "${dest:?}/$suite/root" "${dest:?}/$suite/.stamp"
                return 0
        fi
        for deb in "$dest/$suite"/debs/*.deb; do
                echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"
        done >"$dest/$suite/.stamp.tmp"
        mv "$dest/$suite/.stamp.tmp" "$dest/$suite/.stamp"
        # New packages for the tree too (its debootstrap part stays).
        rm -f "$dest/$suite/.tree-stamp"
        fetch_newer_tree "$suite"
}

# fetch_newer_tree SUITE: build_suite_tree, or a warning.
fetch_newer_tree() {
        local suite=$1
        [ ! -e "$dest/$suite/.tree-stamp" ] || return 0
        if ! build_suite_tree "$suite"; then
                echo "fetch-peers: WARNING: no $suite tree for its chronyd and ntpd; their tests will skip" >&2
                rm -rf "${dest:?}/$suite/tree"
                return 0
        fi
        touch "$dest/$suite/.tree-stamp"
}

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
stamp="$dest/.stamp"

if all_fetched; then
        report
        exit 0
fi

# Two runs at once (parallel CI steps) must not unpack over each other.
exec 9>"$dest/.lock"
flock 9
if all_fetched; then
        report
        exit 0
fi

# Side by side: each is mostly downloads and debootstrap's unpacking (3 minutes a tree). Each
# suite has its own apt lists and directories; a failure is a warning inside.
for suite in "${newer_suites[@]}"; do
        fetch_newer_suite "$suite" &
done
wait

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
