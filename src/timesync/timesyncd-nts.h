/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NTS as the daemon sees it: whether time comes from NTS servers only, libssl, the bootstrap
 * policy, and what NTSStatus and the NTS properties on D-Bus say. The work for each NTS
 * server (key exchange, cookies, backoff) is its NTS client's, see timesyncd-nts-client.h.
 * With NTS servers configured the manager only ever talks to them: there is no path from here
 * to plain NTP.
 *
 * This module decides and logs; it holds no state and never touches the Manager: each
 * function says in an NTSDecision what NTSStatus, STATUS= and the bus are to say, and the
 * manager applies it. */

#include <stdbool.h>
#include <stddef.h>

#include "timesyncd-bus-property.h"
#include "timesyncd-clockfile.h"
#include "timesyncd-conf.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-server.h"
#include "timesyncd-source.h"

typedef struct NTSDecision {
        bool set_status;                /* NTSStatus becomes status */
        char status[512];
        bool notify;                    /* STATUS= says notify_text */
        char notify_text[512];
        bool ke_failed;                 /* one more failed key exchange */
        bool ke_done;                   /* a key exchange succeeded at ke_realtime */
        usec_t ke_realtime;
        unsigned changed;               /* PropertiesChanged for these (BusProperty bits) */
} NTSDecision;

/* True when any NTS server is configured, or NTS= named only invalid servers, or
 * NTSRequired=yes: then time comes from NTS only. */
bool nts_enabled(ServerName *const servers[static _SERVER_TYPE_MAX], const TimesyncConfig *c);
/* NTS servers are configured (or NTS= named only invalid ones): libssl is needed. */
bool nts_servers_named(ServerName *const servers[static _SERVER_TYPE_MAX], const TimesyncConfig *c);
/* Loads libssl/libcrypto once; logs one clear error if that fails (then nothing NTS is ever
 * started) and writes the reason for NTSStatus to status. fallback: the NTS servers are those
 * of FallbackNTS=. Returns 0 if NTS is usable, a negative errno otherwise. */
int nts_prepare(bool fallback, char *status, size_t size);
/* Time may come from NTS only, and there is no NTS server: why (the log once, unless
 * reported, NTSStatus, STATUS=). */
void nts_missing(const TimesyncConfig *c, bool reported, NTSDecision *d);
/* Every NTS server of the lists refused service (kiss code DENY or RSTR, timesyncd-source.c):
 * none is asked again, so nothing is left to do until the lists change. */
bool nts_all_refuse(ServerName *const servers[static _SERVER_TYPE_MAX]);
/* The earliest CLOCK_BOOTTIME time at which an NTS server of the lists that backs off after
 * failed key exchanges may try again; 0 if none backs off. */
usec_t nts_earliest_retry(ServerName *const servers[static _SERVER_TYPE_MAX]);
/* Says so (the log, NTSStatus, STATUS=); the manager idles: no plain NTP instead, no retries.
 * status_now: NTSStatus as it is. */
void nts_refused(const char *status_now, NTSDecision *d);
/* Every NTS server of the list in use fails now (outage), or one answers again (server: the one
 * that sent a verified reply): the log says so, once per change (the manager keeps whether
 * there is an outage). status: NTSStatus, which says why. */
void nts_outage(bool outage, const char *status, const char *server);
/* A source reported an NTS event, or refused replies: NTSStatus (not with several sources,
 * whose set says what they say together), the counters, the properties. status_now: NTSStatus
 * as it is. */
void nts_source_event(Source *s, SourceEvent e, bool several, const char *status_now, NTSDecision *d);

/* What the bootstrap policy reads (see nts_bootstrap_decide()). */
typedef struct NTSBootstrapInput {
        bool several;                   /* several sources run */
        bool clock_may_be_ahead;        /* policy_clock_may_be_ahead() */
        bool enabled;                   /* NTSBootstrap= */
        bool synchronized;              /* the daemon synchronized since it started */
        bool kernel_state_known;        /* the kernel's state could be read ... */
        bool kernel_synchronized;       /* ... and says the clock is synchronized */
        bool clock_readable;
        int64_t realtime_nsec, boottime_nsec;
        const ClockFloor *floor;
} NTSBootstrapInput;

/* The bootstrap policy (see "Bootstrap" in timesyncd-nts-client.c and docs/NTS.md), pure: the
 * arguments after direction are those of NTSClientSettings.bootstrap_allowed. */
bool nts_bootstrap_decide(const NTSBootstrapInput *in, NTSClientBootstrap direction, char *why, size_t size,
                          const char **ret_short);
