/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The kernel clock model of the simulation (sim-kclock.c) against the closed forms of
 * kernel/time/ntp.c: each test drives it with adjtimex() calls at chosen true times and
 * checks what the clock and the kernel's state become. */

#include <errno.h>
#include <math.h>

#include "sim-kclock.h"
#include "tests.h"

#define SEC INT64_C(1000000000)
#define T0 (INT64_C(1800000000) * SEC)          /* true time at the start, a whole second */

#define ASSERT_NEAR(a, b, tol)                                                                 \
        do {                                                                                   \
                double _a = (a), _b = (b);                                                     \
                if (!(fabs(_a - _b) <= (tol))) {                                               \
                        fprintf(stderr, "%s:%d: %s = %.12g, expected %.12g +- %g\n",           \
                                __FILE__, __LINE__, #a, _a, _b, (double) (tol));              \
                        abort();                                                               \
                }                                                                              \
        } while (0)

/* What a slew at rate a (a fraction) gains in one second of the clock: the kernel adds it to
 * the length of the second, and the second then passes in 1 / (1 + a) true seconds. */
static double slew_gain(double a) {
        return a / (1 + a);
}

/* A clock that reads true time, with a perfect oscillator. */
static void start(KClock *k) {
        kclock_init(k, T0, T0, 0, 0, 1);
}

static int adj(KClock *k, int64_t at, struct timex t) {
        int r = kclock_adjtimex(k, at, &t);

        return r;
}

static struct timex read_state(KClock *k, int64_t at) {
        struct timex t = {};

        ASSERT_TRUE(kclock_adjtimex(k, at, &t) >= 0);
        return t;
}

/* CLOCK_REALTIME minus true time, in nanoseconds. */
static int64_t offset_at(KClock *k, int64_t at) {
        return kclock_realtime(k, at) - at;
}

/* Each second the kernel slews 2^-(2 + tc) of the phase still left: after n seconds the
 * remaining offset is offset * (1 - 2^-(2 + tc))^n, and the clock has gained the rest. No
 * frequency change with STA_FREQHOLD. */
static void test_phase_decays_by_two_to_minus_tc_plus_two_per_second(void) {
        for (long tc = 0; tc <= 10; tc += 5) {
                KClock k;
                double left, phase = 1e7, gained = 0;

                start(&k);
                ASSERT_EQ(adj(&k, T0 + SEC / 2, (struct timex) {
                        .modes = ADJ_STATUS | ADJ_NANO | ADJ_TIMECONST | ADJ_OFFSET,
                        .status = STA_PLL | STA_FREQHOLD, .constant = tc, .offset = 10000000 }), TIME_OK);
                for (int n = 1; n <= 40; n++) {
                        struct timex t = read_state(&k, T0 + n * SEC + SEC / 2);

                        left = 1e7 * pow(1 - ldexp(1, -(int) (2 + tc)), n);
                        ASSERT_NEAR((double) t.offset, left, 2.0 + left * 1e-9);
                        ASSERT_EQ(t.freq, 0L);
                }
                /* Long after: the whole offset is in the clock, each second's part of it as a
                 * slew of that second. */
                while (phase >= 1) {
                        double delta = ldexp(phase, -(int) (2 + tc));

                        gained += 1e9 * slew_gain(delta / 1e9);
                        phase -= delta;
                }
                ASSERT_NEAR((double) offset_at(&k, T0 + 100000 * SEC), gained, 100.0);
                ASSERT_TRUE(gained < 1e7);
        }
}

/* The PLL adds offset * secs / 2^(2 * (2 + 2 + tc)) to the frequency, with secs clamped to
 * 2^(2 + 1 + tc). */
static void test_pll_frequency_update_and_its_interval_clamp(void) {
        KClock k;
        struct timex t;

        /* tc 2: 64 s since the PLL went on, clamped to 32 s: 1 ms * 32 / 4096 = 7.8125 ppm. */
        start(&k);
        ASSERT_EQ(adj(&k, T0, (struct timex) { .modes = ADJ_STATUS | ADJ_NANO | ADJ_TIMECONST | ADJ_MAXERROR,
                                               .status = STA_PLL, .constant = 2 }), TIME_OK);
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = 1000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 64 * SEC, &t), TIME_OK);
        ASSERT_EQ(t.freq, 512000L);                        /* 7.8125 ppm << 16 */
        ASSERT_NEAR(kclock_freq_ppm(&k), 7.8125, 1e-9);
        ASSERT_EQ(t.offset, 1000000L);
        ASSERT_FALSE(t.status & STA_MODE);

        /* 16 s later, within the clamp: 1 ms * 16 / 4096 more. */
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = 1000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 80 * SEC, &t), TIME_OK);
        ASSERT_NEAR(kclock_freq_ppm(&k), 7.8125 + 3.90625, 1e-9);

        /* Negative offsets pull it back the same way. */
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = -2000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 96 * SEC, &t), TIME_OK);
        ASSERT_NEAR(kclock_freq_ppm(&k), 7.8125 + 3.90625 - 7.8125, 1e-9);
}

