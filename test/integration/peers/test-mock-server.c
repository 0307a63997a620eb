/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The mock NTS server, run as a child process, against the project's own client modules:
 * NTS-KE (nts-tls, nts-packet) then NTS-protected NTP (nts-extfields), honest and in every
 * sabotage mode, plus SIGUSR1 recovery and cookie validity across restarts. */

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "crypto-util.h"
#include "iovec-util.h"
#include "ntp-packet.h"
#include "nts-crypto.h"
#include "nts-tls.h"
#include "random-util.h"
#include "ssl-util.h"
#include "test-tls-setup.h"
#include "tests.h"

/* Only a guard against a hung test; nothing asserts on time. */
#define POLL_TIMEOUT_MS 10000

static char dir[] = "/tmp/test-mock-server-XXXXXX";

static const char *path(const char *name) {
        return test_path(dir, name);
}

typedef struct Server {
        pid_t pid;
        uint16_t ke_port;
        uint16_t ntp_port;
} Server;

/* Starts the mock server with the test certificates and extra arguments (NULL-terminated);
 * returns once it printed READY. */
static Server server_start(const char *arg, ...) {
        const char *argv[16] = {
                MOCK_SERVER, "--cert", path("certs/server-chain.pem"), "--key", path("certs/server.key"),
                "--ke-port=0", "--ntp-listen-port=0", "--count-file", path("counts"),
        };
        size_t n = 9;
        unsigned ke_port, ntp_port;
        char line[256];
        Server s = {};
        va_list ap;
        int pipefd[2];
        FILE *f;

        va_start(ap, arg);
        for (const char *a = arg; a; a = va_arg(ap, const char *)) {
                ASSERT_TRUE(n < ELEMENTSOF(argv) - 1);
                argv[n++] = a;
        }
        va_end(ap);

        ASSERT_OK(pipe2(pipefd, O_CLOEXEC));
        s.pid = fork();
        ASSERT_OK(s.pid);
        if (s.pid == 0) {
                /* A failed assertion aborts the test; the server must not outlive it. */
                if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(EXIT_FAILURE);
                execv(argv[0], (char **) argv);
                _exit(EXIT_FAILURE);
        }
        safe_close(pipefd[1]);

        f = fdopen(pipefd[0], "r");
        ASSERT_TRUE(f);
        ASSERT_TRUE(fgets(line, sizeof(line), f));
        fclose(f);
        ASSERT_EQ(sscanf(line, "READY ke-port=%u ntp-port=%u", &ke_port, &ntp_port), 2);
        s.ke_port = ke_port;
        s.ntp_port = ntp_port;
        return s;
}

static void server_stop(Server *s) {
        int status;

        ASSERT_OK(kill(s->pid, SIGTERM));
        ASSERT_EQ(waitpid(s->pid, &status, 0), s->pid);
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
        s->pid = 0;
}

static unsigned count(const char *key) {
        char line[128], want[64];
        unsigned v = UINT_MAX;
        FILE *f;

        f = fopen(path("counts"), "re");
        ASSERT_TRUE(f);
        snprintf(want, sizeof(want), "%s=%%u", key);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, want, &v) == 1)
                        break;
        fclose(f);
        ASSERT_TRUE(v != UINT_MAX);
        return v;
}

static void wait_fd(int fd, uint32_t events) {
        struct pollfd p = { .fd = fd, .events = (short) events };
        ASSERT_EQ(poll(&p, 1, POLL_TIMEOUT_MS), 1);
}

static int connect_local(int type, uint16_t port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd;

        fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
        ASSERT_OK(fd);
        ASSERT_OK(connect(fd, (struct sockaddr *) &sa, sizeof(sa)));
        ASSERT_OK(fcntl(fd, F_SETFL, O_NONBLOCK));
        return fd;
}

typedef struct KEResult {
        int r;                          /* handshake or decode result */
        char tls_error[256];
        NTS_Agreement agreement;
        uint8_t message[NTS_KE_MAX_MESSAGE_SIZE + 1];
        size_t size;
        uint8_t c2s[NTS_MAX_AEAD_KEY_SIZE], s2c[NTS_MAX_AEAD_KEY_SIZE];
        size_t key_size;
        size_t first_read;              /* bytes the first successful read returned */
} KEResult;

static const NTS_AEADAlgorithm offered[] = { NTS_AEAD_AES_SIV_CMAC_256 };

/* Request and response over an established session. With max_reads > 0, gives up with
 * -ENODATA after that many reads. */
