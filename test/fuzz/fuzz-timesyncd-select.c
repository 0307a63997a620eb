/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Any set of candidates through ntp_select(), checked against a brute-force reading of the same
 * rules (which points how many intervals contain, without sorting or scanning) and against the
 * promises of the header: the truechimers are more than half and share the intersection, the
 * falsetickers do not contain it, the combined offset
 * lies in every truechimer's interval, the selected source is a truechimer, and reversing the
 * order of the sources changes no verdict.
 *
 * Input: byte 0 the number of candidates (mod 18; 17 is one too many), byte 1 min_agreeing
 * (mod 20), byte 2 the previously selected index (mod 18; 17 is none). Then per candidate a
 * flag byte (bit 0 usable, bit 1 compact) followed by, if compact, the offset as a big-endian
 * int16 and the root distance as a uint16, both in milliseconds, so that intervals overlap
 * often; otherwise both as big-endian int64 nanoseconds (negative root distances included).
 * Missing bytes read as zero. */

#include "fuzz.h"
#include "macro.h"
#include "timesyncd-select.h"
#include "unaligned.h"

#define MSEC INT64_C(1000000)

typedef struct Reader {
        const uint8_t *p;
        size_t left;
} Reader;

static void take(Reader *r, void *buf, size_t n) {
        size_t k = MIN(n, r->left);

        memset(buf, 0, n);
        memcpy(buf, r->p, k);
        r->p += k;
        r->left -= k;
}

static uint8_t take_u8(Reader *r) {
        uint8_t b;

        take(r, &b, 1);
        return b;
}

static size_t depth_at(const NTPSelectCandidate *c, size_t n, int64_t x) {
        size_t d = 0;

        for (size_t i = 0; i < n; i++)
                d += c[i].usable && ntp_select_candidate_low(&c[i]) <= x && x <= ntp_select_candidate_high(&c[i]);
        return d;
}

static bool contains(const NTPSelectCandidate *c, int64_t l, int64_t u) {
        return c->usable && ntp_select_candidate_low(c) <= l && ntp_select_candidate_high(c) >= u;
}

/* The RFC 5905 loop as the header states it, by brute force: for each need from m down to
 * more than half, the lowest and highest points with that many intervals, and whether that
 * many intervals contain both. */
static NTPSelectOutcome reference(const NTPSelectCandidate *c, size_t n, size_t m, size_t max_d,
                                  int64_t *ret_l, int64_t *ret_u, size_t *ret_k) {
        bool ambiguous = false;

        if (m == 0)
                return NTP_SELECT_NO_CANDIDATES;

        for (size_t need = m; 2 * need > m; need--) {
                int64_t l = INT64_MAX, u = INT64_MIN;
                bool any = false;
                size_t k = 0;

                for (size_t i = 0; i < n; i++) {
                        if (!c[i].usable)
                                continue;
                        if (depth_at(c, n, ntp_select_candidate_low(&c[i])) >= need) {
                                l = MIN(l, ntp_select_candidate_low(&c[i]));
                                any = true;
                        }
                        if (depth_at(c, n, ntp_select_candidate_high(&c[i])) >= need)
                                u = MAX(u, ntp_select_candidate_high(&c[i]));
                }
                if (!any)
                        continue;
                assert_se(l <= u);

                for (size_t i = 0; i < n; i++)
                        k += contains(&c[i], l, u);
                if (k < need) {
                        ambiguous = true;
                        continue;
                }
                *ret_l = l;
                *ret_u = u;
                *ret_k = k;
                return NTP_SELECT_AGREED; /* or TOO_FEW: the caller compares with n_needed */
        }
        assert_se(2 * max_d <= m || ambiguous);
        return ambiguous ? NTP_SELECT_AMBIGUOUS : NTP_SELECT_NO_MAJORITY;
}

