/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Manager owns the event loop state of the daemon: which server is in use, the request
 * in flight, the samples, the poll interval and the decisions passed to the clock backend. */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ntp_packet.h"
#include "resolve-util.h"
#include "time-util.h"
#include "timesyncd-clock.h"
#include "timesyncd-clockfile.h"
#include "timesyncd-conf.h"
#include "timesyncd-filter.h"
#include "timesyncd-server.h"

/* Seconds to wait for one reply before trying the next address (stock: 10 s). */
#define NTP_REQUEST_TIMEOUT_USEC (10 * USEC_PER_SEC)

typedef struct ManagerOptions {
        bool observe;
        const char *config_file;        /* NULL: the standard search */
        const char *state_dir;          /* clock file */
        const char *runtime_dir;        /* "synchronized" flag file */
        usec_t test_poll_interval_usec; /* > 0: fixed poll interval, overrides the config */
        bool test_fake_clock;           /* observe only: a fake clock test_clock_offset_nsec off */
        int64_t test_clock_offset_nsec; /* ... which SIGUSR1 moves by the same amount again */
} ManagerOptions;

/* The last reply, as the NTPMessage D-Bus property shows it. */
typedef struct NTPMessage {
        NTPHeader header;
        int64_t origin_nsec, receive_nsec, transmit_nsec, destination_nsec;
        bool spike;
        uint64_t packet_count;
        int64_t jitter_nsec;
} NTPMessage;

struct Manager {
        sd_event *event;
        sd_bus *bus;
        ClockBackend *clock;

        bool observe;
        bool bus_wanted;                /* manager_connect_bus() was called */
        bool bus_name_queued;           /* another process owns our bus name: we wait for it */
        usec_t test_poll_interval_usec;
        int64_t test_clock_offset_nsec; /* with a fake clock: how far SIGUSR1 moves it */
        char *config_file, *state_dir, *runtime_dir;
        TimesyncConfig config;

        ServerName *system_servers, *fallback_servers, *link_servers, *runtime_servers;
        ServerName *nts_servers, *nts_runtime_servers;
        ServerName *current_server_name;
        ServerAddress *current_server_address;
        ResolveQuery *resolve_query;
        uint16_t resolve_port;          /* NTP port for the addresses being resolved */
        bool exhausted_servers;

        int socket_fd;
        sd_event_source *event_receive, *event_timer, *event_timeout, *event_retry;
        sd_event_source *event_clock_watch, *event_save_clock, *event_network, *event_bus_reconnect;
        sd_event_source *event_stall_check;
        int clock_watch_fd;

        /* the request in flight */
        bool pending;
        NTPTimestamp request_nonce;     /* random transmit timestamp: the reply must echo it */
        unsigned request_refused;       /* replies to it that were refused (timesyncd-refusals.h) */
        int64_t request_realtime_nsec;  /* t1 */
        usec_t request_monotonic;

        NTPFilter filter;
        unsigned poll_level;            /* poll interval: the minimum doubled this many times */
        unsigned poll_level_max;
        bool poll_resync;
        usec_t poll_interval_usec;

        bool network_online;            /* what the last network state said; false until read */
        bool network_state_known;       /* the state was read (or counted as online) once */
        bool talking;                   /* a server answered since the last change */
        bool synchronized;              /* the clock was disciplined (or would have been) */
        bool sync_flag_written;
        NTPMessage ntpmsg;
        int64_t last_offset_nsec;
        int64_t frequency;              /* kernel frequency offset, for the Frequency property */
        ClockFloor clock_floor;         /* read at start: where the clock stood at boot, at the latest */

        /* NTS, see timesyncd-nts.h */
        bool nts_unavailable;           /* NTS servers configured but libssl/libcrypto missing */
        bool ntpmsg_authenticated;      /* the last sample came over NTS and verified */
        unsigned nts_ke_failures;       /* total, all servers */
        usec_t nts_last_ke_realtime;
        char nts_status[256];           /* why NTS does not work, "" when it does */
        bool nts_missing_reported;      /* NTSRequired=yes without NTS servers: logged, in nts_status */
        bool status_notified;           /* a STATUS= was sent */
        bool nts_bootstrap_refusal_logged;

        /* What the last PropertiesChanged signal said of the properties that stay the same
         * over most polls (see manager_bus_emit_changed()) */
        struct {
                bool valid;
                int64_t value;
        } announced[4];
};

int manager_new(Manager **ret, const ManagerOptions *o);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Reads the configuration and builds the system and fallback server lists. */
int manager_load_config(Manager *m);
/* SIGHUP (systemctl reload): reads it again. Runtime and per-link servers stay; the lists of
 * the files are replaced and a server selected again only when they (or the trusted
 * certificates) changed. A configuration that cannot be read leaves the one in use. */
int manager_reload_config(Manager *m);
/* Starts polling: called once the loop is set up. */
int manager_start(Manager *m);
/* READY=1 after manager_start(), with a STATUS= of its own only if starting sent none. */
void manager_notify_ready(Manager *m);

int manager_connect(Manager *m);
void manager_disconnect(Manager *m);
void manager_set_server_name(Manager *m, ServerName *n);
void manager_set_server_address(Manager *m, ServerAddress *a);
void manager_flush_server_names(Manager *m, ServerType t);
/* Replaces a runtime list (SERVER_RUNTIME or SERVER_NTS_RUNTIME); names already validated. */
int manager_set_runtime_servers(Manager *m, ServerType type, char **names);
/* Resolves host and continues with the first address: the NTP server of the current name. */
int manager_resolve_ntp(Manager *m, const char *host, uint16_t port);

/* Saves the clock file now. */
void manager_save_clock(Manager *m);
