/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Writing to a socket whose peer has gone raises SIGPIPE, which kills a process that did not
 * ignore it. Code that cannot control how its data is written (libssl writes with write(), not
 * send(MSG_NOSIGNAL)) and must not depend on the host's signal disposition wraps those calls
 * in a guard: SIGPIPE is blocked for the calling thread, a SIGPIPE raised meanwhile is
 * consumed, and the caller sees EPIPE instead.
 *
 * SIGPIPE_GUARD; at the start of a block guards the rest of the block. */

#include <signal.h>
#include <stdbool.h>

#include "macro.h"

typedef struct SigpipeGuard {
        sigset_t saved;
        bool was_pending;       /* a SIGPIPE that was not ours stays pending */
} SigpipeGuard;

SigpipeGuard sigpipe_guard_enter(void);
void sigpipe_guard_leave(SigpipeGuard *g);

#define SIGPIPE_GUARD                                                                              \
        _cleanup_(sigpipe_guard_leave) _unused_ SigpipeGuard _sigpipe_guard_ = sigpipe_guard_enter()
