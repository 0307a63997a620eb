/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The sources of a pool entry (timesyncd-pool): a key-exchange pool's slots, each with its own
 * state file, and when a pool that names no member beyond those in use leaves its empty places
 * empty; an SRV pool without a bus to ask resolved on. The sources are never started: what a
 * slot's key exchanges would have left in its NTS client (its member, or that the pool had
 * none for it) is put there directly, and the pool is told what the slot reported. */

#include <systemd/sd-event.h>

#include "source-test-util.h"
#include "test-util.h"
#include "tests.h"
#include "timesyncd-nts-client-internal.h"
#include "timesyncd-pool.h"

typedef struct Fixture {
        sd_event *event;
        NTSClientSettings nts;
        SourceSettings settings;
        sd_bus *bus;
        PoolSettings pool_settings;
        Pool *pool;
        unsigned events[_POOL_EVENT_MAX];
} Fixture;

static void source_handler(Source *s, SourceEvent e, void *userdata) {
}

static void pool_handler(Pool *p, PoolEvent e, void *userdata) {
        Fixture *f = userdata;

        f->events[e]++;
}

static void fixture_init(Fixture *f, ServerNameKind kind, const char *entry, const char *host) {
        *f = (Fixture) {};
        ASSERT_OK(sd_event_new(&f->event));
        f->nts = (NTSClientSettings) { .event = f->event };
        f->settings = test_source_settings(f->event, &f->nts);
        f->pool_settings = (PoolSettings) { .source = &f->settings, .bus = &f->bus };
        ASSERT_OK(pool_new(&f->pool_settings, kind, entry, host, 0, source_handler, f, pool_handler, f, &f->pool));
}

static void fixture_done(Fixture *f) {
        pool_free(f->pool);
        sd_event_unref(f->event);
}

/* What a key exchange that named member leaves in the slot's client. */
static void slot_has_member(Source *s, const char *member) {
        NTSClient *c = source_nts(s);

        free(c->jar.ntp_server);
        c->jar.ntp_server = strdup(member);
        ASSERT_TRUE(c->jar.ntp_server);
}

/* What a key exchange that found no member the slot may take leaves. */
static void slot_exhausted(Source *s) {
        source_nts(s)->pool_exhausted = true;
}

static void test_a_key_exchange_pool_has_its_slots_at_once(void) {
        static const struct {
                size_t wanted, then;
        } table[] = {
                { 1, 1 },
                { 3, 3 },
                { 4, 2 },               /* fewer: the last ones go */
                { 2, 5 },               /* more: new ones come */
                { 40, 40 },             /* at most NTS_CLIENT_POOL_MAX */
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                Source *first[NTS_CLIENT_POOL_MAX];
                size_t n;
                Fixture f;

                log_info("case: %zu, then %zu", table[i].wanted, table[i].then);
                fixture_init(&f, SERVER_NAME_KE_POOL, "pool:pool.example", "pool.example");
                ASSERT_FALSE(pool_started(f.pool));
                pool_start(f.pool, table[i].wanted);
                ASSERT_TRUE(pool_started(f.pool));
                n = MIN(table[i].wanted, (size_t) NTS_CLIENT_POOL_MAX);
                ASSERT_EQ(pool_n_sources(f.pool), n);
                for (size_t k = 0; k < n; k++) {
                        char state[64];

                        first[k] = pool_source(f.pool, k);
                        /* Every slot keeps its own state file. */
                        snprintf(state, sizeof state, "pool:pool.example#%zu", k + 1);
                        ASSERT_STREQ(source_nts(first[k])->state_name, state);
                        ASSERT_STREQ(source_name(first[k]), "pool:pool.example");
                        ASSERT_TRUE(source_nts(first[k])->pool);
                        ASSERT_EQ(source_state(first[k]), SOURCE_IDLE);
                }
                ASSERT_FALSE(pool_stalled(f.pool));

                pool_stop(f.pool);
                ASSERT_FALSE(pool_started(f.pool));
                pool_start(f.pool, table[i].then);
                ASSERT_EQ(pool_n_sources(f.pool), MIN(table[i].then, (size_t) NTS_CLIENT_POOL_MAX));
                for (size_t k = 0; k < n; k++) {
                        bool kept = k < table[i].then;

                        /* The slots that stay are the same sources, with their keys. */
                        if (kept)
                                ASSERT_TRUE(pool_source(f.pool, k) == first[k]);
                        ASSERT_EQ(pool_source_retired(f.pool, first[k]), !kept);
                        ASSERT_TRUE(pool_has_source(f.pool, first[k]));
                }
                /* Retired sources are freed on a later turn of the loop. */
                ASSERT_OK(sd_event_run(f.event, 0));
                for (size_t k = table[i].then; k < n; k++)
                        ASSERT_FALSE(pool_has_source(f.pool, first[k]));
                ASSERT_EQ(f.events[POOL_EVENT_CHANGED] + f.events[POOL_EVENT_FAILED], 0u);
                fixture_done(&f);
        }
}

