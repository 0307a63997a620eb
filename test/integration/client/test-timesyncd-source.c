/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* One time source (timesyncd-source) and its NTS client (timesyncd-nts-client) on a real
 * event loop, against the mock NTS server and the plain test NTP server on loopback: the
 * state machine's transitions, the pull interface of the NTS client, and the rule that a
 * source and an NTS client report only from the loop, never from inside a call of their
 * owner. Nothing here can change the clock: the observe backend only reads it. */

#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>

#include "fileio.h"
#include "hexdecoct.h"
#include "iovec-util.h"
#include "nts-client-test-util.h"
#include "string-util.h"
#include "mock-harness.h"
#include "tests.h"
#include "timesyncd-backoff.h"
#include "timesyncd-clock.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-source.h"

#define WAIT_USEC (20 * USEC_PER_SEC)

static char *certs, *ca_file;

typedef struct Run {
        sd_event *event;
        ClockBackend *clock;
        char state_dir[64];
        NTSClientSettings nts;
        SourceSettings settings;
        Source *source;
        /* Set around every call the test makes into a source or an NTS client: a report from
         * inside one would find it set. */
        bool in_call;
        SourceEvent events[64];
        size_t n_events;
        unsigned seen[_SOURCE_EVENT_MAX];
        unsigned nts_seen[_NTS_CLIENT_EVENT_MAX];
        /* The owner's handler of a failed key exchange takes this long, as one that logs to a
         * slow journal or runs under a sanitizer may. */
        usec_t ke_failed_handler_usec;
} Run;

#define CALL(r, expr)                                                                          \
        ({                                                                                     \
                (r)->in_call = true;                                                           \
                typeof(expr) _v = (expr);                                                      \
                (r)->in_call = false;                                                          \
                _v;                                                                            \
        })
#define CALL_VOID(r, expr)                                                                     \
        do {                                                                                   \
                (r)->in_call = true;                                                           \
                expr;                                                                          \
                (r)->in_call = false;                                                          \
        } while (false)

static void on_source_event(Source *s, SourceEvent e, void *userdata) {
        Run *r = userdata;

        ASSERT_FALSE(r->in_call);
        ASSERT_TRUE(e >= 0 && e < _SOURCE_EVENT_MAX);
        if (r->n_events < ELEMENTSOF(r->events))
                r->events[r->n_events++] = e;
        r->seen[e]++;
        printf("# event %u, state %s\n", (unsigned) e, source_state_to_string(source_state(s)));
        if (e == SOURCE_EVENT_NTS_KE_FAILED && r->ke_failed_handler_usec > 0)
                (void) usleep(r->ke_failed_handler_usec);
}

static void run_init(Run *r) {
        *r = (Run) {};
        ASSERT_OK(sd_event_new(&r->event));
        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_OBSERVE, &r->clock));
        strcpy(r->state_dir, "/tmp/test-source-XXXXXX");
        ASSERT_TRUE(mkdtemp(r->state_dir));

        r->nts = (NTSClientSettings) {
                .event = r->event,
                .clock = r->clock,
                .state_dir = r->state_dir,
                .trusted_certificates = ca_file,
                .ke_timeout_usec = 5 * USEC_PER_SEC,
                .retry_usec = 1 * USEC_PER_SEC,
        };
        r->settings = (SourceSettings) {
                .event = r->event,
                .clock = r->clock,
                .poll_interval_min_usec = 200 * USEC_PER_MSEC,
                .poll_interval_max_usec = 800 * USEC_PER_MSEC,
                .root_distance_max_usec = 5 * USEC_PER_SEC,
                .retry_usec = 1 * USEC_PER_SEC,
                .precise_timers = true,
                .nts = &r->nts,
        };
}

static void run_done(Run *r) {
        CALL_VOID(r, source_free(r->source));
        clock_backend_free(r->clock);
        sd_event_unref(r->event);
        mock_certs_remove(strdup(r->state_dir));
}

static void run_new_source(Run *r, const char *host, uint16_t port, bool nts) {
        char name[64];

        snprintf(name, sizeof name, "%s:%u", host, port);
        ASSERT_OK(source_new(&r->settings, name, host, port, nts, on_source_event, r, &r->source));
        ASSERT_EQ(source_state(r->source), SOURCE_IDLE);
}

