/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the recent NTP exchanges of one server say together: jitter over a small window,
 * spikes, and how often to poll next (one exchange's offset and delay are ntp-packet.h's).
 * Pure arithmetic, no I/O, so the policy is unit tested on its own. */

#include <stdbool.h>
#include <stdint.h>

#define NTP_FILTER_SIZE 8

typedef struct NTPFilter {
        int64_t offsets[NTP_FILTER_SIZE];
        unsigned n, next;
        double jitter_nsec;
        bool spiked;            /* the last sample was a spike */
        uint64_t packet_count;
} NTPFilter;

/* Offsets larger than this are stepped, not slewed (the kernel PLL takes at most 0.5 s and
 * slews at 500 ppm at most; stock timesyncd uses the same bound). */
#define NTP_STEP_THRESHOLD_NSEC INT64_C(400000000)

/* Adds a sample; returns true if it is a spike: far from the recent ones compared to their
 * jitter, and small enough that it is not a real clock error to be stepped, and the sample
 * before was not one. A spike is still recorded. */
bool ntp_filter_add(NTPFilter *f, int64_t offset_nsec);
void ntp_filter_reset(NTPFilter *f);

/* How far offset_nsec (added last) lies from the mean of the window: what a source's own
 * samples say of its consistency, whatever its distance from the local clock. */
int64_t ntp_filter_deviation(const NTPFilter *f, int64_t offset_nsec);

/* The next poll level (the interval is the minimum doubled that many times) after a sample
 * with this offset. Large offsets poll fast to converge; small stable ones back off towards
 * the maximum. */
unsigned ntp_filter_poll_next(unsigned level, int64_t offset_nsec, bool spike, double jitter_nsec,
                       unsigned min_level, unsigned max_level);
