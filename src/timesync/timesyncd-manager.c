/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "string-util.h"
#include "strv.h"
#include "timesyncd-bus.h"
#include "timesyncd-clockfile.h"
#include "timesyncd-freqfile.h"
#include "timesyncd-manager.h"
#include "timesyncd-manager-internal.h"
#include "timesyncd-network.h"
#include "timesyncd-nts.h"
#include "timesyncd-policy.h"
#include "timesyncd-messages.h"

static int manager_clock_watch_setup(Manager *m);
static void manager_start_set(Manager *m);
static void manager_enter(Manager *m, ManagerState state, const char *idle_reason, usec_t wait_until);

/* The PLL's poll exponent for an interval (log2 seconds). */
int manager_poll_log2(usec_t interval) {
        int l = 0;

        while (l < 30 && ((usec_t) 2 << l) * USEC_PER_SEC <= interval)
                l++;
        return l;
}

/* ---- status ---- */

void manager_notify_status(Manager *m, const char *format, ...) {
        char buf[512];
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(buf, sizeof buf, format, ap);
        va_end(ap);
        /* A reason that ends in a question ("UDP port 123 blocked?") takes no full stop. */
        if (m->nts_status[0] != '\0' && !strstr(buf, m->nts_status))
                (void) sd_notifyf(false, "STATUS=%s %s%s", buf, m->nts_status, endswith(m->nts_status, "?") ? "" : ".");
        else
                (void) sd_notifyf(false, "STATUS=%s", buf);
        m->status_notified = true;
}

void manager_notify_ready(Manager *m) {
        /* A reason found while starting ("NTSRequired=yes but no NTS server is configured")
         * must stay what `systemctl status` shows: the default text only if none was sent. */
        (void) sd_notify(false, m->status_notified ? "READY=1" : "READY=1\nSTATUS=Daemon is running");
}

/* ---- NTS: the glue decides, the manager applies ---- */

bool manager_nts_enabled(Manager *m) {
        return nts_enabled(m->servers, &m->config);
}

NTSClient *manager_nts_client(Manager *m) {
        Source *s = manager_current_source(m);

        return s ? source_nts(s) : NULL;
}

/* One PropertiesChanged for the properties a decision names (bits of timesyncd-bus-property.h);
 * none when it names none. */
static void manager_bus_emit_properties(Manager *m, unsigned changed) {
        const char *names[_BUS_PROPERTY_MAX + 1];

        if (bus_property_names(changed, names) > 0)
                (void) manager_bus_emit_changed_strv(m, names);
}

/* What the NTS glue decided (timesyncd-nts.h): NTSStatus, the counters, STATUS=, the signal. */
void manager_nts_apply(Manager *m, const NTSDecision *d) {
        if (d->set_status)
                snprintf(m->nts_status, sizeof m->nts_status, "%s", d->status);
        if (d->ke_failed)
                m->nts_ke_failures++;
        if (d->ke_done)
                m->nts_last_ke_realtime = d->ke_realtime;
        manager_bus_emit_properties(m, d->changed);
        if (d->notify)
                manager_notify_status(m, "%s", d->notify_text);
}

/* Loads libssl/libcrypto once if NTS servers are configured (nts_prepare()). */
static int manager_nts_prepare(Manager *m) {
        char status[sizeof m->nts_status];
        int r;

        /* NTSRequired= and no server yet: nothing to load until one is set at runtime. */
        if (!nts_servers_named(m->servers, &m->config))
                return 0;
        r = nts_prepare(m->nts_fallback, status, sizeof status);
        if (r < 0) {
                m->nts_unavailable = true;
                snprintf(m->nts_status, sizeof m->nts_status, "%s", status);
        }
        return r;
}

/* Every NTS server fails, or one answers again: logged once per change. */
static void manager_nts_outage(Manager *m, bool outage, const char *server) {
        if (m->nts_outage == outage)
                return;
        m->nts_outage = outage;
        nts_outage(outage, m->nts_status, server);
}

static void manager_nts_missing(Manager *m) {
        NTSDecision d = {};

        nts_missing(&m->config, m->nts_missing_reported, &d);
        if (!m->config.nts_set)
                m->nts_missing_reported = true;
        manager_nts_apply(m, &d);
        /* The other reasons have their line of their own. */
        if (m->config.nts_set)
                manager_nts_outage(m, true, NULL);
}

static void manager_nts_enter_refused(Manager *m) {
        NTSDecision d = {};

        nts_refused(m->nts_status, &d);
        manager_nts_apply(m, &d);
        manager_enter(m, MANAGER_IDLE, "every NTS server refuses service", 0);
}

