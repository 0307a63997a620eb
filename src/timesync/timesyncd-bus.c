/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <netinet/in.h>

#include "log.h"
#include "server-name.h"
#include "strv.h"
#include "timesyncd-bus.h"
#include "timesyncd-bus-internal.h"
#include "timesyncd-manager-internal.h"
#include "timesyncd-nts.h"
#include "timesyncd-policy.h"

#define TIMESYNC_PATH "/org/freedesktop/timesync1"
#define TIMESYNC_INTERFACE "org.freedesktop.timesync1.Manager"
#define TIMESYNC_NAME "org.freedesktop.timesync1"
#define LOG_CONTROL_PATH "/org/freedesktop/LogControl1"
#define LOG_CONTROL_INTERFACE "org.freedesktop.LogControl1"
/* Stock's action, declared by units/org.freedesktop.timesync1.policy (or stock's copy of it). */
#define POLKIT_ACTION_SET_RUNTIME_SERVERS "org.freedesktop.timesync1.set-runtime-servers"
/* Ours, declared by units/org.freedesktop.timesync1.nts.policy: a retry sets nothing, and the
 * question polkit puts to the caller says what is asked. */
#define POLKIT_ACTION_RETRY_SOURCES "org.freedesktop.timesync1.retry-sources"

/* How long to wait before connecting again when the bus is absent or went away. */
#define BUS_RECONNECT_USEC (2 * USEC_PER_SEC)

static int manager_schedule_bus_reconnect(Manager *m);

static usec_t nsec_to_usec(int64_t nsec) {
        return nsec > 0 ? (usec_t) nsec / 1000 : 0;
}

static int property_get_servers(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ServerName **list = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;

        LIST_FOREACH(names, n, *list) {
                r = sd_bus_message_append(reply, "s", n->string);
                if (r < 0)
                        return r;
        }

        return sd_bus_message_close_container(reply);
}

static int property_get_fallback_servers(sd_bus *bus, const char *path, const char *interface,
                                         const char *property, sd_bus_message *reply, void *userdata,
                                         sd_bus_error *error) {
        Manager *m = userdata;
        return property_get_servers(bus, path, interface, property, reply, &m->servers[SERVER_FALLBACK], error);
}

/* NTS=: the NTS list, unless it holds FallbackNTS= (manager_update_fallback_nts()). */
static int property_get_system_nts_servers(sd_bus *bus, const char *path, const char *interface,
                                           const char *property, sd_bus_message *reply, void *userdata,
                                           sd_bus_error *error) {
        Manager *m = userdata;
        ServerName *none = NULL;

        return property_get_servers(bus, path, interface, property, reply,
                                    m->nts_fallback ? &none : &m->servers[SERVER_NTS], error);
}

/* FallbackNTS= as configured (or compiled in), used or not, as FallbackNTPServers is. */
static int property_get_fallback_nts_servers(sd_bus *bus, const char *path, const char *interface,
                                             const char *property, sd_bus_message *reply, void *userdata,
                                             sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append_strv(reply, m->config.fallback_nts_servers);
}

static int property_get_server_name(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", m->current ? m->current->string : "");
}

static int property_get_server_address(sd_bus *bus, const char *path, const char *interface,
                                       const char *property, sd_bus_message *reply, void *userdata,
                                       sd_bus_error *error) {
        Source *s = manager_current_source(userdata);
        const SocketAddress *a = s ? source_address(s) : NULL;
        const void *bytes = NULL;
        size_t size = 0;
        int family = AF_UNSPEC, r;

        if (a && a->sa.ss_family == AF_INET) {
                family = AF_INET;
                bytes = &((const struct sockaddr_in *) &a->sa)->sin_addr;
                size = sizeof(struct in_addr);
        } else if (a && a->sa.ss_family == AF_INET6) {
                family = AF_INET6;
                bytes = &((const struct sockaddr_in6 *) &a->sa)->sin6_addr;
                size = sizeof(struct in6_addr);
        }

        r = sd_bus_message_open_container(reply, 'r', "iay");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "i", family);
        if (r < 0)
                return r;
        r = sd_bus_message_append_array(reply, 'y', bytes, size);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_usec(sd_bus *bus, const char *path, const char *interface, const char *property,
                             sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "t", *(usec_t *) userdata);
}

static int property_get_ntp_message(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const NTPMessage *msg = &m->ntpmsg;
        const NTPHeader *h = &msg->header;
        int r;

        r = sd_bus_message_open_container(reply, 'r', "uuuuittayttttbtt");
        if (r < 0)
                return r;

        r = sd_bus_message_append(reply, "uuuuitt",
                                  (uint32_t) h->leap, (uint32_t) h->version, (uint32_t) h->mode,
                                  (uint32_t) h->stratum, (int32_t) h->precision,
                                  nsec_to_usec(ntp_short_to_nsec(h->root_delay)),
                                  nsec_to_usec(ntp_short_to_nsec(h->root_dispersion)));
        if (r < 0)
                return r;

        r = sd_bus_message_append_array(reply, 'y', h->refid, sizeof h->refid);
        if (r < 0)
                return r;

        r = sd_bus_message_append(reply, "ttttbtt",
                                  nsec_to_usec(msg->origin_nsec), nsec_to_usec(msg->receive_nsec),
                                  nsec_to_usec(msg->transmit_nsec), nsec_to_usec(msg->destination_nsec),
                                  (int) msg->spike, msg->packet_count, nsec_to_usec(msg->jitter_nsec));
        if (r < 0)
                return r;

        return sd_bus_message_close_container(reply);
}

