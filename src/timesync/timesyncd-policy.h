/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sources in use and the one policy for them (docs/ARCHITECTURE.md, "Several sources"):
 * a set of sources whose agreement the clock follows (timesyncd-source-set). With NTS, and two
 * or more servers listed (or a pool) and NTSMaxSources= above 1, up to NTSMaxSources= of them
 * run together, each with its own key exchange, cookie jar and poll schedule, and the clock
 * follows what a majority of those in use agree on, never one server alone. Otherwise (plain
 * NTP, one NTS server, NTSMaxSources=1) the set is a set of one: its majority is that server,
 * so the clock follows each of its samples; there is no majority for a silence to shift (the
 * server in use always has all the say, as with stock), so a failing server hands over to the
 * next usable one of the lists at once, in stock's order, with a wait of ConnectionRetrySec=
 * after every server was tried once (timesyncd-policy-walk.c). Which of the two a set is, is
 * decided once at its start.
 *
 * This module owns the set (struct Policy) and nothing else: it never touches the Manager,
 * the bus, STATUS= or the clock. Each entry point fills a PolicyDecision, which the manager
 * applies: it selects, steers, announces and enters its states. */

#include <stdbool.h>

#include "timesyncd-bus-property.h"
#include "timesyncd-clock.h"
#include "timesyncd-conf.h"
#include "timesyncd-pool.h"
#include "timesyncd-server.h"
#include "timesyncd-source-set.h"
#include "timesyncd-source.h"

/* What the manager does after an entry point of this module, in this order. */
typedef struct PolicyDecision {
        /* The set stopped: nothing is selected, and nothing the manager showed of the selected
         * source is authenticated any more. */
        bool stopped;
        /* The selected source (Policy.selected) changed: the manager's ServerName follows it.
         * record: NTPMessage and PollIntervalUSec take the selected source's last sample. */
        bool select, record;
        /* NTSStatus becomes nts_status. */
        bool set_nts_status;
        char nts_status[512];
        /* STATUS= says status. */
        bool notify;
        char status[512];
        /* Every NTS server refuses service: the manager says so and idles. */
        bool refused;
        /* NTS: every server of the list in use fails now, or one answers (a verified reply of
         * nts_answered): the manager logs the change once (nts_outage()). */
        bool nts_none;
        const Source *nts_answered;
        /* The set runs: the manager polls. */
        bool polling;
        /* Nothing to poll now: the manager waits until wait_until (CLOCK_BOOTTIME; 0: for
         * ConnectionRetrySec=) and starts the set again. */
        bool wait;
        usec_t wait_until;
        /* Nothing usable: the manager idles, for this reason (static text). */
        const char *idle;
        /* The selected source polls another address: nothing of it is authenticated until its
         * next verified reply, and PollIntervalUSec is its interval. */
        bool new_address;
        /* The clock follows adjustment (poll_log2 from poll_interval_usec), to server, with the
         * clause agreement; then policy_steered() gets the result. */
        bool steer;
        ClockAdjustment adjustment;
        usec_t poll_interval_usec;
        char server[300];
        char agreement[64];
        bool steer_authenticated;       /* ... the time came over NTS, verified */
        bool steer_bootstrap;           /* ... the agreed time came with bootstrap keys */
        size_t steer_agree;             /* ... and this many current sources agreed */
        Source *promote;                /* ... and this spare takes its silent source's place */
        /* A source's NTS event for the manager's NTS counters and properties. */
        bool nts_event;
        /* PropertiesChanged for these (BusProperty bits), and one of Sources. */
        unsigned changed;
        bool sources_changed;
} PolicyDecision;

struct PolicyContext;

/* The one way the policy reaches its sources (as chrony's sources module sees its sources
 * through a narrow interface): what a source is and says, and what the policy asks of it. The
 * daemon passes policy_source_ops (timesyncd-policy-source.c), the real sources of
 * timesyncd-source, whose functions of the same names each entry calls; a unit test passes
 * fakes, and drives policy_on_event() for a set of several without sockets, key exchanges or
 * time. No other file of the policy calls a function of timesyncd-source or of the NTS client,
 * nor one of the server lists or pools that reads the names' sources (PolicyListOps). */
