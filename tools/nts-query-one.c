/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* nts-query, one server: one NTS-KE session and a few NTS-protected NTP exchanges (and with
 * --plain one unauthenticated exchange for comparison), and what they showed, for a person or
 * as JSON. The other modes run and show their servers with these functions too. */

#include <netdb.h>
#include <stdio.h>

#include "hexdecoct.h"
#include "iovec-util.h"
#include "log.h"
#include "nts-crypto.h"
#include "nts-query.h"
#include "resolve-util.h"
#include "string-util.h"
#include "unaligned.h"

#define query_fail FAIL_WITH

static const char *const query_exit_table[_QUERY_EXIT_MAX] = {
        [QUERY_EXIT_VERIFIED] = "verified",
        [QUERY_EXIT_OTHER] = "error",
        [QUERY_EXIT_USAGE] = "usage",
        [QUERY_EXIT_RESOLVE] = "resolve",
        [QUERY_EXIT_CONNECT] = "connect",
        [QUERY_EXIT_TLS] = "tls",
        [QUERY_EXIT_KE] = "ke",
        [QUERY_EXIT_NTP] = "ntp",
        [QUERY_EXIT_DNSSEC] = "dnssec",
        [QUERY_EXIT_DISAGREE] = "disagree",
};

const char *query_exit_to_string(QueryExit e) {
        assert(e >= 0 && e < _QUERY_EXIT_MAX);
        return query_exit_table[e];
}

void query_done(Query *q) {
        NTS_ke_result_free(q->ke);
        for (size_t i = 0; i < q->n_exchanges; i++)
                NTS_ntp_result_done(&q->exchanges[i].result);
        NTS_ntp_result_done(&q->plain.result);
}

QueryExit query_fail_with(QueryExit *exit, char *failure, size_t size, QueryExit e, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(failure, size, format, ap);
        va_end(ap);
        *exit = e;
        return e;
}

typedef struct ResolveRun {
        sd_event *event;
        int error;
        uint16_t port;
        SocketAddress *addresses;
        size_t max, n;
} ResolveRun;

static void on_resolved(ResolveQuery *rq, int error, const struct addrinfo *ai, void *userdata) {
        ResolveRun *run = userdata;

        run->error = error;
        for (; error == 0 && ai && run->n < run->max; ai = ai->ai_next) {
                if (!IN_SET(ai->ai_family, AF_INET, AF_INET6) || ai->ai_addrlen > sizeof(run->addresses[0].sa))
                        continue;
                run->addresses[run->n] = (SocketAddress) { .len = ai->ai_addrlen };
                memcpy(&run->addresses[run->n].sa, ai->ai_addr, ai->ai_addrlen);
                socket_address_set_port(&run->addresses[run->n], run->port);
                run->n++;
        }
        if (run->error == 0 && run->n == 0)
                run->error = -ENOENT;
        (void) sd_event_exit(run->event, 0);
}

static int on_resolve_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        ResolveRun *run = userdata;

        run->error = -ETIMEDOUT;
        return sd_event_exit(run->event, 0);
}

/* Blocking, on a loop of its own: a one-shot tool has nothing else to do meanwhile. Through
 * systemd-resolved when it is on the system bus, getaddrinfo() otherwise, as the daemon does
 * (resolve-util.h): names that only resolved knows, such as the targets of an SRV pool in a
 * signed zone, resolve here too. Returns 0 or a negative errno (resolve_error_string()). */
static int resolve(const QueryOptions *o, const char *host, uint16_t port, int socktype, SocketAddress *ret, size_t max,
                   size_t *ret_n) {
        _cleanup_(resolve_query_freep) ResolveQuery *rq = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ResolveRun run = { .port = port, .addresses = ret, .max = max };
        int r;

        r = sd_event_new(&e);
        if (r < 0)
                return r;
        run.event = e;
        r = sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, o->timeout, 0, on_resolve_timeout, &run);
        if (r < 0)
                return r;
        r = resolve_query_new(e, host, NULL, o->family, socktype, on_resolved, &run, &rq);
        if (r < 0)
                return r;
        r = sd_event_loop(e);
        if (r < 0)
                return r;
        if (run.error < 0)
                return run.error;
        *ret_n = run.n;
        return 0;
}