/* ADJ_OFFSET takes at most +-0.5 s, and the frequency stays within +-500 ppm. */
static void test_offset_and_frequency_are_clamped(void) {
        KClock k;
        struct timex t;

        start(&k);
        ASSERT_EQ(adj(&k, T0, (struct timex) { .modes = ADJ_STATUS | ADJ_NANO | ADJ_TIMECONST | ADJ_MAXERROR,
                                               .status = STA_PLL, .constant = 0 }), TIME_OK);
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = 800000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 8 * SEC, &t), TIME_OK);
        ASSERT_EQ(t.offset, 500000000L);
        ASSERT_EQ(t.freq, 500L << 16);
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = -900000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 16 * SEC, &t), TIME_OK);
        ASSERT_EQ(t.offset, -500000000L);
        ASSERT_EQ(t.freq, -(500L << 16));                  /* +500 ppm - 15625 ppm, clamped */

        /* ADJ_FREQUENCY is clamped too, and sets the rate at once. */
        t = (struct timex) { .modes = ADJ_FREQUENCY, .freq = 600L << 16 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 25 * SEC, &t), TIME_OK);
        ASSERT_EQ(t.freq, 500L << 16);
}

/* Offsets more than 2048 s apart (or any with STA_FLL, from 256 s on) also go through the
 * FLL: offset / (4 * secs) is added to the frequency, and STA_MODE says so. */
static void test_fll_above_2048_s(void) {
        KClock k;
        struct timex t;

        start(&k);
        ASSERT_EQ(adj(&k, T0, (struct timex) { .modes = ADJ_STATUS | ADJ_NANO | ADJ_TIMECONST | ADJ_MAXERROR,
                                               .status = STA_PLL, .constant = 10 }), TIME_OK);
        /* 1000 s: the PLL alone, 1 ms * 1000 / 2^28. */
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = 1000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 1000 * SEC, &t), TIME_OK);
        ASSERT_NEAR(kclock_freq_ppm(&k), 1e6 * 1000 / ldexp(1, 28) / 1e3, 1e-9);
        ASSERT_FALSE(t.status & STA_MODE);

        /* 3000 s later: PLL 1 ms * 3000 / 2^28, FLL 1 ms / (4 * 3000). */
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = 1000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 4000 * SEC, &t), TIME_OK);
        ASSERT_TRUE(t.status & STA_MODE);
        ASSERT_NEAR(kclock_freq_ppm(&k),
                    (1e6 * 1000 / ldexp(1, 28) + 1e6 * 3000 / ldexp(1, 28) + 1e6 / (4.0 * 3000)) / 1e3, 1e-6);

        /* STA_FLL from 256 s on. */
        start(&k);
        ASSERT_EQ(adj(&k, T0, (struct timex) { .modes = ADJ_STATUS | ADJ_NANO | ADJ_TIMECONST | ADJ_MAXERROR,
                                               .status = STA_PLL | STA_FLL, .constant = 10 }), TIME_OK);
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = 1000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 300 * SEC, &t), TIME_OK);
        ASSERT_TRUE(t.status & STA_MODE);
        ASSERT_NEAR(kclock_freq_ppm(&k), (1e6 * 300 / ldexp(1, 28) + 1e6 / (4.0 * 300)) / 1e3, 1e-6);
}

