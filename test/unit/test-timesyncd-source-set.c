/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <string.h>

#include "tests.h"
#include "timesyncd-source-set.h"

#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)
#define NOW (1000 * USEC_PER_SEC)

/* Stand-ins for the caller's sources: only their addresses matter. */
static int sources[NTP_SELECT_MAX];
#define SRC(i) ((void *) &sources[i])

static SourceSetPolicy policy(void) {
        return (SourceSetPolicy) {
                .root_distance_max_nsec = 5 * SEC,
                .now_boottime = NOW,
                .now_realtime_nsec = INT64_C(1800000000) * SEC,
                .backward_floor_nsec = INT64_C(1700000000) * SEC,
        };
}

/* A sample of offset with a root distance of about rd: half of it as delay, the rest as the
 * server's root dispersion, taken at `NOW - age`. */
static SourceSetSample sample(int64_t offset, int64_t rd, usec_t age) {
        SourceSetSample s = {
                .header = {
                        .leap = NTP_LEAP_NONE,
                        .stratum = 1,
                        .precision = -30,
                        .root_dispersion = ntp_short_from_nsec(rd / 2),
                },
                .ntp = { .offset_nsec = offset, .delay_nsec = rd },
                .boottime = NOW - age,
                .max_age = 64 * USEC_PER_SEC,
        };
        return s;
}

static SourceSet set_of(size_t n, const char *const *hosts) {
        SourceSet set = { .selected = SIZE_MAX, .preferred = SIZE_MAX };

        for (size_t i = 0; i < n; i++)
                ASSERT_OK(source_set_add(&set, SRC(i), hosts ? hosts[i] : "ntp.example"));
        return set;
}

static SourceSetDecision judge(SourceSet *set) {
        SourceSetPolicy p = policy();
        SourceSetDecision d;

        ASSERT_OK(source_set_select(set, &p, &d));
        return d;
}

static void assert_description(SourceSet *set, const SourceSetDecision *d, const char *expected) {
        char buf[256];

        source_set_describe(set, d, buf, sizeof buf);
        ASSERT_STREQ(buf, expected);
}

static void test_liar_listed_first_is_a_falseticker_and_the_rest_steer(void) {
        SourceSet set = set_of(4, NULL);
        SourceSetSample liar = sample(3600 * SEC, 1 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &liar);
        for (size_t i = 1; i < 4; i++) {
                SourceSetSample s = sample((int64_t) i * 100000, 1 * MSEC, 0);
                source_set_sample(&set, SRC(i), &s);
        }
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_TRUE(d.steer);
        ASSERT_TRUE(d.select.selected == 1);
        ASSERT_TRUE(llabs(d.select.offset_nsec) < 1 * MSEC);
        ASSERT_STREQ(source_set_verdict_string(&set, 0), "falseticker");
        ASSERT_STREQ(source_set_verdict_string(&set, 1), "selected");
        ASSERT_STREQ(source_set_verdict_string(&set, 2), "truechimer");
        assert_description(&set, &d, "3 of 4 NTS sources agree, 1 falseticker");
        source_set_done(&set);
}

/* The first to answer cannot decide alone: the others count as expected until they answer or
 * fail. */
static void test_first_answer_waits_for_the_sources_still_pending(void) {
        SourceSet set = set_of(4, NULL);
        SourceSetSample liar = sample(3600 * SEC, 1 * MSEC, 0), good = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &liar);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_TOO_FEW);
        ASSERT_FALSE(source_set_disagree(&d));
        assert_description(&set, &d, "1 of 4 NTS sources agree, 3 needed, waiting for 3 more");

        /* The other three fail: they still count, and the one that answers cannot decide. */
        for (size_t i = 1; i < 4; i++)
                source_set_failed(&set, SRC(i));
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(source_set_disagree(&d));
        assert_description(&set, &d, "Only 1 of 4 NTS sources agree, 3 needed (3 do not answer); clock left alone");

        /* One of them answers after all: now two disagree, and nothing moves. */
        source_set_sample(&set, SRC(1), &good);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(source_set_disagree(&d));
        assert_description(&set, &d, "2 NTS sources disagree by 3600 s; clock left alone");
        source_set_done(&set);
}

static void test_two_sources_an_hour_apart_leave_the_clock_alone(void) {
        SourceSet set = set_of(2, NULL);
        SourceSetSample a = sample(0, 1 * MSEC, 0), b = sample(3600 * SEC, 1 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &a);
        source_set_sample(&set, SRC(1), &b);
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_NO_MAJORITY);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(source_set_disagree(&d));
        ASSERT_STREQ(source_set_verdict_string(&set, 0), "undecided");
        assert_description(&set, &d, "2 NTS sources disagree by 3600 s; clock left alone");
        source_set_done(&set);
}

