/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The transitions of an NTS client's state (timesyncd-nts-client-state.c): the table below is
 * the whole list of allowed ones, each with the path in timesyncd-nts-client.c that takes it;
 * every pair of states not in it must be refused. */

#include "tests.h"
#include "timesyncd-nts-client-state.h"
#include "transition-test-util.h"

static const TestTransition allowed[] = {
        { NTS_CLIENT_IDLE, NTS_CLIENT_READY, "keys from the state file" },
        { NTS_CLIENT_IDLE, NTS_CLIENT_RESOLVING, "first key exchange" },
        { NTS_CLIENT_IDLE, NTS_CLIENT_POOL_WAIT, "first key exchange, another client's with the pool runs" },
        { NTS_CLIENT_IDLE, NTS_CLIENT_BACKING_OFF, "cannot start, or postponed" },
        { NTS_CLIENT_POOL_WAIT, NTS_CLIENT_RESOLVING, "the pool's turn came" },
        { NTS_CLIENT_POOL_WAIT, NTS_CLIENT_BACKING_OFF, "the pool's turn came, cannot start" },
        { NTS_CLIENT_RESOLVING, NTS_CLIENT_KEY_EXCHANGE, "resolved, the session starts" },
        { NTS_CLIENT_RESOLVING, NTS_CLIENT_BACKING_OFF, "cannot resolve, or the session cannot start" },
        { NTS_CLIENT_KEY_EXCHANGE, NTS_CLIENT_READY, "keys" },
        { NTS_CLIENT_KEY_EXCHANGE, NTS_CLIENT_RESOLVING, "bootstrap, or the pool asked again" },
        { NTS_CLIENT_KEY_EXCHANGE, NTS_CLIENT_BACKING_OFF, "the exchange failed" },
        { NTS_CLIENT_READY, NTS_CLIENT_IDLE, "pool member turned down" },
        { NTS_CLIENT_READY, NTS_CLIENT_RESOLVING, "renewal, no cookie left, NAK, bootstrap done" },
        { NTS_CLIENT_READY, NTS_CLIENT_POOL_WAIT, "the same, another client's with the pool runs" },
        { NTS_CLIENT_READY, NTS_CLIENT_BACKING_OFF, "fresh cookies refused, bootstrap time refused" },
        { NTS_CLIENT_BACKING_OFF, NTS_CLIENT_RESOLVING, "the retry time came" },
        { NTS_CLIENT_BACKING_OFF, NTS_CLIENT_POOL_WAIT, "the retry time came, another client's runs" },
        { NTS_CLIENT_BACKING_OFF, NTS_CLIENT_BACKING_OFF, "postponed again" },
};

static bool transition_allowed(int from, int to) {
        return nts_client_state_transition_allowed(from, to);
}

static const char *state_name(int state) {
        return nts_client_state_to_string(state);
}

static void test_every_listed_transition_is_allowed_and_no_other(void) {
        test_transitions_are_exactly(allowed, ELEMENTSOF(allowed), _NTS_CLIENT_STATE_MAX, transition_allowed, state_name);
}

static void test_keys_come_only_from_an_exchange_or_the_state_file(void) {
        for (NTSClientState from = 0; from < _NTS_CLIENT_STATE_MAX; from++)
                ASSERT_EQ(nts_client_state_transition_allowed(from, NTS_CLIENT_READY),
                          IN_SET(from, NTS_CLIENT_KEY_EXCHANGE, NTS_CLIENT_IDLE));
}

static void test_every_state_may_back_off(void) {
        for (NTSClientState from = 0; from < _NTS_CLIENT_STATE_MAX; from++)
                ASSERT_TRUE(nts_client_state_transition_allowed(from, NTS_CLIENT_BACKING_OFF));
}

static void test_out_of_range_states_are_refused(void) {
        ASSERT_FALSE(nts_client_state_transition_allowed(_NTS_CLIENT_STATE_INVALID, NTS_CLIENT_IDLE));
        ASSERT_FALSE(nts_client_state_transition_allowed(NTS_CLIENT_IDLE, _NTS_CLIENT_STATE_MAX));
        ASSERT_FALSE(nts_client_state_transition_allowed(_NTS_CLIENT_STATE_MAX, NTS_CLIENT_READY));
}

static void test_busy_states_are_the_running_or_waiting_exchange(void) {
        static const struct {
                NTSClientState state;
                bool busy;
        } table[] = {
                { NTS_CLIENT_IDLE, false },
                { NTS_CLIENT_POOL_WAIT, true },
                { NTS_CLIENT_RESOLVING, true },
                { NTS_CLIENT_KEY_EXCHANGE, true },
                { NTS_CLIENT_READY, false },
                { NTS_CLIENT_BACKING_OFF, false },
        };

        ASSERT_EQ(ELEMENTSOF(table), (size_t) _NTS_CLIENT_STATE_MAX);
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                ASSERT_EQ(nts_client_state_busy(table[i].state), table[i].busy);
}

static void test_every_state_has_a_distinct_name(void) {
        for (NTSClientState s = 0; s < _NTS_CLIENT_STATE_MAX; s++) {
                ASSERT_TRUE(nts_client_state_to_string(s));
                for (NTSClientState t = 0; t < s; t++)
                        ASSERT_FALSE(streq(nts_client_state_to_string(s), nts_client_state_to_string(t)));
        }
        ASSERT_STREQ(nts_client_state_to_string(NTS_CLIENT_KEY_EXCHANGE), "key-exchange");
        ASSERT_TRUE(nts_client_state_to_string(_NTS_CLIENT_STATE_MAX) == NULL);
        ASSERT_TRUE(nts_client_state_to_string(_NTS_CLIENT_STATE_INVALID) == NULL);
}

TEST_MAIN(TEST_CASE(test_every_listed_transition_is_allowed_and_no_other),
          TEST_CASE(test_keys_come_only_from_an_exchange_or_the_state_file),
          TEST_CASE(test_every_state_may_back_off),
          TEST_CASE(test_out_of_range_states_are_refused),
          TEST_CASE(test_busy_states_are_the_running_or_waiting_exchange),
          TEST_CASE(test_every_state_has_a_distinct_name));