/* Runs the loop until e was reported n times in all, or fails after WAIT_USEC. */
static void run_until(Run *r, SourceEvent e, unsigned n) {
        usec_t deadline = now(CLOCK_MONOTONIC) + WAIT_USEC;

        while (r->seen[e] < n) {
                ASSERT_TRUE(now(CLOCK_MONOTONIC) < deadline);
                ASSERT_OK(sd_event_run(r->event, 100 * USEC_PER_MSEC));
        }
}

/* Runs the loop for usec, whatever happens. */
static void run_for(Run *r, usec_t usec) {
        usec_t end = now(CLOCK_MONOTONIC) + usec;

        while (now(CLOCK_MONOTONIC) < end)
                ASSERT_OK(sd_event_run(r->event, end - now(CLOCK_MONOTONIC)));
}

static size_t index_of(const Run *r, SourceEvent e) {
        for (size_t i = 0; i < r->n_events; i++)
                if (r->events[i] == e)
                        return i;
        return SIZE_MAX;
}

/* ---- NTS sources ---- */

static void test_nts_source_polls_after_its_key_exchange(void) {
        MockProcess mock;
        const SourceSample *p;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) {}, &mock));
        run_new_source(&r, "localhost", mock.ke_port, true);

        ASSERT_OK(CALL(&r, source_start(r.source)));
        ASSERT_EQ(source_state(r.source), SOURCE_KEY_EXCHANGE);
        run_until(&r, SOURCE_EVENT_SAMPLE, 2);

        /* Keys first, then an address, then samples; nothing failed. */
        ASSERT_TRUE(index_of(&r, SOURCE_EVENT_NTS_KEYS) < index_of(&r, SOURCE_EVENT_ADDRESS));
        ASSERT_TRUE(index_of(&r, SOURCE_EVENT_ADDRESS) < index_of(&r, SOURCE_EVENT_SAMPLE));
        ASSERT_EQ(r.seen[SOURCE_EVENT_FAILED], 0);
        ASSERT_EQ(r.seen[SOURCE_EVENT_ADDRESS], 1);
        ASSERT_EQ(source_state(r.source), SOURCE_POLL_WAIT);

        p = source_sample(r.source);
        ASSERT_TRUE(p);
        ASSERT_TRUE(p->authenticated);
        ASSERT_FALSE(p->first);
        ASSERT_EQ(p->packet_count, 2);
        /* Loopback, the same clock: well under a second either way. */
        ASSERT_TRUE(llabs(p->ntp.offset_nsec) < NTP_NSEC_PER_SEC);
        ASSERT_EQ(socket_address_port(source_address(r.source)), mock.ntp_port);
        /* Every reply refilled the jar. */
        ASSERT_EQ(test_nts_report(source_nts(r.source)).cookies, NTS_MAX_COOKIES);
        ASSERT_TRUE(startswith(strempty(test_nts_report(source_nts(r.source)).aead), "AEAD_AES_SIV_CMAC_"));

        CALL_VOID(&r, source_stop(r.source));
        ASSERT_EQ(source_state(r.source), SOURCE_IDLE);
        ASSERT_TRUE(source_address(r.source) == NULL);
        run_done(&r);
        mock_server_stop(&mock);
}

/* The state files in dir: how many, and whether one lists cookie (may be NULL); *ret_cookies
 * (may be NULL) gets the number of cookies they list. */
static size_t state_files(const char *dir, const struct iovec *cookie, bool *ret_listed, size_t *ret_cookies) {
        _cleanup_free_ char *pattern = NULL;
        glob_t g = {};
        size_t n_files, n_cookies = 0;
        bool listed = false;

        ASSERT_TRUE(asprintf(&pattern, "%s/*.jar", dir) > 0);
        ASSERT_TRUE(IN_SET(glob(pattern, 0, NULL, &g), 0, GLOB_NOMATCH));
        n_files = g.gl_pathc;
        for (size_t i = 0; i < n_files; i++) {
                _cleanup_free_ char *text = NULL;
                _cleanup_close_ int fd = open(g.gl_pathv[i], O_RDONLY | O_CLOEXEC);

                ASSERT_TRUE(fd >= 0);
                ASSERT_OK(read_full_fd(fd, 64 * 1024, &text, NULL));
                for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                        uint8_t buf[NTS_MAX_COOKIE_SIZE];
                        ssize_t n;

                        if (!startswith(line, "cookie="))
                                continue;
                        n = hex_decode(line + strlen("cookie="), buf, sizeof buf);
                        ASSERT_TRUE(n > 0);
                        n_cookies++;
                        listed = listed || (cookie && (size_t) n == cookie->iov_len &&
                                            memcmp(buf, cookie->iov_base, n) == 0);
                }
        }
        globfree(&g);
        if (ret_listed)
                *ret_listed = listed;
        if (ret_cookies)
                *ret_cookies = n_cookies;
        return n_files;
}

