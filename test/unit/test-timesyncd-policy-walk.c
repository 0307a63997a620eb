/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The walk of a set of one (timesyncd-policy-walk.c: one NTS server at a time, NTSMaxSources=1
 * here), driven through policy_start() and policy_on_event() with fake sources and fake server
 * lists (policy-test-util.h) as the manager drives it: a failing server hands over to the next
 * usable one at once, every server tried once means a wait of ConnectionRetrySec=, every server
 * refusing service means refused, every server backing off means a wait until the first may try
 * again, a server whose key exchange cannot start and that backs off is passed over while one
 * that cannot start and stays usable means a wait, and with nothing configured the set idles. Each case asserts the PolicyDecision and which fakes were started. */

#include "policy-test-util.h"
#include "test-util.h"

static void init(PolicyFixture *fx, size_t n_names) {
        policy_fixture_init(fx, /* max_sources= */ 1, /* min_agreeing= */ 1);
        for (size_t i = 0; i < n_names; i++)
                (void) policy_fixture_name(fx, (int) i, -1, false);
}

/* Fake i has its source, as when an earlier walk used its name. */
static void used_before(PolicyFixture *fx, size_t i) {
        ServerName *n = fx->servers[SERVER_NTS];

        ASSERT_TRUE(i < fx->n_names);
        for (size_t k = 0; k < i; k++)
                n = n->names_next;
        ASSERT_OK(fake_make(n, &fx->pol.ctx));
}

static void start(PolicyFixture *fx, bool fallback, PolicyDecision *d) {
        *d = (PolicyDecision) {};
        policy_start(&fx->pol, /* nts= */ true, fallback, /* backward_floor_nsec= */ 0, d);
        policy_fixture_keep(fx, d);
        ASSERT_EQ(policy_running(&fx->pol), POLICY_ONE);
}

/* Fake i fails (refused: for good) and says so. */
static void fail(PolicyFixture *fx, size_t i, bool refused, PolicyDecision *d) {
        fake_fail(&fx->fakes[i], refused);
        *d = (PolicyDecision) {};
        policy_on_event(&fx->pol, fake_source(&fx->fakes[i]), SOURCE_EVENT_FAILED, d);
        policy_fixture_keep(fx, d);
}

static void assert_polls(PolicyFixture *fx, const PolicyDecision *d, size_t i) {
        ASSERT_TRUE(d->polling);
        ASSERT_FALSE(d->wait || d->refused || d->idle);
        ASSERT_TRUE(d->select);
        ASSERT_TRUE(fx->pol.selected == fake_source(&fx->fakes[i]));
}

static void assert_waits(PolicyFixture *fx, const PolicyDecision *d, usec_t until) {
        ASSERT_TRUE(d->wait);
        ASSERT_EQ(d->wait_until, until);
        ASSERT_FALSE(d->polling || d->refused || d->idle);
        ASSERT_TRUE(d->nts_none);
        ASSERT_TRUE(fx->pol.selected == NULL);
}

/* s1 backs off after failed key exchanges: when s0 fails, s2 takes over at once (no wait), and
 * s0 stops and leaves the set. */
static void test_failing_server_hands_over_to_the_next_usable_one_at_once(void) {
        PolicyFixture fx;
        PolicyDecision d;

        init(&fx, 3);
        used_before(&fx, 1);
        fx.fakes[1].retry_after = fake_boottime_usec + 300 * USEC_PER_SEC;

        start(&fx, false, &d);
        assert_polls(&fx, &d, 0);
        ASSERT_EQ(fx.fakes[0].starts, 1U);

        fail(&fx, 0, /* refused= */ false, &d);
        assert_polls(&fx, &d, 2);
        ASSERT_TRUE(d.sources_changed);
        ASSERT_TRUE(fx.fakes[0].stops > 0);
        ASSERT_EQ(fx.fakes[1].starts, 0U);
        ASSERT_EQ(fx.fakes[2].starts, 1U);
        ASSERT_TRUE(policy_verdict(&fx.pol, fake_source(&fx.fakes[0])) == NULL);
        policy_fixture_done(&fx);
}

/* When the last server fails and the first is usable again, the walk does not go round at once:
 * the manager waits ConnectionRetrySec= (wait_until 0) and starts the set again, which begins
 * with the first server. */
static void test_every_server_tried_once_means_a_wait_before_trying_again(void) {
        PolicyFixture fx;
        PolicyDecision d;

        init(&fx, 2);
        start(&fx, false, &d);
        assert_polls(&fx, &d, 0);
        fail(&fx, 0, false, &d);
        assert_polls(&fx, &d, 1);

        fail(&fx, 1, false, &d);
        assert_waits(&fx, &d, 0);
        ASSERT_TRUE(d.notify);
        ASSERT_STREQ(d.status, "No server answered, retrying.");
        ASSERT_EQ(fx.fakes[0].starts, 1U);
        ASSERT_TRUE(fx.fakes[1].stops > 0);

        start(&fx, false, &d);
        assert_polls(&fx, &d, 0);
        ASSERT_EQ(fx.fakes[0].starts, 2U);
        policy_fixture_done(&fx);
}

/* Every NTS server refused service (kiss code DENY or RSTR): none is asked again, no wait. */
static void test_every_nts_server_refusing_service_is_refused(void) {
        PolicyFixture fx;
        PolicyDecision d;

        init(&fx, 2);
        start(&fx, false, &d);
        fail(&fx, 0, /* refused= */ true, &d);
        assert_polls(&fx, &d, 1);
        ASSERT_FALSE(d.refused);

        fail(&fx, 1, true, &d);
        ASSERT_TRUE(d.refused);
        ASSERT_FALSE(d.polling || d.wait || d.idle);
        ASSERT_TRUE(fx.pol.selected == NULL);
        ASSERT_EQ(fx.fakes[0].starts, 1U);
        ASSERT_EQ(fx.fakes[1].starts, 1U);
        policy_fixture_done(&fx);
}