static void test_liar_50ms_off_is_a_falseticker(void) {
        SourceSet set = set_of(4, NULL);
        SourceSetDecision d;

        for (size_t i = 0; i < 4; i++) {
                SourceSetSample s = sample(i == 0 ? 50 * MSEC : (int64_t) i * 10000, 200000, 0);
                source_set_sample(&set, SRC(i), &s);
        }
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        ASSERT_STREQ(source_set_verdict_string(&set, 0), "falseticker");
        ASSERT_TRUE(llabs(d.select.offset_nsec) < 1 * MSEC);
        assert_description(&set, &d, "3 of 4 NTS sources agree, 1 falseticker");
        source_set_done(&set);
}

/* Each candidate steers once: the clock follows a new sample of the selected source, not the
 * same one again when another source answers. */
static void test_a_candidate_steers_once(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample s = sample(10 * MSEC, 1 * MSEC, 0);
        SourceSetDecision d;

        for (size_t i = 0; i < 3; i++)
                source_set_sample(&set, SRC(i), &s);
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        source_set_steered(&set);

        source_set_sample(&set, SRC(2), &s);
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_TRUE(d.select.selected == 0);
        ASSERT_FALSE(d.steer);

        source_set_sample(&set, SRC(0), &s);
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        source_set_done(&set);
}

/* A spike keeps the candidate before it and does not steer. */
static void test_spike_keeps_the_candidate_before_it(void) {
        SourceSet set = set_of(1, NULL);
        SourceSetSample s = sample(1 * MSEC, 1 * MSEC, 0), spike = sample(100 * MSEC, 1 * MSEC, 0);
        SourceSetDecision d;

        spike.spike = true;
        source_set_sample(&set, SRC(0), &s);
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        source_set_steered(&set);

        source_set_sample(&set, SRC(0), &spike);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(d.select.offset_nsec == 1 * MSEC);
        source_set_done(&set);
}

/* Our own step corrects every stored offset by the step; a slew widens older intervals by what
 * the kernel may have applied of it. */
static void test_own_step_corrects_and_slew_widens_stored_candidates(void) {
        SourceSet set = set_of(2, NULL);
        SourceSetSample a = sample(2 * SEC, 1 * MSEC, 0), b = sample(2 * SEC + 500000, 1 * MSEC, 0);
        SourceSetDecision d;
        int64_t before;

        source_set_sample(&set, SRC(0), &a);
        source_set_sample(&set, SRC(1), &b);
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        source_set_stepped(&set, d.select.offset_nsec);
        source_set_steered(&set);
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_TRUE(llabs(d.select.offset_nsec) < 1 * MSEC);
        ASSERT_FALSE(d.steer);

        before = set.entries[1].root_distance_nsec;
        source_set_slewed(&set, -300 * MSEC);
        d = judge(&set);
        ASSERT_TRUE(set.entries[1].root_distance_nsec == before + 300 * MSEC);
        /* A candidate taken after the slew is not widened. */
        source_set_sample(&set, SRC(0), &a);
        d = judge(&set);
        ASSERT_TRUE(set.entries[0].root_distance_nsec < 10 * MSEC);
        source_set_done(&set);
}

/* A large start: three sources agree on -100 ms, the clock steers and slews it out. Their
 * candidates are then older than a slew far larger than their root distance. */
static SourceSet set_after_a_large_slew(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample start = sample(-100 * MSEC, 25 * MSEC, 0);
        SourceSetDecision d;

        for (unsigned i = 0; i < 3; i++)
                source_set_sample(&set, SRC(i), &start);
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        source_set_steered(&set);
        source_set_slewed(&set, d.select.offset_nsec);
        return set;
}

/* The first rounds of a large start: a candidate measured before the clock was slewed by more
 * than its own root distance still bounds the selection, but its stale offset is not combined
 * into where the clock goes (it pulled the combination 10 ms towards the start's offset). */
static void test_candidate_older_than_a_large_slew_is_not_combined(void) {
        SourceSet set = set_after_a_large_slew();
        SourceSetSample a = sample(-2 * MSEC, 25 * MSEC, 0), b = sample(-1 * MSEC, 25 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &a);
        source_set_sample(&set, SRC(1), &b);
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_TRUE(set.entries[2].verdict == NTP_SELECT_TRUECHIMER);
        ASSERT_TRUE(d.steer);
        ASSERT_TRUE(d.n_current_agree == 2);
        ASSERT_TRUE(d.select.offset_nsec <= -1 * MSEC && d.select.offset_nsec >= -2 * MSEC);
        source_set_done(&set);
}