/* adjtime(): its own offset, slewed at 500 µs per second and read back as what is left. */
static void test_singleshot_slews_at_500_us_per_second(void) {
        KClock k;
        struct timex t;

        start(&k);
        t = (struct timex) { .modes = ADJ_OFFSET_SINGLESHOT, .offset = 3000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + SEC / 2, &t), TIME_ERROR);   /* unsynchronized */
        ASSERT_EQ(t.offset, 0L);
        t = (struct timex) { .modes = ADJ_OFFSET_SS_READ };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 3 * SEC + SEC / 2, &t), TIME_ERROR);
        ASSERT_EQ(t.offset, 1500L);
        ASSERT_NEAR(kclock_rate_ppm(&k), 500, 1e-9);
        ASSERT_NEAR((double) offset_at(&k, T0 + 3 * SEC + SEC / 2), 1250000, 1.0);
        ASSERT_NEAR((double) offset_at(&k, T0 + 10 * SEC), 6e9 * slew_gain(500e-6), 1.0);
        ASSERT_NEAR(kclock_rate_ppm(&k), 0, 1e-9);

        /* Backwards, and a remainder below 500 µs in the last second. */
        t = (struct timex) { .modes = ADJ_OFFSET_SINGLESHOT, .offset = -1200 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 10 * SEC + SEC / 2, &t), TIME_ERROR);
        ASSERT_NEAR((double) offset_at(&k, T0 + 20 * SEC),
                    1e9 * (6 * slew_gain(500e-6) + 2 * slew_gain(-500e-6) + slew_gain(-200e-6)), 1.0);
}

/* maxerror grows by 500 µs each second; past 16 s the clock is unsynchronized. */
static void test_maxerror_grows_to_unsync_after_16_s(void) {
        KClock k;
        struct timex t;

        start(&k);
        ASSERT_EQ(adj(&k, T0 + SEC / 2, (struct timex) { .modes = ADJ_STATUS | ADJ_MAXERROR,
                                                         .status = STA_PLL, .maxerror = 16000000 - 8000 }), TIME_OK);
        t = read_state(&k, T0 + 16 * SEC + SEC / 2);
        ASSERT_EQ(t.maxerror, 16000000L);
        ASSERT_FALSE(t.status & STA_UNSYNC);
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 17 * SEC + SEC / 2, &t), TIME_ERROR);
        ASSERT_TRUE(t.status & STA_UNSYNC);
        ASSERT_EQ(t.maxerror, 16000000L);
}

/* ADJ_SETOFFSET steps CLOCK_REALTIME, not the monotonic clock, and clears the NTP state
 * (STA_UNSYNC, the phase) but not the frequency; so does clock_settime(). */
static void test_steps_move_realtime_and_clear_the_phase(void) {
        KClock k;
        struct timex t;
        int64_t mono;

        start(&k);
        ASSERT_EQ(adj(&k, T0 + SEC / 2, (struct timex) { .modes = ADJ_STATUS | ADJ_NANO | ADJ_FREQUENCY | ADJ_OFFSET,
                                                         .status = STA_PLL, .freq = 10L << 16, .offset = 1000000 }), TIME_OK);
        mono = kclock_monotonic(&k, T0 + SEC);
        t = (struct timex) { .modes = ADJ_SETOFFSET | ADJ_NANO, .time.tv_sec = -2, .time.tv_usec = 500000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + SEC, &t), TIME_ERROR);
        ASSERT_EQ(k.n_steps, 1u);
        ASSERT_NEAR((double) offset_at(&k, T0 + SEC), -1.5e9 + 10e3 * 0.5, 20.0);
        ASSERT_EQ(kclock_monotonic(&k, T0 + SEC), mono);
        ASSERT_EQ(t.offset, 0L);
        ASSERT_EQ(t.freq, 10L << 16);
        ASSERT_TRUE(t.status & STA_UNSYNC);

        /* tv_usec out of its range is refused. */
        t = (struct timex) { .modes = ADJ_SETOFFSET | ADJ_NANO, .time.tv_usec = 1000000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + SEC, &t), -EINVAL);
        t = (struct timex) { .modes = ADJ_SETOFFSET, .time.tv_usec = 1000000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + SEC, &t), -EINVAL);

        ASSERT_OK(kclock_settime(&k, T0 + 2 * SEC, T0 + 7 * SEC));
        ASSERT_EQ(kclock_realtime(&k, T0 + 2 * SEC), T0 + 7 * SEC);
        ASSERT_EQ(k.n_steps, 2u);
        ASSERT_EQ(kclock_monotonic(&k, T0 + 2 * SEC), mono + (int64_t) llround(SEC * (1 + 10e-6)));
}

