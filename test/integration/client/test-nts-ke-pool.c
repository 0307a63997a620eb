/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Several sources from one key-exchange pool, on loopback: the mock server as a pool
 * (mock-pool.h) naming three member mock servers that share its cookie key, and our KE client
 * sending NTP Server Deny records (NTS_KEClientParams.deny) with NTS_pool_check() judging each
 * answer, as the daemon will. Every member a test takes is asked for the time with the pool's
 * cookies: a member that did not accept them would be no source at all.
 *
 * Member names are resolved by a table here, not by DNS: it maps two names to one member, a
 * pool listing one server twice, without touching the host's name service. */

#include <stdio.h>

#include "fileio.h"
#include "iovec-util.h"
#include "mock-harness.h"
#include "nts-pool.h"
#include "string-util.h"
#include "tests.h"

#define KE_TIMEOUT_USEC (10 * USEC_PER_SEC)
#define NTP_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define N_MEMBERS 3

static char *certs, *ca_file, *keys_file;
static MockProcess members[N_MEMBERS];
/* The members' names in Server records; ALIAS is a second name of member 0. */
static const char *const member_names[N_MEMBERS] = { "m0.pool.test", "m1.pool.test", "m2.pool.test" };
#define ALIAS "alias.pool.test"

/* The test's name service: a member name, or its alias, to the member's NTP address. */
static int resolve_member(const char *name, SocketAddress *ret) {
        for (size_t i = 0; i < N_MEMBERS; i++)
                if (streq(name, member_names[i]) || (i == 0 && streq(name, ALIAS)))
                        return socket_address_from_string("127.0.0.1", members[i].ntp_port, ret);
        return -ENOENT;
}

typedef struct Pool {
        MockProcess process;
        char *count_file;
} Pool;

/* A pool over the members, with more options such as --pool-sequence=; member i is named
 * member_names[i] (and member 0 also ALIAS when with_alias, as a fourth member). */
static void pool_start(Pool *p, bool with_alias, const char *const *options) {
        char *args[16];
        size_t n = 0;

        ASSERT_TRUE(asprintf(&p->count_file, "%s/pool-counts", certs) >= 0);
        (void) unlink(p->count_file);
        for (size_t i = 0; i < N_MEMBERS; i++)
                ASSERT_TRUE(asprintf(&args[n++], "--pool-member=%s:%u", member_names[i], members[i].ntp_port) >= 0);
        if (with_alias)
                ASSERT_TRUE(asprintf(&args[n++], "--pool-member=%s:%u", ALIAS, members[0].ntp_port) >= 0);
        ASSERT_TRUE(asprintf(&args[n++], "--count-file=%s", p->count_file) >= 0);
        for (size_t i = 0; options && options[i]; i++)
                ASSERT_TRUE((args[n++] = strdup(options[i])) != NULL);
        args[n] = NULL;

        ASSERT_OK(mock_server_start(certs, &(MockOptions) { .keys_file = keys_file, .pool_args = args },
                                    &p->process));
        for (size_t i = 0; i < n; i++)
                free(args[i]);
}

static void pool_stop(Pool *p) {
        mock_server_stop(&p->process);
        free(p->count_file);
}

/* The value of one line "KEY=N" of the pool's count file; -1 while it has none. */
static int pool_count(const Pool *p, const char *key) {
        _cleanup_(fclosep) FILE *f = fopen(p->count_file, "re");
        char line[128];
        unsigned v;

        while (f && fgets(line, sizeof(line), f))
                if (startswith(line, key) && line[strlen(key)] == '=' &&
                    sscanf(line + strlen(key) + 1, "%u", &v) == 1)
                        return (int) v;
        return -1;
}

/* The pool rewrites the file after it has sent a response, which the client may have read
 * already: wait up to 5 s for the figure. */
static void assert_pool_count(const Pool *p, const char *key, int expected) {
        for (unsigned i = 0; i < 500 && pool_count(p, key) != expected; i++)
                (void) usleep(10 * 1000);
        ASSERT_EQ(pool_count(p, key), expected);
}

