#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No Markdown table has a row twice (a header pasted twice reads as a row of the table): each
# FILE is checked, every repetition named with its line.
#   check-doc-tables.sh FILE...
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
bad=0
for f in "$@"; do
        awk -v f="$f" '!/^\|/ { split("", seen); next }
                $0 in seen { print f ":" NR ": table row repeated: " $0; bad = 1 }
                { seen[$0] = 1 } END { exit bad }' "$f" || bad=1
done
exit "$bad"
