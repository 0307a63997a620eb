/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "tests.h"
#include "timesyncd-select.h"

#define USEC INT64_C(1000)
#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)

/* A usable candidate: offset and root distance. */
#define C(o, rd) ((NTPSelectCandidate) { .usable = true, .offset_nsec = (o), .root_distance_nsec = (rd) })

static NTPSelectResult run(const NTPSelectCandidate *c, size_t n, size_t min_agreeing) {
        NTPSelectResult r;

        ASSERT_OK(ntp_select(c, n, min_agreeing, SIZE_MAX, &r));
        return r;
}

static void assert_verdicts(const NTPSelectResult *r, const char *expected) {
        /* One letter per candidate: T truechimer, F falseticker, U undecided, - not a candidate. */
        static const char letters[] = {
                [NTP_SELECT_NOT_CANDIDATE] = '-',
                [NTP_SELECT_TRUECHIMER] = 'T',
                [NTP_SELECT_FALSETICKER] = 'F',
                [NTP_SELECT_UNDECIDED] = 'U',
        };
        char got[NTP_SELECT_MAX + 1] = {};

        for (size_t i = 0; i < strlen(expected); i++)
                got[i] = letters[r->verdicts[i]];
        ASSERT_STREQ(got, expected);
}

/* The combined offset lies in every truechimer's interval widened to the lower median of their
 * root distances: in every interval of the majority, and within that median of the others. */
static void assert_offset_in_every_truechimer(const NTPSelectCandidate *c, size_t n, const NTPSelectResult *r) {
        int64_t rd[NTP_SELECT_MAX], median;
        size_t k = 0;

        ASSERT_TRUE(r->keep_low_nsec <= r->low_nsec && r->high_nsec <= r->keep_high_nsec);
        ASSERT_TRUE(r->keep_low_nsec <= r->offset_nsec && r->offset_nsec <= r->keep_high_nsec);
        for (size_t i = 0; i < n; i++)
                if (r->verdicts[i] == NTP_SELECT_TRUECHIMER)
                        rd[k++] = c[i].root_distance_nsec;
        ASSERT_TRUE(k > 0);
        for (size_t i = 1; i < k; i++)
                for (size_t j = i; j > 0 && rd[j - 1] > rd[j]; j--) {
                        int64_t t = rd[j];
                        rd[j] = rd[j - 1];
                        rd[j - 1] = t;
                }
        median = rd[(k - 1) / 2];
        for (size_t i = 0; i < n; i++)
                if (r->verdicts[i] == NTP_SELECT_TRUECHIMER) {
                        NTPSelectCandidate w = c[i];

                        w.root_distance_nsec = MAX(w.root_distance_nsec, median);
                        ASSERT_TRUE(ntp_select_candidate_low(&w) <= r->offset_nsec);
                        ASSERT_TRUE(ntp_select_candidate_high(&w) >= r->offset_nsec);
                }
}

