/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One pool entry of an NTS list and the sources it brings (docs/NTS.md, "Pools"):
 *
 *   pool:SERVER  a key-exchange pool: up to the wanted number of NTS sources ("slots"), whose key
 *                exchanges all go to SERVER and share one NTSClientPool: one at a time, NTP
 *                Server Deny records for the members the others use, each answer checked by
 *                name and NTP address. A member that stops answering is replaced inside its slot
 *                by a new key exchange with the pool (the NTS client does it). Each slot keeps
 *                its own state file, which holds its pair (pool, member).
 *   srv:NAME     an SRV pool: the SRV records _ntske._tcp.NAME, looked up through
 *                systemd-resolved on the daemon's bus and used only when DNSSEC-authenticated
 *                (timesyncd-srv); one NTS source per target in RFC 2782 order, up to the wanted
 *                number, at the record's port, its certificate checked against the target's
 *                name. Looked up again when the records' TTL ends and when a source fails twice
 *                in a row (then the next target, if there is one, takes its place). A lookup
 *                keeps every source whose target is still listed and works, whatever order the
 *                new draw gives; it only fills empty places and those of failed targets
 *                (srv_pick()). A failed lookup is one error naming the reason (pool_last_error(),
 *                logged once): the sources the pool has stay, and none comes from it until a
 *                lookup succeeds; a pool without sources has none at all: no fallback of any
 *                kind.
 *
 * A key-exchange pool whose slots find no member they may take (nts_client_pool_exhausted()),
 * three key exchanges in a row without a new member in between, while others have one, has no
 * more members: its slots without a member leave, and one slot
 * asks it again a random time in [1 h, 1.5 h) later (one more member: all places are filled
 * again).
 *
 * The owner (timesyncd-policy.c) keeps the sources it uses in step with the pool's: after each
 * call that may change them (pool_start(), pool_source_event()) and at each report, it drops
 * the sources pool_source_retired() names and adds and starts the new ones (pool_source()).
 * A retired source is stopped at once and freed on a later loop iteration, never from inside
 * one of its own reports. Reports come from the event loop only. */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

#include "server-name.h"
#include "timesyncd-source.h"

typedef struct Pool Pool;

typedef struct PoolSettings {
        const SourceSettings *source;   /* for the sources it makes */
        sd_bus *const *bus;             /* where the owner keeps the daemon's bus connection
                                         * (NULL in it: none): SRV lookups go to resolved there */
} PoolSettings;

typedef enum PoolEvent {
        POOL_EVENT_CHANGED,             /* sources retired or new: an SRV lookup gave targets,
                                         * or a key-exchange pool asks for one more member */
        POOL_EVENT_FAILED,              /* an SRV lookup failed: pool_last_error(); the sources
                                         * stay */
        _POOL_EVENT_MAX,
} PoolEvent;

typedef void (*pool_handler_t)(Pool *p, PoolEvent event, void *userdata);

/* entry: as configured ("pool:nts.example", "srv:example.org"); kind, host and port as
 * server_name_parse_nts() gave them. The sources report to source_handler. */
int pool_new(const PoolSettings *settings, ServerNameKind kind, const char *entry, const char *host, uint16_t port,
             source_handler_t source_handler, void *source_userdata, pool_handler_t handler, void *userdata,
             Pool **ret);
/* Frees its sources too (their NTS clients save their state files). */
Pool *pool_free(Pool *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Pool *, pool_free);

/* Wants n sources (1 .. NTS_CLIENT_POOL_MAX) and works towards them: a key-exchange pool has its
 * slots at once, an SRV pool looks its records up (on the next loop iteration) unless a lookup
 * runs or the last answer is still valid. Its sources are not started: the owner does that. */
void pool_start(Pool *p, size_t n);
/* Stops its sources, the lookup and its timer; they are kept for the next pool_start(). */
void pool_stop(Pool *p);
/* What a source of the pool reported to the owner (SAMPLE and FAILED count): true when sources
 * were retired or made (an SRV target that failed twice in a row, replaced by the next one). */
bool pool_source_event(Pool *p, Source *s, SourceEvent e);

/* The system clock was stepped (by us or by another program): an SRV pool whose last lookup
 * failed looks again at once (not sooner than 10 s after the last lookup), rather than at the
 * end of its backoff, which may be an hour away. */
void pool_clock_changed(Pool *p);
/* Between pool_start() and pool_stop(). */
bool pool_started(const Pool *p);
size_t pool_n_sources(const Pool *p);
Source *pool_source(const Pool *p, size_t i);
/* One of its sources, in use or retired. */
bool pool_has_source(const Pool *p, const Source *s);
bool pool_source_retired(const Pool *p, const Source *s);
const char *pool_entry(const Pool *p);
/* Why the last SRV lookup failed, one sentence with what to configure: "not used: REASON", or
 * "its sources in use are kept, but looking its SRV records up again fails: REASON"; "" when it
 * did not. */
const char *pool_last_error(const Pool *p);
/* Started, without a source, and with nothing armed that brings one (a lookup, its timer): the
 * owner's safety net should never find one. */
bool pool_stalled(const Pool *p);
