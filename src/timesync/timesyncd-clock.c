/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <math.h>
#include <sys/timex.h>

#include "log.h"
#include "ntp-packet.h"
#include "time-util.h"
#include "timesyncd-clock.h"
#include "timesyncd-discipline.h"

struct ClockBackend {
        ClockBackendType type;

        /* fake backend: a clock of its own (fake_now), or with fake_follow CLOCK_REALTIME plus
         * fake_offset_nsec, which is how a daemon under test sees a wrong clock and steps it */
        struct timespec fake_now;
        bool fake_follow;
        int64_t fake_offset_nsec;
        ClockState fake_state;
        unsigned n_steps, n_slews;
        int fake_leap;                  /* the leap second armed as the last adjustment said; -1: none yet */

        /* kernel backend: the loop's estimates (timesyncd-discipline.h) */
        Discipline discipline;
        bool discipline_started;
        bool seeded;                    /* seed_ppm is a frequency learned before this boot */
        bool seed_checking;             /* the fits have not told yet whether it was right */
        double seed_ppm;
        usec_t sleep_usec;              /* CLOCK_BOOTTIME - CLOCK_MONOTONIC at the last sample */
        int64_t steps_nsec;             /* CLOCK_REALTIME - CLOCK_MONOTONIC at the last sample */
};

/* How far a frequency learned before this boot may be from the oscillator's now (its wander
 * and its temperature), and how many of its and the fit's standard errors combined a fitted
 * frequency must be off it to say that the file is not this oscillator's (another machine's,
 * a stale one): a fit of four samples over the internet is tens of ppm unsure, and its
 * distance to a right file says nothing then. */
#define CLOCK_SEED_DOUBT_PPM 1.0
#define CLOCK_SEED_DISAGREE 3.0

static const char *const backend_table[_CLOCK_BACKEND_MAX] = {
        [CLOCK_BACKEND_KERNEL] = "kernel",
        [CLOCK_BACKEND_OBSERVE] = "observe",
        [CLOCK_BACKEND_FAKE] = "fake",
};

const char *clock_backend_type_to_string(ClockBackendType t) {
        if (t < 0 || t >= _CLOCK_BACKEND_MAX)
                return NULL;
        return backend_table[t];
}

int clock_backend_new(ClockBackendType type, ClockBackend **ret) {
        ClockBackend *b;

        assert(type >= 0 && type < _CLOCK_BACKEND_MAX);
        assert(ret);

        b = new0(ClockBackend, 1);
        if (!b)
                return -ENOMEM;

        b->type = type;
        b->fake_leap = -1;
        if (type == CLOCK_BACKEND_FAKE)
                assert_se(clock_gettime(CLOCK_REALTIME, &b->fake_now) == 0);

        *ret = b;
        return 0;
}

ClockBackend *clock_backend_free(ClockBackend *b) {
        return mfree(b);
}

ClockBackendType clock_backend_type(const ClockBackend *b) {
        assert(b);
        return b->type;
}

static void timespec_add_nsec(struct timespec *ts, int64_t nsec) {
        int64_t total = (int64_t) ts->tv_nsec + nsec % NTP_NSEC_PER_SEC;

        ts->tv_sec += (time_t) (nsec / NTP_NSEC_PER_SEC);
        if (total < 0) {
                total += NTP_NSEC_PER_SEC;
                ts->tv_sec--;
        } else if (total >= NTP_NSEC_PER_SEC) {
                total -= NTP_NSEC_PER_SEC;
                ts->tv_sec++;
        }
        ts->tv_nsec = (long) total;
}

/* The kernel's PLL integrator is kept out of the loop (STA_FREQHOLD; the frequency comes from
 * timesyncd-discipline.c), so the time constant only sets how fast the kernel slews the phase it
 * is given: 2^-(tc + 2) of it each second in nanosecond mode, a time constant of a quarter of
 * the poll interval, so that each correction is worked off well before the next sample. The
 * kernel accepts 0..10 (MAXTC). */
long clock_backend_pll_time_constant(int poll_log2) {
        return CLAMP((long) poll_log2 - 4, 0L, 10L);
}

