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
# everything); NTS_MKOSI_SUITES="trixie forky" adds the guests of those Debian suites.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
logs=()
extra=()
status=0

# phase NAME: starts a phase; the one before it is timed. The times are printed before the
# summary (docs/TESTING.md, "Where CI's time goes").
phase_name=
phase_start=$SECONDS
phase_times=()
phase() {
        [ -z "$phase_name" ] || phase_times+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "$phase_name")")
        phase_name=$*
        phase_start=$SECONDS
        printf '\n=== %s (at %d s)\n' "$*" "$SECONDS"
}

phase "dependencies"
tools/install-deps.sh || exit 1
phase "peers and DNS fixture fetch"
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

# build_and_test DIR [MESON-TEST-OPTIONS...] -- MESON-OPTIONS...
build_and_test() {
        local dir=$1 test_args=()
        shift
        while [ "$1" != -- ]; do test_args+=("$1"); shift; done
        shift
        phase "$dir build"
        build "$dir" "$@" || return 1
        phase "$dir tests"
        meson test -C "$dir" --print-errorlogs --num-processes 2 "${test_args[@]}" || true
        logs+=("$dir/meson-logs/testlog.json")
}

build_and_test build-ci -- -Dwerror=true -Dbuildtype=debugoptimized || status=1

if [ "${SKIP_ASAN:-0}" != 1 ]; then
        export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
        export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
        # The lint suite checks sources, pages and scripts, not what the compiler made of them
        # (ShellCheck alone is about two minutes): it runs once, in the gcc build. So does the
        # interop matrix (about three minutes): it asks what each peer answers, and the same
        # code paths run under the sanitizers in the nts and nts-query suites.
        build_and_test build-asan --no-suite lint --no-suite interop -- \
                -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false || status=1
fi

# fuzz_one FUZZER: runs it for FUZZ_SECONDS on a scratch corpus seeded from the tree's; writes
# its PASS or FAIL line to build-fuzz/NAME.result.
fuzz_one() {
        local f=$1 name work execs
        name=$(basename "$f")
        work=$(mktemp -d)
        if "$f" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "$work" "test/fuzz/corpus/$name" \
                        >"build-fuzz/$name.log" 2>&1; then
                execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/$name.log")
                echo "PASS $name executions=${execs:-?} seconds=$FUZZ_SECONDS" >"build-fuzz/$name.result"
        else
                echo "FAIL $name (see build-fuzz/$name.log)" >"build-fuzz/$name.result"
        fi
        rm -rf "$work"
}

if [ "${SKIP_FUZZ:-0}" != 1 ]; then
        phase "build-fuzz build (clang)"
        results="$top/build-fuzz/fuzz-results.txt"
        # Only the fuzzers run here: the suite itself already ran twice.
        if CC=clang build build-fuzz -Dwerror=true -Dfuzz=true -Db_lundef=false; then
                phase "libFuzzer targets, ${FUZZ_SECONDS}s each, two at a time"
                # Each fuzzer is one process on one core: two at a time fill the machine's two
                # cores and halve the phase; every fuzzer still gets its FUZZ_SECONDS.
                : > "$results"
                fuzzers=()
                for f in build-fuzz/test/fuzz/fuzz-*; do
                        { [ -x "$f" ] && [ -f "$f" ]; } || continue
                        fuzzers+=("$f")
                        rm -f "build-fuzz/$(basename "$f").result"
                done
                running=0
                for f in "${fuzzers[@]}"; do
                        if [ "$running" -ge 2 ]; then
                                wait -n
                                running=$((running - 1))
                        fi
                        fuzz_one "$f" &
                        running=$((running + 1))
                done
                wait
                for f in "${fuzzers[@]}"; do
                        name=$(basename "$f")
                        if [ -f "build-fuzz/$name.result" ]; then
                                cat "build-fuzz/$name.result" >>"$results"
                        else
                                echo "FAIL $name (no result, see build-fuzz/$name.log)" >>"$results"
                        fi
                        grep -q '^FAIL ' "build-fuzz/$name.result" 2>/dev/null && tail -n 40 "build-fuzz/$name.log"
                done
                cat "$results"
                extra+=(--extra "$results")
        else
                status=1
        fi
fi

# mkosi_suite SUITE DIR: test/mkosi/run.sh for one Debian suite, its check lines (prefixed with
# the suite unless it is bookworm) appended to DIR/ci-results.txt.
mkosi_suite() {
        local suite=$1 mk=$2 r=0 prefix=
        [ "$suite" = bookworm ] || prefix="$suite:"
        mkdir -p "$mk"
        NTS_MKOSI_DIR="$mk" test/mkosi/run.sh --suite "$suite" >"$mk/run.log" 2>&1 || r=$?
        grep -E '^(PASS|FAIL|SKIP) |^--- |^mkosi: ' "$mk/run.log"
        # Each check of the guests is one result; a run that failed without a FAIL line (no
        # image, no marker) is one failure.
        grep -E '^(PASS|FAIL) ' "$mk/run.log" | sed -E "s/^(PASS|FAIL) /\\1 $prefix/" >>"$mk/ci-results.txt" || true
        if [ "$r" != 0 ] && ! grep -q '^FAIL ' "$mk/run.log"; then
                echo "FAIL ${prefix}mkosi run, exit $r (see $mk/run.log)" >>"$mk/ci-results.txt"
                tail -n 40 "$mk/run.log"
        fi
}

if [ "${SKIP_MKOSI:-0}" != 1 ]; then
        phase "Debian package and mkosi system tests, bookworm (nspawn, qemu)"
        mk="$top/build-mkosi"
        results="$mk/ci-results.txt"
        mkdir -p "$mk"
        : >"$results"
        mkosi_suite bookworm "$mk"
        phase "lintian"
        # lintian: nothing beyond debian/timesyncd-nts.lintian-overrides, informational tags included.
        tags=$(lintian -I --pedantic "$mk"/debs/*.changes 2>/dev/null | grep -E '^[EWIPX]: ' || true)
        if [ -n "$tags" ] || ! ls "$mk"/debs/*.changes >/dev/null 2>&1; then
                echo "FAIL lintian ${tags:-(no package built)}" >>"$results"
                echo "$tags"
        else
                echo "PASS lintian_reports_nothing_beyond_the_overrides" >>"$results"
        fi
        extra+=(--extra "$results")
        # The guests of the newer suites (docs/DEBIAN.md, "Other Debian suites"): not in CI yet,
        # run when named here, e.g. NTS_MKOSI_SUITES="trixie forky".
        for suite in ${NTS_MKOSI_SUITES:-}; do
                [ "$suite" != bookworm ] || continue
                phase "Debian package and mkosi system tests, $suite (qemu)"
                rm -f "$top/build-mkosi-$suite/ci-results.txt"
                mkosi_suite "$suite" "$top/build-mkosi-$suite"
                extra+=(--extra "$top/build-mkosi-$suite/ci-results.txt")
        done
fi

phase "summary"
echo "Time per phase (wall clock):"
printf '%s\n' "${phase_times[@]}"
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