/* The cookie of a sealed request: points into packet. */
static struct iovec sealed_cookie(uint8_t *packet, size_t size) {
        struct iovec p = IOVEC_MAKE(packet + NTP_HEADER_SIZE, size - NTP_HEADER_SIZE);
        NTS_ExtensionField ef;

        while (NTS_ef_next(&p, &ef) >= 0)
                if (ef.type == NTP_EF_NTS_COOKIE)
                        return ef.body;
        ASSERT_TRUE(false);
        return IOVEC_NULL;
}

static void on_nts_event(NTSClient *c, NTSClientEvent e, void *userdata) {
        Run *r = userdata;

        ASSERT_FALSE(r->in_call);
        r->nts_seen[e]++;
}

/* Runs the loop until the NTS client reported e n times in all, or fails after WAIT_USEC. */
static void run_until_nts(Run *r, NTSClientEvent e, unsigned n) {
        usec_t deadline = now(CLOCK_MONOTONIC) + WAIT_USEC;

        while (r->nts_seen[e] < n) {
                ASSERT_TRUE(now(CLOCK_MONOTONIC) < deadline);
                ASSERT_OK(sd_event_run(r->event, 100 * USEC_PER_MSEC));
        }
}

static NTSClient *client_with_keys(Run *r, const MockProcess *mock) {
        NTSClient *c = NULL;

        ASSERT_OK(nts_client_new(&r->nts, "localhost", "localhost", mock->ke_port, on_nts_event, r, &c));
        ASSERT_EQ(CALL(r, nts_client_prepare(c)), NTS_CLIENT_RESOLVING);
        run_until_nts(r, NTS_CLIENT_EVENT_KEYS, 1);
        ASSERT_EQ(CALL(r, nts_client_prepare(c)), NTS_CLIENT_READY);
        return c;
}

/* Seals n requests with c; each cookie into sent[] (copies). */
static void seal_requests(Run *r, NTSClient *c, struct iovec *sent, size_t n) {
        for (size_t i = 0; i < n; i++) {
                uint8_t packet[NTS_MAX_PACKET_SIZE] = {};
                struct iovec cookie;
                ssize_t l;

                l = CALL(r, nts_client_seal(c, packet, sizeof packet));
                ASSERT_TRUE(l > NTP_HEADER_SIZE);
                ASSERT_TRUE(nts_client_awaiting_reply(c));
                cookie = sealed_cookie(packet, (size_t) l);
                ASSERT_OK(iovec_memdup(&cookie, &sent[i]));
        }
}

/* No write per request: while the client runs there is no state file at all, so none can list
 * a cookie that went out; at a clean stop the unspent ones are saved, and none of those sent. */
static void test_state_file_is_written_at_a_clean_stop_only(void) {
        struct iovec sent[4];
        MockProcess mock;
        size_t n_cookies;
        bool listed;
        NTSClient *c;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) {}, &mock));
        c = client_with_keys(&r, &mock);
        ASSERT_EQ(state_files(r.state_dir, NULL, NULL, NULL), 0);

        seal_requests(&r, c, sent, ELEMENTSOF(sent));
        ASSERT_EQ(state_files(r.state_dir, NULL, NULL, NULL), 0);

        CALL_VOID(&r, nts_client_free(c));
        ASSERT_EQ(state_files(r.state_dir, NULL, NULL, &n_cookies), 1);
        ASSERT_EQ(n_cookies, NTS_MAX_COOKIES - ELEMENTSOF(sent));
        for (size_t i = 0; i < ELEMENTSOF(sent); i++) {
                ASSERT_EQ(state_files(r.state_dir, &sent[i], &listed, NULL), 1);
                ASSERT_FALSE(listed);
                iovec_done_erase(&sent[i]);
        }

        run_done(&r);
        mock_server_stop(&mock);
}