/* Held while the others' answers are from before a large slew: the status says they answered,
 * and why they do not count yet, rather than that they do not answer. */
static void test_held_by_answers_from_before_a_slew_says_so(void) {
        SourceSet set = set_after_a_large_slew();
        SourceSetSample a = sample(-2 * MSEC, 25 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &a);
        d = judge(&set);
        ASSERT_TRUE(d.held);
        ASSERT_TRUE(d.n_current_agree == 1);
        ASSERT_TRUE(d.n_before_slew == 2);
        assert_description(&set, &d, "Only 1 of 3 NTS sources answer and agree, 2 needed "
                           "(2 measured before the clock's last slew); clock left alone");
        source_set_done(&set);
}

/* A candidate older than its age limit still takes part in the intersection, but only
 * current ones make the quorum that moves the clock; one too distant takes no part. */
static void test_stale_candidate_agrees_but_cannot_steer(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample old = sample(0, 1 * MSEC, 65 * USEC_PER_SEC), fresh = sample(0, 1 * MSEC, 0),
                        far = sample(0, 6 * SEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &old);
        source_set_sample(&set, SRC(1), &fresh);
        source_set_sample(&set, SRC(2), &far);
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_TRUE(d.held);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(d.n_in_use == 3);
        ASSERT_TRUE(d.n_current_agree == 1);
        ASSERT_TRUE(set.selected == SIZE_MAX);
        ASSERT_TRUE(source_set_disagree(&d));
        ASSERT_STREQ(source_set_verdict_string(&set, 2), "unusable");
        assert_description(&set, &d, "Only 1 of 3 NTS sources answer and agree, 2 needed; clock left alone");
        source_set_done(&set);
}

/* A key-exchange pool's slot without a member is no server: it is not counted until its key
 * exchange names one, or it answers. */
static void test_vacant_pool_slot_does_not_count(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample s = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        source_set_vacant(&set, SRC(2), true);
        source_set_failed(&set, SRC(2));
        source_set_sample(&set, SRC(0), &s);
        source_set_sample(&set, SRC(1), &s);
        d = judge(&set);
        ASSERT_TRUE(d.n_in_use == 2);
        ASSERT_TRUE(d.steer);
        assert_description(&set, &d, "2 of 2 NTS sources agree");

        source_set_vacant(&set, SRC(2), false);
        d = judge(&set);
        ASSERT_TRUE(d.n_in_use == 3);
        assert_description(&set, &d, "2 of 3 NTS sources agree (1 does not answer)");
        source_set_done(&set);
}

/* A spare on probation for a silent source takes no part in the selection, and qualifies only
 * when it agrees with what the sources in use agree on without it. */
static void test_spare_takes_the_place_of_a_silent_source_only_when_it_agrees(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample good = sample(0, 1 * MSEC, 0), liar = sample(3600 * SEC, 1 * MSEC, 0);
        int liar_spare, good_spare;
        SourceSetDecision d;

        for (size_t i = 0; i < 3; i++)
                source_set_sample(&set, SRC(i), &good);
        source_set_failed(&set, SRC(0));
        ASSERT_TRUE(set.entries[0].silent == 1);

        ASSERT_OK(source_set_add_spare(&set, &liar_spare, "liar.example", SRC(0)));
        ASSERT_TRUE(source_set_spare_for(&set, SRC(0)) == &liar_spare);
        source_set_sample(&set, &liar_spare, &liar);
        d = judge(&set);
        ASSERT_TRUE(d.n_in_use == 3);
        ASSERT_TRUE(d.qualified == NULL);
        ASSERT_TRUE(d.steer);
        source_set_remove(&set, &liar_spare);

        ASSERT_OK(source_set_add_spare(&set, &good_spare, "good.example", SRC(0)));
        source_set_sample(&set, &good_spare, &good);
        d = judge(&set);
        ASSERT_TRUE(d.qualified == &good_spare);
        source_set_promote(&set, &good_spare);
        ASSERT_TRUE(source_set_find(&set, SRC(0)) == NULL);
        ASSERT_TRUE(set.n_entries == 3);
        d = judge(&set);
        ASSERT_TRUE(d.n_in_use == 3);
        ASSERT_TRUE(d.n_current_agree == 3);
        source_set_done(&set);
}

/* Four sources, one liar: while all answer the liar is a falseticker; when the replies of the
 * three honest ones are lost, the liar alone never moves the clock, whatever it says. */
