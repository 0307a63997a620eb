/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The servers of the randomized tests of the agreement rules (test-timesyncd-source-set-random,
 * through the SourceSet; test-timesyncd-policy-random, through the policy): honest ones within
 * half a millisecond of the truth, liars a second to an hour off (colluding on one offset, or
 * each its own), and silences of random length. The random bits come from the caller's state
 * (test_random_u64()), so that one seed gives one run; and how often each rule was put to the
 * test (RandomCoverage). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "tests.h"

typedef struct RandomServer {
        bool liar;
        int64_t offset_nsec;
        unsigned silent_rounds;         /* left of its current silence */
} RandomServer;

static inline unsigned random_below(uint64_t *state, unsigned n) {
        return (unsigned) (test_random_u64(state) % n);
}

static inline bool random_chance(uint64_t *state, unsigned percent) {
        return random_below(state, 100) < percent;
}

/* n servers in use, n_liars of them liars (lying by collude, or each by its own offset), listed
 * in random order; then n_spares more, each a liar at 30%. */
static inline void random_servers_make(RandomServer *servers, size_t n, size_t n_liars, size_t n_spares,
                                       int64_t collude, uint64_t *state) {
        const int64_t sec = INT64_C(1000000000);

        for (size_t i = 0; i < n + n_spares; i++) {
                bool liar = i < n ? i < n_liars : random_chance(state, 30);

                servers[i] = (RandomServer) {
                        .liar = liar,
                        .offset_nsec = !liar ? (int64_t) random_below(state, 1000) * 1000 - 500000 :
                                       random_chance(state, 50) ? collude :
                                       (random_chance(state, 50) ? 1 : -1) * (sec + (int64_t) random_below(state, 3600) * sec),
                };
        }
        /* So that liars are not always listed first. */
        for (size_t i = n; i > 1; i--) {
                size_t j = random_below(state, (unsigned) i);
                RandomServer t = servers[i - 1];

                servers[i - 1] = servers[j];
                servers[j] = t;
        }
}

/* One round: a silence goes on, or ends; a server not silent falls silent at 6%, for 1 to 8
 * rounds. */
static inline void random_servers_round(RandomServer *servers, size_t n, uint64_t *state) {
        for (size_t i = 0; i < n; i++) {
                RandomServer *s = &servers[i];

                if (s->silent_rounds > 0)
                        s->silent_rounds--;
                else if (random_chance(state, 6))
                        s->silent_rounds = 1 + random_below(state, 8);
        }
}

/* How often each rule was put to the test, so that a test cannot pass by testing nothing. */
typedef struct RandomCoverage {
        unsigned steers, falsetickers, duplicates, claims, delayed, silent_counted, promotions;
} RandomCoverage;

/* Logs the counts, and fails when a rule was put to the test too rarely. */
static inline void random_coverage_check(const RandomCoverage *c) {
        log_info("%u steers, %u falseticker verdicts, %u duplicates, %u claims, %u delayed samples, "
                 "%u judgements counting a silent source, %u spares promoted", c->steers, c->falsetickers,
                 c->duplicates, c->claims, c->delayed, c->silent_counted, c->promotions);
        ASSERT_TRUE(c->steers > 1000);
        ASSERT_TRUE(c->falsetickers > 1000);
        ASSERT_TRUE(c->duplicates > 1000);
        ASSERT_TRUE(c->claims > 100);
        ASSERT_TRUE(c->delayed > 1000);
        ASSERT_TRUE(c->silent_counted > 1000);
        ASSERT_TRUE(c->promotions > 10);
}
