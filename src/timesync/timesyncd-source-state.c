/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stddef.h>

#include "timesyncd-source-state.h"

static const char *const source_state_table[_SOURCE_STATE_MAX] = {
        [SOURCE_IDLE] = "idle",
        [SOURCE_KEY_EXCHANGE] = "key-exchange",
        [SOURCE_RESOLVING] = "resolving",
        [SOURCE_POLL_WAIT] = "poll-wait",
        [SOURCE_REPLY_WAIT] = "reply-wait",
        [SOURCE_BACKING_OFF] = "backing-off",
        [SOURCE_FAILED] = "failed",
};

const char *source_state_to_string(SourceState s) {
        return s >= 0 && s < _SOURCE_STATE_MAX ? source_state_table[s] : NULL;
}

/* Each row: where a state may lead, and why.
 *  - A start (IDLE, BACKING_OFF) resolves the NTP server, or waits for the NTS client's key
 *    exchange first; an owner that keeps its sources running backs off when neither can
 *    start now, and so does a source whose retry time came.
 *  - The key exchange's end resolves the NTP server the keys name, backs off with the client,
 *    or waits for the next exchange the client runs (a bootstrap, a pool asked again).
 *  - Resolving ends in the first request, or in a failure; a request never goes out without
 *    a cookie, and a pool member's address may be in use: the NTS client takes over then,
 *    from every state that sends a request (RESOLVING, POLL_WAIT, REPLY_WAIT), and at the
 *    end of a bootstrap.
 *  - A reply, or its timeout, leads to the next poll, the next address, a backoff, or FAILED
 *    (kiss code DENY or RSTR): only a reply leads there, and nothing leads out of it.
 *  - A new time for the timer keeps POLL_WAIT and BACKING_OFF.
 *  - The owner stops a source in every state but FAILED. */
static const bool source_transitions[_SOURCE_STATE_MAX][_SOURCE_STATE_MAX] = {
        [SOURCE_IDLE] = {
                [SOURCE_IDLE] = true,
                [SOURCE_KEY_EXCHANGE] = true,
                [SOURCE_RESOLVING] = true,
                [SOURCE_BACKING_OFF] = true,
        },
        [SOURCE_KEY_EXCHANGE] = {
                [SOURCE_IDLE] = true,
                [SOURCE_KEY_EXCHANGE] = true,
                [SOURCE_RESOLVING] = true,
                [SOURCE_BACKING_OFF] = true,
        },
        [SOURCE_RESOLVING] = {
                [SOURCE_IDLE] = true,
                [SOURCE_KEY_EXCHANGE] = true,
                [SOURCE_REPLY_WAIT] = true,
                [SOURCE_BACKING_OFF] = true,
        },
        [SOURCE_POLL_WAIT] = {
                [SOURCE_IDLE] = true,
                [SOURCE_KEY_EXCHANGE] = true,
                [SOURCE_POLL_WAIT] = true,
                [SOURCE_REPLY_WAIT] = true,
        },
        [SOURCE_REPLY_WAIT] = {
                [SOURCE_IDLE] = true,
                [SOURCE_KEY_EXCHANGE] = true,
                [SOURCE_POLL_WAIT] = true,
                [SOURCE_REPLY_WAIT] = true,
                [SOURCE_BACKING_OFF] = true,
                [SOURCE_FAILED] = true,
        },
        [SOURCE_BACKING_OFF] = {
                [SOURCE_IDLE] = true,
                [SOURCE_KEY_EXCHANGE] = true,
                [SOURCE_RESOLVING] = true,
                [SOURCE_BACKING_OFF] = true,
        },
        [SOURCE_FAILED] = {},
};

bool source_state_transition_allowed(SourceState from, SourceState to) {
        if (from < 0 || from >= _SOURCE_STATE_MAX || to < 0 || to >= _SOURCE_STATE_MAX)
                return false;
        return source_transitions[from][to];
}
