/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The policy over a set of several (docs/ARCHITECTURE.md, "Several sources"), driven through
 * policy_on_event() with fake sources (policy-test-util.h) as the manager drives it: samples are
 * judged, the clock is steered by a majority of the servers in use and never by a falseticker, a
 * silent source keeps its place in the vote until a spare that agrees takes it, a server that
 * refuses service gives its place to the next one listed (a pool's member to the pool's next),
 * and one server listed twice votes once. Each case asserts the PolicyDecision and what the set says of each source. */

#include "policy-test-util.h"
#include "test-util.h"

#define MSEC FAKE_MSEC
#define SEC FAKE_SEC

static void start(PolicyFixture *fx) {
        PolicyDecision d = {};

        policy_start(&fx->pol, /* nts= */ true, /* fallback= */ false, /* backward_floor_nsec= */ 0, &d);
        policy_fixture_keep(fx, &d);
        ASSERT_TRUE(d.polling);
        ASSERT_FALSE(d.steer);
        ASSERT_EQ(policy_running(&fx->pol), POLICY_SEVERAL);
}

static void event(PolicyFixture *fx, size_t i, SourceEvent e, PolicyDecision *d) {
        *d = (PolicyDecision) {};
        policy_on_event(&fx->pol, fake_source(&fx->fakes[i]), e, d);
        policy_fixture_keep(fx, d);
}

/* Source i's first request went out: the set learns which server it is. */
static void address(PolicyFixture *fx, size_t i) {
        PolicyDecision d;

        event(fx, i, SOURCE_EVENT_ADDRESS, &d);
        ASSERT_FALSE(d.steer);
}

static void answer(PolicyFixture *fx, size_t i, int64_t offset_nsec, PolicyDecision *d) {
        fake_answer(&fx->fakes[i], offset_nsec, /* delayed= */ false);
        event(fx, i, SOURCE_EVENT_SAMPLE, d);
}

static void fail(PolicyFixture *fx, size_t i, bool refused, PolicyDecision *d) {
        fake_fail(&fx->fakes[i], refused);
        event(fx, i, SOURCE_EVENT_FAILED, d);
}

/* The manager followed d (observe mode: the clock did not move). */
static void steered(PolicyFixture *fx, const PolicyDecision *d) {
        PolicyDecision next = {};

        ASSERT_TRUE(d->steer);
        policy_steered(&fx->pol, d, 0, &next);
        policy_fixture_keep(fx, &next);
}

static const char *verdict(PolicyFixture *fx, size_t i) {
        return policy_verdict(&fx->pol, fake_source(&fx->fakes[i])) ?: "(not in the set)";
}

static void test_two_of_three_agreeing_steer_the_clock(void) {
        PolicyFixture fx;
        PolicyDecision d;

        policy_fixture_init(&fx, 3, 0);
        for (int s = 0; s < 3; s++)
                policy_fixture_name(&fx, s, -1, false);
        start(&fx);
        ASSERT_EQ(fx.makes, 3U);
        for (size_t i = 0; i < 3; i++) {
                ASSERT_EQ(fx.fakes[i].starts, 1U);
                address(&fx, i);
        }

        /* One of three is no majority. */
        answer(&fx, 0, 1 * MSEC, &d);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(fx.pol.selected == NULL);

        answer(&fx, 1, 2 * MSEC, &d);
        ASSERT_TRUE(d.steer);
        ASSERT_TRUE(d.select);
        ASSERT_EQ(d.steer_agree, 2U);
        ASSERT_STREQ(d.agreement, ", 2 of 3 NTS sources agree");
        ASSERT_FALSE(d.adjustment.step);
        ASSERT_TRUE(d.adjustment.offset_nsec >= 1 * MSEC && d.adjustment.offset_nsec <= 2 * MSEC);
        ASSERT_TRUE(d.steer_authenticated);
        ASSERT_TRUE(fx.pol.selected == fake_source(&fx.fakes[0]) || fx.pol.selected == fake_source(&fx.fakes[1]));
        ASSERT_STREQ(d.server, fake_name(fx.pol.selected));
        ASSERT_STREQ(verdict(&fx, 2), "unusable");
        steered(&fx, &d);

        /* The third agrees too; nothing is a falseticker. */
        answer(&fx, 2, 1500 * 1000, &d);
        ASSERT_STREQ(verdict(&fx, 2), "truechimer");
        ASSERT_NOT_CONTAINS(fx.nts_status, "Falseticker");
        for (size_t i = 0; i < 3; i++)
                ASSERT_FALSE(fx.fakes[i].unused);
        policy_fixture_done(&fx);
}

