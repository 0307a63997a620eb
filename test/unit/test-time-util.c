/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "tests.h"
#include "time-util.h"

static void assert_parses(const char *s, usec_t expected) {
        usec_t u = 0;

        if (parse_sec(s, &u) < 0 || u != expected) {
                fprintf(stderr, "parse_sec(\"%s\") gave " USEC_FMT ", expected " USEC_FMT "\n",
                        s, u, expected);
                abort();
        }
}

static void assert_rejected(const char *s, int error) {
        usec_t u = 4711;
        int r = parse_sec(s, &u);

        if (r != -error || u != 4711) {
                fprintf(stderr, "parse_sec(\"%s\") gave %i (" USEC_FMT "), expected %i\n", s, r, u,
                        -error);
                abort();
        }
}

static void test_parse_sec_plain_number_means_seconds(void) {
        assert_parses("5", 5 * USEC_PER_SEC);
        assert_parses("0", 0);
        assert_parses("  32  ", 32 * USEC_PER_SEC);
        assert_parses("5 5", 10 * USEC_PER_SEC);
}

static void test_parse_sec_accepts_every_documented_unit(void) {
        static const struct {
                const char *unit;
                usec_t usec;
        } units[] = {
                { "us", 1 }, { "usec", 1 }, { "\xce\xbcs", 1 }, { "\xc2\xb5s", 1 },
                { "ms", USEC_PER_MSEC }, { "msec", USEC_PER_MSEC },
                { "s", USEC_PER_SEC }, { "sec", USEC_PER_SEC }, { "second", USEC_PER_SEC },
                { "seconds", USEC_PER_SEC },
                { "m", USEC_PER_MINUTE }, { "min", USEC_PER_MINUTE }, { "minute", USEC_PER_MINUTE },
                { "minutes", USEC_PER_MINUTE },
                { "h", USEC_PER_HOUR }, { "hr", USEC_PER_HOUR }, { "hour", USEC_PER_HOUR },
                { "hours", USEC_PER_HOUR },
                { "d", USEC_PER_DAY }, { "day", USEC_PER_DAY }, { "days", USEC_PER_DAY },
                { "w", USEC_PER_WEEK }, { "week", USEC_PER_WEEK }, { "weeks", USEC_PER_WEEK },
                { "M", USEC_PER_MONTH }, { "month", USEC_PER_MONTH }, { "months", USEC_PER_MONTH },
                { "y", USEC_PER_YEAR }, { "year", USEC_PER_YEAR }, { "years", USEC_PER_YEAR },
        };

        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                char glued[32], spaced[32];

                snprintf(glued, sizeof glued, "3%s", units[i].unit);
                snprintf(spaced, sizeof spaced, "3 %s", units[i].unit);
                assert_parses(glued, 3 * units[i].usec);
                assert_parses(spaced, 3 * units[i].usec);
        }
}

static void test_parse_sec_month_and_year_are_systemd_lengths(void) {
        assert_parses("1M", 2629800 * USEC_PER_SEC);
        assert_parses("1y", 31557600 * USEC_PER_SEC);
}

static void test_parse_sec_sums_terms_and_fractions(void) {
        assert_parses("1min 30s", 90 * USEC_PER_SEC);
        assert_parses("1min30s", 90 * USEC_PER_SEC);
        assert_parses("2h", 2 * USEC_PER_HOUR);
        assert_parses("500ms", 500 * USEC_PER_MSEC);
        assert_parses("1.5s", 1500 * USEC_PER_MSEC);
        assert_parses(".5s", 500 * USEC_PER_MSEC);
        assert_parses("1.5min", 90 * USEC_PER_SEC);
        assert_parses("1w", 7 * USEC_PER_DAY);
        assert_parses("1d 2h 3min 4s 5ms 6us",
                      USEC_PER_DAY + 2 * USEC_PER_HOUR + 3 * USEC_PER_MINUTE + 4 * USEC_PER_SEC +
                              5 * USEC_PER_MSEC + 6);
        /* Digits below a microsecond count for nothing. */
        assert_parses("1.0000019s", USEC_PER_SEC + 1);
}

