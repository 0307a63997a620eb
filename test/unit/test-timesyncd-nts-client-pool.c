/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The clients of one key-exchange pool (timesyncd-nts-client-pool): which names a key exchange
 * denies, how a named member is judged against the others' members and the members turned
 * down, when a member that fails is turned down, and what a client does whose member polls an
 * address another client polls. No key exchange runs: the members are put into the clients'
 * jars as a key exchange would, and the event loop only delivers the clients' reports. */

#include <systemd/sd-event.h>

#include "test-util.h"
#include "tests.h"
#include "timesyncd-nts-client-internal.h"

#define CLIENTS_MAX 4
#define TURNED_DOWN_MAX 3

typedef struct Fixture {
        sd_event *event;
        NTSClientSettings settings;
        NTSClientPool *pool;
        NTSClient *clients[NTS_CLIENT_POOL_MAX];
        size_t n_clients;
        NTSClient *turner;      /* turns names down (turn_down()) */
        unsigned events[_NTS_CLIENT_EVENT_MAX];
} Fixture;

static void handler(NTSClient *c, NTSClientEvent e, void *userdata) {
        Fixture *f = userdata;

        f->events[e]++;
}

static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        ASSERT_OK(sd_event_new(&f->event));
        f->settings = (NTSClientSettings) {
                .event = f->event,
                .retry_usec = 30 * USEC_PER_SEC,
        };
        ASSERT_OK(nts_client_pool_new(&f->pool));
}

static NTSClient *fixture_client(Fixture *f) {
        NTSClient *c;

        ASSERT_TRUE(f->n_clients < ELEMENTSOF(f->clients));
        ASSERT_OK(nts_client_new(&f->settings, "pool:pool.example", "pool.example", 0, handler, f, &c));
        ASSERT_OK(nts_client_join_pool(c, f->pool));
        f->clients[f->n_clients++] = c;
        return c;
}

/* A client of one server, outside the pool, freed with the fixture. */
static NTSClient *fixture_client_alone(Fixture *f) {
        NTSClient *c;

        ASSERT_TRUE(f->n_clients < ELEMENTSOF(f->clients));
        ASSERT_OK(nts_client_new(&f->settings, "one.example", "one.example", 0, handler, f, &c));
        f->clients[f->n_clients++] = c;
        return c;
}

static void fixture_done(Fixture *f) {
        for (size_t i = 0; i < f->n_clients; i++)
                nts_client_free(f->clients[i]);
        nts_client_pool_free(f->pool);
        sd_event_unref(f->event);
}

static SocketAddress addr(const char *ip, uint16_t port) {
        SocketAddress a;

        ASSERT_OK(socket_address_from_string(ip, port, &a));
        return a;
}

/* What a key exchange that named member leaves in c, and the address c then polls (NULL:
 * none yet). */
static void set_member(NTSClient *c, const char *member, const char *ip) {
        free(c->jar.ntp_server);
        c->jar.ntp_server = member ? strdup(member) : NULL;
        ASSERT_TRUE(!member || c->jar.ntp_server);
        c->member_address = ip ? addr(ip, 123) : (SocketAddress) {};
        c->state = member ? NTS_CLIENT_READY : NTS_CLIENT_IDLE;
}

/* Turns name down for the pool the way a refusing member is, through one client of the pool
 * that keeps no member afterwards. */
static void turn_down(Fixture *f, const char *name) {
        NTSClient *t = f->turner ?: (f->turner = fixture_client(f));

        set_member(t, name, NULL);
        ASSERT_TRUE(nts_client_pool_member_failed(t, /* refused= */ true));
        ASSERT_TRUE(!t->jar.ntp_server);
}

