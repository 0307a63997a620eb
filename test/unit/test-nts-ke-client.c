/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Where a key-exchange session fails (nts-ke-client), before any KE record is read: which
 * parameters are refused at the start, and the stage a failed session names for a server that
 * refuses the connection, closes it, answers without TLS or stays silent, with the addresses
 * tried in order. The servers are sockets of this process on loopback; none speaks TLS (the
 * whole exchange against real servers is in test/integration/client/test-nts-exchange.c). */

#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nts-ke-client.h"
#include "string-util.h"
#include "tests.h"

typedef enum Behaviour {
        SERVER_NONE,            /* the list ends */
        SERVER_REFUSES,         /* bound, not listening: the connection is refused */
        SERVER_CLOSES,          /* accepts and closes at once */
        SERVER_NO_TLS,          /* accepts, reads, answers in plain text and closes */
        SERVER_SILENT,          /* listens and never accepts */
} Behaviour;

typedef struct Server {
        Behaviour behaviour;
        int fd;
        SocketAddress address;
        pthread_t thread;
        bool has_thread;
} Server;

static void *server_run(void *userdata) {
        Server *s = userdata;
        char buf[512];
        int fd;

        fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        if (s->behaviour == SERVER_NO_TLS) {
                static const char answer[] = "HTTP/1.0 400 Bad Request\r\n\r\n";

                /* The ClientHello. */
                ASSERT_TRUE(read(fd, buf, sizeof buf) > 0);
                ASSERT_EQ(write(fd, answer, sizeof answer - 1), (ssize_t) sizeof answer - 1);
        }
        ASSERT_OK(close(fd));
        return NULL;
}

static void server_start(Server *s, Behaviour b) {
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sin;

        *s = (Server) { .behaviour = b };
        s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(s->fd >= 0);
        ASSERT_OK(bind(s->fd, (struct sockaddr *) &sin, sizeof sin));
        ASSERT_OK(getsockname(s->fd, (struct sockaddr *) &sin, &len));
        ASSERT_OK(socket_address_from_string("127.0.0.1", ntohs(sin.sin_port), &s->address));
        if (b == SERVER_REFUSES)
                return;
        ASSERT_OK(listen(s->fd, 4));
        if (b == SERVER_SILENT)
                return;
        ASSERT_EQ(pthread_create(&s->thread, NULL, server_run, s), 0);
        s->has_thread = true;
}

static void server_stop(Server *s) {
        if (s->has_thread)
                ASSERT_EQ(pthread_join(s->thread, NULL), 0);
        ASSERT_OK(close(s->fd));
}

