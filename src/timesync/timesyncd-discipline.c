/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <math.h>
#include <stdlib.h>

#include "macro.h"
#include "timesyncd-discipline.h"

/* Below this span of time the samples say nothing of the frequency: several sources answering
 * within the same second, or a burst. */
#define DISCIPLINE_SPAN_MIN_SEC 8.0
/* A quartz oscillator's frequency wanders, a random walk of about 1e-9 each second (chrony's
 * simulations assume as much), more with the temperature: what makes old samples worth less
 * than new ones. Three times that keeps the line's memory short enough to follow the wander
 * at 2048 s polls (docs/ACCURACY.md). */
#define DISCIPLINE_WANDER 3e-9
/* The runs test needs a few samples to say anything. */
#define DISCIPLINE_SAMPLES_MIN 4
/* Locked for an interval T when the frequency's standard error times T is at most this
 * multiple of one sample's noise. Measured (bench/accuracy.sh, docs/ACCURACY.md): 1.5 saves
 * a warm start 2 packets a day against 1, but leaves the fit a few samples short at long
 * polls: internet-1's maximum 2.4 ms instead of 2.0, four servers worse than one in RMS, a
 * server change worse than stock's. */
#define DISCIPLINE_LOCK_SHARE 1.0
/* A sample whose residual is this many times the noise is an outlier: measured
 * (bench/accuracy.sh, internet-4), 4 drops real samples, 8 keeps what bends the line. */
#define DISCIPLINE_OUTLIER 5.0
#define DISCIPLINE_OUTLIERS_MAX 2

void discipline_init(Discipline *d, double freq_ppb) {
        assert(d);

        *d = (Discipline) {
                .freq = CLAMP(freq_ppb, -DISCIPLINE_FREQ_MAX_PPB, DISCIPLINE_FREQ_MAX_PPB) * 1e-9,
        };
}

void discipline_reset(Discipline *d) {
        assert(d);
        discipline_init(d, d->freq * 1e9);
}

double discipline_freq_error_ppb(const Discipline *d) {
        assert(d);
        return d->freq_error * 1e9;
}

unsigned discipline_samples(const Discipline *d) {
        assert(d);
        return d->n;
}

double discipline_poll_interval_max(const Discipline *d) {
        assert(d);
        return d->interval_max;
}

static const DisciplineSample *sample_at(const Discipline *d, unsigned i) {
        /* i = 0 is the oldest */
        return &d->samples[(d->next + DISCIPLINE_SAMPLES_MAX - d->n + i) % DISCIPLINE_SAMPLES_MAX];
}

static void remove_sample(Discipline *d, unsigned i) {
        for (; i + 1 < d->n; i++)
                d->samples[(d->next + DISCIPLINE_SAMPLES_MAX - d->n + i) % DISCIPLINE_SAMPLES_MAX] = *sample_at(d, i + 1);
        d->next = (d->next + DISCIPLINE_SAMPLES_MAX - 1) % DISCIPLINE_SAMPLES_MAX;
        d->n--;
}

static void add_sample(Discipline *d, double t, double x, double error) {
        d->samples[d->next] = (DisciplineSample) { .t = t, .x = x, .w = error };
        d->next = (d->next + 1) % DISCIPLINE_SAMPLES_MAX;
        if (d->n < DISCIPLINE_SAMPLES_MAX)
                d->n++;
}

/* A sample's weight: 1 / its variance, of its measurement (its error bound's excess over the
 * best one's, on a floor) and of how far the oscillator's frequency may have wandered from a
 * line since it was taken (a random walk of DISCIPLINE_WANDER per second moves the phase by
 * about DISCIPLINE_WANDER * age^1.5 / sqrt(3)). */
static double sample_weight(const DisciplineSample *s, double t, double floor, double e_min) {
        double e = floor + s->w - e_min, age = MAX(t - s->t, 0.0);
        double drift = DISCIPLINE_WANDER * age * sqrt(age / 3.0);

        return 1.0 / (e * e + drift * drift);
}

/* How long an interval the line is locked for: over it the slope's standard error moves the
 * clock by at most DISCIPLINE_LOCK_SHARE times one sample's noise, `noise` (the error bounds'
 * mean excess, fit()'s floor: what the round trips' spread says a sample is worth). With
 * weights 1 / (c * variance) the slope's variance is c / stt; a sample's is about c * sw / sww
 * (sw / sww = n_eff / sw, the samples the weights leave). c is estimated from the residuals,
 * but never below what makes a sample's deviation `noise`: a handful of residuals that happen
 * to be small must not lock the loop for hours, and residuals far above the noise (a fit
 * bent by a bad early sample, a frequency that wandered) keep the interval short. The slope's
 * standard error itself goes to *ret_slope_error. */
