/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What an NTS client is doing: one field, NTSClientState, which only nts_client_enter()
 * changes, and only along the transitions nts_client_state_transition_allowed() lists. Pure
 * (no OpenSSL), so that a build without NTS and the unit tests share it. */

#include <errno.h>
#include <stdbool.h>

typedef enum NTSClientState {
        NTS_CLIENT_IDLE,                /* no keys and nothing running: created, or its keys
                                         * were dropped (a pool member turned down); the next
                                         * nts_client_prepare() loads the state file or starts
                                         * a key exchange */
        NTS_CLIENT_POOL_WAIT,           /* its key exchange waits for the one another client
                                         * runs with the same pool */
        NTS_CLIENT_RESOLVING,           /* the NTS-KE server's name: a resolver query */
        NTS_CLIENT_KEY_EXCHANGE,        /* the TLS session with the NTS-KE server */
        NTS_CLIENT_READY,               /* keys and cookies: poll nts_client_ntp_host() */
        NTS_CLIENT_BACKING_OFF,         /* key exchanges failed, were postponed, or the time of
                                         * bootstrap keys was refused: none before
                                         * nts_client_retry_after() */
        /* A renewal runs in the busy states, or backs off after it failed, with the keys it
         * renews still in the jar: they serve every request up to their limit. */
        _NTS_CLIENT_STATE_MAX,
        _NTS_CLIENT_STATE_INVALID = -EINVAL,
} NTSClientState;

const char *nts_client_state_to_string(NTSClientState s);

/* A key exchange of its own runs or waits for its turn: the client reports its end. */
bool nts_client_state_busy(NTSClientState s);

/* Whether a client may go from one state to the other. Staying in a state is a transition too,
 * and allowed only where it means something (BACKING_OFF: a new retry time). */
bool nts_client_state_transition_allowed(NTSClientState from, NTSClientState to);