static void check_reversed(const NTPSelectCandidate *c, size_t n, size_t min_agreeing, const NTPSelectResult *r) {
        NTPSelectCandidate rev[NTP_SELECT_MAX];
        NTPSelectResult b;

        for (size_t i = 0; i < n; i++)
                rev[i] = c[n - 1 - i];
        assert_se(ntp_select(rev, n, min_agreeing, SIZE_MAX, &b) == 0);

        assert_se(b.outcome == r->outcome);
        assert_se(b.n_agree == r->n_agree);
        for (size_t i = 0; i < n; i++)
                assert_se(b.verdicts[i] == r->verdicts[n - 1 - i]);
        if (r->outcome == NTP_SELECT_AGREED || r->outcome == NTP_SELECT_TOO_FEW)
                assert_se(b.low_nsec == r->low_nsec && b.high_nsec == r->high_nsec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Reader rd = { data, size };
        NTPSelectCandidate c[NTP_SELECT_MAX + 1] = {};
        NTPSelectResult r;
        size_t n, min_agreeing, previous, m = 0, max_d = 0, k_ref = 0, n_true = 0;
        int64_t lo = INT64_MAX, hi = INT64_MIN, l_ref = 0, u_ref = 0;
        bool invalid = false;
        NTPSelectOutcome expected;

        n = take_u8(&rd) % (NTP_SELECT_MAX + 2);
        min_agreeing = take_u8(&rd) % 20;
        previous = take_u8(&rd) % (NTP_SELECT_MAX + 2);
        if (previous > NTP_SELECT_MAX)
                previous = SIZE_MAX;

        for (size_t i = 0; i < n; i++) {
                uint8_t flags = take_u8(&rd), b[16];

                c[i].usable = flags & 1;
                if (flags & 2) {
                        take(&rd, b, 4);
                        c[i].offset_nsec = (int16_t) unaligned_read_be16(b) * MSEC;
                        c[i].root_distance_nsec = unaligned_read_be16(b + 2) * MSEC;
                } else {
                        take(&rd, b, 16);
                        c[i].offset_nsec = (int64_t) unaligned_read_be64(b);
                        c[i].root_distance_nsec = (int64_t) unaligned_read_be64(b + 8);
                }
                invalid = invalid || (c[i].usable && c[i].root_distance_nsec < 0);
        }

        r = (NTPSelectResult) { .n_agree = 4242 };
        if (n > NTP_SELECT_MAX || invalid) {
                assert_se(ntp_select(c, n, min_agreeing, previous, &r) == -EINVAL);
                assert_se(r.n_agree == 4242);
                return 0;
        }
        assert_se(ntp_select(c, n, min_agreeing, previous, &r) == 0);

        /* Counts. */
        for (size_t i = 0; i < n; i++) {
                if (!c[i].usable) {
                        assert_se(r.verdicts[i] == NTP_SELECT_NOT_CANDIDATE);
                        continue;
                }
                assert_se(r.verdicts[i] != NTP_SELECT_NOT_CANDIDATE);
                m++;
                lo = MIN(lo, c[i].offset_nsec);
                hi = MAX(hi, c[i].offset_nsec);
                max_d = MAX(max_d, depth_at(c, n, ntp_select_candidate_low(&c[i])));
                n_true += r.verdicts[i] == NTP_SELECT_TRUECHIMER;
        }
        for (size_t i = n; i < NTP_SELECT_MAX; i++)
                assert_se(r.verdicts[i] == NTP_SELECT_NOT_CANDIDATE);
        assert_se(r.n_candidates == m);
        assert_se(r.n_needed == MAX(min_agreeing, m / 2 + 1));
        assert_se(r.spread_nsec == (m > 0 ? int64_sub_saturating(hi, lo) : 0));

        /* The same decision as the brute-force reading. */
        expected = reference(c, n, m, max_d, &l_ref, &u_ref, &k_ref);
        if (expected == NTP_SELECT_AGREED && k_ref < r.n_needed)
                expected = NTP_SELECT_TOO_FEW;
        assert_se(r.outcome == expected);

        switch (r.outcome) {
        case NTP_SELECT_AGREED:
        case NTP_SELECT_TOO_FEW:
                assert_se(r.low_nsec == l_ref && r.high_nsec == u_ref);
                assert_se(r.n_agree == n_true && n_true == k_ref);
                /* More than half, and never more than share any one point. */
                assert_se(r.n_agree <= max_d && 2 * r.n_agree > m);
                for (size_t i = 0; i < n; i++)
                        if (c[i].usable)
                                assert_se((r.verdicts[i] == NTP_SELECT_TRUECHIMER) ==
                                          contains(&c[i], r.low_nsec, r.high_nsec));
                if (r.outcome == NTP_SELECT_TOO_FEW) {
                        assert_se(r.selected == SIZE_MAX);
                        break;
                }

                /* The region kept contains [l, u], and the combined offset is in it: inside
                 * every truechimer's interval widened to the floor, none counted tighter. */
                assert_se(r.keep_low_nsec <= r.low_nsec && r.high_nsec <= r.keep_high_nsec);
                assert_se(r.keep_low_nsec <= r.offset_nsec && r.offset_nsec <= r.keep_high_nsec);
                assert_se(r.selected < n && r.verdicts[r.selected] == NTP_SELECT_TRUECHIMER);
                for (size_t i = 0; i < n; i++) {
                        NTPSelectCandidate w = c[i];

                        if (r.verdicts[i] != NTP_SELECT_TRUECHIMER)
                                continue;
                        assert_se(r.floor_nsec >= 0);
                        w.root_distance_nsec = MAX(w.root_distance_nsec, r.floor_nsec);
                        assert_se(ntp_select_candidate_low(&w) <= r.offset_nsec);
                        assert_se(r.offset_nsec <= ntp_select_candidate_high(&w));
                        /* Nothing much tighter, as counted, was passed over. */
                        assert_se(MAX(c[r.selected].root_distance_nsec, r.floor_nsec) -
                                  MAX(c[i].root_distance_nsec, r.floor_nsec) <=
                                  MAX(MAX(c[i].root_distance_nsec, r.floor_nsec), NTP_SELECT_RESELECT_NSEC));
                }
                break;

        case NTP_SELECT_NO_CANDIDATES:
        case NTP_SELECT_NO_MAJORITY:
        case NTP_SELECT_AMBIGUOUS:
                assert_se(r.selected == SIZE_MAX);
                assert_se(r.n_agree == max_d);
                for (size_t i = 0; i < n; i++)
                        assert_se(r.verdicts[i] == (c[i].usable ? NTP_SELECT_UNDECIDED : NTP_SELECT_NOT_CANDIDATE));
                break;
        }

        check_reversed(c, n, min_agreeing, &r);
        return 0;
}