static void test_a_key_exchange_denies_the_others_members_then_those_turned_down(void) {
        static const struct {
                const char *name;
                const char *own;
                const char *others[CLIENTS_MAX];        /* "-": a client without keys */
                const char *turned_down[TURNED_DOWN_MAX];
                bool expire;                            /* the turned-down names' hour is over */
                const char *deny[CLIENTS_MAX + TURNED_DOWN_MAX];
        } table[] = {
                { "the others' members, not its own", "s.pool", { "a.pool", "b.pool" }, {}, false,
                  { "a.pool", "b.pool" } },
                { "a client without keys names none", NULL, { "a.pool", "-" }, {}, false, { "a.pool" } },
                { "the names turned down come after the members", NULL, { "a.pool" }, { "x.pool", "y.pool" },
                  false, { "a.pool", "x.pool", "y.pool" } },
                { "a name turned down twice is denied once", NULL, {}, { "x.pool", "X.POOL" }, false,
                  { "x.pool" } },
                { "after an hour, turned-down names are no longer denied", NULL, { "a.pool" }, { "x.pool" }, true,
                  { "a.pool" } },
                { "an empty Server record is no name to deny", NULL, { "" }, {}, false, {} },
                { "nothing to deny", "s.pool", {}, {}, false, {} },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char *deny[NTS_KE_MAX_DENIED_SERVERS];
                NTSClient *c;
                Fixture f;
                size_t n, k = 0;

                log_info("case: %s", table[i].name);
                fixture_init(&f);
                c = fixture_client(&f);
                set_member(c, table[i].own, NULL);
                for (size_t j = 0; j < CLIENTS_MAX && table[i].others[j]; j++)
                        set_member(fixture_client(&f), streq(table[i].others[j], "-") ? NULL : table[i].others[j],
                                   NULL);
                for (size_t j = 0; j < TURNED_DOWN_MAX && table[i].turned_down[j]; j++)
                        turn_down(&f, table[i].turned_down[j]);
                if (table[i].expire)
                        for (size_t j = 0; j < f.pool->n_turned_down; j++)
                                f.pool->turned_down[j].until = 1;

                n = nts_client_pool_deny(c, deny);
                for (; k < ELEMENTSOF(table[i].deny) && table[i].deny[k]; k++) {
                        ASSERT_TRUE(k < n);
                        ASSERT_STREQ(deny[k], table[i].deny[k]);
                }
                ASSERT_EQ(n, k);
                fixture_done(&f);
        }
}

static void test_the_deny_list_holds_what_records_can_carry_members_first(void) {
        char long_name[NTS_MAX_SERVER_NAME_SIZE + 2];
        char *deny[NTS_KE_MAX_DENIED_SERVERS];
        NTSClient *c;
        Fixture f;
        size_t n;

        fixture_init(&f);
        c = fixture_client(&f);

        /* A name longer than a record can carry is left out. */
        memset(long_name, 'a', sizeof long_name - 1);
        long_name[sizeof long_name - 1] = '\0';
        set_member(fixture_client(&f), long_name, NULL);
        n = nts_client_pool_deny(c, deny);
        ASSERT_EQ(n, 0u);

        /* The pool is full of clients with members, and eight names are turned down: more
         * than the records can carry. The members come first, the names turned down are cut
         * at the limit. */
        for (size_t i = 0; i < NTS_POOL_TURNED_DOWN_MAX; i++) {
                char name[32];

                snprintf(name, sizeof name, "down%zu.pool", i);
                turn_down(&f, name);
        }
        while (f.n_clients < NTS_CLIENT_POOL_MAX) {
                char name[32];

                snprintf(name, sizeof name, "m%zu.pool", f.n_clients);
                set_member(fixture_client(&f), name, NULL);
        }
        n = nts_client_pool_deny(c, deny);
        ASSERT_EQ(n, (size_t) NTS_KE_MAX_DENIED_SERVERS);
        /* Members: clients 3 to 15 (the first three are c, the long name, the turner). */
        ASSERT_STREQ(deny[0], "m3.pool");
        ASSERT_STREQ(deny[12], "m15.pool");
        ASSERT_STREQ(deny[13], "down0.pool");
        ASSERT_STREQ(deny[NTS_KE_MAX_DENIED_SERVERS - 1], "down2.pool");
        /* A seventeenth client finds no place. */
        NTSClient *extra;
        ASSERT_OK(nts_client_new(&f.settings, "pool:pool.example", "pool.example", 0, handler, &f, &extra));
        ASSERT_EQ(nts_client_join_pool(extra, f.pool), -E2BIG);
        nts_client_free(extra);
        fixture_done(&f);
}

static void test_the_oldest_turned_down_name_makes_room(void) {
        char *deny[NTS_KE_MAX_DENIED_SERVERS];
        NTSClient *c;
        Fixture f;
        size_t n;

        fixture_init(&f);
        c = fixture_client(&f);
        for (size_t i = 0; i <= NTS_POOL_TURNED_DOWN_MAX; i++) {
                char name[32];

                snprintf(name, sizeof name, "down%zu.pool", i);
                turn_down(&f, name);
        }
        n = nts_client_pool_deny(c, deny);
        ASSERT_EQ(n, (size_t) NTS_POOL_TURNED_DOWN_MAX);
        ASSERT_STREQ(deny[0], "down1.pool");
        ASSERT_STREQ(deny[n - 1], "down8.pool");
        fixture_done(&f);
}

