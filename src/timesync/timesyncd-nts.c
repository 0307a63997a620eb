/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "iovec-util.h"
#include "log.h"
#include "nts_crypto.h"
#include "socket-address.h"
#include "ssl-util.h"
#include "timesyncd-bus.h"
#include "timesyncd-clockfile.h"
#include "timesyncd-manager.h"
#include "timesyncd-nts.h"

/* At most this many addresses of one KE server are tried in one exchange. */
#define NTS_KE_MAX_ADDRESSES 16

bool manager_nts_enabled(Manager *m) {
        return m->nts_servers || m->nts_runtime_servers || m->config.nts_set || m->config.nts_required;
}

int manager_nts_prepare(Manager *m) {
        int r;

        if (!manager_nts_enabled(m))
                return 0;
        /* NTSRequired= and no server yet: nothing to load until one is set at runtime. */
        if (!m->nts_servers && !m->nts_runtime_servers && !m->config.nts_set)
                return 0;

        log_info("NTS servers are configured: time comes only from them; NTP=, FallbackNTP= and "
                 "per-link servers are not used.");

        /* The loader's own message (which file, why) only at debug level: the one error below
         * is what the administrator needs to read. */
        r = dlopen_libssl(LOG_DEBUG);
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

/* ---- state and its file ---- */

int nts_state_new(ServerName *n, NTSState **ret) {
        NTSState *s;

        assert(n);
        assert(ret);

        s = new0(NTSState, 1);
        if (!s)
                return -ENOMEM;
        s->name = n;
        *ret = s;
        return 0;
}

static void nts_state_forget_keys(NTSState *s) {
        s->bootstrap = false;
        s->c2s = NTS_aead_free(s->c2s);
        s->s2c = NTS_aead_free(s->s2c);
        nts_jar_done(&s->jar);
        s->n_withheld = 0;
        s->n_listed = 0;
        s->query_pending = false;
        s->authenticated = false;
}

static int nts_state_save(Manager *m, NTSState *s, size_t n_withhold, bool must_unlist);

NTSState *nts_state_free(NTSState *s) {
        if (!s)
                return NULL;

        /* The cookies of the last replies are saved only with a later request (see
         * manager_nts_verify_reply()), and the withheld ones not at all: keep every unspent
         * cookie when we stop or the server goes away. */
        if ((s->jar_dirty || s->n_withheld > 0) && s->name && s->name->manager)
                (void) nts_state_save(s->name->manager, s, 0, false);

        s->resolve = resolve_query_free(s->resolve);
        s->ke = NTS_ke_client_free(s->ke);
        nts_state_forget_keys(s);
        explicit_bzero_safe(&s->query, sizeof s->query);
        free(s->ke_address);
        free(s->state_path);
        return mfree(s);
}

bool nts_state_backing_off(const NTSState *s) {
        return s && s->ke_retry_after > 0 && now(CLOCK_BOOTTIME) < s->ke_retry_after;
}

static int nts_state_make_contexts(NTSState *s) {
        int r;

        s->c2s = NTS_aead_free(s->c2s);
        s->s2c = NTS_aead_free(s->s2c);

        r = NTS_aead_new(s->jar.aead, &IOVEC_MAKE(s->jar.c2s, s->jar.key_size), &s->c2s);
        if (r < 0)
                return r;
        return NTS_aead_new(s->jar.aead, &IOVEC_MAKE(s->jar.s2c, s->jar.key_size), &s->s2c);
}

/* One warning per cause and NTS_STATE_LOG_INTERVAL_USEC: the same failure again only at debug
 * level. A cause is the error of the write, and that of a removal when one failed too: a plain
 * failed write after a failed removal of the same file is no news. */
_printf_(4, 5)
static void nts_state_log_failure(NTSState *s, int save_error, int remove_error, const char *format, ...) {
        usec_t t = now(CLOCK_BOOTTIME);
        bool warn = save_error != s->save_error || (remove_error != 0 && remove_error != s->remove_error) ||
                    s->save_logged == 0 || t >= s->save_logged + NTS_STATE_LOG_INTERVAL_USEC;
        int level = warn ? LOG_WARNING : LOG_DEBUG;
        va_list ap;

        if (log_get_max_level() >= level) {
                va_start(ap, format);
                (void) log_internalv(level, 0, __FILE__, __LINE__, __func__, format, ap);
                va_end(ap);
        }

        if (warn) {
                s->save_error = save_error;
                if (remove_error != 0)
                        s->remove_error = remove_error;
                s->save_logged = t;
                s->save_announced = true;
        }
}

/* Makes the state file hold the jar without its n_withhold oldest cookies; a jar without keys
 * or cookies removes the file. must_unlist: the file lists the cookie about to be sent (taken out
 * of the jar already), so if it cannot be written it is removed instead. Returns negative errno
 * only then, when it could be neither written nor removed: that cookie must not be sent. */
static int nts_state_save(Manager *m, NTSState *s, size_t n_withhold, bool must_unlist) {
        char reason[NTS_JAR_REASON_MAX] = "";
        int r, q;

        assert(n_withhold <= s->jar.n_cookies);

        s->jar_dirty = false;

        /* No state directory or file name (logged at load), or keys from a bootstrap exchange,
         * which are only good for one step of the clock: nothing is saved, so no cookie of the
         * jar is in a file. */
        if (!s->state_path || s->bootstrap) {
                assert(s->n_listed == 0);
                s->n_withheld = s->jar.n_cookies;
                return 0;
        }

        /* The file gets the jar without its n_withhold oldest cookies: a view, not a copy. */
        NTSJar view = s->jar;
        memmove(view.cookies, view.cookies + n_withhold, (view.n_cookies - n_withhold) * sizeof view.cookies[0]);
        view.n_cookies -= n_withhold;

        if (!nts_jar_usable(&view)) {
                if (unlink(s->state_path) >= 0 || errno == ENOENT)
                        return 0;
                r = -errno;
                if (must_unlist) {
                        nts_state_log_failure(s, r, r,
                                              "Failed to remove NTS state file %s: %s. The cookies it lists are not "
                                              "sent (each cookie only once, RFC 8915 section 5.7).",
                                              s->state_path, strerror(-r));
                        return r;
                }
                /* What it lists was never sent (the rule in NTSState): harmless, and a later write
                 * replaces it. */
                nts_state_log_failure(s, r, r, "Failed to remove NTS state file %s: %s.", s->state_path,
                                      strerror(-r));
                return 0;
        }

        r = nts_jar_save(&view, s->name->string, s->state_path, reason, sizeof reason);
        if (r >= 0) {
                if (s->save_announced)
                        log_info("Saved NTS cookies to %s again.", s->state_path);
                s->save_announced = false;
                s->n_withheld = n_withhold;
                s->n_listed = view.n_cookies;
                return 0;
        }

        if (!must_unlist) {
                /* The file is as it was, and lists no cookie that was sent. With none of the
                 * jar's in it, the next write is due once they are spent, not at the next
                 * request. */
                if (s->n_listed == 0)
                        s->n_withheld = s->jar.n_cookies;
                nts_state_log_failure(s, r, 0,
                                      "Failed to save NTS cookies to %s: %s. The cookies are not kept across a "
                                      "restart until it can be written.", s->state_path, reason);
                return 0;
        }

        /* Removing needs no free space and no temporary file: it works where the write failed
         * for want of either. */
        if (unlink(s->state_path) >= 0 || errno == ENOENT) {
                s->n_withheld = s->jar.n_cookies;
                s->n_listed = 0;
                nts_state_log_failure(s, r, 0,
                                      "Failed to save NTS cookies to %s: %s. Removed the file instead, so that no "
                                      "cookie is ever sent twice; until it can be written, a restart needs a new "
                                      "key exchange.", s->state_path, reason);
                return 0;
        }
        q = -errno;

        nts_state_log_failure(s, r, q,
                              "Failed to save NTS cookies to %s (%s) or to remove it: %s. The cookies it lists "
                              "are not sent (each cookie only once, RFC 8915 section 5.7): a key exchange "
                              "replaces them, after every start until the file can be written or removed.",
                              s->state_path, reason, strerror(-q));
        return q;
}

/* The state file of s, chosen once: none without a state directory, or when the server's name
 * makes a file name longer than NAME_MAX. */
static void nts_state_find_path(Manager *m, NTSState *s) {
        _cleanup_free_ char *name = NULL, *legacy = NULL, *legacy_path = NULL;
        int r;

        if (!m->state_dir)
                return;

        r = nts_jar_file_name(s->name->string, &name);
        if (r == -ENAMETOOLONG) {
                log_notice("NTS cookies of %s are not kept across restarts: a file name for it would be longer "
                           "than %u bytes.", s->name->string, (unsigned) NAME_MAX);
                return;
        }
        if (r < 0 || asprintf(&s->state_path, "%s/%s", m->state_dir, name) < 0) {
                s->state_path = NULL;
                log_oom();
                return;
        }

        /* Earlier versions named the file of a bracketed IPv6 address differently. Such a file
         * is not read (a key exchange replaces it, once) but removed, so that its keys do not
         * stay on disk: under today's names it can be no other server's (see
         * nts_jar_legacy_file_name()). */
        if (nts_jar_legacy_file_name(s->name->string, &legacy) >= 0 && !streq(legacy, name) &&
            asprintf(&legacy_path, "%s/%s", m->state_dir, legacy) >= 0 && unlink(legacy_path) >= 0)
                log_debug("Removed %s, the NTS state file of %s as earlier versions named it.", legacy_path,
                          s->name->string);
}

static void nts_state_load(Manager *m, NTSState *s) {
        char reason[NTS_JAR_REASON_MAX] = "";
        NTSJar jar = {};
        int r;

        if (s->jar_loaded)
                return;
        s->jar_loaded = true;

        nts_state_find_path(m, s);
        if (!s->state_path)
                return;

        r = nts_jar_load(s->state_path, s->name->string, now(CLOCK_REALTIME), &jar, reason, sizeof reason);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                log_notice_errno(r, "Discarding NTS state file %s: %s", s->state_path, reason);
                (void) unlink(s->state_path);
                return;
        }

        nts_jar_done(&s->jar);
        s->jar = jar;
        s->n_withheld = 0;
        s->n_listed = s->jar.n_cookies;
        r = nts_state_make_contexts(s);
        if (r < 0) {
                log_notice_errno(r, "Discarding NTS state file %s: %m", s->state_path);
                nts_state_forget_keys(s);
                return;
        }

        log_info("Resuming NTS with %s: %zu cookies from %s, no key exchange needed.",
                 s->name->string, s->jar.n_cookies, s->state_path);
}

