/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* LD_PRELOAD shim for the ENOMEM tests: while the file $FAILMALLOC_FILE exists, each
 * malloc(), calloc(), realloc() and aligned allocation fails with ENOMEM with the probability
 * the file holds ("0.3"; empty: 1). The file is looked at no more than every 5 ms, so the
 * shim costs a clock read per allocation. glibc lets a program replace its allocator, and its
 * own internal allocations (strdup(), getaddrinfo(), stdio, the dynamic loader's later work)
 * go through the replacement too, so libc, libsystemd and libcrypto all see the failures. */

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_uint_fast64_t next_check_ns;
static atomic_uint_fast64_t rng_state = 0x9e3779b97f4a7c15u;
static _Atomic double rate;

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* xorshift64: reproducible, allocation-free, good enough to spread failures. */
static uint64_t next_random(void) {
        uint64_t x = atomic_load(&rng_state);

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        atomic_store(&rng_state, x);
        return x;
}

/* The window's rate, or < 0 when the file does not exist. open() and read(), not stdio:
 * stdio would allocate. */
static double read_rate(const char *file) {
        char buf[32];
        ssize_t l;
        int fd;

        fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        l = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (l <= 0)
                return 1;
        buf[l] = 0;
        return strtod(buf, NULL);
}

static int should_fail(void) {
        const char *file = getenv("FAILMALLOC_FILE");
        uint64_t t;

        if (!file)
                return 0;

        t = now_ns();
        if (t >= atomic_load(&next_check_ns)) {
                atomic_store(&rate, read_rate(file));
                atomic_store(&next_check_ns, t + 5000000u);
        }

        if (atomic_load(&rate) <= 0)
                return 0;
        return (double) (next_random() >> 11) / (double) (UINT64_C(1) << 53) < atomic_load(&rate);
}

/* The project builds with -fvisibility=hidden; the replacements must be seen by the loader. */
#define EXPORTED __attribute__((visibility("default")))

EXPORTED void *malloc(size_t size) {
        if (should_fail()) {
                errno = ENOMEM;
                return NULL;
        }
        return __libc_malloc(size);
}

EXPORTED void *calloc(size_t n, size_t size) {
        if (should_fail()) {
                errno = ENOMEM;
                return NULL;
        }
        return __libc_calloc(n, size);
}

EXPORTED void *realloc(void *p, size_t size) {
        if (size > 0 && should_fail()) {
                errno = ENOMEM;
                return NULL;
        }
        return __libc_realloc(p, size);
}

EXPORTED int posix_memalign(void **ret, size_t alignment, size_t size) {
        void *p;

        if (should_fail())
                return ENOMEM;
        p = __libc_memalign(alignment, size);
        if (!p)
                return ENOMEM;
        *ret = p;
        return 0;
}

EXPORTED void *aligned_alloc(size_t alignment, size_t size) {
        if (should_fail()) {
                errno = ENOMEM;
                return NULL;
        }
        return __libc_memalign(alignment, size);
}
