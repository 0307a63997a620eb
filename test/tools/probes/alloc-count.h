/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Counts the calls of malloc(), calloc() and realloc() in the executable that links
 * alloc-count.c, libcrypto's included (the executable's symbols come first in the global
 * scope): for "nothing is allocated per packet" in test-nts-crypto and bench-packet. Not under
 * AddressSanitizer, whose allocator must see every allocation: there alloc_count_available()
 * is false and the count stays 0. */

#include <stdbool.h>

bool alloc_count_available(void);
unsigned long alloc_count(void);