/* ---- key exchange ---- */

static void nts_emit_changed(Manager *m) {
        (void) manager_bus_emit_changed(m, "NTSAuthenticated", "NTSKeyExchangeServer", "NTSAEAD", "NTSCookies",
                                        "NTSKeyExchangeFailures", "NTSLastKeyExchangeTimestamp", "NTSStatus", NULL);
}

static void nts_ke_failed(Manager *m, NTSState *s, const char *reason) {
        usec_t backoff = m->config.connection_retry_usec;

        s->ke_failures++;
        for (unsigned i = 1; i < s->ke_failures && backoff < NTS_KE_BACKOFF_MAX_USEC; i++)
                backoff *= 2;
        backoff = MIN(backoff, NTS_KE_BACKOFF_MAX_USEC);
        s->ke_retry_after = now(CLOCK_BOOTTIME) + backoff;

        snprintf(s->last_error, sizeof s->last_error, "%s", reason);
        snprintf(m->nts_status, sizeof m->nts_status, "Key exchange with %s failed: %s", s->name->string, reason);
        m->nts_ke_failures++;

        log_warning("NTS key exchange with %s failed: %s. Trying again in %s at the earliest.",
                    s->name->string, reason, FORMAT_TIMESPAN(backoff, USEC_PER_SEC));
        nts_emit_changed(m);

        if (m->current_server_name == s->name)
                (void) manager_connect(m);
}