/* Once the loop is locked for twice the poll interval, what is left to correct is mostly the
 * samples' noise: slewed over half the interval instead of a quarter, it runs the clock's rate
 * half as far off (bench/accuracy.sh: the rate error over the internet from 0.30 to 0.23 ppm,
 * the offset's RMS 5 % up). Before, each correction is worked off quickly. */
static long kernel_time_constant(const ClockBackend *b, const ClockAdjustment *a) {
        long tc = clock_backend_pll_time_constant(a->poll_log2);

        if (!a->step && a->poll_log2 >= 0 && a->poll_log2 < 30 &&
            discipline_poll_interval_max(&b->discipline) >= 2.0 * (double) (1L << a->poll_log2))
                tc = MIN(tc + 1, 10L);
        return tc;
}

/* The state as adjtimex() reports it in tmx and its return value r (the clock state). */
static ClockState clock_state_from_timex(const struct timex *tmx, int r) {
        return (ClockState) {
                .synchronized = !(tmx->status & STA_UNSYNC) && r != TIME_ERROR,
                .frequency = tmx->freq,
                .offset_nsec = (tmx->status & STA_NANO) ? tmx->offset : (int64_t) tmx->offset * INT64_C(1000),
        };
}

/* How long the machine has slept since it booted. */
static usec_t sleep_time(void) {
        usec_t boot = now(CLOCK_BOOTTIME), mono = now(CLOCK_MONOTONIC);

        return boot > mono ? boot - mono : 0;
}

/* What every step since the boot added up to: both clocks run at the disciplined rate, only
 * steps (ours, another program's, a leap second) move one against the other. */
static int64_t steps_so_far(void) {
        struct timespec rt, mono;

        assert_se(clock_gettime(CLOCK_REALTIME, &rt) == 0);
        assert_se(clock_gettime(CLOCK_MONOTONIC, &mono) == 0);
        return ((int64_t) rt.tv_sec - (int64_t) mono.tv_sec) * NTP_NSEC_PER_SEC + (rt.tv_nsec - mono.tv_nsec);
}

/* Remembers where a line of samples starts: the clocks' relations at the first sample. */
static void kernel_line_mark(ClockBackend *b) {
        b->sleep_usec = sleep_time();
        b->steps_nsec = steps_so_far();
}

/* The frequency the discipline starts from: the kernel's, unless it is untouched since the
 * boot and an earlier boot left one (the frequency file). */
static double kernel_start_frequency(ClockBackend *b, long kernel_freq) {
        if (kernel_freq == 0 && b->seeded) {
                log_info("Starting the clock's discipline from the frequency learned before, %+.3f ppm.", b->seed_ppm);
                b->seed_checking = true;
                return b->seed_ppm * 1000.0;
        }
        b->seeded = false;
        return (double) kernel_freq * 1000.0 / 65536.0;
}

/* Whether the seed was this oscillator's frequency: the fits tell once they are sure enough,
 * and only a fit that disagrees beyond both doubts is worth a notice. */
static void kernel_check_seed(ClockBackend *b, double freq_ppb) {
        double error_ppm = discipline_freq_error_ppb(&b->discipline) / 1000.0, off_ppm = freq_ppb / 1000.0 - b->seed_ppm;

        if (!b->seed_checking || error_ppm <= 0)
                return;
        if (fabs(off_ppm) > CLOCK_SEED_DISAGREE * hypot(error_ppm, CLOCK_SEED_DOUBT_PPM)) {
                log_notice("The frequency learned before (%+.3f ppm) is %+.3f ppm off what the samples say, dropping it.",
                           b->seed_ppm, off_ppm);
                b->seed_checking = false;
        } else if (error_ppm < CLOCK_SEED_DOUBT_PPM) {
                log_debug("The frequency learned before (%+.3f ppm) agrees with what the samples say (%+.3f ppm).",
                          b->seed_ppm, off_ppm);
                b->seed_checking = false;
        }
}

/* Hands a sample to the discipline: what the kernel has left of the last phase it was given,
 * and whether the samples before still lie on one line with this one (not after a suspend, a
 * step of another program or a leap second, or when another program took the kernel's
 * discipline over). */
