/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The agreement rules of the policy (docs/ARCHITECTURE.md, "Several sources") under random sets,
 * as chrony's test/unit/sources.c checks its selection, through policy_on_event() as the manager
 * drives it, with fake sources (policy-test-util.h): 1000 sets of honest servers and a minority
 * of liars (colluding or not), servers listed twice, liars whose key exchange claims an honest
 * server's NTP address, spares listed beyond NTSMaxSources=, over 40 rounds of answers,
 * silences of random length and delays that jumped, with a fixed seed. After every decision:
 *   - the clock is steered only by at least the quorum (a majority of the servers in use, and
 *     NTSMinAgreeingSources=) of distinct honest servers answering now and agreeing, only to
 *     the honest servers' time, and the agreement the decision states counts every server in
 *     use once, silent ones included;
 *   - a falseticker or a liar is never selected;
 *   - one server never votes twice: of the sources in use, one per server is no duplicate;
 *   - a silent source stays in the set, counted, until a spare that agrees took its place.
 * A failure prints the set, the round and what the set holds. */

#include <stdio.h>
#include <string.h>

#include "policy-test-util.h"
#include "random-servers-test-util.h"
#include "string-util.h"

#define MSEC FAKE_MSEC
#define SEC FAKE_SEC
#define N_SETS 1000
#define N_ROUNDS 40
#define N_SERVERS_MAX 7

typedef struct World {
        RandomServer servers[N_SERVERS_MAX + 2];        /* and up to two spares' servers */
        size_t n_servers;
        PolicyFixture fx;
        unsigned set_no, round;
} World;

static RandomCoverage coverage;

static uint64_t rng_state;

static unsigned rnd(unsigned n) {
        return random_below(&rng_state, n);
}

static bool chance(unsigned percent) {
        return random_chance(&rng_state, percent);
}

static void dump(const World *w) {
        const SourceSet *set = &w->fx.pol.set;

        for (size_t i = 0; i < set->n_entries; i++) {
                const SourceSetEntry *e = &set->entries[i];
                const FakeSource *f = fake_of(e->source);

                fprintf(stderr, "  entry %zu: %s, server %d%s, claims %d, %s, silent %u, %s%s%s\n", i, f->name,
                        f->server, f->liar ? " (liar)" : "", f->claims, source_set_standing_to_string(e->standing),
                        e->silent, source_set_verdict_string(set, i), e->duplicate_of ? ", duplicate" : "",
                        e->replaces ? ", on probation" : "");
        }
}

#define CHECK(w, cond, ...)                                                                     \
        do {                                                                                    \
                if (!(cond)) {                                                                  \
                        fprintf(stderr, "set %u, round %u: ", (w)->set_no, (w)->round);         \
                        fprintf(stderr, __VA_ARGS__);                                           \
                        fputc('\n', stderr);                                                    \
                        dump(w);                                                                \
                        ASSERT_TRUE(cond);                                                      \
                }                                                                               \
        } while (false)

/* A random world, as the SourceSet's random test makes it: a minority of liars, servers listed
 * twice, a liar that claims an honest server's NTP address, spares beyond NTSMaxSources=. */
static void world_make(World *w) {
        size_t n = 1 + rnd(N_SERVERS_MAX), n_liars = rnd((unsigned) (n + 1) / 2), n_spares = rnd(3);
        int64_t collude = (chance(50) ? 1 : -1) * (SEC + (int64_t) rnd(3600) * SEC);
        unsigned min_agreeing = chance(20) ? 1 + rnd(3) : 0;
        size_t n_names = 0;

        w->n_servers = n + n_spares;
        random_servers_make(w->servers, n, n_liars, n_spares, collude, &rng_state);

        /* NTS= lists the servers in use (twins among them), then the spares; NTSMaxSources= is the
         * number of the former, at least two, so that the set is one of several. */
        policy_fixture_init(&w->fx, 0, min_agreeing);
        for (size_t i = 0; i < n; i++) {
                int claims = -1;

                if (w->servers[i].liar && n > 1 && chance(50))
                        claims = (int) ((i + 1 + rnd((unsigned) n - 1)) % n);
                policy_fixture_name(&w->fx, (int) i, claims, w->servers[i].liar);
                n_names++;
                if (chance(25) || (n == 1 && n_names == 1)) {
                        policy_fixture_name(&w->fx, (int) i, claims, w->servers[i].liar);
                        n_names++;
                }
        }
        w->fx.config.nts_max_sources = (unsigned) n_names;
        for (size_t i = n; i < w->n_servers; i++)
                policy_fixture_name(&w->fx, (int) i, -1, w->servers[i].liar);
}