static void test_lost_replies_never_hand_the_clock_to_the_rest(void) {
        SourceSet set = set_of(4, NULL);
        SourceSetSample liar = sample(3600 * SEC, 1 * MSEC, 0), good = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &liar);
        for (size_t i = 1; i < 4; i++)
                source_set_sample(&set, SRC(i), &good);
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        ASSERT_TRUE(llabs(d.select.offset_nsec) < 1 * MSEC);
        source_set_steered(&set);

        for (size_t i = 1; i < 4; i++)
                source_set_failed(&set, SRC(i));
        for (int k = 0; k < 3; k++) {
                source_set_sample(&set, SRC(0), &liar);
                d = judge(&set);
                ASSERT_FALSE(d.steer);
                ASSERT_TRUE(d.held);
                ASSERT_STREQ(source_set_verdict_string(&set, 0), "falseticker");
                assert_description(&set, &d, "Only 0 of 4 NTS sources answer and agree, 3 needed (3 do not answer); "
                                             "clock left alone");
        }

        /* The honest sources' candidates grow with their age until RootDistanceMaxSec=, and the
         * liar still does not decide: it is one of four. */
        SourceSetPolicy p = policy();
        p.now_boottime = NOW + 400000 * USEC_PER_SEC;
        liar.boottime = p.now_boottime;
        source_set_sample(&set, SRC(0), &liar);
        ASSERT_OK(source_set_select(&set, &p, &d));
        ASSERT_FALSE(d.steer);
        assert_description(&set, &d, "Only 1 of 4 NTS sources agree, 3 needed (3 do not answer); clock left alone");
        source_set_done(&set);
}

/* Two liars that agree and two honest sources: a lost honest reply leaves the vote 2 against 2,
 * not 2 of 3. */
static void test_two_liars_of_four_gain_nothing_from_a_lost_reply(void) {
        SourceSet set = set_of(4, NULL);
        SourceSetSample liar = sample(3600 * SEC, 1 * MSEC, 0), good = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &good);
        source_set_sample(&set, SRC(1), &good);
        source_set_sample(&set, SRC(2), &liar);
        source_set_sample(&set, SRC(3), &liar);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(source_set_disagree(&d));

        source_set_failed(&set, SRC(1));
        source_set_sample(&set, SRC(2), &liar);
        source_set_sample(&set, SRC(3), &liar);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(source_set_disagree(&d));
        assert_description(&set, &d, "4 NTS sources disagree by 3600 s; clock left alone");
        source_set_done(&set);
}

/* A liar inside the honest intervals may pull the clock within them, never out: once it drifts
 * past a silent honest source's interval it is a falseticker. */
static void test_stale_interval_bounds_a_drifting_liar(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample h = sample(0, 10 * MSEC, 0), near = sample(8 * MSEC, 1 * MSEC, 0),
                        past = sample(15 * MSEC, 1 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &h);
        source_set_sample(&set, SRC(1), &h);
        source_set_sample(&set, SRC(2), &near);
        source_set_failed(&set, SRC(0));
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        ASSERT_TRUE(d.select.offset_nsec >= 7 * MSEC && d.select.offset_nsec <= 9 * MSEC);

        source_set_sample(&set, SRC(2), &past);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(source_set_verdict_string(&set, 2), "falseticker");
        source_set_done(&set);
}

/* The error bound grows with the age of a sample, 15 ppm (RFC 5905 section 10). */
static void test_root_distance_grows_with_age(void) {
        SourceSet set = set_of(2, NULL);
        SourceSetSample fresh = sample(0, 1 * MSEC, 0), aged = sample(0, 1 * MSEC, 60 * USEC_PER_SEC);

        source_set_sample(&set, SRC(0), &fresh);
        source_set_sample(&set, SRC(1), &aged);
        (void) judge(&set);
        ASSERT_TRUE(set.entries[1].root_distance_nsec - set.entries[0].root_distance_nsec >= 899 * 1000);
        ASSERT_TRUE(set.entries[1].root_distance_nsec - set.entries[0].root_distance_nsec <= 901 * 1000);
        source_set_done(&set);
}

static void test_restart_makes_every_answering_source_pending_again(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample s = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        for (size_t i = 0; i < 3; i++)
                source_set_sample(&set, SRC(i), &s);
        source_set_restart(&set);
        source_set_sample(&set, SRC(2), &s);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(d.n_pending == 2);

        /* One that failed is not waited for after a restart. */
        source_set_failed(&set, SRC(0));
        source_set_restart(&set);
        source_set_sample(&set, SRC(2), &s);
        source_set_sample(&set, SRC(1), &s);
        d = judge(&set);
        ASSERT_TRUE(d.n_pending == 0);
        ASSERT_TRUE(d.steer);
        source_set_done(&set);
}

