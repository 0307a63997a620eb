/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>
#include <time.h>

#include "macro.h"
#include "sigpipe-util.h"

SigpipeGuard sigpipe_guard_enter(void) {
        SigpipeGuard g = {};
        sigset_t pipe, pending;

        assert_se(sigemptyset(&pipe) == 0);
        assert_se(sigaddset(&pipe, SIGPIPE) == 0);

        if (sigpending(&pending) == 0)
                g.was_pending = sigismember(&pending, SIGPIPE) == 1;
        assert_se(pthread_sigmask(SIG_BLOCK, &pipe, &g.saved) == 0);
        return g;
}

void sigpipe_guard_leave(SigpipeGuard *g) {
        sigset_t pipe, pending;

        assert(g);

        assert_se(sigemptyset(&pipe) == 0);
        assert_se(sigaddset(&pipe, SIGPIPE) == 0);

        if (!g->was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1)
                (void) sigtimedwait(&pipe, NULL, &(struct timespec) {});
        assert_se(pthread_sigmask(SIG_SETMASK, &g->saved, NULL) == 0);
}
