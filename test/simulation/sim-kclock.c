/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The Linux kernel's clock discipline as a model (sim-kclock.h). The constants and the order
 * of operations are those of kernel/time/ntp.c (the nanokernel's PLL/FLL) and of
 * kernel/time/timekeeping.c's do_adjtimex(), do_settimeofday64() and
 * timekeeping_inject_offset(); the code is this project's. */

#include <errno.h>
#include <math.h>

#include "sim-kclock.h"

#define KC_NSEC_PER_SEC INT64_C(1000000000)
#define KC_NSEC_PER_USEC 1000
#define KC_USER_HZ 100
#define KC_SCALE_SHIFT 32                  /* NTP_SCALE_SHIFT: ntp.c's fixed point */
#define KC_SHIFT_PLL 2                     /* PLL loop gain (shift) */
#define KC_SHIFT_FLL 2                     /* FLL loop gain (shift) */
#define KC_SHIFT_USEC 16                   /* the unit of timex.freq: ppm << 16 */
#define KC_MAXPHASE INT64_C(500000000)     /* ns: the largest offset ADJ_OFFSET takes */
#define KC_MAXFREQ 500000                  /* ns/s: +-500 ppm */
#define KC_MAXFREQ_SCALED ((int64_t) KC_MAXFREQ << KC_SCALE_SHIFT)
#define KC_MINSEC 256                      /* the FLL needs at least this interval (s) */
#define KC_MAXSEC 2048                     /* ... and takes over above it without STA_FLL */
#define KC_MAXTC 10
#define KC_NTP_PHASE_LIMIT ((KC_MAXPHASE / KC_NSEC_PER_USEC) << 5)  /* µs: maxerror's limit, 16 s */
#define KC_MAX_TICKADJ 500                 /* µs/s: adjtime()'s slew rate */
#define KC_SECS_PER_DAY 86400
#define KC_PPM_SCALE ((int64_t) KC_NSEC_PER_USEC << (KC_SCALE_SHIFT - KC_SHIFT_USEC))
#define KC_PPM_SCALE_INV_SHIFT 19
#define KC_PPM_SCALE_INV ((INT64_C(1) << (KC_PPM_SCALE_INV_SHIFT + KC_SCALE_SHIFT)) / KC_PPM_SCALE + 1)
#define KC_TICK_USEC (1000000 / KC_USER_HZ)
/* The kernel's mode bits of the adjtime() form (include/uapi/linux/timex.h), which glibc's
 * header only names in their combinations. */
#define KC_ADJ_ADJTIME 0x8000
#define KC_ADJ_OFFSET_READONLY 0x2000

/* Division by a power of two that rounds toward zero, as the kernel's shift_right(). */
static int64_t shift_right(int64_t v, unsigned s) {
        return v < 0 ? -((-v) >> s) : v >> s;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
        return v < lo ? lo : v > hi ? hi : v;
}

static uint64_t splitmix64(uint64_t *s) {
        uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

/* A standard normal draw (Box-Muller). */
static double gaussian(uint64_t *s) {
        double u1 = ((double) (splitmix64(s) >> 11) + 1) / (double) (UINT64_C(1) << 53);
        double u2 = (double) (splitmix64(s) >> 11) / (double) (UINT64_C(1) << 53);

        return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* The clock's rate error: the oscillator's under the kernel's adjustment of the second's
 * length (tick, frequency, this second's slew), which scales the oscillator, as the
 * clocksource's multiplier does. */
static void update_rate(KClock *k) {
        int64_t second = ((int64_t) k->tick * KC_NSEC_PER_USEC * KC_USER_HZ - KC_NSEC_PER_SEC) * (INT64_C(1) << KC_SCALE_SHIFT);
        double adj = ((double) second + (double) k->freq + (double) k->chunk) / 4294967296.0 / 1e9;

        k->rate = (1 + k->osc) * (1 + adj) - 1;
}

static int64_t realtime_now(const KClock *k) {
        return k->base + (int64_t) llround(k->t + k->off);
}

static int64_t realtime_seconds(const KClock *k) {
        int64_t ns = realtime_now(k);

        return ns / KC_NSEC_PER_SEC - (ns % KC_NSEC_PER_SEC < 0);
}

/* A step of CLOCK_REALTIME (a leap second counts as one). */
static void step(KClock *k, double delta) {
        k->off += delta;
        k->stepped += delta;
        k->n_steps++;
        k->next_second = realtime_seconds(k) + 1;
}

/* ntp_clear(), which every step and setting of the clock runs (TK_CLEAR_NTP). */
static void ntp_clear(KClock *k) {
        k->adjust = 0;
        k->status |= STA_UNSYNC;
        k->maxerror = KC_NTP_PHASE_LIMIT;
        k->esterror = KC_NTP_PHASE_LIMIT;
        k->chunk = 0;
        k->offset = 0;
        update_rate(k);
}

void kclock_init(KClock *k, int64_t true_ns, int64_t realtime_ns, double osc_ppm, double wander, uint64_t seed) {
        *k = (KClock) {
                .osc = osc_ppm * 1e-6,
                .wander = wander,
                .prng = seed ^ UINT64_C(0x6b636c6f636b),
                .base = true_ns,
                .off = (double) (realtime_ns - true_ns),
                .state = TIME_OK,
                .status = STA_UNSYNC,
                .constant = 2,
                .tick = KC_TICK_USEC,
        };
        k->off0 = k->off;
        ntp_clear(k);
        k->next_second = realtime_seconds(k) + 1;
}

/* The leap state machine at the start of CLOCK_REALTIME second secs: -1 inserts (the clock
 * goes back a second at midnight), +1 deletes (23:59:59 is skipped). */
static int leap_second(KClock *k, int64_t secs) {
        int64_t day = secs % KC_SECS_PER_DAY;

        switch (k->state) {
        case TIME_OK:
                if (k->status & STA_INS)
                        k->state = TIME_INS;
                else if (k->status & STA_DEL)
                        k->state = TIME_DEL;
                return 0;
        case TIME_INS:
                if (!(k->status & STA_INS))
                        k->state = TIME_OK;
                else if (day == 0) {
                        k->state = TIME_OOP;
                        return -1;
                }
                return 0;
        case TIME_DEL:
                if (!(k->status & STA_DEL))
                        k->state = TIME_OK;
                else if (day == KC_SECS_PER_DAY - 1) {
                        k->state = TIME_WAIT;
                        return 1;
                }
                return 0;
        case TIME_OOP:
                k->state = TIME_WAIT;
                return 0;
        default:
                if (!(k->status & (STA_INS | STA_DEL)))
                        k->state = TIME_OK;
                return 0;
        }
}

/* second_overflow(): once per CLOCK_REALTIME second. */
static void second_overflow(KClock *k, int64_t secs) {
        int leap = leap_second(k, secs);
        int64_t delta;

        k->maxerror += KC_MAXFREQ / KC_NSEC_PER_USEC;
        if (k->maxerror > KC_NTP_PHASE_LIMIT) {
                k->maxerror = KC_NTP_PHASE_LIMIT;
                k->status |= STA_UNSYNC;
        }

        delta = shift_right(k->offset, KC_SHIFT_PLL + (unsigned) k->constant);
        k->offset -= delta;
        k->chunk = delta;

        if (k->adjust > KC_MAX_TICKADJ) {
                k->adjust -= KC_MAX_TICKADJ;
                k->chunk += (int64_t) KC_MAX_TICKADJ * KC_NSEC_PER_USEC * (INT64_C(1) << KC_SCALE_SHIFT);
        } else if (k->adjust < -KC_MAX_TICKADJ) {
                k->adjust += KC_MAX_TICKADJ;
                k->chunk -= (int64_t) KC_MAX_TICKADJ * KC_NSEC_PER_USEC * (INT64_C(1) << KC_SCALE_SHIFT);
        } else {
                k->chunk += (int64_t) k->adjust * KC_NSEC_PER_USEC * (INT64_C(1) << KC_SCALE_SHIFT);
                k->adjust = 0;
        }

        if (k->wander > 0)
                k->osc += k->wander * gaussian(&k->prng);
        update_rate(k);

        /* A leap is a clock change as a step is (clock_was_set()); the next update is at the
         * second that follows the one the clock now shows. */
        if (leap != 0) {
                step(k, (double) leap * (double) KC_NSEC_PER_SEC);
                k->next_second = secs + leap + 1;
        }
}

/* Runs the clocks at their rates to true time `to` (after base). */
static void run_to(KClock *k, double to) {
        double dt = to - k->t;

        k->off += k->rate * dt;
        k->raw_off += k->osc * dt;
        k->t = to;
}

void kclock_advance(KClock *k, int64_t true_ns) {
        double target = (double) (true_ns - k->base);

        while (k->t < target) {
                /* true time at which CLOCK_REALTIME reaches the next whole second */
                double left = (double) (k->next_second * KC_NSEC_PER_SEC - k->base) - k->t - k->off;
                double at = k->t + fmax(left / (1 + k->rate), 0);
                int64_t secs = k->next_second;

                if (at > target) {
                        run_to(k, target);
                        return;
                }
                run_to(k, at);
                k->next_second++;
                second_overflow(k, secs);
        }
}

int64_t kclock_realtime(KClock *k, int64_t true_ns) {
        kclock_advance(k, true_ns);
        return realtime_now(k);
}

int64_t kclock_monotonic(KClock *k, int64_t true_ns) {
        kclock_advance(k, true_ns);
        return (int64_t) llround(k->t + k->off - k->off0 - k->stepped);
}

int64_t kclock_boottime(KClock *k, int64_t true_ns) {
        return kclock_monotonic(k, true_ns) + (int64_t) llround(k->slept);
}

void kclock_suspend(KClock *k, int64_t true_ns, int64_t sleep_ns) {
        double measured = (double) sleep_ns * (1 + k->osc);

        kclock_advance(k, true_ns);
        k->t += (double) sleep_ns;
        k->off += measured - (double) sleep_ns;
        k->raw_off -= (double) sleep_ns;
        k->stepped += measured;
        k->slept += measured;
        k->n_steps++;
        k->next_second = realtime_seconds(k) + 1;
}

int64_t kclock_raw(KClock *k, int64_t true_ns) {
        kclock_advance(k, true_ns);
        return (int64_t) llround(k->t + k->raw_off);
}

int64_t kclock_next_leap(const KClock *k) {
        int64_t secs = realtime_seconds(k), midnight = secs - secs % KC_SECS_PER_DAY + KC_SECS_PER_DAY;

        if (k->state == TIME_INS || (k->state == TIME_OK && (k->status & STA_INS)))
                return (k->status & STA_INS) ? midnight : INT64_MAX;
        if (k->state == TIME_DEL || (k->state == TIME_OK && (k->status & STA_DEL)))
                return (k->status & STA_DEL) ? midnight - 1 : INT64_MAX;
        return INT64_MAX;
}

int64_t kclock_true_span(const KClock *k, int64_t clock_ns) {
        return (int64_t) ceil((double) clock_ns / (1 + k->rate));
}

/* ntp_update_offset(): ADJ_OFFSET with the PLL on. */
static void update_offset(KClock *k, long offset_in) {
        int64_t offset = offset_in, freq_adj = 0, secs, now = realtime_seconds(k);

        if (!(k->status & STA_PLL))
                return;
        if (!(k->status & STA_NANO))
                offset = clamp64(offset, -1000000, 1000000) * KC_NSEC_PER_USEC;
        offset = clamp64(offset, -KC_MAXPHASE, KC_MAXPHASE);

        secs = (k->status & STA_FREQHOLD) ? 0 : now - k->reftime;
        k->reftime = now;

        /* The FLL: with STA_FLL, or on its own when offsets come more than KC_MAXSEC apart. */
        k->status &= ~STA_MODE;
        if (secs >= KC_MINSEC && ((k->status & STA_FLL) || secs > KC_MAXSEC)) {
                k->status |= STA_MODE;
                freq_adj = offset * (INT64_C(1) << (KC_SCALE_SHIFT - KC_SHIFT_FLL)) / secs;
        }

        /* The PLL, with the interval clamped: a low sampling rate must not make it unstable. */
        secs = secs < INT64_C(1) << (KC_SHIFT_PLL + 1 + k->constant) ? secs : INT64_C(1) << (KC_SHIFT_PLL + 1 + k->constant);
        freq_adj += offset * secs * (INT64_C(1) << (KC_SCALE_SHIFT - 2 * (KC_SHIFT_PLL + 2 + k->constant)));

        k->freq = clamp64(freq_adj + k->freq, -KC_MAXFREQ_SCALED, KC_MAXFREQ_SCALED);
        k->offset = offset * (INT64_C(1) << KC_SCALE_SHIFT);
}

/* ADJ_STATUS: turning the PLL off resets the state, turning it on restarts the interval. */
static void set_status(KClock *k, int status) {
        if ((k->status & STA_PLL) && !(status & STA_PLL)) {
                k->state = TIME_OK;
                k->status = STA_UNSYNC;
        }
        if (!(k->status & STA_PLL) && (status & STA_PLL))
                k->reftime = realtime_seconds(k);
        k->status &= STA_RONLY;
        k->status |= status & ~STA_RONLY;
}

static void apply_modes(KClock *k, const struct timex *t) {
        if (t->modes & ADJ_STATUS)
                set_status(k, t->status);
        if (t->modes & ADJ_NANO)
                k->status |= STA_NANO;
        if (t->modes & ADJ_MICRO)
                k->status &= ~STA_NANO;
        if (t->modes & ADJ_FREQUENCY)
                k->freq = clamp64((int64_t) t->freq * KC_PPM_SCALE, -KC_MAXFREQ_SCALED, KC_MAXFREQ_SCALED);
        if (t->modes & ADJ_MAXERROR)
                k->maxerror = t->maxerror;
        if (t->modes & ADJ_ESTERROR)
                k->esterror = t->esterror;
        if (t->modes & ADJ_TIMECONST)
                k->constant = (long) clamp64(t->constant + ((k->status & STA_NANO) ? 0 : 4), 0, KC_MAXTC);
        if ((t->modes & ADJ_TAI) && t->constant >= 0)
                k->tai = t->constant;
        if (t->modes & ADJ_OFFSET)
                update_offset(k, t->offset);
        if (t->modes & ADJ_TICK)
                k->tick = t->tick;
        /* ntp_update_frequency(): the new length of a second applies at once */
        update_rate(k);
}

/* timekeeping_validate_timex(), without the privilege checks. */
static int validate(const struct timex *t) {
        if (t->modes & KC_ADJ_ADJTIME) {
                if (!(t->modes & ADJ_OFFSET_SINGLESHOT))
                        return -EINVAL;
        } else if ((t->modes & ADJ_TICK) &&
                   (t->tick < 900000 / KC_USER_HZ || t->tick > 1100000 / KC_USER_HZ))
                return -EINVAL;
        if (t->modes & ADJ_SETOFFSET) {
                if (t->time.tv_usec < 0)
                        return -EINVAL;
                if (t->time.tv_usec >= ((t->modes & ADJ_NANO) ? KC_NSEC_PER_SEC : 1000000))
                        return -EINVAL;
        }
        if ((t->modes & ADJ_FREQUENCY) &&
            (INT64_MIN / KC_PPM_SCALE > t->freq || INT64_MAX / KC_PPM_SCALE < t->freq))
                return -EINVAL;
        return 0;
}

int kclock_adjtimex(KClock *k, int64_t true_ns, struct timex *t) {
        int64_t now;
        int r;

        kclock_advance(k, true_ns);
        r = validate(t);
        if (r < 0)
                return r;

        if (t->modes & ADJ_SETOFFSET) {
                int64_t delta = (int64_t) t->time.tv_sec * KC_NSEC_PER_SEC +
                                (int64_t) t->time.tv_usec * ((t->modes & ADJ_NANO) ? 1 : KC_NSEC_PER_USEC);

                step(k, (double) delta);
                ntp_clear(k);
        }

        if (t->modes & KC_ADJ_ADJTIME) {
                long old = k->adjust;

                if (!(t->modes & KC_ADJ_OFFSET_READONLY))
                        k->adjust = t->offset;
                t->offset = old;
        } else {
                if (t->modes)
                        apply_modes(k, t);
                t->offset = (long) shift_right(k->offset, KC_SCALE_SHIFT);
                if (!(k->status & STA_NANO))
                        t->offset /= KC_NSEC_PER_USEC;
        }

        t->freq = (long) shift_right((k->freq >> KC_PPM_SCALE_INV_SHIFT) * KC_PPM_SCALE_INV, KC_SCALE_SHIFT);
        t->maxerror = k->maxerror;
        t->esterror = k->esterror;
        t->status = k->status;
        t->constant = k->constant;
        t->precision = 1;
        t->tolerance = KC_MAXFREQ_SCALED / KC_PPM_SCALE;
        t->tick = k->tick;
        t->tai = (int) k->tai;
        t->ppsfreq = t->jitter = t->shift = t->stabil = t->jitcnt = t->calcnt = t->errcnt = t->stbcnt = 0;
        now = realtime_now(k);
        t->time.tv_sec = (time_t) (now / KC_NSEC_PER_SEC - (now % KC_NSEC_PER_SEC < 0));
        t->time.tv_usec = (long) (now - (int64_t) t->time.tv_sec * KC_NSEC_PER_SEC);
        if (!(k->status & STA_NANO))
                t->time.tv_usec /= KC_NSEC_PER_USEC;

        return (k->status & (STA_UNSYNC | STA_CLOCKERR)) ? TIME_ERROR : k->state;
}

int kclock_settime(KClock *k, int64_t true_ns, int64_t realtime_ns) {
        kclock_advance(k, true_ns);
        if (realtime_ns < 0)
                return -EINVAL;
        step(k, (double) (realtime_ns - realtime_now(k)));
        ntp_clear(k);
        return 0;
}

double kclock_offset(const KClock *k) {
        return k->off / 1e9;
}

double kclock_freq_ppm(const KClock *k) {
        return (double) k->freq / 4294967296.0 / 1e3;
}

double kclock_rate_ppm(const KClock *k) {
        return k->rate * 1e6;
}

double kclock_phase(const KClock *k) {
        return (double) k->offset / 4294967296.0 / 1e9;
}

const char *kclock_state_name(const KClock *k) {
        if (k->status & (STA_UNSYNC | STA_CLOCKERR))
                return "ERROR";
        switch (k->state) {
        case TIME_INS:
                return "INS";
        case TIME_DEL:
                return "DEL";
        case TIME_OOP:
                return "OOP";
        case TIME_WAIT:
                return "WAIT";
        default:
                return "OK";
        }
}