static NTS_KEResult *pool_ke(const Pool *p, char *const *deny, size_t n_deny) {
        NTS_AEADAlgorithm offer[8];
        NTS_KEResult *r = NULL;
        int n;

        n = ASSERT_OK(NTS_aead_offer(offer, ELEMENTSOF(offer)));
        NTS_KEClientParams params = {
                .addresses = &p->process.ke_address,
                .n_addresses = 1,
                .tls = { .hostname = "localhost", .ca_file = ca_file },
                .aead = offer,
                .n_aead = (size_t) n,
                .timeout_usec = KE_TIMEOUT_USEC,
                .deny = deny,
                .n_deny = n_deny,
        };
        ASSERT_OK(NTS_ke_client_run(&params, &r));
        if (r->error < 0)
                fprintf(stderr, "KE with the pool failed: %s\n", r->reason);
        ASSERT_OK(r->error);
        ASSERT_TRUE(r->ntp_server);
        printf("# %zu denied: pool named %s port %u\n", n_deny, r->ntp_server, r->ntp_port);
        return r;
}

/* The member accepts the pool's cookie and answers with the pool's keys. */
static void assert_member_serves(const NTS_KEResult *ke, const SocketAddress *address) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c2s = NULL, *s2c = NULL;
        NTS_NTPResult ntp = {};

        ASSERT_OK(harness_aead_contexts(ke, &c2s, &s2c));
        NTS_NTPQueryParams q = {
                .c2s = c2s,
                .s2c = s2c,
                .cookie = ke->cookies[0],
                .timeout_usec = NTP_TIMEOUT_USEC,
        };
        ASSERT_OK(NTS_ntp_client_query(address, &q, &ntp));
        ASSERT_EQ(ntp.nts_error, NTS_OK);
        ASSERT_TRUE(ntp.n_cookies > 0);
        NTS_ntp_result_done(&ntp);
}

static bool response_has_record(const NTS_KEResult *ke, uint16_t type) {
        struct iovec msg = ke->response;
        NTS_Record rec;

        while (NTS_record_next(&msg, &rec) >= 0)
                if (rec.type == type)
                        return true;
        return false;
}

/* Sources taken from the pool in one round; names point into the results, owned here. */
typedef struct Round {
        NTS_KEResult *results[N_MEMBERS + 1];
        NTS_PoolMember in_use[N_MEMBERS + 1];
        size_t n_in_use;
        char *deny[NTS_KE_MAX_DENIED_SERVERS];  /* in use, then turned down */
        size_t n_deny;
        unsigned n_ke, n_denied_again, n_same_address;
} Round;

static void round_done(Round *r) {
        for (size_t i = 0; i < r->n_in_use; i++)
                NTS_ke_result_free(r->results[i]);
        for (size_t i = 0; i < r->n_deny; i++)
                free(r->deny[i]);
}

/* The round as nts-pool.h describes it, until `wanted` sources or NTS_POOL_MAX_FRUITLESS
 * answers in a row without a new one. */
static void round_run(Round *r, const Pool *p, size_t wanted) {
        unsigned fruitless = 0;

        while (r->n_in_use < wanted && fruitless < NTS_POOL_MAX_FRUITLESS) {
                _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke = pool_ke(p, r->deny, r->n_deny);
                NTS_PoolVerdict v;
                SocketAddress a;

                r->n_ke++;
                v = NTS_pool_check(r->in_use, r->n_in_use, r->deny, r->n_deny, ke->ntp_server, NULL);
                if (v == NTS_POOL_NEW) {
                        ASSERT_OK(resolve_member(ke->ntp_server, &a));
                        v = NTS_pool_check(r->in_use, r->n_in_use, r->deny, r->n_deny, ke->ntp_server, &a);
                }
                printf("#   %s\n", NTS_pool_verdict_to_string(v));

                switch (v) {
                case NTS_POOL_NEW:
                        assert_member_serves(ke, &a);
                        r->in_use[r->n_in_use] = (NTS_PoolMember) { .name = ke->ntp_server, .address = a };
                        r->results[r->n_in_use++] = TAKE_PTR(ke);
                        ASSERT_TRUE(r->n_deny < ELEMENTSOF(r->deny));
                        ASSERT_TRUE((r->deny[r->n_deny++] = strdup(r->in_use[r->n_in_use - 1].name)) != NULL);
                        fruitless = 0;
                        break;
                case NTS_POOL_SAME_ADDRESS:
                        r->n_same_address++;
                        ASSERT_TRUE(r->n_deny < ELEMENTSOF(r->deny));
                        ASSERT_TRUE((r->deny[r->n_deny++] = strdup(ke->ntp_server)) != NULL);
                        fruitless++;
                        break;
                case NTS_POOL_DENIED_AGAIN:
                        r->n_denied_again++;
                        fruitless++;
                        break;
                default:
                        ASSERT_TRUE(false);
                }
        }
}