/* The oscillator's error moves every clock, the kernel frequency moves REALTIME and MONOTONIC
 * but not RAW, and ADJ_TICK changes the length of a second by 100 ppm a microsecond. */
static void test_oscillator_frequency_and_tick_set_the_rates(void) {
        KClock k;
        struct timex t;

        kclock_init(&k, T0, T0, 20, 0, 1);
        ASSERT_NEAR((double) offset_at(&k, T0 + 1000 * SEC), 20e6, 1.0);
        ASSERT_NEAR((double) kclock_raw(&k, T0 + 1000 * SEC), 1000 * (1 + 20e-6) * 1e9, 1.0);
        t = (struct timex) { .modes = ADJ_FREQUENCY, .freq = -(20L << 16) };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 1000 * SEC, &t), TIME_ERROR);
        ASSERT_NEAR(kclock_rate_ppm(&k), -20 * 20e-6, 1e-9);
        ASSERT_NEAR((double) kclock_monotonic(&k, T0 + 2000 * SEC), 1000 * (1 + 20e-6) * 1e9 + 1000 * (1 - 4e-10) * 1e9, 2.0);
        ASSERT_NEAR((double) kclock_raw(&k, T0 + 2000 * SEC), 2000 * (1 + 20e-6) * 1e9, 1.0);
        ASSERT_EQ(kclock_true_span(&k, 1000000000), (int64_t) ceil(1e9 / (1 - 4e-10)));

        t = (struct timex) { .modes = ADJ_TICK | ADJ_FREQUENCY, .tick = 10001, .freq = 0 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 2000 * SEC, &t), TIME_ERROR);
        ASSERT_NEAR(kclock_rate_ppm(&k), (1 + 20e-6) * (1 + 100e-6) * 1e6 - 1e6, 1e-6);
        t = (struct timex) { .modes = ADJ_TICK, .tick = 11001 };
        ASSERT_EQ(kclock_adjtimex(&k, T0 + 2000 * SEC, &t), -EINVAL);
}

/* The random walk of the oscillator follows the seed, and grows as the square root of time. */
static void test_wander_is_a_random_walk_drawn_from_the_seed(void) {
        KClock a, b, c;
        double sum2 = 0;

        kclock_init(&a, T0, T0, 0, 1e-9, 7);
        kclock_init(&b, T0, T0, 0, 1e-9, 7);
        kclock_init(&c, T0, T0, 0, 1e-9, 8);
        kclock_advance(&a, T0 + 10000 * SEC);
        kclock_advance(&b, T0 + 10000 * SEC);
        kclock_advance(&c, T0 + 10000 * SEC);
        ASSERT_TRUE(a.osc == b.osc && a.off == b.off);
        ASSERT_TRUE(a.osc != c.osc);
        /* 10000 steps of 1e-9: a standard deviation of 1e-7. */
        for (uint64_t seed = 1; seed <= 40; seed++) {
                kclock_init(&a, T0, T0, 0, 1e-9, seed);
                kclock_advance(&a, T0 + 10000 * SEC);
                sum2 += a.osc * a.osc;
        }
        ASSERT_NEAR(sqrt(sum2 / 40), 1e-7, 0.4e-7);
}

/* STA_INS: at the next midnight UTC the clock shows 23:59:59 twice (TIME_OOP), then
 * TIME_WAIT until STA_INS goes; STA_DEL skips 23:59:59. MONOTONIC runs on. */
