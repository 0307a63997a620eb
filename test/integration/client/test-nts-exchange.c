/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Full NTS exchanges on loopback between our client modules (nts-ke-client, nts-ntp-client)
 * and the mock server: one correct exchange, then one mock instance per sabotage mode, each of
 * which the client must refuse for the stated cause. A mode the mock does not know is a
 * failure, not a skip: every mode listed here is implemented, and one lost must not pass. */

#include <stdio.h>
#include <sys/wait.h>

#include "iovec-util.h"
#include "mock-harness.h"
#include "nts-crypto.h"
#include "tests.h"

#define KE_TIMEOUT_USEC (10 * USEC_PER_SEC)
#define NTP_TIMEOUT_USEC (5 * USEC_PER_SEC)
/* Short, so the slow mode costs little; the mock stalls far longer than this. */
#define SLOW_KE_TIMEOUT_USEC (1 * USEC_PER_SEC)
#define N_PLACEHOLDERS 2

static char *certs;
static char *ca_file;
static char *other_ca_file;
static MockProcess good;
/* Set by a test that cannot run here, with the reason. */
static const char *skip_reason;

typedef enum Phase {
        PHASE_KE,       /* the KE session must fail */
        PHASE_NTP,      /* KE succeeds, the NTP exchange must fail */
} Phase;

typedef struct Sabotage {
        const char *test;       /* the rule the case checks */
        const char *mode;       /* nts-mock-server --sabotage= */
        Phase phase;
        NTS_KEStage stage;      /* PHASE_KE: the stage named in the result */
        NTS_Error error;        /* the cause; NTS_OK where the stage says it all */
        usec_t ke_timeout_usec;
} Sabotage;

static const Sabotage sabotages[] = {
        { "test_bad_alpn_fails_in_tls_stage", "bad-alpn", PHASE_KE, NTS_KE_STAGE_TLS, NTS_OK },
        { "test_missing_alpn_fails_in_tls_stage", "no-alpn", PHASE_KE, NTS_KE_STAGE_TLS, NTS_OK },
        { "test_ke_without_cookies_is_refused", "no-cookies", PHASE_KE, NTS_KE_STAGE_PROTOCOL,
          NTS_ERROR_KE_NO_COOKIES },
        { "test_ke_error_record_is_refused", "error-record", PHASE_KE, NTS_KE_STAGE_PROTOCOL,
          NTS_ERROR_SERVER_INTERNAL_ERROR },
        { "test_ke_warning_record_is_refused", "warning-record", PHASE_KE, NTS_KE_STAGE_PROTOCOL,
          NTS_ERROR_SERVER_WARNING },
        { "test_unknown_critical_record_is_refused", "unknown-critical", PHASE_KE,
          NTS_KE_STAGE_PROTOCOL, NTS_ERROR_KE_UNKNOWN_CRITICAL_RECORD },
        { "test_aead_not_offered_is_refused", "wrong-aead", PHASE_KE, NTS_KE_STAGE_PROTOCOL,
          NTS_ERROR_KE_AEAD_NOT_OFFERED },
        { "test_missing_aead_record_is_refused", "no-aead", PHASE_KE, NTS_KE_STAGE_PROTOCOL,
          NTS_ERROR_KE_NO_AEAD },
        { "test_endless_records_are_refused_as_too_long", "endless-records", PHASE_KE,
          NTS_KE_STAGE_PROTOCOL, NTS_ERROR_KE_TOO_LONG },
        { "test_slow_server_times_out", "slow", PHASE_KE, NTS_KE_STAGE_TIMEOUT, NTS_OK,
          SLOW_KE_TIMEOUT_USEC },
        { "test_bad_authenticator_is_rejected", "bad-auth", PHASE_NTP, 0,
          NTS_ERROR_NTP_AUTH_FAILED },
        { "test_uid_mismatch_is_rejected", "wrong-uid", PHASE_NTP, 0, NTS_ERROR_NTP_UID_MISMATCH },
        { "test_nak_is_reported", "nak", PHASE_NTP, 0, NTS_ERROR_NTP_NAK },
        { "test_unauthenticated_reply_is_rejected", "unauthenticated", PHASE_NTP, 0,
          NTS_ERROR_NTP_NO_AUTHENTICATOR },
        /* Larger than the buffer, though its first NTS_MAX_PACKET_SIZE bytes verify: ignored,
         * so the query times out. */
        { "test_oversized_reply_is_never_used_cut", "oversized", PHASE_NTP, 0, NTS_OK },
};

