#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole test suite, as CI runs it, from a fresh clone on Debian 12 (as root):
#   1. install build and test dependencies (apt-get), fetch peer servers (chrony, NTPsec) and
#      the DNS fixture's servers (NSD, systemd-resolved)
#   2. -Werror build with gcc; unit, integration and peer tests
#   3. the same suite under ASan+UBSan
#   4. every libFuzzer target for FUZZ_SECONDS (default 60) under ASan+UBSan (clang)
#   5. the Debian package (lintian) and the mkosi system tests of Debian 12, 13 and testing
#      (bookworm, trixie, forky): each suite's package and image booted in nspawn and in qemu,
#      whose own clock is the only one stepped (test/mkosi/run.sh)
# Steps 2 and 3 wait mostly on sleeps, not on the CPU: beside them, one background lane builds
# the suites' packages and images side by side (niced: downloads and dpkg), another boots each
# image once it is built (nspawn, then qemu), one guest at a time. The fuzzers, which take both
# cores, run after the ASan suite at nice 10, beside the last guest's boot: a TCG guest's key
# exchange with its chronyd has failed at high load, so the guest keeps the CPU it asks for.
# The last line is the summary CI reads: "N passed, N failed, N skipped".
# Environment: FUZZ_SECONDS, SKIP_ASAN=1, SKIP_FUZZ=1, SKIP_MKOSI=1 (local shortcuts; CI runs
# everything); NTS_MKOSI_SUITES (default "trixie forky"): the guests beside bookworm's.
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
if [ -x test/tools/fixtures/fetch-peers.sh ]; then
        test/tools/fixtures/fetch-peers.sh "$peers" || exit 1
fi
if [ -x test/tools/fixtures/fetch-dns.sh ]; then
        test/tools/fixtures/fetch-dns.sh "$peers" || exit 1
fi
# Debian 12's stock daemon, which the simulation runs beside ours (test-sim-stock-*, bench/accuracy.sh).
test/tools/fixtures/fetch-stock.sh "$peers" || exit 1
export TSNTS_PEERS_DIR="$peers"

# The guests (docs/DEBIAN.md, "Other Debian suites"; docs/TESTING.md, "Where CI's time goes").
guest_suites=(bookworm)
for suite in ${NTS_MKOSI_SUITES-trixie forky}; do
        [ "$suite" = bookworm ] || guest_suites+=("$suite")
done
# guest_dir SUITE: that suite's $NTS_MKOSI_DIR
guest_dir() {
        if [ "$1" = bookworm ]; then echo "$top/build-mkosi"; else echo "$top/build-mkosi-$1"; fi
}
# guest_run SUITE LOG RUN-SH-OPTIONS...: test/mkosi/run.sh for SUITE with CI's peers; the log
# ends with the run's exit code and its start and end (seconds into this run).
guest_run() {
        local suite=$1 log=$2 start=$SECONDS r=0
        shift 2
        NTS_MKOSI_DIR=$(guest_dir "$suite") NTS_MKOSI_PEERS="$peers" \
                timeout 3600 test/mkosi/run.sh --suite "$suite" "$@" >"$log" 2>&1 || r=$?
        echo "=== run.sh $* exit $r, from $start s to $SECONDS s" >>"$log"
        return "$r"
}
# guest_build SUITE: its package and image; SUITE's directory gets "built" with run.sh's exit
# code when the build ended.
guest_build() {
        local mk r=0
        mk=$(guest_dir "$1")
        guest_run "$1" "$mk/ci-build.log" --no-nspawn --no-qemu || r=$?
        echo "$r" >"$mk/built"
}
# guest_builds: every suite's package and image side by side, at a lower priority than the
# tests and the guests' boots (mostly downloads, debootstrap and dpkg). bookworm's, the
# quickest, is done first and its boots begin while the others build: the boot lane, which
# takes about as long as the test suites, then never waits for an image.
guest_builds() {
        local suite
        renice -n 10 -p "$BASHPID" >/dev/null
        for suite in "${guest_suites[@]}"; do
                guest_build "$suite" &
        done
        wait
}
# guest_boots: each suite's image, once built: nspawn, then qemu (two boots). One guest at a
# time, none beside another.
guest_boots() {
        local suite mk
        for suite in "${guest_suites[@]}"; do
                mk=$(guest_dir "$suite")
                # Bounded by the build lane: it writes "built" or ends.
                while [ ! -e "$mk/built" ] && kill -0 "$builds_pid" 2>/dev/null; do
                        sleep 5
                done
                [ "$(cat "$mk/built" 2>/dev/null)" = 0 ] || continue
                guest_run "$suite" "$mk/ci-nspawn.log" --reuse-image --no-qemu || true
                # The CPU per poll against stock is measured in bookworm's guest only: in each
                # guest it costs about 4 minutes of waiting for polls under emulation. The
                # tables of the other suites come from run.sh --only cpu (docs/BENCHMARKS.md).
                if [ "$suite" = bookworm ]; then
                        guest_run "$suite" "$mk/ci-qemu.log" --reuse-image --no-nspawn || true
                else
                        guest_run "$suite" "$mk/ci-qemu.log" --reuse-image --no-nspawn --skip cpu || true
                fi
        done
}
if [ "${SKIP_MKOSI:-0}" != 1 ]; then
        for suite in "${guest_suites[@]}"; do
                mk=$(guest_dir "$suite")
                mkdir -p "$mk"
                rm -f "$mk/built" "$mk"/ci-*.log
        done
        guest_builds &
        builds_pid=$!
        guest_boots &
        boots_pid=$!
        echo "guests of ${guest_suites[*]}: building and booting in the background"
