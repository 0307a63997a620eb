/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "tests.h"
#include "timesyncd-refusals.h"

#define T0_REALTIME (UINT64_C(1764873000) * USEC_PER_SEC)
#define T0_BOOTTIME (5 * USEC_PER_SEC)

static void test_refusals_are_counted_per_cause_with_first_and_last_time(void) {
        Refusals r = {};

        refusals_add(&r, REFUSAL_NTS_AUTH_FAILED, "bad", T0_REALTIME, T0_BOOTTIME);
        refusals_add(&r, REFUSAL_WRONG_ORIGIN, "origin", T0_REALTIME + 1, T0_BOOTTIME + 1);
        refusals_add(&r, REFUSAL_NTS_AUTH_FAILED, "bad again", T0_REALTIME + 2, T0_BOOTTIME + 2);

        ASSERT_EQ(r.total, 3u);
        ASSERT_EQ(r.last, REFUSAL_NTS_AUTH_FAILED);
        ASSERT_EQ(r.by_cause[REFUSAL_NTS_AUTH_FAILED].count, 2u);
        ASSERT_EQ(r.by_cause[REFUSAL_NTS_AUTH_FAILED].first_realtime, T0_REALTIME);
        ASSERT_EQ(r.by_cause[REFUSAL_NTS_AUTH_FAILED].last_realtime, T0_REALTIME + 2);
        ASSERT_STREQ(r.by_cause[REFUSAL_NTS_AUTH_FAILED].reason, "bad again");
        ASSERT_EQ(r.by_cause[REFUSAL_WRONG_ORIGIN].count, 1u);
        ASSERT_EQ(r.by_cause[REFUSAL_OVERSIZED].count, 0u);
}

static void test_each_cause_is_logged_once_per_interval(void) {
        Refusals r = {};

        ASSERT_TRUE(refusals_add(&r, REFUSAL_NTS_UID_MISMATCH, "uid", T0_REALTIME, T0_BOOTTIME));
        ASSERT_FALSE(refusals_add(&r, REFUSAL_NTS_UID_MISMATCH, "uid", T0_REALTIME, T0_BOOTTIME + 1));
        /* Another cause has its own interval. */
        ASSERT_TRUE(refusals_add(&r, REFUSAL_OVERSIZED, "big", T0_REALTIME, T0_BOOTTIME + 2));
        ASSERT_FALSE(refusals_add(&r, REFUSAL_NTS_UID_MISMATCH, "uid", T0_REALTIME,
                                  T0_BOOTTIME + REFUSAL_LOG_INTERVAL_USEC - 1));
        ASSERT_TRUE(refusals_add(&r, REFUSAL_NTS_UID_MISMATCH, "uid", T0_REALTIME,
                                 T0_BOOTTIME + REFUSAL_LOG_INTERVAL_USEC));
        ASSERT_EQ(r.by_cause[REFUSAL_NTS_UID_MISMATCH].count, 4u);
}

static void test_first_refusal_at_boottime_zero_still_rate_limits(void) {
        Refusals r = {};

        ASSERT_TRUE(refusals_add(&r, REFUSAL_SHORT, "short", T0_REALTIME, 0));
        ASSERT_FALSE(refusals_add(&r, REFUSAL_SHORT, "short", T0_REALTIME, 1));
}

static void test_every_nts_reply_error_maps_to_its_own_cause(void) {
        static const NTS_Error ntp_errors[] = {
                NTS_ERROR_NTP_TRUNCATED, NTS_ERROR_NTP_BAD_EXTENSION_FIELD, NTS_ERROR_NTP_NO_UID,
                NTS_ERROR_NTP_UID_MISMATCH, NTS_ERROR_NTP_NO_AUTHENTICATOR, NTS_ERROR_NTP_BAD_AUTHENTICATOR,
                NTS_ERROR_NTP_AUTH_FAILED, NTS_ERROR_NTP_NO_COOKIES, NTS_ERROR_NTP_NAK,
        };
        bool seen[_REFUSAL_CAUSE_MAX] = {};

        for (size_t i = 0; i < ELEMENTSOF(ntp_errors); i++) {
                RefusalCause c = refusal_cause_from_nts_error(ntp_errors[i]);

                ASSERT_TRUE(c >= REFUSAL_NTS_TRUNCATED && c < _REFUSAL_CAUSE_MAX);
                ASSERT_FALSE(seen[c]);
                seen[c] = true;
        }
        ASSERT_EQ(refusal_cause_from_nts_error(NTS_ERROR_NTP_AUTH_FAILED), REFUSAL_NTS_AUTH_FAILED);
        /* Key exchange errors are no reply refusals. */
        ASSERT_EQ(refusal_cause_from_nts_error(NTS_ERROR_KE_NO_COOKIES), _REFUSAL_CAUSE_INVALID);
        ASSERT_EQ(refusal_cause_from_nts_error(NTS_OK), _REFUSAL_CAUSE_INVALID);
}

static void test_every_cause_has_a_distinct_name(void) {
        for (RefusalCause c = 0; c < _REFUSAL_CAUSE_MAX; c++) {
                ASSERT_TRUE(refusal_cause_to_string(c));
                for (RefusalCause d = 0; d < c; d++)
                        ASSERT_FALSE(streq(refusal_cause_to_string(c), refusal_cause_to_string(d)));
        }
        ASSERT_STREQ(refusal_cause_to_string(REFUSAL_NTS_AUTH_FAILED), "nts-auth-failed");
        ASSERT_TRUE(refusal_cause_to_string(_REFUSAL_CAUSE_MAX) == NULL);
        ASSERT_TRUE(refusal_cause_to_string(_REFUSAL_CAUSE_INVALID) == NULL);
}

TEST_MAIN(TEST_CASE(test_refusals_are_counted_per_cause_with_first_and_last_time),
          TEST_CASE(test_each_cause_is_logged_once_per_interval),
          TEST_CASE(test_first_refusal_at_boottime_zero_still_rate_limits),
          TEST_CASE(test_every_nts_reply_error_maps_to_its_own_cause),
          TEST_CASE(test_every_cause_has_a_distinct_name))
