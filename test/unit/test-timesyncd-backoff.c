/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The retry ladder, the renewal time, the cap per pool name and the RATE rule of
 * timesyncd-backoff.c: bounds of every delay, their growth, determinism with a fixed random
 * source, and the spread of the draws (chi-square with a fixed seed, so the same on every run).
 * test/simulation/sim-pool.c measures what they do to a fleet. */

#include "tests.h"
#include "timesyncd-backoff.h"

#define FLOOR (30 * USEC_PER_SEC)
#define CAP BACKOFF_KE_MAX_USEC
#define MAX_AGE (7 * USEC_PER_DAY)
#define WINDOW BACKOFF_RENEW_WINDOW_USEC

static uint64_t zeros(void *userdata) {
        return 0;
}

static uint64_t ones(void *userdata) {
        return UINT64_MAX;
}

static uint64_t seeded(void *userdata) {
        return test_random_u64(userdata);
}

/* Pearson's chi-square of counts against equal expectations. */
static double chi_square(const unsigned *counts, unsigned n_bins, unsigned n) {
        double expected = (double) n / n_bins, x = 0;

        for (unsigned i = 0; i < n_bins; i++)
                x += ((double) counts[i] - expected) * ((double) counts[i] - expected) / expected;
        return x;
}

static void test_first_retry_waits_between_floor_and_twice_floor(void) {
        ASSERT_EQ(backoff_ke_delay_max(1, 0, FLOOR, CAP), 2 * FLOOR);
        ASSERT_EQ(backoff_ke_delay(1, 0, FLOOR, CAP, zeros, NULL), FLOOR);
        ASSERT_EQ(backoff_ke_delay(1, 0, FLOOR, CAP, ones, NULL), 2 * FLOOR - 1);
}

static void test_every_delay_stays_between_floor_and_cap_and_in_its_upper_half(void) {
        static const usec_t elapsed[] = { 0, USEC_PER_SEC, FLOOR, 5 * USEC_PER_MINUTE, 10 * USEC_PER_MINUTE,
                                          USEC_PER_HOUR, 3 * USEC_PER_HOUR, 2 * USEC_PER_DAY };
        uint64_t state = 1;

        for (unsigned k = 1; k <= 70; k++)
                for (size_t e = 0; e < ELEMENTSOF(elapsed); e++) {
                        usec_t top = backoff_ke_delay_max(k, elapsed[e], FLOOR, CAP);

                        ASSERT_TRUE(top >= 2 * FLOOR && top <= CAP);
                        ASSERT_EQ(backoff_ke_delay(k, elapsed[e], FLOOR, CAP, zeros, NULL), MAX(top / 2, FLOOR));
                        ASSERT_EQ(backoff_ke_delay(k, elapsed[e], FLOOR, CAP, ones, NULL), top - 1);
                        for (unsigned i = 0; i < 100; i++) {
                                usec_t d = backoff_ke_delay(k, elapsed[e], FLOOR, CAP, seeded, &state);

                                ASSERT_TRUE(d >= FLOOR && d >= top / 2 && d < top);
                        }
                }
}

static void test_retry_range_follows_time_spent_failing_not_failure_count(void) {
        /* Ten quick failures within a minute: the range stays a minute wide, not an hour. */
        ASSERT_EQ(backoff_ke_delay_max(10, USEC_PER_MINUTE, FLOOR, CAP), 2 * FLOOR);
        ASSERT_EQ(backoff_ke_delay_max(10, 7 * USEC_PER_MINUTE, FLOOR, CAP), 7 * USEC_PER_MINUTE);
        ASSERT_EQ(backoff_ke_delay_max(10, 5 * USEC_PER_HOUR, FLOOR, CAP), CAP);
}

static void test_one_failure_before_a_long_suspend_does_not_wait_an_hour(void) {
        /* CLOCK_BOOTTIME counted a day of sleep since the first failure. */
        ASSERT_EQ(backoff_ke_delay_max(1, USEC_PER_DAY, FLOOR, CAP), 2 * FLOOR);
        ASSERT_EQ(backoff_ke_delay_max(2, USEC_PER_DAY, FLOOR, CAP), 4 * FLOOR);
}