/* Bootstrap with a wrong clock (docs/NTS.md has the reasoning).
 *
 * A machine without a working RTC starts at a floor: the clock file's time, this build's time
 * or systemd's epoch file. The certificate of an NTS-KE server issued after that looks "not
 * yet valid": without help, such a machine can never get authenticated time. The way out, for
 * a clock known to be behind and nothing else:
 *  - only while NTSBootstrap= is on, we have not synchronized since start and the kernel does
 *    not consider the clock synchronized either;
 *  - only while the clock still reads as the floor put it at boot (clock_floor_verdict()):
 *    "unsynchronized" alone is true at every boot, also of a correct clock, and a certificate
 *    valid from the future (issued ahead of a rotation, a private CA) would then let its
 *    server move a correct clock anywhere into its validity period;
 *  - only for a certificate refused for being not yet valid. An expired certificate is never
 *    accepted: that is what an attacker holding an old key would show a correctly set clock;
 *  - the key exchange is repeated without validity checks (everything else is checked), and
 *    time from those keys is used only if it lies within the certificate's validity period
 *    and moves the clock forward;
 *  - once the clock took that time, the keys are dropped and the key exchange is repeated
 *    with every check, now against the corrected clock; the keys are never saved.
 * Returns whether the bootstrap is allowed; why gets the evidence, or the reason for the
 * refusal as a clause, and ret_short a refusal's reason short enough for a status. */