static int kernel_discipline(ClockBackend *b, const ClockAdjustment *a, DisciplineOutput *ret) {
        struct timex tx = { .modes = 0 };
        usec_t mono = now(CLOCK_MONOTONIC), sleep_usec = sleep_time();
        int64_t left, steps_nsec = steps_so_far();

        if (adjtimex(&tx) < 0)
                return -errno;
        left = (tx.status & STA_NANO) ? tx.offset : (int64_t) tx.offset * INT64_C(1000);

        if (!b->discipline_started) {
                discipline_init(&b->discipline, kernel_start_frequency(b, tx.freq));
                b->discipline_started = true;
        } else if ((tx.status & (STA_PLL | STA_FREQHOLD)) != (STA_PLL | STA_FREQHOLD) ||
                   sleep_usec > b->sleep_usec + USEC_PER_SEC ||
                   llabs(steps_nsec - b->steps_nsec) > NTP_NSEC_PER_SEC / 1000) {
                log_debug("Clock discipline: the kernel's state, a suspend or a step broke the line of samples, starting over.");
                discipline_init(&b->discipline, (double) tx.freq * 1000.0 / 65536.0);
        }
        b->sleep_usec = sleep_usec;
        b->steps_nsec = steps_nsec;

        /* in nanosecond mode the kernel slews 2^-(tc + 2) of the phase each second */
        discipline_sample(&b->discipline, (int64_t) mono * 1000, a->offset_nsec, left,
                          tx.constant >= 0 && tx.constant <= 10 ? 1.0 / (double) (1L << (tx.constant + 2)) : 0,
                          a->max_error_nsec, ret);
        /* The first frequency fitted to this boot's samples replaces the seed. */
        if (b->seeded && discipline_poll_interval_max(&b->discipline) > 0)
                b->seeded = false;
        kernel_check_seed(b, ret->freq_ppb);
        return 0;
}

static int kernel_adjust(ClockBackend *b, const ClockAdjustment *a, ClockState *ret_state) {
        struct timex tmx = {
                .modes = ADJ_STATUS | ADJ_NANO | ADJ_MAXERROR | ADJ_ESTERROR | ADJ_FREQUENCY,
                .status = STA_PLL | STA_FREQHOLD,
                .maxerror = (long) CLAMP(a->max_error_nsec / INT64_C(1000), INT64_C(0), INT64_C(16000000)),
                .esterror = (long) CLAMP(a->max_error_nsec / INT64_C(1000), INT64_C(0), INT64_C(16000000)),
        };
        int r;

        if (a->step) {
                /* ADJ_SETOFFSET steps atomically relative to the current time, so no time
                 * passes between reading the clock and setting it. STA_PLL goes off with it and
                 * on again below: the kernel's PLL weighs each offset by the CLOCK_REALTIME
                 * seconds since its previous one, and after a step backwards that interval is
                 * negative (unbounded: years after a bootstrap), so the next slew would drive
                 * the frequency to its limit. Turning the PLL on resets that reference to the
                 * stepped clock, and offset 0 drops the phase still being slewed from before. */
                struct timex stepx = {
                        .modes = ADJ_SETOFFSET | ADJ_STATUS | ADJ_NANO,
                        .status = 0,
                        .time.tv_sec = (time_t) (a->offset_nsec / NTP_NSEC_PER_SEC),
                        .time.tv_usec = (long) (a->offset_nsec % NTP_NSEC_PER_SEC),
                };

                if (stepx.time.tv_usec < 0) {
                        stepx.time.tv_sec--;
                        stepx.time.tv_usec += NTP_NSEC_PER_SEC;
                }
                if (adjtimex(&stepx) < 0)
                        return -errno;
                tmx.offset = 0;
                /* The samples before the step lie on another line; the frequency stays. */
                if (b->discipline_started)
                        discipline_reset(&b->discipline);
                else
                        discipline_init(&b->discipline, kernel_start_frequency(b, stepx.freq));
                b->discipline_started = true;
        } else {
                DisciplineOutput out;

                r = kernel_discipline(b, a, &out);
                if (r < 0)
                        return r;
                log_debug("Clock discipline: sample %+.6f s (error %.6f s), slewing %+.6f s, frequency %+.3f ppm, %u samples, locked for %.0f s.",
                          (double) a->offset_nsec / NTP_NSEC_PER_SEC, (double) a->max_error_nsec / NTP_NSEC_PER_SEC,
                          (double) out.offset_nsec / NTP_NSEC_PER_SEC, out.freq_ppb / 1000.0,
                          discipline_samples(&b->discipline), discipline_poll_interval_max(&b->discipline));
                /* The kernel clamps the PLL offset to +-0.5 s. */
                tmx.offset = (long) CLAMP(out.offset_nsec, -NTP_NSEC_PER_SEC / 2, NTP_NSEC_PER_SEC / 2);
        }
        /* s/s to the kernel's 2^-16 ppm */
        tmx.freq = (long) llround(b->discipline.freq * 1e6 * 65536.0);

        tmx.modes |= ADJ_OFFSET | ADJ_TIMECONST;
        tmx.constant = kernel_time_constant(b, a);

        if (a->leap == NTP_LEAP_PLUSSEC)
                tmx.status |= STA_INS;
        else if (a->leap == NTP_LEAP_MINUSSEC)
                tmx.status |= STA_DEL;

        r = adjtimex(&tmx);
        if (r < 0) {
                /* what the discipline counted on did not happen: start over next time */
                r = -errno;
                b->discipline_started = false;
                return r;
        }
        if (a->step)
                kernel_line_mark(b);

        /* Whatever the modes, adjtimex() hands back the state after the change: what the
         * caller would otherwise read with a second call. */
        if (ret_state)
                *ret_state = clock_state_from_timex(&tmx, r);
        return 0;
}