static void test_a_named_member_is_judged_against_the_others_and_those_turned_down(void) {
        static const struct {
                const char *name;
                bool others_without_keys;
                bool expire;
                const char *member, *ip;
                uint16_t port;
                NTS_PoolVerdict verdict;
        } table[] = {
                { "a member another client has", false, false, "a.pool", NULL, 0, NTS_POOL_DENIED_AGAIN },
                { "the same in other case", false, false, "B.Pool", NULL, 0, NTS_POOL_DENIED_AGAIN },
                { "a member turned down", false, false, "x.pool", NULL, 0, NTS_POOL_DENIED_AGAIN },
                { "a member turned down, after its hour", false, true, "x.pool", NULL, 0, NTS_POOL_NEW },
                { "a new name", false, false, "c.pool", NULL, 0, NTS_POOL_NEW },
                { "a new name for an address another polls", false, false, "c.pool", "192.0.2.2", 123,
                  NTS_POOL_SAME_ADDRESS },
                { "the same address at another port", false, false, "c.pool", "192.0.2.2", 1123, NTS_POOL_NEW },
                { "its own member is nobody else's", false, false, "s.pool", "192.0.2.9", 123, NTS_POOL_NEW },
                { "no Server record while others use the server", false, false, NULL, NULL, 0,
                  NTS_POOL_NO_MEMBER },
                { "no Server record, nobody else has keys", true, false, NULL, NULL, 0, NTS_POOL_NEW },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                SocketAddress a;
                NTSClient *c;
                Fixture f;

                log_info("case: %s", table[i].name);
                fixture_init(&f);
                c = fixture_client(&f);
                set_member(c, "s.pool", "192.0.2.9");
                if (!table[i].others_without_keys) {
                        set_member(fixture_client(&f), "a.pool", "192.0.2.1");
                        set_member(fixture_client(&f), "b.pool", "192.0.2.2");
                }
                turn_down(&f, "x.pool");
                if (table[i].expire)
                        f.pool->turned_down[0].until = 1;
                if (table[i].ip)
                        a = addr(table[i].ip, table[i].port);

                ASSERT_EQ(nts_client_pool_judge(c, table[i].member, table[i].ip ? &a : NULL), table[i].verdict);
                fixture_done(&f);
        }
}

static void test_a_member_is_turned_down_when_it_refuses_or_stays_silent_twice(void) {
        static const struct {
                const char *name;
                bool in_pool, has_member, refused;
                unsigned calls;         /* the same failure, in a row */
                NTSClientState state;
                bool turned_down;
                NTSClientState state_after;
        } table[] = {
                { "refused: at once", true, true, true, 1, NTS_CLIENT_READY, true, NTS_CLIENT_IDLE },
                { "one round without an answer: kept", true, true, false, 1, NTS_CLIENT_READY, false,
                  NTS_CLIENT_READY },
                { "two rounds in a row", true, true, false, 2, NTS_CLIENT_READY, true, NTS_CLIENT_IDLE },
                { "refused while backing off: the retry time stays", true, true, true, 1,
                  NTS_CLIENT_BACKING_OFF, true, NTS_CLIENT_BACKING_OFF },
                { "without a member: nothing to turn down", true, false, true, 1, NTS_CLIENT_IDLE, false,
                  NTS_CLIENT_IDLE },
                { "outside a pool: never", false, true, true, 1, NTS_CLIENT_READY, false, NTS_CLIENT_READY },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                char *deny[NTS_KE_MAX_DENIED_SERVERS];
                NTSClient *c, *other;
                Fixture f;
                bool r = false;

                log_info("case: %s", table[i].name);
                fixture_init(&f);
                other = fixture_client(&f);
                c = table[i].in_pool ? fixture_client(&f) : fixture_client_alone(&f);
                set_member(c, table[i].has_member ? "m.pool" : NULL, "192.0.2.1");
                c->state = table[i].state;

                for (unsigned k = 0; k < table[i].calls; k++)
                        r = nts_client_pool_member_failed(c, table[i].refused);

                ASSERT_EQ(r, table[i].turned_down);
                ASSERT_EQ(nts_client_state(c), table[i].state_after);
                if (table[i].has_member)
                        /* Its keys go with the member. */
                        ASSERT_EQ(!c->jar.ntp_server, table[i].turned_down);
                /* Turned down, it stays denied to the other clients of the pool for an hour;
                 * kept, it is denied as a member in use. */
                ASSERT_EQ(f.pool->n_turned_down, table[i].turned_down ? 1u : 0u);
                ASSERT_EQ(nts_client_pool_deny(other, deny), table[i].in_pool && table[i].has_member ? 1u : 0u);
                if (table[i].in_pool && table[i].has_member)
                        ASSERT_STREQ(deny[0], "m.pool");
                ASSERT_FALSE(nts_client_pool_exhausted(c));
                fixture_done(&f);
        }
}

