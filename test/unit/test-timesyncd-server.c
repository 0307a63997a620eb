/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The server lists (timesyncd-server): how an entry is parsed by the list it is in, which name
 * comes next (stock timesyncd's precedence, the fallback list only when no other plain list
 * exists, with NTS the NTS lists only), and which name a source belongs to. */

#include <systemd/sd-event.h>

#include "ntp-responder.h"
#include "source-test-util.h"
#include "tests.h"
#include "timesyncd-clock.h"
#include "timesyncd-server.h"
#include "timesyncd-source.h"

static void test_an_entry_is_parsed_by_the_rules_of_its_list(void) {
        static const struct {
                ServerType type;
                const char *string;
                int r;
                ServerNameKind kind;
                const char *host;
                uint16_t port;
        } table[] = {
                { SERVER_SYSTEM, "ntp.example.org", 0, SERVER_NAME_ONE, "ntp.example.org", 0 },
                { SERVER_SYSTEM, "ntp.example.org:1234", 0, SERVER_NAME_ONE, "ntp.example.org", 1234 },
                { SERVER_FALLBACK, "[2001:db8::1]:123", 0, SERVER_NAME_ONE, "2001:db8::1", 123 },
                { SERVER_LINK, "192.0.2.1", 0, SERVER_NAME_ONE, "192.0.2.1", 0 },
                /* Pools are NTS spellings: a plain list refuses them. */
                { SERVER_SYSTEM, "pool:nts.example", -EINVAL },
                { SERVER_RUNTIME, "srv:example.org", -EINVAL },
                { SERVER_NTS, "pool:nts.example", 0, SERVER_NAME_KE_POOL, "nts.example", 0 },
                { SERVER_NTS, "pool:nts.example:4461", 0, SERVER_NAME_KE_POOL, "nts.example", 4461 },
                { SERVER_NTS_RUNTIME, "srv:example.org", 0, SERVER_NAME_SRV, "example.org", 0 },
                { SERVER_NTS, "[::1]:4460", 0, SERVER_NAME_ONE, "::1", 4460 },
                /* A host named "pool" at a port, not a pool. */
                { SERVER_NTS, "pool:4460", 0, SERVER_NAME_ONE, "pool", 4460 },
                { SERVER_NTS, "ntp.example.org:0", -EINVAL },
                { SERVER_NTS, "", -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                ServerName *list = NULL, *n = NULL;

                log_info("case: %s list, \"%s\"", server_type_to_string(table[i].type), table[i].string);
                ASSERT_EQ(server_name_new(&list, table[i].type, table[i].string, &n), table[i].r);
                if (table[i].r < 0) {
                        ASSERT_TRUE(!list);
                        continue;
                }
                ASSERT_TRUE(list == n);
                ASSERT_EQ(n->type, table[i].type);
                ASSERT_EQ(n->kind, table[i].kind);
                ASSERT_STREQ(n->string, table[i].string);
                ASSERT_STREQ(n->host, table[i].host);
                ASSERT_EQ(n->port, table[i].port);
                ASSERT_TRUE(server_name_usable(n));
                server_list_flush(&list);
                ASSERT_TRUE(!list);
        }
}

static void test_names_keep_their_order_within_a_list(void) {
        ServerName *list = NULL;

        ASSERT_OK(server_name_new(&list, SERVER_SYSTEM, "a.example", NULL));
        ASSERT_OK(server_name_new(&list, SERVER_SYSTEM, "b.example", NULL));
        ASSERT_OK(server_name_new(&list, SERVER_SYSTEM, "c.example", NULL));
        ASSERT_STREQ(list->string, "a.example");
        ASSERT_STREQ(list->names_next->string, "b.example");
        ASSERT_STREQ(list->names_next->names_next->string, "c.example");
        ASSERT_TRUE(!list->names_next->names_next->names_next);
        server_list_flush(&list);
}

/* A configuration: up to three names per list, by type. */
#define LIST_NAMES_MAX 3
typedef const char *Lists[_SERVER_TYPE_MAX][LIST_NAMES_MAX];

static void lists_make(const Lists config, ServerName *lists[static _SERVER_TYPE_MAX]) {
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++) {
                lists[t] = NULL;
                for (size_t j = 0; j < LIST_NAMES_MAX && config[t][j]; j++)
                        ASSERT_OK(server_name_new(&lists[t], t, config[t][j], NULL));
        }
}

static void lists_flush(ServerName *lists[static _SERVER_TYPE_MAX]) {
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                server_list_flush(&lists[t]);
}

static ServerName *lists_find(ServerName *const lists[static _SERVER_TYPE_MAX], const char *string) {
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, lists[t])
                        if (streq(n->string, string))
                                return n;
        ASSERT_TRUE(false);
        return NULL;
}

