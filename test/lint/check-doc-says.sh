#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A document keeps what users rely on it for: each TEXT (a fixed string) is in FILE.
#   check-doc-says.sh FILE TEXT...
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 FILE TEXT..." >&2; exit 2; }
file=$1
shift
bad=0
for text in "$@"; do
        grep -qF -- "$text" "$file" || { echo "$file does not say: $text"; bad=1; }
done
exit "$bad"
