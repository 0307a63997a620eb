/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The mock server as a key-exchange pool (draft-venhoek-nts-pool section 5): each key exchange
 * names one member in a Server record (and a Port record), with cookies the member accepts,
 * and passes on a Keep Alive record as a pool does with its member's. The members are other
 * mock servers that share this one's cookie key (--keys-file): a client's keys come from its
 * TLS session with the pool, and a member can open the cookie only if it was sealed with its
 * key. (Real pools get the cookies from the member itself with a Fixed Key Request, section
 * 6.5, which chronyd and NTPsec do not implement; shared keys give the client the same view.)
 *
 * Members are offered in the order of a sequence of member indexes, cycled, one step per key
 * exchange, as pendulum-project's nts-pool does in its round-robin mode: from the current
 * step on, the first member the request does not deny; when every member is denied, the one
 * at the current step anyway. With ignore_deny the member at the current step, always: a pool
 * that does not know the deny record, or one that picks at random (a sequence with repeats
 * plays that part, deterministically). */

#include <stdbool.h>
#include <stdint.h>

#include "nts-server-ke.h"

#define MOCK_POOL_MAX_MEMBERS 16
#define MOCK_POOL_MAX_SEQUENCE 64

typedef struct MockPoolMember {
        const char *name;               /* the Server record's body */
        uint16_t port;                  /* the Port record; 0: none */
} MockPoolMember;

typedef struct MockPool {
        MockPoolMember members[MOCK_POOL_MAX_MEMBERS];
        size_t n_members;               /* 0: not a pool */
        size_t sequence[MOCK_POOL_MAX_SEQUENCE];
        size_t n_sequence;              /* 0: every member once, in the order given */
        size_t step;
        bool ignore_deny;
} MockPool;

/* "NAME", "NAME:PORT", "[IPV6]:PORT" or an IPv6 address without port. NAME points into s. */
int mock_pool_add_member(MockPool *p, char *s);
/* "I,J,K": member indexes from 0. Checked against the members in mock_pool_check(). */
int mock_pool_set_sequence(MockPool *p, const char *s);
int mock_pool_check(MockPool *p);

/* The member for this key exchange, and whether the request denied it. */
const MockPoolMember *mock_pool_pick(MockPool *p, const NTSServerKERequest *req, bool *ret_denied);