static int kernel_get_state(ClockState *ret) {
        struct timex tmx = { .modes = 0 };
        int r;

        r = adjtimex(&tmx);
        if (r < 0)
                return -errno;

        *ret = clock_state_from_timex(&tmx, r);
        return 0;
}

/* The kernel arms a leap second with each adjustment (STA_INS, STA_DEL) or leaves none armed;
 * the test clock says which, once per change, so that a test sees both a leap second armed and
 * one that was not. */
static void fake_leap(ClockBackend *b, int leap) {
        if (leap == b->fake_leap)
                return;
        b->fake_leap = leap;
        log_info("Test clock: %s.", leap == NTP_LEAP_PLUSSEC ? "leap second insertion armed" :
                                    leap == NTP_LEAP_MINUSSEC ? "leap second deletion armed" : "no leap second armed");
}

int clock_backend_adjust(ClockBackend *b, const ClockAdjustment *a, ClockState *ret_state) {
        int r;

        assert(b);
        assert(a);

        switch (b->type) {

        case CLOCK_BACKEND_KERNEL:
                r = kernel_adjust(b, a, ret_state);
                return r < 0 ? r : 1;

        case CLOCK_BACKEND_OBSERVE:
                /* Nothing changed, so nothing to report; learning the state would take an
                 * adjtimex() of its own. */
                log_debug("Observe mode: would %s the clock by %+.6f s%s, leaving it alone.",
                          a->step ? "step" : "slew", (double) a->offset_nsec / NTP_NSEC_PER_SEC,
                          a->leap == NTP_LEAP_PLUSSEC ? " and arm a leap second insertion" :
                          a->leap == NTP_LEAP_MINUSSEC ? " and arm a leap second deletion" : "");
                return 0;

        case CLOCK_BACKEND_FAKE:
                if (a->step && b->fake_follow) {
                        b->fake_offset_nsec += a->offset_nsec;
                        b->n_steps++;
                        log_info("Test clock: stepped by %+.6f s, now %+.6f s from the system clock.",
                                 (double) a->offset_nsec / NTP_NSEC_PER_SEC,
                                 (double) b->fake_offset_nsec / NTP_NSEC_PER_SEC);
                } else if (a->step) {
                        timespec_add_nsec(&b->fake_now, a->offset_nsec);
                        b->n_steps++;
                } else {
                        /* Recorded, not applied: the kernel PLL would take minutes anyway. */
                        b->fake_state.offset_nsec = a->offset_nsec;
                        b->n_slews++;
                        if (b->fake_follow)
                                log_info("Test clock: slewing by %+.6f s.", (double) a->offset_nsec / NTP_NSEC_PER_SEC);
                }
                fake_leap(b, a->leap);
                b->fake_state.synchronized = true;
                if (ret_state)
                        *ret_state = b->fake_state;
                return 1;

        default:
                assert_not_reached();
        }
}