static void test_min_agreeing_holds_back_a_majority(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample s = sample(0, 1 * MSEC, 0);
        SourceSetPolicy p = policy();
        SourceSetDecision d;

        p.min_agreeing = 3;
        source_set_sample(&set, SRC(0), &s);
        source_set_sample(&set, SRC(1), &s);
        source_set_failed(&set, SRC(2));
        ASSERT_OK(source_set_select(&set, &p, &d));
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(source_set_disagree(&d));
        assert_description(&set, &d, "Only 2 of 3 NTS sources agree, 3 needed (1 does not answer); clock left alone");
        source_set_done(&set);
}

/* The configured order decides among equals: the first source is selected while its bound is
 * within twice the best. */
static void test_configured_order_decides_among_equals(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample a = sample(0, 3 * MSEC, 0), b = sample(0, 2 * MSEC, 0), c = sample(0, 1 * MSEC, 0),
                        wide = sample(0, 8 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &a);
        source_set_sample(&set, SRC(1), &b);
        source_set_sample(&set, SRC(2), &b);
        d = judge(&set);
        ASSERT_TRUE(d.select.selected == 0);
        source_set_sample(&set, SRC(2), &c);
        source_set_sample(&set, SRC(0), &wide);
        d = judge(&set);
        /* The tightest, alone below the median, counts as the median (ntp_select()): b and c are
         * equals, and b is listed first. */
        ASSERT_TRUE(d.select.selected == 1);
        source_set_done(&set);
}

static void test_removing_a_source_keeps_the_selection_in_step(void) {
        SourceSet set = set_of(3, NULL);
        SourceSetSample s = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        for (size_t i = 0; i < 3; i++)
                source_set_sample(&set, SRC(i), &s);
        d = judge(&set);
        ASSERT_TRUE(d.select.selected == 0);
        source_set_remove(&set, SRC(0));
        ASSERT_TRUE(set.selected == SIZE_MAX);
        ASSERT_TRUE(set.n_entries == 2);
        ASSERT_TRUE(set.entries[0].source == SRC(1));
        d = judge(&set);
        ASSERT_TRUE(d.select.selected == 0);
        source_set_remove(&set, SRC(2));
        ASSERT_TRUE(set.selected == 0);
        ASSERT_TRUE(source_set_find(&set, SRC(2)) == NULL);
        source_set_done(&set);
}

/* ---- bootstrap from several sources ---- */

static SourceSetSample bootstrap_sample(int64_t offset, NTSClientBootstrap direction) {
        SourceSetSample s = sample(offset, 1 * MSEC, 0);

        s.bootstrap = direction;
        return s;
}

static void test_bootstrap_needs_two_key_exchange_names(void) {
        SourceSet same = set_of(2, (const char *const[]) { "ntp.example", "NTP.example" });
        SourceSet two = set_of(2, (const char *const[]) { "ntp.example", "time.example" });
        SourceSetSample s = bootstrap_sample(86400 * SEC, NTS_CLIENT_BOOTSTRAP_FORWARD);
        SourceSetDecision d;

        source_set_sample(&same, SRC(0), &s);
        source_set_sample(&same, SRC(1), &s);
        d = judge(&same);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_TRUE(d.bootstrap);
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(d.bootstrap_refusal, "it needs the agreement of two sources with different key-exchange names");
        ASSERT_TRUE(source_set_disagree(&d));
        assert_description(&same, &d, "2 of 2 NTS sources agree, but not enough for a bootstrap (it needs the "
                                      "agreement of two sources with different key-exchange names); clock left alone");

        source_set_sample(&two, SRC(0), &s);
        source_set_sample(&two, SRC(1), &s);
        d = judge(&two);
        ASSERT_TRUE(d.steer);
        ASSERT_TRUE(d.bootstrap_direction == NTS_CLIENT_BOOTSTRAP_FORWARD);
        source_set_done(&same);
        source_set_done(&two);
}

/* A set of one (one server at a time): its forward bootstrap needs no second name, since the
 * clock's floor was the evidence before its keys were taken; it still must lie the way the
 * keys say. Without one_server, the same single source is refused. */
