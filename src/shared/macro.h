/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Compiler attributes, cleanup helpers and small generic macros used everywhere. */

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _pure_ __attribute__((pure))
#define _const_ __attribute__((const))
#define _noreturn_ __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _sentinel_ __attribute__((sentinel))
#define _warn_unused_result_ __attribute__((warn_unused_result))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))
#define _public_ __attribute__((visibility("default")))
#define _fallthrough_ __attribute__((fallthrough))

#define XSTRINGIFY(x) #x
#define STRINGIFY(x) XSTRINGIFY(x)
#define XCONCATENATE(x, y) x##y
#define CONCATENATE(x, y) XCONCATENATE(x, y)
#define UNIQ_T(x, uniq) CONCATENATE(__unique_prefix_, CONCATENATE(x, uniq))
#define UNIQ __COUNTER__

#define ELEMENTSOF(x)                                                                          \
        (__builtin_choose_expr(                                                                \
                !__builtin_types_compatible_p(typeof(x), typeof(&*(x))),                       \
                sizeof(x) / sizeof((x)[0]),                                                    \
                (void) 0))

#define assert_cc(expr) _Static_assert(expr, #expr)

/* assert_se() evaluates its argument even with NDEBUG: for calls with side effects. */
#define assert_se(expr)                                                                        \
        do {                                                                                   \
                if (_unlikely_(!(expr)))                                                       \
                        assert_failed(#expr, __FILE__, __LINE__, __func__);                    \
        } while (false)

#define assert_not_reached() assert_failed("unreachable code", __FILE__, __LINE__, __func__)

_noreturn_ void assert_failed(const char *text, const char *file, int line, const char *func);

#define MAX(a, b) __MAX(UNIQ, (a), UNIQ, (b))
#define __MAX(aq, a, bq, b)                                                                    \
        ({                                                                                     \
                const typeof(a) UNIQ_T(A, aq) = (a);                                           \
                const typeof(b) UNIQ_T(B, bq) = (b);                                           \
                UNIQ_T(A, aq) > UNIQ_T(B, bq) ? UNIQ_T(A, aq) : UNIQ_T(B, bq);                 \
        })

#define MIN(a, b) __MIN(UNIQ, (a), UNIQ, (b))
#define __MIN(aq, a, bq, b)                                                                    \
        ({                                                                                     \
                const typeof(a) UNIQ_T(A, aq) = (a);                                           \
                const typeof(b) UNIQ_T(B, bq) = (b);                                           \
                UNIQ_T(A, aq) < UNIQ_T(B, bq) ? UNIQ_T(A, aq) : UNIQ_T(B, bq);                 \
        })

#define IN_SET(x, first, ...)                                                                  \
        ({                                                                                     \
                const typeof(first) _in_set[] = { first, __VA_ARGS__ };                        \
                bool _found = false;                                                           \
                for (size_t _i = 0; _i < ELEMENTSOF(_in_set); _i++)                            \
                        if (_in_set[_i] == (x)) {                                              \
                                _found = true;                                                 \
                                break;                                                         \
                        }                                                                      \
                _found;                                                                        \
        })

#define CLAMP(x, low, high) MIN(MAX((x), (low)), (high))

/* Signed 64-bit sums and differences that stop at INT64_MIN/INT64_MAX instead of wrapping. */
static inline int64_t int64_add_saturating(int64_t a, int64_t b) {
        int64_t r;

        if (__builtin_add_overflow(a, b, &r))
                return b > 0 ? INT64_MAX : INT64_MIN;
        return r;
}

static inline int64_t int64_sub_saturating(int64_t a, int64_t b) {
        int64_t r;

        if (__builtin_sub_overflow(a, b, &r))
                return b < 0 ? INT64_MAX : INT64_MIN;
        return r;
}

/* Round up to the next multiple of four: NTP extension fields are word aligned. */
#define ALIGN4(l) (((l) + 3) & ~(size_t) 3)

#define zero(x) (memset(&(x), 0, sizeof(x)))

#define TAKE_PTR(p)                                                                            \
        ({                                                                                     \
                typeof(p) _ptr_ = (p);                                                         \
                (p) = NULL;                                                                    \
                _ptr_;                                                                         \
        })

#define TAKE_FD(fd)                                                                            \
        ({                                                                                     \
                int _fd_ = (fd);                                                               \
                (fd) = -EBADF;                                                                 \
                _fd_;                                                                          \
        })

/* Allocation that cannot overflow in the size multiplication. */
#define new(t, n) ((t *) malloc_multiply(sizeof(t), (n)))
#define new0(t, n) ((t *) calloc((n) ?: 1, sizeof(t)))

static inline void *malloc_multiply(size_t size, size_t n) {
        if (size > 0 && n > SIZE_MAX / size)
                return NULL;
        return malloc((size * n) ?: 1);
}

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void closep(int *fd) {
        safe_close(*fd);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                \
        static inline void func##p(type *p) {                                                  \
                if (*p)                                                                        \
                        *p = func(*p);                                                         \
        }

/* For free functions that return void: the cleanup helper sets nothing back. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(type, func)                                           \
        static inline void func##p(type *p) {                                                  \
                if (*p)                                                                        \
                        func(*p);                                                              \
        }

#define streq(a, b) (strcmp((a), (b)) == 0)
#define strcaseeq(a, b) (strcasecmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)

static inline bool isempty(const char *s) {
        return !s || !s[0];
}

static inline const char *strempty(const char *s) {
        return s ?: "";
}

static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

/* Zero memory holding key material in a way the compiler may not drop. */
static inline void explicit_bzero_safe(void *p, size_t n) {
        if (p && n > 0)
                explicit_bzero(p, n);
}

#define DISABLE_WARNING_PUSH _Pragma("GCC diagnostic push")
#define DISABLE_WARNING_FORMAT_NONLITERAL                                                      \
        _Pragma("GCC diagnostic push");                                                        \
        _Pragma("GCC diagnostic ignored \"-Wformat-nonliteral\"")
#define REENABLE_WARNING _Pragma("GCC diagnostic pop")