/* The servers in use, each once: of the set's sources not on probation (silent ones included);
 * agreeing_now: only honest ones whose current candidate the set judged a truechimer. */
static size_t servers_in_use(const World *w, bool agreeing_now) {
        const SourceSet *set = &w->fx.pol.set;
        bool seen[ELEMENTSOF(w->servers)] = {};
        size_t n = 0;

        for (size_t i = 0; i < set->n_entries; i++) {
                const SourceSetEntry *e = &set->entries[i];
                const FakeSource *f = fake_of(e->source);

                if (e->replaces || e->vacant || seen[f->server])
                        continue;
                if (agreeing_now && !(e->current && !f->liar && e->verdict == NTP_SELECT_TRUECHIMER))
                        continue;
                seen[f->server] = true;
                n++;
        }
        return n;
}

static void check_votes(World *w) {
        const SourceSet *set = &w->fx.pol.set;

        for (size_t i = 0; i < set->n_entries; i++) {
                const SourceSetEntry *e = &set->entries[i];
                const FakeSource *f = fake_of(e->source);

                coverage.falsetickers += e->verdict == NTP_SELECT_FALSETICKER;
                coverage.duplicates += !!e->duplicate_of;
                coverage.claims += f->claims >= 0;
                coverage.delayed += e->delayed;
                coverage.silent_counted += e->standing == SOURCE_SET_FAILING && !e->replaces && !e->duplicate_of;
                CHECK(w, !e->duplicate_of || fake_of(e->duplicate_of)->server == f->server,
                      "%s (server %d) is a duplicate of server %d", f->name, f->server,
                      fake_of(e->duplicate_of)->server);
                /* One server, one vote: of its sources not on probation that told which server
                 * they are, one is no duplicate. */
                for (size_t j = 0; j < i; j++) {
                        const SourceSetEntry *o = &set->entries[j];

                        CHECK(w, fake_of(o->source)->server != f->server || e->replaces || o->replaces ||
                                 e->duplicate_of || o->duplicate_of || !f->told_address ||
                                 !fake_of(o->source)->told_address,
                              "entries %zu and %zu of server %d both vote", j, i, f->server);
                }
        }
}

static void check_decision(World *w, const PolicyDecision *d) {
        const Policy *pol = &w->fx.pol;
        size_t in_use = servers_in_use(w, false), needed = MAX((size_t) w->fx.config.nts_min_agreeing, in_use / 2 + 1);

        check_votes(w);
        if (pol->selected) {
                const FakeSource *sel = fake_of(pol->selected);

                CHECK(w, !sel->liar, "the liar %s is selected", sel->name);
                CHECK(w, !streq_ptr(policy_verdict((Policy *) pol, pol->selected), "falseticker"),
                      "the falseticker %s is selected", sel->name);
        }
        if (d->steer) {
                size_t agreeing = servers_in_use(w, true), n_agree, n_of;

                coverage.steers++;
                CHECK(w, agreeing >= needed, "steered by %zu servers answering and agreeing, %zu needed", agreeing,
                      needed);
                CHECK(w, sscanf(d->agreement, ", %zu of %zu NTS sources agree", &n_agree, &n_of) == 2,
                      "agreement \"%s\"", d->agreement);
                CHECK(w, n_of == in_use, "the agreement counts %zu sources in use, %zu servers are", n_of, in_use);
                CHECK(w, n_agree == d->steer_agree && n_agree <= agreeing,
                      "the agreement says %zu agree, %zu honest servers do", n_agree, agreeing);
                CHECK(w, d->adjustment.offset_nsec > -10 * MSEC && d->adjustment.offset_nsec < 10 * MSEC,
                      "steered to %+.6f s", (double) d->adjustment.offset_nsec / SEC);
                CHECK(w, !fake_of(pol->selected)->liar, "steered by the liar %s", d->server);
        }
}

/* What the policy left in the set: a source that was there stays until the policy stopped it
 * (a spare took its place); a silence alone never takes it out. */
static void check_kept(World *w, const bool *in_set_before, const unsigned *stops_before) {
        for (size_t i = 0; i < w->fx.n_names; i++) {
                const FakeSource *f = &w->fx.fakes[i];
                bool in_set = source_set_find(&w->fx.pol.set, fake_source((FakeSource *) f));

                CHECK(w, !in_set_before[i] || in_set || f->stops > stops_before[i],
                      "%s left the set without being stopped", f->name);
                coverage.promotions += in_set_before[i] && !in_set;
        }
}