static bool nts_bootstrap_allowed(Manager *m, char *why, size_t size, const char **ret_short) {
        const char *reason = NULL;
        ClockState st = {};
        ClockFloorVerdict v;
        struct timespec ts;
        int64_t realtime, boottime;
        char found[200];

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

/* Once per start at warning level: each retry of the key exchange meets the same refusal. */
static void nts_bootstrap_log_refusal(Manager *m, NTSState *s, const char *why) {
        log_full(m->nts_bootstrap_refusal_logged ? LOG_DEBUG : LOG_WARNING,
                 "Bootstrap with %s refused: its certificate is not yet valid by our clock, and %s.",
                 s->name->string, why);
        m->nts_bootstrap_refusal_logged = true;
}

static int nts_start_ke(Manager *m, NTSState *s);

static void nts_ke_done(NTS_KEClient *c, NTS_KEResult *result, void *userdata) {
        NTSState *s = userdata;
        ServerName *n = s->name;
        Manager *m = n->manager;
        char addr[SOCKET_ADDRESS_STRING_MAX];
        int r;

        s->ke = NTS_ke_client_free(c);

        if (result->error < 0) {
                char why[256], reason[512];
                const char *r_reason = result->reason;

                if (result->stage == NTS_KE_STAGE_TLS && result->cert_time_failure == NTS_TLS_CERT_NOT_YET_VALID &&
                    !s->bootstrap_attempt) {
                        const char *short_reason = NULL;

                        if (nts_bootstrap_allowed(m, why, sizeof why, &short_reason)) {
                                log_notice("The certificate of %s is not yet valid by our clock, which is not "
                                           "synchronized and behind (%s): bootstrapping (its time is used only "
                                           "within the certificate's validity period, and only forward).",
                                           n->string, why);
                                NTS_ke_result_free(result);
                                s->bootstrap_attempt = true;
                                (void) nts_start_ke(m, s);
                                return;
                        }
                        nts_bootstrap_log_refusal(m, s, why);
                        snprintf(reason, sizeof reason, "%s; no bootstrap: %s", result->reason, short_reason);
                        r_reason = reason;
                }
                s->bootstrap_attempt = false;
                nts_ke_failed(m, s, r_reason);
                NTS_ke_result_free(result);
                return;
        }

        nts_state_forget_keys(s);
        s->jar.aead = result->aead;
        s->jar.key_size = result->c2s_key.iov_len;
        memcpy(s->jar.c2s, result->c2s_key.iov_base, s->jar.key_size);
        memcpy(s->jar.s2c, result->s2c_key.iov_base, s->jar.key_size);
        s->jar.ke_realtime = now(CLOCK_REALTIME);
        s->jar.ntp_port = result->ntp_port;
        /* RFC 8915 section 4.1.7: without a Server record, NTP goes to the address of the KE
         * server that answered, not to whatever its name resolves to next time. */
        s->jar.ntp_server = result->ntp_server ? strdup(result->ntp_server)
                                               : strdup(socket_address_host_to_string(&result->address, addr));
        for (size_t i = 0; i < result->n_cookies; i++)
                if (nts_jar_add_cookie(&s->jar, &result->cookies[i]) < 0)
                        break;

        r = !s->jar.ntp_server ? -ENOMEM : nts_state_make_contexts(s);
        if (r < 0) {
                nts_state_forget_keys(s);
                NTS_ke_result_free(result);
                nts_ke_failed(m, s, "out of memory or AEAD unusable after key exchange");
                return;
        }

        s->bootstrap = s->bootstrap_attempt;
        s->bootstrap_attempt = false;
        s->chain_valid_from = result->tls.valid_from;
        s->chain_valid_until = result->tls.valid_until;
        s->cookies_unproven = true;
        s->ke_retry_after = 0;
        s->last_error[0] = '\0';
        m->nts_status[0] = '\0';
        m->nts_last_ke_realtime = s->jar.ke_realtime;

        log_info("NTS key exchange with %s (%s) done: %s, %zu cookies, NTP server %s port %u.", n->string,
                 socket_address_to_string(&result->address, addr), strna(NTS_aead_name(s->jar.aead)),
                 s->jar.n_cookies, s->jar.ntp_server, s->jar.ntp_port ?: 123);
        NTS_ke_result_free(result);

        (void) nts_state_save(m, s, 0, false);
        nts_emit_changed(m);

        if (m->current_server_name == n)
                (void) manager_resolve_ntp(m, s->jar.ntp_server, s->jar.ntp_port ?: 123);
}

static void nts_ke_resolved(ResolveQuery *q, int error, const struct addrinfo *ai, void *userdata) {
        NTSState *s = userdata;
        Manager *m = s->name->manager;
        SocketAddress addresses[NTS_KE_MAX_ADDRESSES];
        NTS_AEADAlgorithm offer[8];
        struct timespec now_ts;
        struct stat st;
        size_t n = 0;
        const char *ca = m->config.nts_trusted_certificates;
        char reason[256];
        int r, n_offer;

        s->resolve = resolve_query_free(s->resolve);

        if (error < 0) {
                snprintf(reason, sizeof reason, "cannot resolve %s: %s", s->name->host, resolve_error_string(error));
                nts_ke_failed(m, s, reason);
                return;
        }

        for (; ai && n < ELEMENTSOF(addresses); ai = ai->ai_next)
                if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
                    ai->ai_addrlen <= sizeof(addresses[n].sa)) {
                        memcpy(&addresses[n].sa, ai->ai_addr, ai->ai_addrlen);
                        addresses[n].len = ai->ai_addrlen;
                        n++;
                }
        if (n == 0) {
                nts_ke_failed(m, s, "no usable address");
                return;
        }

        n_offer = NTS_aead_offer(offer, ELEMENTSOF(offer));
        if (n_offer < 0) {
                nts_ke_failed(m, s, "libcrypto cannot be used");
                return;
        }

        /* Validity periods are checked against the clock the daemon disciplines: CLOCK_REALTIME
         * (what OpenSSL would use anyway), or in tests the fake clock of --test-clock-offset=,
         * so that a fake clock years behind meets "not yet valid" as a real one would. */
        if (clock_backend_now(m->clock, &now_ts) < 0)
                now_ts = (struct timespec) {};

        NTS_KEClientParams p = {
                .addresses = addresses,
                .n_addresses = n,
                .tls = {
                        .hostname = s->name->host,
                        .ca_file = ca && stat(ca, &st) >= 0 && !S_ISDIR(st.st_mode) ? ca : NULL,
                        .ca_dir = ca && stat(ca, &st) >= 0 && S_ISDIR(st.st_mode) ? ca : NULL,
                        .verify_time = now_ts.tv_sec,
                        .no_verify_time = s->bootstrap_attempt,
                },
                .aead = offer,
                .n_aead = (size_t) n_offer,
                .timeout_usec = m->config.nts_ke_timeout_usec,
        };

        if (ca && !p.tls.ca_file && !p.tls.ca_dir) {
                snprintf(reason, sizeof reason, "NTSTrustedCertificates=%s does not exist", ca);
                nts_ke_failed(m, s, reason);
                return;
        }

        r = NTS_ke_client_start(m->event, &p, nts_ke_done, s, &s->ke);
        if (r < 0) {
                snprintf(reason, sizeof reason, "cannot start: %s", strerror(-r));
                nts_ke_failed(m, s, reason);
        }
}

