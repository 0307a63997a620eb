#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's first command ends in tools/demo-scenario.sh: it must keep working and keep
# showing what it promises (a chronyd NTS server, our daemon in observe mode, timedatectl,
# --validate, timesync-sources with --check and --openmetrics).
set -euo pipefail
. "$(dirname "$0")/../../lib/common.sh"
test_init

out=$TEST_TMPDIR/demo.out
bash "$TSNTS_SRC_DIR/tools/demo-scenario.sh" >"$out" 2>&1 || fail "demo-scenario.sh failed: $(tail -n 30 "$out")"
for want in "== systemd-timesyncd --validate" "0 errors, 0 warnings." "# Time from: NTS= (NTS only)" \
        "Initial clock synchronization to localhost:" "NTSAuthenticated=yes" "== timesync-sources" \
        "Synchronized over NTS to localhost:" 'timesyncd_synchronized_nts 1' '# EOF'; do
        grep -qF -- "$want" "$out" || fail "the demo does not show '$want': $(tail -n 30 "$out")"
done
echo "PASS test_demo_shows_the_daemon_and_the_operators_tools"
