/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The agreement rules of the policy over the sources in use (docs/ARCHITECTURE.md, "Several
 * sources"), under random sets, as chrony's test/unit/sources.c checks its selection: 1000 sets
 * of fake sources driven through the SourceSet the way timesyncd-policy.c drives it (samples,
 * failures, what each source told of which server it is, spares for silent sources, the step
 * and the promotion after it), with random honest servers, liars, silences, delays that jumped,
 * twins and claims, over many rounds with a fixed seed. After each judgement:
 *   - the set counts each server once, silent ones included, spares on probation not: a
 *     silent source keeps its place until a spare takes it;
 *   - the clock is steered only by at least a majority of the servers in use answering now and
 *     agreeing, and only to the honest servers' time (liars are a minority);
 *   - a falseticker or a liar is never selected; one server never votes twice;
 *   - a claimed NTP address never makes its owner a duplicate (only one server under two names
 *     is one);
 *   - a sample whose delay jumped is never a candidate.
 * A failure prints the seed, the set and the round. */

#include <stdio.h>
#include <string.h>

#include "random-servers-test-util.h"
#include "tests.h"
#include "timesyncd-source-set.h"

#define MSEC INT64_C(1000000)
#define SEC INT64_C(1000000000)
#define POLL_USEC (64 * USEC_PER_SEC)
#define N_SETS 1000
#define N_ROUNDS 40
#define N_SERVERS_MAX 7

/* What the set holds per entry: the caller's source. */
typedef struct Fake {
        int server;                     /* which server answers (a twin shares its server) */
        int claims;                     /* the server whose NTP address its key exchange names, or -1 */
        bool spare;                     /* started on probation for a silent source */
        bool in_set;
} Fake;

typedef struct World {
        RandomServer servers[N_SERVERS_MAX + 2];        /* and up to two spares' servers */
        size_t n_servers;
        Fake fakes[NTP_SELECT_MAX];
        size_t n_fakes;
        unsigned min_agreeing;
        usec_t now;
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

#define CHECK(w, cond, ...)                                                                     \
        do {                                                                                    \
                if (!(cond)) {                                                                  \
                        fprintf(stderr, "set %u, round %u: ", (w)->set_no, (w)->round);         \
                        fprintf(stderr, __VA_ARGS__);                                           \
                        fputc('\n', stderr);                                                    \
                        dump(w, set);                                                           \
                        ASSERT_TRUE(cond);                                                      \
                }                                                                               \
        } while (false)

static int server_of(const World *w, const void *source) {
        return ((const Fake *) source)->server;
}

static void dump(const World *w, const SourceSet *set) {
        for (size_t i = 0; i < set->n_entries; i++) {
                const SourceSetEntry *e = &set->entries[i];
                const Fake *f = e->source;
                const RandomServer *s = &w->servers[f->server];

                fprintf(stderr, "  entry %zu: server %d%s%s, claims %d, %s, silent %u, %s%s%s\n", i, f->server,
                        s->liar ? " (liar)" : "", f->spare ? " (spare)" : "", f->claims,
                        source_set_standing_to_string(e->standing), e->silent, source_set_verdict_string(set, i),
                        e->duplicate_of ? ", duplicate" : "", e->replaces ? ", on probation" : "");
        }
}

static SourceIdentity identity(int server, int claims) {
        SourceIdentity id = {
                .ntp_family = AF_INET,
                .ke_family = AF_INET,
                .has_key = true,
                .ntp_port = 123,
                .ke_port = 4460,
        };

        /* Off the loopback: 192.0.2.N for NTP, 198.51.100.N for the key exchange, key N. */
        id.ntp_address.in.s_addr = htobe32(UINT32_C(0xc0000200) + (uint32_t) (claims >= 0 ? claims : server) + 1);
        id.ke_address.in.s_addr = htobe32(UINT32_C(0xc6336400) + (uint32_t) server + 1);
        memset(id.key_sha256, server + 1, sizeof id.key_sha256);
        return id;
}

/* A random world: a minority of liars (colluding or not), servers listed twice, a liar that
 * claims an honest server's NTP address, spares beyond the set. */
static void world_make(World *w, SourceSet *set) {
        size_t n = 1 + rnd(N_SERVERS_MAX), n_liars = rnd((unsigned) (n + 1) / 2), n_spares = rnd(3);
        int64_t collude = (chance(50) ? 1 : -1) * (SEC + (int64_t) rnd(3600) * SEC);

        *set = (SourceSet) { .selected = SIZE_MAX, .preferred = SIZE_MAX };
        w->n_servers = n + n_spares;
        w->n_fakes = 0;
        w->min_agreeing = chance(20) ? 1 + rnd(3) : 0;
        w->now = 1000 * USEC_PER_SEC;
        random_servers_make(w->servers, n, n_liars, n_spares, collude, &rng_state);
        for (size_t i = 0; i < n; i++) {
                int claims = -1;

                /* A liar's key exchange names another server's NTP address. */
                if (w->servers[i].liar && n > 1 && chance(50))
                        claims = (int) ((i + 1 + rnd((unsigned) n - 1)) % n);
                w->fakes[w->n_fakes++] = (Fake) { .server = (int) i, .claims = claims };
                /* The same server listed again under another name. */
                if (chance(25))
                        w->fakes[w->n_fakes++] = (Fake) { .server = (int) i, .claims = claims };
        }
        for (size_t k = 0; k < w->n_fakes; k++) {
                SourceIdentity id = identity(w->fakes[k].server, w->fakes[k].claims);

                ASSERT_OK(source_set_add(set, &w->fakes[k], "ke.example"));
                w->fakes[k].in_set = true;
                (void) source_set_identify(set, &w->fakes[k], &id);
        }
        for (size_t i = n; i < w->n_servers; i++)
                w->fakes[w->n_fakes++] = (Fake) { .server = (int) i, .claims = -1, .spare = true };
}

static SourceSetSample sample_of(const World *w, const RandomServer *s, bool delayed) {
        int64_t delay = 20 * MSEC + (int64_t) rnd(5) * MSEC;
        SourceSetSample x = {
                .header = {
                        .leap = NTP_LEAP_NONE,
                        .stratum = 1,
                        .precision = -20,
                        .root_dispersion = ntp_short_from_nsec(MSEC),
                },
                .ntp = { .offset_nsec = s->offset_nsec + (int64_t) rnd(200) * 1000 - 100000, .delay_nsec = delay },
                .boottime = w->now,
                .max_age = 2 * POLL_USEC + 2 * USEC_PER_MINUTE,
                .delayed = delayed,
        };

        /* Replies held back 3 s: an honest interval around -1.5 s, wide enough for a liar's. */
        if (delayed && !s->liar) {
                x.ntp.offset_nsec = -3 * SEC / 2;
                x.ntp.delay_nsec = 3 * SEC;
        }
        return x;
}

/* One round: each source in the set answers, fails (a silence) or answers with a delay that
 * jumped; silent sources get a spare, as timesyncd-policy.c does. */
static void world_round(World *w, SourceSet *set) {
        w->now += POLL_USEC;
        random_servers_round(w->servers, w->n_servers, &rng_state);
        for (size_t k = 0; k < w->n_fakes; k++) {
                Fake *f = &w->fakes[k];
                RandomServer *s = &w->servers[f->server];

                if (!f->in_set)
                        continue;
                if (s->silent_rounds > 0) {
                        source_set_failed(set, f);
                        continue;
                }
                SourceSetSample x = sample_of(w, s, chance(8));
                source_set_sample(set, f, &x);
        }
        for (size_t i = 0; i < set->n_entries; i++) {
                SourceSetEntry *e = &set->entries[i];

                if (e->replaces || e->duplicate_of || e->standing != SOURCE_SET_FAILING || e->silent < 3 ||
                    source_set_spare_for(set, e->source))
                        continue;
                for (size_t k = 0; k < w->n_fakes; k++) {
                        Fake *f = &w->fakes[k];
                        SourceIdentity id;

                        if (!f->spare || f->in_set)
                                continue;
                        ASSERT_OK(source_set_add_spare(set, f, "ke.example", e->source));
                        f->in_set = true;
                        id = identity(f->server, -1);
                        (void) source_set_identify(set, f, &id);
                        break;
                }
        }
}

/* The servers in use, each once: the sources that are not on probation (silent ones included). */
static size_t servers_in_use(const World *w, const SourceSet *set, bool agreeing_now) {
        bool seen[ELEMENTSOF(w->servers)] = {};
        size_t n = 0;

        for (size_t i = 0; i < set->n_entries; i++) {
                const SourceSetEntry *e = &set->entries[i];
                int s = server_of(w, e->source);

                if (e->replaces || seen[s])
                        continue;
                if (agreeing_now && !(e->current && e->verdict == NTP_SELECT_TRUECHIMER && !e->duplicate_of))
                        continue;
                seen[s] = true;
                n++;
        }
        return n;
}

static void world_check(World *w, SourceSet *set, const SourceSetDecision *d) {
        size_t in_use = servers_in_use(w, set, false), needed = MAX((size_t) w->min_agreeing, in_use / 2 + 1);

        /* Each server counts once, a silent one too, a spare on probation not. */
        CHECK(w, d->n_in_use == in_use, "%zu sources counted in use, %zu servers are", d->n_in_use, in_use);

        for (size_t i = 0; i < set->n_entries; i++) {
                const SourceSetEntry *e = &set->entries[i];
                const Fake *f = e->source;

                coverage.falsetickers += e->verdict == NTP_SELECT_FALSETICKER;
                coverage.duplicates += !!e->duplicate_of;
                coverage.claims += f->claims >= 0;
                coverage.delayed += e->delayed;
                coverage.silent_counted += e->standing == SOURCE_SET_FAILING && !e->replaces && !e->duplicate_of;
                /* A sample whose delay is not trusted is never a candidate. */
                CHECK(w, !e->has_candidate || !e->candidate.delayed, "entry %zu has a delayed candidate", i);
                /* Only one server under two names is a duplicate, never the owner of a claimed
                 * address. */
                CHECK(w, !e->duplicate_of || server_of(w, e->duplicate_of) == f->server,
                      "entry %zu (server %d) is a duplicate of server %d", i, f->server,
                      server_of(w, e->duplicate_of));
                /* One server, one vote: of its entries not on probation, one is not a duplicate. */
                for (size_t j = 0; j < i; j++) {
                        const SourceSetEntry *o = &set->entries[j];

                        CHECK(w, server_of(w, o->source) != f->server || e->replaces || o->replaces ||
                                 e->duplicate_of || o->duplicate_of,
                              "entries %zu and %zu of server %d both vote", j, i, f->server);
                }
        }

        if (d->select.selected < set->n_entries) {
                const SourceSetEntry *sel = &set->entries[d->select.selected];

                CHECK(w, sel->verdict != NTP_SELECT_FALSETICKER, "a falseticker is selected");
                CHECK(w, !w->servers[server_of(w, sel->source)].liar, "a liar is selected");
        }
        if (d->steer) {
                coverage.steers++;
                size_t agreeing = servers_in_use(w, set, true);

                CHECK(w, agreeing >= needed, "steered by %zu servers answering and agreeing, %zu needed",
                      agreeing, needed);
                CHECK(w, d->n_current_agree == agreeing, "%zu sources counted as agreeing, %zu servers do",
                      d->n_current_agree, agreeing);
                CHECK(w, d->select.offset_nsec > -10 * MSEC && d->select.offset_nsec < 10 * MSEC,
                      "steered to %+.6f s", (double) d->select.offset_nsec / SEC);
        }
}

static void world_run(World *w) {
        SourceSet set;

        world_make(w, &set);
        for (w->round = 0; w->round < N_ROUNDS; w->round++) {
                SourceSetPolicy p = {
                        .min_agreeing = w->min_agreeing,
                        .root_distance_max_nsec = 5 * SEC,
                        .now_realtime_nsec = INT64_C(1800000000) * SEC,
                        .backward_floor_nsec = INT64_C(1700000000) * SEC,
                };
                SourceSetDecision d;

                world_round(w, &set);
                p.now_boottime = w->now;
                ASSERT_OK(source_set_select(&set, &p, &d));
                world_check(w, &set, &d);
                /* What the policy does after a judgement: steer (the clock is right: no step to
                 * correct for), then promote a spare that agrees. */
                if (d.steer)
                        source_set_steered(&set);
                if (d.qualified) {
                        SourceSetEntry *e = source_set_find(&set, d.qualified);
                        Fake *silent = e->replaces;

                        source_set_promote(&set, d.qualified);
                        coverage.promotions++;
                        silent->in_set = false;
                        ((Fake *) d.qualified)->spare = false;
                }
        }
        source_set_done(&set);
}

static void test_random_sets_keep_the_agreement_rules(void) {
        rng_state = UINT64_C(0x5eed0f5e7a11ce5);
        for (unsigned i = 0; i < N_SETS; i++) {
                World w = { .set_no = i };

                world_run(&w);
        }
        random_coverage_check(&coverage);
}

TEST_MAIN(TEST_CASE(test_random_sets_keep_the_agreement_rules));