/* A start takes the cookies of the file and removes the file before the first of them goes: a
 * crash from then on finds no file, and the cookies are never sent twice. */
static void test_loaded_state_file_is_gone_before_its_first_cookie_is_sent(void) {
        struct iovec sent[1];
        MockProcess mock;
        NTSClient *c, *d = NULL;
        size_t n_saved;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) {}, &mock));
        c = client_with_keys(&r, &mock);
        CALL_VOID(&r, nts_client_free(c));
        ASSERT_EQ(state_files(r.state_dir, NULL, NULL, &n_saved), 1);
        ASSERT_EQ(n_saved, NTS_MAX_COOKIES);

        ASSERT_OK(nts_client_new(&r.nts, "localhost", "localhost", mock.ke_port, on_nts_event, &r, &d));
        ASSERT_EQ(CALL(&r, nts_client_prepare(d)), NTS_CLIENT_READY);
        ASSERT_EQ(test_nts_report(d).cookies, n_saved);
        ASSERT_EQ(state_files(r.state_dir, NULL, NULL, NULL), 0);
        seal_requests(&r, d, sent, ELEMENTSOF(sent));
        ASSERT_EQ(state_files(r.state_dir, NULL, NULL, NULL), 0);
        iovec_done_erase(&sent[0]);

        /* Stopped again: the cookies left go back into a file. */
        CALL_VOID(&r, nts_client_free(d));
        ASSERT_EQ(state_files(r.state_dir, NULL, NULL, &n_saved), 1);
        ASSERT_EQ(n_saved, NTS_MAX_COOKIES - 1);
        ASSERT_EQ(r.nts_seen[NTS_CLIENT_EVENT_KEYS], 1);

        run_done(&r);
        mock_server_stop(&mock);
}

static void test_client_resumes_from_its_state_file_without_key_exchange(void) {
        MockProcess mock;
        NTSClient *c, *d = NULL;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) {}, &mock));
        c = client_with_keys(&r, &mock);
        CALL_VOID(&r, nts_client_free(c));

        ASSERT_OK(nts_client_new(&r.nts, "localhost", "localhost", mock.ke_port, on_nts_event, &r, &d));
        ASSERT_EQ(CALL(&r, nts_client_prepare(d)), NTS_CLIENT_READY);
        ASSERT_TRUE(test_nts_report(d).cookies > 0);
        ASSERT_EQ(nts_client_ntp_port(d), mock.ntp_port);
        /* No second key exchange: its end would be reported. */
        run_for(&r, 300 * USEC_PER_MSEC);
        ASSERT_EQ(r.nts_seen[NTS_CLIENT_EVENT_KEYS], 1);

        CALL_VOID(&r, nts_client_free(d));
        run_done(&r);
        mock_server_stop(&mock);
}

static void test_nak_of_fresh_cookies_makes_the_source_back_off(void) {
        MockProcess mock;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) { .sabotage = "nak" }, &mock));
        run_new_source(&r, "localhost", mock.ke_port, true);

        ASSERT_OK(CALL(&r, source_start(r.source)));
        run_until(&r, SOURCE_EVENT_FAILED, 1);

        ASSERT_EQ(r.seen[SOURCE_EVENT_SAMPLE], 0);
        ASSERT_EQ(r.seen[SOURCE_EVENT_NTS_KEYS_DROPPED], 1);
        ASSERT_EQ(r.seen[SOURCE_EVENT_NTS_KE_FAILED], 1);
        /* The client's failure happened inside the reply's handling, so it was reported on the
         * next loop iteration, after the reply's own report; the source waited for it before
         * it gave up, so that its owner knows why first. */
        ASSERT_TRUE(index_of(&r, SOURCE_EVENT_NTS_KEYS_DROPPED) < index_of(&r, SOURCE_EVENT_NTS_KE_FAILED));
        ASSERT_TRUE(index_of(&r, SOURCE_EVENT_NTS_KE_FAILED) < index_of(&r, SOURCE_EVENT_FAILED));
        ASSERT_EQ(source_state(r.source), SOURCE_BACKING_OFF);
        ASSERT_FALSE(source_usable(r.source));
        ASSERT_EQ(test_nts_report(source_nts(r.source)).cookies, 0);
        ASSERT_TRUE(strstr(nts_client_last_error(source_nts(r.source)), "refused the cookies it had just issued"));

        run_done(&r);
        mock_server_stop(&mock);
}