static int property_get_frequency(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int64_t frequency = m->frequency;
        ClockState st;
        int r;

        /* Unknown in observe mode (the daemon never adjusted) and before the first adjustment:
         * one adjtimex() now, for the one who asks, rather than one per poll. The fake clock
         * answers from memory. */
        if (!m->frequency_known) {
                r = clock_backend_get_state(m->clock, &st);
                if (r < 0)
                        log_debug_errno(r, "Failed to read the kernel's clock state for Frequency, showing %" PRIi64 ": %m",
                                        frequency);
                else
                        frequency = st.frequency;
        }
        return sd_bus_message_append(reply, "x", frequency);
}

/* ---- SetRuntimeNTPServers and RetrySources, with polkit where it runs ---- */

/* A method call that runs once authorized: at once for root, after polkit's answer for
 * others. run() replies to message. */
typedef struct PendingAuthorization PendingAuthorization;
struct PendingAuthorization {
        Manager *manager;
        sd_bus_message *message;
        int (*run)(PendingAuthorization *p);
        const char *action;             /* the polkit action asked about */
        const char *what;               /* for the refusal: "set runtime NTP servers" */
        ServerType type;
        char **names;
};

static int set_runtime_servers_now(Manager *m, sd_bus_message *message, ServerType type, char **names) {
        int r;

        r = manager_set_runtime_servers(m, type, names);
        if (r < 0)
                return sd_bus_reply_method_errorf(message, SD_BUS_ERROR_FAILED,
                                                  "Failed to set runtime servers: %s", strerror(-r));

        log_info("Runtime %s servers set over D-Bus.", type == SERVER_NTS_RUNTIME ? "NTS" : "NTP");
        (void) manager_bus_emit_changed(m, type == SERVER_NTS_RUNTIME ? "RuntimeNTSServers" : "RuntimeNTPServers",
                                        "NTS", NULL);
        return sd_bus_reply_method_return(message, NULL);
}

static int run_set_runtime_servers(PendingAuthorization *p) {
        return set_runtime_servers_now(p->manager, p->message, p->type, p->names);
}

/* What failed may have been fixed: every source that backs off tries again now. */
static int run_retry_sources(PendingAuthorization *p) {
        unsigned n;

        n = manager_retry_now(p->manager);
        log_info("Retry asked over D-Bus: %u failing source%s retried now.", n, n == 1 ? "" : "s");
        manager_bus_sources_changed(p->manager);
        return sd_bus_reply_method_return(p->message, "u", (uint32_t) n);
}

static void pending_authorization_free(PendingAuthorization *p) {
        if (!p)
                return;
        sd_bus_message_unref(p->message);
        strv_free(p->names);
        free(p);
}
DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(PendingAuthorization *, pending_authorization_free);

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        PendingAuthorization *p = userdata;
        int authorized = false, challenge = false, r;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                log_warning("polkit check failed: %s", e && e->message ? e->message : "unknown error");
                r = sd_bus_reply_method_errorf(p->message, SD_BUS_ERROR_ACCESS_DENIED,
                                               "Authorization check failed.");
                goto finish;
        }

        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0) {
                r = sd_bus_reply_method_errorf(p->message, SD_BUS_ERROR_ACCESS_DENIED,
                                               "Malformed answer from polkit.");
                goto finish;
        }

        if (authorized)
                r = p->run(p);
        else if (challenge)
                r = sd_bus_reply_method_errorf(p->message, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                               "Interactive authentication required.");
        else
                r = sd_bus_reply_method_errorf(p->message, SD_BUS_ERROR_ACCESS_DENIED,
                                               "Access denied to %s.", p->action);

finish:
        pending_authorization_free(p);
        return r < 0 ? r : 0;
}

/* Takes ownership of p, on failure too. */
static int ask_polkit(Manager *m, sd_bus_message *message, PendingAuthorization *p_owned) {
        _cleanup_(pending_authorization_freep) PendingAuthorization *p = p_owned;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        uint32_t flags;
        int r;

        r = sd_bus_message_new_method_call(m->bus->connection, &call, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r < 0)
                return r;

        /* Subject: the caller's bus name; flags bit 0: allow interactive authentication. */
        flags = sd_bus_message_get_allow_interactive_authorization(message) ? 1 : 0;
        r = sd_bus_message_append(call, "(sa{sv})sa{ss}us",
                                  "system-bus-name", 1, "name", "s", sd_bus_message_get_sender(message),
                                  p->action, 0, flags, "");
        if (r < 0)
                return r;

        r = sd_bus_call_async(m->bus->connection, NULL, call, on_polkit_reply, p, 0);
        if (r < 0)
                return r;
        TAKE_PTR(p);
        return 1;
}

/* Runs p (taken, on failure too) at once for root. Unprivileged callers need polkit's blessing
 * for p's action (SetRuntimeNTPServers': stock's); without polkit, only root may. */
static int authorize_and_run(sd_bus_message *message, PendingAuthorization *p_owned, sd_bus_error *error) {
        _cleanup_(pending_authorization_freep) PendingAuthorization *p = p_owned;
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        Manager *m = p->manager;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(message, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return r;

        if (uid == 0)
                return p->run(p);

        r = sd_bus_get_name_creds(m->bus->connection, "org.freedesktop.PolicyKit1", 0, NULL);
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Only root may %s here (no polkit).",
                                         p->what);

        r = ask_polkit(m, message, TAKE_PTR(p));
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Could not ask polkit: %s", strerror(-r));
        return 1;
}