static void test_expected_delay_never_falls_as_failures_or_time_grow(void) {
        double last = 0;

        /* The draw is uniform in [top/2, top): the expectation follows the top, and the mean of
         * many draws shows it. */
        for (unsigned k = 1; k <= 12; k++)
                for (usec_t e = 0; e <= 2 * CAP; e += 5 * USEC_PER_MINUTE) {
                        usec_t top = backoff_ke_delay_max(k, e, FLOOR, CAP);

                        ASSERT_TRUE(top >= backoff_ke_delay_max(k, e > 0 ? e - 5 * USEC_PER_MINUTE : 0, FLOOR, CAP));
                        ASSERT_TRUE(k == 1 || top >= backoff_ke_delay_max(k - 1, e, FLOOR, CAP));
                }

        for (usec_t e = 0; e <= 2 * CAP; e += 10 * USEC_PER_MINUTE) {
                uint64_t state = 7;
                double sum = 0, mean, expected;

                for (unsigned i = 0; i < 2000; i++)
                        sum += (double) backoff_ke_delay(20, e, FLOOR, CAP, seeded, &state);
                mean = sum / 2000;
                expected = 0.75 * (double) backoff_ke_delay_max(20, e, FLOOR, CAP);
                ASSERT_TRUE(mean >= last);
                ASSERT_TRUE(mean > 0.97 * expected && mean < 1.03 * expected);
                last = mean;
        }
}

/* A streak against a server that is gone for `outage`: returns when the first retry after its
 * return happens, and checks every wait on the way. */
static usec_t first_retry_after(usec_t outage, uint64_t seed) {
        BackoffLadder l = {};
        usec_t t = 0;

        while (t < outage) {
                usec_t d = backoff_ke_failed(&l, BACKOFF_KE_FAILED, t, FLOOR, CAP, seeded, &seed);

                ASSERT_TRUE(d >= FLOOR && d < CAP);
                t += d;
        }
        return t;
}

static void test_first_retry_after_an_outage_comes_within_its_length_again(void) {
        static const usec_t outages[] = { 2 * USEC_PER_MINUTE, 10 * USEC_PER_MINUTE, 30 * USEC_PER_MINUTE };

        /* Each wait is at most the time failed so far (once that exceeds 2 * FLOOR): the retry
         * after the return lands before twice the outage, plus one minute of the first rungs. */
        for (size_t i = 0; i < ELEMENTSOF(outages); i++)
                for (uint64_t seed = 1; seed <= 200; seed++)
                        ASSERT_TRUE(first_retry_after(outages[i], seed) < 2 * outages[i] + 2 * FLOOR);
        /* Past an hour, the top caps the wait. */
        ASSERT_TRUE(first_retry_after(5 * USEC_PER_HOUR, 1) < 5 * USEC_PER_HOUR + CAP);
}

static void test_success_starts_the_ladder_again(void) {
        BackoffLadder l = {};
        usec_t d;

        for (usec_t t = 0; t < 3 * USEC_PER_HOUR; t += d)
                d = backoff_ke_failed(&l, BACKOFF_KE_FAILED, t, FLOOR, CAP, zeros, NULL);
        ASSERT_EQ(d, CAP / 2);

        backoff_ke_done(&l);
        ASSERT_EQ(l.failures, 0U);
        d = backoff_ke_failed(&l, BACKOFF_KE_FAILED, 5 * USEC_PER_HOUR, FLOOR, CAP, ones, NULL);
        ASSERT_EQ(d, 2 * FLOOR - 1);
}

static void test_refusal_goes_to_the_top_of_the_ladder_until_a_success(void) {
        BackoffLadder l = {};

        /* Early after boot too: the monotonic clock is smaller than the top. */
        ASSERT_EQ(backoff_ke_failed(&l, BACKOFF_KE_REFUSED, 10 * USEC_PER_SEC, FLOOR, CAP, zeros, NULL), CAP / 2);
        ASSERT_EQ(backoff_ke_failed(&l, BACKOFF_KE_FAILED, 40 * USEC_PER_MINUTE, FLOOR, CAP, zeros, NULL), CAP / 2);
        backoff_ke_done(&l);
        ASSERT_EQ(backoff_ke_failed(&l, BACKOFF_KE_FAILED, 2 * USEC_PER_HOUR, FLOOR, CAP, zeros, NULL), FLOOR);
}