static void test_forged_reply_is_ignored_while_waiting(void) {
        MockProcess mock;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) { .sabotage = "bad-auth" }, &mock));
        run_new_source(&r, "localhost", mock.ke_port, true);

        ASSERT_OK(CALL(&r, source_start(r.source)));
        run_until(&r, SOURCE_EVENT_ADDRESS, 1);
        run_for(&r, 1 * USEC_PER_SEC);

        /* The reply arrived and was refused; the real one might still come. */
        ASSERT_EQ(r.seen[SOURCE_EVENT_SAMPLE], 0);
        ASSERT_EQ(r.seen[SOURCE_EVENT_FAILED], 0);
        ASSERT_EQ(source_state(r.source), SOURCE_REPLY_WAIT);

        run_done(&r);
        mock_server_stop(&mock);
}

/* A failed key exchange backs off on the jittered ladder (timesyncd-backoff): no wait shorter
 * than the floor (ConnectionRetrySec=), the first below twice the floor, the next below the
 * floor doubled once per failure; the source starts over by itself. An Error record 2
 * (internal server error) is such a failure: the server may be back soon. The owner's handler
 * takes 300 ms: the source's wait still ends at the client's retry time, not that much before
 * it (which found the client backing off and failed once more without a key exchange). */
static void test_failed_key_exchange_backs_off_on_the_jittered_ladder(void) {
        MockProcess mock;
        NTSClient *c;
        usec_t wait;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) { .sabotage = "error-record" }, &mock));
        run_new_source(&r, "localhost", mock.ke_port, true);
        r.ke_failed_handler_usec = 300 * USEC_PER_MSEC;
        c = source_nts(r.source);

        ASSERT_OK(CALL(&r, source_start(r.source)));
        run_until(&r, SOURCE_EVENT_FAILED, 1);
        ASSERT_EQ(r.seen[SOURCE_EVENT_NTS_KE_FAILED], 1);
        ASSERT_EQ(source_state(r.source), SOURCE_BACKING_OFF);
        ASSERT_EQ(test_nts_report(c).ke_failures, 1);
        wait = nts_client_retry_after(c) - now(CLOCK_BOOTTIME);
        ASSERT_TRUE(wait + 500 * USEC_PER_MSEC >= r.nts.retry_usec && wait < 2 * r.nts.retry_usec);

        /* The source starts over by itself once the client may try again. */
        run_until(&r, SOURCE_EVENT_FAILED, 2);
        ASSERT_EQ(test_nts_report(c).ke_failures, 2);
        wait = nts_client_retry_after(c) - now(CLOCK_BOOTTIME);
        ASSERT_TRUE(wait + 500 * USEC_PER_MSEC >= r.nts.retry_usec && wait < 4 * r.nts.retry_usec);

        run_done(&r);
        mock_server_stop(&mock);
}

/* An Error record 1 (bad request) is the same answer until someone reconfigures the server: the
 * next try waits at the top of the ladder, [30 min, 1 h), at once. */
static void test_refused_key_exchange_waits_at_the_top_of_the_ladder(void) {
        MockProcess mock;
        usec_t wait;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) { .sabotage = "bad-request" }, &mock));
        run_new_source(&r, "localhost", mock.ke_port, true);

        ASSERT_OK(CALL(&r, source_start(r.source)));
        run_until(&r, SOURCE_EVENT_FAILED, 1);
        wait = nts_client_retry_after(source_nts(r.source)) - now(CLOCK_BOOTTIME);
        ASSERT_TRUE(wait + USEC_PER_SEC >= BACKOFF_KE_MAX_USEC / 2 && wait <= BACKOFF_KE_MAX_USEC);
        ASSERT_TRUE(strstr(nts_client_last_error(source_nts(r.source)), "refused our request as malformed"));

        run_done(&r);
        mock_server_stop(&mock);
}

/* Seals requests whose replies are all lost, until the cookies run out and the client asks for
 * new keys (a seal returns 0). */