static void world_event(World *w, size_t i, SourceEvent e);

/* Each source that joined the set sends its first request at once: the set learns which server
 * it is before it answers (a twin is a duplicate before it could vote). */
static void world_tell_addresses(World *w) {
        for (size_t i = 0; i < w->fx.pol.set.n_entries; i++) {
                FakeSource *f = fake_of(w->fx.pol.set.entries[i].source);

                if (f->told_address)
                        continue;
                f->told_address = true;
                world_event(w, (size_t) (f - w->fx.fakes), SOURCE_EVENT_ADDRESS);
                /* The set may have changed: look again from its start. */
                i = SIZE_MAX;
        }
}

/* Reports e of name i to the policy, checks, and follows a steer as the manager does (observe
 * mode: the clock does not move, and the honest servers are right). */
static void world_event(World *w, size_t i, SourceEvent e) {
        PolicyFixture *fx = &w->fx;
        bool in_set_before[FAKE_NAMES_MAX];
        unsigned stops_before[FAKE_NAMES_MAX];
        PolicyDecision d = {};

        for (size_t k = 0; k < fx->n_names; k++) {
                in_set_before[k] = source_set_find(&fx->pol.set, fake_source(&fx->fakes[k]));
                stops_before[k] = fx->fakes[k].stops;
        }
        policy_on_event(&fx->pol, fake_source(&fx->fakes[i]), e, &d);
        policy_fixture_keep(fx, &d);
        check_decision(w, &d);
        check_kept(w, in_set_before, stops_before);
        if (d.steer) {
                PolicyDecision next = {};

                for (size_t k = 0; k < fx->n_names; k++) {
                        in_set_before[k] = source_set_find(&fx->pol.set, fake_source(&fx->fakes[k]));
                        stops_before[k] = fx->fakes[k].stops;
                }
                policy_steered(&fx->pol, &d, 0, &next);
                policy_fixture_keep(fx, &next);
                check_votes(w);
                check_kept(w, in_set_before, stops_before);
        }
        world_tell_addresses(w);
}

static void world_round(World *w) {
        PolicyFixture *fx = &w->fx;
        Source *sources[NTP_SELECT_MAX];
        size_t n = fx->pol.set.n_entries;

        /* A poll interval later: candidates age, a silent source's grows stale. */
        fake_boottime_usec += FAKE_POLL_USEC;
        random_servers_round(w->servers, w->n_servers, &rng_state);
        /* Those in the set when the round starts; the events may change it. */
        for (size_t i = 0; i < n; i++)
                sources[i] = fx->pol.set.entries[i].source;
        for (size_t i = 0; i < n; i++) {
                FakeSource *f = fake_of(sources[i]);
                size_t k = (size_t) (f - fx->fakes);
                const RandomServer *s = &w->servers[f->server];

                if (!source_set_find(&fx->pol.set, sources[i]))
                        continue;
                if (s->silent_rounds > 0) {
                        fake_fail(f, false);
                        world_event(w, k, SOURCE_EVENT_FAILED);
                        continue;
                }
                fake_answer(f, s->offset_nsec + (int64_t) rnd(200) * 1000 - 100000, chance(8));
                world_event(w, k, SOURCE_EVENT_SAMPLE);
        }
}

static void world_run(World *w) {
        PolicyDecision d = {};

        world_make(w);
        policy_start(&w->fx.pol, /* nts= */ true, /* fallback= */ false, /* backward_floor_nsec= */ 0, &d);
        policy_fixture_keep(&w->fx, &d);
        ASSERT_EQ(policy_running(&w->fx.pol), POLICY_SEVERAL);
        world_tell_addresses(w);
        for (w->round = 0; w->round < N_ROUNDS; w->round++)
                world_round(w);
        policy_fixture_done(&w->fx);
}

static void test_random_sets_keep_the_agreement_rules(void) {
        int level = log_get_max_level();

        /* The policy logs every change of the set: thousands of lines per set. */
        log_set_max_level(LOG_ERR);
        rng_state = UINT64_C(0x5eed0f5e7a11ce5);
        for (unsigned i = 0; i < N_SETS; i++) {
                World w = { .set_no = i };

                world_run(&w);
        }
        log_set_max_level(level);
        random_coverage_check(&coverage);
}

TEST_MAIN(TEST_CASE(test_random_sets_keep_the_agreement_rules));