static void test_bootstrap_of_a_set_of_one(void) {
        SourceSet set = set_of(1, (const char *const[]) { "ntp.example" });
        SourceSetSample ahead = bootstrap_sample(86400 * SEC, NTS_CLIENT_BOOTSTRAP_FORWARD);
        SourceSetSample behind = bootstrap_sample(-86400 * SEC, NTS_CLIENT_BOOTSTRAP_FORWARD);
        SourceSetPolicy p = policy();
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &ahead);
        ASSERT_OK(source_set_select(&set, &p, &d));
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(d.bootstrap_refusal, "it needs the agreement of two sources with different key-exchange names");

        p.one_server = true;
        ASSERT_OK(source_set_select(&set, &p, &d));
        ASSERT_TRUE(d.steer);
        ASSERT_TRUE(!d.bootstrap_refusal);
        ASSERT_TRUE(d.bootstrap_direction == NTS_CLIENT_BOOTSTRAP_FORWARD);

        source_set_sample(&set, SRC(0), &behind);
        ASSERT_OK(source_set_select(&set, &p, &d));
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(d.bootstrap_refusal, "the agreed time lies the other way");
        source_set_done(&set);
}

/* Two answering sources of four are a majority of those that answer, not of those in use. */
static void test_bootstrap_needs_a_majority_of_every_source_in_use(void) {
        SourceSet set = set_of(4, (const char *const[]) { "a.example", "b.example", "c.example", "d.example" });
        SourceSetSample s = bootstrap_sample(86400 * SEC, NTS_CLIENT_BOOTSTRAP_FORWARD);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &s);
        source_set_sample(&set, SRC(1), &s);
        source_set_failed(&set, SRC(2));
        source_set_failed(&set, SRC(3));
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_TOO_FEW);
        source_set_sample(&set, SRC(2), &s);
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        source_set_done(&set);
}

static void test_bootstrap_is_vetoed_by_a_fully_checked_source(void) {
        SourceSet set = set_of(3, (const char *const[]) { "a.example", "b.example", "c.example" });
        SourceSetSample s = bootstrap_sample(-365 * 86400 * SEC, NTS_CLIENT_BOOTSTRAP_BACKWARD), right = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &s);
        source_set_sample(&set, SRC(1), &s);
        source_set_sample(&set, SRC(2), &right);
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(d.bootstrap_refusal, "a source with fully checked keys disagrees");
        source_set_done(&set);
}

static void test_backward_bootstrap_never_sets_the_clock_before_the_floor(void) {
        SourceSet set = set_of(2, (const char *const[]) { "a.example", "b.example" });
        /* now is 1.8e9 s, the floor 1.7e9 s: 1.5e8 s back is too far. */
        SourceSetSample far = bootstrap_sample(-150000000 * SEC, NTS_CLIENT_BOOTSTRAP_BACKWARD);
        SourceSetSample ok = bootstrap_sample(-50000000 * SEC, NTS_CLIENT_BOOTSTRAP_BACKWARD);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &far);
        source_set_sample(&set, SRC(1), &far);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(d.bootstrap_refusal, "the agreed time lies before this program was built");

        source_set_sample(&set, SRC(0), &ok);
        source_set_sample(&set, SRC(1), &ok);
        d = judge(&set);
        ASSERT_TRUE(d.steer);
        ASSERT_TRUE(d.bootstrap_direction == NTS_CLIENT_BOOTSTRAP_BACKWARD);
        source_set_done(&set);
}

static void test_bootstrap_directions_must_agree(void) {
        SourceSet set = set_of(2, (const char *const[]) { "a.example", "b.example" });
        SourceSetSample f = bootstrap_sample(1 * MSEC, NTS_CLIENT_BOOTSTRAP_FORWARD);
        SourceSetSample b = bootstrap_sample(1 * MSEC, NTS_CLIENT_BOOTSTRAP_BACKWARD);
        SourceSetDecision d;

        source_set_sample(&set, SRC(0), &f);
        source_set_sample(&set, SRC(1), &b);
        d = judge(&set);
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(d.bootstrap_refusal, "bootstrap keys disagree on which way the clock is wrong");
        source_set_done(&set);
}

/* Who a source is: its NTP address, the key-exchange server it made its TLS connection to, and
 * that server's certificate key (all bytes key). */
static void identify(SourceSet *set, size_t i, const char *ntp, const char *ke, uint8_t key) {
        SourceIdentity id = {};
        uint8_t k[SOURCE_IDENTITY_KEY_SIZE];
        SocketAddress a;

        ASSERT_OK(socket_address_from_string(ntp, 123, &a));
        source_identity_set_ntp_address(&id, &a);
        ASSERT_OK(socket_address_from_string(ke, 4460, &a));
        source_identity_set_ke_address(&id, &a);
        memset(k, key, sizeof k);
        source_identity_set_key(&id, k);
        (void) source_set_identify(set, SRC(i), &id);
}

/* Issue 33: S (a liar's key-exchange server with a valid certificate of its own), L (a liar), t1
 * and t2 (honest), listed in that order. S's key exchange names t1's NTP address, and whoever
 * answers UDP there for S answers with S's keys. The claim costs t1 nothing: no merge, four
 * sources in use, three needed, and the two liars are two votes of four. */
