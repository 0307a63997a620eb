#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a unit test binary of this build once more against the libraries of a newer Debian
# suite: chrooted in that suite's tree (test/tools/fixtures/fetch-peers.sh: DEST/SUITE/tree), where
# dlopen() finds its libcrypto (OpenSSL 3.5 in trixie, 3.6 in forky, which have AES-GCM-SIV;
# the host's 3.0 has not).
#   test-in-suite-tree.sh SUITE BINARY
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/../lib source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR/../lib source=../lib/suite-tree.sh
. "$(dirname "$0")/../lib/suite-tree.sh"

suite=${1:?usage: test-in-suite-tree.sh SUITE BINARY}
bin=${2:?usage: test-in-suite-tree.sh SUITE BINARY}
tree=$TSNTS_PEERS_DIR/$suite/tree

[ "$(id -u)" = 0 ] || missing_prerequisite "running in a suite's tree needs root (chroot, mount namespace)"
[ -e "$TSNTS_PEERS_DIR/$suite/.tree-stamp" ] ||
        skip "no $suite tree ($tree); run: test/tools/fixtures/fetch-peers.sh $TSNTS_PEERS_DIR"

log "$(basename "$bin") with the libraries of $suite ($tree)"
suite_tree_run "$tree" "$(dirname "$bin")" "$(basename "$bin")"
