/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Minimal unit test support: tests are functions named after the rule they check, listed in
 * TEST_MAIN(); any failed ASSERT_* aborts the program with file:line and both values, so
 * meson sees a failure. */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"

#define ASSERT_TRUE(expr)                                                                      \
        do {                                                                                   \
                if (!(expr)) {                                                                 \
                        fprintf(stderr, "%s:%i: ASSERT_TRUE(%s) failed\n", __FILE__, __LINE__,  \
                                #expr);                                                        \
                        abort();                                                               \
                }                                                                              \
        } while (false)

#define ASSERT_FALSE(expr) ASSERT_TRUE(!(expr))

/* expr must return >= 0 (systemd convention). */
#define ASSERT_OK(expr)                                                                        \
        ({                                                                                     \
                typeof(expr) _r = (expr);                                                      \
                if (_r < 0) {                                                                  \
                        fprintf(stderr, "%s:%i: ASSERT_OK(%s) failed: %s\n", __FILE__,         \
                                __LINE__, #expr, strerror((int) -_r));                         \
                        abort();                                                               \
                }                                                                              \
                _r;                                                                            \
        })

/* expr must fail with exactly -err. */
#define ASSERT_ERROR(expr, err)                                                                \
        do {                                                                                   \
                intmax_t _r = (intmax_t) (expr);                                               \
                if (_r != -(intmax_t) (err)) {                                                 \
                        fprintf(stderr, "%s:%i: ASSERT_ERROR(%s, %s) failed: got %jd (%s)\n",  \
                                __FILE__, __LINE__, #expr, #err, _r,                           \
                                _r < 0 ? strerror((int) -_r) : "success");                     \
                        abort();                                                               \
                }                                                                              \
        } while (false)

#define ASSERT_EQ(a, b)                                                                        \
        do {                                                                                   \
                intmax_t _a = (intmax_t) (a), _b = (intmax_t) (b);                             \
                if (_a != _b) {                                                                \
                        fprintf(stderr, "%s:%i: ASSERT_EQ(%s, %s) failed: %jd != %jd\n",       \
                                __FILE__, __LINE__, #a, #b, _a, _b);                           \
                        abort();                                                               \
                }                                                                              \
        } while (false)

#define ASSERT_STREQ(a, b)                                                                     \
        do {                                                                                   \
                const char *_a = (a), *_b = (b);                                               \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                                       \
                        fprintf(stderr, "%s:%i: ASSERT_STREQ(%s, %s) failed: \"%s\" != \"%s\"\n", \
                                __FILE__, __LINE__, #a, #b, strna(_a), strna(_b));             \
                        abort();                                                               \
                }                                                                              \
        } while (false)

#define ASSERT_MEMEQ(a, b, n)                                                                  \
        do {                                                                                   \
                if (memcmp((a), (b), (n)) != 0) {                                              \
                        fprintf(stderr, "%s:%i: ASSERT_MEMEQ(%s, %s, %s) failed\n", __FILE__,  \
                                __LINE__, #a, #b, #n);                                         \
                        abort();                                                               \
                }                                                                              \
        } while (false)

/* splitmix64: 64 random bits from a state the caller seeds, so that statistical checks and
 * simulations give the same numbers on every run. */
static inline uint64_t test_random_u64(uint64_t *state) {
        uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));

        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        return z ^ (z >> 31);
}

typedef struct TestCase {
        const char *name;
        void (*func)(void);
} TestCase;

#define TEST_CASE(f) { #f, f }

/* Runs every listed test in order; prints one line per test. Exit code 77 (meson's "skip")
 * when the first argument of skip_if() is true. */
#define TEST_MAIN(...)                                                                         \
        int main(void) {                                                                       \
                static const TestCase _cases[] = { __VA_ARGS__ };                              \
                log_parse_environment();                                                       \
                for (size_t _i = 0; _i < ELEMENTSOF(_cases); _i++) {                           \
                        printf("/* %s */\n", _cases[_i].name);                                 \
                        fflush(stdout);                                                        \
                        _cases[_i].func();                                                     \
                }                                                                              \
                printf("%zu tests passed\n", ELEMENTSOF(_cases));                              \
                return EXIT_SUCCESS;                                                           \
        }

#define EXIT_TEST_SKIP 77
