/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What systemd-networkd tells about the network: whether we are online, and the NTP servers
 * it learnt per link (DHCP option 42, NTP= in .network files). networkd publishes both in
 * /run/systemd/netif/state; libsystemd has no public API for it (sd-network is internal), so
 * we read that file and watch its directory with inotify. Without networkd the file does not
 * exist and we count as online with no link servers, as stock timesyncd does. */

#include <stdbool.h>

typedef struct Manager Manager;

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

/* Starts watching NETIF_STATE_DIR and applies the current state. */
int manager_network_watch(Manager *m);
/* Re-reads the state: updates the link server list, connects or disconnects. */
int manager_network_update(Manager *m);