/* The server lists changed: forgets reasons that no longer hold. */
static void manager_nts_servers_changed(Manager *m) {
        /* New servers: an outage of the old ones says nothing of them. */
        m->nts_outage = false;
        if (!manager_nts_enabled(m)) {
                /* No NTS server left: the missing libssl no longer matters. */
                m->nts_unavailable = false;
                m->nts_status[0] = '\0';
        }
        if (m->nts_missing_reported && (m->servers[SERVER_NTS] || m->servers[SERVER_NTS_RUNTIME] ||
                                        !m->config.nts_required)) {
                /* NTS servers came, or NTSRequired= went: the reason no longer holds. */
                m->nts_missing_reported = false;
                m->nts_status[0] = '\0';
                (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
        }
}

/* A source reported an NTS event, or refused replies. */
static void manager_nts_changed(Manager *m, Source *s, SourceEvent e) {
        NTSDecision d = {};

        nts_source_event(s, e, (policy_running(&m->policy) == POLICY_SEVERAL), m->nts_status, &d);
        manager_nts_apply(m, &d);
}

/* The bootstrap policy for NTSClientSettings.bootstrap_allowed: what nts_bootstrap_decide()
 * reads, from the manager and the clock. */
static bool manager_nts_bootstrap_allowed(void *userdata, NTSClientBootstrap direction, char *why, size_t size,
                                          const char **ret_short) {
        Manager *m = userdata;
        ClockState st = {};
        struct timespec ts = {};
        NTSBootstrapInput in = {
                .several = (policy_running(&m->policy) == POLICY_SEVERAL),
                .clock_may_be_ahead = (policy_running(&m->policy) == POLICY_SEVERAL) && policy_clock_may_be_ahead(&m->policy),
                .enabled = m->config.nts_bootstrap,
                .synchronized = m->synchronized,
                .floor = &m->clock_floor,
        };

        assert(m);

        in.kernel_state_known = clock_backend_get_state(m->clock, &st) >= 0;
        in.kernel_synchronized = st.synchronized;
        in.clock_readable = clock_backend_now(m->clock, &ts) >= 0;
        in.realtime_nsec = (int64_t) ts.tv_sec * NTP_NSEC_PER_SEC + ts.tv_nsec;
        in.boottime_nsec = (int64_t) now(CLOCK_BOOTTIME) * 1000;
        return nts_bootstrap_decide(&in, direction, why, size, ret_short);
}

/* The set's selected source; without a set, that of the NTS server shown while libssl is
 * missing. */
Source *manager_current_source(Manager *m) {
        if (policy_running(&m->policy) != POLICY_STOPPED)
                return m->policy.selected;
        return m->current ? m->current->source : NULL;
}

ServerName *manager_server_of(Manager *m, const Source *s) {
        return server_lists_find_source(m->servers, s);
}

/* ---- the manager's state ---- */

/* Enters state and arms what it waits for: the retry timer for MANAGER_WAITING (allocated
 * once, so arming it allocates nothing) until the CLOCK_BOOTTIME time wait_until, or for
 * ConnectionRetrySec= from now when that is 0 or past; nothing otherwise: the network watch,
 * the sources of the set, or the configuration move on. A time a backing-off NTS client drew is
 * kept as it is: on a fixed period, clients that failed together (a pool outage at a mass boot)
 * would retry on the same ticks whatever they drew. */
static void manager_enter(Manager *m, ManagerState state, const char *idle_reason, usec_t wait_until) {
        usec_t t;
        int r;

        m->state = state;
        m->idle_reason = state == MANAGER_IDLE ? idle_reason : NULL;

        if (state != MANAGER_WAITING) {
                (void) sd_event_source_set_enabled(m->event_retry, SD_EVENT_OFF);
                return;
        }
        /* From the clock's now, not the loop's: a decision may come late in an iteration. */
        t = now(CLOCK_BOOTTIME);
        if (wait_until <= t)
                wait_until = usec_add(t, m->config.connection_retry_usec);
        r = sd_event_source_set_time(m->event_retry, wait_until);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->event_retry, SD_EVENT_ONESHOT);
        if (r < 0)
                log_error_errno(r, "Failed to arm the retry timer: %m");
}

static int manager_on_retry(sd_event_source *es, uint64_t usec, void *userdata) {
        manager_start_set(userdata);
        return 0;
}

/* ---- server selection ---- */

static void manager_on_source_event(Source *s, SourceEvent e, void *userdata);

/* The server shown without a set (NULL: none): the NTS server that would be used while libssl
 * is missing. */
static void manager_show(Manager *m, ServerName *n) {
        if (m->current == n)
                return;
        m->current = n;
        m->ntpmsg_authenticated = false;
        /* The NTS properties are read through the selected server: they changed with it. */
        (void) manager_bus_emit_changed(m, "ServerName", "ServerAddress", "NTSAuthenticated", "NTSKeyExchangeServer",
                                        "NTSAEAD", "NTSCookies", NULL);
}

/* ---- the sources in use: the set decides, the manager applies ---- */

static int manager_clock_follow(Manager *m, const ClockAdjustment *a, const char *server, bool authenticated,
                                const char *agreement);
static void manager_sources_poll_locked(Manager *m);
static void manager_record_message(Manager *m, const SourceSample *p);

/* What the set decided (timesyncd-policy.h), in its order: the selection and what the bus
 * shows of it, NTSStatus, STATUS=, the manager's state, the clock, then the signals. */
void manager_policy_apply(Manager *m, const PolicyDecision *d) {
        Policy *pol = &m->policy;

        if (d->stopped) {
                m->current = NULL;
                m->ntpmsg_authenticated = false;
        }
        if (d->select) {
                m->current = pol->selected ? manager_server_of(m, pol->selected) : NULL;
                m->ntpmsg_authenticated = false;
                /* While nothing is selected the clock is not steered: NTPMessage, from which
                 * timedatectl shows an offset, describes no server. */
                if (!pol->selected)
                        m->ntpmsg = (NTPMessage) {};
        }
        if (d->new_address && pol->selected) {
                m->ntpmsg_authenticated = false;
                m->poll_interval_usec = source_poll_interval(pol->selected);
        }
        if (d->record && pol->selected && source_sample(pol->selected)) {
                manager_record_message(m, source_sample(pol->selected));
                m->poll_interval_usec = source_poll_interval(pol->selected);
        }
        if (d->set_nts_status)
                snprintf(m->nts_status, sizeof m->nts_status, "%s", d->nts_status);
        if (d->notify)
                manager_notify_status(m, "%s", d->status);
        if (d->nts_answered)
                manager_nts_outage(m, false, source_name(d->nts_answered));
        else if (d->nts_none)
                manager_nts_outage(m, true, NULL);
        if (d->refused)
                manager_nts_enter_refused(m);
        if (d->polling)
                manager_enter(m, MANAGER_POLLING, NULL, 0);
        if (d->wait)
                manager_enter(m, MANAGER_WAITING, NULL, d->wait_until);
        if (d->idle)
                manager_enter(m, MANAGER_IDLE, d->idle, 0);
        if (d->steer) {
                PolicyDecision next = {};
                ClockAdjustment a = d->adjustment;
                int r;

                a.poll_log2 = manager_poll_log2(d->poll_interval_usec);
                r = manager_clock_follow(m, &a, d->server, d->steer_authenticated, d->agreement);
                manager_sources_poll_locked(m);
                policy_steered(pol, d, r, &next);
                manager_policy_apply(m, &next);
        }

        manager_bus_emit_properties(m, d->changed);
        if (d->sources_changed)
                manager_bus_sources_changed(m);
}

