/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "iovec-util.h"
#include "log.h"
#include "mock-ntp.h"
#include "ntp-packet.h"
#include "nts-server-ef.h"
#include "nts-extfields.h"
#include "nts-crypto.h"

static NTSServerSabotage ef_sabotage(Sabotage s) {
        switch (s) {
        case SABOTAGE_BAD_AUTH:
                return NTS_SERVER_CORRUPT_AUTHENTICATOR;
        case SABOTAGE_WRONG_UID:
                return NTS_SERVER_WRONG_UID;
        case SABOTAGE_NAK:
                return NTS_SERVER_NAK;
        case SABOTAGE_UNAUTHENTICATED:
                return NTS_SERVER_NO_AUTHENTICATOR;
        default:
                return NTS_SERVER_HONEST;
        }
}

/* An extension field type no NTS or NTP document assigns: the client skips it after the
 * authenticator. */
#define MOCK_FILLER_FIELD_TYPE 0xF0F0

/* SABOTAGE_OVERSIZED: the first NTS_MAX_PACKET_SIZE bytes of the answer are a valid, verifying
 * response (fields after the authenticator are not authenticated and ignored), so a client
 * that reads into a buffer of that size and parses what it got uses it; one more field makes
 * the datagram larger than that buffer. */
static ssize_t ntp_pad_oversized(uint8_t *out, size_t n, size_t n_out) {
        struct iovec rest = IOVEC_MAKE(out + n, n_out - n);

        assert(NTS_MAX_PACKET_SIZE - n >= NTP_EF_MIN_SIZE);
        if (NTS_ef_append(&rest, MOCK_FILLER_FIELD_TYPE, NULL, NTS_MAX_PACKET_SIZE - n - NTP_EF_HEADER_SIZE) < 0 ||
            NTS_ef_append(&rest, MOCK_FILLER_FIELD_TYPE, NULL, NTP_EF_MIN_SIZE - NTP_EF_HEADER_SIZE) < 0)
                return -ENOBUFS;
        return NTS_MAX_PACKET_SIZE + NTP_EF_MIN_SIZE;
}

static void aead_freep(NTS_AEADContext **c) {
        NTS_aead_free(*c);
}

typedef struct Answer {
        NTSServerSabotage sabotage;
        NTS_AEADContext *s2c;
        struct iovec cookies[NTS_MAX_COOKIES];
        size_t n_cookies;
} Answer;

/* Opens the cookie, checks the request's authenticator and makes fresh cookies. Anything
 * that fails makes the answer a NAK (RFC 8915 section 5.7). */
static int ntp_prepare(MockServer *s, const struct iovec *packet, const NTSServerRequest *req,
                       NTS_AEADContext **ret_s2c, uint8_t *cookie_buf, size_t cookie_buf_size,
                       struct iovec *cookies, size_t *ret_n_cookies) {
        _cleanup_(aead_freep) NTS_AEADContext *c2s = NULL, *s2c = NULL;
        MockSession session;
        size_t size, n;
        int r;

        r = mock_cookie_open(&s->key, &req->cookie, &session);
        if (r < 0)
                return log_info_errno(r, "NTP: cookie not ours or not for this key");

        r = NTS_aead_new(session.aead, &IOVEC_MAKE(session.c2s, session.key_size), &c2s);
        if (r >= 0)
                r = NTS_aead_new(session.aead, &IOVEC_MAKE(session.s2c, session.key_size), &s2c);
        if (r < 0) {
                explicit_bzero_safe(&session, sizeof(session));
                return log_error_errno(r, "NTP: failed to set up session keys: %m");
        }

        r = nts_server_verify_request(packet, req, c2s);
        if (r < 0) {
                explicit_bzero_safe(&session, sizeof(session));
                return log_info_errno(r, "NTP: request authenticator does not verify");
        }

        size = mock_cookie_size(session.aead);
        n = MIN(1 + req->n_placeholders, (size_t) NTS_MAX_COOKIES);
        if (n * size > cookie_buf_size)
                n = cookie_buf_size / size;
        for (size_t i = 0; i < n; i++) {
                r = mock_cookie_make(&s->key, session.aead, &IOVEC_MAKE(session.c2s, session.key_size),
                                     &IOVEC_MAKE(session.s2c, session.key_size), cookie_buf + i * size, size);
                if (r < 0) {
                        explicit_bzero_safe(&session, sizeof(session));
                        return log_error_errno(r, "NTP: failed to make a cookie: %m");
                }
                cookies[i] = IOVEC_MAKE(cookie_buf + i * size, size);
        }
        explicit_bzero_safe(&session, sizeof(session));

        *ret_s2c = TAKE_PTR(s2c);
        *ret_n_cookies = n;
        return 0;
}