fi

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
        if nice -n 10 "$f" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 "$work" "test/fuzz/corpus/$name" \
                        >"build-fuzz/$name.log" 2>&1; then
                execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/$name.log")
                echo "PASS $name executions=${execs:-?} seconds=$FUZZ_SECONDS" >"build-fuzz/$name.result"
        else
                echo "FAIL $name (see build-fuzz/$name.log)" >"build-fuzz/$name.result"
        fi
        rm -rf "$work"
}

fuzz_built=0
if [ "${SKIP_FUZZ:-0}" != 1 ]; then
        phase "build-fuzz build (clang)"
        # Only the fuzzers run here: the suite itself already ran twice.
        CC=clang build build-fuzz -Dwerror=true -Dfuzz=true -Db_lundef=false && fuzz_built=1 || status=1
fi

if [ "${SKIP_FUZZ:-0}" != 1 ]; then
        results="$top/build-fuzz/fuzz-results.txt"
        if [ "$fuzz_built" = 1 ]; then
                phase "libFuzzer targets, ${FUZZ_SECONDS}s each, two at a time"
                # Each fuzzer is one process on one core: two at a time fill the machine's two
                # cores and halve the phase; every fuzzer still gets its FUZZ_SECONDS. They run
                # beside the last guest's boot, niced, so that the guest (software emulation,
                # whose key exchanges time out when starved) keeps the CPU it asks for.
                : > "$results"
                fuzzers=()
                for f in build-fuzz/test/fuzz/fuzz-*; do
                        { [ -x "$f" ] && [ -f "$f" ]; } || continue
                        fuzzers+=("$f")
                        rm -f "build-fuzz/$(basename "$f").result"
                done
                # In a subshell, whose only children are the fuzzers: the guests' lanes are
                # children of this shell, and wait -n or wait would take them too.
                (
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
                )
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
        fi
fi

if [ "${SKIP_MKOSI:-0}" != 1 ]; then
        phase "waiting for the guests' builds and boots"
        wait "$builds_pid" "$boots_pid"
fi

# guest_results SUITE: the check lines of SUITE's runs (prefixed with the suite unless it is
# bookworm) into its ci-results.txt, and lintian on its package.
guest_results() {
        local suite=$1 mk prefix='' log r tags
        mk=$(guest_dir "$suite")
        [ "$suite" = bookworm ] || prefix="$suite:"
        : >"$mk/ci-results.txt"
        echo "--- $suite"
        for log in "$mk/ci-build.log" "$mk/ci-nspawn.log" "$mk/ci-qemu.log"; do
                if [ ! -e "$log" ]; then
                        echo "FAIL ${prefix}mkosi $(basename "$log" .log): did not run (the build failed)" >>"$mk/ci-results.txt"
                        continue
                fi
                grep -E '^(PASS|FAIL|SKIP) |^--- |^mkosi: |^=== run.sh ' "$log"
                # Each check of the guests is one result; a run that failed without a FAIL line
                # (no image, no marker) is one failure.
                grep -E '^(PASS|FAIL) ' "$log" | sed -E "s/^(PASS|FAIL) /\\1 $prefix/" >>"$mk/ci-results.txt" || true
                r=$(sed -n 's/^=== run.sh .* exit \([0-9]*\), from .*/\1/p' "$log" | tail -n 1)
                if [ "${r:-1}" != 0 ] && ! grep -q '^FAIL ' "$log"; then
                        echo "FAIL ${prefix}mkosi $(basename "$log" .log), exit ${r:-?} (see $log)" >>"$mk/ci-results.txt"
                        tail -n 40 "$log"
                fi
        done
        # lintian: nothing beyond debian/timesyncd-nts.lintian-overrides, informational tags
        # included (Debian 12's lintian for every suite's package).
        tags=$(lintian -I --pedantic "$mk"/debs/*.changes 2>/dev/null | grep -E '^[EWIPX]: ' || true)
        if [ -n "$tags" ] || ! ls "$mk"/debs/*.changes >/dev/null 2>&1; then
                echo "FAIL ${prefix}lintian ${tags:-(no package built)}" >>"$mk/ci-results.txt"
                echo "$tags"
        else
                echo "PASS ${prefix}lintian_reports_nothing_beyond_the_overrides" >>"$mk/ci-results.txt"
        fi
        extra+=(--extra "$mk/ci-results.txt")
}

if [ "${SKIP_MKOSI:-0}" != 1 ]; then
        phase "guests' results and lintian"
        for suite in "${guest_suites[@]}"; do
                guest_results "$suite"
        done
fi

phase "summary"
echo "Time per phase (wall clock):"
printf '%s\n' "${phase_times[@]}"
if [ "${SKIP_MKOSI:-0}" != 1 ]; then
        echo "The guests' lanes, beside the phases above (seconds into this run):"
        for suite in "${guest_suites[@]}"; do
                mk=$(guest_dir "$suite")
                for log in "$mk/ci-build.log" "$mk/ci-nspawn.log" "$mk/ci-qemu.log"; do
                        [ -e "$log" ] || continue
                        sed -n 's/^=== run.sh .* exit \([0-9]*\), from \([0-9]*\) s to \([0-9]*\) s$/\2 \3 \1/p' "$log" |
                                awk -v s="$suite" -v l="$(basename "$log" .log)" \
                                '{ printf "%5d s  %s %s, from %d s to %d s, exit %d\n", $2 - $1, s, l, $1, $2, $3 }'
                done
        done
fi
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
