/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The libFuzzer entry point every fuzz-*.c defines. Built with -Dfuzz=true, libFuzzer calls
 * it; otherwise fuzz-main.c does, once per corpus file, so the corpus is a regression test. */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
