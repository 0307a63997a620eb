/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NTPv4 (RFC 5905) as the daemon, the query tool and the test servers share it: the
 * constants, the 48-byte header, timestamps, and the arithmetic of one exchange (offset,
 * delay, dispersion, root distance). Pure: no I/O, no logging, no NTS knowledge (the NTS
 * modules build on this one, not the other way round). */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* RFC 5905 section 7.2: the NTP service port. */
#define NTP_PORT 123

/* RFC 5905 section 7.3: the NTP header without extension fields or MAC. */
#define NTP_HEADER_SIZE 48

/* RFC 7822 section 3: extension field header, word alignment and minimum length (the
 * length counts the header). */
#define NTP_EF_HEADER_SIZE 4
#define NTP_EF_MIN_SIZE 16

/* RFC 5905 section 7.3: leap indicator, version and mode share the first octet. */
enum {
        NTP_LEAP_NONE = 0,
        NTP_LEAP_PLUSSEC = 1,
        NTP_LEAP_MINUSSEC = 2,
        NTP_LEAP_NOTINSYNC = 3,
};

enum {
        NTP_MODE_CLIENT = 3,
        NTP_MODE_SERVER = 4,
};

#define NTP_VERSION 4
/* RFC 5905 section 7.3: stratum 0 means a kiss-o'-death packet; 16 is unsynchronized. */
#define NTP_STRATUM_KISS 0
#define NTP_STRATUM_MAX 15
#define NTP_STRATUM_UNSYNC 16

/* Signed, for offsets and other differences of NTP times. */
#define NTP_NSEC_PER_SEC INT64_C(1000000000)

/* RFC 5905 section 6: seconds from the NTP epoch (1900) to the Unix epoch (1970). */
#define NTP_UNIX_EPOCH_OFFSET UINT64_C(2208988800)

/* RFC 5905 section 6: 32.32 fixed point seconds since 1900 (era 0; see ntp_ts_to_timespec). */
typedef struct NTPTimestamp {
        uint32_t seconds;
        uint32_t fraction;
} NTPTimestamp;

/* RFC 5905 section 6: 16.16 fixed point seconds. */
typedef struct NTPShort {
        uint16_t seconds;
        uint16_t fraction;
} NTPShort;

typedef struct NTPHeader {
        uint8_t leap;           /* 2 bits */
        uint8_t version;        /* 3 bits */
        uint8_t mode;           /* 3 bits */
        uint8_t stratum;
        int8_t poll;            /* log2 seconds */
        int8_t precision;       /* log2 seconds */
        NTPShort root_delay;
        NTPShort root_dispersion;
        uint8_t refid[4];
        NTPTimestamp reference;
        NTPTimestamp origin;
        NTPTimestamp receive;
        NTPTimestamp transmit;
} NTPHeader;

/* Writes exactly NTP_HEADER_SIZE bytes. */
void ntp_header_encode(const NTPHeader *h, uint8_t buf[static NTP_HEADER_SIZE]);
/* Reads the first NTP_HEADER_SIZE bytes; the caller checks the length. */
void ntp_header_decode(const uint8_t buf[static NTP_HEADER_SIZE], NTPHeader *ret);

/* Kiss code of a stratum 0 packet, such as "RATE" or "NTSN". */
static inline bool ntp_header_is_kiss(const NTPHeader *h, const char code[static 4]) {
        return h->stratum == NTP_STRATUM_KISS && __builtin_memcmp(h->refid, code, 4) == 0;
}

/* Conversions. NTP era 0 ends in 2036: timestamps whose seconds are below 2^31 are taken to
 * be in era 1 (2036-2104), as RFC 5905 section 6 suggests for dates after 1968. */
NTPTimestamp ntp_ts_from_timespec(const struct timespec *ts);
struct timespec ntp_ts_to_timespec(NTPTimestamp t);
/* Nanoseconds since the Unix epoch; saturating. */
int64_t ntp_ts_to_nsec(NTPTimestamp t);
NTPTimestamp ntp_ts_from_nsec(int64_t nsec);
static inline bool ntp_ts_equal(NTPTimestamp a, NTPTimestamp b) {
        return a.seconds == b.seconds && a.fraction == b.fraction;
}
static inline bool ntp_ts_is_zero(NTPTimestamp t) {
        return t.seconds == 0 && t.fraction == 0;
}
/* Nanoseconds of a 16.16 value. */
int64_t ntp_short_to_nsec(NTPShort s);
NTPShort ntp_short_from_nsec(int64_t nsec);

/* ---- the arithmetic of one exchange ---- */

/* RFC 5905 section 7.2: the frequency tolerance PHI, 15 ppm: how fast the error of a sample
 * may grow while it ages. */
#define NTP_PHI_PPM 15

/* RFC 5905 section 8: t1 client transmit, t2 server receive, t3 server transmit, t4 client
 * receive, all in nanoseconds since the Unix epoch. */
typedef struct NTPSample {
        int64_t offset_nsec;    /* ((t2 - t1) + (t3 - t4)) / 2: positive when we are behind */
        int64_t delay_nsec;     /* (t4 - t1) - (t3 - t2); negative only if a clock jumped or the
                                 * server claims to have held the request longer than the round trip */
} NTPSample;

/* For timestamps from ntp_ts_to_nsec() (about 1968 to 2104), nothing overflows. */
NTPSample ntp_sample_compute(int64_t t1, int64_t t2, int64_t t3, int64_t t4);

/* RFC 5905 section 7.3: the server's own root distance as its header states it, half its root
 * delay plus its root dispersion. This is what RootDistanceMaxSec= bounds, as in stock
 * timesyncd, and what the kernel is told as the maximum error. */
int64_t ntp_root_distance_nsec(const NTPHeader *h);

/* 2^precision seconds (a precision field, RFC 5905 section 7.3) in nanoseconds, rounded up, so
 * that a clock finer than a nanosecond still counts 1 ns; saturating. */
int64_t ntp_precision_nsec(int8_t precision);

/* RFC 5905 section 8: the dispersion of a sample, the part of its error bound that the delay
 * does not cover: the precision of both clocks plus PHI times the time since t1. At t4 that is
 * the round trip; passing the time since t1 at a later moment gives the dispersion grown by
 * the sample's age (RFC 5905 section 10). Saturating; a negative time counts as 0. */
int64_t ntp_dispersion_nsec(int8_t server_precision, int8_t local_precision, int64_t since_t1_nsec);

/* RFC 5905 section 11.2 (root_dist() of appendix A.5.5.2 without the jitter term): the bound on
 * the error of this sample's offset, so that the true offset lies in
 * [offset - root distance, offset + root distance] if the server is honest:
 *     (delay + root delay) / 2 + root dispersion + dispersion.
 * A negative delay counts as 0; the caller adds jitter to the dispersion if it wants it.
 * Saturating. */
int64_t ntp_sample_root_distance_nsec(const NTPSample *s, const NTPHeader *h, int64_t dispersion_nsec);