static void seal_until_empty(Run *r, NTSClient *c) {
        uint8_t packet[NTS_MAX_PACKET_SIZE];
        ssize_t l;

        while ((l = CALL(r, nts_client_seal(c, packet, sizeof packet))) > 0)
                ;
        ASSERT_EQ(l, 0);
}

/* At most BACKOFF_LIMIT_DEFAULT key exchanges with one server name per hour, whatever asks for
 * them: here lost replies that drain the jar again and again, which the ladder does not see
 * (every key exchange succeeds). The next start is refused and reported, the client backs off
 * until an hour after the first one, and that is no failure of the server's. */
static void test_key_exchanges_with_one_name_are_capped_per_hour(void) {
        MockProcess mock;
        NTSClient *c;
        usec_t t0;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) {}, &mock));
        t0 = now(CLOCK_BOOTTIME);
        c = client_with_keys(&r, &mock);
        for (unsigned n = 1; n < BACKOFF_LIMIT_DEFAULT; n++) {
                seal_until_empty(&r, c);
                ASSERT_EQ(CALL(&r, nts_client_prepare(c)), NTS_CLIENT_RESOLVING);
                run_until_nts(&r, NTS_CLIENT_EVENT_KEYS, n + 1);
        }
        ASSERT_EQ(r.nts_seen[NTS_CLIENT_EVENT_KE_FAILED], 0);

        seal_until_empty(&r, c);
        ASSERT_EQ(CALL(&r, nts_client_prepare(c)), NTS_CLIENT_BACKING_OFF);
        run_until_nts(&r, NTS_CLIENT_EVENT_KE_FAILED, 1);
        ASSERT_EQ(r.nts_seen[NTS_CLIENT_EVENT_KEYS], BACKOFF_LIMIT_DEFAULT);
        ASSERT_TRUE(nts_client_retry_after(c) >= t0 + BACKOFF_LIMIT_PERIOD_USEC);
        ASSERT_TRUE(nts_client_retry_after(c) <= now(CLOCK_BOOTTIME) + BACKOFF_LIMIT_PERIOD_USEC);
        ASSERT_TRUE(strstr(nts_client_last_error(c), "postponed"));
        ASSERT_EQ(test_nts_report(c).ke_failures, 0);

        CALL_VOID(&r, nts_client_free(c));
        run_done(&r);
        mock_server_stop(&mock);
}

static void test_stopped_source_sends_nothing(void) {
        MockProcess mock;
        Run r;

        run_init(&r);
        ASSERT_OK(mock_server_start(certs, &(MockOptions) {}, &mock));
        run_new_source(&r, "localhost", mock.ke_port, true);

        ASSERT_OK(CALL(&r, source_start(r.source)));
        CALL_VOID(&r, source_stop(r.source));
        run_for(&r, 1 * USEC_PER_SEC);

        /* The key exchange ran on and reported its keys; the source did not move. */
        ASSERT_EQ(r.seen[SOURCE_EVENT_NTS_KEYS], 1);
        ASSERT_EQ(r.seen[SOURCE_EVENT_ADDRESS], 0);
        ASSERT_EQ(source_state(r.source), SOURCE_IDLE);

        /* Started again, it polls at once with those keys. */
        ASSERT_OK(CALL(&r, source_start(r.source)));
        ASSERT_EQ(source_state(r.source), SOURCE_RESOLVING);
        run_until(&r, SOURCE_EVENT_SAMPLE, 1);
        ASSERT_EQ(r.seen[SOURCE_EVENT_NTS_KEYS], 1);

        run_done(&r);
        mock_server_stop(&mock);
}

/* ---- plain NTP sources ---- */

static Run *plain_run(Run *r, const char *mode, MockProcess *ret_server) {
        run_init(r);
        ASSERT_OK(ntp_test_server_start(mode, ret_server));
        run_new_source(r, "127.0.0.1", ret_server->ntp_port, false);
        ASSERT_OK(CALL(r, source_start(r->source)));
        ASSERT_EQ(source_state(r->source), SOURCE_RESOLVING);
        return r;
}

static void test_plain_source_polls_unauthenticated(void) {
        MockProcess server;
        Run r;

        plain_run(&r, "normal", &server);
        run_until(&r, SOURCE_EVENT_SAMPLE, 2);
        ASSERT_FALSE(source_sample(r.source)->authenticated);
        ASSERT_TRUE(source_nts(r.source) == NULL);
        ASSERT_EQ(r.seen[SOURCE_EVENT_ADDRESS], 1);
        ASSERT_EQ(source_state(r.source), SOURCE_POLL_WAIT);

        run_done(&r);
        mock_server_stop(&server);
}

