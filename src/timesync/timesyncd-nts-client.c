/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "crypto-util.h"
#include "iovec-util.h"
#include "log.h"
#include "nts-crypto.h"
#include "nts-ke-client.h"
#include "nts-pool.h"
#include "nts-tls.h"
#include "resolve-util.h"
#include "socket-address.h"
#include "ssl-util.h"
#include "string-util.h"
#include "timesyncd-backoff.h"
#include "timesyncd-clock.h"
#include "timesyncd-nts-client-internal.h"
#include "timesyncd-messages.h"

/* At most this many addresses of one KE server are tried in one exchange. */
#define NTS_KE_MAX_ADDRESSES 16

void nts_client_remember_peer(NTSClient *c) {
        c->ke_peer = c->jar.ke_peer;
        c->has_ke_key = c->jar.has_ke_key;
        memcpy(c->ke_key_sha256, c->jar.ke_key_sha256, sizeof c->ke_key_sha256);
}

static bool nts_client_has_keys(const NTSClient *c) {
        return nts_jar_usable(&c->jar) && c->c2s && c->s2c;
}

/* The renewal starts at the CLOCK_REALTIME time at, by its own timer: with the next request
 * it could come a poll interval (up to 2048 s) late, and the requests of clients restarted
 * together go out in step, so their renewals would too (docs/POOLS.md). The timer is an
 * absolute CLOCK_REALTIME one in sd-event (a timerfd with TFD_TIMER_ABSTIME): it fires when
 * the wall clock reaches the time, also when the clock was stepped in between. The limit it
 * comes before is a wall-clock age (nts_jar_expired()), so following the steps is what keeps
 * the renewal before it, and no clock-change handler needs to re-arm it. Should arming fail,
 * the first request after the time starts the renewal instead (nts_client_seal()). */
