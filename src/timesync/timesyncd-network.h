/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What systemd-networkd tells about the network: whether we are online, and the NTP servers
 * it learnt per link (DHCP option 42, NTP= in .network files). networkd publishes both in
 * /run/systemd/netif/state; libsystemd has no public API for it (sd-network is internal), so
 * we read that file and watch its directory with inotify. Without networkd the file does not
 * exist and we count as online with no link servers, as stock timesyncd does. */

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "macro.h"

#define NETIF_STATE_DIR "/run/systemd/netif"

typedef struct NetworkState {
        bool online;
        char **ntp_servers;     /* link servers, in networkd's order */
} NetworkState;

/* Parses the contents of the state file. Unknown keys are ignored. */
int network_state_parse(const char *contents, NetworkState *ret);
/* Reads dir/state; a missing file yields online with no servers. */
int network_state_read(const char *dir, NetworkState *ret);
void network_state_done(NetworkState *s);

/* The watch of the state directory: it reports what the state file says through one callback,
 * from the loop (inotify), or from network_watch_update() when the owner asks. */
typedef struct NetworkWatch NetworkWatch;

/* What the state says, in the order reported: offline first (the server in use is still
 * named when it stops), then the link servers (every time), then online. */
typedef enum NetworkEvent {
        NETWORK_EVENT_OFFLINE,
        NETWORK_EVENT_LINK_SERVERS,     /* servers: networkd's per-link servers, NULL for none */
        NETWORK_EVENT_ONLINE,           /* also when the state cannot be read before any good read */
} NetworkEvent;

/* The one report to the owner; servers is valid during the call only. A negative return for
 * LINK_SERVERS ends that update (network_watch_update() returns it); it is ignored otherwise. */
typedef int (*network_handler_t)(NetworkWatch *w, NetworkEvent event, char **servers, void *userdata);

/* Watches dir (NETIF_STATE_DIR, or a test's), or its parent for it to appear; reports nothing
 * yet. Without the parent directory there is nothing to watch, and nothing is watched. */
int network_watch_new(sd_event *event, const char *dir, network_handler_t handler, void *userdata,
                      NetworkWatch **ret);
NetworkWatch *network_watch_free(NetworkWatch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(NetworkWatch *, network_watch_free);
/* Reads the state now and reports it: called by the owner once it may hear the reports (the
 * first state, at start), and on each change by the watch itself. An unreadable state keeps
 * what the last good read said; before any good read it counts as online. */
int network_watch_update(NetworkWatch *w);
