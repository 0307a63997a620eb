#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# verify-unit.sh UNIT BINARY [MANPAGE...]: runs systemd-analyze verify on a copy of UNIT whose
# ExecStart= runs BINARY (the one just built, not an installed one), and fails on a non-zero
# exit or on any output: unknown keys are only warnings there. With MANPAGE arguments, the
# man: references of Documentation= must resolve to those pages, not to installed ones.
set -euo pipefail

unit=${1:?usage: verify-unit.sh UNIT BINARY [MANPAGE...]}
binary=${2:?usage: verify-unit.sh UNIT BINARY [MANPAGE...]}
shift 2

command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

copy="$tmp/$(basename "$unit")"
# Keeps the prefix characters (the "!!" of the unit) and replaces the path after them.
sed -E "s|^(ExecStart=[-@:+!]*)[^[:space:]]+|\1$binary|" "$unit" >"$copy"
if ! grep -qF "$binary" "$copy"; then
        echo "FAIL: $unit has no ExecStart= to point at $binary"
        exit 1
fi

man_check=--man=no
if [ $# -gt 0 ] && command -v man >/dev/null; then
        for page in "$@"; do
                mkdir -p "$tmp/man/man${page##*.}"
                ln -s "$(realpath "$page")" "$tmp/man/man${page##*.}/"
        done
        man_check=--man=yes
        export MANPATH="$tmp/man"
fi

rc=0
out=$(systemd-analyze verify "$man_check" "$copy" 2>&1) || rc=$?
if [ "$rc" != 0 ] || [ -n "$out" ]; then
        echo "FAIL: systemd-analyze verify $(basename "$unit") (exit status $rc):"
        printf '%s\n' "$out"
        exit 1
fi
