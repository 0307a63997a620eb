/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The renewal of an NTS client's keys (timesyncd-nts-client.c): it starts at its drawn time on
 * its own timer, without a request; the keys in the jar serve the requests while it runs and
 * after it failed; past their limit they are dropped, whatever runs; new keys for another NTP
 * server are used only once the owner asked for the server again. The keys are made up (their
 * AEAD contexts come from the real libcrypto), the key exchange goes to a port of 127.0.0.1 that
 * refuses connections, and every wait is a bounded poll of the event loop. */

#include <netinet/in.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "ntp-packet.h"
#include "nts-client-test-util.h"
#include "nts-jar-test-util.h"
#include "string-util.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-clock.h"
#include "timesyncd-nts-client-internal.h"

/* Rounds of the loop a wait may take, each at most 100 ms: far more than any of them needs. */
#define ROUNDS_MAX 300

static void handler(NTSClient *c, NTSClientEvent e, void *userdata) {
        unsigned *events = userdata;

        events[e]++;
}

/* A TCP port of 127.0.0.1 that refuses connections: bound, never listening, for as long as
 * the returned socket is open. */
static int closed_port(uint16_t *ret) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htobe32(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd;

        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(bind(fd, (struct sockaddr *) &sa, sizeof sa) >= 0);
        ASSERT_TRUE(getsockname(fd, (struct sockaddr *) &sa, &len) >= 0);
        *ret = be16toh(sa.sin_port);
        return fd;
}

/* Runs the loop while the client's state is `from` (busy: any busy state). */
static NTSClientState run_while(sd_event *e, NTSClient *c, bool busy, NTSClientState from) {
        for (unsigned i = 0; i < ROUNDS_MAX; i++) {
                if (busy ? !nts_client_state_busy(nts_client_state(c)) : nts_client_state(c) != from)
                        break;
                ASSERT_OK(sd_event_run(e, 100 * USEC_PER_MSEC));
        }
        return nts_client_state(c);
}

static ssize_t seal(NTSClient *c) {
        uint8_t buf[NTS_MAX_PACKET_SIZE] = {};

        return nts_client_seal(c, buf, sizeof buf);
}

static void test_keys_are_renewed_on_time_without_a_request_and_serve_until_their_limit(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ClockBackend *clock = NULL;
        _cleanup_close_ int closed = -EBADF;
        unsigned events[_NTS_CLIENT_EVENT_MAX] = {};
        NTSClientSettings settings;
        NTSClient *c;
        usec_t limit;
        uint16_t port;

        ASSERT_OK(nts_client_load_libraries());
        closed = closed_port(&port);
        ASSERT_OK(sd_event_new(&e));
        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_OBSERVE, &clock));
        settings = (NTSClientSettings) {
                .event = e,
                .clock = clock,
                .ke_timeout_usec = 10 * USEC_PER_SEC,
                .retry_usec = 30 * USEC_PER_SEC,
        };
        ASSERT_OK(nts_client_new(&settings, "127.0.0.1", "127.0.0.1", port, handler, events, &c));

        /* Keys 2 s short of their limit, as a key exchange would have left them: the renewal time
         * is drawn from the 2 s left. */
        limit = now(CLOCK_REALTIME) + 2 * USEC_PER_SEC;
        c->jar_loaded = true;
        test_jar_make(&c->jar, 3, limit - NTS_JAR_MAX_AGE_USEC);
        ASSERT_OK(nts_client_make_contexts(c));
        nts_client_enter(c, NTS_CLIENT_READY);
        nts_client_schedule_renewal(c);
        ASSERT_TRUE(c->renew_realtime <= limit);
        ASSERT_EQ(nts_client_prepare(c), NTS_CLIENT_READY);

        /* No request goes out, and yet the key exchange starts: at the drawn time. */
        ASSERT_TRUE(nts_client_state_busy(run_while(e, c, false, NTS_CLIENT_READY)));
        ASSERT_TRUE(now(CLOCK_REALTIME) >= c->renew_realtime);
        /* While it runs, the keys in the jar serve a request. How long the loop took to get
         * here must not matter: the keys are made younger. */
        c->jar.ke_realtime += USEC_PER_HOUR;
        ASSERT_EQ(test_nts_report(c).cookies, 3u);
        ASSERT_TRUE(seal(c) > NTP_HEADER_SIZE);
        ASSERT_EQ(test_nts_report(c).cookies, 2u);

        /* The server refuses the connection: the client backs off, reports it, and the keys
         * still serve, until the retry (30 s or more away) or their limit. */
        ASSERT_EQ(run_while(e, c, true, _NTS_CLIENT_STATE_INVALID), NTS_CLIENT_BACKING_OFF);
        ASSERT_OK(sd_event_run(e, 0));
        ASSERT_EQ(events[NTS_CLIENT_EVENT_KE_FAILED], 1u);
        ASSERT_EQ(events[NTS_CLIENT_EVENT_KEYS], 0u);
        ASSERT_TRUE(test_nts_report(c).aead);
        ASSERT_TRUE(seal(c) > NTP_HEADER_SIZE);

        /* Past the limit no request goes out: the keys are dropped, and as no key exchange
         * may run before the retry, the owner hears at once that the client backs off. */
        c->jar.ke_realtime = now(CLOCK_REALTIME) - NTS_JAR_MAX_AGE_USEC - 1;
        ASSERT_EQ(seal(c), 0);
        ASSERT_EQ(test_nts_report(c).cookies, 0u);
        ASSERT_FALSE(test_nts_report(c).aead);
        ASSERT_EQ(nts_client_state(c), NTS_CLIENT_BACKING_OFF);
        ASSERT_OK(sd_event_run(e, 0));
        ASSERT_EQ(events[NTS_CLIENT_EVENT_KE_FAILED], 2u);

        nts_client_free(c);
        clock_backend_free(clock);
}

