#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-shell-scripts.sh SRCDIR [FILE...]: ShellCheck over the given files, or over every shell
# script of the source tree: the files git tracks there (or, outside a git checkout, the files
# of the tree's own folders), that end in .sh, start with a sh or bash #! line, or say
# "# shellcheck shell=" in their first lines (sourced files). The settings are the tree's
# .shellcheckrc; each finding is fixed or disabled at its line with a reason.
# test/lint/broken-* are the inputs the self-check must refuse, never part of the tree's run.
set -euo pipefail

src=${1:?usage: $0 SRCDIR [FILE...]}
shift

if ! command -v shellcheck >/dev/null; then
        [ -z "${CI:-}" ] || { echo "FAIL: shellcheck is not installed (CI must provide it)"; exit 1; }
        echo "SKIP: shellcheck (package shellcheck) is not installed"
        exit 77
fi

is_shell_script() {
        case $1 in
        *.sh) return 0 ;;
        esac
        head -n 1 "$1" | grep -Eq '^#!.*[/ ](ba|da)?sh( |$)' && return 0
        head -n 5 "$1" | grep -q '^# shellcheck shell=' && return 0
        return 1
}

files=("$@")
if [ ${#files[@]} = 0 ]; then
        cd "$src"
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
                mapfile -t all < <(git ls-files)
        else
                mapfile -t all < <(find .ci bench debian man src test tools units -type f 2>/dev/null)
        fi
        for f in "${all[@]}"; do
                f=${f#./}
                case $f in
                test/lint/broken-*) continue ;;
                esac
                [ -f "$f" ] && is_shell_script "$f" && files+=("$f")
        done
        [ ${#files[@]} -gt 0 ] || { echo "FAIL: no shell script found in $src"; exit 1; }
fi

echo "ShellCheck $(shellcheck --version | sed -n 's/^version: //p') over ${#files[@]} files"
shellcheck --format=gcc "${files[@]}"