/* The poll intervals grow only as far as the clock's discipline is locked for. */
static void manager_sources_poll_locked(Manager *m) {
        policy_poll_interval_locked(&m->policy, clock_backend_poll_interval_max(m->clock));
}

static void manager_policy_start(Manager *m) {
        PolicyDecision d = {};

        policy_start(&m->policy, manager_nts_enabled(m), m->nts_fallback, m->backward_floor_nsec, &d);
        manager_policy_apply(m, &d);
}

static void manager_policy_stop(Manager *m) {
        PolicyDecision d = {};

        policy_stop(&m->policy, &d);
        manager_policy_apply(m, &d);
}

/* Nothing in use any more: every source of the set stops. */
static void manager_stop_sources(Manager *m) {
        manager_policy_stop(m);
        manager_show(m, NULL);
}

static int manager_source_of(Manager *m, ServerName *n) {
        return server_name_source(n, &m->source_settings, manager_on_source_event, m);
}

static void manager_on_pool_event(Pool *p, PoolEvent e, void *userdata) {
        Manager *m = userdata;

        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, m->servers[t])
                        if (n->pool == p) {
                                PolicyDecision d = {};

                                policy_on_pool_event(&m->policy, n, e, &d);
                                manager_policy_apply(m, &d);
                                return;
                        }
}

/* Nothing to start a set from: NTS only and no NTS server configured, or NTS servers and
 * libssl missing (the first is shown, nothing is sent, no plain NTP instead; logged once at
 * start). Returns false when a set can start. */
static bool manager_nothing_to_start(Manager *m) {
        bool nts = manager_nts_enabled(m), wrapped;
        ServerName *n;

        if (nts && !m->servers[SERVER_NTS] && !m->servers[SERVER_NTS_RUNTIME]) {
                manager_nts_missing(m);
                manager_enter(m, MANAGER_IDLE, "NTS servers only, and none is configured", 0);
                return true;
        }
        if (!nts || !m->nts_unavailable)
                return false;

        n = server_next(m->servers, NULL, true, &wrapped);
        manager_show(m, n);
        if (n)
                (void) manager_source_of(m, n);
        manager_notify_status(m, "Not synchronizing.");
        manager_enter(m, MANAGER_IDLE, m->nts_status, 0);
        return true;
}

/* Starts the set again from the first server. */
static void manager_start_set(Manager *m) {
        /* Offline (or not yet told): nothing to talk to. Going online selects again, see
         * manager_set_online(); so do servers set at runtime meanwhile. */
        if (!m->network_online) {
                log_debug("Network is not online, not connecting yet.");
                manager_stop_sources(m);
                manager_enter(m, MANAGER_OFFLINE, NULL, 0);
                return;
        }

        manager_policy_stop(m);
        if (manager_nothing_to_start(m))
                return;
        manager_show(m, NULL);
        manager_policy_start(m);
}

/* Selection starts again from the first server, e.g. after a list changed. */
static void manager_select_again(Manager *m) {
        manager_stop_sources(m);
        manager_start_set(m);
}

static void manager_flush_servers(Manager *m, ServerType t) {
        /* The set uses a server of the list: it is made again afterwards. */
        if (policy_uses_list(&m->policy, t))
                manager_policy_stop(m);
        if (m->current && m->current->type == t)
                manager_show(m, NULL);
        server_list_flush(&m->servers[t]);
}

/* Appends names to the list of type; one that is invalid is skipped, said at level. */
static int manager_add_servers(Manager *m, ServerType type, char **names, int level) {
        int r;

        STRV_FOREACH(s, names) {
                r = server_name_new(&m->servers[type], type, *s, NULL);
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0)
                        log_full_errno(level, r, "Ignoring invalid server name '%s': %m", *s);
        }
        return 0;
}

/* FallbackNTS= stands in for NTS= where stock would use FallbackNTP=: no NTS= (not even an
 * invalid one), no runtime NTS servers, no NTP=, no per-link or runtime NTP servers, and not
 * under NTSRequired=yes (which wants the servers of NTS=). The names go into the NTS list, so
 * that one or several of them are used as NTS= servers would be. Returns whether that list
 * changed. */
static bool manager_update_fallback_nts(Manager *m) {
        bool want = timesync_config_uses_fallback_nts(&m->config) && !m->servers[SERVER_NTS_RUNTIME] &&
                    !m->servers[SERVER_LINK] && !m->servers[SERVER_RUNTIME];

        if (want == m->nts_fallback)
                return false;

        /* Without NTS= the list holds nothing else. */
        manager_flush_servers(m, SERVER_NTS);
        m->nts_fallback = want;
        if (!want)
                return true;

        if (manager_add_servers(m, SERVER_NTS, m->config.fallback_nts_servers, LOG_WARNING) < 0)
                return true;
        log_info("No NTS=, NTP= or network servers: using the %zu NTS servers of FallbackNTS=, "
                 "never FallbackNTP=.", strv_length(m->config.fallback_nts_servers));
        return true;
}