static void test_a_falseticker_is_named_and_never_selected(void) {
        PolicyFixture fx;
        PolicyDecision d;
        bool steered_once = false;

        policy_fixture_init(&fx, 4, 0);
        for (int s = 0; s < 4; s++)
                policy_fixture_name(&fx, s, -1, s == 3);
        start(&fx);
        for (size_t i = 0; i < 4; i++)
                address(&fx, i);

        /* The liar answers first, an hour ahead: alone it is no majority. */
        answer(&fx, 3, 3600 * SEC, &d);
        ASSERT_FALSE(d.steer);
        for (size_t i = 0; i < 3; i++) {
                answer(&fx, i, (int64_t) (i + 1) * MSEC, &d);
                ASSERT_TRUE(fx.pol.selected != fake_source(&fx.fakes[3]));
                if (d.steer) {
                        ASSERT_TRUE(d.adjustment.offset_nsec > 0 && d.adjustment.offset_nsec < 10 * MSEC);
                        ASSERT_NOT_CONTAINS(d.server, "s3.");
                        steered(&fx, &d);
                        steered_once = true;
                }
        }
        ASSERT_TRUE(steered_once);
        ASSERT_STREQ(verdict(&fx, 3), "falseticker");
        ASSERT_TRUE(fx.fakes[3].unused);
        ASSERT_FALSE(fx.fakes[0].unused);
        ASSERT_CONTAINS(fx.nts_status, "Falseticker: s3.example (+3600.000000 s)");
        policy_fixture_done(&fx);
}

static void test_silent_sources_stay_counted(void) {
        PolicyFixture fx;
        PolicyDecision d;

        policy_fixture_init(&fx, 4, 0);
        for (int s = 0; s < 4; s++)
                policy_fixture_name(&fx, s, -1, false);
        start(&fx);
        for (size_t i = 0; i < 4; i++)
                address(&fx, i);

        /* Two of four fail: the two that answer are no majority of the four in use. */
        fail(&fx, 0, false, &d);
        ASSERT_FALSE(d.steer);
        fail(&fx, 1, false, &d);
        answer(&fx, 2, 1 * MSEC, &d);
        ASSERT_FALSE(d.steer);
        answer(&fx, 3, 1 * MSEC, &d);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(fx.pol.selected == NULL);
        ASSERT_CONTAINS(fx.nts_status, "2 of 4 NTS servers failing: s0.example (no reply), s1.example (no reply)");
        ASSERT_TRUE(source_set_find(&fx.pol.set, fake_source(&fx.fakes[0])));

        /* One of them answers again: three of four. */
        answer(&fx, 0, 2 * MSEC, &d);
        ASSERT_TRUE(d.steer);
        ASSERT_STREQ(d.agreement, ", 3 of 4 NTS sources agree");
        policy_fixture_done(&fx);
}

