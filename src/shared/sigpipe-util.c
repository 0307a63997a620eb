/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>

#include "sigpipe-util.h"

static bool sigpipe_pending(void) {
        sigset_t pending;

        return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
}

SigpipeBlock sigpipe_block(void) {
        SigpipeBlock b = {};
        sigset_t s;

        sigemptyset(&s);
        sigaddset(&s, SIGPIPE);
        assert_se(pthread_sigmask(SIG_BLOCK, &s, &b.saved) == 0);
        b.was_pending = sigpipe_pending();
        return b;
}

void sigpipe_unblock(SigpipeBlock *b) {
        sigset_t s;

        assert(b);

        sigemptyset(&s);
        sigaddset(&s, SIGPIPE);
        if (!b->was_pending && sigpipe_pending())
                while (sigtimedwait(&s, NULL, &(const struct timespec) {}) < 0 && errno == EINTR)
                        ;
        assert_se(pthread_sigmask(SIG_SETMASK, &b->saved, NULL) == 0);
}
