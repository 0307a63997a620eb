/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Keeping SIGPIPE away from code that writes to sockets it does not control, such as libssl's
 * socket BIO (plain write(2), no MSG_NOSIGNAL): within a SIGPIPE_BLOCK_SCOPE the signal is
 * blocked, and one raised in the scope is consumed before the old mask comes back, so a peer
 * that went away is an EPIPE return and never kills the process, whatever its SIGPIPE
 * disposition. */

#include <signal.h>

#include "macro.h"

typedef struct SigpipeBlock {
        sigset_t saved;
        bool was_pending;       /* raised before the scope: not ours to consume */
} SigpipeBlock;

SigpipeBlock sigpipe_block(void);
void sigpipe_unblock(SigpipeBlock *b);

#define SIGPIPE_BLOCK_SCOPE                                                                    \
        _cleanup_(sigpipe_unblock) _unused_ SigpipeBlock UNIQ_T(sigpipe, UNIQ) = sigpipe_block()
