/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>

#include "log.h"
#include "ssl-util.h"
#include "string-util.h"
#include "time-util.h"
#include "timesyncd-messages.h"
#include "timesyncd-nts.h"

bool nts_servers_named(ServerName *const servers[static _SERVER_TYPE_MAX], const TimesyncConfig *c) {
        return servers[SERVER_NTS] || servers[SERVER_NTS_RUNTIME] || c->nts_set;
}

bool nts_enabled(ServerName *const servers[static _SERVER_TYPE_MAX], const TimesyncConfig *c) {
        return nts_servers_named(servers, c) || c->nts_required;
}

int nts_prepare(bool fallback, char *status, size_t size) {
        int r;

        if (fallback)
                log_info("FallbackNTS= servers are in use: time comes only from them, FallbackNTP= is not "
                         "used; servers from the network or NTP= would come first.");
        else
                log_info("NTS servers are configured: time comes only from them; NTP=, FallbackNTP= and "
                         "per-link servers are not used.");

        r = nts_client_load_libraries();
        if (!HAVE_NTS) {
                snprintf(status, size, "NTS unavailable: built without NTS support");
                return log_error_errno(r, "NTS servers are configured but this build has no NTS support: "
                                       "the clock is not synchronized (no fallback to unauthenticated NTP).");
        }
        if (r < 0) {
                snprintf(status, size, "NTS unavailable: %s could not be loaded", LIBSSL_SONAME);
                return log_error_errno(r, "NTS servers are configured but %s or %s is missing: the clock "
                                       "is not synchronized (no fallback to unauthenticated NTP).",
                                       LIBSSL_SONAME, LIBCRYPTO_SONAME);
        }
        return 0;
}

static void nts_decision_status(NTSDecision *d, const char *status) {
        d->set_status = true;
        snprintf(d->status, sizeof d->status, "%s", status);
        d->changed |= BUS_PROPERTY_NTS_STATUS;
}

/* NTS= named only invalid servers (logged with the configuration), or NTSRequired=yes and none
 * was given. Nothing to retry, and no plain NTP either, until NTS servers come. */
void nts_missing(const TimesyncConfig *c, bool reported, NTSDecision *d) {
        assert(c);
        assert(d);

        if (c->nts_set) {
                nts_decision_status(d, "NTS= names no valid server");
                d->notify = true;
                snprintf(d->notify_text, sizeof d->notify_text, "No valid NTS server configured.");
                return;
        }

        /* Said once each time the daemon gets here, not at every selection. */
        if (reported)
                return;
        if (c->nts_fail_closed) {
                char status[sizeof d->status];

                snprintf(status, sizeof status, "%s: no NTS server", c->nts_fail_closed);
                log_struct(LOG_ERR, TIMESYNC_MESSAGE_NO_NTS_SERVER,
                           ((const char *const[]) { "NTS_STATUS", status, NULL }),
                           "%s in the configuration: the clock is not synchronized. Plain NTP servers are not "
                           "used, as with NTSRequired=yes; correct the configuration.", c->nts_fail_closed);
                nts_decision_status(d, status);
                d->notify = true;
                /* NTSStatus and more, so that STATUS= does not repeat NTSStatus after it. */
                snprintf(d->notify_text, sizeof d->notify_text, "%s: no NTS server, not synchronizing.",
                         c->nts_fail_closed);
                return;
        }
        nts_decision_status(d, "NTSRequired=yes but no NTS server is configured");
        log_struct(LOG_ERR, TIMESYNC_MESSAGE_NO_NTS_SERVER, ((const char *const[]) { "NTS_STATUS", d->status, NULL }),
                   "NTSRequired=yes but no NTS server is configured: the clock is not synchronized. "
                   "NTP=, FallbackNTP=, per-link and runtime NTP servers are not used; set NTS= "
                   "(or SecureServers=), or runtime NTS servers.");
        d->notify = true;
        snprintf(d->notify_text, sizeof d->notify_text, "NTSRequired=yes but no NTS server is configured.");
}

bool nts_all_refuse(ServerName *const servers[static _SERVER_TYPE_MAX]) {
        bool any = false;

        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++) {
                if (!server_type_is_nts(t))
                        continue;
                LIST_FOREACH(names, n, servers[t]) {
                        if (!n->source || source_state(n->source) != SOURCE_FAILED)
                                return false;
                        any = true;
                }
        }
        return any;
}

usec_t nts_earliest_retry(ServerName *const servers[static _SERVER_TYPE_MAX]) {
        usec_t earliest = 0;

        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++) {
                if (!server_type_is_nts(t))
                        continue;
                LIST_FOREACH(names, n, servers[t]) {
                        usec_t at = n->source ? nts_client_retry_after(source_nts(n->source)) : 0;

                        if (at > 0 && (earliest == 0 || at < earliest))
                                earliest = at;
                }
        }
        return earliest;
}

void nts_refused(const char *status_now, NTSDecision *d) {
        static const char text[] = "Every NTS server refuses service (kiss code DENY or RSTR)";

        assert(d);

        log_struct(LOG_WARNING, TIMESYNC_MESSAGE_NO_NTS_SERVER, ((const char *const[]) { "NTS_STATUS", text, NULL }),
                   "%s: none is asked again until the NTS servers change (reload, runtime servers, restart); "
                   "there is no fallback to unauthenticated NTP.", text);
        if (!streq(strempty(status_now), text))
                nts_decision_status(d, text);
        d->notify = true;
        snprintf(d->notify_text, sizeof d->notify_text, "%s.", text);
}

