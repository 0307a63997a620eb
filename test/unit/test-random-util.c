/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "random-util.h"
#include "tests.h"

/* Draws of 48 bytes (UID + nonce) across several refills of the 1 KiB pool never repeat a
 * block: a pool that served the same bytes twice would repeat whole draws. */
static void test_pooled_draws_never_repeat_across_refills(void) {
        static uint8_t draws[200][48];

        for (size_t i = 0; i < ELEMENTSOF(draws); i++)
                ASSERT_OK(random_bytes_pooled(draws[i], sizeof draws[i]));
        for (size_t i = 0; i < ELEMENTSOF(draws); i++)
                for (size_t j = i + 1; j < ELEMENTSOF(draws); j++)
                        ASSERT_TRUE(memcmp(draws[i], draws[j], sizeof draws[i]) != 0);
}

/* Sizes that do not divide the pool, and one larger than the pool serves. */
static void test_odd_and_large_sizes_are_served(void) {
        uint8_t a[1000] = {}, b[1000] = {}, zero[1000] = {};

        for (size_t n = 1; n < 300; n += 37) {
                ASSERT_OK(random_bytes_pooled(a, n));
                ASSERT_OK(random_bytes_pooled(b, n));
                ASSERT_TRUE(n < 8 || memcmp(a, b, n) != 0);
        }
        ASSERT_OK(random_bytes_pooled(a, sizeof a));
        ASSERT_TRUE(memcmp(a, zero, sizeof a) != 0);
        ASSERT_OK(random_bytes_pooled(NULL, 0));
}

/* A child must not hand out the bytes its parent hands out next. */
static void test_fork_does_not_share_pool_bytes(void) {
        uint8_t parent[32], child[32];
        int p[2], status;
        pid_t pid;

        ASSERT_OK(random_bytes_pooled(parent, 1)); /* the pool is filled */
        ASSERT_OK(pipe(p));
        pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                uint8_t c[32];

                if (random_bytes_pooled(c, sizeof c) < 0 || write(p[1], c, sizeof c) != (ssize_t) sizeof c)
                        _exit(1);
                _exit(0);
        }
        ASSERT_OK(random_bytes_pooled(parent, sizeof parent));
        ASSERT_EQ(read(p[0], child, sizeof child), (ssize_t) sizeof child);
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ASSERT_TRUE(memcmp(parent, child, sizeof parent) != 0);
        close(p[0]);
        close(p[1]);
}

TEST_MAIN(TEST_CASE(test_pooled_draws_never_repeat_across_refills),
          TEST_CASE(test_odd_and_large_sizes_are_served),
          TEST_CASE(test_fork_does_not_share_pool_bytes));