static void test_next_server_follows_the_precedence_of_the_lists(void) {
        static const Lists all = {
                [SERVER_RUNTIME] = { "r1", "r2" },
                [SERVER_SYSTEM] = { "s1" },
                [SERVER_LINK] = { "l1" },
                [SERVER_FALLBACK] = { "f1" },
                [SERVER_NTS] = { "n1", "n2" },
                [SERVER_NTS_RUNTIME] = { "nr1" },
        };
        static const Lists system_only = {
                [SERVER_SYSTEM] = { "s1", "s2" },
                [SERVER_FALLBACK] = { "f1" },
        };
        static const Lists link_only = {
                [SERVER_LINK] = { "l1" },
                [SERVER_FALLBACK] = { "f1", "f2" },
        };
        static const Lists fallback_only = {
                [SERVER_FALLBACK] = { "f1", "f2" },
                [SERVER_NTS] = { "n1" },
        };
        static const Lists nts_only = {
                [SERVER_NTS] = { "n1", "n2" },
        };
        static const Lists plain_only = {
                [SERVER_SYSTEM] = { "s1" },
                [SERVER_FALLBACK] = { "f1" },
        };
        static const Lists nothing = {};
        static const struct {
                const char *name;
                const Lists *config;
                bool nts;
                const char *current, *next;
                bool wrapped;
        } table[] = {
                { "runtime servers come first", &all, false, NULL, "r1", false },
                { "the next one of the same list", &all, false, "r1", "r2", false },
                { "runtime, then system", &all, false, "r2", "s1", false },
                { "system, then link", &all, false, "s1", "l1", false },
                { "after the last link server: over again", &all, false, "l1", "r1", true },
                { "system servers alone", &system_only, false, NULL, "s1", false },
                { "the fallback list is not used while system servers exist", &system_only, false, "s2", "s1",
                  true },
                { "link servers alone, also without fallback", &link_only, false, "l1", "l1", true },
                { "a fallback server in use gives way to link servers that appeared", &link_only, false, "f2",
                  "l1", false },
                { "only fallback servers: the first", &fallback_only, false, NULL, "f1", false },
                { "only fallback servers: the next", &fallback_only, false, "f1", "f2", false },
                { "only fallback servers: over again", &fallback_only, false, "f2", "f1", true },
                { "NTS: the runtime NTS list first", &all, true, NULL, "nr1", false },
                { "NTS: then the NTS list", &all, true, "nr1", "n1", false },
                { "NTS: the next of the NTS list", &all, true, "n1", "n2", false },
                { "NTS: over again, never a plain server", &all, true, "n2", "nr1", true },
                { "NTS: one list", &nts_only, true, "n2", "n1", true },
                { "NTS without NTS servers: none, not the plain or fallback ones", &plain_only, true, NULL, NULL,
                  false },
                { "plain NTP never takes an NTS server", &nts_only, false, NULL, NULL, false },
                { "no servers at all", &nothing, false, NULL, NULL, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                ServerName *lists[_SERVER_TYPE_MAX];
                const ServerName *current, *next;
                bool wrapped = !table[i].wrapped;

                log_info("case: %s", table[i].name);
                lists_make(*table[i].config, lists);
                current = table[i].current ? lists_find(lists, table[i].current) : NULL;
                next = server_next(lists, current, table[i].nts, &wrapped);
                if (table[i].next)
                        ASSERT_STREQ(next ? next->string : "(none)", table[i].next);
                else
                        ASSERT_TRUE(!next);
                ASSERT_EQ(wrapped, table[i].wrapped);
                lists_flush(lists);
        }
}

static bool deny(void *userdata, size_t i, const NTPHeader *request, NTPHeader *h, size_t *size) {
        if (i > 0)
                return false;
        h->stratum = NTP_STRATUM_KISS;
        memcpy(h->refid, "DENY", 4);
        return true;
}

static void on_failed(Source *s, SourceEvent event, void *userdata) {
        unsigned *n_failed = userdata;

        if (event == SOURCE_EVENT_FAILED)
                (*n_failed)++;
}

/* A server that refused service (kiss code DENY) is no longer usable: the walk skips it. */
static void test_next_server_skips_a_server_that_refused_service(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ServerName *lists[_SERVER_TYPE_MAX] = {}, *other[_SERVER_TYPE_MAX] = {};
        ServerName *a, *refused, *c, *f;
        ClockBackend *clock;
        SourceSettings settings;
        NTPResponder server;
        char string[64];
        unsigned n_failed = 0;
        usec_t deadline;
        bool wrapped;

        ASSERT_OK(sd_event_new(&e));
        ASSERT_OK(clock_backend_new(CLOCK_BACKEND_OBSERVE, &clock));
        settings = test_source_settings(e, NULL);
        settings.clock = clock;
        settings.root_distance_max_usec = 5 * USEC_PER_SEC;
        settings.precise_timers = true;

        ntp_responder_start(&server, deny, NULL);
        ASSERT_OK(server_name_new(&lists[SERVER_SYSTEM], SERVER_SYSTEM, "a.example", &a));
        snprintf(string, sizeof string, "127.0.0.1:%u", socket_address_port(&server.address));
        ASSERT_OK(server_name_new(&lists[SERVER_SYSTEM], SERVER_SYSTEM, string, &refused));
        ASSERT_OK(server_name_new(&lists[SERVER_SYSTEM], SERVER_SYSTEM, "c.example", &c));
        ASSERT_OK(server_name_new(&lists[SERVER_FALLBACK], SERVER_FALLBACK, "f.example", &f));

        ASSERT_OK(server_name_source(refused, &settings, on_failed, &n_failed));
        ASSERT_OK(source_start(refused->source));
        deadline = now(CLOCK_MONOTONIC) + 20 * USEC_PER_SEC;
        while (n_failed == 0) {
                ASSERT_TRUE(now(CLOCK_MONOTONIC) < deadline);
                ASSERT_OK(sd_event_run(e, 100 * USEC_PER_MSEC));
        }
        ntp_responder_stop(&server);
        ASSERT_EQ(source_state(refused->source), SOURCE_FAILED);
        ASSERT_FALSE(server_name_usable(refused));

        ASSERT_TRUE(server_next(lists, a, false, &wrapped) == c);
        ASSERT_FALSE(wrapped);
        ASSERT_TRUE(server_next(lists, c, false, &wrapped) == a);
        ASSERT_TRUE(wrapped);
        ASSERT_TRUE(server_next(lists, NULL, false, &wrapped) == a);
        ASSERT_FALSE(wrapped);

        /* A list of refused servers alone still is a list: the fallback list stays unused. */
        LIST_REMOVE(names, lists[SERVER_SYSTEM], refused);
        LIST_APPEND(names, other[SERVER_SYSTEM], refused);
        other[SERVER_FALLBACK] = TAKE_PTR(lists[SERVER_FALLBACK]);
        ASSERT_TRUE(!server_next(other, NULL, false, &wrapped));
        ASSERT_TRUE(!server_next(other, refused, false, &wrapped));

        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++) {
                server_list_flush(&lists[t]);
                server_list_flush(&other[t]);
        }
        clock_backend_free(clock);
}

