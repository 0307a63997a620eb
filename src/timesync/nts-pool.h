/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Several sources from one key-exchange pool (draft-venhoek-nts-pool section 5): a pool is an
 * NTS-KE server with one certificate that names, in the Server record of each answer, the
 * member that will serve NTP, and makes the cookies for it. To get a second, different
 * member the client runs another key exchange and names the members it has in NTP Server
 * Deny records (NTS_KEClientParams.deny). A pool that has no other member names a denied one
 * anyway, and one that ignores the records may name any; and two names may lead to one NTP
 * server. So every answer is checked here before it becomes a source.
 *
 * Pure, like nts-packet.c: no I/O, no logging, no allocation. The caller keeps the members in
 * use and, per round of key exchanges, the names it turned down, and sends both as its deny
 * list.
 *
 * One round, as the daemon and nts-query run it:
 *   deny = names of the members in use + names turned down in this round
 *   key exchange with the pool, sending deny
 *   NTS_pool_check(..., name = result's Server record, address = NULL)
 *     NTS_POOL_DENIED_AGAIN:  nothing new; do not resolve it. Stop after
 *                             NTS_POOL_MAX_FRUITLESS such answers in a row.
 *     NTS_POOL_NO_MEMBER:     the server names no member: it is one server, not a pool; stop.
 *   resolve the name, NTS_pool_check() again with the NTP address
 *     NTS_POOL_SAME_ADDRESS:  add the name to this round's turned-down names, ask again
 *                             (also counts as fruitless).
 *     NTS_POOL_NEW:           a new source. */

#include <stdbool.h>
#include <stddef.h>

#include "socket-address.h"

typedef struct NTS_PoolMember {
        const char *name;               /* the Server record's body as received; NULL: none */
        SocketAddress address;          /* the NTP address (and port) the name resolved to */
} NTS_PoolMember;

typedef enum NTS_PoolVerdict {
        NTS_POOL_NEW,                   /* a member not in use: take it */
        NTS_POOL_DENIED_AGAIN,          /* the pool named a member in use or denied: it has no
                                         * other, or it ignores NTP Server Deny */
        NTS_POOL_SAME_ADDRESS,          /* a new name, but its NTP address is one in use */
        NTS_POOL_NO_MEMBER,             /* no Server record, and a source from this server is
                                         * already in use: the KE server itself serves NTP */
        _NTS_POOL_VERDICT_MAX,
} NTS_PoolVerdict;

/* After this many answers in a row that brought no new member, a round stops: the pool has
 * no more members for us, or it ignores the deny records and keeps repeating itself. Two, so
 * that one unlucky draw of a pool that picks at random does not end the round. */
#define NTS_POOL_MAX_FRUITLESS 2

/* Checks the member a pool named. name: the Server record's body (NTS_KEResult.ntp_server),
 * NULL when there was none. address: where that name resolved to, with the NTP port; NULL to
 * check the name alone, before resolving it. Names compare without regard to case (DNS
 * names), addresses with their port. in_use: the members of this pool in use; denied: every
 * name sent in the deny list (in use or turned down). */
NTS_PoolVerdict NTS_pool_check(const NTS_PoolMember *in_use, size_t n_in_use, char *const *denied, size_t n_denied,
                               const char *name, const SocketAddress *address);

/* "new member", "denied member again", ...; NULL for values outside the enum. */
const char *NTS_pool_verdict_to_string(NTS_PoolVerdict v);
