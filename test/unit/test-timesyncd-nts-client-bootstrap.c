/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Bootstrap with a wrong clock (timesyncd-nts-client-bootstrap): when a refused key exchange
 * is repeated without validity checks, and which time from such keys is refused. Each row is
 * one client, built fresh; the policy of the settings is a stub that answers as the row says. */

#include <systemd/sd-event.h>

#include "nts-ke-client.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-nts-client-internal.h"

typedef enum PolicyAnswer {
        POLICY_NONE,            /* the settings have no policy */
        POLICY_ALLOW,
        POLICY_REFUSE,          /* refuses with a short reason for the status */
        POLICY_SILENT,          /* refuses, the question does not arise */
} PolicyAnswer;

typedef struct Policy {
        PolicyAnswer answer;
        unsigned n_asked;
        NTSClientBootstrap asked;
} Policy;

static bool policy_stub(void *userdata, NTSClientBootstrap direction, char *why, size_t size,
                        const char **ret_short) {
        Policy *p = userdata;

        p->n_asked++;
        p->asked = direction;
        switch (p->answer) {
        case POLICY_ALLOW:
                snprintf(why, size, "the clock reads as its floor");
                return true;
        case POLICY_REFUSE:
                snprintf(why, size, "the clock was synchronized");
                *ret_short = "the clock was synchronized";
                return false;
        default:
                snprintf(why, size, "not asked for");
                *ret_short = NULL;
                return false;
        }
}

typedef struct Events {
        unsigned n[_NTS_CLIENT_EVENT_MAX];
} Events;

static void handler(NTSClient *c, NTSClientEvent e, void *userdata) {
        Events *ev = userdata;

        ev->n[e]++;
}

/* A client of server "nts.example" on a loop of its own; policy NULL: the settings have none. */
typedef struct Client {
        sd_event *event;
        NTSClientSettings settings;
        NTSClient *c;
        Events ev;
} Client;

static void client_init(Client *t, Policy *policy) {
        *t = (Client) {};
        ASSERT_OK(sd_event_new(&t->event));
        t->settings = (NTSClientSettings) {
                .event = t->event,
                .retry_usec = 30 * USEC_PER_SEC,
                .bootstrap_allowed = policy ? policy_stub : NULL,
                .bootstrap_userdata = policy,
        };
        ASSERT_OK(nts_client_new(&t->settings, "nts.example", "nts.example", 0, handler, &t->ev, &t->c));
}

static void client_done(Client *t) {
        nts_client_free(t->c);
        sd_event_unref(t->event);
}

