/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>

#include "log.h"
#include "ssl-util.h"
#include "time-util.h"
#include "timesyncd-bus.h"
#include "timesyncd-manager.h"
#include "timesyncd-nts.h"
#include "timesyncd-messages.h"
#include "timesyncd-several.h"

bool manager_nts_enabled(Manager *m) {
        return m->servers[SERVER_NTS] || m->servers[SERVER_NTS_RUNTIME] || m->config.nts_set ||
               m->config.nts_required;
}

static bool manager_nts_servers_named(Manager *m) {
        return m->servers[SERVER_NTS] || m->servers[SERVER_NTS_RUNTIME] || m->config.nts_set;
}

int manager_nts_prepare(Manager *m) {
        int r;

        /* NTSRequired= and no server yet: nothing to load until one is set at runtime. */
        if (!manager_nts_servers_named(m))
                return 0;

        if (m->nts_fallback)
                log_info("FallbackNTS= servers are in use: time comes only from them, FallbackNTP= is not "
                         "used; servers from the network or NTP= would come first.");
        else
                log_info("NTS servers are configured: time comes only from them; NTP=, FallbackNTP= and "
                         "per-link servers are not used.");

        r = nts_client_load_libraries();
        if (!HAVE_NTS) {
                m->nts_unavailable = true;
                snprintf(m->nts_status, sizeof m->nts_status, "NTS unavailable: built without NTS support");
                return log_error_errno(r, "NTS servers are configured but this build has no NTS support: "
                                       "the clock is not synchronized (no fallback to unauthenticated NTP).");
        }
        if (r < 0) {
                m->nts_unavailable = true;
                snprintf(m->nts_status, sizeof m->nts_status,
                         "NTS unavailable: %s could not be loaded", LIBSSL_SONAME);
                return log_error_errno(r, "NTS servers are configured but %s or %s is missing: the clock "
                                       "is not synchronized (no fallback to unauthenticated NTP).",
                                       LIBSSL_SONAME, LIBCRYPTO_SONAME);
        }
        return 0;
}

/* NTS= named only invalid servers (logged with the configuration), or NTSRequired=yes and none
 * was given. Nothing to retry, and no plain NTP either, until NTS servers come. */
