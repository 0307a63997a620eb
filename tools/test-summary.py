#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Adds up meson's test logs (and extra result lines) into the one line CI reads:
#   N passed, N failed, N skipped
# Usage: test-summary.py [--extra FILE] TESTLOG.json...
# An extra FILE holds lines "PASS name" / "FAIL name" for checks that are not meson tests
# (fuzzer runs). Exit status 1 if anything failed or nothing ran.
import json
import sys

passed = failed = skipped = 0
args = sys.argv[1:]
extra = []
while args and args[0] == "--extra":
    extra.append(args[1])
    args = args[2:]

for path in args:
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        print(f"missing test log: {path}", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        if not line.strip():
            continue
        result = json.loads(line).get("result")
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1

for path in extra:
    for line in open(path).read().splitlines():
        if line.startswith("PASS "):
            passed += 1
        elif line.startswith("FAIL "):
            failed += 1

print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
