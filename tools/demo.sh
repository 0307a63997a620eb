#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's first command: installs what is needed, builds, and shows the daemon at work on
# an embedded default: a local chronyd NTS server (test certificates, loopback only), our
# daemon in --observe mode without CAP_SYS_TIME (it never changes this machine's clock), and
# Debian's timedatectl reading it over a private D-Bus, then the operator's tools: --validate,
# timesync-sources with --check and --openmetrics.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# quietly CMD...: CMD without its output, unless it fails: then its last lines and what failed.
quietly() {
        local out
        if ! out=$("$@" 2>&1); then
                tail -n 30 <<<"$out" >&2
                echo "demo: '$*' failed" >&2
                return 1
        fi
}

tools/install-deps.sh --demo
# No man pages (scdoc is not among the demo's packages); a build dir of the full set keeps its
# own. One whose setup failed has no build.ninja: it is made again.
[ -e build/build.ninja ] || { rm -rf build && quietly meson setup build -Dman=disabled; }
quietly ninja -C build
# chronyd of Debian 12 is all the demo runs: no trees of the newer suites (debootstrap, ~460 MB).
quietly test/tools/fixtures/fetch-peers.sh --bookworm-only "$top/build-peers"
export TSNTS_PEERS_DIR="$top/build-peers" TSNTS_BUILD_DIR="$top/build"
export TSNTS_ADJTIMEX_READ="$top/build/test/tools/probes/adjtimex-read"

exec bash tools/demo-scenario.sh
