/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <sys/random.h>

#include "macro.h"
#include "random-util.h"

#ifndef GRND_INSECURE
#define GRND_INSECURE 0x0004
#endif

int random_bytes(void *buf, size_t n) {
        uint8_t *p = buf;
        bool insecure = false;

        assert(buf || n == 0);

        while (n > 0) {
                ssize_t l = getrandom(p, n, insecure ? GRND_INSECURE : GRND_NONBLOCK);
                if (l < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN && !insecure) {
                                /* The pool is not initialized yet. Unique (not secret) bytes
                                 * are what UIDs and SIV nonces need: take what the kernel has. */
                                insecure = true;
                                continue;
                        }
                        if (errno == EINVAL && insecure) {
                                /* Kernel older than 5.6: no GRND_INSECURE; block instead. */
                                l = getrandom(p, n, 0);
                                if (l < 0) {
                                        if (errno == EINTR)
                                                continue;
                                        return -errno;
                                }
                        } else
                                return -errno;
                }
                p += l;
                n -= (size_t) l;
        }

        return 0;
}
