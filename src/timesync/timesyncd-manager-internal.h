/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Manager's fields and what timesyncd-manager.c decides and applies, for the manager's own
 * files (timesyncd-manager.c, its bus half timesyncd-bus.c) and their unit tests; the public
 * interface is timesyncd-manager.h. Only timesyncd-manager.c writes these fields. */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "ntp-packet.h"
#include "time-util.h"
#include "timesyncd-clock.h"
#include "timesyncd-clockfile.h"
#include "timesyncd-conf.h"
#include "timesyncd-manager.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-nts.h"
#include "timesyncd-pool.h"
#include "timesyncd-server.h"
#include "timesyncd-policy.h"
#include "timesyncd-source.h"

typedef struct ManagerBus ManagerBus;
typedef struct NetworkWatch NetworkWatch;

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
        ManagerBus *bus;                /* the bus half's own state: timesyncd-bus.c writes it */
        NetworkWatch *network;          /* networkd's state file, reported to the manager */
        ClockBackend *clock;

        bool observe;
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
        sd_event_source *event_clock_watch, *event_save_clock;
        sd_event_source *event_stall_check;
        int clock_watch_fd;

        bool network_online;            /* what the last network state said; false until read */
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
        usec_t frequency_saved_usec;    /* CLOCK_MONOTONIC of the last frequency file write, 0: none */
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

        /* The sources in use (timesyncd-policy.c, which owns this): several NTS sources, or a
         * set of one; running while the manager polls or waits for them. current is the
         * selected source's server, NULL while several do not agree. */
        Policy policy;
        int64_t backward_floor_nsec;    /* a backward bootstrap never sets the clock before it */
};

/* The PLL's poll exponent for an interval (log2 seconds, at most 30). */
int manager_poll_log2(usec_t interval);
/* Apply a decision of the policy over the sources in use or of the NTS glue. */
void manager_policy_apply(Manager *m, const PolicyDecision *d);
void manager_nts_apply(Manager *m, const NTSDecision *d);