static void test_a_spare_that_agrees_takes_a_silent_source_s_place(void) {
        Source *silent, *spare;
        PolicyFixture fx;
        PolicyDecision d;
        bool promoted = false;

        policy_fixture_init(&fx, 3, 0);
        for (int s = 0; s < 4; s++)
                policy_fixture_name(&fx, s, -1, false);
        start(&fx);
        ASSERT_EQ(fx.makes, 3U);
        for (size_t i = 0; i < 3; i++)
                address(&fx, i);
        silent = fake_source(&fx.fakes[0]);
        spare = fake_source(&fx.fakes[3]);

        /* All three answer; then source 0 falls silent: after its third failure in a row the
         * spare is tried on probation. */
        for (size_t i = 0; i < 3; i++) {
                answer(&fx, i, 1 * MSEC, &d);
                if (d.steer)
                        steered(&fx, &d);
        }
        ASSERT_STREQ(verdict(&fx, 0), "selected");
        for (unsigned k = 0; k < 3; k++) {
                ASSERT_FALSE(source_set_spare_for(&fx.pol.set, silent));
                fail(&fx, 0, false, &d);
        }
        ASSERT_EQ(fx.makes, 4U);
        ASSERT_EQ(fx.fakes[3].starts, 1U);
        ASSERT_TRUE(source_set_spare_for(&fx.pol.set, silent) == spare);
        ASSERT_TRUE(source_set_find(&fx.pol.set, spare)->replaces == silent);
        address(&fx, 3);

        /* On probation it adds no vote: the two others are the majority of three. It takes the
         * place once it agrees with them: at once, or after the step its answer allowed. */
        for (unsigned round = 0; round < 3 && !promoted; round++)
                for (size_t i = 1; i < 4 && !promoted; i++) {
                        fake_answer(&fx.fakes[i], 1 * MSEC, /* delayed= */ false);
                        /* Further away than the others: its interval holds theirs. */
                        if (i == 3)
                                fx.fakes[i].sample.ntp.delay_nsec = 40 * MSEC;
                        event(&fx, i, SOURCE_EVENT_SAMPLE, &d);
                        if (d.steer) {
                                ASSERT_EQ(d.steer_agree, 2U);
                                steered(&fx, &d);
                        }
                        promoted = !source_set_find(&fx.pol.set, silent);
                }
        ASSERT_TRUE(promoted);
        ASSERT_TRUE(source_set_find(&fx.pol.set, silent) == NULL);
        ASSERT_TRUE(source_set_find(&fx.pol.set, spare)->replaces == NULL);
        ASSERT_EQ(fx.fakes[0].stops, 1U);
        ASSERT_EQ(fx.pol.set.n_entries, 3U);

        /* Three of three again. */
        answer(&fx, 1, 1 * MSEC, &d);
        answer(&fx, 2, 1 * MSEC, &d);
        answer(&fx, 3, 1 * MSEC, &d);
        ASSERT_TRUE(streq(verdict(&fx, 3), "selected") || streq(verdict(&fx, 3), "truechimer"));
        ASSERT_NOT_CONTAINS(fx.nts_status, "failing");
        ASSERT_STREQ(verdict(&fx, 0), "(not in the set)");
        policy_fixture_done(&fx);
}

static void test_a_server_that_refuses_service_gives_its_place_away(void) {
        PolicyFixture fx;
        PolicyDecision d;

        policy_fixture_init(&fx, 3, 0);
        for (int s = 0; s < 4; s++)
                policy_fixture_name(&fx, s, -1, false);
        start(&fx);
        for (size_t i = 0; i < 3; i++)
                address(&fx, i);

        fail(&fx, 1, /* refused= */ true, &d);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(source_set_find(&fx.pol.set, fake_source(&fx.fakes[1])) == NULL);
        ASSERT_TRUE(source_set_find(&fx.pol.set, fake_source(&fx.fakes[3])));
        ASSERT_EQ(fx.fakes[3].starts, 1U);
        ASSERT_EQ(fx.pol.set.n_entries, 3U);
        address(&fx, 3);

        answer(&fx, 0, 1 * MSEC, &d);
        answer(&fx, 3, 1 * MSEC, &d);
        ASSERT_TRUE(d.steer);
        ASSERT_STREQ(d.agreement, ", 2 of 3 NTS sources agree");
        ASSERT_CONTAINS(fx.nts_status, "s1.example (refused service)");
        policy_fixture_done(&fx);
}

static void test_a_server_listed_twice_votes_once(void) {
        PolicyFixture fx;
        PolicyDecision d;

        /* A liar listed twice, and two honest servers: without one vote per server the liar
         * would have half the votes. */
        policy_fixture_init(&fx, 4, 0);
        policy_fixture_name(&fx, 0, -1, true);
        policy_fixture_name(&fx, 0, -1, true);
        policy_fixture_name(&fx, 1, -1, false);
        policy_fixture_name(&fx, 2, -1, false);
        start(&fx);
        for (size_t i = 0; i < 4; i++)
                address(&fx, i);
        ASSERT_STREQ(verdict(&fx, 1), "duplicate");

        answer(&fx, 0, -100 * SEC, &d);
        answer(&fx, 1, -100 * SEC, &d);
        ASSERT_FALSE(d.steer);
        answer(&fx, 2, 1 * MSEC, &d);
        ASSERT_FALSE(d.steer);
        answer(&fx, 3, 2 * MSEC, &d);
        ASSERT_TRUE(d.steer);
        ASSERT_STREQ(d.agreement, ", 2 of 3 NTS sources agree");
        ASSERT_TRUE(d.adjustment.offset_nsec > 0 && d.adjustment.offset_nsec < 10 * MSEC);
        ASSERT_STREQ(verdict(&fx, 0), "falseticker");
        ASSERT_STREQ(verdict(&fx, 1), "duplicate");
        policy_fixture_done(&fx);
}