/* A server list was replaced: selection starts again from the first server. With nts_added,
 * NTS servers may have come (libssl is loaded, or its absence logged once, now). */
static void manager_servers_changed(Manager *m, bool nts_added) {
        manager_nts_servers_changed(m);
        if (nts_added && !m->nts_unavailable)
                (void) manager_nts_prepare(m);
        manager_select_again(m);
}

int manager_set_runtime_servers(Manager *m, ServerType type, char **names) {
        int r;

        assert(IN_SET(type, SERVER_RUNTIME, SERVER_NTS_RUNTIME));

        manager_flush_servers(m, type);
        r = manager_add_servers(m, type, names, LOG_WARNING);
        if (r < 0)
                return r;

        manager_servers_changed(m, manager_update_fallback_nts(m) || type == SERVER_NTS_RUNTIME);
        return 0;
}

static bool link_servers_equal(Manager *m, char **names) {
        size_t i = 0;

        LIST_FOREACH(names, n, m->servers[SERVER_LINK]) {
                if (!names || !names[i] || !streq(n->string, names[i]))
                        return false;
                i++;
        }
        return !names || !names[i];
}

/* Replaces the per-link servers; selects again if the selected one was among them. */
static int manager_set_link_servers(Manager *m, char **names) {
        int r;

        if (link_servers_equal(m, names))
                return 0;

        /* networkd's servers are not ours to judge loudly. */
        manager_flush_servers(m, SERVER_LINK);
        r = manager_add_servers(m, SERVER_LINK, names, LOG_DEBUG);
        if (r < 0)
                return r;
        if (manager_update_fallback_nts(m)) {
                /* Selection follows from manager_set_online(). */
                manager_nts_servers_changed(m);
                if (m->nts_fallback && !m->nts_unavailable)
                        (void) manager_nts_prepare(m);
        }
        (void) manager_bus_emit_changed(m, "LinkNTPServers", NULL);
        return 1;
}

/* The network went down or came up. */
static void manager_set_online(Manager *m, bool online) {
        if (!online) {
                if (policy_running(&m->policy) != POLICY_STOPPED)
                        log_info("Network is offline, suspending synchronization.");
                m->network_online = false;
                manager_stop_sources(m);
                manager_enter(m, MANAGER_OFFLINE, NULL, 0);
                return;
        }

        m->network_online = true;
        /* A retry pending keeps its time; a server in use stays, and so do several. */
        if (policy_running(&m->policy) == POLICY_STOPPED && m->state != MANAGER_WAITING)
                manager_start_set(m);
}

/* The network watch's report (timesyncd-network.h). */
static int manager_on_network_event(NetworkWatch *w, NetworkEvent event, char **servers, void *userdata) {
        Manager *m = userdata;

        switch (event) {
        case NETWORK_EVENT_OFFLINE:
                manager_set_online(m, false);
                return 0;
        case NETWORK_EVENT_LINK_SERVERS:
                return manager_set_link_servers(m, servers);
        case NETWORK_EVENT_ONLINE:
                manager_set_online(m, true);
                return 0;
        }
        assert_not_reached();
}

/* ---- what a sample does ---- */

static void manager_write_sync_flag(Manager *m) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;

        /* systemd-time-wait-sync trusts this flag to mean "the clock is right": in observe
         * mode we did not make it so. */
        if (m->sync_flag_written || !m->runtime_dir || m->observe)
                return;

        if (asprintf(&p, "%s/synchronized", m->runtime_dir) < 0) {
                log_oom();
                return;
        }
        fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0) {
                log_warning_errno(errno, "Failed to touch %s, ignoring: %m", p);
                return;
        }
        m->sync_flag_written = true;
}

void manager_save_clock(Manager *m) {
        _cleanup_free_ char *p = NULL;
        struct timespec ts;
        int r;

        if (!m->state_dir)
                return;
        if (asprintf(&p, "%s/clock", m->state_dir) < 0) {
                log_oom();
                return;
        }
        if (clock_backend_now(m->clock, &ts) < 0)
                return;
        r = clock_file_save(p, &ts);
        if (r < 0)
                log_debug_errno(r, "Failed to save clock file %s: %m", p);
}

/* The frequency file in the state directory; NULL without one (or out of memory). */
static char *manager_frequency_path(Manager *m) {
        char *p;

        if (!m->state_dir || asprintf(&p, "%s/frequency", m->state_dir) < 0)
                return NULL;
        return p;
}

void manager_save_frequency(Manager *m) {
        _cleanup_free_ char *p = NULL;
        double ppm;
        int r;

        if (!clock_backend_frequency_learned(m->clock, &ppm))
                return;
        p = manager_frequency_path(m);
        if (!p)
                return;
        r = freq_file_save(p, ppm);
        if (r < 0)
                log_debug_errno(r, "Failed to save frequency file %s: %m", p);
        m->frequency_saved_usec = now(CLOCK_MONOTONIC);
}

/* A write to the state directory at most once an hour, never per poll. */
static void manager_save_frequency_hourly(Manager *m) {
        if (m->frequency_saved_usec > 0 && now(CLOCK_MONOTONIC) < m->frequency_saved_usec + USEC_PER_HOUR)
                return;
        manager_save_frequency(m);
}

