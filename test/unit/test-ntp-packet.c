/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "ntp-packet.h"
#include "tests.h"

#define USEC INT64_C(1000)
#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)

/* 2036-02-07T06:28:15Z, the last second of NTP era 0, in Unix seconds. */
#define ERA0_LAST_UNIX_SEC INT64_C(2085978495)

static void test_offset_and_delay_follow_rfc5905(void) {
        /* Server 5 s ahead, 20 ms each way, 2 ms processing. */
        int64_t t1 = 1000 * SEC, t2 = t1 + 5 * SEC + 20 * MSEC, t3 = t2 + 2 * MSEC, t4 = t1 + 42 * MSEC;
        NTPSample s = ntp_sample_compute(t1, t2, t3, t4);

        ASSERT_EQ(s.offset_nsec, 5 * SEC);
        ASSERT_EQ(s.delay_nsec, 40 * MSEC);
}

static void test_offset_is_negative_when_we_are_ahead(void) {
        int64_t t1 = 1000 * SEC, t2 = t1 - 3 * SEC + 10 * MSEC, t3 = t2, t4 = t1 + 20 * MSEC;
        NTPSample s = ntp_sample_compute(t1, t2, t3, t4);

        ASSERT_EQ(s.offset_nsec, -3 * SEC);
        ASSERT_EQ(s.delay_nsec, 20 * MSEC);
}

static void test_asymmetric_path_moves_offset_by_half_the_difference(void) {
        /* Same clocks, 30 ms out and 10 ms back: the offset is off by (30 - 10) / 2, which the
         * root distance (half the 40 ms delay) covers. */
        int64_t t1 = 1000 * SEC, t2 = t1 + 30 * MSEC, t3 = t2, t4 = t3 + 10 * MSEC;
        NTPSample s = ntp_sample_compute(t1, t2, t3, t4);

        ASSERT_EQ(s.offset_nsec, 10 * MSEC);
        ASSERT_EQ(s.delay_nsec, 40 * MSEC);
        ASSERT_TRUE(ntp_sample_root_distance_nsec(&s, &(NTPHeader) {}, 0) >= s.offset_nsec);
}

static void test_offset_does_not_overflow_for_far_dates(void) {
        int64_t t1 = INT64_C(4000000000) * SEC, t2 = INT64_C(100) * SEC;
        NTPSample s = ntp_sample_compute(t1, t2, t2, t1);

        ASSERT_TRUE(s.offset_nsec < 0);
        ASSERT_EQ(s.offset_nsec, t2 - t1);
}

static void test_offset_across_the_2036_era_boundary(void) {
        /* We send at the last second of era 0; the server, 2 s ahead, answers in era 1 with
         * seconds that wrapped to 1. */
        int64_t t1 = ntp_ts_to_nsec((NTPTimestamp) { .seconds = UINT32_MAX });
        int64_t t2 = ntp_ts_to_nsec((NTPTimestamp) { .seconds = 1 });
        NTPSample s = ntp_sample_compute(t1, t2, t2, t1);

        ASSERT_EQ(t1, ERA0_LAST_UNIX_SEC * SEC);
        ASSERT_EQ(t2, (ERA0_LAST_UNIX_SEC + 2) * SEC);
        ASSERT_EQ(s.offset_nsec, 2 * SEC);
        ASSERT_EQ(s.delay_nsec, 0);
}

static void test_timestamps_round_trip_in_both_eras(void) {
        static const int64_t times[] = {
                0,                                      /* 1970 */
                INT64_C(1700000000) * SEC + 123456789,  /* 2023 */
                ERA0_LAST_UNIX_SEC * SEC + 999999999,
                (ERA0_LAST_UNIX_SEC + 1) * SEC,         /* era 1 starts: seconds wrap to 0 */
                INT64_C(4000000000) * SEC,              /* 2096 */
                -SEC,                                   /* 1969 */
        };

        for (size_t i = 0; i < ELEMENTSOF(times); i++) {
                NTPTimestamp t = ntp_ts_from_nsec(times[i]);

                /* A 32-bit fraction resolves 0.23 ns: at most 1 ns is lost to truncation. */
                ASSERT_TRUE(times[i] - ntp_ts_to_nsec(t) >= 0);
                ASSERT_TRUE(times[i] - ntp_ts_to_nsec(t) <= 1);
        }
        ASSERT_EQ(ntp_ts_from_nsec((ERA0_LAST_UNIX_SEC + 1) * SEC).seconds, 0);
}

static void test_server_root_distance_is_half_root_delay_plus_root_dispersion(void) {
        NTPHeader h = {
                .root_delay = { .seconds = 1 },                 /* 1 s */
                .root_dispersion = { .fraction = 0x8000 },      /* 0.5 s */
        };

        ASSERT_EQ(ntp_root_distance_nsec(&h), SEC);
}