static void test_two_members_on_one_address_make_one_give_way(void) {
        static const struct {
                const char *name;
                bool in_pool;
                NTSClientState state;
                const char *ip;
                unsigned fruitless;     /* answers in a row without a new member, before */
                int r;
                NTSClientState state_after;
        } table[] = {
                { "a new address: claimed", true, NTS_CLIENT_READY, "192.0.2.2", 1, 0, NTS_CLIENT_READY },
                { "an address another polls, after a fruitless answer: the key exchange failed", true,
                  NTS_CLIENT_READY, "192.0.2.1", 1, -EADDRINUSE, NTS_CLIENT_BACKING_OFF },
                { "while a key exchange runs, nothing is claimed", true, NTS_CLIENT_KEY_EXCHANGE, "192.0.2.1",
                  1, 0, NTS_CLIENT_KEY_EXCHANGE },
                { "outside a pool, nothing is claimed", false, NTS_CLIENT_READY, "192.0.2.1", 1, 0,
                  NTS_CLIENT_READY },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *log = NULL;
                char *deny[NTS_KE_MAX_DENIED_SERVERS];
                NTSClient *c, *other;
                SocketAddress a;
                LogCapture cap;
                Fixture f;

                log_info("case: %s", table[i].name);
                fixture_init(&f);
                other = fixture_client(&f);
                set_member(other, "a.pool", "192.0.2.1");
                c = table[i].in_pool ? fixture_client(&f) : fixture_client_alone(&f);
                set_member(c, "b.pool", NULL);
                c->state = table[i].state;
                c->pool_fruitless = table[i].fruitless;
                a = addr(table[i].ip, 123);

                log_capture_start(&cap);
                ASSERT_EQ(nts_client_pool_claim_address(c, &a), table[i].r);
                log = log_capture_stop(&cap);
                ASSERT_OK(sd_event_run(f.event, 0));
                ASSERT_EQ(nts_client_state(c), table[i].state_after);

                if (table[i].r == 0) {
                        bool claimed = table[i].in_pool && table[i].state == NTS_CLIENT_READY;

                        ASSERT_EQ(socket_address_equal(&c->member_address, &a), claimed);
                        if (claimed)
                                ASSERT_EQ(c->pool_fruitless, 0u);
                        ASSERT_STREQ(c->jar.ntp_server, "b.pool");
                        ASSERT_EQ(f.events[NTS_CLIENT_EVENT_KE_FAILED], 0u);
                } else {
                        /* The name that led to another's server is turned down, the keys go,
                         * and the pool counts as having no more members for c. */
                        ASSERT_TRUE(!c->jar.ntp_server);
                        ASSERT_EQ(nts_client_pool_deny(other, deny), 1u);
                        ASSERT_STREQ(deny[0], "b.pool");
                        ASSERT_TRUE(nts_client_pool_exhausted(c));
                        ASSERT_TRUE(nts_client_backing_off(c));
                        ASSERT_CONTAINS(nts_client_last_error(c), "named only members in use or turned down");
                        ASSERT_CONTAINS(log, "Pool member b.pool of pool:pool.example is a new name for an NTP "
                                        "address in use: turning it down.");
                        ASSERT_EQ(f.events[NTS_CLIENT_EVENT_KE_FAILED], 1u);
                }
                fixture_done(&f);
        }
}

TEST_MAIN(TEST_CASE(test_a_key_exchange_denies_the_others_members_then_those_turned_down),
          TEST_CASE(test_the_deny_list_holds_what_records_can_carry_members_first),
          TEST_CASE(test_the_oldest_turned_down_name_makes_room),
          TEST_CASE(test_a_named_member_is_judged_against_the_others_and_those_turned_down),
          TEST_CASE(test_a_member_is_turned_down_when_it_refuses_or_stays_silent_twice),
          TEST_CASE(test_two_members_on_one_address_make_one_give_way))
