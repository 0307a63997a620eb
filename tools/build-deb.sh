#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds timesyncd-nts_VERSION_ARCH.deb from the working tree (committed or not) with
# dpkg-buildpackage, in a scratch copy so that nothing is written next to the source tree.
# Usage: tools/build-deb.sh [--root TREE] [OUTDIR]   (default: build-deb/ in the source tree)
# Needs: debhelper dpkg-dev fakeroot meson pkg-config libsystemd-dev libssl-dev.
# --root TREE builds in TREE, a Debian tree with those packages (another suite's, made with
# debootstrap), under systemd-nspawn without a network: the package of that suite.
set -euo pipefail

root=
if [ "${1:-}" = --root ]; then
        root=$(cd "${2:?usage: $0 [--root TREE] [OUTDIR]}" && pwd)
        shift 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$src/build-deb}" && cd "${1:-$src/build-deb}" && pwd)
if [ -n "$root" ]; then
        mkdir -p "$root/build"
        scratch=$(mktemp -d "$root/build/deb.XXXXXX")
else
        scratch=$(mktemp -d)
fi
trap 'rm -rf "$scratch"' EXIT

# Tracked and new files (a tracked file deleted in the tree stays out), never build
# directories or other ignored output.
mkdir "$scratch/timesyncd-nts"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
        xargs -0 cp -P --parents -t "$scratch/timesyncd-nts")
test -f "$scratch/timesyncd-nts/debian/control"

if [ -n "$root" ]; then
        inside=/build/${scratch##*/}
        systemd-nspawn -q -D "$root" --register=no --keep-unit --private-network --chdir="$inside/timesyncd-nts" \
                dpkg-buildpackage -us -uc -b >"$scratch/build.log" 2>&1 </dev/null
else
        (cd "$scratch/timesyncd-nts" && dpkg-buildpackage -us -uc -b >"$scratch/build.log" 2>&1)
fi || {
        tail -n 40 "$scratch/build.log" >&2
        exit 1
}

rm -f "$out"/timesyncd-nts_*.deb "$out"/timesyncd-nts-dbgsym_*.deb
cp "$scratch"/*.deb "$scratch"/*.changes "$scratch"/*.buildinfo "$out"/
cp "$scratch/build.log" "$out/build.log"
ls "$out"/timesyncd-nts_*.deb
