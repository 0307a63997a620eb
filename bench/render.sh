#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/render.sh FIGURES [TEMPLATE]: the benchmark document from a template and the figures of
# one run of bench/run.sh, on standard output. FIGURES is figures.tsv: one figure a line, its
# name, a tab, its value (a backslash and a newline in the value written \\ and \n). In the
# template (default bench/BENCHMARKS.md.in), @NAME@ is the figure NAME, and a line that starts
# with @# is a comment, left out. A name the figures lack fails the rendering: a document with
# a hole is never written.
#   bench/render.sh docs/bench-figures.tsv >docs/BENCHMARKS.md
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
        echo "usage: $0 FIGURES [TEMPLATE]" >&2
        exit 2
fi
figures=$1
template=${2:-$(dirname "$0")/BENCHMARKS.md.in}

awk -v figures="$figures" '
function unescape(v,    out, i, c) {
        out = ""
        for (i = 1; i <= length(v); i++) {
                c = substr(v, i, 1)
                if (c == "\\" && i < length(v)) {
                        i++
                        c = substr(v, i, 1)
                        c = c == "n" ? "\n" : c
                }
                out = out c
        }
        return out
}
BEGIN {
        while ((getline line < figures) > 0) {
                tab = index(line, "\t")
                if (tab == 0)
                        continue
                fig[substr(line, 1, tab - 1)] = unescape(substr(line, tab + 1))
        }
        close(figures)
}
/^@#/ { next }
{
        s = $0
        out = ""
        while ((i = index(s, "@")) > 0) {
                j = index(substr(s, i + 1), "@")
                if (j == 0)
                        break
                name = substr(s, i + 1, j - 1)
                if (!(name in fig)) {
                        printf "%s: line %d: no figure \"%s\" in %s\n", FILENAME, FNR, name, figures > "/dev/stderr"
                        failed = 1
                        exit 1
                }
                out = out substr(s, 1, i - 1) fig[name]
                s = substr(s, i + j + 1)
        }
        print out s
}
END { exit failed }
' "$template"