static void test_deny_kiss_fails_the_source_for_good(void) {
        MockProcess server;
        Run r;

        plain_run(&r, "deny", &server);
        run_until(&r, SOURCE_EVENT_FAILED, 1);
        ASSERT_EQ(source_state(r.source), SOURCE_FAILED);
        ASSERT_FALSE(source_usable(r.source));
        ASSERT_TRUE(strstr(source_last_error(r.source), "DENY"));
        /* Stopping does not make it usable again; nothing more is sent. */
        CALL_VOID(&r, source_stop(r.source));
        ASSERT_EQ(source_state(r.source), SOURCE_FAILED);
        run_for(&r, 500 * USEC_PER_MSEC);
        ASSERT_EQ(r.seen[SOURCE_EVENT_ADDRESS], 1);

        run_done(&r);
        mock_server_stop(&server);
}

static void test_rate_kiss_doubles_the_poll_interval(void) {
        MockProcess server;
        Run r;

        plain_run(&r, "rate", &server);
        run_until(&r, SOURCE_EVENT_ADDRESS, 1);
        run_for(&r, 100 * USEC_PER_MSEC);
        ASSERT_EQ(source_state(r.source), SOURCE_POLL_WAIT);
        ASSERT_EQ(source_poll_interval(r.source), 2 * r.settings.poll_interval_min_usec);
        ASSERT_EQ(r.seen[SOURCE_EVENT_SAMPLE], 0);

        run_done(&r);
        mock_server_stop(&server);
}

/* A RATE kiss raises the source's lowest poll level for good (timesyncd-backoff): a sample far
 * off, which polls at the shortest interval otherwise, polls at that floor, the first sample of
 * the address (a resync) as well as the ones after it. */
static void test_rate_kiss_floor_survives_a_large_offset_sample(void) {
        MockProcess server;
        Run r;

        run_init(&r);
        /* Our clock 10 s behind: every sample is far off. */
        clock_backend_free(r.clock);
        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_FAKE, &r.clock));
        clock_backend_fake_follow(r.clock, -10 * (int64_t) NTP_NSEC_PER_SEC);
        r.settings.clock = r.nts.clock = r.clock;
        ASSERT_OK(ntp_test_server_start("rate", &server));
        run_new_source(&r, "127.0.0.1", server.ntp_port, false);
        ASSERT_OK(CALL(&r, source_start(r.source)));
        run_until(&r, SOURCE_EVENT_ADDRESS, 1);
        run_for(&r, 100 * USEC_PER_MSEC);
        ASSERT_EQ(source_poll_interval(r.source), 2 * r.settings.poll_interval_min_usec);

        /* The server answers with time from now on: the first sample starts the address over,
         * the second is far off; each polls at the floor. */
        ASSERT_OK(kill(server.pid, SIGUSR1));
        for (unsigned n = 1; n <= 2; n++) {
                run_until(&r, SOURCE_EVENT_SAMPLE, n);
                ASSERT_TRUE(source_sample(r.source)->ntp.offset_nsec > 9 * (int64_t) NTP_NSEC_PER_SEC);
                ASSERT_EQ(source_poll_interval(r.source), 2 * r.settings.poll_interval_min_usec);
        }

        run_done(&r);
        mock_server_stop(&server);
}

static void test_unsynchronized_server_backs_off_and_starts_over(void) {
        MockProcess server;
        Run r;

        plain_run(&r, "unsync", &server);
        run_until(&r, SOURCE_EVENT_FAILED, 1);
        ASSERT_EQ(source_state(r.source), SOURCE_BACKING_OFF);
        ASSERT_STREQ(source_last_error(r.source), "not synchronized");
        ASSERT_TRUE(source_usable(r.source));

        /* After ConnectionRetrySec=, the source resolves and asks again by itself. */
        run_until(&r, SOURCE_EVENT_ADDRESS, 2);
        ASSERT_EQ(r.seen[SOURCE_EVENT_SAMPLE], 0);

        run_done(&r);
        mock_server_stop(&server);
}

