/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the recent NTP exchanges of one server say together: jitter over a small window,
 * spikes, whether a delay can be trusted, and how often to poll next (one exchange's offset and
 * delay are ntp-packet.h's). Pure arithmetic, no I/O, so the policy is unit tested on its own.
 *
 * Delays. Holding one direction of an exchange D seconds shifts its offset by D/2, and its
 * interval (offset +/- root distance, which holds delay/2) still contains the truth: a delayed
 * honest sample is true, only loose, and a liar's tight interval anywhere inside it agrees with
 * it. A sample is therefore not used as time when its delay is far above the least delay of
 * its source's recent samples (RFC 5905 section 10 keeps the sample of least delay among the
 * last eight; chrony refuses one whose delay exceeds maxdelayratio times the least in its
 * register), nor when it is above NTP_FILTER_DELAY_MAX_NSEC (chrony's maxdelay, 3 s by default).
 * The window keeps the delays of the samples it refused: a delay that stays up for
 * NTP_FILTER_SIZE samples is the path's new normal (a new route), and is trusted again. */

#include <stdbool.h>
#include <stdint.h>

#define NTP_FILTER_SIZE 8

/* A delay is not trusted above this multiple of the least recent one, when it is also more than
 * NTP_FILTER_DELAY_SLACK_NSEC above it (so that the noise of a fast path, 0.1 ms against 0.3 ms,
 * is not a jump): what an attacker can add unseen is at most twice the least delay or 50 ms,
 * half of it in the offset. */
#define NTP_FILTER_DELAY_RATIO 3
#define NTP_FILTER_DELAY_SLACK_NSEC INT64_C(50000000)
/* No sample with a longer round trip is used as time, whatever its source's history: its
 * interval is more than 3 s wide, and no recent minimum bounds the first samples. */
#define NTP_FILTER_DELAY_MAX_NSEC INT64_C(3000000000)

typedef enum NTPFilterDelay {
        NTP_FILTER_DELAY_USUAL,         /* the sample may be used */
        NTP_FILTER_DELAY_JUMPED,        /* far above the source's recent minimum */
        NTP_FILTER_DELAY_TOO_LONG,      /* above NTP_FILTER_DELAY_MAX_NSEC */
        _NTP_FILTER_DELAY_MAX,
} NTPFilterDelay;

typedef struct NTPFilter {
        int64_t offsets[NTP_FILTER_SIZE];
        unsigned n, next;
        double jitter_nsec;
        uint64_t packet_count;
        /* The delays of the last samples, refused ones too: they measure the path, which a
         * step of our clock does not change. */
        int64_t delays[NTP_FILTER_SIZE];
        unsigned n_delays, next_delay;
} NTPFilter;

/* Offsets larger than this are stepped, not slewed (the kernel PLL takes at most 0.5 s and
 * slews at 500 ppm at most; stock timesyncd uses the same bound). */
#define NTP_STEP_THRESHOLD_NSEC INT64_C(400000000)

/* Adds a sample; returns true if it is a spike: far from the recent ones compared to their
 * jitter, and small enough that it is not a real clock error to be stepped. A spike is still
 * recorded, so a lasting change is accepted after a few polls. *ret_delay (may be NULL) says
 * whether its delay lets it be used; when it does not, the offset is neither recorded nor
 * judged (not a spike): only the delay is. */
bool ntp_filter_add(NTPFilter *f, int64_t offset_nsec, int64_t delay_nsec, NTPFilterDelay *ret_delay);
/* Forgets everything but the packet count: a new server, or a new start. */
void ntp_filter_reset(NTPFilter *f);
/* Our clock was stepped: the offsets say nothing any more, the delays still do. */
void ntp_filter_clock_stepped(NTPFilter *f);
/* The least delay of the recent samples; -1 before the first. */
int64_t ntp_filter_delay_min(const NTPFilter *f);
const char *ntp_filter_delay_to_string(NTPFilterDelay d);

/* How far offset_nsec (added last) lies from the mean of the window: what a source's own
 * samples say of its consistency, whatever its distance from the local clock. */
int64_t ntp_filter_deviation(const NTPFilter *f, int64_t offset_nsec);

/* The next poll level (the interval is the minimum doubled that many times) after a sample
 * with this offset. Large offsets poll fast to converge; small stable ones back off towards
 * the maximum. */
unsigned ntp_filter_poll_next(unsigned level, int64_t offset_nsec, bool spike, double jitter_nsec,
                       unsigned min_level, unsigned max_level);