static void test_a_pool_without_more_members_leaves_its_empty_places_empty(void) {
        enum { SAMPLE = 1, FAILED, FAILED_EXHAUSTED };
        static const struct {
                const char *name;
                unsigned with_member;           /* of the 4 slots, the first ones */
                unsigned events[6];             /* of slot 4 (no member), in order */
                bool left;                      /* the last event made the empty slots leave */
        } table[] = {
                { "three exhausted key exchanges in a row", 2, { FAILED_EXHAUSTED, FAILED_EXHAUSTED,
                  FAILED_EXHAUSTED }, true },
                { "two are not enough", 2, { FAILED_EXHAUSTED, FAILED_EXHAUSTED }, false },
                { "a failure that is no exhaustion does not count", 2, { FAILED_EXHAUSTED, FAILED_EXHAUSTED,
                  FAILED }, false },
                { "a new member in between starts the count again", 2, { FAILED_EXHAUSTED, FAILED_EXHAUSTED,
                  SAMPLE, FAILED_EXHAUSTED, FAILED_EXHAUSTED }, false },
                { "... and then three more", 2, { FAILED_EXHAUSTED, FAILED_EXHAUSTED, SAMPLE, FAILED_EXHAUSTED,
                  FAILED_EXHAUSTED, FAILED_EXHAUSTED }, true },
                { "no slot has a member: they all keep asking", 0, { FAILED_EXHAUSTED, FAILED_EXHAUSTED,
                  FAILED_EXHAUSTED, FAILED_EXHAUSTED }, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *log = NULL;
                Source *slot[4];
                LogCapture cap;
                Fixture f;
                bool r = false;

                log_info("case: %s", table[i].name);
                fixture_init(&f, SERVER_NAME_KE_POOL, "pool:pool.example", "pool.example");
                pool_start(f.pool, 4);
                for (size_t k = 0; k < 4; k++)
                        slot[k] = pool_source(f.pool, k);
                for (size_t k = 0; k < table[i].with_member; k++) {
                        char member[32];

                        snprintf(member, sizeof member, "m%zu.pool.example", k);
                        slot_has_member(slot[k], member);
                }

                log_capture_start(&cap);
                for (size_t k = 0; k < ELEMENTSOF(table[i].events) && table[i].events[k]; k++) {
                        unsigned e = table[i].events[k];

                        /* A sample of a slot comes with a member; it loses it again before the
                         * next failure, as a turned-down member does. */
                        if (e == SAMPLE)
                                slot_has_member(slot[3], "new.pool.example");
                        if (e == FAILED_EXHAUSTED)
                                slot_exhausted(slot[3]);
                        if (e != SAMPLE) {
                                NTSClient *c = source_nts(slot[3]);

                                c->jar.ntp_server = mfree(c->jar.ntp_server);
                        }
                        r = pool_source_event(f.pool, slot[3], e == SAMPLE ? SOURCE_EVENT_SAMPLE : SOURCE_EVENT_FAILED);
                        if (e == FAILED_EXHAUSTED)
                                source_nts(slot[3])->pool_exhausted = false;
                }
                log = log_capture_stop(&cap);

                ASSERT_EQ(r, table[i].left);
                if (!table[i].left) {
                        ASSERT_EQ(pool_n_sources(f.pool), 4u);
                        ASSERT_NOT_CONTAINS(log, "leaving");
                        fixture_done(&f);
                        continue;
                }
                /* The slots with a member stay, the others leave: the places stay empty, also
                 * across a restart of the pool, until it is asked again. */
                ASSERT_EQ(pool_n_sources(f.pool), (size_t) table[i].with_member);
                ASSERT_TRUE(pool_source_retired(f.pool, slot[3]));
                ASSERT_TRUE(pool_source_retired(f.pool, slot[2]));
                ASSERT_CONTAINS(log, "Pool pool:pool.example names no member beyond the 2 in use");
                ASSERT_CONTAINS(log, "leaving 2 of its 4 places empty");
                pool_stop(f.pool);
                pool_start(f.pool, 4);
                ASSERT_EQ(pool_n_sources(f.pool), (size_t) table[i].with_member);
                fixture_done(&f);
        }
}

static void test_an_srv_pool_without_a_bus_is_one_clear_error(void) {
        _cleanup_free_ char *log = NULL;
        LogCapture cap;
        Fixture f;

        fixture_init(&f, SERVER_NAME_SRV, "srv:example.org", "example.org");
        pool_start(f.pool, 3);
        /* The lookup is armed, not run from inside pool_start(). */
        ASSERT_EQ(pool_n_sources(f.pool), 0u);
        ASSERT_STREQ(pool_last_error(f.pool), "");
        ASSERT_FALSE(pool_stalled(f.pool));

        log_capture_start(&cap);
        ASSERT_OK(sd_event_run(f.event, 0));
        log = log_capture_stop(&cap);
        ASSERT_EQ(f.events[POOL_EVENT_FAILED], 1u);
        ASSERT_EQ(f.events[POOL_EVENT_CHANGED], 0u);
        ASSERT_EQ(pool_n_sources(f.pool), 0u);
        ASSERT_STREQ(pool_last_error(f.pool), "not used: there is no system bus, so systemd-resolved cannot be "
                     "asked; SRV pools need systemd-resolved with DNSSEC=yes");
        ASSERT_CONTAINS(log, "SRV pool srv:example.org is not used");
        /* The next lookup is armed: the pool is not stalled. */
        ASSERT_FALSE(pool_stalled(f.pool));

        pool_stop(f.pool);
        ASSERT_FALSE(pool_started(f.pool));
        ASSERT_FALSE(pool_stalled(f.pool));
        fixture_done(&f);
}

TEST_MAIN(TEST_CASE(test_a_key_exchange_pool_has_its_slots_at_once),
          TEST_CASE(test_a_pool_without_more_members_leaves_its_empty_places_empty),
          TEST_CASE(test_an_srv_pool_without_a_bus_is_one_clear_error))