static void ke_exchange(NTS_TLS *t, int fd, KEResult *res, unsigned max_reads) {
        uint8_t request[64];
        ssize_t n;

        n = NTS_encode_request(request, sizeof(request), offered, ELEMENTSOF(offered), NULL, 0);
        ASSERT_OK(n);
        for (size_t sent = 0; sent < (size_t) n;) {
                ssize_t w = NTS_tls_write(t, request + sent, n - sent);
                if (w == -EAGAIN) {
                        wait_fd(fd, NTS_tls_events(t));
                        continue;
                }
                ASSERT_OK(w);
                sent += w;
        }

        for (unsigned reads = 0;;) {
                ssize_t m;

                ASSERT_TRUE(res->size < sizeof(res->message));
                m = NTS_tls_read(t, res->message + res->size, sizeof(res->message) - res->size);
                if (m == -EAGAIN) {
                        wait_fd(fd, NTS_tls_events(t));
                        continue;
                }
                ASSERT_OK(m);
                if (m == 0) {
                        res->r = -ENODATA;
                        return;
                }
                if (res->first_read == 0)
                        res->first_read = m;
                res->size += m;

                n = NTS_decode_response(&IOVEC_MAKE(res->message, res->size), offered, ELEMENTSOF(offered),
                                        &res->agreement);
                if (n != -ENODATA || res->size > NTS_KE_MAX_MESSAGE_SIZE) {
                        res->r = n < 0 ? (int) n : 0;
                        break;
                }
                if (max_reads > 0 && ++reads >= max_reads) {
                        res->r = -ENODATA;
                        return;
                }
        }

        if (res->r == 0 && res->agreement.error == NTS_OK) {
                const NTS_AEADParam *p = NTS_aead_param(res->agreement.aead);
                struct iovec c = IOVEC_MAKE(res->c2s, sizeof(res->c2s)), sk = IOVEC_MAKE(res->s2c, sizeof(res->s2c));

                ASSERT_TRUE(p);
                ASSERT_OK(NTS_tls_export_keys(t, res->agreement.aead, NTS_exporter_aead(&res->agreement), &c, &sk));
                res->key_size = p->key_size;
        }
        NTS_tls_shutdown(t);
}

/* One NTS-KE session: TLS handshake, then ke_exchange(). */
static void ke_run(const Server *s, KEResult *res, unsigned max_reads) {
        NTS_TLS *t;
        int fd, r;

        *res = (KEResult) {};
        fd = connect_local(SOCK_STREAM, s->ke_port);
        ASSERT_OK(NTS_tls_new(fd, &(NTS_TLSOptions) { .hostname = "localhost", .ca_file = path("certs/ca.pem") }, &t, NULL, 0));

        while ((r = NTS_tls_handshake(t)) == -EAGAIN)
                wait_fd(fd, NTS_tls_events(t));
        if (r < 0) {
                snprintf(res->tls_error, sizeof(res->tls_error), "%s", NTS_tls_error(t));
                res->r = r;
        } else
                ke_exchange(t, fd, res, max_reads);

        NTS_tls_free(t);
        safe_close(fd);
}

typedef struct NTPResult {
        int r;
        NTS_Receipt receipt;
        uint8_t scratch[NTS_MAX_PACKET_SIZE];
        NTPHeader header;
} NTPResult;

/* One NTP exchange spending cookie with the keys of res. */
static void ntp_run(const Server *s, const KEResult *ke, const struct iovec *cookie, size_t n_placeholders,
                    NTPResult *res) {
        uint8_t packet[NTS_MAX_PACKET_SIZE], answer[NTS_MAX_PACKET_SIZE];
        NTS_AEADContext *c2s, *s2c;
        NTPHeader h = { .version = NTP_VERSION, .mode = NTP_MODE_CLIENT, .poll = 6 };
        NTS_Query q;
        ssize_t n;
        int fd;

        *res = (NTPResult) {};
        ASSERT_OK(NTS_aead_new(ke->agreement.aead, &IOVEC_MAKE(ke->c2s, ke->key_size), &c2s));
        ASSERT_OK(NTS_aead_new(ke->agreement.aead, &IOVEC_MAKE(ke->s2c, ke->key_size), &s2c));

        ASSERT_OK(random_bytes(&h.transmit, sizeof(h.transmit)));
        ntp_header_encode(&h, packet);
        q = (NTS_Query) { .cookie = *cookie, .n_placeholders = n_placeholders, .c2s = c2s };
        n = NTS_add_extension_fields(packet, sizeof(packet), NTP_HEADER_SIZE, &q);
        ASSERT_OK(n);

        fd = connect_local(SOCK_DGRAM, s->ntp_port);
        ASSERT_EQ(send(fd, packet, n, 0), n);
        wait_fd(fd, POLLIN);
        n = recv(fd, answer, sizeof(answer), 0);
        ASSERT_TRUE(n >= NTP_HEADER_SIZE);
        safe_close(fd);

        ntp_header_decode(answer, &res->header);
        ASSERT_TRUE(ntp_ts_equal(res->header.origin, h.transmit));
        res->r = NTS_parse_extension_fields(&IOVEC_MAKE(answer, n), &q, s2c,
                                            &IOVEC_MAKE(res->scratch, sizeof(res->scratch)), &res->receipt);
        NTS_aead_free(c2s);
        NTS_aead_free(s2c);
}

