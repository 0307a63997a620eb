/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "macro.h"
#include "timesyncd-select.h"

/* One end of a correctness interval. LOW sorts before HIGH at equal values: intervals are
 * closed, so two that touch share that point. */
typedef struct Endpoint {
        int64_t value;
        int8_t type;            /* ENDPOINT_LOW or ENDPOINT_HIGH */
        uint8_t index;          /* candidate */
} Endpoint;

enum {
        ENDPOINT_LOW = -1,
        ENDPOINT_HIGH = 1,
};

assert_cc(NTP_SELECT_MAX <= UINT8_MAX);

static bool endpoint_before(const Endpoint *a, const Endpoint *b) {
        return a->value < b->value || (a->value == b->value && a->type < b->type);
}

/* At most 2 * NTP_SELECT_MAX entries: insertion sort, on the caller's stack, nothing else. */
static void endpoints_sort(Endpoint *e, size_t n) {
        for (size_t i = 1; i < n; i++) {
                Endpoint x = e[i];
                size_t j = i;

                for (; j > 0 && endpoint_before(&x, &e[j - 1]); j--)
                        e[j] = e[j - 1];
                e[j] = x;
        }
}

/* The lowest point that need intervals contain (step 2), or false if none does. */
static bool scan_up(const Endpoint *e, size_t n, size_t need, int64_t *ret) {
        size_t open = 0;

        for (size_t i = 0; i < n; i++) {
                if (e[i].type == ENDPOINT_HIGH) {
                        open--;
                        continue;
                }
                if (++open >= need) {
                        *ret = e[i].value;
                        return true;
                }
        }
        return false;
}

/* The highest such point (step 3): the same walk from the top, entering at upper ends. Only
 * called once scan_up() found a point, so there is one. */
static int64_t scan_down(const Endpoint *e, size_t n, size_t need) {
        size_t open = 0;

        for (size_t i = n; i > 0; i--) {
                if (e[i - 1].type == ENDPOINT_LOW) {
                        open--;
                        continue;
                }
                if (++open >= need)
                        return e[i - 1].value;
        }
        assert_not_reached();
}

/* The most intervals that share a point, for the status when there is no majority. */
static size_t max_depth(const Endpoint *e, size_t n) {
        size_t open = 0, best = 0;

        for (size_t i = 0; i < n; i++) {
                if (e[i].type == ENDPOINT_HIGH)
                        open--;
                else
                        best = MAX(best, ++open);
        }
        return best;
}

static bool interval_contains(const NTPSelectCandidate *c, int64_t l, int64_t u) {
        return ntp_select_candidate_low(c) <= l && ntp_select_candidate_high(c) >= u;
}

/* The root distance that no truechimer counts as tighter than: the lower median of theirs.
 * Those tighter still are fewer than half of the truechimers (a minority: an authentic liar
 * answering at once is one), so their weight cannot outweigh the rest, whose intervals an
 * attacker may have widened by delaying their replies. */
static int64_t weight_floor(const NTPSelectCandidate *c, size_t n, const NTPSelectResult *r) {
        int64_t rd[NTP_SELECT_MAX];
        size_t k = 0;

        /* Insertion sort: at most NTP_SELECT_MAX entries. */
        for (size_t i = 0; i < n; i++) {
                size_t j;

                if (r->verdicts[i] != NTP_SELECT_TRUECHIMER)
                        continue;
                for (j = k++; j > 0 && rd[j - 1] > c[i].root_distance_nsec; j--)
                        rd[j] = rd[j - 1];
                rd[j] = c[i].root_distance_nsec;
        }
        assert(k > 0);
        return rd[(k - 1) / 2];
}

/* Where the combined offset is kept: in every truechimer's interval, each widened to the floor
 * (weight_floor()). That contains [l, u]; it is [l, u] itself unless a minority's tight interval
 * narrowed it, which then does not pull the clock to its end. */