static void test_parse_sec_infinity_is_usec_infinity(void) {
        assert_parses("infinity", USEC_INFINITY);
        assert_parses("  infinity ", USEC_INFINITY);
        assert_rejected("infinity 5", EINVAL);
        assert_rejected("infinitys", EINVAL);
}

static void test_parse_sec_rejects_bad_syntax(void) {
        static const char *const bad[] = {
                "", "   ", "s", "x", "5x", "5 x", "5.", "5.s", "5. s", "12.34.56", "1.2.3s",
                "5sx", "5secs", "five", "0x10", "+5", "5s,",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_rejected(bad[i], EINVAL);
}

static void test_parse_sec_negative_and_overflowing_values_are_erange(void) {
        assert_rejected("-1", ERANGE);
        assert_rejected("-0", ERANGE);
        assert_rejected("5s -1s", ERANGE);
        assert_rejected("1min-30s", ERANGE);
        assert_rejected("18446744073709551615us", ERANGE);
        assert_rejected("99999999999999999999", ERANGE);
        assert_rejected("600000y", ERANGE);
        assert_rejected("300000y 300000y", ERANGE);
        assert_rejected("584542.9y", ERANGE);
}

/* Found by fuzz-time-util: the largest whole number of years that fits was refused when
 * written alone, although "584541y 1y" gave the same value. */
static void test_parse_sec_takes_the_largest_whole_unit_that_fits(void) {
        usec_t a, b;

        ASSERT_OK(parse_sec("584542y", &a));
        ASSERT_OK(parse_sec("584541y 1y", &b));
        ASSERT_EQ(a, b);
        ASSERT_EQ(a, 584542 * USEC_PER_YEAR);
}

static void test_format_timespan_prints_like_systemd(void) {
        static const struct {
                usec_t t, accuracy;
                const char *text;
        } cases[] = {
                { 64 * USEC_PER_SEC, USEC_PER_SEC, "1min 4s" },
                { 32 * USEC_PER_SEC, USEC_PER_SEC, "32s" },
                { 2048 * USEC_PER_SEC, USEC_PER_SEC, "34min 8s" },
                { 2 * USEC_PER_HOUR + 8 * USEC_PER_MINUTE, USEC_PER_SEC, "2h 8min" },
                { USEC_PER_DAY + USEC_PER_HOUR + USEC_PER_MINUTE + USEC_PER_SEC, 1,
                  "1d 1h 1min 1s" },
                { 1500 * USEC_PER_MSEC, USEC_PER_MSEC, "1.500s" },
                { 1500 * USEC_PER_MSEC, 1, "1.500000s" },
                { 1500 * USEC_PER_MSEC, USEC_PER_SEC, "1s" },
                { 1500, 1, "1.500ms" },
                { 500 * USEC_PER_MSEC, 1, "500ms" },
                { 7, 1, "7us" },
                { USEC_PER_YEAR + USEC_PER_MONTH, USEC_PER_SEC, "1y 1month" },
                { 3 * USEC_PER_WEEK, USEC_PER_SEC, "3w" },
                /* Parts below the accuracy are dropped once something was printed. */
                { USEC_PER_HOUR + 5 * USEC_PER_SEC + 3, USEC_PER_MINUTE, "1h" },
                { 0, USEC_PER_SEC, "0" },
                { USEC_INFINITY, USEC_PER_SEC, "infinity" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ASSERT_STREQ(FORMAT_TIMESPAN(cases[i].t, cases[i].accuracy), cases[i].text);
}

static void test_format_timespan_truncates_within_the_buffer(void) {
        char buf[6];

        memset(buf, 'x', sizeof buf);
        format_timespan(buf, sizeof buf, USEC_PER_DAY + USEC_PER_HOUR + 7, 1);
        ASSERT_STREQ(buf, "1d 1h");

        format_timespan(buf, 1, 5 * USEC_PER_SEC, 1);
        ASSERT_STREQ(buf, "");

        format_timespan(buf, 3, USEC_INFINITY, 1);
        ASSERT_STREQ(buf, "in");
}

static void test_format_timespan_output_parses_back(void) {
        static const usec_t values[] = {
                1, 999, 1000, 1001, 1500 * USEC_PER_MSEC, 59 * USEC_PER_SEC + 1,
                64 * USEC_PER_SEC, 2048 * USEC_PER_SEC, USEC_PER_DAY + 17,
                3 * USEC_PER_YEAR + 2 * USEC_PER_MONTH + 5 * USEC_PER_WEEK + 123456789,
                USEC_INFINITY,
        };

        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                usec_t u;

                ASSERT_OK(parse_sec(FORMAT_TIMESPAN(values[i], 1), &u));
                ASSERT_TRUE(u == values[i]);
        }
}

static void test_timespec_round_trips_and_marks_infinity(void) {
        struct timespec ts;

        timespec_store(&ts, 5 * USEC_PER_SEC + 7);
        ASSERT_EQ(ts.tv_sec, 5);
        ASSERT_EQ(ts.tv_nsec, 7000);
        ASSERT_TRUE(timespec_load(&ts) == 5 * USEC_PER_SEC + 7);

        timespec_store(&ts, USEC_INFINITY);
        ASSERT_EQ(ts.tv_sec, -1);
        ASSERT_TRUE(timespec_load(&ts) == USEC_INFINITY);

        ts = (struct timespec) { .tv_sec = INT64_MAX, .tv_nsec = 0 };
        ASSERT_TRUE(timespec_load(&ts) == USEC_INFINITY);
}

static void test_format_timestamp_prints_like_systemd(void) {
        char buf[FORMAT_TIMESTAMP_MAX];

        ASSERT_EQ(setenv("TZ", "UTC", 1), 0);
        tzset();
        ASSERT_STREQ(FORMAT_TIMESTAMP(1 * USEC_PER_SEC), "Thu 1970-01-01 00:00:01 UTC");
        ASSERT_STREQ(FORMAT_TIMESTAMP(UINT64_C(1764873000) * USEC_PER_SEC + 999999), "Thu 2025-12-04 18:30:00 UTC");
        ASSERT_STREQ(FORMAT_TIMESTAMP(0), "n/a");
        ASSERT_STREQ(FORMAT_TIMESTAMP(USEC_INFINITY), "n/a");
        /* Too small a buffer: "n/a" cut to fit, never an overrun. */
        ASSERT_STREQ(format_timestamp(buf, 3, USEC_PER_SEC), "n/");
}

static void test_now_reads_the_requested_clock(void) {
        ASSERT_TRUE(now(CLOCK_REALTIME) > 0);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) != USEC_INFINITY);
}

