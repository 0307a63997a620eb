/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* struct iovec as the one way buffers cross module boundaries. */

#include <sys/uio.h>

#include "macro.h"

#define IOVEC_MAKE(base, len) ((struct iovec) { .iov_base = (void *) (base), .iov_len = (len) })
#define IOVEC_NULL ((struct iovec) {})

static inline bool iovec_is_set(const struct iovec *iov) {
        return iov && iov->iov_base && iov->iov_len > 0;
}

/* Advance an iovec by n bytes; the caller must have checked n <= iov_len. */
static inline struct iovec *iovec_inc(struct iovec *iov, size_t n) {
        assert(iov);
        assert(n <= iov->iov_len);
        iov->iov_base = (uint8_t *) iov->iov_base + n;
        iov->iov_len -= n;
        return iov;
}

static inline bool iovec_equal(const struct iovec *a, const struct iovec *b) {
        return a->iov_len == b->iov_len &&
               (a->iov_len == 0 || memcmp(a->iov_base, b->iov_base, a->iov_len) == 0);
}

/* Free the buffer of a heap-owned iovec and reset it. */
static inline void iovec_done(struct iovec *iov) {
        if (!iov)
                return;
        iov->iov_base = mfree(iov->iov_base);
        iov->iov_len = 0;
}

/* Like iovec_done(), for buffers that hold key material or cookies. */
static inline void iovec_done_erase(struct iovec *iov) {
        if (!iov)
                return;
        explicit_bzero_safe(iov->iov_base, iov->iov_len);
        iovec_done(iov);
}

/* Heap copy of an iovec; returns -ENOMEM on allocation failure. */
int iovec_memdup(const struct iovec *source, struct iovec *ret);