static void keep_region(const NTPSelectCandidate *c, size_t n, int64_t floor, NTPSelectResult *r) {
        r->keep_low_nsec = INT64_MIN;
        r->keep_high_nsec = INT64_MAX;
        for (size_t i = 0; i < n; i++) {
                NTPSelectCandidate w = c[i];

                if (r->verdicts[i] != NTP_SELECT_TRUECHIMER)
                        continue;
                w.root_distance_nsec = MAX(w.root_distance_nsec, floor);
                r->keep_low_nsec = MAX(r->keep_low_nsec, ntp_select_candidate_low(&w));
                r->keep_high_nsec = MIN(r->keep_high_nsec, ntp_select_candidate_high(&w));
        }
        assert(r->keep_low_nsec <= r->low_nsec && r->keep_high_nsec >= r->high_nsec);
}

/* Mean of the truechimers' offsets weighted by 1 / root distance, none tighter than the floor,
 * clamped into the region kept. Sums are taken relative to the middle of [l, u] in double
 * precision: offsets near the int64 limits do not overflow, and rounding is undone by the
 * clamp. */
static int64_t combine(const NTPSelectCandidate *c, size_t n, NTPSelectResult *r) {
        double mid = (double) r->low_nsec / 2 + (double) r->high_nsec / 2, sum_w = 0, sum_wx = 0, x;
        int64_t floor = weight_floor(c, n, r);

        r->floor_nsec = floor;
        keep_region(c, n, floor, r);
        for (size_t i = 0; i < n; i++) {
                if (r->verdicts[i] != NTP_SELECT_TRUECHIMER)
                        continue;

                /* A zero-width interval is exact: weigh it as 1 ns, the finest we can tell. */
                double w = 1.0 / (double) MAX(MAX(c[i].root_distance_nsec, floor), INT64_C(1));
                sum_w += w;
                sum_wx += w * ((double) c[i].offset_nsec - mid);
        }
        assert(sum_w > 0);

        x = mid + sum_wx / sum_w;
        if (!(x > (double) r->keep_low_nsec))
                return r->keep_low_nsec;
        if (!(x < (double) r->keep_high_nsec))
                return r->keep_high_nsec;
        return CLAMP((int64_t) x, r->keep_low_nsec, r->keep_high_nsec);
}

/* A truechimer's root distance as the combination counts it: no tighter than the floor. */
static int64_t counted_distance(const NTPSelectCandidate *c, const NTPSelectResult *r) {
        return MAX(c->root_distance_nsec, r->floor_nsec);
}

/* By the root distances as counted, so that a minority's tight interval is not named as the
 * source the clock follows, nor lends its bound to the adjustment's maximum error. */
static size_t pick_selected(const NTPSelectCandidate *c, size_t n, const NTPSelectResult *r, size_t previous) {
        size_t best = SIZE_MAX;

        for (size_t i = 0; i < n; i++)
                if (r->verdicts[i] == NTP_SELECT_TRUECHIMER &&
                    (best == SIZE_MAX || counted_distance(&c[i], r) < counted_distance(&c[best], r)))
                        best = i;
        assert(best != SIZE_MAX);

        /* Hysteresis: the previous one stays unless its bound is more than twice the best one
         * and more than NTP_SELECT_RESELECT_NSEC above it (written as a difference: best is the
         * smallest, so nothing can overflow). */
        if (previous < n && r->verdicts[previous] == NTP_SELECT_TRUECHIMER &&
            counted_distance(&c[previous], r) - counted_distance(&c[best], r) <=
            MAX(counted_distance(&c[best], r), NTP_SELECT_RESELECT_NSEC))
                return previous;
        return best;
}

static int64_t offset_spread(const NTPSelectCandidate *c, size_t n) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;

        for (size_t i = 0; i < n; i++)
                if (c[i].usable) {
                        lo = MIN(lo, c[i].offset_nsec);
                        hi = MAX(hi, c[i].offset_nsec);
                }
        return lo <= hi ? int64_sub_saturating(hi, lo) : 0;
}

