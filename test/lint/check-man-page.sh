#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-man-page.sh PAGE...: renders each page with man-db and groff warnings on, and fails if
# anything at all is printed besides the page (which goes to /dev/null).
set -euo pipefail

command -v man >/dev/null || { echo "SKIP: man (package man-db) is not installed"; exit 77; }

# A fixed locale and width, so that the output does not depend on who runs the test.
export LC_ALL=C.UTF-8 MANWIDTH=80

status=0
for page in "$@"; do
        [ -f "$page" ] || { echo "FAIL: $page does not exist"; status=1; continue; }
        out=$(man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null) || {
                echo "FAIL: man could not render $page"
                status=1
        }
        if [ -n "$out" ]; then
                echo "FAIL: $page renders with warnings:"
                printf '%s\n' "$out"
                status=1
        fi
done
exit "$status"
