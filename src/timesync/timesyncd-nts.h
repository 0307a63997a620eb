/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NTS as the daemon sees it: whether time comes from NTS servers only, libssl, the bootstrap
 * policy, and what NTSStatus and the NTS properties on D-Bus say. The work for each NTS
 * server (key exchange, cookies, backoff) is its NTS client's, see timesyncd-nts-client.h.
 * With NTS servers configured the manager only ever talks to them: there is no path from here
 * to plain NTP. */

#include <stdbool.h>
#include <stddef.h>

#include "timesyncd-nts-client.h"
#include "timesyncd-source.h"

typedef struct Manager Manager;
typedef struct NTSClient NTSClient;

/* True when any NTS server is configured, or NTS= named only invalid ones, or NTSRequired=yes:
 * then time comes from NTS only. */
bool manager_nts_enabled(Manager *m);
/* Loads libssl/libcrypto once if NTS servers are configured; logs one clear error if that
 * fails (then nothing NTS is ever started). Returns 0 if NTS is usable or not needed, negative
 * errno otherwise. */
int manager_nts_prepare(Manager *m);
/* Time may come from NTS only, and there is no NTS server: says why (log, NTSStatus, STATUS=). */
void manager_nts_missing(Manager *m);
/* Every NTS server of the lists refused service (kiss code DENY or RSTR, timesyncd-source.c):
 * none is asked again, so nothing is left to do until the lists change. */
bool manager_nts_all_refuse(Manager *m);
/* Says so (log, NTSStatus, STATUS=) and idles: no plain NTP instead, no retries. */
void manager_nts_enter_refused(Manager *m);
/* The server lists changed: forgets reasons that no longer hold. */
void manager_nts_servers_changed(Manager *m);

/* The bootstrap policy for NTSClientSettings.bootstrap_allowed (userdata: the Manager). */
bool manager_nts_bootstrap_allowed(void *userdata, NTSClientBootstrap direction, char *why, size_t size,
                                   const char **ret_short);
/* A source reported an NTS event, or refused replies: NTSStatus, the counters,
 * PropertiesChanged. */
void manager_nts_changed(Manager *m, Source *s, SourceEvent e);

/* The NTS client of the selected server, NULL if none or not an NTS server. */
NTSClient *manager_nts_client(Manager *m);
