/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a source is doing: one field, SourceState, which only source_enter() changes, and only
 * along the transitions source_state_transition_allowed() lists. Pure, so that the unit tests
 * check the table without a source. */

#include <errno.h>
#include <stdbool.h>

typedef enum SourceState {
        SOURCE_IDLE,            /* not started, or stopped by its owner: nothing armed */
        SOURCE_KEY_EXCHANGE,    /* NTS: the client runs a key exchange and reports its end */
        SOURCE_RESOLVING,       /* the NTP server's name: a resolver query */
        SOURCE_POLL_WAIT,       /* the timer, until the next request */
        SOURCE_REPLY_WAIT,      /* a request is out: the socket, and the timer for the timeout */
        SOURCE_BACKING_OFF,     /* gave up for now: the timer, until starting over */
        SOURCE_FAILED,          /* the server refuses service (kiss code DENY or RSTR): nothing,
                                 * until the configuration names it again */
        _SOURCE_STATE_MAX,
        _SOURCE_STATE_INVALID = -EINVAL,
} SourceState;

const char *source_state_to_string(SourceState s);

/* Whether a source may go from one state to the other. Staying in a state is a transition too,
 * and allowed only where it means something (a new time for the timer, another key exchange,
 * the next address, a stop of a stopped source). */
bool source_state_transition_allowed(SourceState from, SourceState to);
