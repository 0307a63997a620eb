/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "nts-pool.h"
#include "tests.h"

static SocketAddress addr(const char *ip, uint16_t port) {
        SocketAddress a;

        ASSERT_OK(socket_address_from_string(ip, port, &a));
        return a;
}

static void test_first_member_is_new(void) {
        SocketAddress a = addr("192.0.2.1", 123);

        ASSERT_EQ(NTS_pool_check(NULL, 0, NULL, 0, "a.pool.test", NULL), NTS_POOL_NEW);
        ASSERT_EQ(NTS_pool_check(NULL, 0, NULL, 0, "a.pool.test", &a), NTS_POOL_NEW);
        /* A server without a Server record is one source like any other, the first time. */
        ASSERT_EQ(NTS_pool_check(NULL, 0, NULL, 0, NULL, &a), NTS_POOL_NEW);
}

/* What a pool does when every member is denied (it names one of them anyway), and what one
 * that ignores the records does: the client notices before it resolves the name. */
static void test_member_in_use_named_again_is_noticed_by_name(void) {
        const NTS_PoolMember in_use[] = {
                { .name = "a.pool.test", .address = addr("192.0.2.1", 123) },
                { .name = "b.pool.test", .address = addr("192.0.2.2", 123) },
        };
        char *denied[] = { (char *) "a.pool.test", (char *) "b.pool.test" };

        ASSERT_EQ(NTS_pool_check(in_use, 2, denied, 2, "b.pool.test", NULL), NTS_POOL_DENIED_AGAIN);
        /* DNS names do not care for case; the pool's byte-exact matching may. */
        ASSERT_EQ(NTS_pool_check(in_use, 2, NULL, 0, "A.Pool.Test", NULL), NTS_POOL_DENIED_AGAIN);
        ASSERT_EQ(NTS_pool_check(NULL, 0, denied, 2, "B.POOL.TEST", NULL), NTS_POOL_DENIED_AGAIN);
        /* Also without the deny list: the pool ignored it, or the caller did not send one. */
        ASSERT_EQ(NTS_pool_check(in_use, 2, NULL, 0, "a.pool.test", NULL), NTS_POOL_DENIED_AGAIN);
        ASSERT_EQ(NTS_pool_check(in_use, 2, denied, 2, "c.pool.test", NULL), NTS_POOL_NEW);
}

/* A name turned down earlier in the round (it shared an address) is no member in use, but
 * naming it again brings nothing new either. */
static void test_name_turned_down_in_this_round_is_denied_again(void) {
        const NTS_PoolMember in_use[] = { { .name = "a.pool.test", .address = addr("192.0.2.1", 123) } };
        char *denied[] = { (char *) "a.pool.test", (char *) "alias.pool.test" };

        ASSERT_EQ(NTS_pool_check(in_use, 1, denied, 2, "alias.pool.test", NULL), NTS_POOL_DENIED_AGAIN);
}

static void test_new_name_for_an_address_in_use_is_noticed_by_address(void) {
        const NTS_PoolMember in_use[] = {
                { .name = "a.pool.test", .address = addr("192.0.2.1", 123) },
                { .name = "b.pool.test", .address = addr("2001:db8::2", 123) },
        };
        SocketAddress same4 = addr("192.0.2.1", 123), same6 = addr("2001:db8::2", 123),
                      other_port = addr("192.0.2.1", 1123), other = addr("192.0.2.3", 123);

        ASSERT_EQ(NTS_pool_check(in_use, 2, NULL, 0, "alias.pool.test", &same4), NTS_POOL_SAME_ADDRESS);
        ASSERT_EQ(NTS_pool_check(in_use, 2, NULL, 0, "192.0.2.1", &same4), NTS_POOL_SAME_ADDRESS);
        ASSERT_EQ(NTS_pool_check(in_use, 2, NULL, 0, "alias.pool.test", &same6), NTS_POOL_SAME_ADDRESS);
        /* Before resolving, a new name is all there is to go by. */
        ASSERT_EQ(NTS_pool_check(in_use, 2, NULL, 0, "alias.pool.test", NULL), NTS_POOL_NEW);
        /* Another port on the same host is another NTP server. */
        ASSERT_EQ(NTS_pool_check(in_use, 2, NULL, 0, "alias.pool.test", &other_port), NTS_POOL_NEW);
        ASSERT_EQ(NTS_pool_check(in_use, 2, NULL, 0, "c.pool.test", &other), NTS_POOL_NEW);
}

static void test_server_without_server_record_gives_one_source(void) {
        const NTS_PoolMember in_use[] = { { .name = NULL, .address = addr("192.0.2.1", 123) } };
        SocketAddress a = addr("192.0.2.1", 123);

        ASSERT_EQ(NTS_pool_check(in_use, 1, NULL, 0, NULL, NULL), NTS_POOL_NO_MEMBER);
        ASSERT_EQ(NTS_pool_check(in_use, 1, NULL, 0, NULL, &a), NTS_POOL_NO_MEMBER);
        /* A pool member among sources of a plain server: compared by address only. */
        ASSERT_EQ(NTS_pool_check(in_use, 1, NULL, 0, "a.pool.test", &a), NTS_POOL_SAME_ADDRESS);
}

static void test_verdicts_have_names(void) {
        for (NTS_PoolVerdict v = 0; v < _NTS_POOL_VERDICT_MAX; v++)
                ASSERT_TRUE(NTS_pool_verdict_to_string(v));
        ASSERT_FALSE(NTS_pool_verdict_to_string(_NTS_POOL_VERDICT_MAX));
        ASSERT_FALSE(NTS_pool_verdict_to_string((NTS_PoolVerdict) -1));
}

TEST_MAIN(TEST_CASE(test_first_member_is_new),
          TEST_CASE(test_member_in_use_named_again_is_noticed_by_name),
          TEST_CASE(test_name_turned_down_in_this_round_is_denied_again),
          TEST_CASE(test_new_name_for_an_address_in_use_is_noticed_by_address),
          TEST_CASE(test_server_without_server_record_gives_one_source),
          TEST_CASE(test_verdicts_have_names));