static void test_a_claimed_address_takes_no_vote_away(void) {
        PolicyFixture fx;
        PolicyDecision d;

        /* The liar's key exchange names server 1's NTP address: a conflict, both keep their
         * votes, and the liar is a falseticker of three. */
        policy_fixture_init(&fx, 3, 0);
        policy_fixture_name(&fx, 0, 1, true);
        policy_fixture_name(&fx, 1, -1, false);
        policy_fixture_name(&fx, 2, -1, false);
        start(&fx);
        for (size_t i = 0; i < 3; i++)
                address(&fx, i);
        ASSERT_STREQ(verdict(&fx, 1), "unusable");

        answer(&fx, 0, 50 * SEC, &d);
        answer(&fx, 1, 1 * MSEC, &d);
        ASSERT_FALSE(d.steer);
        answer(&fx, 2, 1 * MSEC, &d);
        ASSERT_TRUE(d.steer);
        ASSERT_STREQ(d.agreement, ", 2 of 3 NTS sources agree");
        ASSERT_STREQ(verdict(&fx, 0), "falseticker");
        ASSERT_CONTAINS(fx.nts_status, "name one NTP address 192.0.2.2");
        policy_fixture_done(&fx);
}

/* The set finds a pool's member through the lists (PolicyListOps.find_source): a member that
 * refuses service is the pool's to replace, and a server listed after the pool does not take its
 * place. */
static void test_a_pool_member_that_refuses_service_is_replaced_by_its_pool(void) {
        PolicyFixture fx;
        PolicyDecision d;
        FakePool *pool;

        policy_fixture_init(&fx, 3, 0);
        pool = &fx.pools[policy_fixture_pool(&fx, 2, 10)];
        for (int s = 0; s < 3; s++)
                policy_fixture_name(&fx, s, -1, false);
        start(&fx);
        ASSERT_TRUE(pool->started);
        ASSERT_EQ(fx.pol.set.n_entries, 3U);
        ASSERT_EQ(pool->members[0].starts, 1U);
        ASSERT_EQ(fx.fakes[3].starts, 0U);
        for (size_t i = 1; i < 3; i++)
                address(&fx, i);
        d = (PolicyDecision) {};
        policy_on_event(&fx.pol, fake_source(&pool->members[0]), SOURCE_EVENT_ADDRESS, &d);

        fake_fail(&pool->members[0], /* refused= */ true);
        d = (PolicyDecision) {};
        policy_on_event(&fx.pol, fake_source(&pool->members[0]), SOURCE_EVENT_FAILED, &d);
        policy_fixture_keep(&fx, &d);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(source_set_find(&fx.pol.set, fake_source(&pool->members[0])) == NULL);
        ASSERT_TRUE(source_set_find(&fx.pol.set, fake_source(&pool->members[1])));
        ASSERT_EQ(pool->members[1].starts, 1U);
        ASSERT_EQ(fx.fakes[3].starts, 0U);
        ASSERT_EQ(fx.pol.set.n_entries, 3U);

        fake_answer(&pool->members[1], 1 * MSEC, /* delayed= */ false);
        d = (PolicyDecision) {};
        policy_on_event(&fx.pol, fake_source(&pool->members[1]), SOURCE_EVENT_SAMPLE, &d);
        ASSERT_FALSE(d.steer);
        answer(&fx, 1, 1 * MSEC, &d);
        ASSERT_TRUE(d.steer);
        ASSERT_STREQ(d.agreement, ", 2 of 3 NTS sources agree");
        policy_fixture_done(&fx);
}

TEST_MAIN(TEST_CASE(test_two_of_three_agreeing_steer_the_clock),
          TEST_CASE(test_a_falseticker_is_named_and_never_selected),
          TEST_CASE(test_silent_sources_stay_counted),
          TEST_CASE(test_a_spare_that_agrees_takes_a_silent_source_s_place),
          TEST_CASE(test_a_server_that_refuses_service_gives_its_place_away),
          TEST_CASE(test_a_server_listed_twice_votes_once),
          TEST_CASE(test_a_claimed_address_takes_no_vote_away),
          TEST_CASE(test_a_pool_member_that_refuses_service_is_replaced_by_its_pool));