void nts_outage(bool outage, const char *status, const char *server) {
        if (!outage) {
                log_struct(LOG_NOTICE, TIMESYNC_MESSAGE_NTS_BACK,
                           ((const char *const[]) { "NTP_SERVER", strna(server), NULL }),
                           "NTS server %s answers again: NTS gives time again.", strna(server));
                return;
        }
        if (isempty(status))
                status = "every NTS server fails";
        log_struct(LOG_WARNING, TIMESYNC_MESSAGE_NO_NTS_SERVER, ((const char *const[]) { "NTS_STATUS", status, NULL }),
                   "No usable NTS server, the clock is not synchronized until one answers (there is no fallback "
                   "to unauthenticated NTP): %s%s", status, endswith(status, "?") ? "" : ".");
}

/* NTSStatus after a request whose replies were all refused: the last cause, with how often
 * and since when the server sent such replies. */
static void nts_source_refused(Source *s, NTSDecision *d) {
        const Refusals *r = source_refusals(s);
        const RefusalCount *c = &r->by_cause[r->last];
        char addr[SOCKET_ADDRESS_STRING_MAX], status[sizeof d->status];

        snprintf(status, sizeof status, "Reply from %s (%s) refused: %s, %u %s since %s",
                 socket_address_to_string(source_address(s), addr), source_name(s), c->reason, c->count,
                 c->count == 1 ? "time" : "times", FORMAT_TIMESTAMP(c->first_realtime));
        nts_decision_status(d, status);
}

void nts_source_event(Source *s, SourceEvent e, bool several, const char *status_now, NTSDecision *d) {
        NTSClient *c = source_nts(s);
        /* With several sources, NTSStatus says what they say together (timesyncd-policy.c):
         * one failing source among others that agree is not why NTS does not work. */
        bool status = !several;
        char text[sizeof d->status];

        assert(d);

        /* Refused replies say why NTS does not work; those of a plain server do not. */
        if (!c)
                return;

        switch (e) {
        case SOURCE_EVENT_REFUSED:
                if (status)
                        nts_source_refused(s, d);
                return;
        case SOURCE_EVENT_NTS_VERIFIED:
                /* A verified reply: NTS works, whatever failed before. */
                if (status && !isempty(status_now))
                        nts_decision_status(d, "");
                return;
        case SOURCE_EVENT_NTS_KEYS:
                if (status)
                        nts_decision_status(d, "");
                d->ke_done = true;
                d->ke_realtime = nts_client_last_ke_realtime(c);
                break;
        case SOURCE_EVENT_NTS_KE_FAILED:
                d->ke_failed = true;
                if (status) {
                        snprintf(text, sizeof text, "Key exchange with %s failed: %s", nts_client_server(c),
                                 nts_client_last_error(c));
                        nts_decision_status(d, text);
                }
                break;
        case SOURCE_EVENT_NTS_BOOTSTRAP_REFUSED:
                if (status) {
                        snprintf(text, sizeof text, "Bootstrap with %s refused", nts_client_server(c));
                        nts_decision_status(d, text);
                }
                break;
        case SOURCE_EVENT_NTS_KEYS_DROPPED:
                break;
        case SOURCE_EVENT_NTS_COOKIES:
                d->changed |= BUS_PROPERTY_NTS_COOKIES;
                return;
        default:
                assert_not_reached();
        }
        d->changed |= BUS_PROPERTY_NTS_AUTHENTICATED | BUS_PROPERTY_NTS_KE_SERVER | BUS_PROPERTY_NTS_AEAD |
                BUS_PROPERTY_NTS_COOKIES | BUS_PROPERTY_NTS_KE_FAILURES | BUS_PROPERTY_NTS_LAST_KE |
                BUS_PROPERTY_NTS_STATUS;
}

/* Only while NTSBootstrap= is on, we have not synchronized since start, the kernel does not
 * consider the clock synchronized either, and the clock still reads as its floor put it at boot
 * (clock_floor_verdict()): "unsynchronized" alone is true at every boot, also of a correct
 * clock, and a certificate valid from the future (issued ahead of a rotation, a private CA)
 * would then let its server move a correct clock anywhere into its validity period. */
bool nts_bootstrap_decide(const NTSBootstrapInput *in, NTSClientBootstrap direction, char *why, size_t size,
                          const char **ret_short) {
        const char *reason = NULL;
        ClockFloorVerdict v;
        char found[200];

        assert(in);
        assert(why);
        assert(ret_short);

        /* An expired certificate is what an attacker holding an old key would show a correct
         * clock: with one source there is nobody to agree or disagree, so the question does
         * not arise (and nothing is said). With several, their agreement decides (see
         * timesyncd-source-set.c, bootstrap_refusal()), but only while the clock may be ahead:
         * while another source answers with keys whose certificate our clock found valid, an
         * expired certificate is just expired, and its failure says so, with its date. */
        if (direction == NTS_CLIENT_BOOTSTRAP_BACKWARD && (!in->several || !in->clock_may_be_ahead)) {
                *ret_short = NULL;
                return false;
        }

        if (!in->enabled)
                reason = "NTSBootstrap=no";
        else if (in->synchronized)
                reason = "the clock was synchronized since the daemon started";
        else if (!in->kernel_state_known || in->kernel_synchronized)
                reason = "the kernel does not report the clock unsynchronized";
        else if (!in->clock_readable)
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

        v = clock_floor_verdict(in->floor, in->realtime_nsec, in->boottime_nsec);
        if (clock_floor_is_evidence(v)) {
                clock_floor_describe(in->floor, v, in->realtime_nsec, in->boottime_nsec, why, size);
                return true;
        }

        clock_floor_describe(in->floor, v, in->realtime_nsec, in->boottime_nsec, found, sizeof found);
        snprintf(why, size, "nothing says that the clock is behind: %s", found);
        *ret_short = "the clock is not known to be behind";
        return false;
}
