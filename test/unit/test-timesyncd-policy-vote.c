/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* One server, one vote (timesyncd-policy-vote): what a source's NTS client knows of its key
 * exchange becomes its identity in the set, what is not known any more keeps what was known,
 * members of one key-exchange pool are told apart by their NTP address only, and a merge is
 * logged once. The sources are real but never started; what a key exchange would have left in
 * their NTS clients (the server that answered, its certificate key) is put there directly. */

#include <systemd/sd-event.h>

#include "source-test-util.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-nts-client-internal.h"
#include "timesyncd-policy-vote.h"

typedef struct KE {
        const char *ip;         /* the key-exchange server that answered; NULL: none yet */
        uint8_t key;            /* its certificate key, all bytes this value; 0: none */
} KE;

static void source_handler(Source *s, SourceEvent e, void *userdata) {
}

static void pool_handler(Pool *p, PoolEvent e, void *userdata) {
}

/* Sources of the NTS list on a loop of their own, never started. */
typedef struct Fixture {
        sd_event *event;
        NTSClientSettings nts;
        SourceSettings settings;
        ServerName *lists[_SERVER_TYPE_MAX];
        Policy pol;
} Fixture;

static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        ASSERT_OK(sd_event_new(&f->event));
        f->nts = (NTSClientSettings) { .event = f->event };
        f->settings = test_source_settings(f->event, &f->nts);
        f->pol.ctx.servers = f->lists;
        f->pol.ctx.sources = &policy_source_ops;
        f->pol.ctx.lists = &policy_list_ops;
}

/* A source for server string in the NTS list, in the set. */
static Source *fixture_source(Fixture *f, const char *string) {
        ServerName *n;

        ASSERT_OK(server_name_new(&f->lists[SERVER_NTS], SERVER_NTS, string, &n));
        ASSERT_OK(server_name_source(n, &f->settings, source_handler, NULL));
        ASSERT_OK(source_set_add(&f->pol.set, n->source, string));
        return n->source;
}

static void fixture_done(Fixture *f) {
        source_set_done(&f->pol.set);
        server_list_flush(&f->lists[SERVER_NTS]);
        sd_event_unref(f->event);
}

static void ke_done(Source *s, const KE *ke) {
        NTSClient *c = source_nts(s);

        ASSERT_TRUE(c);
        if (ke->ip)
                ASSERT_OK(socket_address_from_string(ke->ip, 4460, &c->ke_peer));
        else
                c->ke_peer = (SocketAddress) {};
        c->has_ke_key = ke->key != 0;
        memset(c->ke_key_sha256, ke->key, sizeof c->ke_key_sha256);
}

