/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "tests.h"
#include "timesyncd-filter.h"

#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)

static void test_first_samples_are_never_spikes(void) {
        NTPFilter f = {};

        ASSERT_FALSE(ntp_filter_add(&f, 1 * MSEC, 20 * MSEC, NULL));
        ASSERT_FALSE(ntp_filter_add(&f, 100 * MSEC, 20 * MSEC, NULL));
        ASSERT_FALSE(ntp_filter_add(&f, -100 * MSEC, 20 * MSEC, NULL));
        ASSERT_EQ(f.packet_count, 3);
}

static void test_outlier_is_a_spike_and_lasting_change_is_accepted(void) {
        NTPFilter f = {};
        unsigned spikes = 0;

        for (int i = 0; i < 8; i++)
                ASSERT_FALSE(ntp_filter_add(&f, (i % 2 ? 1 : -1) * 100000, 20 * MSEC, NULL)); /* +-0.1 ms */

        ASSERT_TRUE(ntp_filter_add(&f, 150 * MSEC, 20 * MSEC, NULL));

        /* The offset stays: after a few samples it is the new normal, not a spike. */
        for (int i = 0; i < 8; i++)
                spikes += ntp_filter_add(&f, 150 * MSEC, 20 * MSEC, NULL);
        ASSERT_TRUE(spikes < 8);
        ASSERT_FALSE(ntp_filter_add(&f, 150 * MSEC, 20 * MSEC, NULL));
}

static void test_big_offset_is_not_a_spike(void) {
        NTPFilter f = {};

        for (int i = 0; i < 8; i++)
                (void) ntp_filter_add(&f, 0, 20 * MSEC, NULL);
        /* A clock error that needs a step must never be filtered out as noise. */
        ASSERT_FALSE(ntp_filter_add(&f, 30 * 60 * SEC, 20 * MSEC, NULL));
}

static void test_reset_keeps_packet_count(void) {
        NTPFilter f = {};

        (void) ntp_filter_add(&f, 0, 20 * MSEC, NULL);
        (void) ntp_filter_add(&f, 0, 20 * MSEC, NULL);
        ntp_filter_reset(&f);
        ASSERT_EQ(f.n, 0);
        ASSERT_EQ(f.packet_count, 2);
}

static void test_poll_interval_backs_off_when_stable_and_stays_in_bounds(void) {
        unsigned p = 0;

        for (int i = 0; i < 20; i++)
                p = ntp_filter_poll_next(p, 100000, false, 50000, 0, 6);
        ASSERT_EQ(p, 6);
}

static void test_poll_interval_resets_on_large_offset(void) {
        ASSERT_EQ(ntp_filter_poll_next(6, 300 * MSEC, false, 0, 0, 6), 0);
        ASSERT_EQ(ntp_filter_poll_next(6, -300 * MSEC, false, 0, 0, 6), 0);
}

static void test_poll_interval_ignores_spikes(void) {
        ASSERT_EQ(ntp_filter_poll_next(3, 100 * MSEC, true, 0, 0, 6), 3);
        ASSERT_EQ(ntp_filter_poll_next(3, 100 * MSEC, false, 0, 0, 6), 2);
}

/* A source 2 s off whose samples agree with each other: its deviation is what decides the poll
 * level of a falseticker, and it lets the level grow where the offset resets it. A source whose
 * samples wander by 300 ms is far off by either measure. */
