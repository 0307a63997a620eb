/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Several NTS sources at once (issue 16; docs/ARCHITECTURE.md, "Several sources"): the
 * manager's policy when the NTS list in use names two or more servers and NTSMaxSources= is
 * above 1. Up to NTSMaxSources= of them run together, each with its own key exchange, cookie
 * jar and poll schedule; the clock follows what a majority of those that answer agree on
 * (timesyncd-source-set), never one server alone. Plain NTP and a single NTS server stay with
 * the manager's one-server-at-a-time policy (timesyncd-manager.c). */

#include <stdbool.h>

#include "timesyncd-pool.h"
#include "timesyncd-server.h"
#include "timesyncd-source.h"

typedef struct Manager Manager;

/* The NTS list in use (runtime NTS servers while set, else NTS=) names two or more servers,
 * NTS works, and NTSMaxSources= allows more than one. */
bool manager_several_wanted(Manager *m);
/* Starts the first NTSMaxSources= usable servers of that list together (stops a set that
 * runs). */
void manager_several_start(Manager *m);
/* Stops every source of the set; nothing is selected. No-op when no set runs. */
void manager_several_stop(Manager *m);
/* What a pool of the list in use reports (timesyncd-pool.h). */
void manager_several_on_pool_event(Manager *m, ServerName *n, PoolEvent e);
/* What a source of the set (or one that ran before) reports. */
void manager_several_on_event(Manager *m, Source *s, SourceEvent e);
/* Someone else set the clock: every sample is void, every source polls at once. */
void manager_several_clock_changed(Manager *m);
/* The poll interval limits changed (a reload). */
void manager_several_poll_limits_changed(Manager *m);
/* No source in use answers with keys whose certificate our clock found valid, and none waits
 * for its first answer or failure: every certificate may look expired because the clock is
 * ahead, the one case a backward bootstrap is for. */
bool manager_several_clock_may_be_ahead(Manager *m);
/* A source of the set without a way forward (the safety net's question). */
bool manager_several_stalled(Manager *m);
/* The verdict of the source for D-Bus: "selected", "truechimer", "falseticker", "undecided",
 * "unusable"; NULL when it is not in the set. */
const char *manager_several_verdict(Manager *m, const Source *s);