static void assert_distinct_members(const Round *r, size_t n) {
        ASSERT_EQ(r->n_in_use, n);
        for (size_t i = 0; i < r->n_in_use; i++)
                for (size_t j = i + 1; j < r->n_in_use; j++) {
                        ASSERT_FALSE(strcaseeq(r->in_use[i].name, r->in_use[j].name));
                        ASSERT_FALSE(socket_address_equal(&r->in_use[i].address, &r->in_use[j].address));
                }
}

/* Member 0 comes first three times in the sequence: without the deny records the second and
 * third key exchange would name it again. */
static void test_growing_deny_list_gives_a_new_member_each_time(void) {
        Pool p = {};
        char *deny[N_MEMBERS];

        pool_start(&p, false, (const char *const[]) { "--pool-sequence=0,0,0,1,2", NULL });
        for (size_t i = 0; i < N_MEMBERS; i++) {
                _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke = pool_ke(&p, deny, i);
                SocketAddress a;

                ASSERT_STREQ(ke->ntp_server, member_names[i]);
                ASSERT_EQ(ke->ntp_port, members[i].ntp_port);
                ASSERT_EQ(NTS_pool_check(NULL, 0, deny, i, ke->ntp_server, NULL), NTS_POOL_NEW);
                /* The pool passes a Keep Alive record on, as real ones do; skipped. */
                ASSERT_TRUE(response_has_record(ke, NTS_KE_RECORD_KEEP_ALIVE));
                ASSERT_OK(resolve_member(ke->ntp_server, &a));
                assert_member_serves(ke, &a);
                deny[i] = strdup(ke->ntp_server);
                ASSERT_TRUE(deny[i]);
        }
        assert_pool_count(&p, "pool_denied_given", 0);
        for (size_t i = 0; i < N_MEMBERS; i++)
                free(deny[i]);
        pool_stop(&p);
}

/* Every member denied: the pool names one of them anyway (as pendulum-project's nts-pool does),
 * and the client notices before it would take that member a second time. */
static void test_all_members_denied_gives_a_denied_one_and_the_client_notices(void) {
        _cleanup_(round_done) Round r = {};
        Pool p = {};

        pool_start(&p, false, NULL);
        round_run(&r, &p, N_MEMBERS + 1);
        assert_distinct_members(&r, N_MEMBERS);
        ASSERT_EQ(r.n_denied_again, NTS_POOL_MAX_FRUITLESS);
        ASSERT_EQ(r.n_ke, N_MEMBERS + NTS_POOL_MAX_FRUITLESS);
        assert_pool_count(&p, "pool_denied_given", NTS_POOL_MAX_FRUITLESS);
        pool_stop(&p);
}

/* A pool that ignores the records and repeats itself (the sequence stands in for a random
 * pick): the check by name keeps the repeats out. */
static void test_pool_ignoring_deny_still_gives_distinct_sources(void) {
        _cleanup_(round_done) Round r = {};
        Pool p = {};

        pool_start(&p, false, (const char *const[]) { "--pool-ignore-deny", "--pool-sequence=0,0,1,0,2", NULL });
        round_run(&r, &p, N_MEMBERS);
        assert_distinct_members(&r, N_MEMBERS);
        ASSERT_EQ(r.n_ke, 5);
        ASSERT_EQ(r.n_denied_again, 2);
        /* Repeats the client denied: it really ignored the records. */
        assert_pool_count(&p, "pool_denied_given", 2);
        pool_stop(&p);
}