static void test_a_refusal_for_the_validity_period_is_retried_only_as_the_policy_allows(void) {
        static const struct {
                const char *name;
                NTS_KEStage stage;
                NTS_TLSCertTime cert;
                bool attempted;         /* this exchange already skipped the validity check */
                PolicyAnswer answer;
                bool retry;
                NTSClientBootstrap direction;   /* asked, and then attempted when retry */
                const char *reason;     /* the failure's reason afterwards; NULL: untouched */
        } table[] = {
                { "not yet valid, allowed: forward", NTS_KE_STAGE_TLS, NTS_TLS_CERT_NOT_YET_VALID, false,
                  POLICY_ALLOW, true, NTS_CLIENT_BOOTSTRAP_FORWARD, NULL },
                { "expired, allowed: backward", NTS_KE_STAGE_TLS, NTS_TLS_CERT_EXPIRED, false, POLICY_ALLOW, true,
                  NTS_CLIENT_BOOTSTRAP_BACKWARD, NULL },
                { "not yet valid, refused: the reason says why", NTS_KE_STAGE_TLS, NTS_TLS_CERT_NOT_YET_VALID,
                  false, POLICY_REFUSE, false, NTS_CLIENT_BOOTSTRAP_FORWARD,
                  "TLS failed; no bootstrap: the clock was synchronized" },
                { "expired, refused", NTS_KE_STAGE_TLS, NTS_TLS_CERT_EXPIRED, false, POLICY_REFUSE, false,
                  NTS_CLIENT_BOOTSTRAP_BACKWARD, "TLS failed; no bootstrap: the clock was synchronized" },
                { "refused without a reason: the failure stays as it is", NTS_KE_STAGE_TLS,
                  NTS_TLS_CERT_EXPIRED, false, POLICY_SILENT, false, NTS_CLIENT_BOOTSTRAP_BACKWARD, NULL },
                { "no policy: never", NTS_KE_STAGE_TLS, NTS_TLS_CERT_NOT_YET_VALID, false, POLICY_NONE, false,
                  NTS_CLIENT_BOOTSTRAP_NONE, NULL },
                { "a TLS failure that is not the validity period: never", NTS_KE_STAGE_TLS,
                  NTS_TLS_CERT_TIME_OTHER, false, POLICY_ALLOW, false, NTS_CLIENT_BOOTSTRAP_NONE, NULL },
                { "a failure after TLS: never", NTS_KE_STAGE_PROTOCOL, NTS_TLS_CERT_NOT_YET_VALID, false,
                  POLICY_ALLOW, false, NTS_CLIENT_BOOTSTRAP_NONE, NULL },
                { "no connection: never", NTS_KE_STAGE_CONNECT, NTS_TLS_CERT_EXPIRED, false, POLICY_ALLOW, false,
                  NTS_CLIENT_BOOTSTRAP_NONE, NULL },
                { "a bootstrap exchange that failed is not bootstrapped again", NTS_KE_STAGE_TLS,
                  NTS_TLS_CERT_NOT_YET_VALID, true, POLICY_ALLOW, false, NTS_CLIENT_BOOTSTRAP_NONE, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                Policy policy = { .answer = table[i].answer };
                NTS_KEResult result = {
                        .error = -EPROTO,
                        .stage = table[i].stage,
                        .cert_time_failure = table[i].cert,
                };
                char reason[128] = "untouched";
                NTSClient *c;
                Client t;

                log_info("case: %s", table[i].name);
                client_init(&t, table[i].answer == POLICY_NONE ? NULL : &policy);
                c = t.c;
                snprintf(result.reason, sizeof result.reason, "TLS failed");
                if (table[i].attempted)
                        c->bootstrap_attempt = NTS_CLIENT_BOOTSTRAP_FORWARD;

                ASSERT_EQ(nts_client_may_bootstrap(c, &result, reason, sizeof reason), table[i].retry);

                ASSERT_EQ(policy.n_asked, table[i].direction != NTS_CLIENT_BOOTSTRAP_NONE ? 1u : 0u);
                if (policy.n_asked > 0)
                        ASSERT_EQ(policy.asked, table[i].direction);
                ASSERT_EQ(c->bootstrap_attempt, table[i].retry ? table[i].direction :
                                                table[i].attempted ? NTS_CLIENT_BOOTSTRAP_FORWARD :
                                                                     NTS_CLIENT_BOOTSTRAP_NONE);
                ASSERT_STREQ(reason, table[i].reason ?: "untouched");
                /* Deciding is all it does: no keys, no state change, nothing reported. */
                ASSERT_EQ(nts_client_state(c), NTS_CLIENT_IDLE);
                ASSERT_EQ(nts_client_bootstrap(c), NTS_CLIENT_BOOTSTRAP_NONE);
                ASSERT_OK(sd_event_run(t.event, 0));
                for (NTSClientEvent k = 0; k < _NTS_CLIENT_EVENT_MAX; k++)
                        ASSERT_EQ(t.ev.n[k], 0u);
                client_done(&t);
        }
}

static void test_a_refused_bootstrap_warns_once(void) {
        Policy policy = { .answer = POLICY_REFUSE };
        NTS_KEResult result = {
                .error = -EPROTO,
                .stage = NTS_KE_STAGE_TLS,
                .cert_time_failure = NTS_TLS_CERT_NOT_YET_VALID,
        };
        _cleanup_free_ char *log = NULL;
        char reason[128];
        LogCapture cap;
        Client t;

        client_init(&t, &policy);
        log_capture_start(&cap);
        for (unsigned i = 0; i < 3; i++)
                ASSERT_FALSE(nts_client_may_bootstrap(t.c, &result, reason, sizeof reason));
        log = log_capture_stop(&cap);
        client_done(&t);
        ASSERT_EQ(policy.n_asked, 3u);
        ASSERT_CONTAINS(log, "Bootstrap with nts.example refused");
        /* Once: the first line is the only one. */
        ASSERT_NOT_CONTAINS(strstr(log, "Bootstrap with") + 1, "Bootstrap with");
}

#define S(x) ((int64_t) (x) * NTP_NSEC_PER_SEC)

static void test_time_from_bootstrap_keys_must_lie_in_the_chain_and_move_the_clock_that_way(void) {
        /* The chain is valid in [1000, 2000] (seconds, on the scale of server_time_nsec). */
        static const struct {
                const char *name;
                NTSClientBootstrap bootstrap;
                int64_t server_time_nsec, offset_nsec;
                int r;
        } table[] = {
                { "keys with every check: anything", NTS_CLIENT_BOOTSTRAP_NONE, S(5000), -S(100), 0 },
                { "forward, inside, forward", NTS_CLIENT_BOOTSTRAP_FORWARD, S(1500), S(100), 0 },
                { "forward, at the start of the chain", NTS_CLIENT_BOOTSTRAP_FORWARD, S(1000), 1, 0 },
                { "forward, at its end", NTS_CLIENT_BOOTSTRAP_FORWARD, S(2000), 1, 0 },
                { "forward, before the chain", NTS_CLIENT_BOOTSTRAP_FORWARD, S(1000) - 1, S(100), -EPERM },
                { "forward, after the chain", NTS_CLIENT_BOOTSTRAP_FORWARD, S(2000) + 1, S(100), -EPERM },
                { "forward keys that would move the clock back", NTS_CLIENT_BOOTSTRAP_FORWARD, S(1500), -1,
                  -EPERM },
                { "forward keys that would not move it", NTS_CLIENT_BOOTSTRAP_FORWARD, S(1500), 0, -EPERM },
                { "backward, inside, backward", NTS_CLIENT_BOOTSTRAP_BACKWARD, S(1500), -S(100), 0 },
                { "backward keys that would move the clock forward", NTS_CLIENT_BOOTSTRAP_BACKWARD, S(1500), 1,
                  -EPERM },
                { "backward, after the chain", NTS_CLIENT_BOOTSTRAP_BACKWARD, S(2001), -S(100), -EPERM },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                NTSClient *c;
                Client t;

                log_info("case: %s", table[i].name);
                client_init(&t, NULL);
                c = t.c;
                c->bootstrap = table[i].bootstrap;
                c->chain_valid_from = 1000;
                c->chain_valid_until = 2000;

                ASSERT_EQ(nts_client_check_bootstrap(c, table[i].server_time_nsec, table[i].offset_nsec),
                          table[i].r);
                ASSERT_OK(sd_event_run(t.event, 0));
                if (table[i].r == 0) {
                        ASSERT_EQ(nts_client_bootstrap(c), table[i].bootstrap);
                        ASSERT_EQ(nts_client_state(c), NTS_CLIENT_IDLE);
                        ASSERT_FALSE(nts_client_backing_off(c));
                        ASSERT_EQ(t.ev.n[NTS_CLIENT_EVENT_BOOTSTRAP_REFUSED], 0u);
                        client_done(&t);
                        continue;
                }
                /* Refused: the keys go, the client backs off and says so. */
                ASSERT_EQ(nts_client_bootstrap(c), NTS_CLIENT_BOOTSTRAP_NONE);
                ASSERT_EQ(nts_client_state(c), NTS_CLIENT_BACKING_OFF);
                ASSERT_TRUE(nts_client_backing_off(c));
                ASSERT_STREQ(nts_client_last_error(c), "bootstrap time refused");
                ASSERT_EQ(t.ev.n[NTS_CLIENT_EVENT_BOOTSTRAP_REFUSED], 1u);
                client_done(&t);
        }
}

TEST_MAIN(TEST_CASE(test_a_refusal_for_the_validity_period_is_retried_only_as_the_policy_allows),
          TEST_CASE(test_a_refused_bootstrap_warns_once),
          TEST_CASE(test_time_from_bootstrap_keys_must_lie_in_the_chain_and_move_the_clock_that_way))
