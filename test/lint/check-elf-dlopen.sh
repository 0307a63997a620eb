#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-elf-dlopen.sh BINARY...: OpenSSL is a soft dependency. No binary may link libssl or
# libcrypto (no DT_NEEDED entry); every binary that can use NTS carries ELF dlopen metadata
# (.note.dlopen, owner FDO, type 0x407c0c0a) naming both sonames for the feature "nts".
set -euo pipefail

for bin; do
        dynamic=$(readelf -d "$bin")
        if grep -E 'NEEDED.*(libssl|libcrypto)' <<<"$dynamic"; then
                echo "FAIL: $bin links OpenSSL" >&2
                exit 1
        fi
        notes=$(readelf -p .note.dlopen "$bin" 2>/dev/null || true)
        for soname in libssl.so.3 libcrypto.so.3; do
                grep -q "\"feature\":\"nts\".*\"soname\":\[\"$soname\"\]" <<<"$notes" || {
                        echo "FAIL: $bin has no .note.dlopen entry for $soname" >&2
                        exit 1
                }
        done
        # Captured first: grep -q would end the pipe early, and pipefail would call that a failure.
        # readelf exits 1 on note types it does not know, which ours is to binutils 2.40.
        all_notes=$(readelf -n "$bin" 2>/dev/null || true)
        grep -q 'FDO.*0x407c0c0a' <<<"$all_notes" || {
                echo "FAIL: $bin: the dlopen note is not of owner FDO, type 0x407c0c0a" >&2
                exit 1
        }
        echo "$bin: no OpenSSL in DT_NEEDED, dlopen metadata for libssl.so.3 and libcrypto.so.3"
done