static void test_liar_an_hour_off_listed_first_is_a_falseticker(void) {
        const NTPSelectCandidate c[] = {
                C(3600 * SEC, 5 * MSEC),
                C(1 * MSEC, 5 * MSEC),
                C(-1 * MSEC, 4 * MSEC),
                C(500 * USEC, 6 * MSEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "FTTT");
        ASSERT_EQ(r.n_candidates, 4);
        ASSERT_EQ(r.n_needed, 3);
        ASSERT_EQ(r.n_agree, 3);
        ASSERT_TRUE(llabs(r.offset_nsec) <= 2 * MSEC);
        ASSERT_TRUE(r.selected != 0);
        assert_offset_in_every_truechimer(c, ELEMENTSOF(c), &r);
}

static void test_liar_50ms_off_outside_the_true_intervals_is_a_falseticker(void) {
        /* Small enough to look plausible, but its interval misses the others by 40 ms. */
        const NTPSelectCandidate c[] = {
                C(50 * MSEC, 3 * MSEC),
                C(200 * USEC, 2 * MSEC),
                C(-300 * USEC, 3 * MSEC),
                C(100 * USEC, 2500 * USEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "FTTT");
        ASSERT_TRUE(r.offset_nsec >= -300 * USEC && r.offset_nsec <= 200 * USEC);
        assert_offset_in_every_truechimer(c, ELEMENTSOF(c), &r);
}

static void test_two_sources_an_hour_apart_do_not_agree(void) {
        const NTPSelectCandidate c[] = {
                C(3600 * SEC + 2 * MSEC, 5 * MSEC),
                C(2 * MSEC, 5 * MSEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        /* "2 NTS sources disagree by 3600 s; clock left alone" */
        ASSERT_EQ(r.outcome, NTP_SELECT_NO_MAJORITY);
        assert_verdicts(&r, "UU");
        ASSERT_EQ(r.n_candidates, 2);
        ASSERT_EQ(r.n_needed, 2);
        ASSERT_EQ(r.n_agree, 1);
        ASSERT_EQ(r.spread_nsec, 3600 * SEC);
        ASSERT_EQ(r.selected, SIZE_MAX);
}

static void test_one_source_agrees_with_itself_however_far_off(void) {
        /* One NTS= entry: the clock follows it as without selection, a step of an hour too. */
        const NTPSelectCandidate c[] = { C(-3600 * SEC, 20 * MSEC) };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "T");
        ASSERT_EQ(r.n_needed, 1);
        ASSERT_EQ(r.offset_nsec, -3600 * SEC);
        ASSERT_EQ(r.selected, 0);
        ASSERT_EQ(r.spread_nsec, 0);
}

static void test_all_agree_and_tighter_bounds_weigh_more(void) {
        /* [-20, 20] and [5, 15] ms: weights 1/20 and 1/5 give (0 + 4 * 10) / 5 = 8 ms. */
        const NTPSelectCandidate c[] = {
                C(0, 20 * MSEC),
                C(10 * MSEC, 5 * MSEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "TT");
        ASSERT_EQ(r.low_nsec, 5 * MSEC);
        ASSERT_EQ(r.high_nsec, 15 * MSEC);
        ASSERT_TRUE(llabs(r.offset_nsec - 8 * MSEC) <= 1);
        ASSERT_EQ(r.selected, 1);
}

static void test_combined_offset_is_clamped_into_the_region_kept(void) {
        /* Two wide intervals centred on 0 and a tight one at 10.4 ms: they share only
         * [9.9, 10] ms. The tight one is a minority: it counts as 10 ms wide, by weight and for
         * the region kept, [0.4, 10] ms, so the mean of the three (3.47 ms) stands. */
        const NTPSelectCandidate c[] = {
                C(0, 10 * MSEC),
                C(0, 10 * MSEC),
                C(10400 * USEC, 500 * USEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "TTT");
        ASSERT_EQ(r.low_nsec, 9900 * USEC);
        ASSERT_EQ(r.high_nsec, 10 * MSEC);
        ASSERT_EQ(r.floor_nsec, 10 * MSEC);
        ASSERT_EQ(r.keep_low_nsec, 400 * USEC);
        ASSERT_EQ(r.keep_high_nsec, 10 * MSEC);
        ASSERT_TRUE(llabs(r.offset_nsec - 3466667) <= 1);
        assert_offset_in_every_truechimer(c, ELEMENTSOF(c), &r);

        /* A wide interval far off centre pulls the mean (4.8 ms) outside what the two others
         * share, [0, 0]: clamped there. */
        const NTPSelectCandidate d[] = {
                C(-100 * MSEC, 100 * MSEC),
                C(10 * MSEC, 10 * MSEC),
                C(10 * MSEC, 10 * MSEC),
        };
        r = run(d, ELEMENTSOF(d), 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "TTT");
        ASSERT_EQ(r.keep_low_nsec, 0);
        ASSERT_EQ(r.keep_high_nsec, 0);
        ASSERT_EQ(r.offset_nsec, 0);
        assert_offset_in_every_truechimer(d, ELEMENTSOF(d), &r);
}

/* The delay attack of issue 33: the honest servers' replies held D seconds give each the offset
 * -D/2 and the interval [-D, 0]; one authentic liar answers at once with a tight interval inside
 * it. The intersection is the liar's interval; it used to be the clock's too (-1.45 s for
 * D = 1.5 s). Now the liar is one vote of four, or of three while the fourth is not in. */
static void test_tight_liar_inside_delayed_intervals_is_one_vote(void) {
        static const int64_t delays[] = { 1500 * MSEC, 9 * SEC };

        for (size_t k = 0; k < ELEMENTSOF(delays); k++) {
                int64_t D = delays[k], liar = -D + D / 30;
                const NTPSelectCandidate c[] = {
                        C(-D / 2, D / 2 + 10 * MSEC),
                        C(-D / 2 + 1 * MSEC, D / 2 + 15 * MSEC),
                        C(-D / 2 - 1 * MSEC, D / 2 + 12 * MSEC),
                        C(liar, 5 * MSEC),
                };

                for (size_t m = 3; m <= 4; m++) {
                        NTPSelectCandidate v[4];
                        NTPSelectResult r;

                        /* Two honest and the liar, then all four. */
                        memcpy(v, c, sizeof v);
                        v[2].usable = m == 4;
                        r = run(v, 4, 3);
                        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
                        ASSERT_EQ(r.low_nsec, liar - 5 * MSEC);
                        /* At most the liar's share (one of m) of its distance from the honest
                         * offsets, beyond the -D/2 the delay gives them. */
                        ASSERT_TRUE(r.offset_nsec >= -D / 2 - (D / 2) / (int64_t) m - 2 * MSEC);
                        ASSERT_TRUE(r.offset_nsec > (liar - D / 2) / 2);
                        assert_offset_in_every_truechimer(v, 4, &r);
                        /* Nor is it named as the source followed, listed last. */
                        ASSERT_TRUE(r.selected == 0);
                }
        }
}

static void test_overlapping_chain_is_ambiguous(void) {
        /* A = [0, 2], B = [1.5, 3.5], C = [3, 5]: A and B agree, B and C agree, A and C do not;
         * which pair is right cannot be told. */
        const NTPSelectCandidate c[] = {
                C(1 * SEC, 1 * SEC),
                C(2500 * MSEC, 1 * SEC),
                C(4 * SEC, 1 * SEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AMBIGUOUS);
        assert_verdicts(&r, "UUU");
        ASSERT_EQ(r.n_agree, 2);
        ASSERT_EQ(r.selected, SIZE_MAX);
        ASSERT_EQ(r.spread_nsec, 3 * SEC);
}

static void test_chain_with_a_fourth_source_decides(void) {
        /* D = [3.2, 3.4] joins B and C: three of four share [3.2, 3.4]; A is the falseticker. */
        const NTPSelectCandidate c[] = {
                C(1 * SEC, 1 * SEC),
                C(2500 * MSEC, 1 * SEC),
                C(4 * SEC, 1 * SEC),
                C(3300 * MSEC, 100 * MSEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "FTTT");
        ASSERT_EQ(r.low_nsec, 3200 * MSEC);
        ASSERT_EQ(r.high_nsec, 3400 * MSEC);
        assert_offset_in_every_truechimer(c, ELEMENTSOF(c), &r);
}

static void test_two_groups_that_disagree_leave_their_common_core(void) {
        /* S = three wide intervals [0, 10]; a = [1, 2] and b = [8, 9] each agree with S (four of
         * five) but not with each other. Whichever of a and b lies, S holds an honest source: the
         * clock follows S, and both a and b are set aside. */
        const NTPSelectCandidate c[] = {
                C(5 * SEC, 5 * SEC),
                C(1500 * MSEC, 500 * MSEC),
                C(5 * SEC, 5 * SEC),
                C(8500 * MSEC, 500 * MSEC),
                C(5 * SEC, 5 * SEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "TFTFT");
        ASSERT_EQ(r.n_agree, 3);
        ASSERT_EQ(r.low_nsec, 0);
        ASSERT_EQ(r.high_nsec, 10 * SEC);
        ASSERT_EQ(r.offset_nsec, 5 * SEC);
}

static void test_rfc_midpoint_test_case_is_ambiguous(void) {
        /* RFC 5905's step 5 accepts [-0.5, 1] here (one midpoint outside, f = 1), although no
         * point of it lies in all of A, B and L, and only one of B or L can be honest. */
        const NTPSelectCandidate c[] = {
                C(0, 1 * SEC),                  /* A = [-1, 1] */
                C(0, 500 * MSEC),               /* B = [-0.5, 0.5] */
                C(1900 * MSEC, 1100 * MSEC),    /* L = [0.8, 3] */
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AMBIGUOUS);
        assert_verdicts(&r, "UUU");
}

static void test_touching_intervals_agree_at_the_shared_point(void) {
        const NTPSelectCandidate c[] = {
                C(1 * SEC, 1 * SEC),    /* [0, 2] */
                C(3 * SEC, 1 * SEC),    /* [2, 4] */
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "TT");
        ASSERT_EQ(r.low_nsec, 2 * SEC);
        ASSERT_EQ(r.high_nsec, 2 * SEC);
        ASSERT_EQ(r.offset_nsec, 2 * SEC);
}

static void test_intervals_one_nanosecond_apart_do_not_agree(void) {
        const NTPSelectCandidate c[] = {
                C(1 * SEC, 1 * SEC),            /* [0, 2 s] */
                C(3 * SEC + 1, 1 * SEC),        /* [2 s + 1 ns, 4 s + 1 ns] */
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_NO_MAJORITY);
}

static void test_equal_endpoints_count_once_each(void) {
        /* Two identical intervals and one that starts where they end: all three share 2 s. */
        const NTPSelectCandidate c[] = {
                C(1 * SEC, 1 * SEC),
                C(1 * SEC, 1 * SEC),
                C(3 * SEC, 1 * SEC),
                C(10 * SEC, 1 * SEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "TTTF");
        ASSERT_EQ(r.low_nsec, 2 * SEC);
        ASSERT_EQ(r.high_nsec, 2 * SEC);
        ASSERT_EQ(r.offset_nsec, 2 * SEC);
}

static void test_zero_width_intervals(void) {
        NTPSelectResult r;

        /* The same point twice: exact agreement. */
        r = run((const NTPSelectCandidate[]) { C(7, 0), C(7, 0) }, 2, 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        ASSERT_EQ(r.offset_nsec, 7);

        /* Two points 1 ns apart: none. */
        r = run((const NTPSelectCandidate[]) { C(7, 0), C(8, 0) }, 2, 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_NO_MAJORITY);

        /* A point inside a wide interval: the point is the answer. */
        r = run((const NTPSelectCandidate[]) { C(0, 1 * SEC), C(300 * MSEC, 0), C(5 * SEC, 0) }, 3, 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "TTF");
        ASSERT_EQ(r.offset_nsec, 300 * MSEC);
        ASSERT_EQ(r.selected, 1);
}

static void test_values_near_the_int64_limits_do_not_overflow(void) {
        NTPSelectResult r;

        /* [0, INT64_MAX] and [INT64_MIN, -1] after saturation: disjoint. */
        r = run((const NTPSelectCandidate[]) { C(INT64_MAX, INT64_MAX), C(INT64_MIN, INT64_MAX) }, 2, 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_NO_MAJORITY);
        ASSERT_EQ(r.spread_nsec, INT64_MAX);

        /* Both clipped at INT64_MAX: they share [INT64_MAX - 10, INT64_MAX]. */
        r = run((const NTPSelectCandidate[]) { C(INT64_MAX - 5, 10), C(INT64_MAX, 10) }, 2, 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        ASSERT_EQ(r.low_nsec, INT64_MAX - 10);
        ASSERT_EQ(r.high_nsec, INT64_MAX);
        ASSERT_TRUE(r.offset_nsec >= INT64_MAX - 10);

        /* They share [INT64_MIN + 1, INT64_MIN + 1]; the exact one is a minority and counts as
         * wide as the others: the mean of the three, about 2/3 of INT64_MIN, in [INT64_MIN, -1]. */
        r = run((const NTPSelectCandidate[]) { C(INT64_MIN, INT64_MAX), C(INT64_MIN + 1, 0), C(-1, INT64_MAX) }, 3, 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        ASSERT_EQ(r.low_nsec, INT64_MIN + 1);
        ASSERT_EQ(r.keep_low_nsec, INT64_MIN);
        ASSERT_EQ(r.keep_high_nsec, -1);
        ASSERT_TRUE(llabs(r.offset_nsec - INT64_MIN / 3 * 2) < 1000000000000);
}

static void test_sixteen_sources_with_seven_liars(void) {
        NTPSelectCandidate c[NTP_SELECT_MAX];
        NTPSelectResult r;

        for (size_t i = 0; i < NTP_SELECT_MAX; i++)
                c[i] = i % 2 == 0 && i < 14 ? C((int64_t) (i + 1) * 100 * SEC, 10 * MSEC)    /* 7 liars, each alone */
                                            : C((int64_t) i * MSEC, 20 * MSEC);               /* 9 within 15 ms */
        r = run(c, NTP_SELECT_MAX, 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "FTFTFTFTFTFTFTTT");
        ASSERT_EQ(r.n_agree, 9);
        ASSERT_EQ(r.n_needed, 9);
        assert_offset_in_every_truechimer(c, NTP_SELECT_MAX, &r);

        /* Eight liars that agree among themselves against eight honest ones: no majority. */
        for (size_t i = 0; i < NTP_SELECT_MAX; i += 2)
                c[i] = C(3600 * SEC, 10 * MSEC);
        r = run(c, NTP_SELECT_MAX, 0);
        ASSERT_TRUE(r.outcome != NTP_SELECT_AGREED);
        ASSERT_EQ(r.n_agree, 8);

        ASSERT_ERROR(ntp_select(c, NTP_SELECT_MAX + 1, 0, SIZE_MAX, &r), EINVAL);
}

static void test_min_agreeing_raises_the_floor_above_a_majority(void) {
        const NTPSelectCandidate c[] = {
                C(3600 * SEC, 5 * MSEC),
                C(1 * MSEC, 5 * MSEC),
                C(-1 * MSEC, 4 * MSEC),
                C(500 * USEC, 6 * MSEC),
        };
        NTPSelectResult r;

        r = run(c, ELEMENTSOF(c), 3);
        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);

        /* ntpd-rs's minimum-agreeing-sources = 4: three agree, that is not enough; the
         * verdicts still say who agrees. */
        r = run(c, ELEMENTSOF(c), 4);
        ASSERT_EQ(r.outcome, NTP_SELECT_TOO_FEW);
        ASSERT_EQ(r.n_needed, 4);
        ASSERT_EQ(r.n_agree, 3);
        assert_verdicts(&r, "FTTT");
        ASSERT_EQ(r.selected, SIZE_MAX);

        /* A floor below the majority changes nothing: 1 of 2 is never enough. */
        r = run((const NTPSelectCandidate[]) { C(0, 1), C(SEC, 1) }, 2, 1);
        ASSERT_EQ(r.outcome, NTP_SELECT_NO_MAJORITY);
        ASSERT_EQ(r.n_needed, 2);
}

static void test_half_is_not_a_majority(void) {
        /* Two agree, two others each alone: 2 of 4 is not more than half. */
        const NTPSelectCandidate c[] = {
                C(0, 5 * MSEC),
                C(1 * MSEC, 5 * MSEC),
                C(10 * SEC, 5 * MSEC),
                C(-10 * SEC, 5 * MSEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_NO_MAJORITY);
        ASSERT_EQ(r.n_agree, 2);
        ASSERT_EQ(r.n_needed, 3);
        assert_verdicts(&r, "UUUU");
}

static void test_unusable_sources_are_not_candidates(void) {
        /* A silent source (its last figures stale, even nonsense) does not vote: 2 of the 3
         * that answer are a majority. */
        const NTPSelectCandidate c[] = {
                { .usable = false, .offset_nsec = 5 * SEC, .root_distance_nsec = -1 },
                C(0, 5 * MSEC),
                C(1 * MSEC, 5 * MSEC),
                C(10 * SEC, 5 * MSEC),
        };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_AGREED);
        assert_verdicts(&r, "-TTF");
        ASSERT_EQ(r.n_candidates, 3);
        ASSERT_EQ(r.n_needed, 2);
        ASSERT_EQ(r.spread_nsec, 10 * SEC);
}

static void test_no_usable_source(void) {
        const NTPSelectCandidate c[] = { { .usable = false } };
        NTPSelectResult r = run(c, ELEMENTSOF(c), 0);

        ASSERT_EQ(r.outcome, NTP_SELECT_NO_CANDIDATES);
        assert_verdicts(&r, "-");
        ASSERT_EQ(r.n_candidates, 0);
        ASSERT_EQ(r.n_needed, 1);
        ASSERT_EQ(r.selected, SIZE_MAX);

        r = run(NULL, 0, 0);
        ASSERT_EQ(r.outcome, NTP_SELECT_NO_CANDIDATES);
}

static void test_negative_root_distance_is_refused(void) {
        NTPSelectResult r = { .n_agree = 42 };

        ASSERT_ERROR(ntp_select((const NTPSelectCandidate[]) { C(0, 1), C(0, -1) }, 2, 0, SIZE_MAX, &r), EINVAL);
        ASSERT_EQ(r.n_agree, 42);
}

static void test_selected_is_the_tightest_truechimer_with_hysteresis(void) {
        NTPSelectCandidate c[] = {
                C(3600 * SEC, 1 * MSEC),        /* tightest of all, but a falseticker */
                C(0, 5 * MSEC),
                C(1 * MSEC, 3 * MSEC),
                C(-1 * MSEC, 4 * MSEC),
        };
        NTPSelectResult r;

        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, SIZE_MAX, &r));
        ASSERT_EQ(r.selected, 2);

        /* 5 and 4 ms are not more than twice 3 ms: the previous choice stays. */
        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, 1, &r));
        ASSERT_EQ(r.selected, 1);
        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, 3, &r));
        ASSERT_EQ(r.selected, 3);

        /* Once it bounds the time more than twice as loosely as the best one counts (no tighter
         * than the median of the truechimers, 4 ms), the tighter one takes over. */
        c[1].root_distance_nsec = 8 * MSEC + 1;
        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, 1, &r));
        ASSERT_EQ(r.selected, 2);

        /* A falseticker or an index out of range is never kept. */
        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, 0, &r));
        ASSERT_EQ(r.selected, 2);
        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, 99, &r));
        ASSERT_EQ(r.selected, 2);

        /* Equal bounds: the first listed. */
        c[1].root_distance_nsec = c[3].root_distance_nsec = c[2].root_distance_nsec;
        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, SIZE_MAX, &r));
        ASSERT_EQ(r.selected, 1);
}