static int nts_start_ke(Manager *m, NTSState *s) {
        char service[8], reason[256];
        int r;

        if (s->ke || s->resolve)
                return 0; /* already running */

        if (m->config.nts_trusted_certificates_invalid) {
                nts_ke_failed(m, s, "NTSTrustedCertificates= has no valid value, and the system's certificate "
                              "authorities are not trusted instead");
                return 0;
        }

        snprintf(service, sizeof service, "%u", s->name->port ?: NTS_KE_PORT);
        free(s->ke_address);
        if (asprintf(&s->ke_address, "%s:%s", s->name->host, service) < 0)
                s->ke_address = NULL;

        log_debug("Starting NTS key exchange with %s.", s->name->string);
        r = resolve_query_new(m->event, s->name->host, service, AF_UNSPEC, SOCK_STREAM, nts_ke_resolved, s,
                              &s->resolve);
        if (r < 0) {
                /* Out of descriptors or memory: a failed exchange with its backoff, so that
                 * something retries; callers that spent the last cookie rely on it. */
                snprintf(reason, sizeof reason, "cannot start resolving %s: %s", s->name->host, strerror(-r));
                nts_ke_failed(m, s, reason);
        }
        return 0;
}

int manager_nts_connect(Manager *m, ServerName *n) {
        NTSState *s = n->nts;

        assert(s);

        nts_state_load(m, s);
        if (nts_jar_usable(&s->jar) && s->c2s && s->s2c)
                return manager_resolve_ntp(m, s->jar.ntp_server, s->jar.ntp_port ?: 123);

        return nts_start_ke(m, s);
}