static void test_leap_seconds_at_midnight(void) {
        const int64_t midnight = INT64_C(1800057600) * SEC;        /* a multiple of 86400 s */
        KClock k;
        struct timex t;
        int64_t mono;

        kclock_init(&k, midnight - 10 * SEC, midnight - 10 * SEC, 0, 0, 1);
        ASSERT_EQ(kclock_next_leap(&k), INT64_MAX);
        ASSERT_EQ(adj(&k, midnight - 10 * SEC, (struct timex) { .modes = ADJ_STATUS | ADJ_MAXERROR,
                                                               .status = STA_PLL | STA_INS }), TIME_OK);
        ASSERT_EQ(kclock_next_leap(&k), midnight / SEC);
        ASSERT_EQ(kclock_adjtimex(&k, midnight - 5 * SEC, &(struct timex) {}), TIME_INS);
        ASSERT_EQ(kclock_next_leap(&k), midnight / SEC);
        mono = kclock_monotonic(&k, midnight - SEC / 2);
        ASSERT_EQ(kclock_realtime(&k, midnight - SEC / 2), midnight - SEC / 2);
        ASSERT_EQ(kclock_realtime(&k, midnight + SEC / 2), midnight - SEC / 2);
        ASSERT_EQ(kclock_monotonic(&k, midnight + SEC / 2), mono + SEC);
        ASSERT_EQ(kclock_adjtimex(&k, midnight + SEC / 2, &(struct timex) {}), TIME_OOP);
        ASSERT_EQ(kclock_next_leap(&k), INT64_MAX);
        ASSERT_EQ(k.n_steps, 1u);
        ASSERT_EQ(kclock_adjtimex(&k, midnight + 3 * SEC / 2, &(struct timex) {}), TIME_WAIT);
        ASSERT_EQ(kclock_realtime(&k, midnight + 3 * SEC / 2), midnight + SEC / 2);
        t = (struct timex) { .modes = ADJ_STATUS, .status = STA_PLL };
        ASSERT_EQ(kclock_adjtimex(&k, midnight + 2 * SEC, &t), TIME_WAIT);
        ASSERT_EQ(kclock_adjtimex(&k, midnight + 4 * SEC, &(struct timex) {}), TIME_OK);

        kclock_init(&k, midnight - 10 * SEC, midnight - 10 * SEC, 0, 0, 1);
        ASSERT_EQ(adj(&k, midnight - 10 * SEC, (struct timex) { .modes = ADJ_STATUS | ADJ_MAXERROR,
                                                               .status = STA_PLL | STA_DEL }), TIME_OK);
        ASSERT_EQ(kclock_next_leap(&k), midnight / SEC - 1);
        ASSERT_EQ(kclock_realtime(&k, midnight - 3 * SEC / 2), midnight - 3 * SEC / 2);
        ASSERT_EQ(kclock_realtime(&k, midnight - SEC / 2), midnight + SEC / 2);
        ASSERT_EQ(kclock_adjtimex(&k, midnight, &(struct timex) {}), TIME_WAIT);
        ASSERT_EQ(kclock_realtime(&k, midnight + SEC / 2), midnight + 3 * SEC / 2);
}

/* ADJ_OFFSET without the PLL does nothing; micro mode takes offsets in µs and adds 4 to the
 * time constant. */
static void test_status_and_units(void) {
        KClock k;
        struct timex t;

        start(&k);
        t = (struct timex) { .modes = ADJ_OFFSET, .offset = 1000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0, &t), TIME_ERROR);
        ASSERT_EQ(t.offset, 0L);
        t = (struct timex) { .modes = ADJ_STATUS | ADJ_MICRO | ADJ_TIMECONST | ADJ_OFFSET,
                             .status = STA_PLL | STA_FREQHOLD, .constant = 2, .offset = 1000 };
        ASSERT_EQ(kclock_adjtimex(&k, T0, &t), TIME_OK);
        ASSERT_EQ(t.offset, 1000L);
        ASSERT_EQ(t.constant, 6L);
        ASSERT_FALSE(t.status & STA_NANO);
        t = (struct timex) { .modes = ADJ_NANO };
        ASSERT_EQ(kclock_adjtimex(&k, T0, &t), TIME_OK);
        ASSERT_EQ(t.offset, 1000000L);
        /* Turning the PLL off sets the status to STA_UNSYNC and then keeps only its read-only
         * bits and the new ones: STA_UNSYNC and STA_NANO go unless the caller sets them. */
        t = (struct timex) { .modes = ADJ_STATUS, .status = 0 };
        ASSERT_EQ(kclock_adjtimex(&k, T0, &t), TIME_OK);
        ASSERT_FALSE(t.status & STA_UNSYNC);
        ASSERT_FALSE(t.status & STA_NANO);
}

