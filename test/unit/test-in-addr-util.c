/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <arpa/inet.h>

#include "in-addr-util.h"
#include "tests.h"

static void test_ipv4_parses_and_formats_back(void) {
        union in_addr_union u;

        ASSERT_OK(in_addr_from_string(AF_INET, "192.0.2.33", &u));
        ASSERT_EQ(ntohl(u.in.s_addr), 0xc0000221);
        ASSERT_STREQ(IN_ADDR_TO_STRING(AF_INET, &u), "192.0.2.33");
}

static void test_ipv6_parses_and_formats_canonically(void) {
        union in_addr_union u;

        ASSERT_OK(in_addr_from_string(AF_INET6, "2001:0db8:0000:0000:0000:0000:0000:0001", &u));
        ASSERT_EQ(u.bytes[0], 0x20);
        ASSERT_EQ(u.bytes[15], 0x01);
        ASSERT_STREQ(IN_ADDR_TO_STRING(AF_INET6, &u), "2001:db8::1");
}

static void test_only_strict_ipv4_forms_are_accepted(void) {
        static const char *const bad[] = {
                "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "0x7f.0.0.1", "127.1", " 1.2.3.4",
                "1.2.3.4 ", "1.2.3.-4", "a.b.c.d",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT_ERROR(in_addr_from_string(AF_INET, bad[i], NULL), EINVAL);
}

static void test_bad_ipv6_forms_are_rejected(void) {
        static const char *const bad[] = {
                "", ":", "1::2::3", "fe80::1%lo", "[::1]", "12345::", "::g", "1:2:3:4:5:6:7:8:9",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT_ERROR(in_addr_from_string(AF_INET6, bad[i], NULL), EINVAL);
}

static void test_auto_detects_the_family(void) {
        union in_addr_union u;
        int family;

        ASSERT_OK(in_addr_from_string_auto("127.0.0.1", &family, &u));
        ASSERT_EQ(family, AF_INET);
        ASSERT_OK(in_addr_from_string_auto("::1", &family, &u));
        ASSERT_EQ(family, AF_INET6);
        ASSERT_ERROR(in_addr_from_string_auto("localhost", &family, &u), EINVAL);
}

static void test_unsupported_family_is_refused(void) {
        union in_addr_union u = {};

        ASSERT_ERROR(in_addr_from_string(AF_UNIX, "127.0.0.1", &u), EAFNOSUPPORT);
        ASSERT_TRUE(IN_ADDR_TO_STRING(AF_UNIX, &u) == NULL);
        ASSERT_EQ(family_address_size(AF_UNIX), 0);
        ASSERT_EQ(family_address_size(AF_INET), 4);
        ASSERT_EQ(family_address_size(AF_INET6), 16);
}

static void test_null_and_equal_compare_only_the_family_size(void) {
        union in_addr_union a = {}, b = {};

        ASSERT_TRUE(in_addr_is_null(AF_INET6, &a));
        b.bytes[5] = 1;
        ASSERT_TRUE(in_addr_is_null(AF_INET, &b));
        ASSERT_TRUE(in_addr_equal(AF_INET, &a, &b));
        ASSERT_FALSE(in_addr_equal(AF_INET6, &a, &b));
        ASSERT_FALSE(in_addr_is_null(AF_INET6, &b));
        ASSERT_FALSE(in_addr_equal(AF_UNIX, &a, &a));
}

TEST_MAIN(TEST_CASE(test_ipv4_parses_and_formats_back),
          TEST_CASE(test_ipv6_parses_and_formats_canonically),
          TEST_CASE(test_only_strict_ipv4_forms_are_accepted),
          TEST_CASE(test_bad_ipv6_forms_are_rejected),
          TEST_CASE(test_auto_detects_the_family),
          TEST_CASE(test_unsupported_family_is_refused),
          TEST_CASE(test_null_and_equal_compare_only_the_family_size));