/* The frequency an earlier boot learned, for the discipline to start from. */
static void manager_load_frequency(Manager *m) {
        _cleanup_free_ char *p = manager_frequency_path(m);
        double ppm;

        if (p && freq_file_load(p, &ppm) > 0)
                clock_backend_seed_frequency(m->clock, ppm);
}

/* After a step of the clock, ours or another program's. */
static void manager_pools_clock_changed(Manager *m) {
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, m->servers[t])
                        if (n->pool)
                                pool_clock_changed(n->pool);
}

static int manager_clock_follow(Manager *m, const ClockAdjustment *a, const char *server, bool authenticated,
                                const char *agreement) {
        ClockState st;
        int r;

        r = clock_backend_adjust(m->clock, a, &st);
        if (r < 0)
                return log_error_errno(r, "Failed to adjust the system clock: %m");
        if (r > 0) {
                m->frequency = st.frequency;
                m->frequency_known = true;
                manager_save_frequency_hourly(m);
        }

        /* Our own step fires the clock-change watch; set it up anew so it does not read as a
         * foreign jump. */
        if (a->step)
                (void) manager_clock_watch_setup(m);
        /* A clock that really moved (not in observe mode): SRV pools that failed may work now. */
        if (a->step && r > 0)
                manager_pools_clock_changed(m);

        /* Once synchronized, a step is rare and is what an attacker wants: a warning with its
         * size and who agreed to it (chrony warns about it too). */
        if (a->step && m->synchronized) {
                /* In observe mode one warning per state, not per poll: the same step again (within
                 * the step threshold of the one warned about) is logged at debug level. */
                bool again = r == 0 && m->observe_step_warned &&
                             llabs(a->offset_nsec - m->observe_step_nsec) < NTP_STEP_THRESHOLD_NSEC;
                char offset[32];

                m->observe_step_warned = r == 0;
                m->observe_step_nsec = a->offset_nsec;
                (void) snprintf(offset, sizeof offset, "%+.6f", (double) a->offset_nsec / NTP_NSEC_PER_SEC);
                log_struct(again ? LOG_DEBUG : LOG_WARNING, TIMESYNC_MESSAGE_CLOCK_STEPPED,
                           ((const char *const[]) { "OFFSET_SEC", offset, "NTP_SERVER", server, NULL }),
                           "%s the clock by %s s after the first synchronization, following %s%s%s%s.",
                           r > 0 ? "Stepped" : "Observe mode: would have stepped", offset, server,
                           authenticated ? ", NTS authenticated" : ", NOT authenticated", strempty(agreement),
                           clock_backend_type(m->clock) == CLOCK_BACKEND_FAKE ? " (the test clock)" : "");
        } else
                m->observe_step_warned = false;

        if (!m->synchronized) {
                m->synchronized = true;
                m->source_settings.synchronized = true;
                log_struct(LOG_INFO, TIMESYNC_MESSAGE_TIME_SYNC,
                           ((const char *const[]) { "NTP_SERVER", server, "NTS_AUTHENTICATED",
                                                    authenticated ? "yes" : "no", NULL }),
                           "Initial clock synchronization to %s (offset %+.6f s%s%s%s).", server,
                         (double) a->offset_nsec / NTP_NSEC_PER_SEC,
                         authenticated ? ", NTS authenticated" : ", plain NTP, not authenticated",
                         strempty(agreement),
                         clock_backend_type(m->clock) == CLOCK_BACKEND_FAKE ? ", observe mode: test clock adjusted" :
                         m->observe ? ", observe mode: clock left alone" : "");
                /* From now on the SaveIntervalSec= timer and the stop keep it current: a write to
                 * the state directory per poll would add nothing the floor needs (stock touches
                 * it at every sample as well as by the timer). */
                manager_save_clock(m);
        }
        manager_write_sync_flag(m);
        return r;
}

static void manager_record_message(Manager *m, const SourceSample *p) {
        m->ntpmsg = (NTPMessage) {
                .header = p->header,
                .origin_nsec = p->origin_nsec,
                .receive_nsec = p->receive_nsec,
                .transmit_nsec = p->transmit_nsec,
                .destination_nsec = p->destination_nsec,
                .spike = p->spike,
                .packet_count = p->packet_count,
                .jitter_nsec = (int64_t) p->jitter_nsec,
        };
        m->ntpmsg_authenticated = p->authenticated;
}

/* ---- what sources report ---- */

static void manager_on_source_event(Source *s, SourceEvent e, void *userdata) {
        Manager *m = userdata;
        PolicyDecision d = {};

        policy_on_event(&m->policy, s, e, &d);
        if (d.nts_event)
                manager_nts_changed(m, s, e);
        manager_policy_apply(m, &d);
}

/* ---- clock changes made by others ---- */

static int manager_clock_changed(Manager *m) {
        PolicyDecision d = {};

        log_info("System clock changed, resynchronizing.");
        (void) manager_clock_watch_setup(m);

        /* Samples from before the jump are meaningless. */
        if (policy_running(&m->policy) != POLICY_STOPPED) {
                policy_clock_changed(&m->policy, &d);
                manager_policy_apply(m, &d);
        }
        manager_pools_clock_changed(m);
        return 0;
}

static int manager_on_clock_change(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        return manager_clock_changed(userdata);
}

/* --test-clock-offset=: SIGUSR1 plays another program that sets the clock. The fake clock
 * cannot fire the timerfd, so the jump takes the path the timerfd would. */
static int manager_on_test_clock_jump(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        clock_backend_fake_jump(m->clock, m->test_clock_offset_nsec);
        log_info("Test clock: jumped by %+.6f s, now %+.6f s from the system clock.",
                 (double) m->test_clock_offset_nsec / NTP_NSEC_PER_SEC,
                 (double) clock_backend_fake_offset(m->clock) / NTP_NSEC_PER_SEC);
        return manager_clock_changed(m);
}

