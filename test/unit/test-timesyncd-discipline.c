/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <math.h>

#include "tests.h"
#include "timesyncd-discipline.h"

#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)

/* A clock for the discipline to steer: its offset from true time (positive: behind) moves by
 * the oscillator's error and by what the discipline sets, the phase slewed completely between
 * two samples (as the kernel does within a poll interval). */
typedef struct Clock {
        double offset;          /* s, true - clock */
        double osc;             /* s/s the oscillator runs fast */
        double noise;           /* s, the amplitude of an alternating measurement error */
        double spike;           /* s, added to the next measurement only */
        unsigned k;
} Clock;

static void run(Discipline *d, Clock *c, int64_t *now, int64_t interval, unsigned n, DisciplineOutput *out) {
        for (unsigned i = 0; i < n; i++) {
                double measured = c->offset + (c->k++ % 2 ? c->noise : -c->noise) + c->spike;

                c->spike = 0;
                discipline_sample(d, *now, (int64_t) llround(measured * 1e9), 0, 0, 10 * MSEC, out);
                /* the phase is slewed by the next sample, the frequency runs the interval */
                c->offset -= (double) out->offset_nsec * 1e-9;
                c->offset -= (c->osc + out->freq_ppb * 1e-9) * (double) interval * 1e-9;
                *now += interval;
        }
}

static void test_a_large_first_offset_is_slewed_and_leaves_the_frequency_alone(void) {
        Discipline d;
        DisciplineOutput out;

        discipline_init(&d, 0);
        discipline_sample(&d, 1000 * SEC, 100 * MSEC, 0, 0, 10 * MSEC, &out);
        ASSERT_EQ(out.offset_nsec, 100 * MSEC);
        ASSERT_TRUE(out.freq_ppb == 0);
        /* A second source within the same second says nothing about the frequency either. */
        discipline_sample(&d, 1000 * SEC + 5 * MSEC, 101 * MSEC, 100 * MSEC, 0, 10 * MSEC, &out);
        ASSERT_TRUE(out.freq_ppb == 0);
        ASSERT_EQ(discipline_samples(&d), 2U);
}

static void test_the_frequency_is_acquired_from_the_first_samples(void) {
        Clock c = { .offset = -0.1, .osc = 20e-6 };
        int64_t now = 1000 * SEC;
        Discipline d;
        DisciplineOutput out;

        discipline_init(&d, 0);
        run(&d, &c, &now, 32 * SEC, 3, &out);
        /* three samples are too few to tell the frequency from noise: it stays */
        ASSERT_TRUE(out.freq_ppb == 0);
        run(&d, &c, &now, 32 * SEC, 1, &out);
        /* 20 ppm fast: the kernel is to run 20 ppm slow, learned from four samples */
        ASSERT_TRUE(fabs(out.freq_ppb + 20000) < 10);
        run(&d, &c, &now, 32 * SEC, 5, &out);
        ASSERT_TRUE(fabs(c.offset) < 1e-6);
}

static void test_noise_is_averaged_out(void) {
        Clock c = { .osc = -5e-6, .noise = 1e-3 };
        int64_t now = 1000 * SEC;
        Discipline d;
        DisciplineOutput out;

        discipline_init(&d, 0);
        run(&d, &c, &now, 64 * SEC, 40, &out);
        /* +-1 ms on every sample: the frequency within a fraction of a ppm, the clock within
         * a fraction of the noise */
        ASSERT_TRUE(fabs(out.freq_ppb - 5000) < 300);
        ASSERT_TRUE(fabs(c.offset) < 0.3e-3);
}

static void test_reset_forgets_the_samples_and_keeps_the_frequency(void) {
        Clock c = { .osc = 30e-6 };
        int64_t now = 1000 * SEC;
        Discipline d;
        DisciplineOutput out;

        discipline_init(&d, 0);
        run(&d, &c, &now, 32 * SEC, 6, &out);
        ASSERT_TRUE(fabs(out.freq_ppb + 30000) < 10);
        discipline_reset(&d);
        ASSERT_EQ(discipline_samples(&d), 0U);
        discipline_sample(&d, now + 3600 * SEC, 50 * MSEC, 0, 0, 10 * MSEC, &out);
        ASSERT_EQ(out.offset_nsec, 50 * MSEC);
        ASSERT_TRUE(fabs(out.freq_ppb + 30000) < 10);
}

static void test_the_frequency_stays_within_the_kernel_s_range(void) {
        Discipline d;
        DisciplineOutput out;

        discipline_init(&d, 900000);
        ASSERT_TRUE(d.freq * 1e9 == DISCIPLINE_FREQ_MAX_PPB);
        discipline_sample(&d, 0, 0, 0, 0, MSEC, &out);
        discipline_sample(&d, 10 * SEC, 300 * MSEC, 0, 0, MSEC, &out);
        ASSERT_TRUE(out.freq_ppb <= DISCIPLINE_FREQ_MAX_PPB && out.freq_ppb >= -DISCIPLINE_FREQ_MAX_PPB);
}