static void test_error_records_feed_the_ladder_by_what_they_say(void) {
        /* RFC 8915 section 4.1.3: 0 unrecognized critical record, 1 bad request: the same answer
         * again until the server changes. */
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_ERROR_SERVER_UNRECOGNIZED_CRITICAL_RECORD), BACKOFF_KE_REFUSED);
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_ERROR_SERVER_BAD_REQUEST), BACKOFF_KE_REFUSED);
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_ERROR_KE_NO_COMMON_AEAD), BACKOFF_KE_REFUSED);
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_ERROR_KE_NO_NEXT_PROTOCOL), BACKOFF_KE_REFUSED);
        /* 2 internal server error, unknown codes and warnings: trouble that may pass, the next
         * rung (never below the floor). */
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_ERROR_SERVER_INTERNAL_ERROR), BACKOFF_KE_FAILED);
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_ERROR_SERVER_UNKNOWN_ERROR), BACKOFF_KE_FAILED);
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_ERROR_SERVER_WARNING), BACKOFF_KE_FAILED);
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_ERROR_KE_TRUNCATED), BACKOFF_KE_FAILED);
        ASSERT_EQ(backoff_outcome_from_nts_error(NTS_OK), BACKOFF_KE_FAILED);
}

static void test_internal_server_error_waits_at_least_the_floor(void) {
        BackoffLadder l = {};

        ASSERT_TRUE(backoff_ke_failed(&l, backoff_outcome_from_nts_error(NTS_ERROR_SERVER_INTERNAL_ERROR), 0,
                                      FLOOR, CAP, zeros, NULL) >= FLOOR);
}

static void test_retry_setting_above_the_top_waits_the_top(void) {
        ASSERT_EQ(backoff_ke_delay(1, 0, USEC_INFINITY, CAP, zeros, NULL), CAP);
        ASSERT_EQ(backoff_ke_delay(5, USEC_PER_DAY, 2 * CAP, CAP, ones, NULL), CAP);
        /* Just below the top: the range is [top/2, top), never under the floor. */
        ASSERT_EQ(backoff_ke_delay(1, 0, CAP - 1, CAP, zeros, NULL), CAP - 1);
}

static void test_same_random_source_gives_same_delays(void) {
        uint64_t a = 42, b = 42;

        for (unsigned k = 1; k < 50; k++)
                ASSERT_EQ(backoff_ke_delay(k, k * USEC_PER_MINUTE, FLOOR, CAP, seeded, &a),
                          backoff_ke_delay(k, k * USEC_PER_MINUTE, FLOOR, CAP, seeded, &b));
        ASSERT_EQ(backoff_renewal_time(0, 0, MAX_AGE, WINDOW, seeded, &a),
                  backoff_renewal_time(0, 0, MAX_AGE, WINDOW, seeded, &b));
}

static void test_delays_spread_evenly_over_their_range(void) {
        unsigned counts[10] = {};
        uint64_t state = 3;
        usec_t top = backoff_ke_delay_max(6, 20 * USEC_PER_MINUTE, FLOOR, CAP);

        for (unsigned i = 0; i < 20000; i++) {
                usec_t d = backoff_ke_delay(6, 20 * USEC_PER_MINUTE, FLOOR, CAP, seeded, &state);

                counts[(d - top / 2) * 10 / (top - top / 2)]++;
        }
        /* 9 degrees of freedom: 27.9 is exceeded with probability 0.001. */
        ASSERT_TRUE(chi_square(counts, 10, 20000) < 27.9);
}

static void test_renewal_falls_in_the_window_before_the_age_limit(void) {
        usec_t ke = 1000 * USEC_PER_DAY;
        uint64_t state = 5;

        ASSERT_EQ(backoff_renewal_time(ke, ke, MAX_AGE, WINDOW, zeros, NULL), ke + MAX_AGE - WINDOW);
        ASSERT_EQ(backoff_renewal_time(ke, ke, MAX_AGE, WINDOW, ones, NULL), ke + MAX_AGE - 1);
        for (unsigned i = 0; i < 10000; i++) {
                usec_t t = backoff_renewal_time(ke, ke, MAX_AGE, WINDOW, seeded, &state);

                ASSERT_TRUE(t >= ke + MAX_AGE - WINDOW && t < ke + MAX_AGE);
        }
}

