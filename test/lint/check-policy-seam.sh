#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-policy-seam.sh FILE...: the policy's files reach a source only through its table of
# source operations (PolicySourceOps), and ask the server lists about their sources only through
# its table of list operations (PolicyListOps), both filled by timesyncd-policy-source.c, so that
# the unit tests drive the policy with fake sources and lists: no call of a Source function
# (source_*(), other than the pure source_set_*(), source_identity_*() and source_state_*()), none
# of the NTS client's (nts_client_*()), none of the list functions that read the names' sources
# (server_next(), server_name_usable(), server_name_source(), server_lists_find_source(),
# nts_all_refuse(), nts_earliest_retry()), and none of a pool's (server_name_pool(), pool_*()).
# A call through a table (pol->ctx.lists->pool_start()) names the entry, not the function.
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }

# Comment lines name these functions to say what an entry of a table stands for.
calls() {
        grep -nE "$1" "${@:2}" /dev/null | grep -vE '^[^:]+:[0-9]+:\s*(/\*|\*)' || true
}

failed=0
found=$(calls '\b(source_[a-z_]+|nts_client_[a-z_]+)\(' "$@" | grep -vE '\bsource_(set|identity|state)_[a-z_]*\(' || true)
if [ -n "$found" ]; then
        echo "$found"
        echo "FAIL: the policy calls a source past PolicySourceOps (docs/ARCHITECTURE.md)"
        failed=1
fi
list_calls='server_next|server_name_usable|server_name_source|server_lists_find_source|nts_all_refuse|nts_earliest_retry'
found=$(calls "(^|[^>.[:alnum:]_])($list_calls|server_name_pool|pool_[a-z_]+)\\(" "$@")
if [ -n "$found" ]; then
        echo "$found"
        echo "FAIL: the policy asks the server lists or their pools about their sources past PolicyListOps (docs/ARCHITECTURE.md)"
        failed=1
fi
[ "$failed" = 0 ] || exit 1
echo "$# policy files reach their sources and pools through PolicySourceOps and PolicyListOps only"
