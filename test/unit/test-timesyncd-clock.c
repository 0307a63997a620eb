/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "ntp-packet.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-clock.h"

#define MSEC INT64_C(1000000)

/* The kernel's PLL frequency update in nanosecond mode (kernel/time/ntp.c, SHIFT_PLL = 2):
 * offset * elapsed / 2^(2 * (tc + 4)) ns/s, with elapsed capped at 2^(tc + 3) s. Returned in
 * ppm, to check the loop our time constant makes. */
static double pll_frequency_step_ppm(int64_t offset_nsec, long elapsed_s, long tc) {
        long cap = 1L << (tc + 3);

        if (elapsed_s > cap)
                elapsed_s = cap;
        return (double) offset_nsec * (double) elapsed_s / (double) (INT64_C(1) << (2 * (tc + 4))) / 1000.0;
}

static void test_time_constant_is_log2_of_the_poll_interval(void) {
        ASSERT_EQ(clock_backend_pll_time_constant(5), 5);       /* 32 s */
        ASSERT_EQ(clock_backend_pll_time_constant(11), 10);     /* 2048 s: the kernel's MAXTC */
        ASSERT_EQ(clock_backend_pll_time_constant(4), 4);       /* 16 s */
        ASSERT_EQ(clock_backend_pll_time_constant(0), 0);
        ASSERT_EQ(clock_backend_pll_time_constant(-3), 0);
        ASSERT_EQ(clock_backend_pll_time_constant(40), 10);
}

static void test_a_small_offset_does_not_swing_the_frequency(void) {
        /* 30 ms at the first poll interval (32 s): a few ppm of frequency change. With the
         * microsecond-mode pairing "poll - 4" (tc = 1) the same sample asks for hundreds of ppm,
         * and the kernel stops at its limit of 500 ppm: the clock then runs 43 s a day off
         * between samples. */
        double ours = pll_frequency_step_ppm(30 * MSEC, 32, clock_backend_pll_time_constant(5));
        double fast = pll_frequency_step_ppm(30 * MSEC, 32, 1);

        ASSERT_TRUE(ours > 0 && ours < 10);
        ASSERT_TRUE(fast > 400);
}

/* The test clock says once per change whether a leap second is armed (issue 33): a test can
 * tell a leap second a minority announced, and so not armed, from one armed. */
static void test_fake_clock_says_whether_a_leap_second_is_armed(void) {
        static const int leaps[] = { NTP_LEAP_NONE, NTP_LEAP_NONE, NTP_LEAP_PLUSSEC, NTP_LEAP_PLUSSEC,
                                     NTP_LEAP_NONE, NTP_LEAP_MINUSSEC };
        _cleanup_free_ char *log = NULL;
        ClockBackend *b;
        LogCapture cap;
        int r[ELEMENTSOF(leaps)];

        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_FAKE, &b));
        log_capture_start(&cap);
        for (size_t i = 0; i < ELEMENTSOF(leaps); i++)
                r[i] = clock_backend_adjust(b, &(const ClockAdjustment) { .offset_nsec = 1000, .leap = leaps[i] }, NULL);
        log = log_capture_stop(&cap);
        for (size_t i = 0; i < ELEMENTSOF(leaps); i++)
                ASSERT_EQ(r[i], 1);
        ASSERT_STREQ(log, "Test clock: no leap second armed.\n"
                          "Test clock: leap second insertion armed.\n"
                          "Test clock: no leap second armed.\n"
                          "Test clock: leap second deletion armed.\n");
        clock_backend_free(b);
}

TEST_MAIN(TEST_CASE(test_time_constant_is_log2_of_the_poll_interval),
          TEST_CASE(test_fake_clock_says_whether_a_leap_second_is_armed),
          TEST_CASE(test_a_small_offset_does_not_swing_the_frequency));
