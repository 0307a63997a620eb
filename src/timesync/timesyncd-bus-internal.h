/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What timesyncd-bus.c keeps and puts on a connection, visible to its unit test only; the
 * public interface is timesyncd-bus.h. */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "time-util.h"
#include "timesyncd-bus.h"

struct ManagerBus {
        sd_bus *connection;
        bool wanted;                    /* manager_bus_connect() was called */
        bool name_queued;               /* another process owns our bus name: we wait for it */
        bool waiting;                   /* said that the bus is not there yet */
        bool connected;                 /* connection is past Hello and has announced the state */
        sd_event_source *event_wait, *event_reconnect;

        /* "Sources": changes coalesced into at most one signal per PollIntervalMinSec= */
        sd_event_source *event_sources_changed;
        bool sources_dirty;
        usec_t sources_announced;       /* CLOCK_BOOTTIME of the last signal */

        /* What the last PropertiesChanged signal said of the properties that stay the same
         * over most polls (see manager_bus_emit_changed()) */
        struct {
                bool valid;
                int64_t value;
        } announced[4];
};

/* Registers the org.freedesktop.timesync1.Manager and org.freedesktop.LogControl1 objects of m
 * on bus. */
int manager_bus_add_objects(sd_bus *bus, Manager *m);
