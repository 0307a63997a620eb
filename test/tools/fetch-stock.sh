#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Puts Debian 12's own systemd-timesyncd (the daemon this project replaces) under DEST/stock/root
# without installing it: the accuracy benchmark (bench/accuracy.sh) and the simulation test of it
# run it from there, under the simulation preload, to compare its clock discipline with ours.
# Its private library (libsystemd-shared) comes along, so that the binary runs with the library
# of its own version whatever the host has (LD_LIBRARY_PATH, see test/lib/stock.sh).
# Idempotent: DEST/stock/.stamp marks a complete fetch and makes a second run instant.
#   fetch-stock.sh DEST        (DEST: the peers' tree, $TSNTS_PEERS_DIR)
# Then: DEST/stock/root/lib/systemd/systemd-timesyncd and
#       DEST/stock/root/usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-*.so
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=fetch-lib.sh
. "$(dirname "$0")/fetch-lib.sh"

dest=${1:?usage: fetch-stock.sh DEST}/stock
stamp=$dest/.stamp
packages=(systemd-timesyncd libsystemd-shared)

if [ -e "$stamp" ]; then
        echo "stock systemd-timesyncd: $dest/root/lib/systemd/systemd-timesyncd ($(paste -sd, "$stamp"))"
        exit 0
fi
# The packages of the machine's suite: Debian 12's on the hosts the tests run on.
fetch_and_unpack "$dest" "${packages[@]}"
check_binaries "$dest/root" fetch-stock.sh lib/systemd/systemd-timesyncd
for deb in "$dest"/debs/*.deb; do
        # shellcheck disable=SC2016 # dpkg's format, not the shell's
        dpkg-deb --showformat='${Package} ${Version}\n' -W "$deb"
done >"$stamp.new"
mv "$stamp.new" "$stamp"
echo "stock systemd-timesyncd: $dest/root/lib/systemd/systemd-timesyncd ($(paste -sd, "$stamp"))"