static double lock_interval(const Discipline *d, unsigned first, double t, double noise, double e_min,
                            double sw, double sww, double stt, double x, double slope, double *ret_slope_error) {
        double c = noise * noise * sww / sw, r2 = 0;
        unsigned n = d->n - first;

        for (unsigned i = first; i < d->n; i++) {
                const DisciplineSample *s = sample_at(d, i);
                double r = s->x - (x + slope * (s->t - t));

                r2 += sample_weight(s, t, noise, e_min) * r * r;
        }
        c = MAX(c, r2 / (n - 2));
        *ret_slope_error = sqrt(c / stt);
        return DISCIPLINE_LOCK_SHARE * noise * sqrt(stt / c);
}

/* The weighted least-squares line through the samples, evaluated at t: its value and slope.
 * A sample's error is its error bound's excess over the best one's (a longer round trip
 * leaves more room for an asymmetry), on a floor of the mean excess; without a usable span
 * the slope stays the frequency already set. */
/* What the samples' error bounds say of their noise: the mean excess of a bound over the best
 * one (a longer round trip leaves more room for an asymmetry). Samples alike in their bounds
 * say nothing of their noise: then a small share of the bound, so that the wander does not
 * make the newest sample the only one. */
static double noise_floor(const Discipline *d, unsigned first, double *ret_e_min) {
        double e_min = INFINITY, e_sum = 0;

        for (unsigned i = first; i < d->n; i++)
                e_min = MIN(e_min, sample_at(d, i)->w);
        for (unsigned i = first; i < d->n; i++)
                e_sum += sample_at(d, i)->w - e_min;
        *ret_e_min = e_min;
        return MAX(MAX(e_sum / (d->n - first), e_min / 64), 1e-6);
}

static void fit(const Discipline *d, unsigned first, double t, double *ret_x, double *ret_slope, double *ret_lock,
                double *ret_slope_error) {
        double e_min, floor, sw = 0, sww = 0, st = 0, sx = 0, stt = 0, stx = 0, tw, xw;
        double span = sample_at(d, d->n - 1)->t - sample_at(d, first)->t;
        unsigned n = d->n - first;

        floor = noise_floor(d, first, &e_min);

        for (unsigned i = first; i < d->n; i++) {
                const DisciplineSample *s = sample_at(d, i);
                double w = sample_weight(s, t, floor, e_min);

                sw += w;
                sww += w * w;
                st += w * s->t;
                sx += w * s->x;
        }
        tw = st / sw;
        xw = sx / sw;

        /* Two or three samples say little of the frequency: two 32 s apart with 1 ms of noise
         * each leave 40 ppm of doubt, more than an oscillator is off. Until there are enough
         * the frequency stays the one set (a learned one survives a step or a suspend). */
        *ret_lock = 0;
        *ret_slope_error = 0;
        if (n < DISCIPLINE_SAMPLES_MIN || span < DISCIPLINE_SPAN_MIN_SEC) {
                *ret_slope = d->freq;
                *ret_x = xw + d->freq * (t - tw);
                return;
        }
        for (unsigned i = first; i < d->n; i++) {
                const DisciplineSample *s = sample_at(d, i);
                double w = sample_weight(s, t, floor, e_min);

                stt += w * (s->t - tw) * (s->t - tw);
                stx += w * (s->t - tw) * (s->x - xw);
        }
        *ret_slope = stx / stt;
        *ret_x = xw + *ret_slope * (t - tw);

        *ret_lock = lock_interval(d, first, t, floor, e_min, sw, sww, stt, *ret_x, *ret_slope, ret_slope_error);
}

/* Runs of residuals of one sign: a line that fits leaves them scattered (about n/2 runs), one
 * that the frequency's wander has left behind leaves long runs. */