static int wait_for_child(pid_t pid) {
        int status;

        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static NTS_KEResult *run_ke(const SocketAddress *addresses, size_t n, const char *hostname,
                            const char *ca, usec_t timeout_usec) {
        NTS_KEResult *r = NULL;

        ASSERT_OK(harness_run_ke(addresses, n, hostname, ca, timeout_usec, &r));
        ASSERT_TRUE(r);
        if (r->error < 0)
                printf("# KE: %s (%s stage, %s): %s\n", strerror(-r->error),
                       NTS_ke_stage_to_string(r->stage), strna(NTS_error_string(r->nts_error)),
                       r->reason);
        else
                printf("# KE: %s, %zu cookies, %s %s\n", strna(NTS_aead_name(r->aead)),
                       r->n_cookies, r->tls.version, r->tls.cipher);
        return r;
}

static void assert_ke_ok(const NTS_KEResult *r) {
        if (r->error < 0)
                fprintf(stderr, "KE failed: %s\n", r->reason);
        ASSERT_OK(r->error);
        ASSERT_EQ(r->reason[0], 0);
}

/* A failed session names its stage and a reason, and hands out nothing. */
static void assert_ke_failed(const NTS_KEResult *r, NTS_KEStage stage) {
        ASSERT_TRUE(r->error < 0);
        ASSERT_EQ(r->stage, stage);
        ASSERT_TRUE(r->reason[0] != 0);
        ASSERT_EQ(r->n_cookies, 0);
        ASSERT_EQ(r->c2s_key.iov_len, 0);
        ASSERT_EQ(r->s2c_key.iov_len, 0);
}

/* One NTP query spending cookie, to server or else to the NTP server ke names. */
static int run_ntp_to(const NTS_KEResult *ke, const SocketAddress *server,
                      const struct iovec *cookie, usec_t timeout_usec, NTS_NTPResult *ret) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c2s = NULL, *s2c = NULL;
        SocketAddress negotiated;
        int r;

        if (!server) {
                ASSERT_OK(harness_ntp_address(ke, &negotiated));
                server = &negotiated;
        }
        ASSERT_OK(harness_aead_contexts(ke, &c2s, &s2c));

        NTS_NTPQueryParams p = {
                .c2s = c2s,
                .s2c = s2c,
                .cookie = *cookie,
                .n_placeholders = N_PLACEHOLDERS,
                .timeout_usec = timeout_usec,
        };
        r = NTS_ntp_client_query(server, &p, ret);
        printf("# NTP: r=%i (%s) nts_error=%s kiss=\"%s\" cookies=%zu\n", r,
               r < 0 ? strerror(-r) : "ok", strna(NTS_error_string(ret->nts_error)), ret->kiss,
               ret->n_cookies);
        return r;
}

static int run_ntp(const NTS_KEResult *ke, const struct iovec *cookie, NTS_NTPResult *ret) {
        return run_ntp_to(ke, NULL, cookie, NTP_TIMEOUT_USEC, ret);
}

