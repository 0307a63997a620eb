#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-policy-seam.sh FILE...: the policy's files reach a source only through its table of
# source operations (PolicySourceOps, filled by timesyncd-policy-source.c), so that the unit
# tests drive the policy with fake sources: no call of a Source function (source_*(), other than
# the pure source_set_*(), source_identity_*() and source_state_*()) and none of the NTS
# client's (nts_client_*()).
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }

found=$(grep -nE '\b(source_[a-z_]+|nts_client_[a-z_]+)\(' "$@" /dev/null |
        grep -vE '\bsource_(set|identity|state)_[a-z_]*\(' |
        grep -vE '^[^:]+:[0-9]+:( \*|/\*|\s*\*)' || true)
if [ -n "$found" ]; then
        echo "$found"
        echo "FAIL: the policy calls a source past PolicySourceOps (docs/ARCHITECTURE.md)"
        exit 1
fi
echo "$# policy files reach their sources through PolicySourceOps only"
