#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The NTS client of a build without NTS (timesyncd-nts-client-stub.c) cannot fall behind the
# real one: every function HEADER declares is defined in LIBRARY, the stub compiled on its own.
# The signatures the compiler checks: the stub includes the header and is built in every build.
#   check-nts-client-stub.sh HEADER LIBRARY
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 HEADER LIBRARY" >&2; exit 2; }
header=$1
library=$2

# Declarations start at the first column with their type: "int nts_client_new(...",
# "const char *nts_client_server(...". Typedefs, macros and comments do not match.
mapfile -t declared < <(grep -v '^typedef' "$header" |
                        sed -nE 's/^[A-Za-z_][A-Za-z0-9_ ]*[ *]([A-Za-z_][A-Za-z0-9_]*)\(.*/\1/p' | sort -u)
if [ "${#declared[@]}" -eq 0 ]; then
        echo "$header: no function declarations found"
        exit 1
fi

mapfile -t defined < <(nm --defined-only -g "$library" | awk '$2 == "T" || $2 == "W" { print $3 }' | sort -u)

missing=0
for name in "${declared[@]}"; do
        if ! printf '%s\n' "${defined[@]}" | grep -qxF -- "$name"; then
                echo "$library does not define $name, which $header declares"
                missing=1
        fi
done
[ "$missing" -eq 0 ] && echo "${#declared[@]} functions of $header are all defined in $library"
exit "$missing"
