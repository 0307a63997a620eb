/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Source selection: given what several servers say the offset of our clock is, and
 * how far each can be wrong, which of them agree, what offset the clock should follow, and
 * which server to name as the one in use. Pure, like nts-packet.c: no I/O, no logging, no
 * allocation, no state; the caller keeps the previous result if it wants one.
 *
 * Each candidate i says that the true offset lies in its correctness interval
 *     [offset_i - rd_i, offset_i + rd_i],
 * rd_i its root distance (ntp_sample_root_distance_nsec()). An honest, synchronized server's
 * interval contains the truth, so all honest intervals share at least one point. NTS proves who
 * sent a reply, not that its time is right; the selection is what keeps one server with valid
 * keys and a wrong clock from moving ours.
 *
 * The intersection (RFC 5905 section 11.2.1, after Marzullo and DTSS). With m candidates,
 * for f = 0, 1, ... while f < m/2 (fewer than half may be falsetickers), need = m - f:
 *   1. sort the 2m endpoints; at equal values lower endpoints come first, so intervals that
 *      only touch still share that point;
 *   2. l: scanning upwards, +1 at a lower endpoint and -1 at an upper one, the first value at
 *      which need intervals are open (the lowest point that need intervals contain);
 *   3. u: the same downwards (the highest such point);
 *   4. success if need intervals contain all of [l, u]: those are the truechimers, [l, u] is
 *      the intersection, the rest are falsetickers. Otherwise try f + 1.
 * Where we differ from the RFC's step 5: it accepts [l, u] when at most f midpoints (offsets)
 * lie outside it. That test does not make [l, u] a region need intervals share:
 * A = [-1, 1], B = [-0.5, 0.5], L = [0.8, 3] pass with [l, u] = [-0.5, 1], yet no point
 * there is in all of A, B and L, and only one of B or L can be honest. Our step 4 fails exactly
 * when two separate regions each reach the count; then the sources agree with more than half
 * in two different places, which one is true is not decidable from the intervals, and we leave
 * the clock alone (NTP_SELECT_AMBIGUOUS) instead of choosing by sort order. On success exactly
 * need = m - f candidates contain [l, u] (with more, f - 1 would have succeeded). Usually they
 * are the largest set of candidates whose intervals share a point; when two larger groups
 * overlap but disagree (S plus a, S plus b, a and b apart), the truechimers are S, the part
 * both groups have in common, and a and b are both falsetickers, for either may be the liar.
 *
 * Agreement needs more than half of the usable candidates (the loop above) and at least
 * min_agreeing of them. Usable means "answers now" in the caller's terms (a recent,
 * authenticated, synchronized sample under RootDistanceMaxSec=), so the default, min_agreeing
 * 0, is "a majority of the sources that currently answer": one source agrees with itself (one
 * NTS= entry behaves as without selection), two must both agree, three need two.
 *
 * Combining: the offset is the mean of the truechimers' offsets weighted by 1 / root distance
 * (RFC 5905 section 11.2.3 and chrony weight the same way: a tighter bound counts more), but
 * no truechimer counts as tighter than the lower median of their root distances, and the mean
 * is clamped into the intersection of their intervals each widened to that median (the region
 * kept, [keep_low, keep_high], which contains [l, u]). Why not the tightest bound and [l, u]:
 * an attacker who holds the honest servers' replies D seconds widens their intervals to
 * [-D, 0], and one authentic liar answering at once with a tight interval anywhere inside
 * them is a truechimer whose interval is [l, u]: by weight and by the clamp, it alone would
 * set the clock (D = 1.5 s stepped it by -1.45 s). With the floor it is one vote among the
 * truechimers, and those tighter than the median are always a minority. In normal operation
 * the median is about the others' root distances: an honest tight interval counts a little
 * less, and the result stays inside every interval at least as wide as the median (the
 * majority's), and within the median of every other. An offset that lies outside the region
 * (a wide interval far off centre) cannot pull the clock outside it.
 *
 * The selected source (stock timesyncd's ServerName, ServerAddress, NTPMessage) is the
 * truechimer with the smallest root distance as the combination counts it (no tighter than the
 * median: the liar above is not named, nor lends its bound to the adjustment's maximum error),
 * the lowest index on ties; the previously
 * selected one stays while it is a truechimer and its root distance is at most twice the
 * smallest, or at most NTP_SELECT_RESELECT_NSEC above it, so that the name does not flip
 * between two equally good servers each poll (on a local network root distances are tens of
 * microseconds, and their noise alone is more than a factor of two).
 *
 * How others do it (read to learn, not copied):
 *   - chrony (sources.c, SRC_SelectSource()): the same sorted sweep, keeping the first region
 *     of maximum depth; it needs that depth to be more than half of the selectable sources
 *     ("no majority" otherwise), then minsources of them; a source survives when its interval
 *     contains that region. Two separate regions of the same depth: the lower one wins, which
 *     we refuse (above). It combines only sources within combinelimit times the selected one's
 *     distance, weighted by 1 / root distance, and keeps the selected source by a score with
 *     hysteresis (reselectdist). maxdistance drops sources before selection (our
 *     RootDistanceMaxSec= does that, per reply, as in stock timesyncd).
 *   - ntpd-rs (ntp-proto, algorithm/kalman/select.rs): the point where most intervals
 *     overlap, needing at least minimum-agreeing-sources (default 3) and more than half of the
 *     candidates; survivors are the intervals containing that point (the first such point on
 *     ties). Its intervals come from the Kalman filter's uncertainty and the delay
 *     (range-statistical-weight, range-delay-weight), capped by maximum-source-uncertainty,
 *     not from the RFC root distance. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* Sources selected among at once; the default number of NTS sources in use is 4. */
#define NTP_SELECT_MAX 16
/* The previously selected source stays while its root distance is at most this much above the
 * best one's, whatever the ratio (chrony's reselectdist: 100 us). */
#define NTP_SELECT_RESELECT_NSEC INT64_C(100000)

typedef struct NTPSelectCandidate {
        bool usable;                    /* false: not a candidate, whatever the rest says */
        int64_t offset_nsec;            /* server clock minus ours */
        int64_t root_distance_nsec;     /* >= 0 for a usable candidate */
} NTPSelectCandidate;

/* The ends of a candidate's correctness interval, saturating at the int64 limits. */
static inline int64_t ntp_select_candidate_low(const NTPSelectCandidate *c) {
        return int64_sub_saturating(c->offset_nsec, c->root_distance_nsec);
}

static inline int64_t ntp_select_candidate_high(const NTPSelectCandidate *c) {
        return int64_add_saturating(c->offset_nsec, c->root_distance_nsec);
}

typedef enum NTPSelectVerdict {
        NTP_SELECT_NOT_CANDIDATE,       /* not usable */
        NTP_SELECT_TRUECHIMER,          /* its interval contains the intersection */
        NTP_SELECT_FALSETICKER,         /* outside the intersection of a majority */
        NTP_SELECT_UNDECIDED,           /* no majority agrees on one region: nobody is judged */
} NTPSelectVerdict;

typedef enum NTPSelectOutcome {
        NTP_SELECT_AGREED,              /* the clock may follow offset_nsec */
        NTP_SELECT_NO_CANDIDATES,       /* nothing usable */
        NTP_SELECT_NO_MAJORITY,         /* no point lies in the intervals of more than half */
        NTP_SELECT_AMBIGUOUS,           /* more than half agree, but in separate places */
        NTP_SELECT_TOO_FEW,             /* a majority agrees, but fewer than min_agreeing */
} NTPSelectOutcome;

typedef struct NTPSelectResult {
        NTPSelectOutcome outcome;
        NTPSelectVerdict verdicts[NTP_SELECT_MAX];      /* per candidate, in input order */
        size_t n_candidates;            /* usable candidates */
        size_t n_needed;                /* agreement needs this many: a majority, min_agreeing */
        size_t n_agree;                 /* truechimers; without a majority clique, the most
                                         * candidates whose intervals share a point */
        int64_t low_nsec, high_nsec;    /* the intersection [l, u]; AGREED and TOO_FEW only */
        int64_t offset_nsec;            /* combined offset, in [keep_low, keep_high]; AGREED only */
        int64_t keep_low_nsec, keep_high_nsec;  /* where the combined offset is kept; AGREED only */
        int64_t floor_nsec;             /* no truechimer counts as tighter: the lower median of
                                         * their root distances; AGREED only */
        size_t selected;                /* index of the selected source; AGREED only, else SIZE_MAX */
        int64_t spread_nsec;            /* largest minus smallest offset of the usable
                                         * candidates ("disagree by ..."); saturating */
} NTPSelectResult;

/* Judges the n candidates (n <= NTP_SELECT_MAX). min_agreeing 0 means a majority of the usable
 * ones; previous is the index selected last time, or SIZE_MAX. Returns 0 with *ret filled in,
 * whatever the outcome, or -EINVAL (more than NTP_SELECT_MAX candidates, or a usable one with a
 * negative root distance; *ret untouched). */
int ntp_select(const NTPSelectCandidate *candidates, size_t n, size_t min_agreeing, size_t previous,
               NTPSelectResult *ret);

const char *ntp_select_outcome_to_string(NTPSelectOutcome o);
const char *ntp_select_verdict_to_string(NTPSelectVerdict v);
