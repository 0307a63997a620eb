#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test-sim-kclock-matches-linux-6.1-second-by-second.sh MODEL: the kernel model's answers to
# adjtimex-script (MODEL: adjtimex-script-model) against those Linux 6.1 gave in the qemu guest
# (adjtimex-script.linux-6.1, recorded by test/mkosi/run.sh --only kclock), second by second.
set -euo pipefail

here=$(dirname "$0")
[ $# = 1 ] || { echo "usage: $0 ADJTIMEX_SCRIPT_MODEL" >&2; exit 2; }
model=$(mktemp)
kernel=$(mktemp)
trap 'rm -f "$model" "$kernel"' EXIT
"$1" >"$model"
grep -v '^#' "$here/adjtimex-script.linux-6.1" >"$kernel"
"$here/adjtimex-script-compare.sh" "$kernel" "$model"
