/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The 48-byte NTPv4 header (RFC 5905 section 7.3) and NTP timestamps, for the daemon, the
 * query tool and the test servers. Pure: no I/O. */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "nts_definitions.h"

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
