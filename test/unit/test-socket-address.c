/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "socket-address.h"
#include "tests.h"

static void test_ipv4_literal_round_trips_with_port(void) {
        char buf[SOCKET_ADDRESS_STRING_MAX];
        SocketAddress a;

        ASSERT_OK(socket_address_from_string("127.0.0.1", 4460, &a));
        ASSERT_EQ(a.sa.ss_family, AF_INET);
        ASSERT_EQ(socket_address_port(&a), 4460);
        ASSERT_STREQ(socket_address_to_string(&a, buf), "127.0.0.1:4460");
}

static void test_ipv6_literal_is_bracketed(void) {
        char buf[SOCKET_ADDRESS_STRING_MAX];
        SocketAddress a;

        ASSERT_OK(socket_address_from_string("::1", 123, &a));
        ASSERT_EQ(a.sa.ss_family, AF_INET6);
        ASSERT_STREQ(socket_address_to_string(&a, buf), "[::1]:123");
}

static void test_longest_ipv6_text_fits(void) {
        char buf[SOCKET_ADDRESS_STRING_MAX];
        SocketAddress a;

        ASSERT_OK(socket_address_from_string("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535, &a));
        ASSERT_STREQ(socket_address_to_string(&a, buf),
                     "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535");
}

static void test_names_are_not_resolved(void) {
        SocketAddress a;

        ASSERT_ERROR(socket_address_from_string("localhost", 123, &a), EINVAL);
        ASSERT_ERROR(socket_address_from_string("", 123, &a), EINVAL);
        ASSERT_ERROR(socket_address_from_string("127.0.0.1:123", 123, &a), EINVAL);
}

static void test_set_port_changes_only_the_port(void) {
        char buf[SOCKET_ADDRESS_STRING_MAX];
        SocketAddress a;

        ASSERT_OK(socket_address_from_string("192.0.2.1", 1, &a));
        socket_address_set_port(&a, 123);
        ASSERT_STREQ(socket_address_to_string(&a, buf), "192.0.2.1:123");
}

static void test_only_ip_families_are_built(void) {
        union in_addr_union u = {};
        SocketAddress a;

        ASSERT_ERROR(socket_address_from_in_addr(AF_UNIX, &u, 1, &a), EAFNOSUPPORT);
        ASSERT_OK(socket_address_from_in_addr(AF_INET6, &u, 1, &a));
        ASSERT_EQ(a.len, sizeof(struct sockaddr_in6));
}

static void test_unknown_family_is_named_unknown(void) {
        char buf[SOCKET_ADDRESS_STRING_MAX];
        SocketAddress a = { .sa.ss_family = AF_UNIX };

        ASSERT_STREQ(socket_address_to_string(&a, buf), "(unknown)");
        ASSERT_EQ(socket_address_port(&a), 0);
}

static void test_equal_needs_family_address_port_and_scope(void) {
        SocketAddress a, b;

        ASSERT_OK(socket_address_from_string("192.0.2.1", 123, &a));
        ASSERT_OK(socket_address_from_string("192.0.2.1", 123, &b));
        ASSERT_TRUE(socket_address_equal(&a, &b));
        socket_address_set_port(&b, 124);
        ASSERT_FALSE(socket_address_equal(&a, &b));
        ASSERT_OK(socket_address_from_string("192.0.2.2", 123, &b));
        ASSERT_FALSE(socket_address_equal(&a, &b));
        ASSERT_OK(socket_address_from_string("::ffff:192.0.2.1", 123, &b));
        ASSERT_FALSE(socket_address_equal(&a, &b));

        ASSERT_OK(socket_address_from_string("fe80::1", 123, &a));
        ASSERT_OK(socket_address_from_string("fe80::1", 123, &b));
        ASSERT_TRUE(socket_address_equal(&a, &b));
        ((struct sockaddr_in6 *) &b.sa)->sin6_scope_id = 2;
        ASSERT_FALSE(socket_address_equal(&a, &b));

        a = b = (SocketAddress) { .sa.ss_family = AF_UNIX };
        ASSERT_FALSE(socket_address_equal(&a, &b));
}

TEST_MAIN(TEST_CASE(test_ipv4_literal_round_trips_with_port),
          TEST_CASE(test_ipv6_literal_is_bracketed),
          TEST_CASE(test_longest_ipv6_text_fits),
          TEST_CASE(test_names_are_not_resolved),
          TEST_CASE(test_set_port_changes_only_the_port),
          TEST_CASE(test_only_ip_families_are_built),
          TEST_CASE(test_unknown_family_is_named_unknown),
          TEST_CASE(test_equal_needs_family_address_port_and_scope));
