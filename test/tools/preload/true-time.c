/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* LD_PRELOAD for a chronyd server in a test: its CLOCK_REALTIME is the true time, that is
 * TRUE_TIME_BASE="REALTIME_NS:RAW_NS" (taken with true-time-base while the clock was right,
 * optionally shifted) plus the CLOCK_MONOTONIC_RAW time since. In the qemu guest, steps and
 * slews of the guest's clock do not reach it, so the server stays right while the daemon under
 * test moves the guest's clock towards it; on the host, a shifted base makes a server that is
 * years ahead without touching any clock. TRUE_TIME_DRIFT=NS_PER_S (optional, signed) makes that
 * clock run fast (or slow) by so many nanoseconds per second since the base: a server whose clock
 * drifts away from the truth. Kernel receive timestamps are refused: they carry the system clock,
 * and chronyd would mix them with this one. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#define NSEC_PER_SEC INT64_C(1000000000)

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);

static int64_t base_realtime, base_raw, drift_ns_per_s;

static int base_load(void) {
        static int state; /* 0: not read, 1: set, -1: not set */
        const char *e;

        if (state == 0) {
                e = getenv("TRUE_TIME_BASE");
                state = e && sscanf(e, "%" SCNd64 ":%" SCNd64, &base_realtime, &base_raw) == 2 ? 1 : -1;
                e = getenv("TRUE_TIME_DRIFT");
                if (state > 0 && e && sscanf(e, "%" SCNd64, &drift_ns_per_s) != 1)
                        drift_ns_per_s = 0;
        }
        return state;
}

/* What the drift added over elapsed nanoseconds, in two parts so that hours at a rate of
 * milliseconds per second stay within 64 bits. */
static int64_t drifted(int64_t elapsed) {
        return elapsed / NSEC_PER_SEC * drift_ns_per_s + elapsed % NSEC_PER_SEC * drift_ns_per_s / NSEC_PER_SEC;
}

static int true_time(struct timespec *ts) {
        static clock_gettime_fn real;
        struct timespec raw;
        int64_t ns;

        if (!real)
                real = (clock_gettime_fn) dlsym(RTLD_NEXT, "clock_gettime");
        if (real(CLOCK_MONOTONIC_RAW, &raw) < 0)
                return -1;
        ns = (int64_t) raw.tv_sec * NSEC_PER_SEC + raw.tv_nsec - base_raw;
        ns = base_realtime + ns + drifted(ns);
        ts->tv_sec = (time_t) (ns / NSEC_PER_SEC);
        ts->tv_nsec = (long) (ns % NSEC_PER_SEC);
        return 0;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
        static clock_gettime_fn real;

        if ((id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) && base_load() > 0)
                return true_time(ts);
        if (!real)
                real = (clock_gettime_fn) dlsym(RTLD_NEXT, "clock_gettime");
        return real(id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
        struct timespec ts;

        (void) tz;
        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return -1;
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
        return 0;
}

time_t time(time_t *t) {
        struct timespec ts;

        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return (time_t) -1;
        if (t)
                *t = ts.tv_sec;
        return ts.tv_sec;
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t len) {
        static setsockopt_fn real;

        if (level == SOL_SOCKET && (name == SO_TIMESTAMP_OLD || name == SO_TIMESTAMPNS_OLD ||
                                    name == SO_TIMESTAMPING_OLD || name == SO_TIMESTAMP_NEW ||
                                    name == SO_TIMESTAMPNS_NEW || name == SO_TIMESTAMPING_NEW)) {
                errno = ENOPROTOOPT;
                return -1;
        }
        if (!real)
                real = (setsockopt_fn) dlsym(RTLD_NEXT, "setsockopt");
        return real(fd, level, name, value, len);
}