static void test_full_exchange_is_authenticated(void) {
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&good.ke_address, 1, "localhost", ca_file, KE_TIMEOUT_USEC);
        NTS_AEADAlgorithm offer[8];
        const NTS_AEADParam *param;
        NTS_NTPResult ntp;

        assert_ke_ok(ke);
        /* The mock takes the client's first choice that it supports, and it supports all. */
        ASSERT_TRUE(NTS_aead_offer(offer, ELEMENTSOF(offer)) > 0);
        ASSERT_EQ(ke->aead, offer[0]);
        ASSERT_EQ(ke->n_cookies, NTS_MAX_COOKIES);
        for (size_t i = 0; i < ke->n_cookies; i++)
                ASSERT_TRUE(iovec_is_set(&ke->cookies[i]));
        param = NTS_aead_param(ke->aead);
        ASSERT_TRUE(param);
        ASSERT_EQ(ke->c2s_key.iov_len, param->key_size);
        ASSERT_EQ(ke->s2c_key.iov_len, param->key_size);
        ASSERT_FALSE(iovec_equal(&ke->c2s_key, &ke->s2c_key));
        ASSERT_STREQ(ke->tls.version, "TLSv1.3");
        ASSERT_TRUE(strstr(ke->tls.issuer, "test CA"));
        ASSERT_TRUE(ke->tls.not_before < ke->tls.not_after);

        ASSERT_OK(run_ntp(ke, &ke->cookies[0], &ntp));
        ASSERT_EQ(ntp.nts_error, NTS_OK);
        ASSERT_EQ(ntp.header.mode, NTP_MODE_SERVER);
        /* RFC 8915 section 5.7: one new cookie for the one spent and one per placeholder. */
        ASSERT_EQ(ntp.n_cookies, 1 + N_PLACEHOLDERS);
        for (size_t i = 0; i < ntp.n_cookies; i++)
                ASSERT_FALSE(iovec_equal(&ntp.cookies[i], &ke->cookies[0]));
        printf("# offset %" PRIi64 " ns, delay %" PRIi64 " ns\n", ntp.sample.offset_nsec, ntp.sample.delay_nsec);
        NTS_ntp_result_done(&ntp);
}

static void test_cookie_from_ntp_reply_is_accepted(void) {
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&good.ke_address, 1, "localhost", ca_file, KE_TIMEOUT_USEC);
        NTS_NTPResult first, second;

        assert_ke_ok(ke);
        ASSERT_OK(run_ntp(ke, &ke->cookies[0], &first));
        ASSERT_TRUE(first.n_cookies > 0);
        ASSERT_OK(run_ntp(ke, &first.cookies[0], &second));
        ASSERT_TRUE(second.n_cookies > 0);
        NTS_ntp_result_done(&first);
        NTS_ntp_result_done(&second);
}

/* A TCP socket on a free loopback port, listening or not. */
static int loopback_socket(bool listening, SocketAddress *ret) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        socklen_t l = sizeof(ret->sa);

        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(socket_address_from_string("127.0.0.1", 0, ret));
        ASSERT_OK(bind(fd, (struct sockaddr *) &ret->sa, ret->len));
        if (listening)
                ASSERT_OK(listen(fd, 1));
        ASSERT_OK(getsockname(fd, (struct sockaddr *) &ret->sa, &l));
        return fd;
}

static void closed_port_address(SocketAddress *ret) {
        /* A port that was free a moment ago: nothing listens there. */
        safe_close(loopback_socket(false, ret));
}

static void test_connect_refused_fails_in_connect_stage(void) {
        SocketAddress closed;
        closed_port_address(&closed);
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&closed, 1, "localhost", ca_file, KE_TIMEOUT_USEC);

        assert_ke_failed(ke, NTS_KE_STAGE_CONNECT);
        ASSERT_EQ(ke->error, -ECONNREFUSED);
        ASSERT_TRUE(strstr(ke->reason, "connecting"));
}

static void test_connect_failure_moves_to_next_address(void) {
        SocketAddress addresses[2];
        char a[SOCKET_ADDRESS_STRING_MAX], b[SOCKET_ADDRESS_STRING_MAX];

        closed_port_address(&addresses[0]);
        addresses[1] = good.ke_address;
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(addresses, 2, "localhost", ca_file, KE_TIMEOUT_USEC);

        assert_ke_ok(ke);
        ASSERT_EQ(ke->n_cookies, NTS_MAX_COOKIES);
        ASSERT_STREQ(socket_address_to_string(&ke->address, a),
                     socket_address_to_string(&good.ke_address, b));
}

static void test_wrong_hostname_fails_in_tls_stage(void) {
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&good.ke_address, 1, "wrong.test", ca_file, KE_TIMEOUT_USEC);

        assert_ke_failed(ke, NTS_KE_STAGE_TLS);
}

static void test_untrusted_ca_fails_in_tls_stage(void) {
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&good.ke_address, 1, "localhost", other_ca_file, KE_TIMEOUT_USEC);

        assert_ke_failed(ke, NTS_KE_STAGE_TLS);
}

