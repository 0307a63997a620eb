/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "iovec-util.h"

int iovec_memdup(const struct iovec *source, struct iovec *ret) {
        assert(source);
        assert(ret);

        if (source->iov_len == 0) {
                *ret = IOVEC_NULL;
                return 0;
        }

        void *p = malloc(source->iov_len);
        if (!p)
                return -ENOMEM;

        memcpy(p, source->iov_base, source->iov_len);
        *ret = IOVEC_MAKE(p, source->iov_len);
        return 0;
}