/* A suspend stops MONOTONIC and MONOTONIC_RAW and the once-a-second update; CLOCK_REALTIME and
 * BOOTTIME go on by the sleep as the oscillator measured it; the phase waits; it is a clock
 * change. */
static void test_suspend_stops_monotonic_not_realtime_or_boottime(void) {
        KClock k;
        struct timex t;
        int64_t mono, boot, raw, real;

        kclock_init(&k, T0, T0, 10, 0, 1);
        ASSERT_EQ(adj(&k, T0, (struct timex) { .modes = ADJ_STATUS | ADJ_NANO | ADJ_MAXERROR | ADJ_TIMECONST | ADJ_OFFSET,
                                               .status = STA_PLL | STA_FREQHOLD, .constant = 10, .offset = 1000000 }), TIME_OK);
        mono = kclock_monotonic(&k, T0 + 100 * SEC + SEC / 2);
        boot = kclock_boottime(&k, T0 + 100 * SEC + SEC / 2);
        raw = kclock_raw(&k, T0 + 100 * SEC + SEC / 2);
        real = kclock_realtime(&k, T0 + 100 * SEC + SEC / 2);
        ASSERT_EQ(mono, boot);
        t = read_state(&k, T0 + 100 * SEC + SEC / 2);
        ASSERT_EQ(t.maxerror, 50000L);

        kclock_suspend(&k, T0 + 100 * SEC + SEC / 2, 3600 * SEC);
        ASSERT_EQ(k.n_steps, 1u);
        ASSERT_EQ(kclock_monotonic(&k, T0 + 3700 * SEC + SEC / 2), mono);
        ASSERT_EQ(kclock_raw(&k, T0 + 3700 * SEC + SEC / 2), raw);
        ASSERT_NEAR((double) (kclock_boottime(&k, T0 + 3700 * SEC + SEC / 2) - boot), 3600e9 * (1 + 10e-6), 1.0);
        ASSERT_NEAR((double) (kclock_realtime(&k, T0 + 3700 * SEC + SEC / 2) - real), 3600e9 * (1 + 10e-6), 1.0);
        t = read_state(&k, T0 + 3700 * SEC + SEC / 2);
        ASSERT_EQ(t.maxerror, 50000L);
        ASSERT_NEAR((double) t.offset, 1e6 * pow(1 - ldexp(1, -12), 100), 2.0);

        /* And on from there, slewing the phase again (2^-12 of 0.975 ms a second). */
        ASSERT_NEAR((double) (kclock_monotonic(&k, T0 + 3710 * SEC + SEC / 2) - mono),
                    10e9 * (1 + 10e-6) + 10 * 1e6 * pow(1 - ldexp(1, -12), 100) / 4096, 30.0);
}

TEST_MAIN(TEST_CASE(test_phase_decays_by_two_to_minus_tc_plus_two_per_second),
          TEST_CASE(test_pll_frequency_update_and_its_interval_clamp),
          TEST_CASE(test_offset_and_frequency_are_clamped),
          TEST_CASE(test_fll_above_2048_s),
          TEST_CASE(test_singleshot_slews_at_500_us_per_second),
          TEST_CASE(test_maxerror_grows_to_unsync_after_16_s),
          TEST_CASE(test_steps_move_realtime_and_clear_the_phase),
          TEST_CASE(test_oscillator_frequency_and_tick_set_the_rates),
          TEST_CASE(test_wander_is_a_random_walk_drawn_from_the_seed),
          TEST_CASE(test_leap_seconds_at_midnight),
          TEST_CASE(test_status_and_units),
          TEST_CASE(test_suspend_stops_monotonic_not_realtime_or_boottime));