/* A server that accepts and closes at once, as chrony does for clients it does not allow: the
 * client's writes then meet a reset connection, which must be an error, not SIGPIPE. */
static void test_server_closing_at_once_fails_in_tls_stage(void) {
        SocketAddress listener;
        _cleanup_close_ int fd = loopback_socket(true, &listener);
        pid_t pid;

        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int c = accept(fd, NULL, NULL);
                _exit(c >= 0 ? EXIT_SUCCESS : EXIT_FAILURE);
        }

        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&listener, 1, "localhost", ca_file, KE_TIMEOUT_USEC);
        assert_ke_failed(ke, NTS_KE_STAGE_TLS);
        ASSERT_EQ(wait_for_child(pid), EXIT_SUCCESS);
}

/* The kernel completes the TCP handshake for a listener that never accepts: the TLS handshake
 * then waits forever unless the session's timer ends it. */
static void test_silent_server_times_out(void) {
        SocketAddress listener;
        _cleanup_close_ _unused_ int fd = loopback_socket(true, &listener);

        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke = run_ke(&listener, 1, "localhost", ca_file,
                                                                 SLOW_KE_TIMEOUT_USEC);
        assert_ke_failed(ke, NTS_KE_STAGE_TIMEOUT);
        ASSERT_EQ(ke->error, -ETIMEDOUT);
        ASSERT_TRUE(strstr(ke->reason, "TLS handshake"));
}

/* A listener whose accept queue is full drops further SYNs: connecting to it hangs. The
 * returned filler connection keeps the queue full. */
static int unanswering_address(SocketAddress *ret, int *ret_filler) {
        int fd = loopback_socket(false, ret), filler;

        ASSERT_OK(listen(fd, 0));
        filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ASSERT_TRUE(filler >= 0);
        ASSERT_OK(connect(filler, (struct sockaddr *) &ret->sa, ret->len));
        *ret_filler = filler;
        return fd;
}

static void test_unanswered_connect_times_out(void) {
        SocketAddress hole;
        _cleanup_close_ int filler = -EBADF;
        _cleanup_close_ _unused_ int fd = unanswering_address(&hole, &filler);

        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&hole, 1, "localhost", ca_file, SLOW_KE_TIMEOUT_USEC);
        assert_ke_failed(ke, NTS_KE_STAGE_TIMEOUT);
        ASSERT_EQ(ke->error, -ETIMEDOUT);
        ASSERT_TRUE(strstr(ke->reason, "connecting"));
}

/* Without a share per address, the first silent address would use up the whole timeout. */
static void test_silent_address_leaves_time_for_the_next(void) {
        SocketAddress addresses[2];
        _cleanup_close_ int filler = -EBADF;
        _cleanup_close_ _unused_ int fd = unanswering_address(&addresses[0], &filler);
        char a[SOCKET_ADDRESS_STRING_MAX], b[SOCKET_ADDRESS_STRING_MAX];

        addresses[1] = good.ke_address;
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke = run_ke(addresses, 2, "localhost", ca_file,
                                                                 4 * SLOW_KE_TIMEOUT_USEC);
        assert_ke_ok(ke);
        ASSERT_STREQ(socket_address_to_string(&ke->address, a),
                     socket_address_to_string(&good.ke_address, b));
}

/* A fake NTP server answers with everything but a reply to the request: a runt, the request
 * itself (client mode), and a server packet whose origin is not our transmit timestamp. */