static void test_a_failed_session_names_its_stage(void) {
        static const struct {
                const char *name;
                Behaviour servers[3];
                NTS_KEStage stage;
                bool connected;
                size_t answered;        /* the address the result names */
        } table[] = {
                { "the connection is refused", { SERVER_REFUSES }, NTS_KE_STAGE_CONNECT, false, 0 },
                { "every address refuses: the last one is named", { SERVER_REFUSES, SERVER_REFUSES },
                  NTS_KE_STAGE_CONNECT, false, 1 },
                { "closed at once: the handshake fails", { SERVER_CLOSES }, NTS_KE_STAGE_TLS, true, 0 },
                { "an answer that is no TLS", { SERVER_NO_TLS }, NTS_KE_STAGE_TLS, true, 0 },
                { "a refused connection moves on to the next address", { SERVER_REFUSES, SERVER_NO_TLS },
                  NTS_KE_STAGE_TLS, true, 1 },
                { "a server that never answers: the session's timeout", { SERVER_SILENT }, NTS_KE_STAGE_TIMEOUT,
                  true, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(NTS_ke_result_freep) NTS_KEResult *res = NULL;
                static const NTS_AEADAlgorithm aead[] = { NTS_AEAD_AES_SIV_CMAC_256 };
                SocketAddress addresses[ELEMENTSOF(table[i].servers)];
                Server servers[ELEMENTSOF(table[i].servers)];
                bool silent = false;
                size_t n = 0;

                log_info("case: %s", table[i].name);
                for (; n < ELEMENTSOF(servers) && table[i].servers[n] != SERVER_NONE; n++) {
                        server_start(&servers[n], table[i].servers[n]);
                        addresses[n] = servers[n].address;
                        silent = silent || table[i].servers[n] == SERVER_SILENT;
                }

                /* Each session ends by itself, except the one whose server stays silent: its
                 * timeout is then its result, whatever the machine's speed. */
                ASSERT_OK(NTS_ke_client_run(&(const NTS_KEClientParams) {
                                                    .addresses = addresses,
                                                    .n_addresses = n,
                                                    .tls = { .hostname = "localhost" },
                                                    .aead = aead,
                                                    .n_aead = ELEMENTSOF(aead),
                                                    .timeout_usec = silent ? 300 * USEC_PER_MSEC
                                                                           : 60 * USEC_PER_SEC,
                                            },
                                            &res));
                ASSERT_TRUE(res);
                log_info("reason: %s", res->reason);
                ASSERT_TRUE(res->error < 0);
                ASSERT_EQ(res->stage, table[i].stage);
                ASSERT_EQ(res->connected, table[i].connected);
                ASSERT_TRUE(socket_address_equal(&res->address, &addresses[table[i].answered]));
                ASSERT_FALSE(isempty(res->reason));
                ASSERT_EQ(res->n_cookies, 0u);
                ASSERT_TRUE(!res->ntp_server);
                for (size_t k = 0; k < n; k++)
                        server_stop(&servers[k]);
        }
}

static void handler(NTS_KEClient *c, NTS_KEResult *result, void *userdata) {
        NTS_ke_result_free(result);
        ASSERT_TRUE(false);
}

static void test_parameters_a_session_cannot_start_with(void) {
        static const NTS_AEADAlgorithm aead[] = { NTS_AEAD_AES_SIV_CMAC_256 };
        char overlong[NTS_MAX_SERVER_NAME_SIZE + 2], *deny[NTS_KE_MAX_DENIED_SERVERS + 1];
        SocketAddress a;
        static const struct {
                const char *name;
                bool no_address, no_aead, no_hostname, empty_deny, overlong_deny;
                size_t n_deny;
                int r;
        } table[] = {
                { "no address", .no_address = true, .r = -EINVAL },
                { "no AEAD to offer", .no_aead = true, .r = -EINVAL },
                { "no host name to verify", .no_hostname = true, .r = -EINVAL },
                { "an empty denied name", .empty_deny = true, .n_deny = 1, .r = -EINVAL },
                { "a denied name too long for its record", .overlong_deny = true, .n_deny = 1, .r = -EINVAL },
                { "more denied names than records", .n_deny = NTS_KE_MAX_DENIED_SERVERS + 1, .r = -E2BIG },
                { "as many denied names as records", .n_deny = NTS_KE_MAX_DENIED_SERVERS, .r = 0 },
        };

        memset(overlong, 'a', sizeof overlong - 1);
        overlong[sizeof overlong - 1] = '\0';
        ASSERT_OK(socket_address_from_string("127.0.0.1", 9, &a));

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                _cleanup_(NTS_ke_client_freep) NTS_KEClient *c = NULL;

                log_info("case: %s", table[i].name);
                for (size_t k = 0; k < ELEMENTSOF(deny); k++)
                        deny[k] = (char *) "member.pool.example";
                if (table[i].empty_deny)
                        deny[0] = (char *) "";
                if (table[i].overlong_deny)
                        deny[0] = overlong;

                ASSERT_OK(sd_event_new(&e));
                ASSERT_EQ(NTS_ke_client_start(e,
                                              &(const NTS_KEClientParams) {
                                                      .addresses = table[i].no_address ? NULL : &a,
                                                      .n_addresses = table[i].no_address ? 0 : 1,
                                                      .tls = { .hostname = table[i].no_hostname ? NULL
                                                                                                : "localhost" },
                                                      .aead = aead,
                                                      .n_aead = table[i].no_aead ? 0 : ELEMENTSOF(aead),
                                                      .timeout_usec = 60 * USEC_PER_SEC,
                                                      .deny = deny,
                                                      .n_deny = table[i].n_deny,
                                              },
                                              handler, NULL, &c),
                          table[i].r);
                /* Nothing ran: a session that started is freed before its first turn. */
                ASSERT_EQ(!!c, table[i].r == 0);
        }
}

TEST_MAIN(TEST_CASE(test_parameters_a_session_cannot_start_with),
          TEST_CASE(test_a_failed_session_names_its_stage))
