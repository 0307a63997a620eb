/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* org.freedesktop.timesync1: the stock Manager interface (same names and signatures, so
 * Debian's timedatectl works unchanged) and org.freedesktop.LogControl1. */

#include <systemd/sd-bus.h>

typedef struct Manager Manager;
/* The bus half's own state (timesyncd-bus-internal.h): the connection, its waits, what was
 * announced. Only timesyncd-bus.c writes it; the manager allocates it and keeps the pointer. */
typedef struct ManagerBus ManagerBus;

int manager_bus_new(ManagerBus **ret);
ManagerBus *manager_bus_free(ManagerBus *b);
/* Where the connection is kept (NULL while not connected), for those who use the daemon's bus
 * (PoolSettings.bus); stable for the life of b. */
sd_bus *const *manager_bus_connection(const ManagerBus *b);

/* Connects to the system bus, or waits for its socket to appear (inotify, no polling); a lost
 * connection is made again 2 s later. Signals go out only once connected. */
int manager_bus_connect(Manager *m);
/* From the manager's stall check: reconnects a bus whose reconnection could not be armed. */
void manager_bus_check(Manager *m);

/* Emits PropertiesChanged for the NULL-terminated list of properties, if connected. */
int manager_bus_emit_changed(Manager *m, const char *property, ...);
/* The same for a NULL-terminated array: one signal for all of them. */
int manager_bus_emit_changed_strv(Manager *m, const char *const *properties);
/* Something "Sources" shows changed: one PropertiesChanged signal (invalidating it) follows, at
 * most one per PollIntervalMinSec= (the shortest poll round), however many sources report. */
void manager_bus_sources_changed(Manager *m);