static void test_sample_root_distance_adds_half_the_delay_and_the_dispersion(void) {
        NTPHeader h = {
                .root_delay = { .seconds = 1 },                 /* 1 s */
                .root_dispersion = { .fraction = 0x8000 },      /* 0.5 s */
        };
        NTPSample s = { .offset_nsec = 7 * SEC, .delay_nsec = 40 * MSEC };

        /* (40 ms + 1 s) / 2 + 0.5 s + 1 ms */
        ASSERT_EQ(ntp_sample_root_distance_nsec(&s, &h, 1 * MSEC), 1021 * MSEC);
        /* The offset plays no part. */
        s.offset_nsec = -s.offset_nsec;
        ASSERT_EQ(ntp_sample_root_distance_nsec(&s, &h, 1 * MSEC), 1021 * MSEC);
}

static void test_negative_delay_or_dispersion_never_shrinks_the_root_distance(void) {
        NTPHeader h = { .root_dispersion = { .fraction = 0x8000 } };
        NTPSample s = { .delay_nsec = -10 * SEC };

        ASSERT_EQ(ntp_sample_root_distance_nsec(&s, &h, 0), SEC / 2);
        ASSERT_EQ(ntp_sample_root_distance_nsec(&s, &h, -SEC), SEC / 2);
}

static void test_root_distance_saturates(void) {
        NTPHeader h = {
                .root_delay = { UINT16_MAX, UINT16_MAX },
                .root_dispersion = { UINT16_MAX, UINT16_MAX },
        };
        NTPSample s = { .delay_nsec = INT64_MAX };

        ASSERT_EQ(ntp_sample_root_distance_nsec(&s, &h, INT64_MAX), INT64_MAX);
        s.delay_nsec = INT64_MAX - 1;
        ASSERT_TRUE(ntp_sample_root_distance_nsec(&s, &h, 0) > INT64_MAX / 2);
}

static void test_precision_is_a_power_of_two_rounded_up(void) {
        ASSERT_EQ(ntp_precision_nsec(0), SEC);
        ASSERT_EQ(ntp_precision_nsec(1), 2 * SEC);
        ASSERT_EQ(ntp_precision_nsec(-1), SEC / 2);
        ASSERT_EQ(ntp_precision_nsec(-20), 954);        /* 953.67 ns */
        ASSERT_EQ(ntp_precision_nsec(-29), 2);          /* 1.86 ns */
        ASSERT_EQ(ntp_precision_nsec(-30), 1);
        ASSERT_EQ(ntp_precision_nsec(INT8_MIN), 1);
        ASSERT_EQ(ntp_precision_nsec(33), (INT64_C(1) << 33) * SEC);
        ASSERT_EQ(ntp_precision_nsec(34), INT64_MAX);
        ASSERT_EQ(ntp_precision_nsec(INT8_MAX), INT64_MAX);
}

static void test_dispersion_is_both_precisions_plus_phi_times_the_age(void) {
        /* 2^-20 s each, plus 15 ppm of 1000 s. */
        ASSERT_EQ(ntp_dispersion_nsec(-20, -20, 1000 * SEC), 2 * 954 + 15 * MSEC);
        /* 15 ppm of 1 ms is 15 ns. */
        ASSERT_EQ(ntp_dispersion_nsec(-30, -30, 1 * MSEC), 2 + 15);
        /* A clock that went backwards does not make the sample better than at t1. */
        ASSERT_EQ(ntp_dispersion_nsec(-20, -20, -1000 * SEC), 2 * 954);
        ASSERT_EQ(ntp_dispersion_nsec(-20, -20, INT64_MAX), INT64_MAX / 1000000 * 15 + 2 * 954 +
                  INT64_MAX % 1000000 * 15 / 1000000);
        ASSERT_EQ(ntp_dispersion_nsec(INT8_MAX, INT8_MAX, INT64_MAX), INT64_MAX);
}

static void test_dispersion_grows_by_phi_as_the_sample_ages(void) {
        int64_t at_t4 = ntp_dispersion_nsec(-20, -24, 40 * MSEC);
        int64_t later = ntp_dispersion_nsec(-20, -24, 40 * MSEC + 64 * SEC);

        ASSERT_EQ(later - at_t4, 64 * 15 * USEC);
}

TEST_MAIN(TEST_CASE(test_offset_and_delay_follow_rfc5905),
          TEST_CASE(test_offset_is_negative_when_we_are_ahead),
          TEST_CASE(test_asymmetric_path_moves_offset_by_half_the_difference),
          TEST_CASE(test_offset_does_not_overflow_for_far_dates),
          TEST_CASE(test_offset_across_the_2036_era_boundary),
          TEST_CASE(test_timestamps_round_trip_in_both_eras),
          TEST_CASE(test_server_root_distance_is_half_root_delay_plus_root_dispersion),
          TEST_CASE(test_sample_root_distance_adds_half_the_delay_and_the_dispersion),
          TEST_CASE(test_negative_delay_or_dispersion_never_shrinks_the_root_distance),
          TEST_CASE(test_root_distance_saturates),
          TEST_CASE(test_precision_is_a_power_of_two_rounded_up),
          TEST_CASE(test_dispersion_is_both_precisions_plus_phi_times_the_age),
          TEST_CASE(test_dispersion_grows_by_phi_as_the_sample_ages));