/* Root distances of tens of microseconds (a local network) vary by more than a factor of two
 * from poll to poll: the previous choice stays while it is within 100 us of the best. */
static void test_hysteresis_holds_for_small_root_distances(void) {
        NTPSelectCandidate c[] = {
                C(0, 10 * USEC),
                C(0, 45 * USEC),
                C(0, 200 * USEC),
        };
        NTPSelectResult r;

        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, 1, &r));
        ASSERT_EQ(r.selected, 1);
        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, 2, &r));
        ASSERT_EQ(r.selected, 0);
        c[2].root_distance_nsec = 110 * USEC;
        ASSERT_OK(ntp_select(c, ELEMENTSOF(c), 0, 2, &r));
        ASSERT_EQ(r.selected, 2);
}

static void test_order_of_the_sources_does_not_change_the_verdicts(void) {
        const NTPSelectCandidate c[] = {
                C(50 * MSEC, 3 * MSEC),
                C(200 * USEC, 2 * MSEC),
                C(-300 * USEC, 3 * MSEC),
                C(100 * USEC, 2500 * USEC),
        };
        const NTPSelectCandidate reversed[] = { c[3], c[2], c[1], c[0] };
        NTPSelectResult a = run(c, 4, 0), b = run(reversed, 4, 0);

        assert_verdicts(&a, "FTTT");
        assert_verdicts(&b, "TTTF");
        ASSERT_EQ(a.low_nsec, b.low_nsec);
        ASSERT_EQ(a.high_nsec, b.high_nsec);
        ASSERT_TRUE(llabs(a.offset_nsec - b.offset_nsec) <= 1);
}

