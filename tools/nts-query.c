/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* nts-query: one NTS-KE session and a few NTS-protected NTP exchanges with one server, shown to
 * a person or (--json) to a monitoring system. It only reads time: no privileges, no clock
 * change. The protocol work is the daemon's own modules (nts_ke_client, nts_ntp_client); this
 * file only resolves names, drives them and prints what they report. */

#include <ctype.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>

#include "hexdecoct.h"
#include "iovec-util.h"
#include "json-writer.h"
#include "log.h"
#include "nts_crypto.h"
#include "nts_ke_client.h"
#include "nts_ntp_client.h"
#include "time-util.h"
#include "unaligned.h"

/* Documented in nts-query(1); monitoring scripts rely on them. */
typedef enum QueryExit {
        QUERY_EXIT_VERIFIED = 0,        /* at least one verified exchange */
        QUERY_EXIT_OTHER = 1,           /* out of memory, libssl or libcrypto missing, ... */
        QUERY_EXIT_USAGE = 2,
        QUERY_EXIT_RESOLVE = 3,
        QUERY_EXIT_CONNECT = 4,
        QUERY_EXIT_TLS = 5,             /* handshake, certificate, TLS I/O */
        QUERY_EXIT_KE = 6,              /* the KE response was refused or never completed */
        QUERY_EXIT_NTP = 7,             /* KE worked, but no exchange verified */
        _QUERY_EXIT_MAX,
} QueryExit;

static const char *const query_exit_table[_QUERY_EXIT_MAX] = {
        [QUERY_EXIT_VERIFIED] = "verified",
        [QUERY_EXIT_OTHER] = "error",
        [QUERY_EXIT_USAGE] = "usage",
        [QUERY_EXIT_RESOLVE] = "resolve",
        [QUERY_EXIT_CONNECT] = "connect",
        [QUERY_EXIT_TLS] = "tls",
        [QUERY_EXIT_KE] = "ke",
        [QUERY_EXIT_NTP] = "ntp",
};

#define QUERY_COUNT_MAX 64U
#define QUERY_ADDRESSES_MAX 16U

/* Every AEAD algorithm --aead= knows by name or number. Only those the crypto module can use
 * (NTS_aead_param()) may be offered: AES-GCM-SIV is named only to refuse it clearly
 * (docs/NTS.md, "AEAD algorithms"). */
static const NTS_AEADAlgorithm known_aead[] = {
        NTS_AEAD_AES_SIV_CMAC_256, NTS_AEAD_AES_SIV_CMAC_384, NTS_AEAD_AES_SIV_CMAC_512,
        NTS_AEAD_AES_128_GCM_SIV,  NTS_AEAD_AES_256_GCM_SIV,
};

static char *arg_host = NULL;
static uint16_t arg_port = NTS_KE_PORT;
static const char *arg_ca_file = NULL;
static const char *arg_ca_dir = NULL;
static unsigned arg_count = 4;
static usec_t arg_timeout = 5 * USEC_PER_SEC;
static int arg_family = AF_UNSPEC;
static NTS_AEADAlgorithm arg_aead[ELEMENTSOF(known_aead)];
static size_t arg_n_aead = 0;
static bool arg_json = false;
static bool arg_plain = false;
static char *arg_plain_host = NULL;
static uint16_t arg_plain_port = 123;
static bool arg_verbose = false;

typedef struct Exchange {
        int error;                      /* 0, or the negative errno of NTS_ntp_client_query() */
        NTS_NTPResult result;           /* its cookies have moved to the jar */
        size_t n_new_cookies;
} Exchange;

typedef struct Query {
        SocketAddress addresses[QUERY_ADDRESSES_MAX];
        size_t n_addresses;
        int resolve_error;              /* EAI_* of the KE server's name, 0 if resolved */

        NTS_AEADAlgorithm offer[ELEMENTSOF(known_aead)];
        size_t n_offer;

        NTS_KEResult *ke;

        SocketAddress ntp_address;
        bool have_ntp_address;
        int ntp_resolve_error;          /* EAI_* of the negotiated NTP server's name */
        bool aead_unsupported;          /* negotiated, but the loaded libcrypto lacks it */

        Exchange exchanges[QUERY_COUNT_MAX];
        size_t n_exchanges;
        size_t n_verified;

        bool plain_done;
        SocketAddress plain_address;
        int plain_resolve_error;
        Exchange plain;

        QueryExit exit;
        char failure[512];              /* one line, with exit != QUERY_EXIT_VERIFIED */
} Query;