void manager_nts_missing(Manager *m) {
        if (m->config.nts_set) {
                snprintf(m->nts_status, sizeof m->nts_status, "NTS= names no valid server");
                (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
                manager_notify_status(m, "No valid NTS server configured.");
                return;
        }

        /* Said once each time the daemon gets here, not at every selection. */
        if (m->nts_missing_reported)
                return;
        m->nts_missing_reported = true;
        if (m->config.nts_unknown_key) {
                snprintf(m->nts_status, sizeof m->nts_status, "Unknown key %s: no NTS server",
                         m->config.nts_unknown_key);
                log_struct(LOG_ERR, TIMESYNC_MESSAGE_NO_NTS_SERVER,
                           ((const char *const[]) { "NTS_STATUS", m->nts_status, NULL }),
                           "Unknown key %s in the configuration: the clock is not synchronized. Plain NTP "
                           "servers are not used, as with NTSRequired=yes; correct the key.",
                           m->config.nts_unknown_key);
                (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
                /* With NTSStatus in it, which STATUS= would otherwise repeat after it. */
                manager_notify_status(m, "%s, not synchronizing.", m->nts_status);
                return;
        }
        snprintf(m->nts_status, sizeof m->nts_status, "NTSRequired=yes but no NTS server is configured");
        log_struct(LOG_ERR, TIMESYNC_MESSAGE_NO_NTS_SERVER, ((const char *const[]) { "NTS_STATUS", m->nts_status, NULL }),
                   "NTSRequired=yes but no NTS server is configured: the clock is not synchronized. "
                   "NTP=, FallbackNTP=, per-link and runtime NTP servers are not used; set NTS= "
                   "(or SecureServers=), or runtime NTS servers.");
        (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
        manager_notify_status(m, "NTSRequired=yes but no NTS server is configured.");
}

bool manager_nts_all_refuse(Manager *m) {
        bool any = false;

        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++) {
                if (!server_type_is_nts(t))
                        continue;
                LIST_FOREACH(names, n, m->servers[t]) {
                        if (!n->source || source_state(n->source) != SOURCE_FAILED)
                                return false;
                        any = true;
                }
        }
        return any;
}

void manager_nts_enter_refused(Manager *m) {
        static const char text[] = "Every NTS server refuses service (kiss code DENY or RSTR)";

        log_struct(LOG_WARNING, TIMESYNC_MESSAGE_NO_NTS_SERVER, ((const char *const[]) { "NTS_STATUS", text, NULL }),
                   "%s: none is asked again until the NTS servers change (reload, runtime servers, restart); "
                   "there is no fallback to unauthenticated NTP.", text);
        if (!streq(m->nts_status, text)) {
                snprintf(m->nts_status, sizeof m->nts_status, "%s", text);
                (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
        }
        manager_notify_status(m, "%s.", text);
        manager_enter(m, MANAGER_IDLE, "every NTS server refuses service");
}

void manager_nts_servers_changed(Manager *m) {
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

/* The bootstrap policy (see "Bootstrap" in timesyncd-nts-client.c and docs/NTS.md): only while
 * NTSBootstrap= is on, we have not synchronized since start, the kernel does not consider the
 * clock synchronized either, and the clock still reads as its floor put it at boot
 * (clock_floor_verdict()): "unsynchronized" alone is true at every boot, also of a correct
 * clock, and a certificate valid from the future (issued ahead of a rotation, a private CA)
 * would then let its server move a correct clock anywhere into its validity period. */
bool manager_nts_bootstrap_allowed(void *userdata, NTSClientBootstrap direction, char *why, size_t size,
                                   const char **ret_short) {
        Manager *m = userdata;
        const char *reason = NULL;
        ClockState st = {};
        ClockFloorVerdict v;
        struct timespec ts;
        int64_t realtime, boottime;
        char found[200];

        assert(m);

        /* An expired certificate is what an attacker holding an old key would show a correct
         * clock: with one source there is nobody to agree or disagree, so the question does
         * not arise (and nothing is said). With several, their agreement decides (see
         * timesyncd-source-set.c, bootstrap_refusal()), but only while the clock may be ahead:
         * while another source answers with keys whose certificate our clock found valid, an
         * expired certificate is just expired, and its failure says so, with its date. */
        if (direction == NTS_CLIENT_BOOTSTRAP_BACKWARD && (!m->several || !manager_several_clock_may_be_ahead(m))) {
                *ret_short = NULL;
                return false;
        }

        if (!m->config.nts_bootstrap)
                reason = "NTSBootstrap=no";
        else if (m->synchronized)
                reason = "the clock was synchronized since the daemon started";
        else if (clock_backend_get_state(m->clock, &st) < 0 || st.synchronized)
                reason = "the kernel does not report the clock unsynchronized";
        else if (clock_backend_now(m->clock, &ts) < 0)
                reason = "the clock cannot be read";
        if (reason) {
                snprintf(why, size, "%s", reason);
                *ret_short = reason;
                return false;
        }

        /* Nothing here can say that a clock is ahead: the agreement of the sources is the
         * evidence, and it is asked for before their time moves the clock. */
        if (direction == NTS_CLIENT_BOOTSTRAP_BACKWARD) {
                snprintf(why, size, "the agreement of several NTS sources decides");
                return true;
        }

        realtime = (int64_t) ts.tv_sec * NTP_NSEC_PER_SEC + ts.tv_nsec;
        boottime = (int64_t) now(CLOCK_BOOTTIME) * 1000;
        v = clock_floor_verdict(&m->clock_floor, realtime, boottime);
        if (clock_floor_is_evidence(v)) {
                clock_floor_describe(&m->clock_floor, v, realtime, boottime, why, size);
                return true;
        }

        clock_floor_describe(&m->clock_floor, v, realtime, boottime, found, sizeof found);
        snprintf(why, size, "nothing says that the clock is behind: %s", found);
        *ret_short = "the clock is not known to be behind";
        return false;
}

static void manager_nts_emit_changed(Manager *m) {
        (void) manager_bus_emit_changed(m, "NTSAuthenticated", "NTSKeyExchangeServer", "NTSAEAD", "NTSCookies",
                                        "NTSKeyExchangeFailures", "NTSLastKeyExchangeTimestamp", "NTSStatus", NULL);
}

/* NTSStatus after a request whose replies were all refused: the last cause, with how often
 * and since when the server sent such replies. */
static void manager_nts_refused(Manager *m, Source *s) {
        const Refusals *r = source_refusals(s);
        const RefusalCount *c = &r->by_cause[r->last];
        char addr[SOCKET_ADDRESS_STRING_MAX];

        snprintf(m->nts_status, sizeof m->nts_status, "Reply from %s (%s) refused: %s, %u %s since %s",
                 socket_address_to_string(source_address(s), addr), source_name(s), c->reason, c->count,
                 c->count == 1 ? "time" : "times", FORMAT_TIMESTAMP(c->first_realtime));
        (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
}

void manager_nts_changed(Manager *m, Source *s, SourceEvent e) {
        NTSClient *c = source_nts(s);
        /* With several sources, NTSStatus says what they say together (timesyncd-several.c):
         * one failing source among others that agree is not why NTS does not work. */
        bool status = !m->several;

        /* Refused replies say why NTS does not work; those of a plain server do not. */
        if (!c)
                return;

        switch (e) {
        case SOURCE_EVENT_REFUSED:
                if (status)
                        manager_nts_refused(m, s);
                return;
        case SOURCE_EVENT_NTS_VERIFIED:
                /* A verified reply: NTS works, whatever failed before. */
                if (status && m->nts_status[0] != '\0') {
                        m->nts_status[0] = '\0';
                        (void) manager_bus_emit_changed(m, "NTSStatus", NULL);
                }
                return;
        case SOURCE_EVENT_NTS_KEYS:
                if (status)
                        m->nts_status[0] = '\0';
                m->nts_last_ke_realtime = nts_client_last_ke_realtime(c);
                break;
        case SOURCE_EVENT_NTS_KE_FAILED:
                m->nts_ke_failures++;
                if (status)
                        snprintf(m->nts_status, sizeof m->nts_status, "Key exchange with %s failed: %s",
                                 nts_client_server(c), nts_client_last_error(c));
                break;
        case SOURCE_EVENT_NTS_BOOTSTRAP_REFUSED:
                if (status)
                        snprintf(m->nts_status, sizeof m->nts_status, "Bootstrap with %s refused",
                                 nts_client_server(c));
                break;
        case SOURCE_EVENT_NTS_KEYS_DROPPED:
                break;
        case SOURCE_EVENT_NTS_COOKIES:
                (void) manager_bus_emit_changed(m, "NTSCookies", NULL);
                return;
        default:
                assert_not_reached();
        }
        manager_nts_emit_changed(m);
}

NTSClient *manager_nts_client(Manager *m) {
        Source *s = manager_current_source(m);

        return s ? source_nts(s) : NULL;
}
