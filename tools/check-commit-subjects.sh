#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Checks the subjects of the commits of a branch against the house form (docs/ARCHITECTURE.md,
# "Commits"): "component: verb-first what changed", at most 72 characters, component one of
# the tree's file names without extension (timesyncd-policy, nts-query, check-module-table),
# a directory of the tree (test/simulation, docs) or a file under docs/ (docs/TESTING.md), and
# the first word after it not one that starts a statement ("the", "one", "a", ...).
# Not part of the meson suites: the lead runs it before merging a branch.
#   tools/check-commit-subjects.sh [BASE [BRANCH]]     (default: main HEAD)
set -euo pipefail

base=${1:-main}
branch=${2:-HEAD}
cd "$(git rev-parse --show-toplevel)"

# Every component the tree knows, one a line.
components() {
        git ls-tree -r --name-only "$branch" | sed -E 's|.*/||; s|\..*$||'
        git ls-tree -r -d --name-only "$branch"
        git ls-tree -r --name-only "$branch" -- docs | grep '\.md$'
        echo meson
}
known=$(components | sort -u)

# Words that start a statement, not an order: "the daemon logs" rather than "log".
not_verbs='^(a|an|the|one|two|three|each|every|all|no|its|it|this|that|these|what|when|which|who|why|how|[0-9].*)$'

bad=0
while IFS=$'\t' read -r hash subject; do
        why=()
        component=${subject%%: *}
        rest=${subject#*: }
        first=${rest%% *}
        if [ "$component" = "$subject" ]; then
                why+=("no \"component: \" prefix")
        elif ! grep -qxF -- "$component" <<<"$known"; then
                alias=$(grep -xE -- "timesyncd-$component|[a-z-]*-$component" <<<"$known" | head -n 1 || true)
                why+=("component \"$component\" is no file or directory of the tree${alias:+ (\"$alias\"?)}")
        fi
        [ "${#subject}" -le 72 ] || why+=("${#subject} characters, more than 72")
        if [ "$component" != "$subject" ]; then
                [[ $first =~ ^[a-z] ]] || why+=("\"$first\" does not start with a lower-case verb")
                if grep -qiE -- "$not_verbs" <<<"$first"; then
                        why+=("\"$first\" starts a statement, not a verb")
                fi
        fi
        if [ "${#why[@]}" -gt 0 ]; then
                printf '%s %s\n' "${hash:0:10}" "$subject"
                printf '        %s\n' "${why[@]}"
                bad=1
        fi
done < <(git log --no-merges --format='%H%x09%s' "$base..$branch")

exit "$bad"