static void query_done(Query *q) {
        NTS_ke_result_free(q->ke);
        for (size_t i = 0; i < q->n_exchanges; i++)
                NTS_ntp_result_done(&q->exchanges[i].result);
        NTS_ntp_result_done(&q->plain.result);
}

_printf_(3, 4) static QueryExit query_fail(Query *q, QueryExit e, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(q->failure, sizeof(q->failure), format, ap);
        va_end(ap);
        q->exit = e;
        return e;
}

static void help(void) {
        printf("%s [OPTIONS...] HOST[:KEPORT]\n\n"
               "Runs one NTS key exchange with HOST (port %u unless given) and a few\n"
               "NTS-protected NTP exchanges with the server it names, and prints what was\n"
               "negotiated and measured. Never changes the clock.\n\n"
               "  -h --help             Show this help\n"
               "     --version          Show package version\n"
               "     --ca=FILE|DIR      Trust only these CA certificates (PEM file or hashed\n"
               "                        directory) instead of the system store\n"
               "  -c --count=N          Number of NTP exchanges (default 4, at most %u)\n"
               "  -t --timeout=SEC      Timeout of the key exchange and of each NTP exchange\n"
               "                        (default 5s)\n"
               "  -4 / -6               Use IPv4 / IPv6 addresses only\n"
               "     --aead=LIST        Offer only these AEAD algorithms, in this order: names\n"
               "                        (AES_SIV_CMAC_256) or numbers (15, 16, 17), comma\n"
               "                        separated\n"
               "     --json             Print one JSON object for machines\n"
               "     --plain[=HOST[:PORT]]\n"
               "                        Also send one UNAUTHENTICATED NTP request to the\n"
               "                        negotiated server, or to HOST, for comparison\n"
               "  -v --verbose          Show the raw NTS-KE records\n\n"
               "Exit status: 0 at least one exchange verified, 1 other error, 2 usage,\n"
               "3 resolve, 4 connect, 5 TLS or certificate, 6 NTS-KE protocol, 7 no verified\n"
               "NTP reply. See nts-query(1).\n",
               program_invocation_short_name, NTS_KE_PORT, QUERY_COUNT_MAX);
}

static int parse_port(const char *s, uint16_t *ret) {
        unsigned long v;
        char *end;

        if (!s || !*s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end != 0 || v == 0 || v > UINT16_MAX)
                return -EINVAL;
        *ret = (uint16_t) v;
        return 0;
}

/* "name", "name:port", "1.2.3.4:port", "[::1]:port", "[::1]" or "::1" (more than one colon
 * without brackets is an IPv6 address without port). */
static int parse_host_port(const char *s, char **ret_host, uint16_t *ret_port) {
        const char *colon;
        char *host;

        if (s[0] == '[') {
                const char *close = strchr(s, ']');

                if (!close || close == s + 1 || (close[1] != 0 && close[1] != ':'))
                        return -EINVAL;
                if (close[1] == ':' && parse_port(close + 2, ret_port) < 0)
                        return -EINVAL;
                host = strndup(s + 1, (size_t) (close - s - 1));
        } else {
                colon = strchr(s, ':');
                if (colon && !strchr(colon + 1, ':')) {
                        if (colon == s || parse_port(colon + 1, ret_port) < 0)
                                return -EINVAL;
                        host = strndup(s, (size_t) (colon - s));
                } else {
                        if (!*s)
                                return -EINVAL;
                        host = strdup(s);
                }
        }
        if (!host)
                return -ENOMEM;

        free(*ret_host);
        *ret_host = host;
        return 0;
}

/* Compares ignoring case, '-' and '_', and an optional "AEAD_" prefix on either side. */
static bool aead_name_matches(const char *given, const char *name) {
        if (strncasecmp(given, "AEAD", 4) == 0 && (given[4] == '_' || given[4] == '-'))
                given += 5;
        name += strlen("AEAD_");

        for (; *given && *name; given++, name++) {
                char g = *given == '-' ? '_' : *given;
                if (toupper((unsigned char) g) != *name)
                        return false;
        }
        return *given == 0 && *name == 0;
}