typedef struct PolicySourceOps {
        /* n's source (ServerName.source), made the first time n is used, with the context's
         * source settings and handler: server_name_source(). */
        int (*make)(ServerName *n, const struct PolicyContext *ctx);

        /* What it is and says. */
        const char *(*name)(const Source *s);
        SourceState (*state)(const Source *s);
        const SocketAddress *(*address)(const Source *s);
        const SourceSample *(*sample)(const Source *s);
        usec_t (*poll_interval)(const Source *s);
        const char *(*last_error)(const Source *s);
        bool (*silent)(const Source *s);
        unsigned (*failures)(const Source *s);
        bool (*stalled)(const Source *s);
        /* Whether it is an NTS source. */
        bool (*nts)(const Source *s);
        /* Its NTS client's last error ("": none; NULL: no NTS client), and whether that was
         * logged with its reason as it came (nts_client_last_error_logged()). */
        const char *(*ke_error)(const Source *s, bool *ret_logged);
        /* Its key-exchange pool has no member left for it (nts_client_pool_exhausted()). */
        bool (*ke_pool_exhausted)(const Source *s);
        /* Writes into id what it knows now of which server it is: its NTP address, the
         * key-exchange server and certificate key of its last key exchange; what it does not
         * know now is left as it was. */
        void (*identify)(const Source *s, SourceIdentity *id);

        /* What the policy asks of it. */
        int (*start)(Source *s);
        int (*keep_trying)(Source *s);
        void (*stop)(Source *s);
        bool (*sample_used)(Source *s);
        void (*clock_stepped)(Source *s, bool poll_now);
        void (*sample_stepped)(Source *s, int64_t step_nsec);
        void (*poll_limits_changed)(Source *s);
        void (*poll_interval_locked)(Source *s, usec_t interval);
        void (*set_unused)(Source *s, bool unused);
} PolicySourceOps;

/* The real sources (timesyncd-source), for the daemon. */
extern const PolicySourceOps policy_source_ops;

/* What the policy asks of the server lists (lists: PolicyContext.servers) and of the pools of
 * their names, each an answer that reads the names' sources, their NTS clients or their pools'
 * lookups: the daemon passes policy_list_ops (timesyncd-policy-source.c), the functions of
 * timesyncd-server, timesyncd-nts and timesyncd-pool in the comments; a unit test passes fakes
 * over its fake sources and pools, and drives the policy without sockets, lookups, key
 * exchanges or time. What a name is (ServerName: its list, kind, string, host, and whether it
 * has a source or a pool yet) is read from the name itself: the lists are plain data, which a
 * unit test builds with server_name_new(). */
typedef struct PolicyListOps {
        /* The usable name to try after current, in stock's order (server_next()). */
        ServerName *(*next)(ServerName *const *lists, const ServerName *current, bool nts, bool *ret_wrapped);
        /* Not refused, and not backing off after failed key exchanges (server_name_usable()). */
        bool (*usable)(const ServerName *n);
        /* Every NTS server refused service (nts_all_refuse()). */
        bool (*all_refuse)(ServerName *const *lists);
        /* When the first NTS server that backs off may try again, 0: none (nts_earliest_retry()). */
        usec_t (*earliest_retry)(ServerName *const *lists);
        /* The name whose source s is, or whose pool's (also one the pool retired); NULL: none
         * (server_lists_find_source()). */
        ServerName *(*find_source)(ServerName *const *lists, const Source *s);

        /* The pool of n (ServerName.pool), made the first time n is used, with the context's
         * pool settings and handlers (server_name_pool()). */
        int (*pool_make)(ServerName *n, const struct PolicyContext *ctx);
        /* The functions of timesyncd-pool of the same names. */
        void (*pool_start)(Pool *p, size_t n);
        void (*pool_stop)(Pool *p);
        bool (*pool_started)(const Pool *p);
        bool (*pool_stalled)(const Pool *p);
        const char *(*pool_last_error)(const Pool *p);
        size_t (*pool_n_sources)(const Pool *p);
        Source *(*pool_source)(const Pool *p, size_t i);
        bool (*pool_has_source)(const Pool *p, const Source *s);
        bool (*pool_source_retired)(const Pool *p, const Source *s);
        /* Whether the pool replaced s after its event e (its members changed). */
        bool (*pool_source_event)(Pool *p, Source *s, SourceEvent e);
} PolicyListOps;

