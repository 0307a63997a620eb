/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include "iovec-util.h"
#include "log.h"
#include "nts-ntp-client.h"
#include "random-util.h"
#include "time-util.h"

void NTS_ntp_result_done(NTS_NTPResult *r) {
        if (!r)
                return;

        for (size_t i = 0; i < r->n_cookies; i++)
                iovec_done_erase(&r->cookies[i]);
        r->n_cookies = 0;
}

/* Nanoseconds, not time-util's microseconds: NTP timestamps resolve far below a microsecond. */
static int64_t realtime_nsec(void) {
        struct timespec ts;

        assert_se(clock_gettime(CLOCK_REALTIME, &ts) == 0);
        return (int64_t) ts.tv_sec * (int64_t) NSEC_PER_SEC + ts.tv_nsec;
}

/* Waits for a server reply whose origin timestamp is our transmit timestamp. Returns its
 * length, -ETIMEDOUT, or a socket error. */
static ssize_t ntp_client_receive(int fd, const NTPTimestamp *sent, usec_t deadline, uint8_t *buf,
                                  size_t size, int64_t *ret_received, NTPHeader *ret_header) {
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                usec_t t = now(CLOCK_MONOTONIC);
                NTPHeader h;
                ssize_t n;

                if (t >= deadline)
                        return -ETIMEDOUT;

                /* Round up, so that a wait shorter than a millisecond does not spin. */
                usec_t left_msec = (deadline - t + USEC_PER_MSEC - 1) / USEC_PER_MSEC;
                if (poll(&pfd, 1, (int) MIN(left_msec, (usec_t) INT32_MAX)) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }

                /* MSG_TRUNC: the datagram's real length, also when it did not fit. */
                n = recv(fd, buf, size, MSG_DONTWAIT | MSG_TRUNC);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                continue;
                        return -errno;
                }
                *ret_received = realtime_nsec();

                if ((size_t) n < NTP_HEADER_SIZE)
                        continue;
                /* Its first bytes may parse, and with NTS even verify (fields after the
                 * authenticator are not covered by it): a reply cut by our buffer is never used. */
                if ((size_t) n > size) {
                        log_debug("Ignoring a packet of %zi bytes, larger than any reply we accept.", n);
                        continue;
                }
                ntp_header_decode(buf, &h);
                if (h.mode != NTP_MODE_SERVER || h.version != NTP_VERSION ||
                    !ntp_ts_equal(h.origin, *sent)) {
                        log_debug("Ignoring a packet that is not a reply to our request.");
                        continue;
                }

                *ret_header = h;
                return n;
        }
}

/* Without keys in p: a plain NTPv4 request whose reply is taken as it comes. */
static int ntp_client_query(const SocketAddress *server, const NTS_NTPQueryParams *p, NTS_NTPResult *ret) {
        uint8_t request[NTS_MAX_PACKET_SIZE], reply[NTS_MAX_PACKET_SIZE], scratch[NTS_MAX_PACKET_SIZE];
        NTS_Query q = {
                .cookie = p->cookie,
                .n_placeholders = p->n_placeholders,
                .c2s = p->c2s,
        };
        NTPHeader h = {
                .leap = NTP_LEAP_NONE,
                .version = NTP_VERSION,
                .mode = NTP_MODE_CLIENT,
        };
        NTS_Receipt receipt = {};
        _cleanup_close_ int fd = -EBADF;
        int64_t t1, t4 = 0;
        usec_t deadline;
        ssize_t n, len;
        int r;

        assert(server);
        assert(p);
        assert(ret);

        *ret = (NTS_NTPResult) {};

        /* The transmit timestamp is only matched against the origin of the reply: random bytes
         * keep our clock private and make blind spoofing harder (RFC 9109 section 3). */
        r = random_bytes(&h.transmit, sizeof(h.transmit));
        if (r < 0)
                return r;
        ntp_header_encode(&h, request);

        n = NTP_HEADER_SIZE;
        if (p->c2s) {
                n = NTS_add_extension_fields(request, sizeof(request), NTP_HEADER_SIZE, &q);
                if (n < 0)
                        return (int) n;
        }

        fd = socket(server->sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* Connected: the kernel drops datagrams from other sources. */
        if (connect(fd, (const struct sockaddr *) &server->sa, server->len) < 0)
                return -errno;

        deadline = now(CLOCK_MONOTONIC);
        deadline = p->timeout_usec > USEC_INFINITY - deadline ? USEC_INFINITY
                                                              : deadline + p->timeout_usec;
        t1 = realtime_nsec();
        if (send(fd, request, (size_t) n, 0) < 0)
                return -errno;
        ret->request_size = (size_t) n;

        len = ntp_client_receive(fd, &h.transmit, deadline, reply, sizeof(reply), &t4,
                                 &ret->header);
        if (len < 0)
                return (int) len;
        ret->reply_size = (size_t) len;

        if (p->s2c) {
                r = NTS_parse_extension_fields(&IOVEC_MAKE(reply, (size_t) len), &q, p->s2c,
                                               &IOVEC_MAKE(scratch, sizeof(scratch)), &receipt);
                if (r < 0) {
                        ret->nts_error = receipt.error;
                        return r;
                }
        }

        if (ret->header.stratum == NTP_STRATUM_KISS) {
                memcpy(ret->kiss, ret->header.refid, 4);
                return -EPROTO;
        }

        for (size_t i = 0; i < receipt.n_cookies; i++) {
                r = iovec_memdup(&receipt.cookies[i], &ret->cookies[i]);
                if (r < 0) {
                        NTS_ntp_result_done(ret);
                        return r;
                }
                ret->n_cookies++;
        }
        explicit_bzero_safe(scratch, sizeof(scratch));

        ret->sample = ntp_sample_compute(t1, ntp_ts_to_nsec(ret->header.receive),
                                         ntp_ts_to_nsec(ret->header.transmit), t4);
        return 0;
}

int NTS_ntp_client_query(const SocketAddress *server, const NTS_NTPQueryParams *p, NTS_NTPResult *ret) {
        assert(p);
        assert(p->c2s && p->s2c);

        return ntp_client_query(server, p, ret);
}

int NTS_ntp_client_query_unauthenticated(const SocketAddress *server, uint64_t timeout_usec, NTS_NTPResult *ret) {
        return ntp_client_query(server, &(const NTS_NTPQueryParams) { .timeout_usec = timeout_usec }, ret);
}
