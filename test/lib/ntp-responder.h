/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* An NTP responder for unit tests, in a thread of the test (the program
 * test/tools/mock-server/ntp-test-server is another thing): a UDP socket on 127.0.0.1 that
 * reads one request and answers it with the packets a callback makes, in order. */

#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ntp-packet.h"
#include "nts-definitions.h"
#include "socket-address.h"
#include "tests.h"

#define NTP_RESPONDER_PACKET_MAX (NTS_MAX_PACKET_SIZE + 64)

/* The i-th packet to send, as a reply to request: h comes filled as a server reply to it
 * (stratum 2, our clock's time), size NTP_HEADER_SIZE; the callback may change both (up to
 * NTP_RESPONDER_PACKET_MAX bytes). False: nothing more to send. */
typedef bool (*ntp_responder_reply_t)(void *userdata, size_t i, const NTPHeader *request, NTPHeader *h, size_t *size);

typedef struct NTPResponder {
        int fd;
        SocketAddress address;          /* where it listens */
        ntp_responder_reply_t reply;
        void *userdata;
        pthread_t thread;
} NTPResponder;

static inline void *ntp_responder_run(void *userdata) {
        NTPResponder *s = userdata;
        uint8_t request[NTP_RESPONDER_PACKET_MAX], packet[NTP_RESPONDER_PACKET_MAX] = {};
        struct sockaddr_storage from;
        socklen_t from_len = sizeof from;
        NTPHeader q;

        ASSERT_TRUE(recvfrom(s->fd, request, sizeof request, 0, (struct sockaddr *) &from, &from_len) >=
                    NTP_HEADER_SIZE);
        ntp_header_decode(request, &q);
        ASSERT_EQ(q.mode, NTP_MODE_CLIENT);
        ASSERT_EQ(q.version, NTP_VERSION);

        for (size_t i = 0;; i++) {
                NTPHeader h = {
                        .leap = NTP_LEAP_NONE,
                        .version = NTP_VERSION,
                        .mode = NTP_MODE_SERVER,
                        .stratum = 2,
                        .origin = q.transmit,
                };
                size_t size = NTP_HEADER_SIZE;
                struct timespec ts;

                ASSERT_OK(clock_gettime(CLOCK_REALTIME, &ts));
                h.receive = h.transmit = ntp_ts_from_timespec(&ts);
                if (!s->reply(s->userdata, i, &q, &h, &size))
                        break;
                ASSERT_TRUE(size <= sizeof packet);
                ntp_header_encode(&h, packet);
                ASSERT_EQ(sendto(s->fd, packet, size, 0, (struct sockaddr *) &from, from_len), (ssize_t) size);
        }
        return NULL;
}

static inline void ntp_responder_start(NTPResponder *s, ntp_responder_reply_t reply, void *userdata) {
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sin;

        *s = (NTPResponder) { .reply = reply, .userdata = userdata };
        s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(s->fd >= 0);
        ASSERT_OK(bind(s->fd, (struct sockaddr *) &sin, sizeof sin));
        ASSERT_OK(getsockname(s->fd, (struct sockaddr *) &sin, &len));
        ASSERT_OK(socket_address_from_string("127.0.0.1", ntohs(sin.sin_port), &s->address));
        ASSERT_EQ(pthread_create(&s->thread, NULL, ntp_responder_run, s), 0);
}

/* After the request was answered. */
static inline void ntp_responder_stop(NTPResponder *s) {
        ASSERT_EQ(pthread_join(s->thread, NULL), 0);
        ASSERT_OK(close(s->fd));
}