/* The real server lists (timesyncd-server), for the daemon. */
extern const PolicyListOps policy_list_ops;

/* What the set reads of the manager, all of it stable for the manager's life: set up once
 * with policy_init(). */
typedef struct PolicyContext {
        const PolicySourceOps *sources;         /* every call into a source goes through it */
        const PolicyListOps *lists;             /* ... and every question to the lists about them */
        const TimesyncConfig *config;
        ClockBackend *clock;
        ServerName **servers;                   /* the manager's lists, _SERVER_TYPE_MAX of them */
        const char *nts_status;                 /* NTSStatus as the manager shows it */
        const SourceSettings *source_settings;  /* for the sources and pools made here */
        const PoolSettings *pool_settings;
        source_handler_t source_handler;
        pool_handler_t pool_handler;
        void *userdata;
        /* CLOCK_BOOTTIME for the ages of samples and silences and the log's rate limits; NULL:
         * now(CLOCK_BOOTTIME). A unit test's fake time, so that one seed gives one run. */
        usec_t (*now_boottime)(void);
} PolicyContext;

/* How the set runs: one server at a time (timesyncd-policy-walk.c), or several that vote. */
typedef enum PolicyRun {
        POLICY_STOPPED,
        POLICY_ONE,
        POLICY_SEVERAL,
} PolicyRun;

typedef struct PolicyMode PolicyMode;

typedef struct Policy {
        PolicyContext ctx;
        bool running;
        bool nts;                       /* time from NTS lists only (there is no plain NTP then) */
        const PolicyMode *mode;         /* a set of one or of several, decided at its start */
        ServerName *walk_name;          /* a set of one: the server tried last; NULL: none */
        bool walked_round;              /* ... every server was tried once since the last wait */
        bool fallback;                  /* the list holds FallbackNTS=, not NTS= */
        int64_t backward_floor_nsec;    /* a backward bootstrap never sets the clock before it */
        SourceSet set;
        Source *selected;               /* the set's selected source, whose samples steer */
        /* What the set says is logged once per change of state: its sentence without the
         * spread ("by 0 ms" and "by 1 ms" are one state), the state's key. */
        char status[200];               /* the key of the last state */
        char status_logged[200];        /* ... of the last one logged above debug level */
        struct {
                char key[200];
                usec_t usec;            /* CLOCK_BOOTTIME when the set was last in it */
        } states_seen[4];               /* the last states, to tell a flip from a new state */
        char notified[512];             /* ... and STATUS=, which names the selected source too */
        char last_failure[256];         /* the last source that failed, and why */
        usec_t alone_since_usec;        /* CLOCK_REALTIME since the set leaves the clock alone, 0 */
        usec_t logged_usec;             /* CLOCK_BOOTTIME of the last set line above debug level */
        usec_t quiet_usec;              /* flips after it are logged at debug level for this long */
        unsigned changes_unlogged;      /* flips logged at debug level since then */
        const Source *selected_logged;  /* the last source "Selected server" named at info level */
        /* Per source of the set: CLOCK_BOOTTIME when a change of its verdict was last logged
         * above debug level. A slot of a source no longer in the set is free. */
        struct {
                const Source *source;
                usec_t usec;
        } verdict_logged[NTP_SELECT_MAX];
} Policy;

void policy_init(Policy *pol, const PolicyContext *ctx);

/* The NTS list in use (runtime NTS servers while set, else NTS=) names two or more servers
 * (or a pool), and NTSMaxSources= allows more than one; nts_usable: time comes from NTS only
 * and libssl is there. Otherwise the set is a set of one. */
bool policy_wanted(const Policy *pol, bool nts_usable);
/* Starts the set (stops one that runs): with nts the first NTSMaxSources= usable servers of
 * the NTS list in use together, or a set of one; without, a set of one over the plain NTP
 * lists. fallback: the list holds FallbackNTS=; backward_floor_nsec: see Policy. */
void policy_start(Policy *pol, bool nts, bool fallback, int64_t backward_floor_nsec, PolicyDecision *d);
/* Whether the set uses a server of the list of type t (which is about to be replaced). */
bool policy_uses_list(const Policy *pol, ServerType t);
/* Whether the set runs, and how: only the agreement of a set of several may allow a backward
 * bootstrap. */