/* A timerfd that fires on any CLOCK_REALTIME change (TFD_TIMER_CANCEL_ON_SET). */
static int manager_clock_watch_setup(Manager *m) {
        int r;

        m->event_clock_watch = sd_event_source_disable_unref(m->event_clock_watch);
        m->clock_watch_fd = safe_close(m->clock_watch_fd);

        m->clock_watch_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
        if (m->clock_watch_fd < 0)
                return log_error_errno(errno, "Failed to create clock watch: %m");

        r = timerfd_arm_clock_change(m->clock_watch_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to arm clock watch: %m");

        r = sd_event_add_io(m->event, &m->event_clock_watch, m->clock_watch_fd, EPOLLIN,
                            manager_on_clock_change, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for clock changes: %m");
        return 0;
}

static int manager_on_save_clock(sd_event_source *es, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        if (m->synchronized)
                manager_save_clock(m);
        r = sd_event_source_set_time_relative(es, m->config.save_interval_usec);
        if (r < 0)
                return log_error_errno(r, "Failed to rearm clock file timer: %m");
        return sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
}

/* ---- the safety net ---- */

/* Every state has its way forward armed by construction (manager_enter(), and the source's
 * own state): this check only says so at debug level, and would start over if a bug broke
 * that. It also retries a lost bus whose reconnection could not be armed. */
static bool manager_stalled(Manager *m) {
        switch (m->state) {
        case MANAGER_POLLING:
                return policy_running(&m->policy) == POLICY_STOPPED || policy_stalled(&m->policy);
        case MANAGER_WAITING:
                return sd_event_source_get_enabled(m->event_retry, NULL) <= 0;
        default:
                return false;
        }
}

static int manager_on_stall_check(sd_event_source *es, uint64_t usec, void *userdata) {
        static const char *const names[_MANAGER_STATE_MAX] = {
                [MANAGER_OFFLINE] = "offline",
                [MANAGER_POLLING] = "polling",
                [MANAGER_WAITING] = "waiting to retry",
                [MANAGER_IDLE] = "idle",
        };
        Manager *m = userdata;
        int r;

        if (m->idle_reason)
                log_debug("Stall check: nothing in progress, as intended (%s).", m->idle_reason);
        else if (manager_stalled(m)) {
                log_error("Nothing in progress while %s%s%s (a bug), starting over.", names[m->state],
                          m->current ? " with " : "", m->current ? m->current->string : "");
                manager_select_again(m);
        }
        manager_bus_check(m);

        r = sd_event_source_set_time_relative(es, m->config.connection_retry_usec);
        if (r < 0)
                return log_error_errno(r, "Failed to rearm the stall check: %m");
        return sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
}

/* ---- configuration ---- */

/* The settings every source and NTS client reads at each use. */
static void manager_apply_config(Manager *m) {
        m->source_settings = (SourceSettings) {
                .event = m->event,
                .clock = m->clock,
                .poll_interval_min_usec = m->config.poll_interval_min_usec,
                .poll_interval_max_usec = m->config.poll_interval_max_usec,
                .root_distance_max_usec = m->config.root_distance_max_usec,
                .retry_usec = m->config.connection_retry_usec,
                .precise_timers = m->test_poll_interval_usec > 0,
                .synchronized = m->synchronized,
                .nts = &m->nts_settings,
        };
        m->pool_settings = (PoolSettings) {
                .source = &m->source_settings,
                .bus = manager_bus_connection(m->bus),
        };
        m->nts_settings = (NTSClientSettings) {
                .event = m->event,
                .clock = m->clock,
                .state_dir = m->nts_state_dir,
                .trusted_certificates = m->config.nts_trusted_certificates,
                .trusted_certificates_invalid = m->config.nts_trusted_certificates_invalid,
                .ke_timeout_usec = m->config.nts_ke_timeout_usec,
                .retry_usec = m->config.connection_retry_usec,
                .bootstrap_allowed = manager_nts_bootstrap_allowed,
                .bootstrap_userdata = m,
        };
}

static int manager_add_config_servers(Manager *m) {
        int r;

        manager_flush_servers(m, SERVER_SYSTEM);
        manager_flush_servers(m, SERVER_FALLBACK);
        manager_flush_servers(m, SERVER_NTS);
        m->nts_fallback = false;

        r = manager_add_servers(m, SERVER_SYSTEM, m->config.ntp_servers, LOG_WARNING);
        if (r < 0)
                return r;
        r = manager_add_servers(m, SERVER_NTS, m->config.nts_servers, LOG_WARNING);
        if (r < 0)
                return r;
        if (m->config.nts_set && !m->servers[SERVER_NTS])
                log_error("NTS= names no valid server. There is no fallback to unauthenticated NTP: time "
                          "comes only from NTS servers set at runtime, if any.");
        r = manager_add_servers(m, SERVER_FALLBACK, m->config.fallback_servers, LOG_WARNING);
        if (r < 0)
                return r;
        (void) manager_update_fallback_nts(m);
        return 0;
}

int manager_load_config(Manager *m) {
        int r;

        timesync_config_done(&m->config);
        r = timesync_config_read(&m->config, m->config_file, m->test_poll_interval_usec);
        if (r == -ENOENT && m->config_file)
                return r; /* The reader said so. */

        manager_apply_config(m);
        return manager_add_config_servers(m);
}

/* Calls f for every source: of every server of every list, and of their pools. Returns how
 * often f returned true. */
static unsigned manager_foreach_source(Manager *m, bool (*f)(Source *s)) {
        unsigned n = 0;

        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, name, m->servers[t]) {
                        if (name->source && f(name->source))
                                n++;
                        for (size_t i = 0; name->pool && i < pool_n_sources(name->pool); i++)
                                if (f(pool_source(name->pool, i)))
                                        n++;
                }
        return n;
}

static bool source_binding_stale(Source *s) {
        return source_nts(s) && !nts_client_binding_current(source_nts(s));
}

unsigned manager_retry_now(Manager *m) {
        unsigned n;
        int r;

        assert(m);

        n = manager_foreach_source(m, source_retry_now);
        /* Every server failed: selection starts over now instead of after ConnectionRetrySec=. */
        if (m->state == MANAGER_WAITING) {
                r = sd_event_source_set_time(m->event_retry, now(CLOCK_BOOTTIME));
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->event_retry, SD_EVENT_ONESHOT);
                if (r < 0)
                        log_debug_errno(r, "Failed to rearm the retry timer, the stall check retries: %m");
        }
        return n;
}

