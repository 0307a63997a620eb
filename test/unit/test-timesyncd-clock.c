/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "ntp-packet.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-clock.h"

/* The kernel slews the phase it is given by 2^-(tc + 2) of it each second (nanosecond mode,
 * kernel/time/ntp.c, SHIFT_PLL = 2): the time constant of that slew in seconds. */
static double phase_time_constant_s(long tc) {
        return (double) (1L << (tc + 2));
}

static void test_the_phase_is_slewed_within_a_poll_interval(void) {
        /* The PLL's integrator is held (the frequency is the discipline's), so the time
         * constant only sets how fast a correction is worked off: a quarter of the interval,
         * done (e^-4, 98 %) by the next sample. log2(poll), the pairing of a loop through the
         * kernel's integrator, takes four intervals per e-fold. */
        for (int p = 4; p <= 14; p++)
                ASSERT_TRUE(phase_time_constant_s(clock_backend_pll_time_constant(p)) <= (double) (1 << p) / 4);
        ASSERT_EQ(clock_backend_pll_time_constant(5), 1);       /* 32 s: 8 s */
        ASSERT_EQ(clock_backend_pll_time_constant(11), 7);      /* 2048 s: 512 s */
        ASSERT_EQ(clock_backend_pll_time_constant(4), 0);
        ASSERT_EQ(clock_backend_pll_time_constant(-3), 0);
        ASSERT_EQ(clock_backend_pll_time_constant(40), 10);     /* the kernel's MAXTC */
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

TEST_MAIN(TEST_CASE(test_the_phase_is_slewed_within_a_poll_interval),
          TEST_CASE(test_fake_clock_says_whether_a_leap_second_is_armed));