static int run_ke(Query *q) {
        NTS_KEClientParams p = {
                .addresses = q->addresses,
                .n_addresses = q->n_addresses,
                .tls = { .hostname = q->host, .ca_file = q->opts->ca_file, .ca_dir = q->opts->ca_dir },
                .aead = q->offer,
                .n_aead = q->n_offer,
                .timeout_usec = q->opts->timeout,
                .deny = q->deny,
                .n_deny = q->n_deny,
        };
        return NTS_ke_client_run(&p, &q->ke);
}

/* A timeout counts against the step it interrupted. */
static QueryExit ke_failure_exit(const NTS_KEResult *ke) {
        switch (ke->stage) {
        case NTS_KE_STAGE_CONNECT:
                return QUERY_EXIT_CONNECT;
        case NTS_KE_STAGE_TLS:
                return QUERY_EXIT_TLS;
        case NTS_KE_STAGE_PROTOCOL:
                return QUERY_EXIT_KE;
        default:
                return ke->tls.version[0] ? QUERY_EXIT_KE : ke->connected ? QUERY_EXIT_TLS : QUERY_EXIT_CONNECT;
        }
}

static bool header_synchronised(const NTPHeader *h) {
        return h->leap != NTP_LEAP_NOTINSYNC && h->stratum >= 1 && h->stratum <= NTP_STRATUM_MAX;
}

bool exchange_verified(const Exchange *x) {
        return x->error == 0 && header_synchronised(&x->result.header);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_AEADContext *, NTS_aead_free);

typedef struct CookieJar {
        struct iovec cookies[NTS_MAX_COOKIES];
        size_t n;
} CookieJar;

static void cookie_jar_done(CookieJar *jar) {
        for (size_t i = 0; i < jar->n; i++)
                iovec_done_erase(&jar->cookies[i]);
        jar->n = 0;
}

/* Takes ownership of *cookie; a full jar drops it. */
static void cookie_jar_put(CookieJar *jar, struct iovec *cookie) {
        if (jar->n < ELEMENTSOF(jar->cookies))
                jar->cookies[jar->n++] = *cookie;
        else
                iovec_done_erase(cookie);
        *cookie = (struct iovec) {};
}

static int run_exchanges(Query *q) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c2s = NULL, *s2c = NULL;
        _cleanup_(cookie_jar_done) CookieJar jar = {};
        int r;

        r = NTS_aead_new(q->ke->aead, &q->ke->c2s_key, &c2s);
        if (r >= 0)
                r = NTS_aead_new(q->ke->aead, &q->ke->s2c_key, &s2c);
        if (r == -EOPNOTSUPP) {
                q->aead_unsupported = true;
                return 0;
        }
        if (r < 0)
                return r;

        for (size_t i = 0; i < q->ke->n_cookies; i++) {
                r = iovec_memdup(&q->ke->cookies[i], &jar.cookies[jar.n]);
                if (r < 0)
                        return r;
                jar.n++;
        }

        /* Each request spends one cookie and gets one back, so the jar lasts for any count
         * while the server answers. */
        for (; q->n_exchanges < q->opts->count && jar.n > 0; q->n_exchanges++) {
                Exchange *x = &q->exchanges[q->n_exchanges];
                struct iovec cookie = jar.cookies[--jar.n];

                jar.cookies[jar.n] = (struct iovec) {};
                NTS_NTPQueryParams p = {
                        .c2s = c2s,
                        .s2c = s2c,
                        .cookie = cookie,
                        .timeout_usec = q->opts->timeout,
                };
                x->error = NTS_ntp_client_query(&q->ntp_address, &p, &x->result);
                iovec_done_erase(&cookie);

                x->n_new_cookies = x->result.n_cookies;
                for (size_t j = 0; j < x->result.n_cookies; j++)
                        cookie_jar_put(&jar, &x->result.cookies[j]);
                x->result.n_cookies = 0;

                if (exchange_verified(x))
                        q->n_verified++;
        }
        return 0;
}

