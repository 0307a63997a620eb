#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole test suite, as CI runs it, from a fresh clone on Debian 12 (as root):
#   1. install build and test dependencies (apt-get), fetch peer servers (chrony, NTPsec) and
#      the DNS fixture's servers (NSD, systemd-resolved)
#   2. -Werror build with gcc; unit, integration and peer tests
#   3. the same suite under ASan+UBSan
#   4. every libFuzzer target for FUZZ_SECONDS (default 60) under ASan+UBSan (clang)
#   5. the Debian package (lintian) and the mkosi system tests: a Debian 12 image booted in
#      nspawn and in qemu, whose own clock is the only one stepped (test/mkosi/run.sh)
# The last line is the summary CI reads: "N passed, N failed, N skipped".
# Environment: FUZZ_SECONDS, SKIP_ASAN=1, SKIP_FUZZ=1, SKIP_MKOSI=1 (local shortcuts; CI runs
# everything).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
logs=()
extra=()
status=0

phase() { printf '\n=== %s\n' "$*"; }

phase "dependencies"
tools/install-deps.sh || exit 1
peers="$top/build-peers"
if [ -x test/tools/fetch-peers.sh ]; then
        test/tools/fetch-peers.sh "$peers" || exit 1
fi
if [ -x test/tools/fetch-dns.sh ]; then
        test/tools/fetch-dns.sh "$peers" || exit 1
fi
export TSNTS_PEERS_DIR="$peers"

# build DIR MESON-OPTIONS...
build() {
        local dir=$1; shift
        if [ ! -d "$dir" ]; then
                meson setup "$dir" "$@" >/dev/null || return 1
        else
                meson configure "$dir" "$@" >/dev/null || return 1
        fi
        ninja -C "$dir" >"$dir.build.log" 2>&1 || { tail -n 60 "$dir.build.log"; return 1; }
}

# build_and_test DIR MESON-OPTIONS...
build_and_test() {
        local dir=$1
        build "$@" || return 1
        meson test -C "$dir" --print-errorlogs --num-processes 2 || true
        logs+=("$dir/meson-logs/testlog.json")
}

phase "gcc -Werror build and tests"
build_and_test build-ci -Dwerror=true -Dbuildtype=debugoptimized || status=1

if [ "${SKIP_ASAN:-0}" != 1 ]; then
        phase "ASan+UBSan build and tests"
        export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
        export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
        build_and_test build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false || status=1
fi

if [ "${SKIP_FUZZ:-0}" != 1 ]; then
        phase "libFuzzer targets, ${FUZZ_SECONDS}s each"
        results="$top/build-fuzz/fuzz-results.txt"
        # Only the fuzzers run here: the suite itself already ran twice.
        if CC=clang build build-fuzz -Dwerror=true -Dfuzz=true -Db_lundef=false; then
                : > "$results"
                for f in build-fuzz/test/fuzz/fuzz-*; do
                        { [ -x "$f" ] && [ -f "$f" ]; } || continue
                        name=$(basename "$f")
                        corpus="test/fuzz/corpus/$name"
                        work=$(mktemp -d)
                        if "$f" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "$work" "$corpus" \
                                        >"build-fuzz/$name.log" 2>&1; then
                                execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/$name.log")
                                echo "PASS $name executions=${execs:-?} seconds=$FUZZ_SECONDS" >> "$results"
                        else
                                echo "FAIL $name (see build-fuzz/$name.log)" >> "$results"
                                tail -n 40 "build-fuzz/$name.log"
                        fi
                        rm -rf "$work"
                done
                cat "$results"
                extra+=(--extra "$results")
        else
                status=1
        fi
fi

if [ "${SKIP_MKOSI:-0}" != 1 ]; then
        phase "Debian package and mkosi system tests (nspawn, qemu)"
        mk="$top/build-mkosi"
        mkdir -p "$mk"
        results="$mk/ci-results.txt"
        r=0
        NTS_MKOSI_DIR="$mk" test/mkosi/run.sh >"$mk/run.log" 2>&1 || r=$?
        grep -E '^(PASS|FAIL|SKIP) |^--- |^mkosi: ' "$mk/run.log"
        # Each check of the guests is one result; a run that failed without a FAIL line (no
        # image, no marker) is one failure.
        grep -E '^(PASS|FAIL) ' "$mk/run.log" >"$results" || true
        if [ "$r" != 0 ] && ! grep -q '^FAIL ' "$results"; then
                echo "FAIL mkosi run, exit $r (see $mk/run.log)" >>"$results"
                tail -n 40 "$mk/run.log"
        fi
        # lintian: nothing beyond debian/timesyncd-nts.lintian-overrides, informational tags included.
        tags=$(lintian -I --pedantic "$mk"/debs/*.changes 2>/dev/null | grep -E '^[EWIPX]: ' || true)
        if [ -n "$tags" ] || ! ls "$mk"/debs/*.changes >/dev/null 2>&1; then
                echo "FAIL lintian ${tags:-(no package built)}" >>"$results"
                echo "$tags"
        else
                echo "PASS lintian_reports_nothing_beyond_the_overrides" >>"$results"
        fi
        extra+=(--extra "$results")
fi

phase "summary"
if [ "$status" != 0 ]; then
        # A build that failed ran no tests: count it, so the summary cannot look green.
        echo "FAIL build" > "$top/build-ci-status.txt"
        extra+=(--extra "$top/build-ci-status.txt")
fi
summary=$(tools/test-summary.py "${extra[@]}" "${logs[@]}")
rc=$?
[ "$status" = 0 ] || rc=1
echo "$summary"
exit $rc