/* ---- packets ---- */

/* Drops the keys and cookies of s and starts a key exchange instead of a request. */
static ssize_t nts_renew_keys(Manager *m, NTSState *s) {
        nts_state_forget_keys(s);
        (void) nts_state_save(m, s, 0, false);
        manager_disconnect(m);
        (void) nts_start_ke(m, s);
        return 0;
}

ssize_t manager_nts_build_request(Manager *m, uint8_t *buf, size_t size) {
        NTSState *s = m->current_server_name->nts;
        struct iovec cookie;
        bool unanswered;
        ssize_t l;

        assert(s);

        if (s->c2s && nts_jar_expired(&s->jar, now(CLOCK_REALTIME))) {
                log_info("NTS keys of %s are more than %s old, running a new key exchange.",
                         s->name->string, FORMAT_TIMESPAN(NTS_JAR_MAX_AGE_USEC, USEC_PER_SEC));
                return nts_renew_keys(m, s);
        }

        for (;;) {
                if (nts_jar_pop_cookie(&s->jar, &cookie) < 0 || !s->c2s) {
                        /* Every cookie is spent (lost replies): only a new key exchange helps. */
                        log_info("No NTS cookies left for %s, running a new key exchange.", s->name->string);
                        return nts_renew_keys(m, s);
                }

                if (s->n_withheld > 0) {
                        /* Left out of the file by an earlier write. */
                        s->n_withheld--;
                        break;
                }
                if (s->n_listed == 0) {
                        /* Not in the file either, but newer: this write keeps the cookies of
                         * earlier replies for a restart, without the next few (see below). */
                        (void) nts_state_save(m, s, MIN(NTS_COOKIES_PER_WRITE - 1, s->jar.n_cookies), false);
                        break;
                }

                /* The file lists it: written again before sending, so that a crash never makes
                 * us send it again. The same write stores the cookies of earlier replies and
                 * leaves out the next few, whose requests then need no write. */
                s->n_listed--;
                if (nts_state_save(m, s, MIN(NTS_COOKIES_PER_WRITE - 1, s->jar.n_cookies), true) >= 0)
                        break;

                /* The file can be neither written nor removed: it will list this cookie and the
                 * others it lists at the next start, so none of them may ever be sent. */
                iovec_done_erase(&cookie);
                for (; s->n_listed > 0; s->n_listed--)
                        if (nts_jar_pop_cookie(&s->jar, &cookie) >= 0)
                                iovec_done_erase(&cookie);
        }

        s->query = (NTS_Query) {
                .cookie = cookie,
                /* Ask for enough new cookies to fill the jar again. */
                .n_placeholders = NTS_MAX_COOKIES - 1 - s->jar.n_cookies,
                .c2s = s->c2s,
        };

        l = NTS_add_extension_fields(buf, size, NTP_HEADER_SIZE, &s->query);
        iovec_done_erase(&cookie);
        s->query.cookie = IOVEC_NULL;
        if (l < 0)
                return log_error_errno((int) l, "Failed to build NTS request: %m");

        unanswered = s->query_pending;
        s->query_pending = true;
        /* The reply brings a new cookie and announces the count with the sample; only when the
         * last request went unanswered does the count fall for good, and say so now. */
        if (unanswered)
                (void) manager_bus_emit_changed(m, "NTSCookies", NULL);
        return l;
}