static void test_a_claim_takes_no_vote_away(void) {
        SourceSet set = set_of(4, (const char *const[]) { "s.example", "l.example", "t1.example", "t2.example" });
        SourceSetSample liar = sample(3600 * SEC, 1 * MSEC, 0), honest = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        identify(&set, 0, "192.0.2.11", "192.0.2.10", 0x10); /* S names t1's NTP address */
        identify(&set, 1, "192.0.2.20", "192.0.2.20", 0x20);
        identify(&set, 2, "192.0.2.11", "192.0.2.11", 0x30);
        identify(&set, 3, "192.0.2.40", "192.0.2.40", 0x40);
        for (size_t i = 0; i < 4; i++)
                ASSERT_FALSE(set.entries[i].duplicate_of);
        ASSERT_TRUE(set.entries[2].conflict_with == SRC(0));
        ASSERT_FALSE(set.entries[0].conflict_with);

        source_set_sample(&set, SRC(0), &liar);
        source_set_sample(&set, SRC(1), &liar);
        source_set_sample(&set, SRC(2), &honest);
        source_set_sample(&set, SRC(3), &honest);
        d = judge(&set);
        ASSERT_EQ(d.n_in_use, 4u);
        ASSERT_EQ(d.select.n_needed, 3u);
        ASSERT_FALSE(d.select.outcome == NTP_SELECT_AGREED);
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(source_set_verdict_string(&set, 2), "undecided");
        assert_description(&set, &d, "4 NTS sources disagree by 3600 s; clock left alone");

        /* Without path control S's requests reach t1, which cannot answer them: S fails, and t1
         * and t2 are two of four, not enough, but neither liar steers. */
        source_set_failed(&set, SRC(0));
        d = judge(&set);
        ASSERT_EQ(d.n_in_use, 4u);
        ASSERT_FALSE(d.steer);
        source_set_done(&set);

        /* Listed first among three, S cannot stop t1 and t2 from synchronizing the clock. */
        set = set_of(3, (const char *const[]) { "s.example", "t1.example", "t2.example" });
        identify(&set, 0, "192.0.2.11", "192.0.2.10", 0x10);
        identify(&set, 1, "192.0.2.11", "192.0.2.11", 0x30);
        identify(&set, 2, "192.0.2.40", "192.0.2.40", 0x40);
        source_set_failed(&set, SRC(0));
        source_set_sample(&set, SRC(1), &honest);
        source_set_sample(&set, SRC(2), &honest);
        d = judge(&set);
        ASSERT_EQ(d.n_in_use, 3u);
        ASSERT_TRUE(d.steer);
        ASSERT_STREQ(source_set_verdict_string(&set, 1), "selected");
        assert_description(&set, &d, "2 of 3 NTS sources agree (1 does not answer)");
        source_set_done(&set);
}

/* What the client verified still merges: one key-exchange server under two names, or one
 * certificate key on two addresses, counts once. */
static void test_verified_twins_count_once(void) {
        SourceSet set = set_of(3, (const char *const[]) { "a.example", "A.EXAMPLE", "b.example" });
        SourceSetSample liar = sample(3600 * SEC, 1 * MSEC, 0), honest = sample(0, 1 * MSEC, 0);
        SourceSetDecision d;

        identify(&set, 0, "192.0.2.1", "192.0.2.1", 0x10);
        identify(&set, 1, "192.0.2.1", "192.0.2.1", 0x10);
        identify(&set, 2, "192.0.2.2", "192.0.2.2", 0x20);
        ASSERT_TRUE(set.entries[1].duplicate_of == SRC(0));
        ASSERT_EQ(set.entries[1].duplicate_why, SOURCE_SAME_KE_ADDRESS);
        ASSERT_FALSE(set.entries[1].conflict_with);
        source_set_sample(&set, SRC(0), &liar);
        source_set_sample(&set, SRC(1), &liar);
        source_set_sample(&set, SRC(2), &honest);
        d = judge(&set);
        ASSERT_EQ(d.n_in_use, 2u);
        ASSERT_FALSE(d.steer);
        ASSERT_STREQ(source_set_verdict_string(&set, 1), "duplicate");

        identify(&set, 1, "192.0.2.3", "192.0.2.3", 0x10);
        ASSERT_TRUE(set.entries[1].duplicate_of == SRC(0));
        ASSERT_EQ(set.entries[1].duplicate_why, SOURCE_SAME_KEY);
        source_set_done(&set);
}

static void test_full_set_is_refused(void) {
        SourceSet set = set_of(NTP_SELECT_MAX, NULL);
        int extra;

        ASSERT_ERROR(source_set_add(&set, &extra, NULL), E2BIG);
        source_set_done(&set);
}