/* A renewal that ended between two requests may bring keys for another NTP server (a pool's
 * other member): no request goes to the server polled with cookies for the other one, the
 * owner is told and polls the new server once it asked again. */
static void test_renewed_keys_for_another_server_make_the_owner_ask_again(void) {
        static const struct {
                const char *name;
                const char *server;
                uint16_t port;
                bool moved;
        } table[] = {
                { "the same server: the requests go on", "192.0.2.1", 123, false },
                { "another name", "192.0.2.99", 123, true },
                { "another port", "192.0.2.1", 10123, true },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                unsigned events[_NTS_CLIENT_EVENT_MAX] = {};
                NTSClientSettings settings;
                NTSClient *c;

                log_info("case: %s", table[i].name);
                ASSERT_OK(sd_event_new(&e));
                settings = (NTSClientSettings) { .event = e, .retry_usec = 30 * USEC_PER_SEC };
                ASSERT_OK(nts_client_new(&settings, "nts.example", "nts.example", 0, handler, events, &c));
                c->jar_loaded = true;
                test_jar_make(&c->jar, 3, now(CLOCK_REALTIME));
                ASSERT_OK(nts_client_make_contexts(c));
                nts_client_enter(c, NTS_CLIENT_READY);
                nts_client_schedule_renewal(c);
                ASSERT_EQ(nts_client_prepare(c), NTS_CLIENT_READY);
                ASSERT_STREQ(nts_client_ntp_host(c), "192.0.2.1");
                ASSERT_TRUE(seal(c) > NTP_HEADER_SIZE);

                /* What a renewal leaves in the jar (nts_client_take_result()). */
                ASSERT_OK(free_and_strdup(&c->jar.ntp_server, table[i].server));
                c->jar.ntp_port = table[i].port;

                if (!table[i].moved) {
                        ASSERT_TRUE(seal(c) > NTP_HEADER_SIZE);
                        ASSERT_OK(sd_event_run(e, 0));
                        ASSERT_EQ(events[NTS_CLIENT_EVENT_KEYS], 0u);
                } else {
                        ASSERT_EQ(seal(c), 0);
                        ASSERT_EQ(test_nts_report(c).cookies, 2u);
                        ASSERT_OK(sd_event_run(e, 0));
                        ASSERT_EQ(events[NTS_CLIENT_EVENT_KEYS], 1u);
                        ASSERT_EQ(nts_client_prepare(c), NTS_CLIENT_READY);
                        ASSERT_STREQ(nts_client_ntp_host(c), table[i].server);
                        ASSERT_EQ(nts_client_ntp_port(c), table[i].port);
                        ASSERT_TRUE(seal(c) > NTP_HEADER_SIZE);
                }
                nts_client_free(c);
        }
}

TEST_MAIN(TEST_CASE(test_keys_are_renewed_on_time_without_a_request_and_serve_until_their_limit),
          TEST_CASE(test_renewed_keys_for_another_server_make_the_owner_ask_again));