int manager_nts_verify_reply(Manager *m, const uint8_t *buf, size_t size, RefusalCause *ret_cause,
                             const char **ret_reason) {
        NTSState *s = m->current_server_name->nts;
        uint8_t scratch_buf[NTS_MAX_PACKET_SIZE];
        struct iovec scratch = IOVEC_MAKE(scratch_buf, sizeof scratch_buf);
        NTS_Receipt receipt = {};
        int r;

        assert(s);
        assert(ret_cause);
        assert(ret_reason);

        if (!s->query_pending || !s->s2c) {
                /* Keys dropped while the request was out (a new key exchange runs): whatever
                 * the reply says, nothing can verify it. */
                *ret_cause = REFUSAL_NTS_NO_AUTHENTICATOR;
                *ret_reason = "no keys to verify it with (a key exchange is running)";
                return -EAGAIN;
        }

        r = NTS_parse_extension_fields(&IOVEC_MAKE(buf, size), &s->query, s->s2c, &scratch, &receipt);
        if (r < 0) {
                *ret_cause = refusal_cause_from_nts_error(receipt.error);
                if (*ret_cause < 0)
                        *ret_cause = REFUSAL_NTS_BAD_EXTENSION_FIELD;
                *ret_reason = NTS_error_string(receipt.error) ?: "unknown NTS error";

                if (receipt.error == NTS_ERROR_NTP_NAK) {
                        bool fresh = s->cookies_unproven;

                        log_notice("NTS server %s refused our cookie (NTSN), running a new key exchange.",
                                   s->name->string);
                        nts_state_forget_keys(s);
                        (void) nts_state_save(m, s, 0, false);
                        manager_disconnect(m);
                        /* Cookies straight from a key exchange refused: another exchange at once
                         * would only be refused again, as fast as the server answers. */
                        if (fresh)
                                nts_ke_failed(m, s, "the server refused the cookies it had just issued (NTSN)");
                        else
                                (void) nts_start_ke(m, s);
                        nts_emit_changed(m);
                        return -EKEYREJECTED;
                }

                /* Forged or broken replies are ignored: the real one may still come. */
                return -EAGAIN;
        }

        for (size_t i = 0; i < receipt.n_cookies; i++) {
                /* A full jar drops its oldest cookie: a withheld one if any is, else a listed one
                 * (which the file keeps: it was never sent). */
                if (s->jar.n_cookies == NTS_MAX_COOKIES) {
                        if (s->n_withheld > 0)
                                s->n_withheld--;
                        else if (s->n_listed > 0)
                                s->n_listed--;
                }
                (void) nts_jar_add_cookie(&s->jar, &receipt.cookies[i]);
        }
        explicit_bzero_safe(scratch_buf, sizeof scratch_buf);

        log_debug("NTS reply from %s verified: %zu cookies in the jar, %zu of them not in the state file.",
                  s->name->string, s->jar.n_cookies, s->n_withheld);

        s->query_pending = false;
        s->authenticated = true;
        s->cookies_unproven = false;
        s->ke_failures = 0;
        /* Saved with a later request, or when the daemon stops: a crash in between loses
         * these cookies (the file still has unspent older ones), never reuses one. */
        s->jar_dirty = true;
        return 0;
}