static unsigned residual_runs(const Discipline *d, unsigned first, double t, double x, double slope) {
        unsigned runs = 0;
        int last = 0;

        for (unsigned i = first; i < d->n; i++) {
                const DisciplineSample *s = sample_at(d, i);
                int sign = s->x > x + slope * (s->t - t) ? 1 : -1;

                if (sign != last)
                        runs++;
                last = sign;
        }
        return runs;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* The longest history whose line fits it: older samples are dropped until the residuals pass
 * a runs test, as chrony's regression does, so a long window averages the noise out while the
 * frequency holds and a short one follows it when it wanders. */
static void fit_window(Discipline *d, double t, double *ret_x, double *ret_slope) {
        unsigned first;

        for (first = 0; d->n - first > DISCIPLINE_SAMPLES_MIN; first++) {
                unsigned n = d->n - first;

                fit(d, first, t, ret_x, ret_slope, &d->interval_max, &d->freq_error);
                /* at least the expected (n + 1) / 2 less 1.5 standard deviations */
                if (residual_runs(d, first, t, *ret_x, *ret_slope) >= (n + 1) / 2.0 - 1.5 * sqrt((n - 1) / 4.0))
                        break;
        }
        fit(d, first, t, ret_x, ret_slope, &d->interval_max, &d->freq_error);
        /* what no longer fits is not kept for the next time either */
        d->n -= first;

        /* A sample far off the line through the others (a combination of candidates measured
         * before the clock was slewed, a delay that the filter let through) bends the slope
         * for as long as it is kept: it goes. The newest stays: it may be the first of a real
         * change, which the next ones confirm. */
        for (unsigned k = 0; k < DISCIPLINE_OUTLIERS_MAX && d->n > DISCIPLINE_SAMPLES_MIN + 1; k++) {
                double e_min, floor = noise_floor(d, 0, &e_min), worst = 0, r[DISCIPLINE_SAMPLES_MAX];
                unsigned w = 0;

                for (unsigned i = 0; i < d->n; i++) {
                        const DisciplineSample *s = sample_at(d, i);

                        r[i] = fabs(s->x - (*ret_x + *ret_slope * (s->t - t)));
                        if (i + 1 < d->n && r[i] > worst) {
                                worst = r[i];
                                w = i;
                        }
                }
                /* Against the larger of what the bounds promise and what the residuals show
                 * (their median, as a standard deviation): bounds alike say little. */
                qsort(r, d->n, sizeof r[0], cmp_double);
                if (worst <= DISCIPLINE_OUTLIER * MAX(floor, 1.4826 * r[d->n / 2]))
                        break;
                remove_sample(d, w);
                fit(d, 0, t, ret_x, ret_slope, &d->interval_max, &d->freq_error);
        }
}

/* How far the kernel moved the clock slewing the phase from `from` down to `left`, taking
 * `share` of it each second. Each second's share d is spread over that second of the clock,
 * which the slew itself lengthens or shortens: it moves the clock by d / (1 + d), about
 * d - d^2, while the kernel takes d from the phase all the same. Summed over the geometric
 * series the clock lags the phase taken by (from^2 - left^2) * share / (2 - share): 0.7 ms
 * of a 100 ms start at share 1/8, 20 ppm of frequency if counted over a 32 s poll. */
static double phase_slewed(double from, double left, double share) {
        double taken = from - left;

        if (share <= 0 || share >= 1 || from * left < 0 || fabs(left) > fabs(from))
                return taken;
        return taken - (from * from - left * left) * share / (2 - share);
}

void discipline_sample(Discipline *d, int64_t now_nsec, int64_t offset_nsec, int64_t phase_left_nsec,
                       double phase_share, int64_t error_nsec, DisciplineOutput *ret) {
        double t, x, slope, offset;

        assert(d);
        assert(ret);

        if (!d->running) {
                d->running = true;
                d->t0_nsec = now_nsec;
                d->t_last = 0;
                d->correction = 0;
                d->phase_last = 0;
                phase_left_nsec = 0;
        }
        t = (double) (now_nsec - d->t0_nsec) * 1e-9;
        /* What moved the clock since the last sample: the frequency we set and the part of the
         * phase the kernel slewed; what it has not slewed yet is replaced below. */
        d->correction += d->freq * (t - d->t_last) + phase_slewed(d->phase_last, (double) phase_left_nsec * 1e-9, phase_share);

        add_sample(d, t, (double) offset_nsec * 1e-9 + d->correction, MAX((double) error_nsec * 1e-9, 0.0));
        fit_window(d, t, &x, &slope);

        /* The line's offset now, less what we already corrected: the phase still to slew. The
         * kernel takes at most 0.5 s; larger offsets are stepped before they get here. */
        offset = CLAMP(x - d->correction, -0.5, 0.5);
        d->freq = CLAMP(slope, -DISCIPLINE_FREQ_MAX_PPB * 1e-9, DISCIPLINE_FREQ_MAX_PPB * 1e-9);
        d->t_last = t;
        d->phase_last = offset;

        *ret = (DisciplineOutput) {
                .offset_nsec = (int64_t) llround(offset * 1e9),
                .freq_ppb = d->freq * 1e9,
        };
}
