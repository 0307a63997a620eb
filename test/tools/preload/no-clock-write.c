/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* LD_PRELOAD for a client that refuses to start without the right to set the clock (ntpd-rs's
 * ntp-daemon exits with "Could not control clock: Insufficient permissions" at its first
 * clock_adjtime()). Every call that would change a clock becomes a read: clock_adjtime() and
 * adjtimex() with modes set read the clock's state and return it, clock_settime() and
 * settimeofday() do nothing. The client still runs without CAP_SYS_TIME, so the kernel would
 * refuse the change anyway; this only keeps the refusal from stopping it. The number of calls
 * turned into reads is printed to stderr at exit (NO_CLOCK_WRITE_QUIET=1 silences it). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <time.h>

typedef int (*clock_adjtime_fn)(clockid_t, struct timex *);

static unsigned long n_refused;

int clock_adjtime(clockid_t clock, struct timex *tx) {
        static clock_adjtime_fn real;
        struct timex read_only = { .modes = 0 };
        int r;

        if (!real)
                real = (clock_adjtime_fn) dlsym(RTLD_NEXT, "clock_adjtime");
        if (!real) {
                errno = ENOSYS;
                return -1;
        }
        if (tx->modes == 0)
                return real(clock, tx);

        /* What the caller would read back after its change: the state as it is. */
        __atomic_add_fetch(&n_refused, 1, __ATOMIC_RELAXED);
        r = real(clock, &read_only);
        if (r >= 0)
                *tx = read_only;
        return r;
}

int adjtimex(struct timex *tx) {
        return clock_adjtime(CLOCK_REALTIME, tx);
}

int ntp_adjtime(struct timex *tx) {
        return clock_adjtime(CLOCK_REALTIME, tx);
}

int clock_settime(clockid_t clock, const struct timespec *ts) {
        (void) clock;
        (void) ts;
        __atomic_add_fetch(&n_refused, 1, __ATOMIC_RELAXED);
        return 0;
}

int settimeofday(const struct timeval *tv, const struct timezone *tz) {
        (void) tv;
        (void) tz;
        __atomic_add_fetch(&n_refused, 1, __ATOMIC_RELAXED);
        return 0;
}

__attribute__((destructor)) static void no_clock_write_report(void) {
        const char *quiet = getenv("NO_CLOCK_WRITE_QUIET");

        if (!quiet || quiet[0] != '1')
                fprintf(stderr, "no-clock-write: %lu clock changes turned into reads\n", n_refused);
}
