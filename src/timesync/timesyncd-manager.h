/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Manager owns the daemon: the configuration in use, the server lists, which server is
 * selected (its time source does the talking, see timesyncd-source.h), what a sample does to
 * the clock, and what D-Bus, STATUS= and the log say about it. It follows one server at a
 * time, as stock timesyncd does: when the selected source fails, the next usable server takes
 * over. */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ntp-packet.h"
#include "time-util.h"
#include "timesyncd-clock.h"
#include "timesyncd-clockfile.h"
#include "timesyncd-conf.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-pool.h"
#include "timesyncd-server.h"
#include "timesyncd-several.h"
#include "timesyncd-source.h"

typedef struct Manager Manager;

typedef struct ManagerOptions {
        bool observe;
        const char *config_file;        /* NULL: the standard search */
        const char *state_dir;          /* clock file */
        const char *nts_state_dir;      /* NTS cookie jars */
        const char *runtime_dir;        /* "synchronized" flag file */
        usec_t test_poll_interval_usec; /* > 0: fixed poll interval, overrides the config */
        bool test_fake_clock;           /* observe only: a fake clock test_clock_offset_nsec off */
        int64_t test_clock_offset_nsec; /* ... which SIGUSR1 moves by the same amount again */
} ManagerOptions;

/* What the manager waits for. With a server selected, its source's state says the rest. */
typedef enum ManagerState {
        MANAGER_OFFLINE,                /* the network is down, or not known yet */
        MANAGER_POLLING,                /* a server is selected and its source runs */
        MANAGER_WAITING,                /* every server failed once, or every NTS server backs off:
                                         * the retry timer, then selection starts over */
        MANAGER_IDLE,                   /* nothing to do until the configuration changes:
                                         * idle_reason says why */
        _MANAGER_STATE_MAX,
} ManagerState;

/* The last sample used, as the NTPMessage D-Bus property shows it. */
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
        bool bus_wanted;                /* manager_bus_connect() was called */
        bool bus_name_queued;           /* another process owns our bus name: we wait for it */
        bool bus_waiting;               /* said that the bus is not there yet */
        bool bus_connected;             /* m->bus is past Hello and has announced the state */
        usec_t test_poll_interval_usec;
        int64_t test_clock_offset_nsec; /* with a fake clock: how far SIGUSR1 moves it */
        char *config_file, *state_dir, *nts_state_dir, *runtime_dir;
        TimesyncConfig config;
        SourceSettings source_settings; /* kept current from config, for every source */
        NTSClientSettings nts_settings;
        PoolSettings pool_settings;     /* for the pools of NTS lists: the above and the bus */

        ServerName *servers[_SERVER_TYPE_MAX];
        ServerName *current;            /* the selected server: of the set's selected source */
        ManagerState state;
        const char *idle_reason;        /* with MANAGER_IDLE */

        sd_event_source *event_retry;   /* MANAGER_WAITING; allocated once, only re-armed */
        sd_event_source *event_clock_watch, *event_save_clock, *event_network, *event_bus_reconnect,
                       *event_bus_wait;
        sd_event_source *event_stall_check;
        int clock_watch_fd;

        bool network_online;            /* what the last network state said; false until read */
        bool network_state_known;       /* the state was read (or counted as online) once */
        bool synchronized;              /* the clock was disciplined (or would have been) */
        /* Observe mode leaves the clock where it is, so the step it would have made is wanted
         * again at each poll: warned about once, until the clock is to do something else. */
        bool observe_step_warned;
        int64_t observe_step_nsec;      /* ... the step warned about */
        bool sync_flag_written;
        NTPMessage ntpmsg;
        bool ntpmsg_authenticated;      /* the last sample came over NTS and verified */
        usec_t poll_interval_usec;      /* of the selected source, as D-Bus shows it */
        /* The kernel frequency offset as the daemon's last adjustment left it (the adjusting
         * adjtimex() reports it). Observe mode changes nothing, so it stays unknown there and
         * the Frequency property reads the kernel when somebody asks: no adjtimex() per poll. */
        int64_t frequency;
        bool frequency_known;
        ClockFloor clock_floor;         /* read at start: where the clock stood at boot, at the latest */

        /* NTS, see timesyncd-nts.h */
        bool nts_unavailable;           /* NTS servers configured but libssl/libcrypto missing */
        unsigned nts_ke_failures;       /* total, all servers */
        usec_t nts_last_ke_realtime;
        /* Why NTS does not work, or (several sources) which servers fail while the others
         * steer; "" when every server works */
        char nts_status[512];
        bool nts_missing_reported;      /* NTSRequired=yes without NTS servers: logged, in nts_status */
        bool nts_outage;                /* every NTS server fails: logged (nts_outage()) */
        /* The SERVER_NTS list holds FallbackNTS=, not NTS=: nothing else names a server. */
        bool nts_fallback;
        bool status_notified;           /* a STATUS= was sent */

        /* The sources in use (timesyncd-several.c, which owns this): several NTS sources, or a
         * set of one; running while the manager polls or waits for them. current is the
         * selected source's server, NULL while several do not agree. */
        Several several;
        int64_t backward_floor_nsec;    /* a backward bootstrap never sets the clock before it */

        /* D-Bus "Sources": changes coalesced into at most one signal per PollIntervalMinSec= */
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

int manager_new(Manager **ret, const ManagerOptions *o);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Reads the configuration and builds the system, fallback and NTS server lists. */
int manager_load_config(Manager *m);
/* SIGHUP (systemctl reload): reads it again. Runtime and per-link servers stay; the lists of
 * the files are replaced and a server selected again only when they (or the trusted
 * certificates, or what they hold) changed; otherwise what fails is retried at once. A
 * configuration that cannot be read leaves the one in use. */
int manager_reload_config(Manager *m);
/* Someone fixed what made servers fail: every source that backs off, and every NTS client,
 * tries again now (source_retry_now()), and so does a selection that waits for its retry.
 * Returns how many sources were backing off. Called for a reload, and over D-Bus. */
unsigned manager_retry_now(Manager *m);
/* Starts polling: called once the loop is set up. */
int manager_start(Manager *m);
/* READY=1 after manager_start(), with a STATUS= of its own only if starting sent none. */
void manager_notify_ready(Manager *m);
/* STATUS=, what `systemctl status` shows: what the daemon does, and while NTS does not work,
 * why (NTSStatus: the failed key exchange, the refused replies, the missing libssl...). A
 * status that names the reason itself gets it once. */
void manager_notify_status(Manager *m, const char *format, ...) _printf_(2, 3);

/* The network went down or came up (timesyncd-network). */
void manager_set_online(Manager *m, bool online);
/* Replaces the per-link servers; selects again if the selected one was among them. */
int manager_set_link_servers(Manager *m, char **names);
/* Replaces a runtime list (SERVER_RUNTIME or SERVER_NTS_RUNTIME); names already validated. */
int manager_set_runtime_servers(Manager *m, ServerType type, char **names);

/* True when time comes from NTS only (nts_enabled()). */
bool manager_nts_enabled(Manager *m);
/* The NTS client of the selected server, NULL if none or not an NTS server. */
NTSClient *manager_nts_client(Manager *m);

/* The source of the selected server; NULL when none is selected. */
Source *manager_current_source(Manager *m);
/* The server name a source belongs to. */
ServerName *manager_server_of(Manager *m, const Source *s);

/* Saves the clock file now. */
void manager_save_clock(Manager *m);