static void handler(Source *s, SourceEvent event, void *userdata) {
        ASSERT_TRUE(false);
}

static void test_a_source_is_found_under_its_name(void) {
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ServerName *lists[_SERVER_TYPE_MAX] = {};
        ServerName *a, *b, *c;
        SourceSettings settings;

        ASSERT_OK(sd_event_new(&e));
        settings = test_source_settings(e, NULL);

        ASSERT_OK(server_name_new(&lists[SERVER_SYSTEM], SERVER_SYSTEM, "a.example", &a));
        ASSERT_OK(server_name_new(&lists[SERVER_LINK], SERVER_LINK, "b.example:1234", &b));
        ASSERT_OK(server_name_new(&lists[SERVER_LINK], SERVER_LINK, "c.example", &c));

        ASSERT_OK(server_name_source(b, &settings, handler, NULL));
        ASSERT_TRUE(b->source);
        ASSERT_STREQ(source_name(b->source), "b.example:1234");
        /* Kept with the name: asking again gives the same source. */
        Source *first = b->source;
        ASSERT_OK(server_name_source(b, &settings, handler, NULL));
        ASSERT_TRUE(b->source == first);
        ASSERT_TRUE(server_name_usable(b));

        ASSERT_OK(server_name_source(a, &settings, handler, NULL));
        ASSERT_TRUE(server_lists_find_source(lists, a->source) == a);
        ASSERT_TRUE(server_lists_find_source(lists, b->source) == b);
        /* A source of no name: none. */
        _cleanup_(source_freep) Source *stray = NULL;
        ASSERT_OK(source_new(&settings, "c.example", "c.example", 0, false, handler, NULL, &stray));
        ASSERT_TRUE(!server_lists_find_source(lists, stray));
        ASSERT_TRUE(!c->source);

        /* Flushing frees the sources with their names. */
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                server_list_flush(&lists[t]);
}

static void test_every_type_has_a_distinct_name(void) {
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++) {
                ASSERT_TRUE(server_type_to_string(t));
                for (ServerType u = 0; u < t; u++)
                        ASSERT_FALSE(streq(server_type_to_string(t), server_type_to_string(u)));
        }
        ASSERT_TRUE(server_type_to_string(_SERVER_TYPE_MAX) == NULL);
        ASSERT_TRUE(server_type_to_string(_SERVER_TYPE_INVALID) == NULL);
        ASSERT_TRUE(server_type_is_nts(SERVER_NTS));
        ASSERT_TRUE(server_type_is_nts(SERVER_NTS_RUNTIME));
        ASSERT_FALSE(server_type_is_nts(SERVER_SYSTEM));
        ASSERT_FALSE(server_type_is_nts(SERVER_FALLBACK));
}

TEST_MAIN(TEST_CASE(test_an_entry_is_parsed_by_the_rules_of_its_list),
          TEST_CASE(test_names_keep_their_order_within_a_list),
          TEST_CASE(test_next_server_follows_the_precedence_of_the_lists),
          TEST_CASE(test_next_server_skips_a_server_that_refused_service),
          TEST_CASE(test_a_source_is_found_under_its_name),
          TEST_CASE(test_every_type_has_a_distinct_name))