static void ke_expect_ok(const Server *s, KEResult *ke) {
        ke_run(s, ke, 0);
        if (ke->r < 0)
                fprintf(stderr, "KE failed: %s (%s)\n", strerror(-ke->r), ke->tls_error);
        ASSERT_OK(ke->r);
        ASSERT_EQ(ke->agreement.error, NTS_OK);
}

static void test_honest_server_gives_cookies_and_authenticated_time(void) {
        KEResult ke;
        NTPResult ntp;
        Server s;

        s = server_start(NULL);
        ke_expect_ok(&s, &ke);
        ASSERT_EQ(ke.agreement.aead, NTS_AEAD_AES_SIV_CMAC_256);
        ASSERT_EQ(ke.agreement.n_cookies, NTS_MAX_COOKIES);
        ASSERT_FALSE(iovec_is_set(&ke.agreement.server));
        ASSERT_EQ(ke.agreement.port, 0);
        /* Cookies are opaque and distinct. */
        ASSERT_FALSE(iovec_equal(&ke.agreement.cookies[0], &ke.agreement.cookies[1]));

        ntp_run(&s, &ke, &ke.agreement.cookies[0], 0, &ntp);
        ASSERT_OK(ntp.r);
        ASSERT_EQ(ntp.receipt.n_cookies, 1);
        ASSERT_EQ(ntp.receipt.cookies[0].iov_len, ke.agreement.cookies[0].iov_len);
        ASSERT_EQ(ntp.header.mode, NTP_MODE_SERVER);
        ASSERT_EQ(ntp.header.stratum, 1);

        /* A cookie from the refill works as well. */
        uint8_t refill[NTS_MAX_COOKIE_SIZE];
        struct iovec cookie = IOVEC_MAKE(refill, ntp.receipt.cookies[0].iov_len);
        memcpy(refill, ntp.receipt.cookies[0].iov_base, cookie.iov_len);
        ntp_run(&s, &ke, &cookie, 0, &ntp);
        ASSERT_OK(ntp.r);

        ASSERT_EQ(count("ke_sessions"), 1);
        ASSERT_EQ(count("ntp_requests"), 2);
        ASSERT_EQ(count("ntp_naks"), 0);
        server_stop(&s);
}

static void test_placeholders_are_refilled(void) {
        KEResult ke;
        NTPResult ntp;
        Server s;

        s = server_start(NULL);
        ke_expect_ok(&s, &ke);
        ntp_run(&s, &ke, &ke.agreement.cookies[0], 3, &ntp);
        ASSERT_OK(ntp.r);
        ASSERT_EQ(ntp.receipt.n_cookies, 4);
        server_stop(&s);
}

static void test_negotiation_records_are_sent(void) {
        KEResult ke;
        Server s;

        s = server_start("--ntp-server=ntp.test", "--ntp-port=12345", NULL);
        ke_expect_ok(&s, &ke);
        ASSERT_EQ(ke.agreement.server.iov_len, strlen("ntp.test"));
        ASSERT_MEMEQ(ke.agreement.server.iov_base, "ntp.test", strlen("ntp.test"));
        ASSERT_EQ(ke.agreement.port, 12345);
        /* --ntp-port is also where it listens, unless told otherwise (here: any port). */
        server_stop(&s);
}