static void test_deviation_is_from_the_sources_own_samples(void) {
        static const struct {
                int64_t offsets[4];
                int64_t deviation_min, deviation_max;
                unsigned level_by_deviation;
        } rows[] = {
                { { 2000 * MSEC, 2000 * MSEC, 2000 * MSEC, 2000 * MSEC }, 0, 0, 4 },
                { { 2000 * MSEC, 2001 * MSEC, 1999 * MSEC, 2000 * MSEC }, -1 * MSEC, 1 * MSEC, 4 },
                { { -5000 * MSEC, -5000 * MSEC, -5000 * MSEC, -4999 * MSEC }, 0, 1 * MSEC, 4 },
                { { 2000 * MSEC, 2000 * MSEC, 2000 * MSEC, 3200 * MSEC }, 800 * MSEC, 1000 * MSEC, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                NTPFilter f = {};
                int64_t d;

                for (size_t j = 0; j < ELEMENTSOF(rows[i].offsets); j++)
                        (void) ntp_filter_add(&f, rows[i].offsets[j], 20 * MSEC, NULL);
                d = ntp_filter_deviation(&f, rows[i].offsets[3]);
                ASSERT_TRUE(d >= rows[i].deviation_min && d <= rows[i].deviation_max);
                ASSERT_EQ(ntp_filter_poll_next(3, d, false, f.jitter_nsec, 0, 6), rows[i].level_by_deviation);
                /* The offset itself, 2 s or more, starts the level over. */
                ASSERT_EQ(ntp_filter_poll_next(3, rows[i].offsets[3], false, f.jitter_nsec, 0, 6), 0u);
        }
}

/* Replies held back by an attacker: a delay far above the source's recent least delay is not
 * trusted, and its offset (shifted by half the delay) is neither recorded nor a spike. */
static void test_delay_far_above_the_recent_minimum_is_not_trusted(void) {
        NTPFilter f = {};
        NTPFilterDelay d;

        for (int i = 0; i < 4; i++) {
                ASSERT_FALSE(ntp_filter_add(&f, 0, 20 * MSEC + i * MSEC, &d));
                ASSERT_EQ(d, NTP_FILTER_DELAY_USUAL);
        }
        ASSERT_EQ(ntp_filter_delay_min(&f), 20 * MSEC);

        ASSERT_FALSE(ntp_filter_add(&f, -750 * MSEC, 1500 * MSEC, &d));
        ASSERT_EQ(d, NTP_FILTER_DELAY_JUMPED);
        /* Its offset was not recorded: the window still says 0. */
        ASSERT_EQ(f.n, 4u);
        ASSERT_EQ(ntp_filter_deviation(&f, 0), 0);

        /* Noise of a fast path (three times, but not 50 ms more) and a slow one (50 ms more, but
         * not three times) is no jump. */
        ASSERT_FALSE(ntp_filter_add(&f, 0, 69 * MSEC, &d));
        ASSERT_EQ(d, NTP_FILTER_DELAY_USUAL);
        ASSERT_FALSE(ntp_filter_add(&f, 0, 59 * MSEC, &d));
        ASSERT_EQ(d, NTP_FILTER_DELAY_USUAL);
}

/* A new route: the delay that lasts for a whole window is the new normal. */
static void test_lasting_delay_is_trusted_after_a_window(void) {
        NTPFilter f = {};
        NTPFilterDelay d;
        unsigned refused = 0;

        for (int i = 0; i < NTP_FILTER_SIZE; i++)
                (void) ntp_filter_add(&f, 0, 20 * MSEC, NULL);
        for (int i = 0; i < NTP_FILTER_SIZE; i++) {
                (void) ntp_filter_add(&f, 0, 400 * MSEC, &d);
                refused += d != NTP_FILTER_DELAY_USUAL;
        }
        ASSERT_EQ(refused, (unsigned) NTP_FILTER_SIZE);
        (void) ntp_filter_add(&f, 0, 400 * MSEC, &d);
        ASSERT_EQ(d, NTP_FILTER_DELAY_USUAL);
}

/* From the first sample on, with no recent minimum to compare with: a round trip above 3 s is
 * never time, and is not learnt as a minimum either. */
static void test_delay_above_the_maximum_is_never_trusted(void) {
        NTPFilter f = {};
        NTPFilterDelay d;

        for (int i = 0; i < 2 * NTP_FILTER_SIZE; i++) {
                ASSERT_FALSE(ntp_filter_add(&f, -4500 * MSEC, 9 * SEC, &d));
                ASSERT_EQ(d, NTP_FILTER_DELAY_TOO_LONG);
        }
        ASSERT_EQ(ntp_filter_delay_min(&f), -1);
        ASSERT_EQ(f.n, 0u);
        ASSERT_EQ(f.packet_count, (uint64_t) 2 * NTP_FILTER_SIZE);
        ASSERT_STREQ(ntp_filter_delay_to_string(d), "too long");
}

/* Our own step voids the offsets, not what the path's delay was. */
static void test_clock_step_keeps_the_delays(void) {
        NTPFilter f = {};
        NTPFilterDelay d;

        for (int i = 0; i < 4; i++)
                (void) ntp_filter_add(&f, 0, 20 * MSEC, NULL);
        ntp_filter_clock_stepped(&f);
        ASSERT_EQ(f.n, 0u);
        ASSERT_EQ(ntp_filter_delay_min(&f), 20 * MSEC);
        (void) ntp_filter_add(&f, 0, 1500 * MSEC, &d);
        ASSERT_EQ(d, NTP_FILTER_DELAY_JUMPED);

        ntp_filter_reset(&f);
        ASSERT_EQ(ntp_filter_delay_min(&f), -1);
}

TEST_MAIN(TEST_CASE(test_first_samples_are_never_spikes),
          TEST_CASE(test_outlier_is_a_spike_and_lasting_change_is_accepted),
          TEST_CASE(test_big_offset_is_not_a_spike),
          TEST_CASE(test_reset_keeps_packet_count),
          TEST_CASE(test_poll_interval_backs_off_when_stable_and_stays_in_bounds),
          TEST_CASE(test_poll_interval_resets_on_large_offset),
          TEST_CASE(test_poll_interval_ignores_spikes),
          TEST_CASE(test_deviation_is_from_the_sources_own_samples),
          TEST_CASE(test_delay_far_above_the_recent_minimum_is_not_trusted),
          TEST_CASE(test_lasting_delay_is_trusted_after_a_window),
          TEST_CASE(test_delay_above_the_maximum_is_never_trusted),
          TEST_CASE(test_clock_step_keeps_the_delays));
