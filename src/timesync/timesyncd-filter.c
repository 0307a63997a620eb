/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <math.h>

#include "macro.h"
#include "timesyncd-filter.h"

void ntp_filter_reset(NTPFilter *f) {
        uint64_t count = f->packet_count;

        *f = (NTPFilter) { .packet_count = count };
}

static int64_t filter_mean(const NTPFilter *f) {
        double sum = 0;

        for (unsigned i = 0; i < f->n; i++)
                sum += (double) f->offsets[i];
        return f->n > 0 ? (int64_t) (sum / f->n) : 0;
}

bool ntp_filter_add(NTPFilter *f, int64_t offset_nsec) {
        bool spike = false;

        assert(f);

        f->packet_count++;

        /* Judge against the window as it was before this sample. Two samples are too few to
         * call anything a spike, and a big offset is a clock error to fix, not noise. */
        if (f->n >= 3 && llabs(offset_nsec) < NTP_STEP_THRESHOLD_NSEC) {
                double deviation = fabs((double) (offset_nsec - filter_mean(f)));
                spike = deviation > 3.0 * f->jitter_nsec && deviation > 1e6; /* 1 ms floor */
        }
        /* Never two in a row (RFC 5905's popcorn spike suppressor): once the loop is locked the
         * window's jitter is the residual noise, and a clock that really drifted off would be
         * refused sample after sample, at 2048 s polls for hours (issue 34). */
        if (f->spiked)
                spike = false;
        f->spiked = spike;

        f->offsets[f->next] = offset_nsec;
        f->next = (f->next + 1) % NTP_FILTER_SIZE;
        if (f->n < NTP_FILTER_SIZE)
                f->n++;

        /* RMS deviation from the mean over the window. */
        if (f->n >= 2) {
                double mean = (double) filter_mean(f), sum = 0;
                for (unsigned i = 0; i < f->n; i++) {
                        double d = (double) f->offsets[i] - mean;
                        sum += d * d;
                }
                f->jitter_nsec = sqrt(sum / (f->n - 1));
        } else
                f->jitter_nsec = 0;

        return spike;
}

int64_t ntp_filter_deviation(const NTPFilter *f, int64_t offset_nsec) {
        assert(f);

        return offset_nsec - filter_mean(f);
}

unsigned ntp_filter_poll_next(unsigned level, int64_t offset_nsec, bool spike, double jitter_nsec,
                       unsigned min_level, unsigned max_level) {
        int64_t a = llabs(offset_nsec);

        assert(min_level <= max_level);

        if (a >= NTP_STEP_THRESHOLD_NSEC / 2)
                /* Far off: start over at the shortest interval. */
                level = min_level;
        else if (spike)
                ; /* one odd sample says nothing about the interval */
        else if (a > INT64_C(50000000)) {
                if (level > min_level)
                        level--;
        } else if (a < INT64_C(10000000) && jitter_nsec < 10e6)
                level++;

        return CLAMP(level, min_level, max_level);
}
