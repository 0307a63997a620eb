/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stddef.h>

#include "alloc-count.h"
#include "macro.h"

#if defined(__SANITIZE_ADDRESS__)
bool alloc_count_available(void) {
        return false;
}

unsigned long alloc_count(void) {
        return 0;
}
#else
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t k);
extern void *__libc_realloc(void *p, size_t n);
static unsigned long n_allocs;

bool alloc_count_available(void) {
        return true;
}

unsigned long alloc_count(void) {
        return n_allocs;
}

_public_ void *malloc(size_t n) {
        n_allocs++;
        return __libc_malloc(n);
}

_public_ void *calloc(size_t n, size_t k) {
        n_allocs++;
        return __libc_calloc(n, k);
}

_public_ void *realloc(void *p, size_t n) {
        n_allocs++;
        return __libc_realloc(p, n);
}
#endif