PolicyRun policy_running(const Policy *pol);
/* Stops every source of the set; nothing is selected. No-op when no set runs. */
void policy_stop(Policy *pol, PolicyDecision *d);
/* What a pool of the list in use reports (timesyncd-pool.h). */
void policy_on_pool_event(Policy *pol, ServerName *n, PoolEvent e, PolicyDecision *d);
/* What a source of the set (or one that ran before) reports. */
void policy_on_event(Policy *pol, Source *s, SourceEvent e, PolicyDecision *d);
/* The clock followed d (r: what clock_backend_adjust() returned, > 0 when the clock moved):
 * the set's bookkeeping after a step or slew, and the spare d promotes. Fills next. */
void policy_steered(Policy *pol, const PolicyDecision *d, int r, PolicyDecision *next);
/* Someone else set the clock: every sample is void, every source polls at once. */
void policy_clock_changed(Policy *pol, PolicyDecision *d);
/* The poll interval limits changed (a reload). */
void policy_poll_limits_changed(Policy *pol);
/* The clock's discipline is locked for poll intervals up to interval: the sources' intervals
 * grow no further (source_set_poll_interval_locked()). */
void policy_poll_interval_locked(Policy *pol, usec_t interval);
/* No source in use answers with keys whose certificate our clock found valid, and none waits
 * for its first answer or failure: every certificate may look expired because the clock is
 * ahead, the one case a backward bootstrap is for. */
bool policy_clock_may_be_ahead(const Policy *pol);
/* A source of the set without a way forward (the safety net's question). */
bool policy_stalled(const Policy *pol);
/* The verdict of the source for D-Bus: "selected", "truechimer", "falseticker", "undecided",
 * "unusable"; NULL when it is not in the set. */
const char *policy_verdict(Policy *pol, const Source *s);
/* The other source of a conflict of claims s is in: the two name one NTP address, though their
 * key-exchange servers and certificate keys differ, so one of them claims a server that is not
 * its own (each keeps its vote). NULL when there is none. */
const Source *policy_conflict_with(const Policy *pol, const Source *s);

/* The decision functions below are pure: no log, no clock, no I/O. */

/* What the clock does with the offset the set agreed on: a step from NTP_STEP_THRESHOLD_NSEC
 * (0.4 s) on, either way, a slew below it; the leap indicator and the error bound go along
 * (the manager fills in the poll exponent). */
ClockAdjustment policy_adjustment(int64_t offset_nsec, int leap, int64_t max_error_nsec);

/* The leap second that more than half of the agreeing sources that answer now announce, else
 * none: one server alone cannot insert one. */
int policy_leap(const SourceSet *set, size_t n_current_agree);

/* The reason in the set's line for a source that starts failing: its error, or when that is
 * the error of a key exchange that was logged with its reason as it came (ke_error, ke_logged;
 * for a certificate hundreds of characters), only "key exchange failed". NTSStatus keeps the
 * whole reason. */
const char *policy_failure_reason(const char *error, const char *ke_error, bool ke_logged);

/* What NTSStatus says of the set: its inputs and the choice (policy_report()). */
typedef struct PolicyStatusInput {
        bool disagree;                  /* source_set_disagree() */
        NTPSelectOutcome outcome;
        size_t n_pending;
        bool fallback;                  /* the list holds FallbackNTS= */
        const char *since;              /* what the set says, with since when while it disagrees */
        const char *pool_failure;       /* "ENTRY: REASON" of a pool whose lookup failed, or "" */
        const char *last_failure;       /* the last source that failed, and why, or "" */
        const char *failing;            /* "N of M NTS servers failing: ...", or "" */
        const char *falsetickers;       /* "Falseticker: NAME (OFFSET s)", or ""/NULL */
        const char *conflict;           /* "NTS sources B and A name one NTP address ...", or "" */
} PolicyStatusInput;
/* Returns one of the texts of in, or buf (size bytes) with two or three of them (a conflict
 * is always said, after the rest). */
const char *policy_nts_status(const PolicyStatusInput *in, char *buf, size_t size);