static void test_renewal_after_a_restart_draws_from_what_is_left(void) {
        usec_t ke = 1000 * USEC_PER_DAY, limit = ke + MAX_AGE, now = limit - WINDOW / 4;

        /* Before the window: all of it. */
        ASSERT_EQ(backoff_renewal_time(ke, ke + USEC_PER_DAY, MAX_AGE, WINDOW, zeros, NULL), limit - WINDOW);
        /* Inside: from now on, never in the past, never after the limit. */
        ASSERT_EQ(backoff_renewal_time(ke, now, MAX_AGE, WINDOW, zeros, NULL), now);
        ASSERT_EQ(backoff_renewal_time(ke, now, MAX_AGE, WINDOW, ones, NULL), limit - 1);
        /* Past the limit: at once. */
        ASSERT_EQ(backoff_renewal_time(ke, limit, MAX_AGE, WINDOW, ones, NULL), limit);
        ASSERT_EQ(backoff_renewal_time(ke, limit + USEC_PER_DAY, MAX_AGE, WINDOW, ones, NULL), limit + USEC_PER_DAY);
        /* A window longer than the age limit is the whole age. */
        ASSERT_EQ(backoff_renewal_time(ke, ke, USEC_PER_DAY, WINDOW * 3, zeros, NULL), ke);
}

static void test_renewals_spread_evenly_over_the_window_also_after_a_restart(void) {
        usec_t ke = 1000 * USEC_PER_DAY, limit = ke + MAX_AGE;
        unsigned whole[24] = {}, rest[12] = {};
        uint64_t state = 11;

        /* 23 and 11 degrees of freedom: 49.7 and 31.3 are exceeded with probability 0.001. */
        for (unsigned i = 0; i < 24000; i++)
                whole[(backoff_renewal_time(ke, ke, MAX_AGE, WINDOW, seeded, &state) - (limit - WINDOW)) /
                      USEC_PER_HOUR]++;
        ASSERT_TRUE(chi_square(whole, 24, 24000) < 49.7);

        for (unsigned i = 0; i < 12000; i++)
                rest[(backoff_renewal_time(ke, limit - WINDOW / 2, MAX_AGE, WINDOW, seeded, &state) -
                      (limit - WINDOW / 2)) / USEC_PER_HOUR]++;
        ASSERT_TRUE(chi_square(rest, 12, 12000) < 31.3);
}

static void test_cap_allows_its_count_per_hour_then_waits_and_says_so_once(void) {
        BackoffLimit l;
        usec_t until;
        bool first;

        backoff_limit_init(&l, BACKOFF_LIMIT_DEFAULT, BACKOFF_LIMIT_PERIOD_USEC);
        for (unsigned i = 0; i < BACKOFF_LIMIT_DEFAULT; i++)
                ASSERT_TRUE(backoff_limit_take(&l, 1000 * USEC_PER_SEC + i * USEC_PER_SEC, &until, &first));

        ASSERT_FALSE(backoff_limit_take(&l, 1020 * USEC_PER_SEC, &until, &first));
        ASSERT_EQ(until, 1000 * USEC_PER_SEC + USEC_PER_HOUR);
        ASSERT_TRUE(first);
        ASSERT_FALSE(backoff_limit_take(&l, 1030 * USEC_PER_SEC, &until, &first));
        ASSERT_FALSE(first);
        ASSERT_FALSE(backoff_limit_take(&l, until - 1, &until, &first));
        ASSERT_FALSE(first);

        ASSERT_TRUE(backoff_limit_take(&l, until, &until, &first));
        /* The next refusal after a start is news again. */
        ASSERT_FALSE(backoff_limit_take(&l, 1000 * USEC_PER_SEC + USEC_PER_HOUR, &until, &first));
        ASSERT_EQ(until, 1001 * USEC_PER_SEC + USEC_PER_HOUR);
        ASSERT_TRUE(first);
}

static void test_ladder_of_one_source_never_meets_the_cap(void) {
        BackoffLadder ladder = {};
        BackoffLimit l;
        usec_t until;
        bool first;
        unsigned n = 0;
        usec_t t = 0;

        /* The shortest waits the ladder allows, through three hours of failures. */
        backoff_limit_init(&l, BACKOFF_LIMIT_DEFAULT, BACKOFF_LIMIT_PERIOD_USEC);
        while (t < 3 * USEC_PER_HOUR) {
                ASSERT_TRUE(backoff_limit_take(&l, t, &until, &first));
                n += t < USEC_PER_HOUR;
                t += backoff_ke_failed(&ladder, BACKOFF_KE_FAILED, t, FLOOR, CAP, zeros, NULL);
        }
        ASSERT_EQ(n, 13U);
}