static void run_plain(Query *q) {
        size_t n;

        if (q->opts->plain_host) {
                q->plain_resolve_error = resolve(q->opts, q->opts->plain_host, q->opts->plain_port, SOCK_DGRAM,
                                                 &q->plain_address, 1, &n);
                if (q->plain_resolve_error < 0)
                        return;
        } else if (q->have_ntp_address)
                q->plain_address = q->ntp_address;
        else
                return;

        q->plain_done = true;
        q->plain.error = NTS_ntp_client_query_unauthenticated(&q->plain_address, q->opts->timeout, &q->plain.result);
}

int query_resolve_ntp_server(Query *q) {
        uint16_t port = q->ke->ntp_port ?: NTP_PORT;
        size_t n;

        if (!q->ke->ntp_server) {
                q->ntp_address = q->ke->address;
                socket_address_set_port(&q->ntp_address, port);
                q->have_ntp_address = true;
                return 0;
        }

        q->ntp_resolve_error = resolve(q->opts, q->ke->ntp_server, port, SOCK_DGRAM, &q->ntp_address, 1, &n);
        q->have_ntp_address = q->ntp_resolve_error == 0;
        return q->ntp_resolve_error;
}

/* The key exchange with q->host: returns QUERY_EXIT_VERIFIED when it worked (nothing is
 * verified yet), else the failure, also in q->exit and q->failure. */
QueryExit query_key_exchange(Query *q) {
        int n, r;

        if (q->opts->n_aead > 0) {
                memcpy(q->offer, q->opts->aead, q->opts->n_aead * sizeof(q->opts->aead[0]));
                q->n_offer = q->opts->n_aead;
        } else {
                n = NTS_aead_offer(q->offer, ELEMENTSOF(q->offer));
                if (n < 0)
                        return query_fail(q, QUERY_EXIT_OTHER, "Cannot load libcrypto: %s", strerror(-n));
                q->n_offer = (size_t) n;
        }

        q->resolve_error = resolve(q->opts, q->host, q->port, SOCK_STREAM, q->addresses, ELEMENTSOF(q->addresses),
                                   &q->n_addresses);
        if (q->resolve_error < 0)
                return query_fail(q, QUERY_EXIT_RESOLVE, "Cannot resolve %s: %s", q->host,
                                  resolve_error_string(q->resolve_error));

        r = run_ke(q);
        if (r < 0)
                return query_fail(q, QUERY_EXIT_OTHER, "Cannot run the NTS-KE session: %s", strerror(-r));
        if (q->ke->error < 0)
                return query_fail(q, ke_failure_exit(q->ke), "NTS-KE with %s failed (%s stage): %s", q->host,
                                  NTS_ke_stage_to_string(q->ke->stage), q->ke->reason);
        return QUERY_EXIT_VERIFIED;
}

/* After a key exchange that worked: resolves the NTP server (unless done) and runs the NTP
 * exchanges. */
QueryExit query_ntp(Query *q) {
        int r;

        assert(q->ke && q->ke->error >= 0);

        if (!q->have_ntp_address && query_resolve_ntp_server(q) < 0)
                return query_fail(q, QUERY_EXIT_RESOLVE, "Cannot resolve the negotiated NTP server %s: %s",
                                  q->ke->ntp_server, resolve_error_string(q->ntp_resolve_error));

        r = run_exchanges(q);
        if (r < 0)
                return query_fail(q, QUERY_EXIT_OTHER, "Cannot set up the NTP exchanges: %s", strerror(-r));

        if (q->aead_unsupported)
                return query_fail(q, QUERY_EXIT_NTP, "%s was negotiated, but the loaded libcrypto does not "
                                  "implement it: no NTP exchange possible",
                                  strna(NTS_aead_name(q->ke->aead)));
        if (q->n_verified == 0)
                return query_fail(q, QUERY_EXIT_NTP, "No verified NTP reply from %s in %zu exchange(s)",
                                  q->ke->ntp_server ?: q->host, q->n_exchanges);

        q->exit = QUERY_EXIT_VERIFIED;
        return QUERY_EXIT_VERIFIED;
}

