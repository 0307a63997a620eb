/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>

#include "macro.h"
#include "random-util.h"
#include "timesyncd-backoff.h"

uint64_t backoff_random(void *userdata) {
        uint64_t v = 0;

        (void) random_bytes_pooled(&v, sizeof v);
        return v;
}

/* floor(a * b / 2^64), from 32-bit halves: 32-bit targets have no 128-bit integer type. */
static uint64_t mul_high(uint64_t a, uint64_t b) {
        uint64_t a_lo = (uint32_t) a, a_hi = a >> 32, b_lo = (uint32_t) b, b_hi = b >> 32;
        uint64_t lo_lo = a_lo * b_lo, lo_hi = a_lo * b_hi, hi_lo = a_hi * b_lo, hi_hi = a_hi * b_hi;
        uint64_t mid = (lo_lo >> 32) + (uint32_t) lo_hi + (uint32_t) hi_lo;

        return hi_hi + (lo_hi >> 32) + (hi_lo >> 32) + (mid >> 32);
}

/* Uniform in [lo, hi); lo when the range is empty. The draw scales 64 random bits to the range
 * (Lemire's multiply-shift): no loop, monotone in the random value, and a relative bias of at
 * most (hi - lo) / 2^64, below 1e-8 for the spans used here (up to a day). */
static usec_t uniform(usec_t lo, usec_t hi, backoff_random_t random, void *userdata) {
        assert(random);

        if (hi <= lo)
                return lo;
        return lo + mul_high(random(userdata), hi - lo);
}

usec_t backoff_ke_delay_max(unsigned failures, usec_t elapsed, usec_t floor, usec_t cap) {
        usec_t by_time, by_count;

        assert(failures >= 1);
        assert(floor > 0);

        /* ConnectionRetrySec= may be longer than the top of the ladder (even "infinity"): the
         * top wins, as it did before the jitter. */
        floor = MIN(floor, cap);

        /* The range grows with the time spent failing, not with the number of failures: a
         * retry then comes at most about as long after the server's return as the server was
         * gone, whatever the draws were. Counted in failures, short draws climb the ladder
         * while little time passes, and a client may wait an hour after a ten-minute outage
         * (docs/POOLS.md measures both). */
        by_time = MAX(elapsed, floor > cap / 2 ? cap : 2 * floor);

        /* The count still bounds it where the elapsed time overstates the trouble:
         * CLOCK_BOOTTIME runs on while the machine sleeps, and one failure before a day of
         * suspend is no reason to wait an hour after the resume. */
        by_count = floor;
        for (unsigned i = 0; i < failures && by_count < cap; i++)
                by_count = by_count > cap / 2 ? cap : by_count * 2;

        return MIN(by_count, by_time);
}

usec_t backoff_ke_delay(unsigned failures, usec_t elapsed, usec_t floor, usec_t cap,
                        backoff_random_t random, void *userdata) {
        usec_t top = backoff_ke_delay_max(failures, elapsed, floor, cap);

        return uniform(MAX(top / 2, MIN(floor, cap)), top, random, userdata);
}

BackoffOutcome backoff_outcome_from_nts_error(NTS_Error e) {
        switch (e) {
        case NTS_ERROR_SERVER_UNRECOGNIZED_CRITICAL_RECORD:
        case NTS_ERROR_SERVER_BAD_REQUEST:
        case NTS_ERROR_KE_NO_COMMON_AEAD:
        case NTS_ERROR_KE_NO_NEXT_PROTOCOL:
                return BACKOFF_KE_REFUSED;
        default:
                return BACKOFF_KE_FAILED;
        }
}

/* The number of failures at which the ladder may reach its top. */
static unsigned ladder_top(usec_t floor, usec_t cap) {
        unsigned k = 1;

        while (backoff_ke_delay_max(k, cap, floor, cap) < cap)
                k++;
        return k;
}

usec_t backoff_ke_failed(BackoffLadder *l, BackoffOutcome outcome, usec_t now, usec_t floor, usec_t cap,
                         backoff_random_t random, void *userdata) {
        usec_t elapsed;

        assert(l);
        assert(outcome >= 0 && outcome < _BACKOFF_OUTCOME_MAX);

        if (l->failures == 0)
                l->first_failure = now;
        if (l->failures < UINT_MAX)
                l->failures++;
        if (outcome == BACKOFF_KE_REFUSED) {
                l->failures = MAX(l->failures, ladder_top(floor, cap));
                l->refused = true;
        }
        elapsed = l->refused ? cap : now - MIN(l->first_failure, now);
        return backoff_ke_delay(l->failures, elapsed, floor, cap, random, userdata);
}

void backoff_ke_done(BackoffLadder *l) {
        assert(l);

        *l = (BackoffLadder) {};
}

usec_t backoff_renewal_time(usec_t ke_time, usec_t now, usec_t max_age, usec_t window,
                            backoff_random_t random, void *userdata) {
        usec_t limit = ke_time + max_age, start = limit - MIN(window, max_age);

        if (now >= limit)
                return now;
        return uniform(MAX(start, now), limit, random, userdata);
}

void backoff_limit_init(BackoffLimit *l, unsigned max, usec_t period) {
        assert(l);
        assert(max >= 1 && max <= BACKOFF_LIMIT_MAX);

        *l = (BackoffLimit) { .max = max, .period = period };
}

bool backoff_limit_take(BackoffLimit *l, usec_t now, usec_t *ret_until, bool *ret_first) {
        assert(l);
        assert(l->max >= 1 && l->max <= BACKOFF_LIMIT_MAX);
        assert(ret_until);
        assert(ret_first);

        /* With the ring full, its next slot holds the oldest of the last `max` starts: one more
         * start is allowed once that one is a whole period ago. */
        if (l->n == l->max && now < l->starts[l->next] + l->period) {
                *ret_until = l->starts[l->next] + l->period;
                *ret_first = !l->refusing;
                l->refusing = true;
                return false;
        }

        l->starts[l->next] = now;
        l->next = (l->next + 1) % l->max;
        l->n = MIN(l->n + 1, l->max);
        l->refusing = false;
        return true;
}

unsigned backoff_rate_kiss(unsigned level, unsigned min_level, unsigned max_level) {
        return MIN(MAX(level, min_level) + 1, max_level);
}