void clock_backend_seed_frequency(ClockBackend *b, double ppm) {
        assert(b);

        b->seeded = true;
        b->seed_ppm = ppm;
}

bool clock_backend_frequency_learned(const ClockBackend *b, double *ret_ppm) {
        assert(b);
        assert(ret_ppm);

        if (b->type != CLOCK_BACKEND_KERNEL || !b->discipline_started || b->seeded ||
            discipline_poll_interval_max(&b->discipline) <= 0)
                return false;
        *ret_ppm = b->discipline.freq * 1e6;
        return true;
}

usec_t clock_backend_poll_interval_max(const ClockBackend *b) {
        assert(b);

        if (b->type != CLOCK_BACKEND_KERNEL)
                return USEC_INFINITY;
        if (!b->discipline_started)
                return 0;
        return (usec_t) (discipline_poll_interval_max(&b->discipline) * USEC_PER_SEC);
}

int clock_backend_get_state(ClockBackend *b, ClockState *ret) {
        assert(b);
        assert(ret);

        if (b->type == CLOCK_BACKEND_FAKE) {
                *ret = b->fake_state;
                return 0;
        }
        return kernel_get_state(ret);
}

int clock_backend_now(ClockBackend *b, struct timespec *ret) {
        assert(b);
        assert(ret);

        if (b->type == CLOCK_BACKEND_FAKE && !b->fake_follow) {
                *ret = b->fake_now;
                return 0;
        }
        if (clock_gettime(CLOCK_REALTIME, ret) < 0)
                return -errno;
        if (b->type == CLOCK_BACKEND_FAKE)
                timespec_add_nsec(ret, b->fake_offset_nsec);
        return 0;
}

/* Nanoseconds of a timespec, for the offset of the following fake clock. */
static int64_t timespec_nsec(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * NTP_NSEC_PER_SEC + ts->tv_nsec;
}

int clock_backend_set(ClockBackend *b, const struct timespec *ts) {
        assert(b);
        assert(ts);

        switch (b->type) {

        case CLOCK_BACKEND_KERNEL:
                if (clock_settime(CLOCK_REALTIME, ts) < 0)
                        return -errno;
                return 0;

        case CLOCK_BACKEND_OBSERVE:
                log_debug("Observe mode: would set the clock to %jd.%09ld, leaving it alone.",
                          (intmax_t) ts->tv_sec, ts->tv_nsec);
                return 0;

        case CLOCK_BACKEND_FAKE:
                if (b->fake_follow) {
                        struct timespec real;

                        if (clock_gettime(CLOCK_REALTIME, &real) < 0)
                                return -errno;
                        b->fake_offset_nsec = timespec_nsec(ts) - timespec_nsec(&real);
                } else
                        b->fake_now = *ts;
                b->n_steps++;
                return 0;

        default:
                assert_not_reached();
        }
}

void clock_backend_fake_set_now(ClockBackend *b, const struct timespec *ts) {
        assert(b && b->type == CLOCK_BACKEND_FAKE && !b->fake_follow);
        b->fake_now = *ts;
}

void clock_backend_fake_follow(ClockBackend *b, int64_t offset_nsec) {
        assert(b && b->type == CLOCK_BACKEND_FAKE);
        b->fake_follow = true;
        b->fake_offset_nsec = offset_nsec;
}

void clock_backend_fake_jump(ClockBackend *b, int64_t nsec) {
        assert(b && b->type == CLOCK_BACKEND_FAKE && b->fake_follow);
        b->fake_offset_nsec += nsec;
}

int64_t clock_backend_fake_offset(const ClockBackend *b) {
        assert(b && b->type == CLOCK_BACKEND_FAKE);
        return b->fake_follow ? b->fake_offset_nsec : 0;
}

unsigned clock_backend_fake_steps(const ClockBackend *b) {
        assert(b && b->type == CLOCK_BACKEND_FAKE);
        return b->n_steps;
}

unsigned clock_backend_fake_slews(const ClockBackend *b) {
        assert(b && b->type == CLOCK_BACKEND_FAKE);
        return b->n_slews;
}