int ntp_select(const NTPSelectCandidate *candidates, size_t n, size_t min_agreeing, size_t previous,
               NTPSelectResult *ret) {
        Endpoint e[2 * NTP_SELECT_MAX];
        NTPSelectResult r = {
                .selected = SIZE_MAX,
        };
        size_t m = 0;
        bool ambiguous = false;

        assert(candidates || n == 0);
        assert(ret);

        if (n > NTP_SELECT_MAX)
                return -EINVAL;

        for (size_t i = 0; i < n; i++) {
                const NTPSelectCandidate *c = &candidates[i];

                if (!c->usable)
                        continue;
                if (c->root_distance_nsec < 0)
                        return -EINVAL;

                e[2 * m] = (Endpoint) { ntp_select_candidate_low(c), ENDPOINT_LOW, (uint8_t) i };
                e[2 * m + 1] = (Endpoint) { ntp_select_candidate_high(c), ENDPOINT_HIGH, (uint8_t) i };
                m++;
        }
        endpoints_sort(e, 2 * m);

        r.n_candidates = m;
        r.n_needed = MAX(min_agreeing, m / 2 + 1);
        r.spread_nsec = offset_spread(candidates, n);

        if (m == 0) {
                r.outcome = NTP_SELECT_NO_CANDIDATES;
                *ret = r;
                return 0;
        }

        for (size_t f = 0; 2 * f < m; f++) {
                size_t need = m - f, k = 0;
                int64_t l, u;

                if (!scan_up(e, 2 * m, need, &l))
                        continue;
                u = scan_down(e, 2 * m, need);
                assert(l <= u);

                for (size_t i = 0; i < n; i++)
                        if (candidates[i].usable && interval_contains(&candidates[i], l, u))
                                k++;
                if (k < need) {
                        /* Two separate regions reach need; a smaller f may still find one
                         * region that fewer intervals all contain. */
                        ambiguous = true;
                        continue;
                }
                assert(k == need);

                for (size_t i = 0; i < n; i++)
                        r.verdicts[i] = !candidates[i].usable ? NTP_SELECT_NOT_CANDIDATE :
                                        interval_contains(&candidates[i], l, u) ? NTP_SELECT_TRUECHIMER :
                                        NTP_SELECT_FALSETICKER;
                r.n_agree = k;
                r.low_nsec = l;
                r.high_nsec = u;

                if (k < r.n_needed) {
                        r.outcome = NTP_SELECT_TOO_FEW;
                        *ret = r;
                        return 0;
                }

                r.outcome = NTP_SELECT_AGREED;
                r.offset_nsec = combine(candidates, n, &r);
                r.selected = pick_selected(candidates, n, &r, previous);
                *ret = r;
                return 0;
        }

        r.outcome = ambiguous ? NTP_SELECT_AMBIGUOUS : NTP_SELECT_NO_MAJORITY;
        r.n_agree = max_depth(e, 2 * m);
        for (size_t i = 0; i < n; i++)
                r.verdicts[i] = candidates[i].usable ? NTP_SELECT_UNDECIDED : NTP_SELECT_NOT_CANDIDATE;
        *ret = r;
        return 0;
}

const char *ntp_select_outcome_to_string(NTPSelectOutcome o) {
        switch (o) {
        case NTP_SELECT_AGREED:
                return "agreed";
        case NTP_SELECT_NO_CANDIDATES:
                return "no usable source";
        case NTP_SELECT_NO_MAJORITY:
                return "no majority agrees";
        case NTP_SELECT_AMBIGUOUS:
                return "majorities agree in separate places";
        case NTP_SELECT_TOO_FEW:
                return "too few sources agree";
        }
        return NULL;
}

const char *ntp_select_verdict_to_string(NTPSelectVerdict v) {
        switch (v) {
        case NTP_SELECT_NOT_CANDIDATE:
                return "not a candidate";
        case NTP_SELECT_TRUECHIMER:
                return "truechimer";
        case NTP_SELECT_FALSETICKER:
                return "falseticker";
        case NTP_SELECT_UNDECIDED:
                return "undecided";
        }
        return NULL;
}