static void nts_client_arm_renewal(NTSClient *c, usec_t at) {
        int r;

        c->renew_realtime = at;
        r = sd_event_source_set_time(c->renew_timer, at);
        if (r >= 0)
                r = sd_event_source_set_enabled(c->renew_timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_debug_errno(r, "Failed to arm the NTS key renewal timer of %s, renewing with a request instead: %m",
                                c->server);
}

/* The keys of the jar are renewed at a random time in the last day before their age limit, so
 * that clients that got them together do not come back together (docs/POOLS.md). */
void nts_client_schedule_renewal(NTSClient *c) {
        nts_client_arm_renewal(c, backoff_renewal_time(c->jar.ke_realtime, now(CLOCK_REALTIME), NTS_JAR_MAX_AGE_USEC,
                                                       BACKOFF_RENEW_WINDOW_USEC, backoff_random, NULL));
}

/* A renewal failed or was postponed (BACKING_OFF, the retry at ke_retry_after): the keys in the
 * jar serve on, and the renewal is tried again at the retry time (t: CLOCK_BOOTTIME now). */
static void nts_client_renewal_postponed(NTSClient *c, usec_t t) {
        if (nts_client_has_keys(c))
                nts_client_arm_renewal(c, usec_add(now(CLOCK_REALTIME),
                                                   c->ke_retry_after > t ? c->ke_retry_after - t : 0));
}

/* Starts a key exchange while the keys in the jar still serve every request: they are
 * replaced when it succeeds (nts_client_take_result()); when it fails, they serve on until its
 * retry (nts_client_renewal_postponed()), and never past their limit (nts_client_seal()). */
static void nts_client_renew(NTSClient *c) {
        usec_t t = now(CLOCK_REALTIME);

        log_info("Renewing the NTS keys of %s, %s old: a new key exchange at a random time in the last "
                 "%s before their limit of %s.", c->server,
                 FORMAT_TIMESPAN(t - MIN(c->jar.ke_realtime, t), USEC_PER_MINUTE),
                 FORMAT_TIMESPAN(BACKOFF_RENEW_WINDOW_USEC, USEC_PER_SEC),
                 FORMAT_TIMESPAN(NTS_JAR_MAX_AGE_USEC, USEC_PER_SEC));
        (void) nts_client_start_ke(c);
}

/* The renewal time came, or after a renewal that failed its retry time. Nothing to do when the
 * keys are gone (a key exchange runs or backs off for other reasons, and reports). */
static int nts_client_on_renewal_time(sd_event_source *s, uint64_t usec, void *userdata) {
        NTSClient *c = userdata;

        if (!nts_client_has_keys(c) || !IN_SET(c->state, NTS_CLIENT_READY, NTS_CLIENT_BACKING_OFF))
                return 0;
        /* A retry time is on CLOCK_BOOTTIME: a clock stepped forward brought this one early. */
        if (c->state == NTS_CLIENT_BACKING_OFF && nts_client_backing_off(c)) {
                nts_client_renewal_postponed(c, now(CLOCK_BOOTTIME));
                return 0;
        }
        nts_client_renew(c);
        return 0;
}

int nts_client_load_libraries(void) {
        /* The loader's own message (which file, why) only at debug level: the caller says what
         * it means for the daemon. */
        return dlopen_libssl(LOG_DEBUG);
}

/* ---- the state ---- */

/* Every change of the state goes through here, along the transitions of
 * nts_client_state_transition_allowed(). What a state waits for (the resolver query, the
 * session, the retry time) the caller has set up. */
void nts_client_enter(NTSClient *c, NTSClientState state) {
        assert(nts_client_state_transition_allowed(c->state, state));

        if (c->state != state)
                log_debug("NTS client of %s: %s -> %s.", c->server, nts_client_state_to_string(c->state),
                          nts_client_state_to_string(state));
        c->state = state;
}

NTSClientState nts_client_state(const NTSClient *c) {
        assert(c);
        return c->state;
}

/* ---- reports ---- */

/* One event per loop iteration, in the order of NTSClientEvent: the handler may free the client, so
 * calling it is the last thing done here. */
static int nts_client_on_report(sd_event_source *s, void *userdata) {
        NTSClient *c = userdata;
        NTSClientEvent e = __builtin_ctz(c->pending_events);

        c->pending_events &= ~(1U << e);
        if (c->pending_events != 0)
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        c->handler(c, e, c->userdata);
        return 0;
}

/* Reports e on the next loop iteration: what happens inside a call of the owner must not call
 * the owner back while it is in that call. */
void nts_client_report(NTSClient *c, NTSClientEvent e) {
        c->pending_events |= 1U << e;
        (void) sd_event_source_set_enabled(c->event_report, SD_EVENT_ONESHOT);
}

/* ---- keys and the state file ---- */

void nts_client_forget_keys(NTSClient *c) {
        c->bootstrap = NTS_CLIENT_BOOTSTRAP_NONE;
        c->member_address = (SocketAddress) {};
        c->c2s = NTS_aead_free(c->c2s);
        c->s2c = NTS_aead_free(c->s2c);
        nts_jar_done(&c->jar);
        c->query_pending = false;
        (void) sd_event_source_set_enabled(c->renew_timer, SD_EVENT_OFF);
}

int nts_client_make_contexts(NTSClient *c) {
        int r;

        c->c2s = NTS_aead_free(c->c2s);
        c->s2c = NTS_aead_free(c->s2c);

        r = NTS_aead_new(c->jar.aead, &IOVEC_MAKE(c->jar.c2s, c->jar.key_size), &c->c2s);
        if (r < 0)
                return r;
        return NTS_aead_new(c->jar.aead, &IOVEC_MAKE(c->jar.s2c, c->jar.key_size), &c->s2c);
}

/* ---- life cycle ---- */

int nts_client_new(const NTSClientSettings *settings, const char *server, const char *host, uint16_t port,
                   nts_client_handler_t handler, void *userdata, NTSClient **ret) {
        _cleanup_(nts_client_freep) NTSClient *c = NULL;
        int r;

        assert(settings);
        assert(server);
        assert(host);
        assert(handler);
        assert(ret);

        c = new0(NTSClient, 1);
        if (!c)
                return -ENOMEM;

        c->settings = settings;
        c->handler = handler;
        c->userdata = userdata;
        c->port = port;
        backoff_limit_init(&c->ke_limit, BACKOFF_LIMIT_DEFAULT, BACKOFF_LIMIT_PERIOD_USEC);
        c->server = strdup(server);
        c->host = strdup(host);
        if (!c->server || !c->host)
                return -ENOMEM;
        /* Where its key exchanges go, shown also while its keys are resumed from the state file
         * and none ran yet. */
        if (asprintf(&c->ke_address, "%s:%u", host, port ?: NTS_KE_PORT) < 0) {
                c->ke_address = NULL;
                return -ENOMEM;
        }

        r = sd_event_add_defer(settings->event, &c->event_report, nts_client_on_report, c);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(c->event_report, SD_EVENT_OFF);
        if (r < 0)
                return r;
        r = sd_event_add_time(settings->event, &c->renew_timer, CLOCK_REALTIME, 0, 0,
                              nts_client_on_renewal_time, c);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(c->renew_timer, SD_EVENT_OFF);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(c);
        return 0;
}

NTSClient *nts_client_free(NTSClient *c) {
        if (!c)
                return NULL;

        nts_client_save(c);

        c->event_report = sd_event_source_disable_unref(c->event_report);
        c->resolve = resolve_query_free(c->resolve);
        c->ke = NTS_ke_client_free(c->ke);
        nts_client_leave_pool(c);
        nts_client_forget_keys(c);
        c->renew_timer = sd_event_source_disable_unref(c->renew_timer);
        explicit_bzero_safe(&c->query, sizeof c->query);
        free(c->named_ntp_server);
        free(c->ke_address);
        free(c->state_path);
        free(c->state_name);
        free(c->server);
        free(c->host);
        return mfree(c);
}

/* ---- key exchange ---- */

/* A key exchange failed (or its fresh cookies were refused): the next one after a random wait
 * on the ladder, at its top at once for a server that refuses what we send (outcome). */
void nts_client_ke_failed(NTSClient *c, BackoffOutcome outcome, const char *reason) {
        usec_t t = now(CLOCK_BOOTTIME), wait;

        nts_client_pool_ke_ended(c);

        wait = backoff_ke_failed(&c->ke_ladder, outcome, t, c->settings->retry_usec, BACKOFF_KE_MAX_USEC,
                                 backoff_random, NULL);
        c->ke_retry_after = t + wait;
        if (c->ke_failures < UINT_MAX)
                c->ke_failures++;
        nts_client_enter(c, NTS_CLIENT_BACKING_OFF);
        nts_client_renewal_postponed(c, t);

        snprintf(c->last_error, sizeof c->last_error, "%s", reason);
        c->last_error_realtime = now(CLOCK_REALTIME);
        c->last_error_logged = true;
        /* The TLS layer's verification errors all say "certificate" (nts-tls.c). */
        log_struct(LOG_WARNING,
                   strstr(reason, "certificate") ? TIMESYNC_MESSAGE_NTS_CERTIFICATE : TIMESYNC_MESSAGE_NTS_KE_FAILED,
                   ((const char *const[]) { "NTS_SERVER", c->server, "NTS_ADDRESS", c->ke_address, "NTS_ERROR",
                                            reason, NULL }),
                   "NTS key exchange with %s failed: %s. Trying again in %s at the earliest.", c->server, reason,
                   FORMAT_TIMESPAN(wait, USEC_PER_MSEC));
        nts_client_report(c, NTS_CLIENT_EVENT_KE_FAILED);
}

/* Takes the keys, cookies and NTP server of a successful exchange. */
static int nts_client_take_result(NTSClient *c, const NTS_KEResult *result) {
        char addr[SOCKET_ADDRESS_STRING_MAX];

        nts_client_forget_keys(c);
        c->jar.aead = result->aead;
        c->jar.key_size = result->c2s_key.iov_len;
        memcpy(c->jar.c2s, result->c2s_key.iov_base, c->jar.key_size);
        memcpy(c->jar.s2c, result->s2c_key.iov_base, c->jar.key_size);
        c->jar.ke_realtime = now(CLOCK_REALTIME);
        c->jar.ntp_port = result->ntp_port;
        c->jar.ke_peer = result->address;
        c->jar.has_ke_key = result->tls.has_key_sha256;
        assert_cc(sizeof c->jar.ke_key_sha256 == sizeof result->tls.key_sha256);
        memcpy(c->jar.ke_key_sha256, result->tls.key_sha256, sizeof c->jar.ke_key_sha256);
        c->jar.binding = c->ke_binding;
        /* RFC 8915 section 4.1.7: without a Server record, NTP goes to the address of the KE
         * server that answered, not to whatever its name resolves to next time. */
        c->jar.ntp_server = result->ntp_server ? strdup(result->ntp_server)
                                               : strdup(socket_address_host_to_string(&result->address, addr));
        for (size_t i = 0; i < result->n_cookies; i++)
                if (nts_jar_add_cookie(&c->jar, &result->cookies[i]) < 0)
                        break;

        return c->jar.ntp_server ? nts_client_make_contexts(c) : -ENOMEM;
}

static void nts_client_on_ke_done(NTS_KEClient *ke, NTS_KEResult *result, void *userdata) {
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *res = result;
        NTSClient *c = userdata;
        char addr[SOCKET_ADDRESS_STRING_MAX];

        c->ke = NTS_ke_client_free(ke);

        if (res->error < 0) {
                char reason[512];

                snprintf(reason, sizeof reason, "%s", res->reason);
                if (nts_client_may_bootstrap(c, res, reason, sizeof reason)) {
                        (void) nts_client_ke_begin(c);
                        return;
                }
                c->bootstrap_attempt = NTS_CLIENT_BOOTSTRAP_NONE;
                /* Error records say how soon to come back (timesyncd-backoff.h). */
                nts_client_ke_failed(c, res->stage == NTS_KE_STAGE_PROTOCOL ?
                                     backoff_outcome_from_nts_error(res->nts_error) : BACKOFF_KE_FAILED, reason);
                return;
        }

        /* A pool's answer must name a member that no other source of the pool uses, and none
         * that was turned down: checked by name before anything of it is used (by address once
         * the name is resolved, nts_client_pool_claim_address()). */
        if (c->pool) {
                NTS_PoolVerdict v = nts_client_pool_judge(c, res->ntp_server, NULL);

                if (v != NTS_POOL_NEW) {
                        nts_client_pool_fruitless(c, v, res->ntp_server);
                        return;
                }
        }

        if (nts_client_take_result(c, res) < 0) {
                nts_client_forget_keys(c);
                c->bootstrap_attempt = NTS_CLIENT_BOOTSTRAP_NONE;
                nts_client_ke_failed(c, BACKOFF_KE_FAILED, "out of memory or AEAD unusable after key exchange");
                return;
        }

        c->bootstrap = c->bootstrap_attempt;
        c->bootstrap_attempt = NTS_CLIENT_BOOTSTRAP_NONE;
        c->chain_valid_from = res->tls.valid_from;
        c->chain_valid_until = res->tls.valid_until;
        nts_client_remember_peer(c);
        c->cookies_unproven = true;
        c->ke_retry_after = 0;
        c->last_error[0] = '\0';
        c->last_error_realtime = 0;
        c->last_error_logged = false;
        c->last_ke_realtime = c->jar.ke_realtime;
        c->member_failures = 0;
        nts_client_schedule_renewal(c);
        nts_client_enter(c, NTS_CLIENT_READY);

        log_info("NTS key exchange with %s (%s) done: %s, %zu cookies, NTP server %s port %u.", c->server,
                 socket_address_to_string(&res->address, addr), strna(NTS_aead_name(c->jar.aead)),
                 c->jar.n_cookies, c->jar.ntp_server, c->jar.ntp_port ?: NTP_PORT);
        nts_client_pool_ke_ended(c);

        nts_client_report(c, NTS_CLIENT_EVENT_KEYS);
}

/* Up to NTS_KE_MAX_ADDRESSES IPv4 and IPv6 addresses of ai, in order. */
static size_t nts_client_ke_addresses(const struct addrinfo *ai, SocketAddress *addresses, size_t n_max) {
        size_t n = 0;

        for (; ai && n < n_max; ai = ai->ai_next)
                if (IN_SET(ai->ai_family, AF_INET, AF_INET6) && ai->ai_addrlen <= sizeof(addresses[n].sa)) {
                        memcpy(&addresses[n].sa, ai->ai_addr, ai->ai_addrlen);
                        addresses[n].len = ai->ai_addrlen;
                        n++;
                }
        return n;
}

/* What a key exchange trusts: NTSTrustedCertificates= as a file or a directory, or the
 * system's store without it. -ENOENT when the configured path does not exist. */
static int nts_client_trust(NTSClient *c, NTS_TLSOptions *tls) {
        const char *ca = c->settings->trusted_certificates;
        struct stat st;

        if (!ca)
                return 0;
        if (stat(ca, &st) < 0)
                return -ENOENT;
        if (S_ISDIR(st.st_mode))
                tls->ca_dir = ca;
        else
                tls->ca_file = ca;
        return 0;
}

/* What a key exchange would be bound to now (NTSJarBinding). A NTSTrustedCertificates= that
 * does not exist is digested as a file that cannot be read: it trusts nothing. */
int nts_client_binding(NTSClient *c, NTSJarBinding *ret) {
        NTS_AEADAlgorithm offer[8];
        NTS_TLSOptions tls = {};
        _cleanup_free_ char *ke = NULL;
        char aead[ELEMENTSOF(offer) * sizeof " 65535"] = "";
        unsigned len = 0;
        int r, n_offer;

        if (nts_client_trust(c, &tls) < 0)
                tls.ca_file = c->settings->trusted_certificates;
        r = NTS_tls_trust_sha256(&tls, ret->trust_sha256);
        if (r < 0)
                return r;

        n_offer = NTS_aead_offer(offer, ELEMENTSOF(offer));
        if (n_offer < 0)
                return n_offer;
        for (int i = 0; i < n_offer; i++)
                snprintf(aead + strlen(aead), sizeof aead - strlen(aead), " %u", (unsigned) offer[i]);
        if (asprintf(&ke, "host %s port %u aead%s", c->host, c->port ?: NTS_KE_PORT, aead) < 0)
                return -ENOMEM;
        if (sym_EVP_Digest(ke, strlen(ke), ret->ke_sha256, &len, sym_EVP_sha256(), NULL) != 1 ||
            len != sizeof ret->ke_sha256)
                return -EIO;
        return 0;
}

bool nts_client_binding_current(NTSClient *c) {
        NTSJarBinding now;
        const char *why;
        int r;

        assert(c);

        if (!nts_client_has_keys(c))
                return true;
        r = nts_client_binding(c, &now);
        if (r < 0) {
                log_debug_errno(r, "Cannot tell what the NTS keys of %s would be bound to now, taking them as "
                                "bound to other settings: %m", c->server);
                return false;
        }
        why = nts_jar_binding_mismatch(&c->jar, &now);
        if (why)
                log_debug("NTS keys of %s: %s.", c->server, why);
        return !why;
}

/* Starts the session with the addresses of the KE server; on failure, reason says why. */
static int nts_client_start_session(NTSClient *c, const SocketAddress *addresses, size_t n, char *reason,
                                    size_t size) {
        NTS_AEADAlgorithm offer[8];
        char *deny[NTS_KE_MAX_DENIED_SERVERS];
        struct timespec now_ts;
        size_t n_deny = 0;
        int r, n_offer;

        n_offer = NTS_aead_offer(offer, ELEMENTSOF(offer));
        if (n_offer < 0) {
                snprintf(reason, size, "libcrypto cannot be used");
                return n_offer;
        }

        /* Validity periods are checked against the clock the daemon disciplines: CLOCK_REALTIME
         * (what OpenSSL would use anyway), or in tests the fake clock of --test-clock-offset=,
         * so that a fake clock years behind meets "not yet valid" as a real one would. */
        if (clock_backend_now(c->settings->clock, &now_ts) < 0)
                now_ts = (struct timespec) {};

        if (c->pool) {
                n_deny = nts_client_pool_deny(c, deny);
                for (size_t i = 0; i < n_deny; i++)
                        log_debug("NTS key exchange with %s denies pool member %s.", c->server, deny[i]);
        }

        NTS_KEClientParams p = {
                .addresses = addresses,
                .n_addresses = n,
                .tls = {
                        .hostname = c->host,
                        .verify_time = now_ts.tv_sec,
                        .no_verify_time = c->bootstrap_attempt != NTS_CLIENT_BOOTSTRAP_NONE,
                },
                .aead = offer,
                .n_aead = (size_t) n_offer,
                .timeout_usec = c->settings->ke_timeout_usec,
                .deny = deny,
                .n_deny = n_deny,
        };

        r = nts_client_trust(c, &p.tls);
        if (r < 0) {
                snprintf(reason, size, "NTSTrustedCertificates=%s does not exist", c->settings->trusted_certificates);
                return r;
        }

        /* What the keys will be bound to, taken before the session reads any of it. */
        r = nts_client_binding(c, &c->ke_binding);
        if (r < 0) {
                snprintf(reason, size, "cannot digest the trusted certificates: %s", strerror(-r));
                return r;
        }

        r = NTS_ke_client_start(c->settings->event, &p, nts_client_on_ke_done, c, &c->ke);
        if (r < 0) {
                snprintf(reason, size, "cannot start: %s", strerror(-r));
                return r;
        }
        nts_client_enter(c, NTS_CLIENT_KEY_EXCHANGE);
        return 0;
}

static void nts_client_on_ke_resolved(ResolveQuery *q, int error, const struct addrinfo *ai, void *userdata) {
        NTSClient *c = userdata;
        SocketAddress addresses[NTS_KE_MAX_ADDRESSES];
        char reason[256];
        size_t n;

        c->resolve = resolve_query_free(c->resolve);

        if (error < 0) {
                snprintf(reason, sizeof reason, "cannot resolve %s: %s", c->host, resolve_error_string(error));
                nts_client_ke_failed(c, BACKOFF_KE_FAILED, reason);
                return;
        }

        n = nts_client_ke_addresses(ai, addresses, ELEMENTSOF(addresses));
        if (n == 0) {
                nts_client_ke_failed(c, BACKOFF_KE_FAILED, "no usable address");
                return;
        }

        if (nts_client_start_session(c, addresses, n, reason, sizeof reason) < 0)
                nts_client_ke_failed(c, BACKOFF_KE_FAILED, reason);
}

/* At most BACKOFF_LIMIT_DEFAULT key exchanges with one server name per hour, whatever asks for
 * them (failures have their own ladder; this holds against everything else: servers that refuse
 * cookies again and again, lost replies that drain the jar, a short ConnectionRetrySec=). A
 * refused start is reported like one that cannot start: the source backs off until one may. */
static int nts_client_take_limit(NTSClient *c) {
        BackoffLimit *l = c->pool ? &c->pool->ke_limit : &c->ke_limit;
        usec_t t = now(CLOCK_BOOTTIME), until;
        bool first;

        if (backoff_limit_take(l, t, &until, &first))
                return 0;

        c->ke_retry_after = until;
        nts_client_enter(c, NTS_CLIENT_BACKING_OFF);
        nts_client_renewal_postponed(c, t);
        c->last_error_logged = false;
        c->last_error_realtime = now(CLOCK_REALTIME);
        snprintf(c->last_error, sizeof c->last_error, "postponed: %u key exchanges with this name within %s already",
                 l->max, FORMAT_TIMESPAN(l->period, USEC_PER_SEC));
        log_full(first ? LOG_NOTICE : LOG_DEBUG,
                 "Postponing the NTS key exchange with %s: %u within %s already, the most one server name gets. "
                 "Next one in %s at the earliest.", c->server, l->max,
                 FORMAT_TIMESPAN(l->period, USEC_PER_SEC), FORMAT_TIMESPAN(until - t, USEC_PER_SEC));
        nts_client_pool_ke_ended(c);
        nts_client_report(c, NTS_CLIENT_EVENT_KE_FAILED);
        return -EBUSY;
}

/* Starts resolving the KE server; the exchange follows. A failure to start is a failed
 * exchange with its backoff, so that something retries. For a caller that knows that no
 * exchange of c runs: one just ended (KEY_EXCHANGE), or its pool's turn came (POOL_WAIT). */
int nts_client_ke_begin(NTSClient *c) {
        char service[8], reason[256];
        int r;

        assert(!c->ke);
        assert(!c->resolve);

        /* One key exchange with a pool at a time: nts_client_pool_next() starts this one when
         * the other ends. */
        if (c->pool && c->pool->ke_running && c->pool->ke_running != c) {
                log_debug("NTS key exchange with %s waits for another source's with the same pool.", c->server);
                nts_client_enter(c, NTS_CLIENT_POOL_WAIT);
                return 0;
        }
        if (c->pool)
                c->pool->ke_running = c;

        if (c->settings->trusted_certificates_invalid) {
                nts_client_ke_failed(c, BACKOFF_KE_FAILED, "NTSTrustedCertificates= has no valid value, and the "
                                     "system's certificate authorities are not trusted instead");
                return -EINVAL;
        }

        r = nts_client_take_limit(c);
        if (r < 0)
                return r;

        snprintf(service, sizeof service, "%u", c->port ?: NTS_KE_PORT);
        free(c->ke_address);
        if (asprintf(&c->ke_address, "%s:%s", c->host, service) < 0)
                c->ke_address = NULL;

        c->pool_exhausted = false;
        log_debug("Starting NTS key exchange with %s.", c->server);
        r = resolve_query_new(c->settings->event, c->host, service, AF_UNSPEC, SOCK_STREAM,
                              nts_client_on_ke_resolved, c, &c->resolve);
        if (r < 0) {
                snprintf(reason, sizeof reason, "cannot start resolving %s: %s", c->host, strerror(-r));
                nts_client_ke_failed(c, BACKOFF_KE_FAILED, reason);
                return r;
        }
        nts_client_enter(c, NTS_CLIENT_RESOLVING);
        return 0;
}

/* A key exchange, unless one runs or waits for its turn already. */
int nts_client_start_ke(NTSClient *c) {
        if (nts_client_state_busy(c->state))
                return 0;
        return nts_client_ke_begin(c);
}

/* ---- the pull interface ---- */

bool nts_client_backing_off(const NTSClient *c) {
        return c && c->ke_retry_after > 0 && now(CLOCK_BOOTTIME) < c->ke_retry_after;
}

bool nts_client_awaiting_reply(const NTSClient *c) {
        return c->query_pending;
}

usec_t nts_client_retry_after(const NTSClient *c) {
        return nts_client_backing_off(c) ? c->ke_retry_after : 0;
}

bool nts_client_retry_now(NTSClient *c) {
        assert(c);

        if (!nts_client_backing_off(c))
                return false;
        log_debug("NTS client of %s: retrying now instead of in %s.", c->server,
                  FORMAT_TIMESPAN(c->ke_retry_after - now(CLOCK_BOOTTIME), USEC_PER_SEC));
        c->ke_retry_after = 0;
        if (nts_client_has_keys(c))
                nts_client_arm_renewal(c, now(CLOCK_REALTIME));
        return true;
}

/* The owner polls the NTP server named here (nts_client_seal() holds it to that). Without
 * memory to remember the name, it is not checked: a renewal that names another server then
 * shows as refused replies, which a NAK and a key exchange end. */
static void nts_client_name_ntp_server(NTSClient *c) {
        if (free_and_strdup(&c->named_ntp_server, c->jar.ntp_server) < 0)
                c->named_ntp_server = mfree(c->named_ntp_server);
        c->named_ntp_port = nts_client_ntp_port(c);
}

NTSClientState nts_client_prepare(NTSClient *c) {
        assert(c);

        nts_client_load(c);
        /* Without keys, or with keys whose renewal failed once its retry time came (the timer
         * may not have fired yet). */
        if ((!nts_client_has_keys(c) || c->state == NTS_CLIENT_BACKING_OFF) && !nts_client_backing_off(c))
                (void) nts_client_start_ke(c);
        assert(c->state != NTS_CLIENT_IDLE);
        if (c->state == NTS_CLIENT_READY)
                nts_client_name_ntp_server(c);
        return c->state;
}

const char *nts_client_ntp_host(const NTSClient *c) {
        return c->jar.ntp_server;
}

uint16_t nts_client_ntp_port(const NTSClient *c) {
        return c->jar.ntp_port ?: NTP_PORT;
}

/* Drops the keys and cookies and starts a key exchange instead of a request: the owner waits
 * for the report of its end. A renewal that failed and backs off reports again at once, since
 * no exchange will. */
static ssize_t nts_client_renew_keys(NTSClient *c) {
        nts_client_forget_keys(c);
        if (c->state == NTS_CLIENT_BACKING_OFF && nts_client_backing_off(c))
                nts_client_report(c, NTS_CLIENT_EVENT_KE_FAILED);
        else
                (void) nts_client_start_ke(c);
        return 0;
}

ssize_t nts_client_seal(NTSClient *c, uint8_t *buf, size_t size) {
        usec_t t = now(CLOCK_REALTIME);
        struct iovec cookie;
        ssize_t l;

        assert(c);
        assert(buf);

        /* The limit holds whatever runs: keys past it are dropped (a renewal that has not
         * ended, or failed, leaves them in the jar), and the request waits for new ones. */
        if (c->c2s && nts_jar_expired(&c->jar, t)) {
                if (nts_client_state_busy(c->state))
                        log_info("NTS keys of %s reached their limit of %s before their renewal ended, "
                                 "no request until it does.", c->server,
                                 FORMAT_TIMESPAN(NTS_JAR_MAX_AGE_USEC, USEC_PER_SEC));
                else
                        log_info("NTS keys of %s are more than %s old, running a new key exchange.",
                                 c->server, FORMAT_TIMESPAN(NTS_JAR_MAX_AGE_USEC, USEC_PER_SEC));
                return nts_client_renew_keys(c);
        }
        /* The renewal timer's safety net (it could not be armed): the first request after the
         * renewal time starts it, and still goes out with the keys in the jar. */
        if (c->c2s && t >= c->renew_realtime && c->state == NTS_CLIENT_READY)
                nts_client_renew(c);
        /* A renewal that ended between two requests got keys for another NTP server than the
         * owner polls (a pool's other member, a server that moved): their cookies are for that
         * server only, so the owner asks again and resolves it first. */
        if (c->c2s && c->named_ntp_server &&
            (!streq_ptr(c->named_ntp_server, c->jar.ntp_server) || c->named_ntp_port != nts_client_ntp_port(c))) {
                log_info("The renewed NTS keys of %s are for NTP server %s port %u, not %s port %u: moving to it.",
                         c->server, strna(c->jar.ntp_server), nts_client_ntp_port(c), c->named_ntp_server,
                         c->named_ntp_port);
                nts_client_report(c, NTS_CLIENT_EVENT_KEYS);
                return 0;
        }

        if (!c->c2s || nts_jar_pop_cookie(&c->jar, &cookie) < 0) {
                /* Every cookie is spent (lost replies): only a new key exchange helps. */
                log_info("No NTS cookies left for %s, running a new key exchange.", c->server);
                return nts_client_renew_keys(c);
        }

        c->query = (NTS_Query) {
                .cookie = cookie,
                /* Ask for enough new cookies to fill the jar again. */
                .n_placeholders = NTS_MAX_COOKIES - 1 - c->jar.n_cookies,
                .c2s = c->c2s,
        };

        l = NTS_add_extension_fields(buf, size, NTP_HEADER_SIZE, &c->query);
        iovec_done_erase(&cookie);
        c->query.cookie = IOVEC_NULL;
        if (l < 0)
                return log_error_errno((int) l, "Failed to build NTS request: %m");

        c->query_pending = true;
        return l;
}

/* The server refused our cookie. Cookies straight from a key exchange refused: another
 * exchange at once would only be refused again, as fast as the server answers. */
static int nts_client_on_nak(NTSClient *c) {
        bool fresh = c->cookies_unproven;

        log_notice("NTS server %s refused our cookie (NTSN), running a new key exchange.", c->server);
        nts_client_forget_keys(c);
        if (fresh)
                nts_client_ke_failed(c, BACKOFF_KE_FAILED, "the server refused the cookies it had just issued (NTSN)");
        else
                (void) nts_client_start_ke(c);
        return -EKEYREJECTED;
}

/* Cookies of a verified reply into the jar (a full jar drops its oldest). */
static void nts_client_take_cookies(NTSClient *c, const NTS_Receipt *receipt) {
        for (size_t i = 0; i < receipt->n_cookies; i++)
                (void) nts_jar_add_cookie(&c->jar, &receipt->cookies[i]);
}

int nts_client_open(NTSClient *c, const uint8_t *buf, size_t size, RefusalCause *ret_cause, const char **ret_reason) {
        uint8_t scratch_buf[NTS_MAX_PACKET_SIZE];
        struct iovec scratch = IOVEC_MAKE(scratch_buf, sizeof scratch_buf);
        NTS_Receipt receipt = {};
        int r;

        assert(c);
        assert(buf);
        assert(ret_cause);
        assert(ret_reason);

        if (!c->query_pending || !c->s2c) {
                /* Keys dropped while the request was out (a new key exchange runs): whatever
                 * the reply says, nothing can verify it. */
                *ret_cause = REFUSAL_NTS_NO_AUTHENTICATOR;
                *ret_reason = "no keys to verify it with (a key exchange is running)";
                return -EAGAIN;
        }

        r = NTS_parse_extension_fields(&IOVEC_MAKE(buf, size), &c->query, c->s2c, &scratch, &receipt);
        if (r < 0) {
                *ret_cause = refusal_cause_from_nts_error(receipt.error);
                if (*ret_cause < 0)
                        *ret_cause = REFUSAL_NTS_BAD_EXTENSION_FIELD;
                *ret_reason = NTS_error_string(receipt.error) ?: "unknown NTS error";
                /* Forged or broken replies are ignored: the real one may still come. */
                return receipt.error == NTS_ERROR_NTP_NAK ? nts_client_on_nak(c) : -EAGAIN;
        }

        nts_client_take_cookies(c, &receipt);
        /* The plaintext (the new cookies) is never longer than the packet it came in: zeroing
         * just that much spares the rest of the 8.5 KiB buffer, which was a seventh of a poll's
         * instructions (callgrind) and all of it cold stack. */
        explicit_bzero_safe(scratch_buf, MIN(size, sizeof scratch_buf));

        log_debug("NTS reply from %s verified: %zu cookies in the jar.", c->server, c->jar.n_cookies);

        c->query_pending = false;
        c->cookies_unproven = false;
        backoff_ke_done(&c->ke_ladder);
        c->ke_failures = 0;
        c->member_failures = 0;
        return 0;
}

/* ---- views ---- */

const char *nts_client_server(const NTSClient *c) {
        return c->server;
}

const SocketAddress *nts_client_ke_peer(const NTSClient *c) {
        return c->ke_peer.sa.ss_family != AF_UNSPEC ? &c->ke_peer : NULL;
}

const uint8_t *nts_client_ke_key_sha256(const NTSClient *c) {
        return c->has_ke_key ? c->ke_key_sha256 : NULL;
}

void nts_client_get_report(const NTSClient *c, NTSClientReport *ret) {
        assert(c);
        assert(ret);

        *ret = (NTSClientReport) {
                .server = c->server,
                .ke_address = c->ke_address ?: c->server,
                .aead = c->jar.key_size > 0 ? NTS_aead_name(c->jar.aead) : NULL,
                .cookies = c->jar.n_cookies,
                .last_ke_realtime = nts_client_last_ke_realtime(c),
                .ke_failures = c->ke_failures,
                .bootstrap = nts_client_bootstrap(c),
                .last_error = c->last_error,
                .last_error_realtime = c->last_error_realtime,
        };
}

usec_t nts_client_last_ke_realtime(const NTSClient *c) {
        /* Keys resumed from the state file come from a key exchange of an earlier run. */
        return c->last_ke_realtime ?: c->jar.key_size > 0 ? c->jar.ke_realtime : 0;
}

const char *nts_client_last_error(const NTSClient *c) {
        return c->last_error;
}

bool nts_client_last_error_logged(const NTSClient *c) {
        return c->last_error_logged;
}