static void test_cap_is_a_sliding_window(void) {
        BackoffLimit l;
        usec_t until;
        bool first;

        backoff_limit_init(&l, 3, 60 * USEC_PER_SEC);
        ASSERT_TRUE(backoff_limit_take(&l, 0, &until, &first));
        ASSERT_TRUE(backoff_limit_take(&l, 20 * USEC_PER_SEC, &until, &first));
        ASSERT_TRUE(backoff_limit_take(&l, 40 * USEC_PER_SEC, &until, &first));
        ASSERT_FALSE(backoff_limit_take(&l, 50 * USEC_PER_SEC, &until, &first));
        ASSERT_EQ(until, 60 * USEC_PER_SEC);
        ASSERT_TRUE(backoff_limit_take(&l, 60 * USEC_PER_SEC, &until, &first));
        /* Now the oldest of the last three is the one at 20 s. */
        ASSERT_FALSE(backoff_limit_take(&l, 70 * USEC_PER_SEC, &until, &first));
        ASSERT_EQ(until, 80 * USEC_PER_SEC);

        /* Never more than 3 in any 60 s, whatever the demand. */
        backoff_limit_init(&l, 3, 60 * USEC_PER_SEC);
        {
                usec_t starts[64];
                unsigned n = 0;

                for (usec_t t = 0; t < 600 * USEC_PER_SEC && n < ELEMENTSOF(starts); t += USEC_PER_SEC)
                        if (backoff_limit_take(&l, t, &until, &first))
                                starts[n++] = t;
                ASSERT_EQ(n, 30U);
                for (unsigned i = 3; i < n; i++)
                        ASSERT_TRUE(starts[i] - starts[i - 3] >= 60 * USEC_PER_SEC);
        }
}

static void test_rate_kiss_doubles_the_interval_and_later_samples_cannot_undo_it(void) {
        unsigned min_level = 0;

        min_level = backoff_rate_kiss(4, min_level, 6);
        ASSERT_EQ(min_level, 5U);
        /* The adaptation dropped the level to 0 after a large offset: the floor holds, and a
         * second RATE raises it again. */
        min_level = backoff_rate_kiss(0, min_level, 6);
        ASSERT_EQ(min_level, 6U);
        min_level = backoff_rate_kiss(6, min_level, 6);
        ASSERT_EQ(min_level, 6U);
}

TEST_MAIN(TEST_CASE(test_first_retry_waits_between_floor_and_twice_floor),
          TEST_CASE(test_every_delay_stays_between_floor_and_cap_and_in_its_upper_half),
          TEST_CASE(test_retry_range_follows_time_spent_failing_not_failure_count),
          TEST_CASE(test_one_failure_before_a_long_suspend_does_not_wait_an_hour),
          TEST_CASE(test_expected_delay_never_falls_as_failures_or_time_grow),
          TEST_CASE(test_first_retry_after_an_outage_comes_within_its_length_again),
          TEST_CASE(test_success_starts_the_ladder_again),
          TEST_CASE(test_refusal_goes_to_the_top_of_the_ladder_until_a_success),
          TEST_CASE(test_error_records_feed_the_ladder_by_what_they_say),
          TEST_CASE(test_internal_server_error_waits_at_least_the_floor),
          TEST_CASE(test_retry_setting_above_the_top_waits_the_top),
          TEST_CASE(test_same_random_source_gives_same_delays),
          TEST_CASE(test_delays_spread_evenly_over_their_range),
          TEST_CASE(test_renewal_falls_in_the_window_before_the_age_limit),
          TEST_CASE(test_renewal_after_a_restart_draws_from_what_is_left),
          TEST_CASE(test_renewals_spread_evenly_over_the_window_also_after_a_restart),
          TEST_CASE(test_cap_allows_its_count_per_hour_then_waits_and_says_so_once),
          TEST_CASE(test_ladder_of_one_source_never_meets_the_cap),
          TEST_CASE(test_cap_is_a_sliding_window),
          TEST_CASE(test_rate_kiss_doubles_the_interval_and_later_samples_cannot_undo_it));
