/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Microsecond time values, and time spans in the syntax of systemd.time(7) ("1min 30s", "2h",
 * "500ms", "infinity"), so timesyncd.conf values mean what they mean for stock timesyncd. */

#include <inttypes.h>
#include <stdint.h>
#include <time.h>

#include "macro.h"

typedef uint64_t usec_t;
typedef uint64_t nsec_t;

#define USEC_INFINITY ((usec_t) UINT64_MAX)
#define USEC_FMT "%" PRIu64

#define NSEC_PER_USEC ((nsec_t) 1000ULL)
#define NSEC_PER_SEC ((nsec_t) 1000000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define USEC_PER_SEC ((usec_t) 1000000ULL)
#define USEC_PER_MINUTE ((usec_t) (60ULL * USEC_PER_SEC))
#define USEC_PER_HOUR ((usec_t) (60ULL * USEC_PER_MINUTE))
#define USEC_PER_DAY ((usec_t) (24ULL * USEC_PER_HOUR))
#define USEC_PER_WEEK ((usec_t) (7ULL * USEC_PER_DAY))
/* systemd.time(7): a month is 30.44 days and a year 365.25 days. */
#define USEC_PER_MONTH ((usec_t) (2629800ULL * USEC_PER_SEC))
#define USEC_PER_YEAR ((usec_t) (31557600ULL * USEC_PER_SEC))

/* Longest output of format_timespan(), including the NUL. */
#define FORMAT_TIMESPAN_MAX 64U

usec_t now(clockid_t clock);

/* a + b, or USEC_INFINITY where the sum does not fit. */
static inline usec_t usec_add(usec_t a, usec_t b) {
        return b > USEC_INFINITY - a ? USEC_INFINITY : a + b;
}

/* USEC_INFINITY for a timespec that does not fit, or has tv_sec == -1 (the "unset" marker). */
usec_t timespec_load(const struct timespec *ts);
/* USEC_INFINITY is stored as { -1, -1 }. */
struct timespec *timespec_store(struct timespec *ts, usec_t u);

/* "5" (seconds), "5s", "1min 30s", "1.5s", "infinity", ...; -EINVAL for bad syntax, -ERANGE
 * for negative values and for sums that do not fit below USEC_INFINITY. */
int parse_sec(const char *s, usec_t *ret);

/* Like systemd: "1min 4s", "32s", "2h 8min"; parts smaller than accuracy are dropped, and spans
 * under a minute use a decimal point down to accuracy ("1.500s"). Output fits size, always
 * NUL-terminated. */
char *format_timespan(char *buf, size_t size, usec_t t, usec_t accuracy);
#define FORMAT_TIMESPAN(t, accuracy)                                                           \
        format_timespan((char[FORMAT_TIMESPAN_MAX]) {}, FORMAT_TIMESPAN_MAX, (t), (accuracy))

/* Longest output of format_timestamp(), including the NUL. */
#define FORMAT_TIMESTAMP_MAX 64U

/* A point in time (microseconds since 1970, CLOCK_REALTIME) in the local time zone, like
 * systemd prints it: "Fri 2026-12-04 18:49:24 UTC"; "n/a" for 0, USEC_INFINITY or a time the
 * C library cannot represent. Output fits size, always NUL-terminated. */
char *format_timestamp(char *buf, size_t size, usec_t t);
#define FORMAT_TIMESTAMP(t) format_timestamp((char[FORMAT_TIMESTAMP_MAX]) {}, FORMAT_TIMESTAMP_MAX, (t))

/* Arms the CLOCK_REALTIME timerfd fd (absolute) for the largest time_t with
 * TFD_TIMER_CANCEL_ON_SET: it never expires, and becomes readable (read() fails with ECANCELED)
 * when anybody sets the clock. Armed again after each such change. Returns 0 or -errno. */
int timerfd_arm_clock_change(int fd);
