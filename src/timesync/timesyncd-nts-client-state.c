/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "macro.h"
#include "timesyncd-nts-client-state.h"

static const char *const nts_client_state_table[_NTS_CLIENT_STATE_MAX] = {
        [NTS_CLIENT_IDLE] = "idle",
        [NTS_CLIENT_POOL_WAIT] = "pool-wait",
        [NTS_CLIENT_RESOLVING] = "resolving",
        [NTS_CLIENT_KEY_EXCHANGE] = "key-exchange",
        [NTS_CLIENT_READY] = "ready",
        [NTS_CLIENT_BACKING_OFF] = "backing-off",
};

const char *nts_client_state_to_string(NTSClientState s) {
        return s >= 0 && s < _NTS_CLIENT_STATE_MAX ? nts_client_state_table[s] : NULL;
}

bool nts_client_state_busy(NTSClientState s) {
        return IN_SET(s, NTS_CLIENT_POOL_WAIT, NTS_CLIENT_RESOLVING, NTS_CLIENT_KEY_EXCHANGE);
}

/* Each row: where a state may lead, and why.
 *  - Keys come only from a key exchange that ended, or from the state file before anything
 *    else ran: READY follows KEY_EXCHANGE, or IDLE (the first nts_client_prepare()).
 *  - A key exchange starts from a client that has none running: from IDLE, READY (renewal,
 *    no cookie left, a NAK, the end of a bootstrap, a pool member in use) or BACKING_OFF
 *    (its time came, also the retry of a renewal that failed while the old keys serve on),
 *    and again from KEY_EXCHANGE (the exchange ended and asks for another:
 *    a bootstrap without validity checks, or a pool that named a member in use). It waits
 *    for its pool's turn first where another client's runs (never from KEY_EXCHANGE: the
 *    pool's turn is still its own then).
 *  - The session follows resolving, and nothing else.
 *  - Every state may end in BACKING_OFF: a start that fails or is postponed, a failed
 *    exchange, refused fresh cookies, refused bootstrap time.
 *  - Only READY goes back to IDLE: its keys were dropped and nothing started another
 *    exchange yet. */
static const bool nts_client_transitions[_NTS_CLIENT_STATE_MAX][_NTS_CLIENT_STATE_MAX] = {
        [NTS_CLIENT_IDLE] = {
                [NTS_CLIENT_POOL_WAIT] = true,
                [NTS_CLIENT_RESOLVING] = true,
                [NTS_CLIENT_READY] = true,
                [NTS_CLIENT_BACKING_OFF] = true,
        },
        [NTS_CLIENT_POOL_WAIT] = {
                [NTS_CLIENT_RESOLVING] = true,
                [NTS_CLIENT_BACKING_OFF] = true,
        },
        [NTS_CLIENT_RESOLVING] = {
                [NTS_CLIENT_KEY_EXCHANGE] = true,
                [NTS_CLIENT_BACKING_OFF] = true,
        },
        [NTS_CLIENT_KEY_EXCHANGE] = {
                [NTS_CLIENT_RESOLVING] = true,
                [NTS_CLIENT_READY] = true,
                [NTS_CLIENT_BACKING_OFF] = true,
        },
        [NTS_CLIENT_READY] = {
                [NTS_CLIENT_IDLE] = true,
                [NTS_CLIENT_POOL_WAIT] = true,
                [NTS_CLIENT_RESOLVING] = true,
                [NTS_CLIENT_BACKING_OFF] = true,
        },
        [NTS_CLIENT_BACKING_OFF] = {
                [NTS_CLIENT_POOL_WAIT] = true,
                [NTS_CLIENT_RESOLVING] = true,
                [NTS_CLIENT_BACKING_OFF] = true,
        },
};

bool nts_client_state_transition_allowed(NTSClientState from, NTSClientState to) {
        if (from < 0 || from >= _NTS_CLIENT_STATE_MAX || to < 0 || to >= _NTS_CLIENT_STATE_MAX)
                return false;
        return nts_client_transitions[from][to];
}
