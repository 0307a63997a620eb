/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What timesyncd-bus.c puts on a connection, visible to its unit test only; the public
 * interface is timesyncd-bus.h. */

#include <systemd/sd-bus.h>

typedef struct Manager Manager;

/* Registers the org.freedesktop.timesync1.Manager and org.freedesktop.LogControl1 objects of m
 * on bus. */
int manager_bus_add_objects(sd_bus *bus, Manager *m);