static void test_replies_not_matching_the_request_are_ignored(void) {
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&good.ke_address, 1, "localhost", ca_file, KE_TIMEOUT_USEC);
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        SocketAddress fake;
        socklen_t l = sizeof(fake.sa);
        NTS_NTPResult ntp;
        pid_t pid;

        assert_ke_ok(ke);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(socket_address_from_string("127.0.0.1", 0, &fake));
        ASSERT_OK(bind(fd, (struct sockaddr *) &fake.sa, fake.len));
        ASSERT_OK(getsockname(fd, (struct sockaddr *) &fake.sa, &l));

        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                uint8_t buf[NTS_MAX_PACKET_SIZE];
                struct sockaddr_storage peer;
                socklen_t pl = sizeof(peer);
                ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *) &peer, &pl);
                NTPHeader h;

                if (n < NTP_HEADER_SIZE)
                        _exit(EXIT_FAILURE);
                (void) sendto(fd, buf, 12, 0, (struct sockaddr *) &peer, pl);
                (void) sendto(fd, buf, n, 0, (struct sockaddr *) &peer, pl);
                ntp_header_decode(buf, &h);
                h.mode = NTP_MODE_SERVER;
                h.stratum = 1;
                h.origin = h.transmit;
                h.origin.fraction ^= 1;
                ntp_header_encode(&h, buf);
                (void) sendto(fd, buf, n, 0, (struct sockaddr *) &peer, pl);
                _exit(EXIT_SUCCESS);
        }

        ASSERT_ERROR(run_ntp_to(ke, &fake, &ke->cookies[0], SLOW_KE_TIMEOUT_USEC, &ntp), ETIMEDOUT);
        ASSERT_EQ(ntp.nts_error, NTS_OK);
        ASSERT_EQ(wait_for_child(pid), EXIT_SUCCESS);
}

static void test_negotiated_server_is_reported_and_used(void) {
        MockProcess mock;
        SocketAddress ntp_server;
        char a[SOCKET_ADDRESS_STRING_MAX], expected[SOCKET_ADDRESS_STRING_MAX];
        NTS_NTPResult ntp;

        ASSERT_OK(mock_server_start(certs, &(MockOptions) { .ntp_server = "127.0.0.1" }, &mock));
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke = run_ke(&mock.ke_address, 1, "localhost",
                                                                 ca_file, KE_TIMEOUT_USEC);
        assert_ke_ok(ke);
        ASSERT_STREQ(ke->ntp_server, "127.0.0.1");
        ASSERT_EQ(ke->ntp_port, mock.ntp_port);
        ASSERT_OK(harness_ntp_address(ke, &ntp_server));
        snprintf(expected, sizeof(expected), "127.0.0.1:%u", mock.ntp_port);
        ASSERT_STREQ(socket_address_to_string(&ntp_server, a), expected);
        ASSERT_OK(run_ntp(ke, &ke->cookies[0], &ntp));
        NTS_ntp_result_done(&ntp);
        mock_server_stop(&mock);
}

static void test_ke_and_ntp_work_over_ipv6(void) {
        SocketAddress probe;
        _cleanup_close_ int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        MockProcess mock;
        NTS_NTPResult ntp;

        ASSERT_OK(socket_address_from_string("::1", 0, &probe));
        if (fd < 0 || bind(fd, (struct sockaddr *) &probe.sa, probe.len) < 0) {
                skip_reason = "no ::1 on this machine";
                return;
        }

        ASSERT_OK(mock_server_start(certs, &(MockOptions) { .address = "::1" }, &mock));
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke = run_ke(&mock.ke_address, 1, "localhost",
                                                                 ca_file, KE_TIMEOUT_USEC);
        assert_ke_ok(ke);
        ASSERT_EQ(ke->address.sa.ss_family, AF_INET6);
        ASSERT_OK(run_ntp(ke, &ke->cookies[0], &ntp));
        ASSERT_TRUE(ntp.n_cookies > 0);
        NTS_ntp_result_done(&ntp);
        mock_server_stop(&mock);
}

static void on_ke_done_unexpected(NTS_KEClient *c, NTS_KEResult *result, void *userdata) {
        bool *called = userdata;

        *called = true;
        NTS_ke_result_free(result);
}

