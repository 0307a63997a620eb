/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>
#include <string.h>
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

#define RANDOM_POOL_SIZE 1024

static uint8_t pool[RANDOM_POOL_SIZE];
static size_t pool_left;
static bool pool_atfork_set;

static void pool_forget(void) {
        explicit_bzero(pool, sizeof pool);
        pool_left = 0;
}

int random_bytes_pooled(void *buf, size_t n) {
        uint8_t *p;

        assert(buf || n == 0);

        if (n == 0)
                return 0;
        if (n > RANDOM_POOL_SIZE / 4)
                return random_bytes(buf, n);

        /* A child must not hand out the bytes its parent will use too. */
        if (!pool_atfork_set) {
                if (pthread_atfork(NULL, NULL, pool_forget) != 0)
                        return random_bytes(buf, n);
                pool_atfork_set = true;
        }

        if (pool_left < n) {
                /* Only bytes from an initialized kernel pool are kept for later. */
                if (getrandom(pool, sizeof pool, GRND_NONBLOCK) != (ssize_t) sizeof pool) {
                        pool_forget();
                        return random_bytes(buf, n);
                }
                pool_left = sizeof pool;
        }

        p = pool + sizeof pool - pool_left;
        memcpy(buf, p, n);
        explicit_bzero(p, n);
        pool_left -= n;
        return 0;
}