/* One server, as nts-query has always checked it. */
QueryExit query_run(Query *q) {
        QueryExit e;

        e = query_key_exchange(q);
        if (e == QUERY_EXIT_VERIFIED)
                e = query_ntp(q);
        if (q->opts->plain)
                run_plain(q);
        return e;
}

/* ---- What one server showed ---- */

static const char *const record_type_table[] = {
        [NTS_KE_RECORD_END_OF_MESSAGE] = "End of Message",
        [NTS_KE_RECORD_NEXT_PROTOCOL] = "NTS Next Protocol Negotiation",
        [NTS_KE_RECORD_ERROR] = "Error",
        [NTS_KE_RECORD_WARNING] = "Warning",
        [NTS_KE_RECORD_AEAD_ALGORITHM] = "AEAD Algorithm Negotiation",
        [NTS_KE_RECORD_NEW_COOKIE] = "New Cookie for NTPv4",
        [NTS_KE_RECORD_SERVER] = "NTPv4 Server Negotiation",
        [NTS_KE_RECORD_PORT] = "NTPv4 Port Negotiation",
};

static const char *record_type_name(uint16_t type) {
        if (type == NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT)
                return "Compliant 128GCM Export";
        return type < ELEMENTSOF(record_type_table) ? record_type_table[type] : "unknown";
}

/* The code of an Error or Warning record; -1 if the body is not two bytes. */
static int record_code(const NTS_Record *rec) {
        return rec->body.iov_len == 2 ? (int) unaligned_read_be16(rec->body.iov_base) : -1;
}

static const char *error_code_string(int code) {
        switch (code) {
        case NTS_KE_ERROR_UNRECOGNIZED_CRITICAL_RECORD:
                return NTS_error_string(NTS_ERROR_SERVER_UNRECOGNIZED_CRITICAL_RECORD);
        case NTS_KE_ERROR_BAD_REQUEST:
                return NTS_error_string(NTS_ERROR_SERVER_BAD_REQUEST);
        case NTS_KE_ERROR_INTERNAL_SERVER_ERROR:
                return NTS_error_string(NTS_ERROR_SERVER_INTERNAL_ERROR);
        default:
                return NTS_error_string(NTS_ERROR_SERVER_UNKNOWN_ERROR);
        }
}

static const char *leap_string(uint8_t leap) {
        static const char *const table[] = {
                [NTP_LEAP_NONE] = "none",
                [NTP_LEAP_PLUSSEC] = "insert second",
                [NTP_LEAP_MINUSSEC] = "delete second",
                [NTP_LEAP_NOTINSYNC] = "unsynchronised",
        };
        return table[leap & 3];
}

/* RFC 5905 section 7.3: stratum 0 and 1 carry four ASCII characters (kiss code, reference
 * source), higher strata an IPv4 address or the first octets of a hash of an IPv6 one. */
static const char *refid_string(const NTPHeader *h, char buf[static 16]) {
        size_t n = 0;

        /* Text up to the first NUL; anything unprintable (chrony's local reference
         * 127.127.1.1, say) is shown as an address instead. */
        while (h->stratum <= 1 && n < 4 && h->refid[n] >= 0x20 && h->refid[n] < 0x7f)
                n++;
        if (n > 0 && (n == 4 || h->refid[n] == 0)) {
                memcpy(buf, h->refid, n);
                buf[n] = 0;
        } else
                snprintf(buf, 16, "%u.%u.%u.%u", h->refid[0], h->refid[1], h->refid[2], h->refid[3]);
        return buf;
}

/* What this sample alone bounds the server's error by: half our round trip and half the
 * server's root delay, plus its root dispersion; without our dispersion (the clocks' precision
 * and PHI over the round trip, a few microseconds), so that the figure is the server's. */
static int64_t root_distance_nsec(const Exchange *x) {
        return ntp_sample_root_distance_nsec(&x->result.sample, &x->result.header, 0);
}

