#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# docs/ARCHITECTURE.md's module tables are the layout of src/timesync: every module a table
# names exists, and every .c file there is named by a table. A row names its module in its
# first cell: `timesyncd-source.[ch]` (both files), `timesyncd.c` or `nts.h` (that file).
#   check-module-table.sh DOC SRCDIR [--break=missing|extra]
# --break makes a broken copy of DOC first, to show that the check refuses it: "missing" drops
# the row of timesyncd-filter (a module the tables lack), "extra" adds a row for
# timesyncd-gone.[ch] (a module that is not there).
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
        echo "usage: $0 DOC SRCDIR [--break=missing|extra]" >&2
        exit 2
fi
doc=$1
srcdir=$2

if [ $# -eq 3 ]; then
        broken=$(mktemp)
        trap 'rm -f "$broken"' EXIT
        # shellcheck disable=SC2016 # the backticks are Markdown's
        row='^| `timesyncd-filter\.\[ch\]`'
        case $3 in
        --break=missing) sed "/$row/d" "$doc" >"$broken" ;;
        --break=extra) sed "/$row/{p;s/timesyncd-filter/timesyncd-gone/}" "$doc" >"$broken" ;;
        *) echo "unknown option $3" >&2; exit 2 ;;
        esac
        # The broken copy must differ, or refusing it would prove nothing.
        if cmp -s "$doc" "$broken"; then
                echo "$doc has no row for timesyncd-filter.[ch] to break"
                exit 0
        fi
        doc=$broken
fi

# The first cells of the table rows of "## Modules", up to the next section of that level.
# shellcheck disable=SC2016 # the backticks are Markdown's
mapfile -t cells < <(awk '/^## / { in_modules = ($0 == "## Modules") } in_modules && /^\| `/' "$doc" |
                     sed -nE 's/^\| `([^`]+)`.*/\1/p')
if [ "${#cells[@]}" -eq 0 ]; then
        echo "$doc: no module table rows under \"## Modules\""
        exit 1
fi

named=()
for cell in "${cells[@]}"; do
        case $cell in
        *.\[ch\]) named+=("${cell%.\[ch\]}.c" "${cell%.\[ch\]}.h") ;;
        *.c | *.h) named+=("$cell") ;;
        *) echo "$doc: a module table row names '$cell', not a file (NAME.[ch], NAME.c or NAME.h)"; exit 1 ;;
        esac
done

# A lookup table rather than `printf | grep -q`: under pipefail, grep's early exit could fail
# the pipeline with printf's broken pipe and report a named file as missing.
declare -A is_named=()
bad=0
for f in "${named[@]}"; do
        is_named[$f]=1
        if [ ! -e "$srcdir/$f" ]; then
                echo "$f: named in the module table of $doc, not in $srcdir"
                bad=1
        fi
done
for path in "$srcdir"/*.c; do
        f=${path##*/}
        if [ -z "${is_named[$f]+set}" ]; then
                echo "$f: in $srcdir, not named in the module table of $doc"
                bad=1
        fi
done
[ "$bad" -eq 0 ] && echo "${#cells[@]} modules of $doc, every .c file of $srcdir among them"
exit "$bad"