static void test_ke_sabotage_is_refused(void) {
        static const struct {
                const char *mode;
                int r;
                NTS_Error error;
        } cases[] = {
                { "--sabotage=no-cookies", -EBADMSG, NTS_ERROR_KE_NO_COOKIES },
                { "--sabotage=error-record", -EBADMSG, NTS_ERROR_SERVER_INTERNAL_ERROR },
                { "--sabotage=bad-request", -EBADMSG, NTS_ERROR_SERVER_BAD_REQUEST },
                { "--sabotage=warning-record", -EBADMSG, NTS_ERROR_SERVER_WARNING },
                { "--sabotage=unknown-critical", -EBADMSG, NTS_ERROR_KE_UNKNOWN_CRITICAL_RECORD },
                { "--sabotage=wrong-aead", -EBADMSG, NTS_ERROR_KE_AEAD_NOT_OFFERED },
                { "--sabotage=no-aead", -EBADMSG, NTS_ERROR_KE_NO_AEAD },
                { "--sabotage=endless-records", -EMSGSIZE, NTS_ERROR_KE_TOO_LONG },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                KEResult ke;
                Server s;

                fprintf(stderr, "    %s\n", cases[i].mode);
                s = server_start(cases[i].mode, NULL);
                ke_run(&s, &ke, 0);
                ASSERT_EQ(ke.r, cases[i].r);
                ASSERT_EQ(ke.agreement.error, cases[i].error);
                server_stop(&s);
        }
}

static void test_aead_list_limits_what_the_server_accepts(void) {
        KEResult ke;
        Server s;

        /* We offer AES-SIV-CMAC-256 only. */
        s = server_start("--aead=16,17", NULL);
        ke_run(&s, &ke, 0);
        ASSERT_EQ(ke.r, -EBADMSG);
        ASSERT_EQ(ke.agreement.error, NTS_ERROR_KE_NO_COMMON_AEAD);
        server_stop(&s);

        s = server_start("--aead=17,15", NULL);
        ke_expect_ok(&s, &ke);
        ASSERT_EQ(ke.agreement.aead, NTS_AEAD_AES_SIV_CMAC_256);
        server_stop(&s);
}

static void test_alpn_sabotage_is_refused(void) {
        static const char *const modes[] = { "--sabotage=bad-alpn", "--sabotage=no-alpn" };

        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                KEResult ke;
                Server s;

                s = server_start(modes[i], NULL);
                ke_run(&s, &ke, 0);
                ASSERT_EQ(ke.r, -EPROTO);
                fprintf(stderr, "    %s: %s\n", modes[i], ke.tls_error);
                ASSERT_EQ(count("ke_sessions"), 0);
                server_stop(&s);
        }
}

static void test_slow_server_sends_one_byte_at_a_time(void) {
        KEResult ke;
        Server s;

        s = server_start("--sabotage=slow", NULL);
        ke_run(&s, &ke, 1);
        ASSERT_EQ(ke.r, -ENODATA);
        ASSERT_EQ(ke.first_read, 1);
        server_stop(&s);
}

static void test_ntp_sabotage_is_refused(void) {
        static const struct {
                const char *mode;
                NTS_Error error;
        } cases[] = {
                { "--sabotage=bad-auth", NTS_ERROR_NTP_AUTH_FAILED },
                { "--sabotage=wrong-uid", NTS_ERROR_NTP_UID_MISMATCH },
                { "--sabotage=nak", NTS_ERROR_NTP_NAK },
                { "--sabotage=unauthenticated", NTS_ERROR_NTP_NO_AUTHENTICATOR },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                KEResult ke;
                NTPResult ntp;
                Server s;

                fprintf(stderr, "    %s\n", cases[i].mode);
                s = server_start(cases[i].mode, NULL);
                ke_expect_ok(&s, &ke);
                ntp_run(&s, &ke, &ke.agreement.cookies[0], 0, &ntp);
                ASSERT_TRUE(ntp.r < 0);
                ASSERT_EQ(ntp.receipt.error, cases[i].error);
                server_stop(&s);
        }
}

/* nak-every-second: answers, then refuses the next request, and so on. */
static void test_nak_every_second_alternates(void) {
        KEResult ke;
        NTPResult ntp;
        Server s;

        s = server_start("--sabotage=nak-every-second", NULL);
        ke_expect_ok(&s, &ke);
        for (size_t i = 0; i < 4; i++) {
                ntp_run(&s, &ke, &ke.agreement.cookies[i], 0, &ntp);
                if (i % 2 == 0)
                        ASSERT_OK(ntp.r);
                else
                        ASSERT_EQ(ntp.receipt.error, NTS_ERROR_NTP_NAK);
        }
        ASSERT_EQ(count("ntp_naks"), 2);
        ASSERT_EQ(count("ntp_requests"), 2);
        server_stop(&s);
}