/* Every NTS server backs off: the wait lasts until the first of them may try again (s1, not the
 * one that failed last), STATUS= says so (FallbackNTS='s sentence for the fallback list), and
 * NTSStatus says why a server that never answered failed. */
static void test_every_nts_server_backing_off_waits_for_the_earliest_retry(void) {
        for (unsigned fallback = 0; fallback < 2; fallback++) {
                usec_t t0 = 1000 * USEC_PER_SEC;
                PolicyFixture fx;
                PolicyDecision d;

                log_info("fallback=%u", fallback);
                init(&fx, 2);
                used_before(&fx, 1);
                fx.fakes[1].retry_after = t0 + 120 * USEC_PER_SEC;
                start(&fx, fallback, &d);
                assert_polls(&fx, &d, 0);

                fx.fakes[0].retry_after = t0 + 300 * USEC_PER_SEC;
                fx.fakes[0].silent = true;
                fail(&fx, 0, false, &d);
                assert_waits(&fx, &d, t0 + 120 * USEC_PER_SEC);
                ASSERT_TRUE(d.notify);
                ASSERT_STREQ(d.status, fallback ? FALLBACK_NTS_UNREACHABLE ". Retrying." :
                                                  "No NTS server usable, retrying.");
                ASSERT_TRUE(d.set_nts_status);
                ASSERT_STREQ(d.nts_status, "s0.example: no reply");
                ASSERT_EQ(fx.fakes[1].starts, 0U);
                policy_fixture_done(&fx);
        }
}

/* A server that answered once says nothing new in NTSStatus when it fails: its key exchange
 * said why already. */
static void test_failure_of_a_server_that_answered_keeps_nts_status(void) {
        PolicyFixture fx;
        PolicyDecision d;

        init(&fx, 2);
        start(&fx, false, &d);
        fail(&fx, 0, false, &d);
        assert_polls(&fx, &d, 1);
        ASSERT_FALSE(d.set_nts_status);
        policy_fixture_done(&fx);
}

/* s0's key exchange cannot start (-EAGAIN) and its client backs off: the walk passes over it to
 * s1 in the same start, without a wait. */
static void test_server_whose_start_backs_off_is_skipped(void) {
        PolicyFixture fx;
        PolicyDecision d;

        init(&fx, 3);
        fx.fakes[0].start_error = -EAGAIN;
        fx.fakes[0].start_backoff_usec = 60 * USEC_PER_SEC;
        start(&fx, false, &d);
        assert_polls(&fx, &d, 1);
        ASSERT_EQ(fx.fakes[0].starts, 1U);
        ASSERT_EQ(fx.fakes[1].starts, 1U);
        ASSERT_EQ(fx.fakes[2].starts, 0U);
        ASSERT_TRUE(policy_verdict(&fx.pol, fake_source(&fx.fakes[0])) == NULL);
        policy_fixture_done(&fx);
}

/* s0 cannot start and is still usable (out of descriptors, or -EAGAIN from a client that does
 * not back off): the walk does not move past it, the manager waits ConnectionRetrySec= and
 * tries it again. */
static void test_server_that_cannot_start_but_is_usable_means_a_wait(void) {
        static const int errors[] = { -EMFILE, -EAGAIN };

        for (size_t i = 0; i < ELEMENTSOF(errors); i++) {
                PolicyFixture fx;
                PolicyDecision d;

                log_info("start returns %d", errors[i]);
                init(&fx, 2);
                fx.fakes[0].start_error = errors[i];
                start(&fx, false, &d);
                ASSERT_TRUE(d.wait);
                ASSERT_EQ(d.wait_until, 0U);
                ASSERT_FALSE(d.polling || d.refused || d.idle);
                ASSERT_EQ(fx.fakes[0].starts, 1U);
                ASSERT_EQ(fx.fakes[1].starts, 0U);

                fx.fakes[0].start_error = 0;
                start(&fx, false, &d);
                assert_polls(&fx, &d, 0);
                ASSERT_EQ(fx.fakes[0].starts, 2U);
                policy_fixture_done(&fx);
        }
}

/* No server at all, plain NTP: the set says so and asks the manager to idle. */
static void test_nothing_configured_idles(void) {
        PolicyFixture fx;
        PolicyDecision d = {};

        init(&fx, 0);
        policy_start(&fx.pol, /* nts= */ false, false, 0, &d);
        ASSERT_EQ(policy_running(&fx.pol), POLICY_ONE);
        ASSERT_STREQ(d.idle, "no usable server configured");
        ASSERT_TRUE(d.notify);
        ASSERT_STREQ(d.status, "Idle.");
        ASSERT_FALSE(d.polling || d.wait || d.refused);
        ASSERT_TRUE(fx.pol.selected == NULL);
        policy_fixture_done(&fx);
}

TEST_MAIN(TEST_CASE(test_failing_server_hands_over_to_the_next_usable_one_at_once),
          TEST_CASE(test_every_server_tried_once_means_a_wait_before_trying_again),
          TEST_CASE(test_every_nts_server_refusing_service_is_refused),
          TEST_CASE(test_every_nts_server_backing_off_waits_for_the_earliest_retry),
          TEST_CASE(test_failure_of_a_server_that_answered_keeps_nts_status),
          TEST_CASE(test_server_whose_start_backs_off_is_skipped),
          TEST_CASE(test_server_that_cannot_start_but_is_usable_means_a_wait),
          TEST_CASE(test_nothing_configured_idles));
