/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The every-pair check of a state machine's transition table: the test lists each allowed
 * transition with the path of the code that takes it, and the table must allow every one
 * listed and refuse every other pair. States are the values of the machine's enum, as int. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tests.h"

typedef struct TestTransition {
        int from, to;
        const char *path;               /* what takes it, for the message of a refusal */
} TestTransition;

static inline bool test_transition_listed(const TestTransition *list, size_t n, int from, int to) {
        for (size_t i = 0; i < n; i++)
                if (list[i].from == from && list[i].to == to)
                        return true;
        return false;
}

/* allowed and name: the machine's table and state names, over its n_states states. */
static inline void test_transitions_are_exactly(const TestTransition *list, size_t n, int n_states,
                                                bool (*allowed)(int from, int to), const char *(*name)(int state)) {
        for (size_t i = 0; i < n; i++)
                if (!allowed(list[i].from, list[i].to)) {
                        fprintf(stderr, "refused: %s -> %s (%s)\n", name(list[i].from), name(list[i].to),
                                list[i].path);
                        ASSERT_TRUE(false);
                }

        for (int from = 0; from < n_states; from++)
                for (int to = 0; to < n_states; to++)
                        if (!test_transition_listed(list, n, from, to) && allowed(from, to)) {
                                fprintf(stderr, "allowed: %s -> %s\n", name(from), name(to));
                                ASSERT_TRUE(false);
                        }
}