static void test_sigusr1_switches_sabotage_off(void) {
        KEResult ke;
        NTPResult ntp;
        Server s;

        s = server_start("--sabotage=no-alpn", NULL);
        ke_run(&s, &ke, 0);
        ASSERT_EQ(ke.r, -EPROTO);

        /* The server dispatches signals before sockets, so the next session sees it. */
        ASSERT_OK(kill(s.pid, SIGUSR1));
        ke_expect_ok(&s, &ke);

        server_stop(&s);

        s = server_start("--sabotage=nak", NULL);
        ke_expect_ok(&s, &ke);
        ntp_run(&s, &ke, &ke.agreement.cookies[0], 0, &ntp);
        ASSERT_EQ(ntp.receipt.error, NTS_ERROR_NTP_NAK);
        ASSERT_OK(kill(s.pid, SIGUSR1));
        ntp_run(&s, &ke, &ke.agreement.cookies[1], 0, &ntp);
        ASSERT_OK(ntp.r);
        ASSERT_EQ(count("ntp_naks"), 1);
        server_stop(&s);
}

static void test_cookies_die_with_the_server_without_keys_file(void) {
        KEResult ke;
        NTPResult ntp;
        Server s;

        s = server_start(NULL);
        ke_expect_ok(&s, &ke);
        server_stop(&s);

        s = server_start(NULL);
        ntp_run(&s, &ke, &ke.agreement.cookies[0], 0, &ntp);
        ASSERT_EQ(ntp.receipt.error, NTS_ERROR_NTP_NAK);
        ASSERT_EQ(count("ntp_naks"), 1);
        server_stop(&s);
}

static void test_keys_file_keeps_cookies_across_restart(void) {
        char keys[256];
        KEResult ke;
        NTPResult ntp;
        Server s;

        snprintf(keys, sizeof(keys), "%s", path("keys"));
        s = server_start("--keys-file", keys, NULL);
        ke_expect_ok(&s, &ke);
        server_stop(&s);

        s = server_start("--keys-file", keys, NULL);
        ntp_run(&s, &ke, &ke.agreement.cookies[0], 0, &ntp);
        ASSERT_OK(ntp.r);
        server_stop(&s);

        /* A new key file is a server key change: old cookies are refused. */
        ASSERT_OK(unlink(keys));
        s = server_start("--keys-file", keys, NULL);
        ntp_run(&s, &ke, &ke.agreement.cookies[1], 0, &ntp);
        ASSERT_EQ(ntp.receipt.error, NTS_ERROR_NTP_NAK);
        server_stop(&s);
}

/* The server counts every cookie it sees and each one seen again: what the daemon's tests use
 * to prove that a spent cookie never comes back. */
static void test_cookie_sent_twice_is_counted(void) {
        KEResult ke;
        NTPResult ntp;
        Server s;

        s = server_start(NULL);
        ke_expect_ok(&s, &ke);
        ntp_run(&s, &ke, &ke.agreement.cookies[0], 0, &ntp);
        ASSERT_OK(ntp.r);
        ntp_run(&s, &ke, &ke.agreement.cookies[1], 0, &ntp);
        ASSERT_OK(ntp.r);
        ASSERT_EQ(count("cookies_seen"), 2);
        ASSERT_EQ(count("cookies_reused"), 0);

        ntp_run(&s, &ke, &ke.agreement.cookies[0], 0, &ntp);
        ntp_run(&s, &ke, &ke.agreement.cookies[0], 0, &ntp);
        ASSERT_EQ(count("cookies_seen"), 2);
        ASSERT_EQ(count("cookies_reused"), 2);
        server_stop(&s);
}

static void setup(void) {
        test_tls_setup(dir, "certs");
}

static void cleanup(void) {
        test_tls_cleanup(dir);
}

TEST_MAIN(TEST_CASE(setup),
          TEST_CASE(test_honest_server_gives_cookies_and_authenticated_time),
          TEST_CASE(test_placeholders_are_refilled),
          TEST_CASE(test_negotiation_records_are_sent),
          TEST_CASE(test_ke_sabotage_is_refused),
          TEST_CASE(test_aead_list_limits_what_the_server_accepts),
          TEST_CASE(test_alpn_sabotage_is_refused),
          TEST_CASE(test_slow_server_sends_one_byte_at_a_time),
          TEST_CASE(test_ntp_sabotage_is_refused),
          TEST_CASE(test_nak_every_second_alternates),
          TEST_CASE(test_sigusr1_switches_sabotage_off),
          TEST_CASE(test_cookies_die_with_the_server_without_keys_file),
          TEST_CASE(test_keys_file_keeps_cookies_across_restart),
          TEST_CASE(test_cookie_sent_twice_is_counted),
          TEST_CASE(cleanup));