static PendingAuthorization *pending_authorization_new(Manager *m, sd_bus_message *message,
                                                       int (*run)(PendingAuthorization *p), const char *action,
                                                       const char *what) {
        PendingAuthorization *p = new0(PendingAuthorization, 1);

        if (!p)
                return NULL;
        p->manager = m;
        p->message = sd_bus_message_ref(message);
        p->run = run;
        p->action = action;
        p->what = what;
        return p;
}

static int set_runtime_servers(sd_bus_message *message, Manager *m, ServerType type, sd_bus_error *error) {
        _cleanup_(strv_freep) char **names = NULL;
        PendingAuthorization *p;
        int r;

        r = sd_bus_message_read_strv(message, &names);
        if (r < 0)
                return r;

        for (char **s = names; s && *s; s++)
                if (type == SERVER_NTS_RUNTIME ? !server_name_is_valid_nts(*s) : !server_name_is_valid(*s))
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                                 "Invalid %s server name or address, refusing: %s",
                                                 type == SERVER_NTS_RUNTIME ? "NTS" : "NTP", *s);

        p = pending_authorization_new(m, message, run_set_runtime_servers, POLKIT_ACTION_SET_RUNTIME_SERVERS,
                                      type == SERVER_NTS_RUNTIME ? "set runtime NTS servers" : "set runtime NTP servers");
        if (!p)
                return -ENOMEM;
        p->type = type;
        p->names = TAKE_PTR(names);
        return authorize_and_run(message, p, error);
}

static int method_set_runtime_ntp_servers(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        return set_runtime_servers(message, userdata, SERVER_RUNTIME, error);
}

static int method_set_runtime_nts_servers(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        return set_runtime_servers(message, userdata, SERVER_NTS_RUNTIME, error);
}

static int method_retry_sources(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        PendingAuthorization *p = pending_authorization_new(userdata, message, run_retry_sources,
                                                            POLKIT_ACTION_RETRY_SOURCES, "retry sources");

        if (!p)
                return -ENOMEM;
        return authorize_and_run(message, p, error);
}

/* ---- NTS properties ---- */

static int property_get_nts(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "b", manager_nts_enabled(userdata));
}

static int property_get_nts_authenticated(sd_bus *bus, const char *path, const char *interface,
                                          const char *property, sd_bus_message *reply, void *userdata,
                                          sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "b", m->ntpmsg_authenticated && m->ntpmsg.packet_count > 0);
}

/* The report of the selected server's NTS client; false (and nothing filled) without one. */
static bool nts_report(Manager *m, NTSClientReport *ret) {
        NTSClient *c = manager_nts_client(m);

        if (!c)
                return false;
        nts_client_get_report(c, ret);
        return true;
}

static int property_get_nts_ke_server(sd_bus *bus, const char *path, const char *interface,
                                      const char *property, sd_bus_message *reply, void *userdata,
                                      sd_bus_error *error) {
        NTSClientReport r;
        return sd_bus_message_append(reply, "s", nts_report(userdata, &r) ? r.ke_address : "");
}

static int property_get_nts_aead(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        NTSClientReport r;
        return sd_bus_message_append(reply, "s", nts_report(userdata, &r) ? strempty(r.aead) : "");
}

static uint32_t nts_cookies(Manager *m) {
        NTSClientReport r;
        return nts_report(m, &r) ? (uint32_t) r.cookies : 0;
}

static int property_get_nts_cookies(sd_bus *bus, const char *path, const char *interface,
                                    const char *property, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error) {
        return sd_bus_message_append(reply, "u", nts_cookies(userdata));
}

static int property_get_nts_ke_failures(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "u", (uint32_t) m->nts_ke_failures);
}

static int property_get_nts_status(sd_bus *bus, const char *path, const char *interface,
                                   const char *property, sd_bus_message *reply, void *userdata,
                                   sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", m->nts_status);
}

/* Per server and cause: the server as configured, the cause's name, the reason as logged,
 * count, first and last (microseconds since 1970). Every server, not only the selected one:
 * after failures none may be selected, which is when these counts matter. */
static int property_get_refused_replies(sd_bus *bus, const char *path, const char *interface,
                                        const char *property, sd_bus_message *reply, void *userdata,
                                        sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sssutt)");
        if (r < 0)
                return r;

        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, m->servers[t])
                        for (RefusalCause c = 0; n->source && c < _REFUSAL_CAUSE_MAX; c++) {
                                const RefusalCount *k = &source_refusals(n->source)->by_cause[c];

                                if (k->count == 0)
                                        continue;
                                r = sd_bus_message_append(reply, "(sssutt)", n->string, refusal_cause_to_string(c),
                                                          k->reason, (uint32_t) k->count, k->first_realtime,
                                                          k->last_realtime);
                                if (r < 0)
                                        return r;
                        }

        return sd_bus_message_close_container(reply);
}

/* ---- Sources: every time source, the way `chronyc sources` and `chronyc -N authdata` show
 * them (a{sv} per source, so that pools can add keys later) ---- */