int manager_nts_check_bootstrap(Manager *m, int64_t server_time_nsec, int64_t offset_nsec) {
        NTSState *s = m->current_server_name->nts;
        int64_t nb, na;

        if (!s || !s->bootstrap)
                return 0;

        nb = (int64_t) s->chain_valid_from * NTP_NSEC_PER_SEC;
        na = (int64_t) s->chain_valid_until * NTP_NSEC_PER_SEC;
        if (server_time_nsec >= nb && server_time_nsec <= na && offset_nsec > 0)
                return 0;

        log_warning("Refusing bootstrap time from %s: it %s; dropping the server.", s->name->string,
                    server_time_nsec < nb || server_time_nsec > na ?
                    "lies outside the validity period of its certificate chain" : "would move the clock backwards");
        nts_state_forget_keys(s);
        s->ke_failures++;
        s->ke_retry_after = now(CLOCK_BOOTTIME) + NTS_KE_BACKOFF_MAX_USEC;
        snprintf(m->nts_status, sizeof m->nts_status, "Bootstrap with %s refused", s->name->string);
        nts_emit_changed(m);
        return -EPERM;
}

bool manager_nts_bootstrap_done(Manager *m) {
        NTSState *s = m->current_server_name ? m->current_server_name->nts : NULL;

        if (!s || !s->bootstrap)
                return false;

        log_notice("Bootstrap: the clock took the time of %s; repeating the key exchange with full certificate checks.",
                   s->name->string);
        nts_state_forget_keys(s);
        manager_disconnect(m);
        (void) nts_start_ke(m, s);
        return true;
}

/* ---- D-Bus views ---- */

static NTSState *current(Manager *m) {
        return m->current_server_name ? m->current_server_name->nts : NULL;
}

const char *manager_nts_aead_name(Manager *m) {
        NTSState *s = current(m);
        return s && s->jar.key_size > 0 ? NTS_aead_name(s->jar.aead) : NULL;
}

unsigned manager_nts_cookies(Manager *m) {
        NTSState *s = current(m);
        return s ? (unsigned) s->jar.n_cookies : 0;
}

const char *manager_nts_ke_server(Manager *m) {
        NTSState *s = current(m);
        return s ? (s->ke_address ?: s->name->string) : NULL;
}