/* NULL for a verified exchange (or a synchronised plain reply). */
static const char *exchange_error_string(const Exchange *x, usec_t timeout, char buf[static 128]) {
        if (x->error == 0)
                return header_synchronised(&x->result.header) ? NULL : "the server is not synchronised";
        if (x->result.nts_error != NTS_OK)
                return NTS_error_string(x->result.nts_error);
        if (x->error == -EPROTO)
                snprintf(buf, 128, "kiss-o'-death %s", x->result.kiss);
        else if (x->error == -ETIMEDOUT)
                snprintf(buf, 128, "no reply within %s", FORMAT_TIMESPAN(timeout, USEC_PER_MSEC));
        else
                snprintf(buf, 128, "%s", strerror(-x->error));
        return buf;
}

static const char *time_string(time_t t, char buf[static 32]) {
        struct tm tm;

        if (t == 0 || !gmtime_r(&t, &tm) || strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return NULL;
        return buf;
}

static bool ke_handshake_done(const Query *q) {
        return q->ke && q->ke->tls.version[0];
}

static void print_seconds(const char *label, int64_t nsec, bool sign) {
        printf("%s%s%" PRId64 ".%09" PRId64 " s", label, nsec < 0 ? "-" : sign ? "+" : "",
               (nsec < 0 ? -nsec : nsec) / NTP_NSEC_PER_SEC, (nsec < 0 ? -nsec : nsec) % NTP_NSEC_PER_SEC);
}

static void print_exchange(const Exchange *x, bool authenticated, usec_t timeout) {
        const NTPHeader *h = &x->result.header;
        char buf[128], refid[16];
        const char *e = exchange_error_string(x, timeout, buf);

        if (x->error < 0) {
                /* The header is set once a reply to our request arrived. */
                printf("%s: %s\n", h->mode == NTP_MODE_SERVER ? "refused" : "failed", e);
                return;
        }

        print_seconds("offset ", x->result.sample.offset_nsec, true);
        print_seconds(", delay ", x->result.sample.delay_nsec, false);
        printf(", stratum %u, refid %s, leap %u (%s)", h->stratum, refid_string(h, refid), h->leap,
               leap_string(h->leap));
        print_seconds(", root distance ", root_distance_nsec(x), false);
        if (!authenticated)
                printf(", UNAUTHENTICATED%s%s\n", e ? ", " : "", strempty(e));
        else if (e)
                printf(", authentic but not verified: %s\n", e);
        else
                printf(", verified (%zu new cookie%s)\n", x->n_new_cookies, x->n_new_cookies == 1 ? "" : "s");
}

static void print_records(const Query *q, bool raw) {
        struct iovec msg = q->ke->response;
        NTS_Record rec;

        if (raw)
                printf("KE records:         %zu bytes\n", msg.iov_len);
        while (NTS_record_next(&msg, &rec) >= 0) {
                if (raw) {
                        printf("  type %2u %-30s %s %4zu bytes ", rec.type, record_type_name(rec.type),
                               rec.critical ? "critical" : "        ", rec.body.iov_len);
                        hex_write(stdout, rec.body.iov_base, rec.body.iov_len);
                        printf("\n");
                }
                if (rec.type == NTS_KE_RECORD_ERROR)
                        printf("Error record:       code %i (%s)\n", record_code(&rec), error_code_string(record_code(&rec)));
                else if (rec.type == NTS_KE_RECORD_WARNING)
                        printf("Warning record:     code %i\n", record_code(&rec));
        }
        if (raw && msg.iov_len > 0)
                printf("  %zu bytes that do not form a whole record\n", msg.iov_len);
}

/* The server certificate, also one that failed verification: what it says about itself is
 * what an administrator needs to see why (wrong name, dates, issuer). */
/* failed_above: the TLS line already says why the handshake failed, which for a certificate
 * that did not verify is the verification's error in words of ours: not repeated here. */
static void print_certificate(const QueryOptions *o, const NTS_KEResult *ke, const char *host, bool failed_above) {
        char t1[32], t2[32];
        bool ok = streq(ke->tls.verification, "ok");

        printf("Certificate:        subject %s\n", ke->tls.subject);
        printf("                    SANs    %s\n", isempty(ke->tls.sans) ? "(none)" : ke->tls.sans);
        printf("                    issuer  %s\n", ke->tls.issuer);
        printf("                    valid   %s to %s\n", strna(time_string(ke->tls.not_before, t1)),
               strna(time_string(ke->tls.not_after, t2)));
        printf("                    verification %s%s (name %s, %s%s)\n",
               ok ? "ok" : failed_above ? "FAILED, see TLS above" : "FAILED: ",
               ok || failed_above ? "" : ke->tls.verification, host,
               o->ca_file || o->ca_dir ? "trusting " : "system store", o->ca_file ?: o->ca_dir ?: "");
}

static void print_ke(const Query *q) {
        const NTS_KEResult *ke = q->ke;
        char a[SOCKET_ADDRESS_STRING_MAX];

        printf("NTS-KE server:      %s (%s)\n", q->host, socket_address_to_string(&ke->address, a));
        printf("Offered AEAD:      ");
        for (size_t i = 0; i < q->n_offer; i++)
                printf(" %s (%u)", strna(NTS_aead_name(q->offer[i])), q->offer[i]);
        printf("\n");
        if (ke_handshake_done(q))
                printf("TLS:                %s, %s\n", ke->tls.version, ke->tls.cipher);
        else if (ke->stage == NTS_KE_STAGE_TLS)
                /* The certificate is checked inside the handshake: its failure is one of these. */
                printf("TLS:                failed: %s\n", ke->reason);
        if (ke->tls.certificate)
                print_certificate(q->opts, ke, q->host, !ke_handshake_done(q) && ke->stage == NTS_KE_STAGE_TLS);

        if (iovec_is_set(&ke->response))
                print_records(q, q->opts->verbose);

        if (ke->error < 0)
                return;

        printf("AEAD:               %s (%u)\n", strna(NTS_aead_name(ke->aead)), ke->aead);
        printf("Cookies:            %zu, sizes", ke->n_cookies);
        for (size_t i = 0; i < ke->n_cookies; i++)
                printf(" %zu", ke->cookies[i].iov_len);
        printf(" bytes\n");
        printf("NTP server:         %s%s, port %u%s\n", ke->ntp_server ?: q->host,
               ke->ntp_server ? " (negotiated)" : " (not negotiated: the KE server)", ke->ntp_port ?: NTP_PORT,
               ke->ntp_port ? " (negotiated)" : " (not negotiated: default)");
        if (q->have_ntp_address)
                printf("NTP address:        %s\n", socket_address_to_string(&q->ntp_address, a));
}

void query_print(const Query *q) {
        char label[32], a[SOCKET_ADDRESS_STRING_MAX];

        if (q->ke)
                print_ke(q);

        for (size_t i = 0; i < q->n_exchanges; i++) {
                snprintf(label, sizeof(label), "Exchange %zu:", i + 1);
                printf("%-20s", label);
                print_exchange(&q->exchanges[i], true, q->opts->timeout);
        }

        if (q->opts->plain) {
                if (q->plain_done) {
                        printf("Plain NTP:          UNAUTHENTICATED query to %s, for comparison only\n",
                               socket_address_to_string(&q->plain_address, a));
                        printf("                    ");
                        print_exchange(&q->plain, false, q->opts->timeout);
                } else if (q->plain_resolve_error < 0)
                        printf("Plain NTP:          cannot resolve %s: %s\n", q->opts->plain_host,
                               resolve_error_string(q->plain_resolve_error));
                else
                        printf("Plain NTP:          not sent: no NTP server known\n");
        }

        if (q->ke && q->ke->error >= 0)
                printf("Result:             %zu of %zu exchange%s verified\n", q->n_verified, q->n_exchanges,
                       q->n_exchanges == 1 ? "" : "s");
}

static void json_exchange(JsonWriter *w, const char *key, const Exchange *x, bool authenticated, usec_t timeout) {
        const NTPHeader *h = &x->result.header;
        char buf[128], refid[16];

        json_begin_object(w, key);
        json_write_bool(w, "authenticated", authenticated && x->error == 0);
        json_write_bool(w, "verified", authenticated && exchange_verified(x));
        json_write_string(w, "error", exchange_error_string(x, timeout, buf));
        if (x->error == 0) {
                json_write_decimal(w, "offset", x->result.sample.offset_nsec, 9);
                json_write_decimal(w, "delay", x->result.sample.delay_nsec, 9);
                json_write_integer(w, "stratum", h->stratum);
                json_write_string(w, "refid", refid_string(h, refid));
                json_write_integer(w, "leap", h->leap);
                json_write_decimal(w, "root_distance", root_distance_nsec(x), 9);
        } else {
                json_write_null(w, "offset");
                json_write_null(w, "delay");
                json_write_null(w, "stratum");
                json_write_null(w, "refid");
                json_write_null(w, "leap");
                json_write_null(w, "root_distance");
        }
        json_write_string(w, "kiss", x->error == -EPROTO ? x->result.kiss : NULL);
        if (authenticated)
                json_write_integer(w, "new_cookies", (int64_t) x->n_new_cookies);
        json_write_integer(w, "request_size", (int64_t) x->result.request_size);
        if (x->result.reply_size > 0)
                json_write_integer(w, "reply_size", (int64_t) x->result.reply_size);
        else
                json_write_null(w, "reply_size");
        json_end_object(w);
}

static void json_records(JsonWriter *w, const Query *q) {
        struct iovec msg = {};
        NTS_Record rec;

        if (q->ke)
                msg = q->ke->response;

        json_begin_array(w, "records");
        while (NTS_record_next(&msg, &rec) >= 0) {
                json_begin_object(w, NULL);
                json_write_integer(w, "type", rec.type);
                json_write_string(w, "name", record_type_name(rec.type));
                json_write_bool(w, "critical", rec.critical);
                json_write_integer(w, "length", (int64_t) rec.body.iov_len);
                if (q->opts->verbose) {
                        _cleanup_free_ char *hex = NULL;
                        size_t size = 0;
                        FILE *f = open_memstream(&hex, &size);
                        if (f) {
                                hex_write(f, rec.body.iov_base, rec.body.iov_len);
                                fclose(f);
                        }
                        json_write_string(w, "body", hex ?: "");
                } else
                        json_write_null(w, "body");
                json_end_object(w);
        }
        json_end_array(w);

        msg = q->ke ? q->ke->response : (struct iovec) {};
        json_begin_array(w, "errors");
        while (NTS_record_next(&msg, &rec) >= 0)
                if (rec.type == NTS_KE_RECORD_ERROR)
                        json_write_integer(w, NULL, record_code(&rec));
        json_end_array(w);

        msg = q->ke ? q->ke->response : (struct iovec) {};
        json_begin_array(w, "warnings");
        while (NTS_record_next(&msg, &rec) >= 0)
                if (rec.type == NTS_KE_RECORD_WARNING)
                        json_write_integer(w, NULL, record_code(&rec));
        json_end_array(w);
}

/* "DNS:a, IP:b" as an array; the names never contain ", " (NTS_tls_info()). */
static void json_sans(JsonWriter *w, const char *sans) {
        json_begin_array(w, "sans");
        for (const char *p = sans, *e; !isempty(p); p = e ? e + 2 : NULL) {
                _cleanup_free_ char *name = NULL;

                e = strstr(p, ", ");
                name = e ? strndup(p, (size_t) (e - p)) : strdup(p);
                json_write_string(w, NULL, name ?: "");
        }
        json_end_array(w);
}

static void json_ke(JsonWriter *w, const Query *q) {
        const NTS_KEResult *ke = q->ke;
        bool ok = ke && ke->error >= 0, cert = ke && ke->tls.certificate;
        char a[SOCKET_ADDRESS_STRING_MAX], t[32];

        json_begin_object(w, "ke");
        json_write_bool(w, "ok", ok);
        json_write_string(w, "stage", ke && !ok ? NTS_ke_stage_to_string(ke->stage) : NULL);
        json_write_string(w, "error", ke && !ok ? ke->reason : NULL);
        json_write_string(w, "address", ke ? socket_address_to_string(&ke->address, a) : NULL);

        json_begin_object(w, "tls");
        json_write_bool(w, "handshake", ke_handshake_done(q));
        json_write_string(w, "version", ke_handshake_done(q) ? ke->tls.version : NULL);
        json_write_string(w, "cipher", ke_handshake_done(q) ? ke->tls.cipher : NULL);
        json_write_bool(w, "certificate", cert);
        json_write_string(w, "subject", cert ? ke->tls.subject : NULL);
        json_write_string(w, "issuer", cert ? ke->tls.issuer : NULL);
        json_sans(w, cert ? ke->tls.sans : NULL);
        json_write_string(w, "not_before", cert ? time_string(ke->tls.not_before, t) : NULL);
        json_write_string(w, "not_after", cert ? time_string(ke->tls.not_after, t) : NULL);
        /* The verifier's word on the certificate; without one, why the TLS step failed. */
        json_write_string(w, "verification",
                          cert ? ke->tls.verification : ke && ke->stage == NTS_KE_STAGE_TLS ? ke->reason : NULL);
        json_end_object(w);

        json_begin_array(w, "offered_aead");
        for (size_t i = 0; i < q->n_offer; i++)
                json_write_integer(w, NULL, q->offer[i]);
        json_end_array(w);
        if (ok) {
                json_write_integer(w, "aead", ke->aead);
                json_write_string(w, "aead_name", NTS_aead_name(ke->aead));
        } else {
                json_write_null(w, "aead");
                json_write_null(w, "aead_name");
        }

        json_begin_array(w, "cookie_sizes");
        for (size_t i = 0; ok && i < ke->n_cookies; i++)
                json_write_integer(w, NULL, (int64_t) ke->cookies[i].iov_len);
        json_end_array(w);

        json_write_string(w, "ntp_server", ok ? ke->ntp_server : NULL);
        if (ok && ke->ntp_port)
                json_write_integer(w, "ntp_port", ke->ntp_port);
        else
                json_write_null(w, "ntp_port");
        json_write_string(w, "ntp_address", q->have_ntp_address ? socket_address_to_string(&q->ntp_address, a) : NULL);

        json_records(w, q);
        json_end_object(w);
}

/* One server: the object nts-query has always printed. */
void query_json(JsonWriter *w, const char *key, const Query *q) {
        char a[SOCKET_ADDRESS_STRING_MAX];

        json_begin_object(w, key);
        json_write_string(w, "host", q->host);
        json_write_integer(w, "port", q->port);
        json_write_integer(w, "exit_code", q->exit);
        json_write_string(w, "status", query_exit_to_string(q->exit));
        json_write_string(w, "error", q->exit == QUERY_EXIT_VERIFIED ? NULL : q->failure);
        json_write_integer(w, "verified", (int64_t) q->n_verified);

        json_ke(w, q);

        json_begin_array(w, "exchanges");
        for (size_t i = 0; i < q->n_exchanges; i++)
                json_exchange(w, NULL, &q->exchanges[i], true, q->opts->timeout);
        json_end_array(w);

        if (q->plain_done) {
                json_begin_object(w, "plain");
                json_write_string(w, "address", socket_address_to_string(&q->plain_address, a));
                json_exchange(w, "reply", &q->plain, false, q->opts->timeout);
                json_end_object(w);
        } else
                json_write_null(w, "plain");

        json_end_object(w);
}

static void query_print_json(const Query *q) {
        JsonWriter w = JSON_WRITER_INIT(stdout);

        query_json(&w, NULL, q);
}

/* nts-query HOST[:KEPORT]: returns the exit status. */
int query_main(const QueryOptions *o) {
        Query q = { .opts = o, .host = o->host, .port = o->port };
        int r;

        (void) query_run(&q);
        if (o->json)
                query_print_json(&q);
        else
                query_print(&q);
        fflush(stdout);
        if (q.exit != QUERY_EXIT_VERIFIED)
                log_error("%s", q.failure);
        r = q.exit;
        query_done(&q);
        return r;
}