/* --kiss=: an authenticated answer carries the kiss code instead of time, once --kiss-after=
 * requests got time. A NAK stays a NAK. */
static bool mock_ntp_kisses(const MockServer *s, NTSServerSabotage sabotage) {
        return s->kiss[0] != '\0' && sabotage != NTS_SERVER_NAK && s->n_ntp_requests >= s->kiss_after;
}

/* The time it serves: the system clock, shifted by --time-offset=. */
static void mock_ntp_now(const MockServer *s, struct timespec *ret) {
        int64_t ns;

        assert_se(clock_gettime(CLOCK_REALTIME, ret) == 0);
        ns = (int64_t) ret->tv_sec * NTP_NSEC_PER_SEC + ret->tv_nsec + s->time_offset_nsec;
        ret->tv_sec = (time_t) (ns / NTP_NSEC_PER_SEC);
        ret->tv_nsec = (long) (ns % NTP_NSEC_PER_SEC);
        if (ret->tv_nsec < 0) {
                ret->tv_sec--;
                ret->tv_nsec += NTP_NSEC_PER_SEC;
        }
}

/* plain_ntp: a bare header with the server's time, for a client that speaks NTP without NTS
 * (the stock daemon the accuracy benchmark compares with). */
static ssize_t ntp_answer_plain(MockServer *s, const NTPHeader *q, const struct timespec *rx,
                                uint8_t *out, size_t n_out) {
        struct timespec tx;
        NTPHeader h;

        assert(n_out >= NTP_HEADER_SIZE);
        mock_ntp_now(s, &tx);
        h = (NTPHeader) {
                .leap = s->leap,
                .version = q->version,
                .mode = NTP_MODE_SERVER,
                .stratum = 1,
                .poll = q->poll,
                .precision = -20,
                .root_dispersion = { .fraction = 0x100 },
                .refid = { 'M', 'O', 'C', 'K' },
                .reference = ntp_ts_from_timespec(rx),
                .origin = q->transmit,
                .receive = ntp_ts_from_timespec(rx),
                .transmit = ntp_ts_from_timespec(&tx),
        };
        ntp_header_encode(&h, out);
        s->n_ntp_plain++;
        return NTP_HEADER_SIZE;
}