/* Makes the servers of list t again, from their names: their sources and NTS clients start
 * over. The clients save their keys on the way out, and the new ones check them on loading. */
static int manager_renew_servers(Manager *m, ServerType t) {
        _cleanup_(strv_freep) char **names = NULL;

        LIST_FOREACH(names, n, m->servers[t])
                if (strv_extend(&names, n->string) < 0)
                        return log_oom();
        manager_flush_servers(m, t);
        return manager_add_servers(m, t, names, LOG_WARNING);
}

/* Takes c as the configuration in use; returns whether it names other servers. */
static bool manager_take_config(Manager *m, TimesyncConfig *c) {
        bool changed = !timesync_config_servers_equal(&m->config, c);
        Source *s = manager_current_source(m);

        timesync_config_done(&m->config);
        m->config = *c;
        *c = (TimesyncConfig) {};
        manager_apply_config(m);

        /* A poll interval that changed applies from now, not after a wait under the old one. */
        if (policy_running(&m->policy) != POLICY_STOPPED)
                policy_poll_limits_changed(&m->policy);
        if (s)
                m->poll_interval_usec = source_poll_interval(s);
        return changed;
}

/* Takes the configuration c that a reload read, and what it changes: the servers selected
 * again when it names others, or when NTS keys in use were got under a trust that no longer
 * holds (NTSTrustedCertificates=, the file it names or the system's store changed); otherwise
 * the sources that fail are retried at once, since a reload is what follows a fix. */
static int manager_reload_take(Manager *m, TimesyncConfig *c) {
        bool changed, rebind;
        int r = 0;

        changed = manager_take_config(m, c);
        rebind = manager_foreach_source(m, source_binding_stale) > 0;
        if (!changed && !rebind) {
                /* Same servers: those in use keep their keys and cookies. */
                unsigned n = manager_retry_now(m);

                if (n > 0)
                        log_info("Configuration reloaded, servers unchanged: retrying %u failing source%s now.", n,
                                 n == 1 ? "" : "s");
                else
                        log_info("Configuration reloaded, servers unchanged.");
                return 0;
        }

        if (changed)
                log_info("Configuration reloaded, servers changed: selecting a server again%s.",
                         rebind ? "; NTS keys obtained under the old trusted certificates are dropped" : "");
        else
                log_info("Configuration reloaded, the trusted certificates changed: NTS keys obtained under the "
                         "old ones are dropped, selecting servers again after new key exchanges.");
        if (rebind)
                r = manager_renew_servers(m, SERVER_NTS_RUNTIME);
        if (r >= 0)
                r = manager_add_config_servers(m);
        if (r >= 0)
                manager_servers_changed(m, manager_nts_enabled(m));
        (void) manager_bus_emit_changed(m, "NTS", "NTSKeyExchangeServers", NULL);
        return r;
}

int manager_reload_config(Manager *m) {
        _cleanup_(timesync_config_done) TimesyncConfig c = {};
        int r;

        assert(m);

        /* No STATUS= here: it would stay after READY=1, until the next poll says something. */
        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=" USEC_FMT, now(CLOCK_MONOTONIC));

        /* Half a configuration is fine at start, where there is nothing better; here the one in
         * use is better than a file that could not be read (it might drop the NTS servers). */
        r = timesync_config_read(&c, m->config_file, m->test_poll_interval_usec);
        if (r < 0) {
                log_warning_errno(r, "Failed to read the configuration again, keeping the one in use: %m");
                /* Whatever was fixed outside the configuration (a firewall, a certificate) is
                 * worth trying now. */
                (void) manager_retry_now(m);
        } else
                r = manager_reload_take(m, &c);

        (void) sd_notify(false, "READY=1");
        return r;
}

static int manager_on_reload_signal(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        (void) manager_reload_config(userdata);
        return 0;
}

/* ---- life cycle ---- */

