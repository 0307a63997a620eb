/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Manager owns the daemon: the configuration in use, the server lists, which server is
 * selected (its time source does the talking, see timesyncd-source.h), what a sample does to
 * the clock, and what D-Bus, STATUS= and the log say about it. Which servers are in use and
 * what their samples do to the clock is the policy's to decide (timesyncd-policy.h), for one
 * server as for several; the manager applies its decisions. */

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "macro.h"
#include "time-util.h"
#include "timesyncd-server.h"

typedef struct Manager Manager;
typedef struct NTSClient NTSClient;
typedef struct Source Source;

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
/* Saves the frequency the clock's discipline learned (timesyncd-freqfile.h) now, if it has
 * one: at stop; while running it is saved at most once an hour. */
void manager_save_frequency(Manager *m);

/* The event loop the daemon runs on, and whether the clock was disciplined (or would have
 * been): for main(), which runs the loop and saves the clock at a clean stop. */
sd_event *manager_event(Manager *m);
bool manager_synchronized(Manager *m);

