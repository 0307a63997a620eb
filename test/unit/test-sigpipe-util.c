/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>
#include <signal.h>

#include "sigpipe-util.h"
#include "tests.h"

static bool sigpipe_pending(void) {
        sigset_t pending;

        ASSERT_OK(sigpending(&pending));
        return sigismember(&pending, SIGPIPE) == 1;
}

static bool sigpipe_blocked(void) {
        sigset_t mask;

        ASSERT_EQ(pthread_sigmask(SIG_SETMASK, NULL, &mask), 0);
        return sigismember(&mask, SIGPIPE) == 1;
}

static void write_to_broken_pipe(void) {
        int fds[2];

        ASSERT_OK(pipe(fds));
        safe_close(fds[0]);
        ASSERT_ERROR(write(fds[1], "x", 1) < 0 ? -errno : 0, EPIPE);
        safe_close(fds[1]);
}

/* SIGPIPE's default action kills the test if the guard lets it through. */
static void test_write_to_broken_pipe_in_guard_is_survived(void) {
        {
                SIGPIPE_BLOCK_SCOPE;
                ASSERT_TRUE(sigpipe_blocked());
                write_to_broken_pipe();
        }
        ASSERT_FALSE(sigpipe_pending());
        ASSERT_FALSE(sigpipe_blocked());
}

static void test_foreign_pending_sigpipe_stays_pending(void) {
        sigset_t pipe_set;

        ASSERT_OK(sigemptyset(&pipe_set));
        ASSERT_OK(sigaddset(&pipe_set, SIGPIPE));
        ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &pipe_set, NULL), 0);
        ASSERT_OK(raise(SIGPIPE));
        ASSERT_TRUE(sigpipe_pending());

        {
                SIGPIPE_BLOCK_SCOPE;
                write_to_broken_pipe();
        }
        /* Not ours to swallow; and the mask the caller had is back. */
        ASSERT_TRUE(sigpipe_pending());
        ASSERT_TRUE(sigpipe_blocked());

        ASSERT_OK(sigtimedwait(&pipe_set, NULL, &(struct timespec) {}));
        ASSERT_EQ(pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL), 0);
}

TEST_MAIN(TEST_CASE(test_write_to_broken_pipe_in_guard_is_survived),
          TEST_CASE(test_foreign_pending_sigpipe_stays_pending));