static int append_entry(sd_bus_message *reply, const char *key, const char *type, ...) {
        va_list ap;
        int r;

        r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "s", key);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'v', type);
        if (r < 0)
                return r;
        va_start(ap, type);
        r = sd_bus_message_appendv(reply, type, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static const char *source_verdict(Manager *m, const Source *s) {
        const char *v = policy_verdict(&m->policy, s);

        if (v)
                return v;
        /* Not among the sources in use (a server used before, the NTS= servers while runtime
         * ones are set, one a reload left out): "unused", so that an administrator does not read
         * it as broken; one that refused service stays "unusable", it is out for good. */
        return source_state(s) == SOURCE_FAILED ? "unusable" : "unused";
}

static const char *bootstrap_string(NTSClientBootstrap b) {
        return b == NTS_CLIENT_BOOTSTRAP_FORWARD ? "forward" : b == NTS_CLIENT_BOOTSTRAP_BACKWARD ? "backward" : "";
}

static int append_sample(sd_bus_message *reply, const Source *s) {
        const SourceSample *p = source_sample(s);
        int64_t age, rd;
        int r;

        if (!p)
                return 0;

        /* The error bound now: the dispersion grows with the sample's age. */
        age = (int64_t) (now(CLOCK_BOOTTIME) - MIN(now(CLOCK_BOOTTIME), p->boottime)) * 1000;
        rd = ntp_sample_root_distance_nsec(&p->ntp, &p->header,
                                           ntp_dispersion_nsec(p->header.precision, SOURCE_SET_LOCAL_PRECISION, age));

        r = append_entry(reply, "Stratum", "u", (uint32_t) p->header.stratum);
        if (r >= 0)
                r = append_entry(reply, "LastSampleTimestamp", "t", nsec_to_usec(p->origin_nsec));
        if (r >= 0)
                r = append_entry(reply, "OffsetNSec", "x", p->ntp.offset_nsec);
        if (r >= 0)
                r = append_entry(reply, "DelayNSec", "x", p->ntp.delay_nsec);
        if (r >= 0)
                r = append_entry(reply, "RootDistanceNSec", "x", rd);
        if (r >= 0)
                r = append_entry(reply, "JitterNSec", "x", (int64_t) p->jitter_nsec);
        if (r >= 0)
                r = append_entry(reply, "Packets", "t", p->packet_count);
        if (r >= 0)
                r = append_entry(reply, "Spike", "b", (int) p->spike);
        return r;
}

static int append_nts(sd_bus_message *reply, const NTSClientReport *n) {
        int r;

        r = append_entry(reply, "KeyExchangeServer", "s", n->ke_address);
        if (r >= 0)
                r = append_entry(reply, "AEAD", "s", strempty(n->aead));
        if (r >= 0)
                r = append_entry(reply, "Cookies", "u", (uint32_t) n->cookies);
        if (r >= 0)
                r = append_entry(reply, "LastKeyExchangeTimestamp", "t", n->last_ke_realtime);
        if (r >= 0)
                r = append_entry(reply, "KeyExchangeFailures", "u", (uint32_t) n->ke_failures);
        if (r >= 0)
                r = append_entry(reply, "Bootstrap", "s", bootstrap_string(n->bootstrap));
        return r;
}

static int append_source(sd_bus_message *reply, Manager *m, const ServerName *n, Source *s) {
        char addr[SOCKET_ADDRESS_STRING_MAX] = "";
        const char *error = source_last_error(s);
        usec_t error_time = source_last_error_realtime(s);
        NTSClientReport nts;
        int r;

        if (source_address(s))
                (void) socket_address_to_string(source_address(s), addr);
        if (source_nts(s))
                nts_client_get_report(source_nts(s), &nts);
        /* A key exchange's failure is the client's; the source's is its last give-up. */
        if (source_nts(s) && !isempty(nts.last_error)) {
                error = nts.last_error;
                error_time = nts.last_error_realtime;
        }

        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        r = append_entry(reply, "Name", "s", source_name(s));
        if (r >= 0)
                r = append_entry(reply, "Origin", "s", server_type_to_string(n->type));
        /* The pool entry (pool:NAME, srv:NAME) the source came from; "" for a server of its own. */
        if (r >= 0)
                r = append_entry(reply, "Pool", "s", n->pool ? n->string : "");
        if (r >= 0)
                r = append_entry(reply, "NTS", "b", (int) !!source_nts(s));
        if (r >= 0)
                r = append_entry(reply, "State", "s", source_state_to_string(source_state(s)));
        if (r >= 0)
                r = append_entry(reply, "Verdict", "s", source_verdict(m, s));
        if (r >= 0)
                r = append_entry(reply, "Address", "s", addr);
        if (r >= 0)
                r = append_entry(reply, "PollIntervalUSec", "t", source_poll_interval(s));
        if (r >= 0)
                r = append_entry(reply, "Failures", "u", source_failures(s));
        if (r >= 0)
                r = append_entry(reply, "RefusedReplies", "u", source_refusals(s)->total);
        if (r >= 0)
                r = append_entry(reply, "LastError", "s", error);
        /* When it came: an error older than LastSampleTimestamp was overcome since. */
        if (r >= 0)
                r = append_entry(reply, "LastErrorTimestamp", "t", error_time);
        if (r >= 0)
                r = append_sample(reply, s);
        if (r >= 0 && source_nts(s))
                r = append_nts(reply, &nts);
        if (r >= 0 && source_nts(s)) {
                /* A conflict of claims: the source that names the same NTP address. */
                const Source *other = policy_conflict_with(&m->policy, s);

                r = append_entry(reply, "ConflictWith", "s", other ? source_name(other) : "");
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* Every server that has a source (it is in use, or was), in the order of the lists: NTS
 * sources and plain NTP ones alike. */
static int property_get_sources(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        if (r < 0)
                return r;
        for (ServerType t = 0; t < _SERVER_TYPE_MAX; t++)
                LIST_FOREACH(names, n, m->servers[t]) {
                        if (n->source) {
                                r = append_source(reply, m, n, n->source);
                                if (r < 0)
                                        return r;
                        }
                        for (size_t i = 0; n->pool && i < pool_n_sources(n->pool); i++) {
                                r = append_source(reply, m, n, pool_source(n->pool, i));
                                if (r < 0)
                                        return r;
                        }
                }
        return sd_bus_message_close_container(reply);
}

/* Connected, and the state announced once (on_bus_connected()): before that (waiting for the
 * bus to appear, authenticating) a signal would only pile up in the connection's queue, one per
 * poll, for as long as there is no bus, and one sent between Hello and that announcement would
 * show a listener part of a state. */
static bool manager_bus_ready(Manager *m) {
        return m->bus->connection && m->bus->connected;
}

static int on_sources_changed(sd_event_source *es, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        m->bus->sources_dirty = false;
        m->bus->sources_announced = now(CLOCK_BOOTTIME);
        if (!manager_bus_ready(m))
                return 0;
        r = sd_bus_emit_properties_changed(m->bus->connection, TIMESYNC_PATH, TIMESYNC_INTERFACE, "Sources", NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to emit PropertiesChanged for Sources, ignoring: %m");
        return 0;
}

void manager_bus_sources_changed(Manager *m) {
        usec_t t, at;
        int r;

        assert(m);

        if (!m->bus->connection || m->bus->sources_dirty)
                return;
        m->bus->sources_dirty = true;

        /* The first change after a quiet round goes out at once; the next one waits for the
         * round to end. */
        t = now(CLOCK_BOOTTIME);
        at = m->bus->sources_announced > 0 ? MAX(t, m->bus->sources_announced + m->config.poll_interval_min_usec) : t;
        if (!m->bus->event_sources_changed)
                r = sd_event_add_time(m->event, &m->bus->event_sources_changed, CLOCK_BOOTTIME, at, 0, on_sources_changed, m);
        else {
                r = sd_event_source_set_time(m->bus->event_sources_changed, at);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->bus->event_sources_changed, SD_EVENT_ONESHOT);
        }
        if (r < 0) {
                m->bus->sources_dirty = false;
                log_debug_errno(r, "Failed to arm the Sources signal, ignoring: %m");
        }
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),

        SD_BUS_PROPERTY("LinkNTPServers", "as", property_get_servers, offsetof(Manager, servers[SERVER_LINK]),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("SystemNTPServers", "as", property_get_servers, offsetof(Manager, servers[SERVER_SYSTEM]),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("RuntimeNTPServers", "as", property_get_servers, offsetof(Manager, servers[SERVER_RUNTIME]),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("FallbackNTPServers", "as", property_get_fallback_servers, 0,
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ServerName", "s", property_get_server_name, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ServerAddress", "(iay)", property_get_server_address, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RootDistanceMaxUSec", "t", property_get_usec,
                        offsetof(Manager, config.root_distance_max_usec), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("PollIntervalMinUSec", "t", property_get_usec,
                        offsetof(Manager, config.poll_interval_min_usec), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("PollIntervalMaxUSec", "t", property_get_usec,
                        offsetof(Manager, config.poll_interval_max_usec), SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("PollIntervalUSec", "t", property_get_usec, offsetof(Manager, poll_interval_usec),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTPMessage", "(uuuuittayttttbtt)", property_get_ntp_message, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Frequency", "x", property_get_frequency, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),

        SD_BUS_METHOD_WITH_ARGS("SetRuntimeNTPServers", SD_BUS_ARGS("as", runtime_servers), SD_BUS_NO_RESULT,
                                method_set_runtime_ntp_servers, SD_BUS_VTABLE_UNPRIVILEGED),

        /* NTS, our addition to the stock interface. */
        SD_BUS_PROPERTY("SystemNTSServers", "as", property_get_system_nts_servers, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("FallbackNTSServers", "as", property_get_fallback_nts_servers, 0,
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("RuntimeNTSServers", "as", property_get_servers, offsetof(Manager, servers[SERVER_NTS_RUNTIME]),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTS", "b", property_get_nts, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTSAuthenticated", "b", property_get_nts_authenticated, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTSKeyExchangeServer", "s", property_get_nts_ke_server, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTSAEAD", "s", property_get_nts_aead, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTSCookies", "u", property_get_nts_cookies, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTSKeyExchangeFailures", "u", property_get_nts_ke_failures, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTSLastKeyExchangeTimestamp", "t", property_get_usec, offsetof(Manager, nts_last_ke_realtime),
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NTSStatus", "s", property_get_nts_status, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        /* Counted per packet, a forged flood included: no signal per change (read it). */
        SD_BUS_PROPERTY("RefusedReplies", "a(sssutt)", property_get_refused_replies, 0, 0),
        /* Every source; changes invalidate it at most once per PollIntervalMinSec=. */
        SD_BUS_PROPERTY("Sources", "aa{sv}", property_get_sources, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
        SD_BUS_METHOD_WITH_ARGS("SetRuntimeNTSServers", SD_BUS_ARGS("as", runtime_servers), SD_BUS_NO_RESULT,
                                method_set_runtime_nts_servers, SD_BUS_VTABLE_UNPRIVILEGED),
        /* Every source that backs off tries again now (after a fix), as a reload does;
         * returns how many did. Its own polkit action (POLKIT_ACTION_RETRY_SOURCES). */
        SD_BUS_METHOD_WITH_ARGS("RetrySources", SD_BUS_NO_ARGS, SD_BUS_RESULT("u", retried), method_retry_sources,
                                SD_BUS_VTABLE_UNPRIVILEGED),

        /* The names of the upstream NTS patch set (pendulum-project/nts-timesyncd), for the
         * scripts written for it: its configured NTS-KE servers (NTS=, SecureServers=; it has
         * no runtime ones), and whether the time in use is NTS authenticated. Same getters as
         * SystemNTSServers and NTSAuthenticated; SecureTime changes with NTSAuthenticated
         * (see manager_bus_emit_changed()). */
        SD_BUS_PROPERTY("NTSKeyExchangeServers", "as", property_get_system_nts_servers, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("SecureTime", "b", property_get_nts_authenticated, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),

        SD_BUS_VTABLE_END
};

/* ---- org.freedesktop.LogControl1 ---- */

static int property_get_log_level(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", log_level_to_string(log_get_max_level()));
}

static int property_set_log_level(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *value, void *userdata, sd_bus_error *error) {
        const char *s;
        int level, r;

        r = sd_bus_message_read(value, "s", &s);
        if (r < 0)
                return r;

        level = log_level_from_string(s);
        if (level < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid log level '%s'", s);

        log_set_max_level(level);
        log_info("Log level set to %s.", log_level_to_string(level));
        return 0;
}

static int property_get_log_target(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", log_target_to_string(log_get_target()));
}

static int property_set_log_target(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *value, void *userdata, sd_bus_error *error) {
        LogTarget t;
        const char *s;
        int r;

        r = sd_bus_message_read(value, "s", &s);
        if (r < 0)
                return r;

        t = log_target_from_string(s);
        if (t < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid log target '%s'", s);

        log_set_target(t);
        log_info("Log target set to %s.", log_target_to_string(t));
        return 0;
}

static int property_get_syslog_identifier(sd_bus *bus, const char *path, const char *interface,
                                          const char *property, sd_bus_message *reply, void *userdata,
                                          sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", program_invocation_short_name);
}

static const sd_bus_vtable log_control_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_WRITABLE_PROPERTY("LogLevel", "s", property_get_log_level, property_set_log_level, 0, 0),
        SD_BUS_WRITABLE_PROPERTY("LogTarget", "s", property_get_log_target, property_set_log_target, 0, 0),
        SD_BUS_PROPERTY("SyslogIdentifier", "s", property_get_syslog_identifier, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_VTABLE_END
};

/* ---- connection life cycle ---- */

/* The properties emitted after every reply that stay the same over most polls. A signal wakes
 * the bus daemon and every listener, and marshalling one was most of a poll's CPU time in the
 * daemon itself (callgrind), so these are emitted only when their value changed. */
static const char *const announced_properties[] = {
        "PollIntervalUSec", "Frequency", "NTSAuthenticated", "NTSCookies",
};
assert_cc(ELEMENTSOF(announced_properties) == ELEMENTSOF(((ManagerBus *) NULL)->announced));

static int64_t announced_value(Manager *m, size_t i) {
        switch (i) {
        case 0:
                return (int64_t) m->poll_interval_usec;
        case 1:
                /* Not what the getter reads while the frequency is unknown (observe mode): 0
                 * then, so it is announced once, with the first sample. The daemon does not
                 * change it there, and reading the kernel per poll to compare is what
                 * frequency_known saves. */
                return m->frequency;
        case 2:
                return m->ntpmsg_authenticated && m->ntpmsg.packet_count > 0;
        default:
                return nts_cookies(m);
        }
}

static ssize_t announced_index(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(announced_properties); i++)
                if (streq(name, announced_properties[i]))
                        return (ssize_t) i;
        return -1;
}

int manager_bus_emit_changed_strv(Manager *m, const char *const *properties) {
        _cleanup_(strv_freep) char **names = NULL;
        int r;

        assert(m);

        if (!manager_bus_ready(m))
                return 0;

        for (const char *const *p = properties; p && *p; p++) {
                ssize_t i = announced_index(*p);

                if (i >= 0 && m->bus->announced[i].valid && m->bus->announced[i].value == announced_value(m, i))
                        continue;
                /* SecureTime is NTSAuthenticated under the upstream patch set's name. */
                if (strv_extend(&names, *p) < 0 ||
                    (streq(*p, "NTSAuthenticated") && strv_extend(&names, "SecureTime") < 0))
                        return -ENOMEM;
        }

        if (!names)
                return 0;

        r = sd_bus_emit_properties_changed_strv(m->bus->connection, TIMESYNC_PATH, TIMESYNC_INTERFACE, names);
        if (r < 0)
                return log_debug_errno(r, "Failed to emit PropertiesChanged, ignoring: %m");

        STRV_FOREACH(n, names) {
                ssize_t i = announced_index(*n);

                if (i >= 0)
                        m->bus->announced[i] = (typeof(m->bus->announced[i])) { true, announced_value(m, i) };
        }
        return 0;
}

int manager_bus_emit_changed(Manager *m, const char *property, ...) {
        const char *names[32];
        size_t n = 0;
        va_list ap;

        va_start(ap, property);
        for (const char *p = property; p; p = va_arg(ap, const char *)) {
                assert(n < ELEMENTSOF(names) - 1);
                names[n++] = p;
        }
        va_end(ap);
        names[n] = NULL;
        return manager_bus_emit_changed_strv(m, names);
}

static int on_bus_disconnected(sd_bus_message *message, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;

        log_notice("Lost the connection to the system bus, reconnecting.");
        m->bus->waiting = true;
        m->bus->connected = false;
        m->bus->event_wait = sd_event_source_disable_unref(m->bus->event_wait);
        m->bus->connection = sd_bus_flush_close_unref(m->bus->connection);
        return manager_schedule_bus_reconnect(m);
}

/* RequestName() answers (D-Bus specification, "org.freedesktop.DBus.RequestName"). */
#define DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER 1
#define DBUS_REQUEST_NAME_REPLY_IN_QUEUE 2
#define DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER 4

static int on_name_owner_pid(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        uint32_t pid = 0;
        char owner[64] = "another process";

        if (!m->bus->name_queued)
                return 0; /* released meanwhile: the name is ours */
        if (!sd_bus_message_is_method_error(reply, NULL) && sd_bus_message_read(reply, "u", &pid) >= 0 && pid > 0)
                snprintf(owner, sizeof owner, "process %" PRIu32, pid);

        log_error("The bus name %s is owned by %s (another instance of this daemon?). Running without it: "
                  "timedatectl and other D-Bus clients do not reach this daemon until that owner "
                  "releases the name, which then passes to this daemon.", TIMESYNC_NAME, owner);
        return 0;
}

/* The name is requested with queueing: while another process owns it, the bus daemon keeps us
 * in its queue and hands the name over (NameAcquired) when that process releases it or exits.
 * Nothing to poll or retry, and the connection stays, so the taken name is one error, not a
 * reconnection loop (the request without queueing failed, and sd-bus then closed the
 * connection: "Lost the connection" every 2 seconds). */
static int on_request_name(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        uint32_t ret;
        int r;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);

                log_error("Cannot own the bus name %s (%s). Running without it: timedatectl and other "
                          "D-Bus clients do not reach this daemon.", TIMESYNC_NAME,
                          e && e->message ? e->message : "unknown error");
                return 0;
        }

        r = sd_bus_message_read(reply, "u", &ret);
        if (r < 0)
                return log_debug_errno(r, "Failed to read the answer to RequestName(), ignoring: %m");

        switch (ret) {
        case DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER:
        case DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER:
                log_debug("Acquired the bus name %s.", TIMESYNC_NAME);
                return 0;
        case DBUS_REQUEST_NAME_REPLY_IN_QUEUE:
                m->bus->name_queued = true;
                /* Who owns it, for the one error; the error is logged whatever the answer. */
                r = sd_bus_call_method_async(sd_bus_message_get_bus(reply), NULL, "org.freedesktop.DBus",
                                             "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                             "GetConnectionUnixProcessID", on_name_owner_pid, m, "s",
                                             TIMESYNC_NAME);
                if (r < 0)
                        log_error("The bus name %s is owned by another process. Running without it.",
                                  TIMESYNC_NAME);
                return 0;
        default:
                log_error("Unexpected answer %" PRIu32 " to the request for the bus name %s. Running without it.",
                          ret, TIMESYNC_NAME);
                return 0;
        }
}

static int on_name_acquired(sd_bus_message *message, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const char *name;

        if (sd_bus_message_read(message, "s", &name) < 0 || !streq(name, TIMESYNC_NAME))
                return 0;

        if (m->bus->name_queued)
                log_info("Acquired the bus name %s: its previous owner released it.", TIMESYNC_NAME);
        m->bus->name_queued = false;
        return 0;
}

static int on_bus_wait_check(sd_event_source *es, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->bus->event_wait = sd_event_source_disable_unref(m->bus->event_wait);
        if (m->bus->connected || m->bus->waiting)
                return 0;
        log_notice("System bus not available yet, waiting for it to appear.");
        m->bus->waiting = true;
        return 0;
}

/* A bus that is there is ready within milliseconds; one that is not yet there is said once,
 * after a moment, and its appearance too (on_bus_connected()). */
static int manager_schedule_bus_wait_check(Manager *m) {
        int r;

        m->bus->event_wait = sd_event_source_disable_unref(m->bus->event_wait);
        r = sd_event_add_time_relative(m->event, &m->bus->event_wait, CLOCK_BOOTTIME, BUS_RECONNECT_USEC,
                                       USEC_PER_SEC, on_bus_wait_check, m);
        if (r < 0)
                log_debug_errno(r, "Failed to arm the check of the bus connection, ignoring: %m");
        return 0;
}

static int on_bus_connected(sd_bus_message *message, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;

        m->bus->event_wait = sd_event_source_disable_unref(m->bus->event_wait);
        if (m->bus->waiting)
                log_info("Connected to the system bus.");
        else
                log_debug("Connected to the system bus.");
        m->bus->waiting = false;
        m->bus->connected = true;

        /* Nothing was sent before this point (manager_bus_ready()): one signal says all that may
         * have changed meanwhile, for listeners that were there before us. */
        memset(m->bus->announced, 0, sizeof(m->bus->announced));
        (void) manager_bus_emit_changed(m, "ServerName", "ServerAddress", "NTPMessage", "PollIntervalUSec", "Frequency",
                                        "NTSAuthenticated", "NTSKeyExchangeServer", "NTSAEAD", "NTSCookies", "NTSStatus",
                                        "NTSKeyExchangeFailures", "NTSLastKeyExchangeTimestamp", "LinkNTPServers",
                                        "RuntimeNTPServers", "RuntimeNTSServers", "NTS", "NTSKeyExchangeServers", NULL);
        manager_bus_sources_changed(m);
        return 0;
}

int manager_bus_add_objects(sd_bus *bus, Manager *m) {
        int r;

        r = sd_bus_add_object_vtable(bus, NULL, TIMESYNC_PATH, TIMESYNC_INTERFACE, manager_vtable, m);
        if (r < 0)
                return r;
        return sd_bus_add_object_vtable(bus, NULL, LOG_CONTROL_PATH, LOG_CONTROL_INTERFACE, log_control_vtable, m);
}

/* The system bus as sd_bus_open_system() would connect to it, except that a socket that is not
 * there yet (early boot, a bus restarting, a container without one) is waited for by inotify
 * (watch_bind) rather than by trying again and again: no wakeup while there is no bus. */
static int bus_open_system_watched(sd_bus **ret) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        const char *address;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        address = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: "unix:path=/run/dbus/system_bus_socket";
        r = sd_bus_set_address(bus, address);
        if (r < 0)
                return r;
        r = sd_bus_set_bus_client(bus, true);
        if (r < 0)
                return r;
        r = sd_bus_set_trusted(bus, false);
        if (r < 0)
                return r;
        r = sd_bus_set_watch_bind(bus, true);
        if (r < 0)
                return r;
        r = sd_bus_set_connected_signal(bus, true);
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

static int manager_try_connect_bus(Manager *m) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = bus_open_system_watched(&bus);
        if (r < 0)
                return r;

        /* A bus restart must not end the daemon. */
        r = sd_bus_set_exit_on_disconnect(bus, false);
        if (r < 0)
                return r;

        r = manager_bus_add_objects(bus, m);
        if (r < 0)
                return r;

        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                "org.freedesktop.DBus.Local", "Disconnected", on_bus_disconnected, m);
        if (r < 0)
                return r;

        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                "org.freedesktop.DBus.Local", "Connected", on_bus_connected, m);
        if (r < 0)
                return r;

        /* Asynchronous: a synchronous AddMatch would block until the bus is there. */
        r = sd_bus_match_signal_async(bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                      "org.freedesktop.DBus", "NameAcquired", on_name_acquired, NULL, m);
        if (r < 0)
                return r;

        r = sd_bus_request_name_async(bus, NULL, TIMESYNC_NAME, SD_BUS_NAME_QUEUE, on_request_name, m);
        if (r < 0)
                return r;

        r = sd_bus_attach_event(bus, m->event, 0);
        if (r < 0)
                return r;

        m->bus->connection = TAKE_PTR(bus);
        m->bus->name_queued = false;
        m->bus->connected = false;
        return manager_schedule_bus_wait_check(m);
}

static int on_bus_reconnect(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        m->bus->event_reconnect = sd_event_source_disable_unref(m->bus->event_reconnect);

        r = manager_try_connect_bus(m);
        if (r < 0) {
                log_debug_errno(r, "System bus still not available: %m");
                return manager_schedule_bus_reconnect(m);
        }
        return 0;
}

static int manager_schedule_bus_reconnect(Manager *m) {
        int r;

        if (m->bus->event_reconnect)
                return 0;

        r = sd_event_add_time_relative(m->event, &m->bus->event_reconnect, CLOCK_BOOTTIME, BUS_RECONNECT_USEC,
                                       USEC_PER_SEC, on_bus_reconnect, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm bus reconnection timer: %m");
        return 0;
}

void manager_bus_check(Manager *m) {
        assert(m);

        /* No bus and no reconnection armed: arming it failed (ENOMEM). Try once now. */
        if (m->bus->connection || m->bus->event_reconnect || !m->bus->wanted)
                return;
        if (manager_try_connect_bus(m) < 0)
                (void) manager_schedule_bus_reconnect(m);
}

int manager_bus_connect(Manager *m) {
        int r;

        assert(m);

        m->bus->wanted = true;
        r = manager_try_connect_bus(m);
        if (r >= 0)
                return 0;

        /* Started before dbus (early boot) or without a bus at all: keep syncing and keep
         * trying, the bus is a window on the daemon, not a need. */
        log_notice_errno(r, "System bus not available (%m), will retry.");
        return manager_schedule_bus_reconnect(m);
}

int manager_bus_new(ManagerBus **ret) {
        assert(ret);

        *ret = new0(ManagerBus, 1);
        return *ret ? 0 : -ENOMEM;
}

ManagerBus *manager_bus_free(ManagerBus *b) {
        if (!b)
                return NULL;

        b->event_sources_changed = sd_event_source_disable_unref(b->event_sources_changed);
        b->event_reconnect = sd_event_source_disable_unref(b->event_reconnect);
        b->event_wait = sd_event_source_disable_unref(b->event_wait);
        sd_bus_flush_close_unref(b->connection);
        return mfree(b);
}

sd_bus *const *manager_bus_connection(const ManagerBus *b) {
        assert(b);
        return &b->connection;
}
