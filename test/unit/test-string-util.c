/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "string-util.h"
#include "tests.h"

static void test_parse_unsigned_takes_digits_only(void) {
        uint64_t v;

        ASSERT_OK(parse_unsigned("0", 10, &v));
        ASSERT_EQ(v, 0);
        ASSERT_OK(parse_unsigned("15", 15, &v));
        ASSERT_EQ(v, 15);
        ASSERT_OK(parse_unsigned("18446744073709551615", UINT64_MAX, &v));
        ASSERT_TRUE(v == UINT64_MAX);

        static const char *const bad[] = { "", "15junk", "+15", "-1", " 15", "15 ", "0x0f", "1e3", "1.0", "15\n" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT_ERROR(parse_unsigned(bad[i], UINT64_MAX, &v), EINVAL);
}

/* Above max or above UINT64_MAX: -ERANGE, never a value taken modulo 2^32 or 2^64. */
static void test_parse_unsigned_refuses_too_large_values(void) {
        uint64_t v = 7;

        ASSERT_ERROR(parse_unsigned("16", 15, &v), ERANGE);
        ASSERT_ERROR(parse_unsigned("65536", UINT16_MAX, &v), ERANGE);
        ASSERT_ERROR(parse_unsigned("4294967311", UINT32_MAX, &v), ERANGE);
        ASSERT_ERROR(parse_unsigned("18446744073709551616", UINT64_MAX, &v), ERANGE);
        ASSERT_ERROR(parse_unsigned("99999999999999999999999", UINT64_MAX, &v), ERANGE);
        /* Junk after an overflow is junk. */
        ASSERT_ERROR(parse_unsigned("99999999999999999999999x", UINT64_MAX, &v), EINVAL);
        ASSERT_EQ(v, 7);
}

TEST_MAIN(TEST_CASE(test_parse_unsigned_takes_digits_only),
          TEST_CASE(test_parse_unsigned_refuses_too_large_values));