static void test_the_kernel_s_unslewed_phase_is_not_counted(void) {
        Discipline d;
        DisciplineOutput out;

        /* 10 ms handed to the kernel, 4 ms of it still to slew at the next sample, which
         * finds the clock 4 ms behind: nothing else moved it, the frequency is right. */
        discipline_init(&d, 0);
        discipline_sample(&d, 0, 10 * MSEC, 0, 0, MSEC, &out);
        discipline_sample(&d, 64 * SEC, 4 * MSEC, 4 * MSEC, 0, MSEC, &out);
        ASSERT_TRUE(fabs(out.freq_ppb) < 1);
        ASSERT_EQ(out.offset_nsec, 4 * MSEC);
}

static void test_locked_for_longer_intervals_as_samples_spread(void) {
        Clock c = { .osc = 20e-6 };
        int64_t now = 1000 * SEC;
        Discipline d;
        DisciplineOutput out;
        double four;

        discipline_init(&d, 0);
        run(&d, &c, &now, 32 * SEC, 3, &out);
        /* three samples are too few to call the loop locked for any interval */
        ASSERT_TRUE(discipline_poll_interval_max(&d) == 0);
        run(&d, &c, &now, 32 * SEC, 1, &out);
        /* four alike 32 s apart, on their line: sqrt(4 * the variance of their times,
         * 1280 s^2) */
        four = discipline_poll_interval_max(&d);
        ASSERT_TRUE(four > 67 && four < 77);
        /* the frequency's error shrinks with more samples spread wider: locked for longer */
        run(&d, &c, &now, 32 * SEC, 4, &out);
        ASSERT_TRUE(discipline_poll_interval_max(&d) > 2.5 * four);
        discipline_reset(&d);
        ASSERT_TRUE(discipline_poll_interval_max(&d) == 0);

        /* Residuals of +-5 ms where the error bounds (10 ms each, all alike: a noise of
         * 10 ms / 64) promise far less: a bent line, not locked for as long. */
        c = (Clock) { .osc = 20e-6, .noise = 5e-3 };
        discipline_init(&d, 0);
        run(&d, &c, &now, 32 * SEC, 8, &out);
        ASSERT_TRUE(discipline_poll_interval_max(&d) < four / 4);
}

static void test_the_frequency_s_error_is_told(void) {
        Clock c = { .osc = 20e-6, .noise = 1e-3 };
        int64_t now = 1000 * SEC;
        Discipline d;
        DisciplineOutput out;
        double four;

        discipline_init(&d, 0);
        run(&d, &c, &now, 32 * SEC, 3, &out);
        /* not fitted yet: no error to tell */
        ASSERT_TRUE(discipline_freq_error_ppb(&d) == 0);
        run(&d, &c, &now, 32 * SEC, 1, &out);
        /* +-1 ms on four samples 32 s apart: tens of ppm unsure (what a frequency learned
         * before is weighed against, timesyncd-clock.c) */
        four = discipline_freq_error_ppb(&d);
        ASSERT_TRUE(four > 10000);
        /* the error and the lock go together: over the lock it moves the clock by the noise */
        ASSERT_TRUE(four * 1e-9 * discipline_poll_interval_max(&d) < 2e-3);
        run(&d, &c, &now, 64 * SEC, 30, &out);
        ASSERT_TRUE(discipline_freq_error_ppb(&d) < 1000);
        ASSERT_TRUE(fabs(out.freq_ppb + 20000) < 3 * discipline_freq_error_ppb(&d) + 300);
        discipline_reset(&d);
        ASSERT_TRUE(discipline_freq_error_ppb(&d) == 0);
}

static void test_an_outlier_does_not_bend_the_line(void) {
        Clock c = { .osc = 20e-6, .noise = 0.5e-3 };
        int64_t now = 1000 * SEC;
        Discipline d;
        DisciplineOutput out;

        discipline_init(&d, 0);
        run(&d, &c, &now, 32 * SEC, 6, &out);
        /* one measurement 20 ms off (a combination of stale candidates), then the line goes on */
        c.spike = 20e-3;
        run(&d, &c, &now, 64 * SEC, 7, &out);
        /* kept, it would pull the slope by tens of ppm; dropped, the frequency is within a
         * ppm and the sample is gone from the history */
        ASSERT_TRUE(fabs(out.freq_ppb + 20000) < 1000);
        ASSERT_TRUE(discipline_samples(&d) == 12);
}

TEST_MAIN(TEST_CASE(test_a_large_first_offset_is_slewed_and_leaves_the_frequency_alone),
          TEST_CASE(test_the_frequency_is_acquired_from_the_first_samples),
          TEST_CASE(test_noise_is_averaged_out),
          TEST_CASE(test_reset_forgets_the_samples_and_keeps_the_frequency),
          TEST_CASE(test_the_frequency_stays_within_the_kernel_s_range),
          TEST_CASE(test_the_kernel_s_unslewed_phase_is_not_counted),
          TEST_CASE(test_locked_for_longer_intervals_as_samples_spread),
          TEST_CASE(test_the_frequency_s_error_is_told),
          TEST_CASE(test_an_outlier_does_not_bend_the_line));