/* A pool listing one server under two names, ignoring the deny records: the second name is
 * new, its NTP address is not. The client denies that name too and asks again. */
static void test_second_name_for_a_member_in_use_is_turned_down_by_address(void) {
        _cleanup_(round_done) Round r = {};
        Pool p = {};

        /* Members 0..2, then the alias (index 3) of member 0. */
        pool_start(&p, true, (const char *const[]) { "--pool-ignore-deny", "--pool-sequence=0,3,1,2", NULL });
        round_run(&r, &p, N_MEMBERS);
        assert_distinct_members(&r, N_MEMBERS);
        ASSERT_EQ(r.n_same_address, 1);
        ASSERT_EQ(r.n_ke, 4);
        ASSERT_STREQ(r.deny[1], ALIAS);
        pool_stop(&p);
}

static void ke_done_unexpected(NTS_KEClient *c, NTS_KEResult *result, void *userdata) {
        ASSERT_TRUE(false);
}

static void test_ke_client_refuses_a_deny_list_it_cannot_send(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        char *deny[NTS_KE_MAX_DENIED_SERVERS + 1];
        NTS_AEADAlgorithm offer[] = { NTS_AEAD_AES_SIV_CMAC_256 };
        char overlong[NTS_MAX_SERVER_NAME_SIZE + 2];
        NTS_KEClient *c = NULL;

        memset(overlong, 'a', sizeof(overlong) - 1);
        overlong[sizeof(overlong) - 1] = 0;
        for (size_t i = 0; i < ELEMENTSOF(deny); i++)
                deny[i] = (char *) member_names[0];
        ASSERT_OK(sd_event_new(&e));
        NTS_KEClientParams p = {
                .addresses = &members[0].ke_address,
                .n_addresses = 1,
                .tls = { .hostname = "localhost", .ca_file = ca_file },
                .aead = offer,
                .n_aead = 1,
                .timeout_usec = KE_TIMEOUT_USEC,
                .deny = deny,
                .n_deny = ELEMENTSOF(deny),
        };
        ASSERT_ERROR(NTS_ke_client_start(e, &p, ke_done_unexpected, NULL, &c), E2BIG);
        p.n_deny = 1;
        deny[0] = (char *) "";
        ASSERT_ERROR(NTS_ke_client_start(e, &p, ke_done_unexpected, NULL, &c), EINVAL);
        deny[0] = overlong;
        ASSERT_ERROR(NTS_ke_client_start(e, &p, ke_done_unexpected, NULL, &c), EINVAL);
        ASSERT_FALSE(c);
}

static const TestCase tests[] = {
        TEST_CASE(test_growing_deny_list_gives_a_new_member_each_time),
        TEST_CASE(test_all_members_denied_gives_a_denied_one_and_the_client_notices),
        TEST_CASE(test_pool_ignoring_deny_still_gives_distinct_sources),
        TEST_CASE(test_second_name_for_a_member_in_use_is_turned_down_by_address),
        TEST_CASE(test_ke_client_refuses_a_deny_list_it_cannot_send),
};

int main(void) {
        log_parse_environment();

        ASSERT_OK(mock_certs_make(&certs));
        ASSERT_TRUE(asprintf(&ca_file, "%s/ca.pem", certs) >= 0);
        ASSERT_TRUE(asprintf(&keys_file, "%s/pool-cookie-key", certs) >= 0);
        /* One after the other: the first creates the shared cookie key, the others read it. */
        for (size_t i = 0; i < N_MEMBERS; i++)
                ASSERT_OK(mock_server_start(certs, &(MockOptions) { .keys_file = keys_file }, &members[i]));

        for (size_t i = 0; i < ELEMENTSOF(tests); i++) {
                printf("/* %s */\n", tests[i].name);
                fflush(stdout);
                tests[i].func();
        }

        for (size_t i = 0; i < N_MEMBERS; i++)
                mock_server_stop(&members[i]);
        mock_certs_remove(certs);
        free(ca_file);
        free(keys_file);
        printf("%zu tests passed\n", ELEMENTSOF(tests));
        return EXIT_SUCCESS;
}