static int parse_aead_one(const char *s, NTS_AEADAlgorithm *ret) {
        uint16_t id;

        bool numeric = parse_port(s, &id) >= 0;

        for (size_t i = 0; i < ELEMENTSOF(known_aead); i++)
                if (numeric ? known_aead[i] == id : aead_name_matches(s, NTS_aead_name(known_aead[i]))) {
                        *ret = known_aead[i];
                        return 0;
                }

        return -EINVAL;
}

static int parse_aead_list(const char *s) {
        _cleanup_free_ char *copy = strdup(s);
        char *saveptr = NULL;

        if (!copy)
                return log_oom();

        arg_n_aead = 0;
        for (char *w = strtok_r(copy, ",", &saveptr); w; w = strtok_r(NULL, ",", &saveptr)) {
                NTS_AEADAlgorithm a;

                if (parse_aead_one(w, &a) < 0)
                        return log_error_errno(EINVAL, "Unknown AEAD algorithm '%s'; known: "
                                               "AES_SIV_CMAC_256 (15), AES_SIV_CMAC_384 (16), AES_SIV_CMAC_512 (17).", w);
                if (!NTS_aead_param(a))
                        return log_error_errno(EOPNOTSUPP, "%s (%u) is never offered: servers derive its keys in two "
                                               "incompatible ways (chrony 4.4 to 4.6 unlike RFC 8915), and no test "
                                               "exchanges it with a server. See nts-query(1).",
                                               NTS_aead_name(a), a);
                for (size_t i = 0; i < arg_n_aead; i++)
                        if (arg_aead[i] == a)
                                return log_error_errno(EINVAL, "AEAD algorithm '%s' given twice.", w);
                arg_aead[arg_n_aead++] = a;
        }
        if (arg_n_aead == 0)
                return log_error_errno(EINVAL, "--aead= needs at least one algorithm.");
        return 0;
}

static int parse_ca(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return log_error_errno(errno, "Cannot use --ca=%s: %m", path);
        arg_ca_file = arg_ca_dir = NULL;
        if (S_ISDIR(st.st_mode))
                arg_ca_dir = path;
        else
                arg_ca_file = path;
        return 0;
}