static void test_sources_that_are_one_server_count_once(void) {
        static const struct {
                const char *name;
                bool pool;              /* a and b are two slots of one key-exchange pool */
                KE a, b;
                bool forget_a;          /* a's client forgot what it knew before b is identified */
                bool merged;
                const char *log;
        } table[] = {
                { "two servers", false, { "192.0.2.1", 1 }, { "192.0.2.2", 2 }, false, false, NULL },
                { "one key-exchange address", false, { "192.0.2.1", 1 }, { "192.0.2.1", 2 }, false, true,
                  "same key-exchange address 192.0.2.1" },
                { "one certificate key at two addresses", false, { "192.0.2.1", 7 }, { "192.0.2.2", 7 }, false,
                  true, "same certificate key" },
                { "nothing known yet: never one", false, { NULL, 0 }, { NULL, 0 }, false, false, NULL },
                { "what was known stays known", false, { "192.0.2.1", 7 }, { "192.0.2.2", 7 }, true, true,
                  "same certificate key" },
                { "two members of one pool share its key exchange by design", true, { "192.0.2.1", 7 },
                  { "192.0.2.1", 7 }, false, false, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *log = NULL;
                PoolSettings pool_settings;
                sd_bus *bus = NULL;
                SourceSetEntry *eb;
                LogCapture cap;
                Source *a, *b;
                Fixture f;

                log_info("case: %s", table[i].name);
                fixture_init(&f);
                if (table[i].pool) {
                        ServerName *n;

                        pool_settings = (PoolSettings) { .source = &f.settings, .bus = &bus };
                        ASSERT_OK(server_name_new(&f.lists[SERVER_NTS], SERVER_NTS, "pool:pool.example", &n));
                        ASSERT_OK(server_name_pool(n, &pool_settings, source_handler, pool_handler, NULL));
                        pool_start(n->pool, 2);
                        ASSERT_EQ(pool_n_sources(n->pool), 2u);
                        a = pool_source(n->pool, 0);
                        b = pool_source(n->pool, 1);
                        ASSERT_OK(source_set_add(&f.pol.set, a, "pool.example"));
                        ASSERT_OK(source_set_add(&f.pol.set, b, "pool.example"));
                } else {
                        a = fixture_source(&f, "a.example");
                        b = fixture_source(&f, "b.example");
                }

                ke_done(a, &table[i].a);
                ke_done(b, &table[i].b);
                log_capture_start(&cap);
                ASSERT_FALSE(policy_identify(&f.pol, a));
                if (table[i].forget_a)
                        ke_done(a, &(const KE) {});
                ASSERT_EQ(policy_identify(&f.pol, b), table[i].merged);
                /* Nothing changed: no new judgement, no second line. */
                ASSERT_FALSE(policy_identify(&f.pol, b));
                ASSERT_FALSE(policy_identify(&f.pol, a));
                log = log_capture_stop(&cap);

                eb = source_set_find(&f.pol.set, b);
                ASSERT_TRUE(eb);
                ASSERT_TRUE(eb->duplicate_of == (table[i].merged ? a : NULL));
                ASSERT_TRUE(!source_set_find(&f.pol.set, a)->duplicate_of);
                if (table[i].log) {
                        const char *line = strstr(log, "it counts once");

                        ASSERT_CONTAINS(log, table[i].log);
                        ASSERT_TRUE(line);
                        ASSERT_NOT_CONTAINS(line + 1, "it counts once");
                } else
                        ASSERT_NOT_CONTAINS(log, "it counts once");
                fixture_done(&f);
        }
}

static void test_a_source_outside_the_set_is_not_judged(void) {
        Source *a, *stray;
        ServerName *n;
        Fixture f;

        fixture_init(&f);
        a = fixture_source(&f, "a.example");
        ASSERT_OK(server_name_new(&f.lists[SERVER_NTS], SERVER_NTS, "stray.example", &n));
        ASSERT_OK(server_name_source(n, &f.settings, source_handler, NULL));
        stray = n->source;
        ke_done(a, &(const KE) { "192.0.2.1", 1 });
        ke_done(stray, &(const KE) { "192.0.2.1", 1 });

        ASSERT_FALSE(policy_identify(&f.pol, a));
        ASSERT_FALSE(policy_identify(&f.pol, stray));
        ASSERT_TRUE(!source_set_find(&f.pol.set, stray));
        ASSERT_TRUE(!source_set_find(&f.pol.set, a)->duplicate_of);
        fixture_done(&f);
}

static void test_each_merge_is_logged_once(void) {
        _cleanup_free_ char *log = NULL;
        Source *a, *b, *c;
        const char *line;
        LogCapture cap;
        Fixture f;

        fixture_init(&f);
        a = fixture_source(&f, "a.example");
        b = fixture_source(&f, "b.example");
        c = fixture_source(&f, "c.example");

        /* b is a's server; later c turns out to be a's too: the second merge names c only. */
        log_capture_start(&cap);
        ke_done(a, &(const KE) { "192.0.2.1", 7 });
        ASSERT_FALSE(policy_identify(&f.pol, a));
        ke_done(b, &(const KE) { "192.0.2.1", 8 });
        ASSERT_TRUE(policy_identify(&f.pol, b));
        ke_done(c, &(const KE) { "192.0.2.3", 7 });
        ASSERT_TRUE(policy_identify(&f.pol, c));
        log = log_capture_stop(&cap);

        line = strstr(log, "NTS source b.example is the same server as a.example");
        ASSERT_TRUE(line);
        ASSERT_NOT_CONTAINS(line + 1, "NTS source b.example");
        ASSERT_CONTAINS(log, "NTS source c.example is the same server as a.example (same certificate key");
        ASSERT_TRUE(source_set_find(&f.pol.set, c)->duplicate_of == a);
        fixture_done(&f);
}

static void ntp_address(Fixture *f, Source *s, const char *ip, uint16_t port) {
        SocketAddress a;

        ASSERT_OK(socket_address_from_string(ip, port, &a));
        source_identity_set_ntp_address(&source_set_find(&f->pol.set, s)->identity, &a);
}

/* Issue 33: s's key exchange names t1's NTP address. A claim, not a proof: no merge, t1 keeps
 * its vote, and the conflict is logged once and said in NTSStatus. */
static void test_a_claimed_ntp_address_is_a_conflict_not_a_twin(void) {
        _cleanup_free_ char *log = NULL;
        Source *s, *t1;
        const SourceSetEntry *e;
        bool identified[2];
        const char *line;
        LogCapture cap;
        char buf[256];
        Fixture f;

        fixture_init(&f);
        s = fixture_source(&f, "s.example");
        t1 = fixture_source(&f, "t1.example");
        /* Never started, the sources have no address of their own: what was known stays. */
        ntp_address(&f, s, "192.0.2.11", 4123);
        ntp_address(&f, t1, "192.0.2.11", 123);
        ke_done(s, &(const KE) { "192.0.2.10", 1 });
        ke_done(t1, &(const KE) { "192.0.2.11", 2 });

        log_capture_start(&cap);
        identified[0] = policy_identify(&f.pol, s);
        identified[0] |= policy_identify(&f.pol, t1);
        /* Nothing new: no new judgement, no second line. */
        identified[1] = policy_identify(&f.pol, t1) || policy_identify(&f.pol, s);
        log = log_capture_stop(&cap);
        ASSERT_TRUE(identified[0]);
        ASSERT_FALSE(identified[1]);

        e = source_set_find(&f.pol.set, t1);
        ASSERT_FALSE(e->duplicate_of);
        ASSERT_TRUE(e->conflict_with == s);
        ASSERT_NOT_CONTAINS(log, "it counts once");
        line = strstr(log, "NTS sources t1.example and s.example name one NTP address 192.0.2.11, though their "
                           "key-exchange servers and certificate keys differ");
        ASSERT_TRUE(line);
        ASSERT_NOT_CONTAINS(line + 1, "NTS sources t1.example");
        ASSERT_STREQ(policy_conflict(&f.pol, buf, sizeof buf),
                     "NTS sources t1.example and s.example name one NTP address 192.0.2.11");

        /* s names another address: the conflict is over. */
        ntp_address(&f, s, "192.0.2.10", 123);
        ASSERT_TRUE(policy_identify(&f.pol, s));
        ASSERT_FALSE(e->conflict_with);
        ASSERT_STREQ(policy_conflict(&f.pol, buf, sizeof buf), "");
        fixture_done(&f);
}

TEST_MAIN(TEST_CASE(test_sources_that_are_one_server_count_once),
          TEST_CASE(test_a_claimed_ntp_address_is_a_conflict_not_a_twin),
          TEST_CASE(test_each_merge_is_logged_once),
          TEST_CASE(test_a_source_outside_the_set_is_not_judged))