static void test_foreign_clock_step_polls_at_once(void) {
        MockProcess server;
        usec_t t;
        Run r;

        plain_run(&r, "normal", &server);
        run_until(&r, SOURCE_EVENT_SAMPLE, 1);
        /* The next poll far away, as a reload would make it. */
        r.settings.poll_interval_min_usec = r.settings.poll_interval_max_usec = 30 * USEC_PER_SEC;
        CALL_VOID(&r, source_poll_limits_changed(r.source));
        ASSERT_EQ(source_state(r.source), SOURCE_POLL_WAIT);

        /* Not from inside the call: on the next loop iteration. */
        t = now(CLOCK_MONOTONIC);
        CALL_VOID(&r, source_clock_stepped(r.source, true));
        ASSERT_EQ(r.seen[SOURCE_EVENT_SAMPLE], 1);
        run_until(&r, SOURCE_EVENT_SAMPLE, 2);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t < 10 * USEC_PER_SEC);

        run_done(&r);
        mock_server_stop(&server);
}

/* The clock stepped (by the daemon for another source, or by someone else) while a request is
 * out: its reply was measured against the clock before the step, so it is not a sample; the
 * source asks again at once, and the next reply is one. */
static void test_reply_to_a_request_sent_before_a_step_is_not_used(void) {
        MockProcess server;
        struct timespec ts;
        int64_t stepped;
        Run r;

        plain_run(&r, "normal", &server);
        run_until(&r, SOURCE_EVENT_ADDRESS, 1);
        /* The first request went out with the ADDRESS report; its reply is not read yet. */
        ASSERT_EQ(source_state(r.source), SOURCE_REPLY_WAIT);
        ASSERT_OK(clock_backend_now(r.clock, &ts));
        stepped = (int64_t) ts.tv_sec * NTP_NSEC_PER_SEC + ts.tv_nsec;
        CALL_VOID(&r, source_clock_stepped(r.source, false));

        run_until(&r, SOURCE_EVENT_SAMPLE, 1);
        ASSERT_TRUE(source_sample(r.source)->origin_nsec > stepped);
        /* Well before the poll interval: it asked again at once. */
        ASSERT_EQ(r.seen[SOURCE_EVENT_SAMPLE], 1);

        run_done(&r);
        mock_server_stop(&server);
}

int main(void) {
        static const TestCase tests[] = {
                TEST_CASE(test_nts_source_polls_after_its_key_exchange),
                TEST_CASE(test_state_file_is_written_at_a_clean_stop_only),
                TEST_CASE(test_loaded_state_file_is_gone_before_its_first_cookie_is_sent),
                TEST_CASE(test_client_resumes_from_its_state_file_without_key_exchange),
                TEST_CASE(test_nak_of_fresh_cookies_makes_the_source_back_off),
                TEST_CASE(test_forged_reply_is_ignored_while_waiting),
                TEST_CASE(test_failed_key_exchange_backs_off_on_the_jittered_ladder),
                TEST_CASE(test_refused_key_exchange_waits_at_the_top_of_the_ladder),
                TEST_CASE(test_key_exchanges_with_one_name_are_capped_per_hour),
                TEST_CASE(test_stopped_source_sends_nothing),
                TEST_CASE(test_plain_source_polls_unauthenticated),
                TEST_CASE(test_deny_kiss_fails_the_source_for_good),
                TEST_CASE(test_rate_kiss_doubles_the_poll_interval),
                TEST_CASE(test_rate_kiss_floor_survives_a_large_offset_sample),
                TEST_CASE(test_unsynchronized_server_backs_off_and_starts_over),
                TEST_CASE(test_foreign_clock_step_polls_at_once),
                TEST_CASE(test_reply_to_a_request_sent_before_a_step_is_not_used),
        };

        log_parse_environment();
        ASSERT_OK(nts_client_load_libraries());
        ASSERT_OK(mock_certs_make(&certs));
        ASSERT_TRUE(asprintf(&ca_file, "%s/ca.pem", certs) > 0);

        for (size_t i = 0; i < ELEMENTSOF(tests); i++) {
                printf("/* %s */\n", tests[i].name);
                fflush(stdout);
                tests[i].func();
        }

        mock_certs_remove(certs);
        free(ca_file);
        printf("%zu tests passed\n", ELEMENTSOF(tests));
        return EXIT_SUCCESS;
}