static ssize_t ntp_answer(MockServer *s, const uint8_t *in, size_t n_in, const struct timespec *rx,
                          uint8_t *out, size_t n_out) {
        _cleanup_(aead_freep) NTS_AEADContext *s2c = NULL;
        uint8_t cookie_buf[NTS_MAX_COOKIES * 256];
        struct iovec cookies[NTS_MAX_COOKIES];
        const struct iovec packet = IOVEC_MAKE(in, n_in);
        uint8_t header[NTP_HEADER_SIZE];
        NTSServerSabotage sabotage;
        NTSServerRequest req;
        struct timespec tx;
        NTPHeader h, q;
        size_t n_cookies = 0;
        bool kiss;
        ssize_t n;
        int r;

        if (n_in < NTP_HEADER_SIZE)
                return log_debug_errno(EBADMSG, "NTP: short packet (%zu bytes)", n_in);
        ntp_header_decode(in, &q);
        if (q.mode != NTP_MODE_CLIENT || q.version < 3 || q.version > NTP_VERSION)
                return log_debug_errno(EBADMSG, "NTP: not a client request (mode %u, version %u)", q.mode, q.version);
        if (s->plain_ntp && n_in == NTP_HEADER_SIZE)
                return ntp_answer_plain(s, &q, rx, out, n_out);

        r = nts_server_parse_request(&packet, &req);
        if (r < 0)
                return log_info_errno(r, "NTP: not a well-formed NTS request");
        (void) mock_server_note_cookie(s, &req.cookie);

        sabotage = ef_sabotage(s->sabotage);
        if (s->sabotage == SABOTAGE_NAK_EVERY_SECOND && (s->n_ntp_requests + s->n_ntp_naks) % 2 == 1)
                sabotage = NTS_SERVER_NAK;
        if (sabotage != NTS_SERVER_NAK &&
            ntp_prepare(s, &packet, &req, &s2c, cookie_buf, sizeof(cookie_buf), cookies, &n_cookies) < 0)
                sabotage = NTS_SERVER_NAK;

        mock_ntp_now(s, &tx);
        h = (NTPHeader) {
                .leap = s->leap,
                .version = q.version,
                .mode = NTP_MODE_SERVER,
                .stratum = 1,
                .poll = q.poll,
                .precision = -20,
                .root_dispersion = { .fraction = 0x100 },
                .refid = { 'M', 'O', 'C', 'K' },
                .reference = ntp_ts_from_timespec(rx),
                .origin = q.transmit,
                .receive = ntp_ts_from_timespec(rx),
                .transmit = ntp_ts_from_timespec(&tx),
        };
        kiss = mock_ntp_kisses(s, sabotage);
        if (kiss) {
                /* RFC 5905 section 7.4: stratum 0, the code in the reference ID, no time. */
                h.leap = NTP_LEAP_NOTINSYNC;
                h.stratum = NTP_STRATUM_KISS;
                memcpy(h.refid, s->kiss, sizeof(h.refid));
                h.reference = h.receive = h.transmit = (NTPTimestamp) {};
        }
        ntp_header_encode(&h, header);

        n = nts_server_build_response(&(NTSServerResponse) {
                                              .header = header,
                                              .uid = req.uid,
                                              .cookies = cookies,
                                              .n_cookies = n_cookies,
                                              .s2c = s2c,
                                              .sabotage = sabotage,
                                      },
                                      out, n_out);
        explicit_bzero_safe(cookie_buf, sizeof(cookie_buf));
        if (n >= 0 && s->sabotage == SABOTAGE_OVERSIZED)
                n = ntp_pad_oversized(out, (size_t) n, n_out);
        if (n < 0)
                return log_error_errno((int) n, "NTP: failed to build the response: %m");

        if (sabotage == NTS_SERVER_NAK)
                s->n_ntp_naks++;
        else if (kiss)
                s->n_ntp_kisses++;
        else
                s->n_ntp_requests++;
        mock_server_write_counts(s);
        return n;
}

static int ntp_io_handler(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        MockServer *s = userdata;
        uint8_t in[NTS_MAX_PACKET_SIZE], out[NTS_MAX_PACKET_SIZE + NTP_EF_MIN_SIZE];
        union {
                struct sockaddr sa;
                struct sockaddr_storage storage;
        } peer;
        socklen_t peer_len = sizeof(peer);
        struct timespec rx;
        ssize_t n;

        n = recvfrom(fd, in, sizeof(in), MSG_DONTWAIT | MSG_TRUNC, &peer.sa, &peer_len);
        if (n < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        log_error_errno(errno, "NTP: recvfrom: %m");
                return 0;
        }
        mock_ntp_now(s, &rx);
        if ((size_t) n > sizeof(in)) {
                log_info("NTP: packet of %zi bytes is too large, dropped", n);
                return 0;
        }

        n = ntp_answer(s, in, n, &rx, out, sizeof(out));
        if (n < 0)
                return 0;

        if (sendto(fd, out, n, MSG_DONTWAIT, &peer.sa, peer_len) < 0)
                log_info_errno(errno, "NTP: sendto: %m");
        return 0;
}

int mock_ntp_listen(MockServer *s, int fd) {
        return sd_event_add_io(s->event, NULL, fd, EPOLLIN, ntp_io_handler, s);
}
