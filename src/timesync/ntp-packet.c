/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <string.h>

#include "macro.h"
#include "ntp-packet.h"
#include "unaligned.h"

static void put_ts(uint8_t *p, NTPTimestamp t) {
        unaligned_write_be32(p, t.seconds);
        unaligned_write_be32(p + 4, t.fraction);
}

static NTPTimestamp get_ts(const uint8_t *p) {
        return (NTPTimestamp) { unaligned_read_be32(p), unaligned_read_be32(p + 4) };
}

void ntp_header_encode(const NTPHeader *h, uint8_t buf[static NTP_HEADER_SIZE]) {
        buf[0] = (uint8_t) ((h->leap & 3) << 6 | (h->version & 7) << 3 | (h->mode & 7));
        buf[1] = h->stratum;
        buf[2] = (uint8_t) h->poll;
        buf[3] = (uint8_t) h->precision;
        unaligned_write_be16(buf + 4, h->root_delay.seconds);
        unaligned_write_be16(buf + 6, h->root_delay.fraction);
        unaligned_write_be16(buf + 8, h->root_dispersion.seconds);
        unaligned_write_be16(buf + 10, h->root_dispersion.fraction);
        memcpy(buf + 12, h->refid, 4);
        put_ts(buf + 16, h->reference);
        put_ts(buf + 24, h->origin);
        put_ts(buf + 32, h->receive);
        put_ts(buf + 40, h->transmit);
}

void ntp_header_decode(const uint8_t buf[static NTP_HEADER_SIZE], NTPHeader *ret) {
        *ret = (NTPHeader) {
                .leap = buf[0] >> 6,
                .version = (buf[0] >> 3) & 7,
                .mode = buf[0] & 7,
                .stratum = buf[1],
                .poll = (int8_t) buf[2],
                .precision = (int8_t) buf[3],
                .root_delay = { unaligned_read_be16(buf + 4), unaligned_read_be16(buf + 6) },
                .root_dispersion = { unaligned_read_be16(buf + 8), unaligned_read_be16(buf + 10) },
                .reference = get_ts(buf + 16),
                .origin = get_ts(buf + 24),
                .receive = get_ts(buf + 32),
                .transmit = get_ts(buf + 40),
        };
        memcpy(ret->refid, buf + 12, 4);
}

static int64_t ntp_seconds_to_unix(uint32_t seconds) {
        /* Era 1 for values below 2^31 (dates after 2036-02-07). */
        int64_t s = (int64_t) seconds - (int64_t) NTP_UNIX_EPOCH_OFFSET;
        if (seconds < UINT32_C(0x80000000))
                s += INT64_C(1) << 32;
        return s;
}

struct timespec ntp_ts_to_timespec(NTPTimestamp t) {
        return (struct timespec) {
                .tv_sec = (time_t) ntp_seconds_to_unix(t.seconds),
                .tv_nsec = (long) (((uint64_t) t.fraction * (uint64_t) NTP_NSEC_PER_SEC) >> 32),
        };
}

int64_t ntp_ts_to_nsec(NTPTimestamp t) {
        struct timespec ts = ntp_ts_to_timespec(t);
        return (int64_t) ts.tv_sec * NTP_NSEC_PER_SEC + ts.tv_nsec;
}

NTPTimestamp ntp_ts_from_timespec(const struct timespec *ts) {
        uint64_t frac = (((uint64_t) ts->tv_nsec) << 32) / (uint64_t) NTP_NSEC_PER_SEC;
        return (NTPTimestamp) {
                .seconds = (uint32_t) ((uint64_t) ts->tv_sec + NTP_UNIX_EPOCH_OFFSET),
                .fraction = (uint32_t) frac,
        };
}

NTPTimestamp ntp_ts_from_nsec(int64_t nsec) {
        struct timespec ts = {
                .tv_sec = (time_t) (nsec / NTP_NSEC_PER_SEC),
                .tv_nsec = (long) (nsec % NTP_NSEC_PER_SEC),
        };
        if (ts.tv_nsec < 0) {
                ts.tv_sec--;
                ts.tv_nsec += NTP_NSEC_PER_SEC;
        }
        return ntp_ts_from_timespec(&ts);
}

int64_t ntp_short_to_nsec(NTPShort s) {
        return (int64_t) s.seconds * NTP_NSEC_PER_SEC + (((int64_t) s.fraction * NTP_NSEC_PER_SEC) >> 16);
}

NTPShort ntp_short_from_nsec(int64_t nsec) {
        if (nsec <= 0)
                return (NTPShort) {};
        if (nsec >= INT64_C(65536) * NTP_NSEC_PER_SEC)
                return (NTPShort) { UINT16_MAX, UINT16_MAX };
        return (NTPShort) {
                .seconds = (uint16_t) (nsec / NTP_NSEC_PER_SEC),
                .fraction = (uint16_t) (((nsec % NTP_NSEC_PER_SEC) << 16) / NTP_NSEC_PER_SEC),
        };
}

/* ---- the arithmetic of one exchange ---- */

NTPSample ntp_sample_compute(int64_t t1, int64_t t2, int64_t t3, int64_t t4) {
        /* Halve each difference before adding, so that the sum cannot overflow. */
        return (NTPSample) {
                .offset_nsec = (t2 - t1) / 2 + (t3 - t4) / 2,
                .delay_nsec = (t4 - t1) - (t3 - t2),
        };
}

int64_t ntp_root_distance_nsec(const NTPHeader *h) {
        return ntp_short_to_nsec(h->root_delay) / 2 + ntp_short_to_nsec(h->root_dispersion);
}

int64_t ntp_precision_nsec(int8_t precision) {
        if (precision >= 0)
                /* 2^33 s is the largest power of two below INT64_MAX nanoseconds. */
                return precision > 33 ? INT64_MAX : NTP_NSEC_PER_SEC << precision;
        if (precision < -30)
                return 1;
        return (NTP_NSEC_PER_SEC + (INT64_C(1) << -precision) - 1) >> -precision;
}

int64_t ntp_dispersion_nsec(int8_t server_precision, int8_t local_precision, int64_t since_t1_nsec) {
        int64_t t = MAX(since_t1_nsec, INT64_C(0)), growth;

        /* PHI * t in two parts, so that nothing overflows for any t. */
        growth = t / 1000000 * NTP_PHI_PPM + (t % 1000000) * NTP_PHI_PPM / 1000000;
        return int64_add_saturating(int64_add_saturating(ntp_precision_nsec(server_precision),
                                             ntp_precision_nsec(local_precision)),
                              growth);
}

int64_t ntp_sample_root_distance_nsec(const NTPSample *s, const NTPHeader *h, int64_t dispersion_nsec) {
        int64_t delay = int64_add_saturating(MAX(s->delay_nsec, INT64_C(0)), ntp_short_to_nsec(h->root_delay));

        return int64_add_saturating(int64_add_saturating(delay / 2, ntp_short_to_nsec(h->root_dispersion)),
                              MAX(dispersion_nsec, INT64_C(0)));
}