/* A sample whose delay is not trusted (held back on the way) is never a candidate, not even as
 * a source's first: the candidate before it stays, and goes stale; the clock follows no one. */
static void test_delayed_sample_is_never_a_candidate(void) {
        SourceSet set = set_of(1, NULL);
        SourceSetSample s = sample(1 * MSEC, 1 * MSEC, 0), held = sample(-750 * MSEC, 1500 * MSEC, 0);
        SourceSetDecision d;

        held.delayed = true;
        source_set_sample(&set, SRC(0), &held);
        ASSERT_TRUE(set.entries[0].delayed);
        d = judge(&set);
        ASSERT_TRUE(d.select.outcome == NTP_SELECT_NO_CANDIDATES);
        ASSERT_FALSE(d.steer);

        source_set_sample(&set, SRC(0), &s);
        ASSERT_FALSE(set.entries[0].delayed);
        source_set_sample(&set, SRC(0), &held);
        d = judge(&set);
        ASSERT_TRUE(d.select.offset_nsec == 1 * MSEC);
        source_set_done(&set);
}

/* A spare on a faster path than the sources in use, whose interval is tighter than what they
 * agree on, still qualifies: it counts as no tighter than their median. */
static void test_tight_spare_that_agrees_qualifies(void) {
        SourceSet set = set_of(4, NULL);
        SourceSetSample tight = sample(200000, 10 * MSEC, 0), liar = sample(3600 * SEC, 1 * MSEC, 0);
        int spare;
        SourceSetDecision d;

        for (size_t i = 0; i < 3; i++) {
                SourceSetSample wide = sample(((int64_t) i - 1) * 500000, 30 * MSEC, 0);
                source_set_sample(&set, SRC(i), &wide);
        }
        source_set_sample(&set, SRC(3), &liar);
        source_set_failed(&set, SRC(0));
        ASSERT_OK(source_set_add_spare(&set, &spare, "spare.example", SRC(0)));
        source_set_sample(&set, &spare, &tight);
        d = judge(&set);
        ASSERT_TRUE(d.held);
        ASSERT_TRUE(d.qualified == &spare);
        source_set_done(&set);
}

TEST_MAIN(TEST_CASE(test_liar_listed_first_is_a_falseticker_and_the_rest_steer),
          TEST_CASE(test_first_answer_waits_for_the_sources_still_pending),
          TEST_CASE(test_two_sources_an_hour_apart_leave_the_clock_alone),
          TEST_CASE(test_liar_50ms_off_is_a_falseticker),
          TEST_CASE(test_a_candidate_steers_once),
          TEST_CASE(test_spike_keeps_the_candidate_before_it),
          TEST_CASE(test_own_step_corrects_and_slew_widens_stored_candidates),
          TEST_CASE(test_stale_candidate_agrees_but_cannot_steer),
          TEST_CASE(test_vacant_pool_slot_does_not_count),
          TEST_CASE(test_spare_takes_the_place_of_a_silent_source_only_when_it_agrees),
          TEST_CASE(test_lost_replies_never_hand_the_clock_to_the_rest),
          TEST_CASE(test_two_liars_of_four_gain_nothing_from_a_lost_reply),
          TEST_CASE(test_stale_interval_bounds_a_drifting_liar),
          TEST_CASE(test_root_distance_grows_with_age),
          TEST_CASE(test_restart_makes_every_answering_source_pending_again),
          TEST_CASE(test_min_agreeing_holds_back_a_majority),
          TEST_CASE(test_configured_order_decides_among_equals),
          TEST_CASE(test_removing_a_source_keeps_the_selection_in_step),
          TEST_CASE(test_bootstrap_needs_two_key_exchange_names),
          TEST_CASE(test_bootstrap_of_a_set_of_one),
          TEST_CASE(test_bootstrap_needs_a_majority_of_every_source_in_use),
          TEST_CASE(test_bootstrap_is_vetoed_by_a_fully_checked_source),
          TEST_CASE(test_backward_bootstrap_never_sets_the_clock_before_the_floor),
          TEST_CASE(test_bootstrap_directions_must_agree),
          TEST_CASE(test_a_claim_takes_no_vote_away),
          TEST_CASE(test_verified_twins_count_once),
          TEST_CASE(test_full_set_is_refused),
          TEST_CASE(test_delayed_sample_is_never_a_candidate),
          TEST_CASE(test_tight_spare_that_agrees_qualifies),
          TEST_CASE(test_candidate_older_than_a_large_slew_is_not_combined),
          TEST_CASE(test_held_by_answers_from_before_a_slew_says_so));
