/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "strv.h"
#include "tests.h"
#include "timesyncd-network.h"

static void test_routable_state_with_servers_is_online(void) {
        NetworkState s;

        ASSERT_OK(network_state_parse("# comment\nOPER_STATE=routable\nCARRIER_STATE=carrier\n"
                                      "ADDRESS_STATE=routable\nNTP=192.0.2.1 ntp.example.org\n", &s));
        ASSERT_TRUE(s.online);
        ASSERT_EQ(strv_length(s.ntp_servers), 2);
        ASSERT_STREQ(s.ntp_servers[0], "192.0.2.1");
        ASSERT_STREQ(s.ntp_servers[1], "ntp.example.org");
        network_state_done(&s);
}

static void test_no_carrier_is_offline(void) {
        NetworkState s;

        ASSERT_OK(network_state_parse("CARRIER_STATE=no-carrier\nADDRESS_STATE=off\n", &s));
        ASSERT_FALSE(s.online);
        ASSERT_EQ(strv_length(s.ntp_servers), 0);
        network_state_done(&s);
}

static void test_missing_state_file_means_online_without_servers(void) {
        NetworkState s;

        ASSERT_OK(network_state_read("/nonexistent-timesyncd-test", &s));
        ASSERT_TRUE(s.online);
        ASSERT_TRUE(!s.ntp_servers);
}

static void test_garbage_is_survived(void) {
        NetworkState s;

        ASSERT_OK(network_state_parse("=\n==\nNTP\nNTP=\n\n\x01\x02=\xff", &s));
        ASSERT_TRUE(s.online);
        ASSERT_EQ(strv_length(s.ntp_servers), 0);
        network_state_done(&s);
}

TEST_MAIN(TEST_CASE(test_routable_state_with_servers_is_online),
          TEST_CASE(test_no_carrier_is_offline),
          TEST_CASE(test_missing_state_file_means_online_without_servers),
          TEST_CASE(test_garbage_is_survived));