/* Returns 1 to go on, 0 to exit successfully (--help, --version), < 0 on a usage error. */
static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_CA,
                ARG_AEAD,
                ARG_JSON,
                ARG_PLAIN,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "ca", required_argument, NULL, ARG_CA },
                { "count", required_argument, NULL, 'c' },
                { "timeout", required_argument, NULL, 't' },
                { "aead", required_argument, NULL, ARG_AEAD },
                { "json", no_argument, NULL, ARG_JSON },
                { "plain", optional_argument, NULL, ARG_PLAIN },
                { "verbose", no_argument, NULL, 'v' },
                {}
        };
        unsigned long n;
        char *end;
        int c, r;

        while ((c = getopt_long(argc, argv, "hc:t:46v", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("nts-query (timesyncd-nts) %s\n", PROJECT_VERSION);
                        return 0;
                case ARG_CA:
                        r = parse_ca(optarg);
                        if (r < 0)
                                return r;
                        break;
                case 'c':
                        errno = 0;
                        n = strtoul(optarg, &end, 10);
                        if (errno != 0 || *end != 0 || optarg[0] < '0' || optarg[0] > '9' || n < 1 ||
                            n > QUERY_COUNT_MAX)
                                return log_error_errno(EINVAL, "--count= takes a number from 1 to %u, not '%s'.",
                                                       QUERY_COUNT_MAX, optarg);
                        arg_count = (unsigned) n;
                        break;
                case 't':
                        r = parse_sec(optarg, &arg_timeout);
                        if (r < 0 || arg_timeout == 0 || arg_timeout == USEC_INFINITY)
                                return log_error_errno(EINVAL, "--timeout= takes a positive time span, not '%s'.",
                                                       optarg);
                        break;
                case '4':
                        arg_family = AF_INET;
                        break;
                case '6':
                        arg_family = AF_INET6;
                        break;
                case ARG_AEAD:
                        r = parse_aead_list(optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_JSON:
                        arg_json = true;
                        break;
                case ARG_PLAIN:
                        arg_plain = true;
                        if (optarg) {
                                arg_plain_port = 123;
                                r = parse_host_port(optarg, &arg_plain_host, &arg_plain_port);
                                if (r == -ENOMEM)
                                        return log_oom();
                                if (r < 0)
                                        return log_error_errno(r, "--plain= takes HOST[:PORT], not '%s'.", optarg);
                        }
                        break;
                case 'v':
                        arg_verbose = true;
                        break;
                case '?':
                        return -EINVAL;
                default:
                        assert_not_reached();
                }

        if (optind != argc - 1)
                return log_error_errno(EINVAL, "Exactly one HOST[:KEPORT] expected, see --help.");
        r = parse_host_port(argv[optind], &arg_host, &arg_port);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "Expected HOST[:KEPORT], not '%s'.", argv[optind]);
        return 1;
}

/* Blocking getaddrinfo(): a one-shot tool has nothing else to do meanwhile. Returns 0 or the
 * EAI_* code. */
static int resolve(const char *host, uint16_t port, int socktype, SocketAddress *ret, size_t max, size_t *ret_n) {
        struct addrinfo hints = { .ai_family = arg_family, .ai_socktype = socktype };
        struct addrinfo *ai = NULL;
        size_t n = 0;
        int k;

        k = getaddrinfo(host, NULL, &hints, &ai);
        if (k != 0)
                return k;

        for (struct addrinfo *i = ai; i && n < max; i = i->ai_next) {
                if (!IN_SET(i->ai_family, AF_INET, AF_INET6) || i->ai_addrlen > sizeof(ret[n].sa))
                        continue;
                ret[n] = (SocketAddress) { .len = i->ai_addrlen };
                memcpy(&ret[n].sa, i->ai_addr, i->ai_addrlen);
                socket_address_set_port(&ret[n], port);
                n++;
        }
        freeaddrinfo(ai);
        if (n == 0)
                return EAI_NONAME;
        *ret_n = n;
        return 0;
}

static int run_ke(Query *q) {
        NTS_KEClientParams p = {
                .addresses = q->addresses,
                .n_addresses = q->n_addresses,
                .tls = { .hostname = arg_host, .ca_file = arg_ca_file, .ca_dir = arg_ca_dir },
                .aead = q->offer,
                .n_aead = q->n_offer,
                .timeout_usec = arg_timeout,
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

static bool exchange_verified(const Exchange *x) {
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
        for (; q->n_exchanges < arg_count && jar.n > 0; q->n_exchanges++) {
                Exchange *x = &q->exchanges[q->n_exchanges];
                struct iovec cookie = jar.cookies[--jar.n];

                jar.cookies[jar.n] = (struct iovec) {};
                NTS_NTPQueryParams p = {
                        .c2s = c2s,
                        .s2c = s2c,
                        .cookie = cookie,
                        .timeout_usec = arg_timeout,
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

        if (arg_plain_host) {
                q->plain_resolve_error = resolve(arg_plain_host, arg_plain_port, SOCK_DGRAM, &q->plain_address, 1, &n);
                if (q->plain_resolve_error != 0)
                        return;
        } else if (q->have_ntp_address)
                q->plain_address = q->ntp_address;
        else
                return;

        q->plain_done = true;
        q->plain.error = NTS_ntp_client_query_unauthenticated(&q->plain_address, arg_timeout, &q->plain.result);
}

static int resolve_ntp_server(Query *q) {
        uint16_t port = q->ke->ntp_port ?: NTP_PORT;
        size_t n;

        if (!q->ke->ntp_server) {
                q->ntp_address = q->ke->address;
                socket_address_set_port(&q->ntp_address, port);
                q->have_ntp_address = true;
                return 0;
        }

        q->ntp_resolve_error = resolve(q->ke->ntp_server, port, SOCK_DGRAM, &q->ntp_address, 1, &n);
        q->have_ntp_address = q->ntp_resolve_error == 0;
        return q->ntp_resolve_error;
}

static QueryExit run(Query *q) {
        int n, r;

        if (arg_n_aead > 0) {
                memcpy(q->offer, arg_aead, arg_n_aead * sizeof(arg_aead[0]));
                q->n_offer = arg_n_aead;
        } else {
                n = NTS_aead_offer(q->offer, ELEMENTSOF(q->offer));
                if (n < 0)
                        return query_fail(q, QUERY_EXIT_OTHER, "Cannot load libcrypto: %s", strerror(-n));
                q->n_offer = (size_t) n;
        }

        q->resolve_error = resolve(arg_host, arg_port, SOCK_STREAM, q->addresses, ELEMENTSOF(q->addresses),
                                   &q->n_addresses);
        if (q->resolve_error != 0) {
                if (arg_plain)
                        run_plain(q);
                return query_fail(q, QUERY_EXIT_RESOLVE, "Cannot resolve %s: %s", arg_host,
                                  gai_strerror(q->resolve_error));
        }

        r = run_ke(q);
        if (r < 0)
                return query_fail(q, QUERY_EXIT_OTHER, "Cannot run the NTS-KE session: %s", strerror(-r));
        if (q->ke->error < 0) {
                if (arg_plain)
                        run_plain(q);
                return query_fail(q, ke_failure_exit(q->ke), "NTS-KE with %s failed (%s stage): %s", arg_host,
                                  NTS_ke_stage_to_string(q->ke->stage), q->ke->reason);
        }

        if (resolve_ntp_server(q) != 0) {
                if (arg_plain)
                        run_plain(q);
                return query_fail(q, QUERY_EXIT_RESOLVE, "Cannot resolve the negotiated NTP server %s: %s",
                                  q->ke->ntp_server, gai_strerror(q->ntp_resolve_error));
        }

        r = run_exchanges(q);
        if (r < 0)
                return query_fail(q, QUERY_EXIT_OTHER, "Cannot set up the NTP exchanges: %s", strerror(-r));
        if (arg_plain)
                run_plain(q);

        if (q->aead_unsupported)
                return query_fail(q, QUERY_EXIT_NTP, "%s was negotiated, but the loaded libcrypto does not "
                                  "implement it: no NTP exchange possible",
                                  strna(NTS_aead_name(q->ke->aead)));
        if (q->n_verified == 0)
                return query_fail(q, QUERY_EXIT_NTP, "No verified NTP reply from %s in %zu exchange(s)",
                                  q->ke->ntp_server ?: arg_host, q->n_exchanges);

        q->exit = QUERY_EXIT_VERIFIED;
        return QUERY_EXIT_VERIFIED;
}

/* ---- Output ---- */

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
static const char *exchange_error_string(const Exchange *x, bool authenticated, char buf[static 128]) {
        if (x->error == 0)
                return header_synchronised(&x->result.header) ? NULL : "the server is not synchronised";
        if (x->result.nts_error != NTS_OK)
                return NTS_error_string(x->result.nts_error);
        if (x->error == -EPROTO)
                snprintf(buf, 128, "kiss-o'-death %s", x->result.kiss);
        else if (x->error == -ETIMEDOUT)
                snprintf(buf, 128, "no reply within %s", FORMAT_TIMESPAN(arg_timeout, USEC_PER_MSEC));
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

static void print_exchange(const Exchange *x, bool authenticated) {
        const NTPHeader *h = &x->result.header;
        char buf[128], refid[16];
        const char *e = exchange_error_string(x, authenticated, buf);

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
static void print_certificate(const NTS_KEResult *ke) {
        char t1[32], t2[32];
        bool ok = streq(ke->tls.verification, "ok");

        printf("Certificate:        subject %s\n", ke->tls.subject);
        printf("                    SANs    %s\n", isempty(ke->tls.sans) ? "(none)" : ke->tls.sans);
        printf("                    issuer  %s\n", ke->tls.issuer);
        printf("                    valid   %s to %s\n", strna(time_string(ke->tls.not_before, t1)),
               strna(time_string(ke->tls.not_after, t2)));
        printf("                    verification %s%s (name %s, %s%s)\n", ok ? "ok" : "FAILED: ",
               ok ? "" : ke->tls.verification, arg_host,
               arg_ca_file || arg_ca_dir ? "trusting " : "system store", arg_ca_file ?: arg_ca_dir ?: "");
}

static void print_ke(const Query *q) {
        const NTS_KEResult *ke = q->ke;
        char a[SOCKET_ADDRESS_STRING_MAX];

        printf("NTS-KE server:      %s (%s)\n", arg_host, socket_address_to_string(&ke->address, a));
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
                print_certificate(ke);

        if (iovec_is_set(&ke->response))
                print_records(q, arg_verbose);

        if (ke->error < 0)
                return;

        printf("AEAD:               %s (%u)\n", strna(NTS_aead_name(ke->aead)), ke->aead);
        printf("Cookies:            %zu, sizes", ke->n_cookies);
        for (size_t i = 0; i < ke->n_cookies; i++)
                printf(" %zu", ke->cookies[i].iov_len);
        printf(" bytes\n");
        printf("NTP server:         %s%s, port %u%s\n", ke->ntp_server ?: arg_host,
               ke->ntp_server ? " (negotiated)" : " (not negotiated: the KE server)", ke->ntp_port ?: NTP_PORT,
               ke->ntp_port ? " (negotiated)" : " (not negotiated: default)");
        if (q->have_ntp_address)
                printf("NTP address:        %s\n", socket_address_to_string(&q->ntp_address, a));
}

static void print_human(const Query *q) {
        char label[32], a[SOCKET_ADDRESS_STRING_MAX];

        if (q->ke)
                print_ke(q);

        for (size_t i = 0; i < q->n_exchanges; i++) {
                snprintf(label, sizeof(label), "Exchange %zu:", i + 1);
                printf("%-20s", label);
                print_exchange(&q->exchanges[i], true);
        }

        if (arg_plain) {
                if (q->plain_done) {
                        printf("Plain NTP:          UNAUTHENTICATED query to %s, for comparison only\n",
                               socket_address_to_string(&q->plain_address, a));
                        printf("                    ");
                        print_exchange(&q->plain, false);
                } else if (q->plain_resolve_error != 0)
                        printf("Plain NTP:          cannot resolve %s: %s\n", arg_plain_host,
                               gai_strerror(q->plain_resolve_error));
                else
                        printf("Plain NTP:          not sent: no NTP server known\n");
        }

        if (q->ke && q->ke->error >= 0)
                printf("Result:             %zu of %zu exchange%s verified\n", q->n_verified, q->n_exchanges,
                       q->n_exchanges == 1 ? "" : "s");
}

static void json_exchange(JsonWriter *w, const char *key, const Exchange *x, bool authenticated) {
        const NTPHeader *h = &x->result.header;
        char buf[128], refid[16];

        json_begin_object(w, key);
        json_write_bool(w, "authenticated", authenticated && x->error == 0);
        json_write_bool(w, "verified", authenticated && exchange_verified(x));
        json_write_string(w, "error", exchange_error_string(x, authenticated, buf));
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
                if (arg_verbose) {
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

static void print_json(const Query *q) {
        JsonWriter w = JSON_WRITER_INIT(stdout);
        char a[SOCKET_ADDRESS_STRING_MAX];

        json_begin_object(&w, NULL);
        json_write_string(&w, "host", arg_host);
        json_write_integer(&w, "port", arg_port);
        json_write_integer(&w, "exit_code", q->exit);
        json_write_string(&w, "status", query_exit_table[q->exit]);
        json_write_string(&w, "error", q->exit == QUERY_EXIT_VERIFIED ? NULL : q->failure);
        json_write_integer(&w, "verified", (int64_t) q->n_verified);

        json_ke(&w, q);

        json_begin_array(&w, "exchanges");
        for (size_t i = 0; i < q->n_exchanges; i++)
                json_exchange(&w, NULL, &q->exchanges[i], true);
        json_end_array(&w);

        if (q->plain_done) {
                json_begin_object(&w, "plain");
                json_write_string(&w, "address", socket_address_to_string(&q->plain_address, a));
                json_exchange(&w, "reply", &q->plain, false);
                json_end_object(&w);
        } else
                json_write_null(&w, "plain");

        json_end_object(&w);
}

int main(int argc, char *argv[]) {
        Query q = {};
        int r;

        log_parse_environment();

        r = parse_argv(argc, argv);
        if (r <= 0) {
                free(arg_host);
                free(arg_plain_host);
                return r < 0 ? QUERY_EXIT_USAGE : EXIT_SUCCESS;
        }

        /* libssl writes with write(): a server that goes away must not kill us. */
        (void) signal(SIGPIPE, SIG_IGN);

        (void) run(&q);

        if (arg_json)
                print_json(&q);
        else
                print_human(&q);
        fflush(stdout);
        if (q.exit != QUERY_EXIT_VERIFIED)
                log_error("%s", q.failure);

        query_done(&q);
        free(arg_host);
        free(arg_plain_host);
        return q.exit;
}