static void test_freeing_a_running_session_is_safe(void) {
        NTS_AEADAlgorithm offer[] = { NTS_AEAD_AES_SIV_CMAC_256 };
        NTS_KEClientParams p = {
                .addresses = &good.ke_address,
                .n_addresses = 1,
                .tls = { .hostname = "localhost", .ca_file = ca_file },
                .aead = offer,
                .n_aead = ELEMENTSOF(offer),
                .timeout_usec = KE_TIMEOUT_USEC,
        };

        /* Stop after 0, 1, 2, ... loop iterations: before connecting, while connecting, in the
         * handshake, ... until one run completes on its own. */
        for (unsigned iterations = 0;; iterations++) {
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                NTS_KEClient *c = NULL;
                bool called = false;

                ASSERT_OK(sd_event_new(&e));
                ASSERT_OK(NTS_ke_client_start(e, &p, on_ke_done_unexpected, &called, &c));
                for (unsigned i = 0; i < iterations && !called; i++)
                        ASSERT_OK(sd_event_run(e, KE_TIMEOUT_USEC));
                NTS_ke_client_free(c);
                if (called) {
                        printf("# a session completes after %u loop iterations\n", iterations);
                        break;
                }
                /* Nothing may fire after the free. */
                ASSERT_EQ(sd_event_run(e, 0), 0);
                ASSERT_FALSE(called);
        }
}

static void run_sabotage(const Sabotage *s) {
        MockProcess mock;
        usec_t timeout = s->ke_timeout_usec ?: KE_TIMEOUT_USEC;

        ASSERT_OK(mock_server_start(certs, &(MockOptions) { .sabotage = s->mode }, &mock));
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke =
                run_ke(&mock.ke_address, 1, "localhost", ca_file, timeout);

        if (s->phase == PHASE_KE) {
                assert_ke_failed(ke, s->stage);
                if (s->error != NTS_OK)
                        ASSERT_EQ(ke->nts_error, s->error);
                if (s->stage == NTS_KE_STAGE_TIMEOUT)
                        ASSERT_EQ(ke->error, -ETIMEDOUT);
        } else {
                NTS_NTPResult ntp;

                assert_ke_ok(ke);
                ASSERT_TRUE(run_ntp(ke, &ke->cookies[0], &ntp) < 0);
                ASSERT_EQ(ntp.nts_error, s->error);
                ASSERT_EQ(ntp.n_cookies, 0);
        }

        mock_server_stop(&mock);
}

static const TestCase tests[] = {
        TEST_CASE(test_full_exchange_is_authenticated),
        TEST_CASE(test_cookie_from_ntp_reply_is_accepted),
        TEST_CASE(test_connect_refused_fails_in_connect_stage),
        TEST_CASE(test_connect_failure_moves_to_next_address),
        TEST_CASE(test_wrong_hostname_fails_in_tls_stage),
        TEST_CASE(test_untrusted_ca_fails_in_tls_stage),
        TEST_CASE(test_server_closing_at_once_fails_in_tls_stage),
        TEST_CASE(test_silent_server_times_out),
        TEST_CASE(test_unanswered_connect_times_out),
        TEST_CASE(test_silent_address_leaves_time_for_the_next),
        TEST_CASE(test_replies_not_matching_the_request_are_ignored),
        TEST_CASE(test_negotiated_server_is_reported_and_used),
        TEST_CASE(test_ke_and_ntp_work_over_ipv6),
        TEST_CASE(test_freeing_a_running_session_is_safe),
};

int main(void) {
        unsigned skipped = 0;

        log_parse_environment();

        ASSERT_OK(mock_certs_make(&certs));
        ASSERT_OK(asprintf(&ca_file, "%s/ca.pem", certs));
        ASSERT_OK(asprintf(&other_ca_file, "%s/other-ca.pem", certs));
        ASSERT_OK(mock_server_start(certs, &(MockOptions) {}, &good));

        for (size_t i = 0; i < ELEMENTSOF(tests); i++) {
                printf("/* %s */\n", tests[i].name);
                fflush(stdout);
                skip_reason = NULL;
                tests[i].func();
                if (skip_reason) {
                        printf("/* %s: skipped, %s */\n", tests[i].name, skip_reason);
                        skipped++;
                }
        }

        for (size_t i = 0; i < ELEMENTSOF(sabotages); i++) {
                const Sabotage *s = &sabotages[i];

                printf("/* %s */\n", s->test);
                fflush(stdout);
                ASSERT_TRUE(mock_server_has_mode(s->mode));
                run_sabotage(s);
        }

        mock_server_stop(&good);
        mock_certs_remove(certs);
        free(ca_file);
        free(other_ca_file);
        printf("%zu tests passed, %u of them skipped\n", ELEMENTSOF(tests) + ELEMENTSOF(sabotages), skipped);
        return EXIT_SUCCESS;
}
