/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The transitions of a source's state (timesyncd-source-state.c): the table below is the whole
 * list of allowed ones, each with the path in timesyncd-source.c that takes it; every pair of
 * states not in it must be refused. What a source does in each state, event by event, is
 * test-timesyncd-source-state's. */

#include "tests.h"
#include "timesyncd-source-state.h"
#include "transition-test-util.h"

static const TestTransition allowed[] = {
        { SOURCE_IDLE, SOURCE_IDLE, "made (source_new()), or stopped again" },
        { SOURCE_IDLE, SOURCE_RESOLVING, "start: a plain server, or NTS keys at hand" },
        { SOURCE_IDLE, SOURCE_KEY_EXCHANGE, "start: the NTS client runs a key exchange first" },
        { SOURCE_IDLE, SOURCE_BACKING_OFF, "keep trying: cannot start now" },
        { SOURCE_KEY_EXCHANGE, SOURCE_IDLE, "stop" },
        { SOURCE_KEY_EXCHANGE, SOURCE_KEY_EXCHANGE, "the exchange ended, the client runs another" },
        { SOURCE_KEY_EXCHANGE, SOURCE_RESOLVING, "keys: the NTP server they name" },
        { SOURCE_KEY_EXCHANGE, SOURCE_BACKING_OFF, "the exchange failed, or resolving cannot start" },
        { SOURCE_RESOLVING, SOURCE_IDLE, "stop" },
        { SOURCE_RESOLVING, SOURCE_KEY_EXCHANGE, "no cookie for the first request, or a pool member in use" },
        { SOURCE_RESOLVING, SOURCE_REPLY_WAIT, "resolved: the first request" },
        { SOURCE_RESOLVING, SOURCE_BACKING_OFF, "cannot resolve, no usable address" },
        { SOURCE_POLL_WAIT, SOURCE_IDLE, "stop" },
        { SOURCE_POLL_WAIT, SOURCE_KEY_EXCHANGE, "no cookie for the request, or keys too old" },
        { SOURCE_POLL_WAIT, SOURCE_POLL_WAIT, "new poll limits, a clock step: a new time" },
        { SOURCE_POLL_WAIT, SOURCE_REPLY_WAIT, "the next request" },
        { SOURCE_REPLY_WAIT, SOURCE_IDLE, "stop (from the sample's report too)" },
        { SOURCE_REPLY_WAIT, SOURCE_KEY_EXCHANGE, "a NAK, a bootstrap's sample used, the next address: no cookie" },
        { SOURCE_REPLY_WAIT, SOURCE_POLL_WAIT, "a reply: a sample, kiss code RATE, no time, sent before a step" },
        { SOURCE_REPLY_WAIT, SOURCE_REPLY_WAIT, "the next address" },
        { SOURCE_REPLY_WAIT, SOURCE_BACKING_OFF, "no address left, a pool member refused service" },
        { SOURCE_REPLY_WAIT, SOURCE_FAILED, "kiss code DENY or RSTR" },
        { SOURCE_BACKING_OFF, SOURCE_IDLE, "stop" },
        { SOURCE_BACKING_OFF, SOURCE_KEY_EXCHANGE, "the retry time came: a key exchange first" },
        { SOURCE_BACKING_OFF, SOURCE_RESOLVING, "the retry time came" },
        { SOURCE_BACKING_OFF, SOURCE_BACKING_OFF, "cannot start yet, or a retry asked now" },
};

static bool transition_allowed(int from, int to) {
        return source_state_transition_allowed(from, to);
}

static const char *state_name(int state) {
        return source_state_to_string(state);
}

static void test_every_listed_transition_is_allowed_and_no_other(void) {
        test_transitions_are_exactly(allowed, ELEMENTSOF(allowed), _SOURCE_STATE_MAX, transition_allowed, state_name);
}

static void test_only_a_reply_leads_to_failed_and_nothing_leaves_it(void) {
        for (SourceState s = 0; s < _SOURCE_STATE_MAX; s++) {
                ASSERT_EQ(source_state_transition_allowed(s, SOURCE_FAILED), s == SOURCE_REPLY_WAIT);
                ASSERT_FALSE(source_state_transition_allowed(SOURCE_FAILED, s));
        }
}

static void test_every_state_but_failed_may_be_stopped(void) {
        for (SourceState s = 0; s < _SOURCE_STATE_MAX; s++)
                ASSERT_EQ(source_state_transition_allowed(s, SOURCE_IDLE), s != SOURCE_FAILED);
}

static void test_requests_go_out_only_after_resolving_or_a_request(void) {
        for (SourceState s = 0; s < _SOURCE_STATE_MAX; s++)
                ASSERT_EQ(source_state_transition_allowed(s, SOURCE_REPLY_WAIT),
                          IN_SET(s, SOURCE_RESOLVING, SOURCE_POLL_WAIT, SOURCE_REPLY_WAIT));
}

static void test_out_of_range_states_are_refused(void) {
        ASSERT_FALSE(source_state_transition_allowed(_SOURCE_STATE_INVALID, SOURCE_IDLE));
        ASSERT_FALSE(source_state_transition_allowed(SOURCE_IDLE, _SOURCE_STATE_MAX));
        ASSERT_FALSE(source_state_transition_allowed(_SOURCE_STATE_MAX, SOURCE_IDLE));
}

static void test_every_state_has_a_distinct_name(void) {
        for (SourceState s = 0; s < _SOURCE_STATE_MAX; s++) {
                ASSERT_TRUE(source_state_to_string(s));
                for (SourceState t = 0; t < s; t++)
                        ASSERT_FALSE(streq(source_state_to_string(s), source_state_to_string(t)));
        }
        ASSERT_STREQ(source_state_to_string(SOURCE_REPLY_WAIT), "reply-wait");
        ASSERT_TRUE(source_state_to_string(_SOURCE_STATE_MAX) == NULL);
        ASSERT_TRUE(source_state_to_string(_SOURCE_STATE_INVALID) == NULL);
}

TEST_MAIN(TEST_CASE(test_every_listed_transition_is_allowed_and_no_other),
          TEST_CASE(test_only_a_reply_leads_to_failed_and_nothing_leaves_it),
          TEST_CASE(test_every_state_but_failed_may_be_stopped),
          TEST_CASE(test_requests_go_out_only_after_resolving_or_a_request),
          TEST_CASE(test_out_of_range_states_are_refused),
          TEST_CASE(test_every_state_has_a_distinct_name));