static void test_usec_add_saturates(void) {
        ASSERT_EQ(usec_add(1, 2), (usec_t) 3);
        ASSERT_EQ(usec_add(USEC_INFINITY - 1, 1), USEC_INFINITY);
        ASSERT_EQ(usec_add(USEC_INFINITY - 1, 2), USEC_INFINITY);
        ASSERT_EQ(usec_add(USEC_INFINITY, USEC_INFINITY), USEC_INFINITY);
}

TEST_MAIN(TEST_CASE(test_usec_add_saturates),
          TEST_CASE(test_parse_sec_plain_number_means_seconds),
          TEST_CASE(test_parse_sec_accepts_every_documented_unit),
          TEST_CASE(test_parse_sec_month_and_year_are_systemd_lengths),
          TEST_CASE(test_parse_sec_sums_terms_and_fractions),
          TEST_CASE(test_parse_sec_infinity_is_usec_infinity),
          TEST_CASE(test_parse_sec_rejects_bad_syntax),
          TEST_CASE(test_parse_sec_negative_and_overflowing_values_are_erange),
          TEST_CASE(test_parse_sec_takes_the_largest_whole_unit_that_fits),
          TEST_CASE(test_format_timespan_prints_like_systemd),
          TEST_CASE(test_format_timespan_truncates_within_the_buffer),
          TEST_CASE(test_format_timespan_output_parses_back),
          TEST_CASE(test_timespec_round_trips_and_marks_infinity),
          TEST_CASE(test_format_timestamp_prints_like_systemd),
          TEST_CASE(test_now_reads_the_requested_clock));
