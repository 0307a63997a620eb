/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A model of the Linux kernel's clock discipline (kernel/time/ntp.c and the parts of
 * kernel/time/timekeeping.c that step the clock), for the daemon in simulated time: what
 * adjtimex() does to CLOCK_REALTIME, second by second, over an oscillator with a frequency error
 * and a random walk. Pure: no system call, no global state; the caller says what true time it is.
 *
 * Time lines, all in nanoseconds: true time (given by the caller, never going back);
 * CLOCK_REALTIME (the disciplined clock: steps, leaps, the PLL, the frequency, adjtime());
 * the monotonic clock (CLOCK_REALTIME without its steps and leaps: the NTP frequency and slews
 * move it, as on Linux; it stops while the machine is suspended); the boot time clock (the
 * monotonic clock plus the time suspended); the raw clock (the oscillator alone,
 * CLOCK_MONOTONIC_RAW, which stops while suspended too). The
 * nanosecond state of ntp.c is kept in its own fixed point (ns << 32), with one NTP interval
 * per second (the kernel's NTP_INTERVAL_FREQ of a tickless kernel is 2: its offset reads may
 * differ from these by a nanosecond of rounding). */

#include <stdint.h>
#include <sys/timex.h>

typedef struct KClock {
        /* the oscillator under the clock */
        double osc;                     /* its frequency error, a fraction */
        double wander;                  /* the standard deviation of its change per second */
        uint64_t prng;

        /* true time is base + t; the clocks are given as their difference from true time */
        int64_t base;
        double t;                       /* true time of the last update, after base */
        double off;                     /* CLOCK_REALTIME minus true time at t */
        double off0;                    /* ... at the start: the monotonic clocks start at 0 */
        double raw_off;                 /* the raw clock minus true time at t */
        double stepped;                 /* the sum of steps, leaps and suspends, which MONOTONIC does not have */
        double slept;                   /* the time suspended, which BOOTTIME has and MONOTONIC not */
        double rate;                    /* CLOCK_REALTIME's rate error until the next update */
        int64_t next_second;            /* the CLOCK_REALTIME second at which the next update runs */
        unsigned n_steps;               /* steps and leaps: what TFD_TIMER_CANCEL_ON_SET sees */

        /* ntp.c's state */
        int state;                      /* TIME_OK, TIME_INS, ... */
        int status;                     /* STA_* */
        int64_t offset;                 /* the phase still to slew, ns << 32 */
        int64_t freq;                   /* ns/s << 32 */
        int64_t chunk;                  /* this second's slew (phase and adjtime()), ns/s << 32 */
        int64_t reftime;                /* the CLOCK_REALTIME second of the last ADJ_OFFSET */
        long constant, maxerror, esterror, tick, tai;
        long adjust;                    /* adjtime()'s offset still to slew, µs */
} KClock;

/* At true time true_ns the clock reads realtime_ns; osc_ppm: the oscillator's frequency error;
 * wander: the standard deviation of its change per second (a fraction, e.g. 1e-9), drawn
 * from seed. The state is the kernel's at boot: unsynchronized, frequency 0, time constant 2. */
void kclock_init(KClock *k, int64_t true_ns, int64_t realtime_ns, double osc_ppm, double wander, uint64_t seed);

/* Runs the clocks and the once-a-second updates up to true time true_ns. */
void kclock_advance(KClock *k, int64_t true_ns);

/* The clocks at true time true_ns (which they advance to): CLOCK_REALTIME since the epoch;
 * the monotonic and raw clocks in nanoseconds since kclock_init(). */
int64_t kclock_realtime(KClock *k, int64_t true_ns);
int64_t kclock_monotonic(KClock *k, int64_t true_ns);
int64_t kclock_boottime(KClock *k, int64_t true_ns);
int64_t kclock_raw(KClock *k, int64_t true_ns);

/* The machine sleeps from true time true_ns for sleep_ns: the monotonic and raw clocks stop,
 * no once-a-second update runs, and on resume CLOCK_REALTIME and the boot time clock have
 * gone on by the sleep as the oscillator measured it (a suspend-nonstop clocksource), the PLL's
 * phase and adjtime()'s slew where they were. A clock change (clock_was_set()), as on Linux.
 * The model is then at true time true_ns + sleep_ns. */
void kclock_suspend(KClock *k, int64_t true_ns, int64_t sleep_ns);

/* The true nanoseconds until the monotonic clock has advanced by clock_ns at its present rate
 * (rounded up; the rate changes at the next update, so a deadline further off than that is
 * an estimate to check again). */
int64_t kclock_true_span(const KClock *k, int64_t clock_ns);

/* The CLOCK_REALTIME second at whose start the armed leap second (STA_INS, STA_DEL) is to
 * happen: the next midnight UTC, or 23:59:59 for a deletion; INT64_MAX if none is armed. */
int64_t kclock_next_leap(const KClock *k);

/* adjtimex() at true time true_ns, with the kernel's checks but no privilege check: the
 * clock state (TIME_OK ... TIME_ERROR), or a negative errno, with *t filled as the kernel
 * fills it. ADJ_SETOFFSET steps; the adjtime() form (ADJ_OFFSET_SINGLESHOT, ADJ_OFFSET_SS_READ)
 * slews at 500 µs per second. */
int kclock_adjtimex(KClock *k, int64_t true_ns, struct timex *t);

/* clock_settime(CLOCK_REALTIME) and settimeofday(): 0 or -EINVAL. */
int kclock_settime(KClock *k, int64_t true_ns, int64_t realtime_ns);

/* The state at the last update, for the trace: CLOCK_REALTIME minus true time (s), the kernel
 * frequency (ppm), the clock's total rate error (ppm: oscillator, frequency, tick, slews), the
 * phase still to slew (s), and the state's name (OK, INS, DEL, OOP, WAIT, ERROR). */
double kclock_offset(const KClock *k);
double kclock_freq_ppm(const KClock *k);
double kclock_rate_ppm(const KClock *k);
double kclock_phase(const KClock *k);
const char *kclock_state_name(const KClock *k);
