#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs everything needed to build timesyncd-nts and run its whole test suite on Debian 12;
# with --demo only what tools/demo.sh needs (a build without man pages, a local chronyd from
# fetch-peers.sh, a private D-Bus, timedatectl). Idempotent and quick when everything is present. Peer servers (chrony, NTPsec) are not
# installed as packages (their maintainer scripts would start services): test/tools/fixtures/fetch-peers.sh
# extracts them into the build tree instead, and test/tools/fixtures/fetch-dns.sh does the same for NSD and
# systemd-resolved.
set -euo pipefail

packages=(
        # build
        gcc clang llvm meson ninja-build pkg-config libsystemd-dev libssl-dev libssl3 scdoc
        # tests
        openssl dbus systemd iproute2 util-linux procps python3 ca-certificates valgrind man-db strace nftables
        # test/tools/readers/metrics-check.py: the Prometheus project's own parsers of timesync-sources'
        # --openmetrics and --prometheus output, beside its strict reading
        python3-prometheus-client
        # test/lint: ShellCheck over every shell script of the tree
        shellcheck
        # test/lib/dnssec.sh: zone keys and signatures (tools only, no service)
        ldnsutils
        # bench/run.sh (ninja -C build bench): the plot
        gnuplot-nox
        # the Debian package and the mkosi system tests (test/mkosi/run.sh)
        debhelper dpkg-dev fakeroot lintian mkosi systemd-container debootstrap debian-archive-keyring
        qemu-system-x86 e2fsprogs
)

# tools/demo.sh: build the daemon (gcc and, as gcc only recommends it, libc6-dev; libssl3 for
# NTS at run time), the test certificates (openssl), dbus-daemon, timedatectl (systemd),
# setpriv/unshare, ps, ip/ss. chronyd's runtime libraries: fetch-peers.sh installs those itself.
demo_packages=(
        gcc libc6-dev meson ninja-build pkg-config libsystemd-dev libssl-dev libssl3
        openssl dbus systemd util-linux procps iproute2
)

case ${1:-} in
--demo) packages=("${demo_packages[@]}") ;;
"") ;;
*) echo "usage: $0 [--demo]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
        echo "Installing: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
