/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* One server, one vote (timesyncd-several-vote): what a source's NTS client knows of its key
 * exchange becomes its identity in the set, what is not known any more keeps what was known,
 * members of one key-exchange pool are told apart by their NTP address only, and a merge is
 * logged once. The sources are real but never started; what a key exchange would have left in
 * their NTS clients (the server that answered, its certificate key) is put there directly. */

#include <systemd/sd-event.h>

#include "test-util.h"
#include "tests.h"
#include "timesyncd-nts-client-internal.h"
#include "timesyncd-several-vote.h"

typedef struct KE {
        const char *ip;         /* the key-exchange server that answered; NULL: none yet */
        uint8_t key;            /* its certificate key, all bytes this value; 0: none */
} KE;

static void source_handler(Source *s, SourceEvent e, void *userdata) {
}

static void pool_handler(Pool *p, PoolEvent e, void *userdata) {
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
                _cleanup_(sd_event_unrefp) sd_event *e = NULL;
                _cleanup_free_ char *log = NULL;
                ServerName *lists[_SERVER_TYPE_MAX] = {};
                NTSClientSettings nts;
                SourceSettings settings;
                PoolSettings pool_settings;
                sd_bus *bus = NULL;
                ServerName *na, *nb;
                Source *a, *b;
                SourceSetEntry *eb;
                LogCapture cap;
                Several sv = {};

                log_info("case: %s", table[i].name);
                ASSERT_OK(sd_event_new(&e));
                nts = (NTSClientSettings) { .event = e };
                settings = (SourceSettings) {
                        .event = e,
                        .poll_interval_min_usec = 32 * USEC_PER_SEC,
                        .poll_interval_max_usec = 2048 * USEC_PER_SEC,
                        .nts = &nts,
                };
                pool_settings = (PoolSettings) { .source = &settings, .bus = &bus };
                sv.ctx.servers = lists;

                if (table[i].pool) {
                        ASSERT_OK(server_name_new(&lists[SERVER_NTS], SERVER_NTS, "pool:pool.example", &na));
                        ASSERT_OK(server_name_pool(na, &pool_settings, source_handler, pool_handler, NULL));
                        pool_start(na->pool, 2);
                        ASSERT_EQ(pool_n_sources(na->pool), 2u);
                        a = pool_source(na->pool, 0);
                        b = pool_source(na->pool, 1);
                } else {
                        ASSERT_OK(server_name_new(&lists[SERVER_NTS], SERVER_NTS, "a.example", &na));
                        ASSERT_OK(server_name_new(&lists[SERVER_NTS], SERVER_NTS, "b.example", &nb));
                        ASSERT_OK(server_name_source(na, &settings, source_handler, NULL));
                        ASSERT_OK(server_name_source(nb, &settings, source_handler, NULL));
                        a = na->source;
                        b = nb->source;
                }
                ASSERT_OK(source_set_add(&sv.set, a, "a.example"));
                ASSERT_OK(source_set_add(&sv.set, b, "b.example"));

                ke_done(a, &table[i].a);
                ke_done(b, &table[i].b);
                log_capture_start(&cap);
                ASSERT_FALSE(several_identify(&sv, a));
                if (table[i].forget_a)
                        ke_done(a, &(const KE) {});
                ASSERT_EQ(several_identify(&sv, b), table[i].merged);
                /* Nothing changed: no new judgement, no second line. */
                ASSERT_FALSE(several_identify(&sv, b));
                ASSERT_FALSE(several_identify(&sv, a));
                log = log_capture_stop(&cap);

                eb = source_set_find(&sv.set, b);
                ASSERT_TRUE(eb);
                ASSERT_TRUE(eb->duplicate_of == (table[i].merged ? a : NULL));
                ASSERT_TRUE(!source_set_find(&sv.set, a)->duplicate_of);
                if (table[i].log) {
                        const char *line = strstr(log, "it counts once");

                        ASSERT_CONTAINS(log, table[i].log);
                        ASSERT_TRUE(line);
                        ASSERT_NOT_CONTAINS(line + 1, "it counts once");
                } else
                        ASSERT_NOT_CONTAINS(log, "it counts once");

                source_set_done(&sv.set);
                server_list_flush(&lists[SERVER_NTS]);
        }
}