static int manager_add_signals(Manager *m, bool test_fake_clock) {
        int r;

        (void) sd_event_add_signal(m->event, NULL, SIGTERM | SD_EVENT_SIGNAL_PROCMASK, NULL, NULL);
        (void) sd_event_add_signal(m->event, NULL, SIGINT | SD_EVENT_SIGNAL_PROCMASK, NULL, NULL);
        r = sd_event_add_signal(m->event, NULL, SIGHUP | SD_EVENT_SIGNAL_PROCMASK, manager_on_reload_signal, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch SIGHUP: %m");
        if (test_fake_clock) {
                r = sd_event_add_signal(m->event, NULL, SIGUSR1 | SD_EVENT_SIGNAL_PROCMASK,
                                        manager_on_test_clock_jump, m);
                if (r < 0)
                        return log_error_errno(r, "Failed to watch SIGUSR1: %m");
        }
        return 0;
}

int manager_new(Manager **ret, const ManagerOptions *o) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        assert(ret);
        assert(o);

        m = new0(Manager, 1);
        if (!m)
                return log_oom();

        m->clock_watch_fd = -EBADF;
        m->observe = o->observe;
        m->test_poll_interval_usec = o->test_poll_interval_usec;

        r = manager_bus_new(&m->bus);
        if (r < 0)
                return log_oom();

        if ((o->config_file && !(m->config_file = strdup(o->config_file))) ||
            (o->state_dir && !(m->state_dir = strdup(o->state_dir))) ||
            (o->nts_state_dir && !(m->nts_state_dir = strdup(o->nts_state_dir))) ||
            (o->runtime_dir && !(m->runtime_dir = strdup(o->runtime_dir))))
                return log_oom();

        /* A fake clock only where the real one is never touched. */
        assert(!o->test_fake_clock || o->observe);
        r = clock_backend_new(o->test_fake_clock ? CLOCK_BACKEND_FAKE :
                              o->observe ? CLOCK_BACKEND_OBSERVE : CLOCK_BACKEND_KERNEL, &m->clock);
        if (r < 0)
                return log_oom();
        if (o->test_fake_clock) {
                clock_backend_fake_follow(m->clock, o->test_clock_offset_nsec);
                m->test_clock_offset_nsec = o->test_clock_offset_nsec;
        }

        /* A loop of its own, not sd_event_default(): libsystemd checks that the default loop
         * runs in its thread with a gettid() system call on every iteration, two per poll. */
        r = sd_event_new(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate event loop: %m");

        r = manager_add_signals(m, o->test_fake_clock);
        if (r < 0)
                return r;

        policy_init(&m->policy, &(PolicyContext) {
                .sources = &policy_source_ops,
                .lists = &policy_list_ops,
                .config = &m->config,
                .clock = m->clock,
                .servers = m->servers,
                .nts_status = m->nts_status,
                .source_settings = &m->source_settings,
                .pool_settings = &m->pool_settings,
                .source_handler = manager_on_source_event,
                .pool_handler = manager_on_pool_event,
                .userdata = m,
        });

        r = sd_event_add_time_relative(m->event, &m->event_retry, CLOCK_BOOTTIME, 0, 0, manager_on_retry, m);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the retry timer: %m");
        manager_enter(m, MANAGER_OFFLINE, NULL, 0);

        /* Pings the service manager when WATCHDOG_USEC is set. */
        (void) sd_event_set_watchdog(m->event, true);

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;

        manager_stop_sources(m);
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                server_list_flush(&m->servers[t]);

        m->event_retry = sd_event_source_disable_unref(m->event_retry);
        m->event_clock_watch = sd_event_source_disable_unref(m->event_clock_watch);
        m->event_save_clock = sd_event_source_disable_unref(m->event_save_clock);
        m->event_stall_check = sd_event_source_disable_unref(m->event_stall_check);
        m->network = network_watch_free(m->network);
        safe_close(m->clock_watch_fd);

        m->bus = manager_bus_free(m->bus);
        sd_event_unref(m->event);
        clock_backend_free(m->clock);
        timesync_config_done(&m->config);

        free(m->config_file);
        free(m->state_dir);
        free(m->nts_state_dir);
        free(m->runtime_dir);
        return mfree(m);
}

sd_event *manager_event(Manager *m) {
        assert(m);
        return m->event;
}

bool manager_synchronized(Manager *m) {
        assert(m);
        return m->synchronized;
}

int manager_start(Manager *m) {
        _cleanup_free_ char *clock_file = NULL;
        ClockFloor floor;
        int r;

        if (m->state_dir) {
                if (asprintf(&clock_file, "%s/clock", m->state_dir) < 0)
                        return log_oom();
                r = clock_file_restore(m->clock, clock_file, TIME_EPOCH, NULL);
        } else
                r = 0;

        /* Read once, before the first sync moves the clock file: the NTS bootstrap's evidence
         * that the clock is behind is about where the clock stood when the machine booted. */
        clock_floor_read(&m->clock_floor, clock_file, TIME_EPOCH, CLOCK_EPOCH_FILE);
        m->clock_floor.advanced = r > 0;
        manager_load_frequency(m);
        /* A backward bootstrap (several sources) may not go before what is known to have passed
         * whatever the clock said: this build, the epoch file. Not the clock file: a clock that
         * ran ahead wrote it. */
        clock_floor_read(&floor, NULL, TIME_EPOCH, CLOCK_EPOCH_FILE);
        m->backward_floor_nsec = floor.nsec;

        r = manager_clock_watch_setup(m);
        if (r < 0)
                return r;

        /* Without libssl, NTS servers stay configured and unused: an error, never plain NTP. */
        (void) manager_nts_prepare(m);

        r = sd_event_add_time_relative(m->event, &m->event_stall_check, CLOCK_BOOTTIME,
                                       m->config.connection_retry_usec, USEC_PER_SEC, manager_on_stall_check, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm stall check timer: %m");

        r = sd_event_add_time_relative(m->event, &m->event_save_clock, CLOCK_BOOTTIME,
                                       m->config.save_interval_usec, 10 * USEC_PER_SEC,
                                       manager_on_save_clock, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm clock file timer: %m");

        /* Connects once the network is up (at once without networkd). */
        r = network_watch_new(m->event, NETIF_STATE_DIR, manager_on_network_event, m, &m->network);
        if (r < 0)
                return r;
        return network_watch_update(m->network);
}
