/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "tests.h"
#include "timesyncd-filter.h"

#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)

static void test_first_samples_are_never_spikes(void) {
        NTPFilter f = {};

        ASSERT_FALSE(ntp_filter_add(&f, 1 * MSEC));
        ASSERT_FALSE(ntp_filter_add(&f, 100 * MSEC));
        ASSERT_FALSE(ntp_filter_add(&f, -100 * MSEC));
        ASSERT_EQ(f.packet_count, 3);
}

static void test_outlier_is_a_spike_and_lasting_change_is_accepted(void) {
        NTPFilter f = {};
        unsigned spikes = 0;

        for (int i = 0; i < 8; i++)
                ASSERT_FALSE(ntp_filter_add(&f, (i % 2 ? 1 : -1) * 100000)); /* +-0.1 ms */

        ASSERT_TRUE(ntp_filter_add(&f, 150 * MSEC));

        /* The offset stays: after a few samples it is the new normal, not a spike. */
        for (int i = 0; i < 8; i++)
                spikes += ntp_filter_add(&f, 150 * MSEC);
        ASSERT_TRUE(spikes < 8);
        ASSERT_FALSE(ntp_filter_add(&f, 150 * MSEC));
}

static void test_never_two_spikes_in_a_row(void) {
        NTPFilter f = {};

        for (int i = 0; i < 8; i++)
                ASSERT_FALSE(ntp_filter_add(&f, (i % 2 ? 1 : -1) * 100000)); /* +-0.1 ms */
        /* a clock drifting off a locked loop: the second sample far off is used */
        ASSERT_TRUE(ntp_filter_add(&f, 5 * MSEC));
        ASSERT_FALSE(ntp_filter_add(&f, 7 * MSEC));
}

static void test_big_offset_is_not_a_spike(void) {
        NTPFilter f = {};

        for (int i = 0; i < 8; i++)
                (void) ntp_filter_add(&f, 0);
        /* A clock error that needs a step must never be filtered out as noise. */
        ASSERT_FALSE(ntp_filter_add(&f, 30 * 60 * SEC));
}

static void test_reset_keeps_packet_count(void) {
        NTPFilter f = {};

        (void) ntp_filter_add(&f, 0);
        (void) ntp_filter_add(&f, 0);
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
                        (void) ntp_filter_add(&f, rows[i].offsets[j]);
                d = ntp_filter_deviation(&f, rows[i].offsets[3]);
                ASSERT_TRUE(d >= rows[i].deviation_min && d <= rows[i].deviation_max);
                ASSERT_EQ(ntp_filter_poll_next(3, d, false, f.jitter_nsec, 0, 6), rows[i].level_by_deviation);
                /* The offset itself, 2 s or more, starts the level over. */
                ASSERT_EQ(ntp_filter_poll_next(3, rows[i].offsets[3], false, f.jitter_nsec, 0, 6), 0u);
        }
}

TEST_MAIN(TEST_CASE(test_first_samples_are_never_spikes),
          TEST_CASE(test_outlier_is_a_spike_and_lasting_change_is_accepted),
          TEST_CASE(test_never_two_spikes_in_a_row),
          TEST_CASE(test_big_offset_is_not_a_spike),
          TEST_CASE(test_reset_keeps_packet_count),
          TEST_CASE(test_poll_interval_backs_off_when_stable_and_stays_in_bounds),
          TEST_CASE(test_poll_interval_resets_on_large_offset),
          TEST_CASE(test_poll_interval_ignores_spikes),
          TEST_CASE(test_deviation_is_from_the_sources_own_samples));