static void test_every_outcome_and_verdict_has_a_name(void) {
        for (NTPSelectOutcome o = NTP_SELECT_AGREED; o <= NTP_SELECT_TOO_FEW; o++)
                ASSERT_TRUE(ntp_select_outcome_to_string(o) != NULL);
        for (NTPSelectVerdict v = NTP_SELECT_NOT_CANDIDATE; v <= NTP_SELECT_UNDECIDED; v++)
                ASSERT_TRUE(ntp_select_verdict_to_string(v) != NULL);
        ASSERT_STREQ(ntp_select_outcome_to_string(NTP_SELECT_AMBIGUOUS), "majorities agree in separate places");
        ASSERT_STREQ(ntp_select_verdict_to_string(NTP_SELECT_FALSETICKER), "falseticker");
        ASSERT_TRUE(ntp_select_outcome_to_string((NTPSelectOutcome) 99) == NULL);
        ASSERT_TRUE(ntp_select_verdict_to_string((NTPSelectVerdict) 99) == NULL);
}

TEST_MAIN(TEST_CASE(test_liar_an_hour_off_listed_first_is_a_falseticker),
          TEST_CASE(test_liar_50ms_off_outside_the_true_intervals_is_a_falseticker),
          TEST_CASE(test_two_sources_an_hour_apart_do_not_agree),
          TEST_CASE(test_one_source_agrees_with_itself_however_far_off),
          TEST_CASE(test_all_agree_and_tighter_bounds_weigh_more),
          TEST_CASE(test_combined_offset_is_clamped_into_the_region_kept),
          TEST_CASE(test_tight_liar_inside_delayed_intervals_is_one_vote),
          TEST_CASE(test_overlapping_chain_is_ambiguous),
          TEST_CASE(test_chain_with_a_fourth_source_decides),
          TEST_CASE(test_two_groups_that_disagree_leave_their_common_core),
          TEST_CASE(test_rfc_midpoint_test_case_is_ambiguous),
          TEST_CASE(test_touching_intervals_agree_at_the_shared_point),
          TEST_CASE(test_intervals_one_nanosecond_apart_do_not_agree),
          TEST_CASE(test_equal_endpoints_count_once_each),
          TEST_CASE(test_zero_width_intervals),
          TEST_CASE(test_values_near_the_int64_limits_do_not_overflow),
          TEST_CASE(test_sixteen_sources_with_seven_liars),
          TEST_CASE(test_min_agreeing_raises_the_floor_above_a_majority),
          TEST_CASE(test_half_is_not_a_majority),
          TEST_CASE(test_unusable_sources_are_not_candidates),
          TEST_CASE(test_no_usable_source),
          TEST_CASE(test_negative_root_distance_is_refused),
          TEST_CASE(test_selected_is_the_tightest_truechimer_with_hysteresis),
          TEST_CASE(test_hysteresis_holds_for_small_root_distances),
          TEST_CASE(test_order_of_the_sources_does_not_change_the_verdicts),
          TEST_CASE(test_every_outcome_and_verdict_has_a_name));
