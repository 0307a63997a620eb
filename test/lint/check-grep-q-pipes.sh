#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-grep-q-pipes.sh SRCDIR [FILE...]: the tests' shell (test/integration, test/simulation,
# test/lib, or the files given) pipes into grep_q (test/lib/common.sh), never into `grep -q`.
# Under the tests' pipefail, grep -q leaving at its first match breaks the pipe of a producer
# still writing, and the pipeline fails although the line is there. A `bash -c` string runs
# without pipefail and without the function, and is let be.
set -euo pipefail

src=${1:?usage: $0 SRCDIR [FILE...]}
shift
files=("$@")
if [ ${#files[@]} = 0 ]; then
        cd "$src"
        mapfile -t files < <(find test/integration test/simulation test/lib -name '*.sh' | sort)
fi

found=$(grep -nE '\| *grep -[a-zA-Z]*q' "${files[@]}" /dev/null | grep -v 'bash -c' | grep -vE '^[^:]+:[0-9]+: *#' || true)
if [ -n "$found" ]; then
        echo "$found"
        echo "FAIL: pipe into grep_q, not grep -q (see grep_q in test/lib/common.sh)"
        exit 1
fi
echo "${#files[@]} files pipe into grep_q only"
