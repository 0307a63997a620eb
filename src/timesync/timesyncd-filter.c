/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <math.h>

#include "macro.h"
#include "timesyncd-filter.h"

void ntp_filter_reset(NTPFilter *f) {
        uint64_t count = f->packet_count;

        *f = (NTPFilter) { .packet_count = count };
}

void ntp_filter_clock_stepped(NTPFilter *f) {
        /* The window is what n says: older offsets are not read. */
        f->n = f->next = 0;
        f->jitter_nsec = 0;
}

int64_t ntp_filter_delay_min(const NTPFilter *f) {
        int64_t m = -1;

        for (unsigned i = 0; i < f->n_delays; i++)
                if (m < 0 || f->delays[i] < m)
                        m = f->delays[i];
        return m;
}

/* Judged against the window before this sample; then recorded, refused or not, so that a delay
 * that lasts becomes the minimum once it fills the window. */
static NTPFilterDelay filter_add_delay(NTPFilter *f, int64_t delay_nsec) {
        int64_t least = ntp_filter_delay_min(f);
        NTPFilterDelay v = NTP_FILTER_DELAY_USUAL;

        if (delay_nsec > NTP_FILTER_DELAY_MAX_NSEC)
                return NTP_FILTER_DELAY_TOO_LONG;
        if (least >= 0 && delay_nsec / NTP_FILTER_DELAY_RATIO > least &&
            delay_nsec - least > NTP_FILTER_DELAY_SLACK_NSEC)
                v = NTP_FILTER_DELAY_JUMPED;

        f->delays[f->next_delay] = delay_nsec;
        f->next_delay = (f->next_delay + 1) % NTP_FILTER_SIZE;
        if (f->n_delays < NTP_FILTER_SIZE)
                f->n_delays++;
        return v;
}

static int64_t filter_mean(const NTPFilter *f) {
        double sum = 0;

        for (unsigned i = 0; i < f->n; i++)
                sum += (double) f->offsets[i];
        return f->n > 0 ? (int64_t) (sum / f->n) : 0;
}

bool ntp_filter_add(NTPFilter *f, int64_t offset_nsec, int64_t delay_nsec, NTPFilterDelay *ret_delay) {
        NTPFilterDelay delay;
        bool spike = false;

        assert(f);

        f->packet_count++;

        delay = filter_add_delay(f, delay_nsec);
        if (ret_delay)
                *ret_delay = delay;
        if (delay != NTP_FILTER_DELAY_USUAL)
                return false;

        /* Judge against the window as it was before this sample. Two samples are too few to
         * call anything a spike, and a big offset is a clock error to fix, not noise. */
        if (f->n >= 3 && llabs(offset_nsec) < NTP_STEP_THRESHOLD_NSEC) {
                double deviation = fabs((double) (offset_nsec - filter_mean(f)));
                spike = deviation > 3.0 * f->jitter_nsec && deviation > 1e6; /* 1 ms floor */
        }

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

const char *ntp_filter_delay_to_string(NTPFilterDelay d) {
        switch (d) {
        case NTP_FILTER_DELAY_USUAL:
                return "usual";
        case NTP_FILTER_DELAY_JUMPED:
                return "jumped";
        case NTP_FILTER_DELAY_TOO_LONG:
                return "too long";
        default:
                return NULL;
        }
}
