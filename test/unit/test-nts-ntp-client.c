/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The blocking NTP exchange of the query tools (nts-ntp-client): which packets count as the
 * reply to our request, and what a reply that is one says. A thread plays the server on a
 * loopback UDP socket: it reads the request and answers with the packets a table row lists, in
 * order; the exchange must skip every packet that is no reply to it and decide on the first
 * that is. */

#include "ntp-responder.h"
#include "nts-ntp-client.h"
#include "tests.h"

typedef enum Packet {
        PACKET_END,
        PACKET_GOOD,            /* a server reply to the request */
        PACKET_SHORT,           /* shorter than an NTP header */
        PACKET_TOO_BIG,         /* larger than any reply the exchange accepts */
        PACKET_MODE_CLIENT,     /* the request's own mode */
        PACKET_VERSION_3,
        PACKET_WRONG_ORIGIN,    /* not the request's transmit timestamp */
        PACKET_KISS_DENY,       /* a reply: a kiss-o'-death */
        PACKET_GOOD_LATER,      /* another reply, after the first */
} Packet;

#define PACKETS_MAX 8

static bool reply(void *userdata, size_t i, const NTPHeader *request, NTPHeader *h, size_t *size) {
        const Packet *packets = userdata;
        struct timespec ts;
        int64_t t;

        if (i >= PACKETS_MAX || packets[i] == PACKET_END)
                return false;

        /* 100 s ahead of the machine's clock. */
        ASSERT_OK(clock_gettime(CLOCK_REALTIME, &ts));
        t = (int64_t) ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec + 100 * (int64_t) NSEC_PER_SEC;
        h->receive = h->transmit = ntp_ts_from_nsec(t);

        switch (packets[i]) {
        case PACKET_SHORT:
                *size = NTP_HEADER_SIZE - 1;
                break;
        case PACKET_TOO_BIG:
                *size = NTS_MAX_PACKET_SIZE + 1;
                break;
        case PACKET_MODE_CLIENT:
                h->mode = NTP_MODE_CLIENT;
                break;
        case PACKET_VERSION_3:
                h->version = 3;
                break;
        case PACKET_WRONG_ORIGIN:
                h->origin.fraction ^= 1;
                break;
        case PACKET_KISS_DENY:
                h->stratum = NTP_STRATUM_KISS;
                memcpy(h->refid, "DENY", 4);
                break;
        default:
                break;
        }
        /* A skipped packet that were taken would show in the stratum. */
        if (packets[i] != PACKET_GOOD && packets[i] != PACKET_KISS_DENY)
                h->stratum = 9;
        return true;
}

static void test_the_first_reply_to_the_request_decides(void) {
        static const struct {
                const char *name;
                Packet packets[PACKETS_MAX];
                int r;
                const char *kiss;
                uint8_t stratum;        /* of the reply that decided */
        } table[] = {
                { "a reply", { PACKET_GOOD }, 0, "", 2 },
                { "a packet shorter than a header is skipped", { PACKET_SHORT, PACKET_GOOD }, 0, "", 2 },
                { "a packet larger than any reply is skipped", { PACKET_TOO_BIG, PACKET_GOOD }, 0, "", 2 },
                { "a client packet is skipped", { PACKET_MODE_CLIENT, PACKET_GOOD }, 0, "", 2 },
                { "another version is skipped", { PACKET_VERSION_3, PACKET_GOOD }, 0, "", 2 },
                { "a reply to another request is skipped", { PACKET_WRONG_ORIGIN, PACKET_GOOD }, 0, "", 2 },
                { "all of them before the reply",
                  { PACKET_SHORT, PACKET_TOO_BIG, PACKET_MODE_CLIENT, PACKET_VERSION_3, PACKET_WRONG_ORIGIN,
                    PACKET_GOOD },
                  0, "", 2 },
                { "the first reply, not a later one", { PACKET_GOOD, PACKET_GOOD_LATER }, 0, "", 2 },
                { "a kiss-o'-death is the reply", { PACKET_KISS_DENY, PACKET_GOOD }, -EPROTO, "DENY", 0 },
                { "no reply to the request: a timeout", { PACKET_WRONG_ORIGIN, PACKET_MODE_CLIENT }, -ETIMEDOUT,
                  "", 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                NTS_NTPResult res;
                NTPResponder server;
                bool timeout = table[i].r == -ETIMEDOUT;
                int r;

                log_info("case: %s", table[i].name);
                ntp_responder_start(&server, reply, (void *) table[i].packets);
                /* The exchange ends at the reply; only a row without one waits for the
                 * timeout, which is then its result whatever the machine's speed. */
                r = NTS_ntp_client_query_unauthenticated(&server.address,
                                                         timeout ? 200 * USEC_PER_MSEC : 60 * USEC_PER_SEC, &res);
                ntp_responder_stop(&server);

                ASSERT_EQ(r, table[i].r);
                ASSERT_EQ(res.request_size, (size_t) NTP_HEADER_SIZE);
                ASSERT_STREQ(res.kiss, table[i].kiss);
                if (timeout) {
                        ASSERT_EQ(res.reply_size, 0u);
                        continue;
                }
                ASSERT_EQ(res.reply_size, (size_t) NTP_HEADER_SIZE);
                ASSERT_EQ(res.header.stratum, table[i].stratum);
                ASSERT_EQ(res.header.mode, NTP_MODE_SERVER);
                if (r == 0) {
                        /* The server is 100 s ahead; the exchange took far less than that. */
                        ASSERT_TRUE(res.sample.offset_nsec > 50 * (int64_t) NSEC_PER_SEC);
                        ASSERT_TRUE(res.sample.offset_nsec < 150 * (int64_t) NSEC_PER_SEC);
                }
                ASSERT_EQ(res.n_cookies, 0u);
                NTS_ntp_result_done(&res);
        }
}

TEST_MAIN(TEST_CASE(test_the_first_reply_to_the_request_decides))