static void test_a_source_outside_the_set_is_not_judged(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ServerName *lists[_SERVER_TYPE_MAX] = {};
        NTSClientSettings nts;
        SourceSettings settings;
        ServerName *n;
        Several sv = {};

        ASSERT_OK(sd_event_new(&e));
        nts = (NTSClientSettings) { .event = e };
        settings = (SourceSettings) {
                .event = e,
                .poll_interval_min_usec = 32 * USEC_PER_SEC,
                .poll_interval_max_usec = 2048 * USEC_PER_SEC,
                .nts = &nts,
        };
        sv.ctx.servers = lists;
        ASSERT_OK(server_name_new(&lists[SERVER_NTS], SERVER_NTS, "a.example", &n));
        ASSERT_OK(server_name_source(n, &settings, source_handler, NULL));
        ke_done(n->source, &(const KE) { "192.0.2.1", 1 });

        ASSERT_FALSE(several_identify(&sv, n->source));
        ASSERT_TRUE(!source_set_find(&sv.set, n->source));
        source_set_done(&sv.set);
        server_list_flush(&lists[SERVER_NTS]);
}

static void test_each_merge_is_logged_once(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        _cleanup_free_ char *log = NULL;
        ServerName *lists[_SERVER_TYPE_MAX] = {};
        static const char *const names[] = { "a.example", "b.example", "c.example" };
        Source *s[ELEMENTSOF(names)];
        NTSClientSettings nts;
        SourceSettings settings;
        LogCapture cap;
        Several sv = {};
        const char *line;

        ASSERT_OK(sd_event_new(&e));
        nts = (NTSClientSettings) { .event = e };
        settings = (SourceSettings) {
                .event = e,
                .poll_interval_min_usec = 32 * USEC_PER_SEC,
                .poll_interval_max_usec = 2048 * USEC_PER_SEC,
                .nts = &nts,
        };
        sv.ctx.servers = lists;
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                ServerName *n;

                ASSERT_OK(server_name_new(&lists[SERVER_NTS], SERVER_NTS, names[i], &n));
                ASSERT_OK(server_name_source(n, &settings, source_handler, NULL));
                s[i] = n->source;
                ASSERT_OK(source_set_add(&sv.set, s[i], names[i]));
        }

        /* b is a's server; later c turns out to be a's too: the second merge names c only. */
        log_capture_start(&cap);
        ke_done(s[0], &(const KE) { "192.0.2.1", 7 });
        ASSERT_FALSE(several_identify(&sv, s[0]));
        ke_done(s[1], &(const KE) { "192.0.2.1", 8 });
        ASSERT_TRUE(several_identify(&sv, s[1]));
        ke_done(s[2], &(const KE) { "192.0.2.3", 7 });
        ASSERT_TRUE(several_identify(&sv, s[2]));
        log = log_capture_stop(&cap);

        line = strstr(log, "NTS source b.example is the same server as a.example");
        ASSERT_TRUE(line);
        ASSERT_NOT_CONTAINS(line + 1, "NTS source b.example");
        ASSERT_CONTAINS(log, "NTS source c.example is the same server as a.example (same certificate key");
        ASSERT_TRUE(source_set_find(&sv.set, s[2])->duplicate_of == s[0]);

        source_set_done(&sv.set);
        server_list_flush(&lists[SERVER_NTS]);
}

TEST_MAIN(TEST_CASE(test_sources_that_are_one_server_count_once),
          TEST_CASE(test_each_merge_is_logged_once),
          TEST_CASE(test_a_source_outside_the_set_is_not_judged))
