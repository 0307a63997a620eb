/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* nts-query: one NTS-KE session and a few NTS-protected NTP exchanges with one server, shown to
 * a person or (--json) to a monitoring system; or the same for several sources of a pool: the
 * targets of a DNSSEC-validated SRV pool (srv:NAME), or the members of a key-exchange pool
 * (--sources=N); or for every NTS server of the daemon's configuration (--config), read by the
 * daemon's own reader with its NTSTrustedCertificates=. It only reads time: no privileges, no
 * clock change. The protocol work is the daemon's own modules (nts-ke-client, nts-ntp-client,
 * nts-pool, timesyncd-srv, resolve-util, timesyncd-conf); this file only drives them and prints
 * what they report. */

#include <ctype.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>

#include "hexdecoct.h"
#include "hostname-util.h"
#include "iovec-util.h"
#include "json-writer.h"
#include "log.h"
#include "nts-crypto.h"
#include "nts-ke-client.h"
#include "nts-ntp-client.h"
#include "nts-pool.h"
#include "resolve-util.h"
#include "server-name.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"
#include "timesyncd-conf.h"
#include "timesyncd-source-identity.h"
#include "timesyncd-srv.h"
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
        QUERY_EXIT_DNSSEC = 8,          /* srv: the SRV records are not DNSSEC-authenticated */
        QUERY_EXIT_DISAGREE = 9,        /* two sources that are one server disagree */
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
        [QUERY_EXIT_DNSSEC] = "dnssec",
        [QUERY_EXIT_DISAGREE] = "disagree",
};

#define QUERY_COUNT_MAX 64U
#define QUERY_ADDRESSES_MAX 16U
/* Sources of one pool: SRV targets checked, or distinct members of a key-exchange pool; as
 * many as NTP Server Deny records fit in one request. */
#define QUERY_SOURCES_MAX NTS_KE_MAX_DENIED_SERVERS
/* Key exchanges with a key-exchange pool: every new member may cost one answer that brought
 * nothing new, and a round ends after NTS_POOL_MAX_FRUITLESS of those in a row. */
#define QUERY_ATTEMPTS_MAX (2 * QUERY_SOURCES_MAX + NTS_POOL_MAX_FRUITLESS)

/* Every AEAD algorithm --aead= knows by name or number. Only those the crypto module can use
 * (NTS_aead_param()) may be offered: AEAD_AES_256_GCM_SIV is named only to refuse it clearly
 * (docs/NTS.md, "AEAD algorithms"). */
static const NTS_AEADAlgorithm known_aead[] = {
        NTS_AEAD_AES_SIV_CMAC_256, NTS_AEAD_AES_SIV_CMAC_384, NTS_AEAD_AES_SIV_CMAC_512,
        NTS_AEAD_AES_128_GCM_SIV,  NTS_AEAD_AES_256_GCM_SIV,
};

static char *arg_host = NULL;          /* with arg_srv: the NAME of srv:NAME */
static uint16_t arg_port = NTS_KE_PORT;
static bool arg_srv = false;
static unsigned arg_sources = 0;        /* 0: not given */
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
static bool arg_config = false;
static char *arg_config_file = NULL;    /* with arg_config; NULL: the standard search */
static bool arg_ca_given = false;

typedef struct Exchange {
        int error;                      /* 0, or the negative errno of NTS_ntp_client_query() */
        NTS_NTPResult result;           /* its cookies have moved to the jar */
        size_t n_new_cookies;
} Exchange;

typedef struct Query {
        const char *host;               /* the KE server: its name, also for the certificate */
        uint16_t port;
        char *const *deny;              /* NTP Server Deny records sent (key-exchange pools) */
        size_t n_deny;

        SocketAddress addresses[QUERY_ADDRESSES_MAX];
        size_t n_addresses;
        int resolve_error;              /* of the KE server's name: 0, or a negative errno */

        NTS_AEADAlgorithm offer[ELEMENTSOF(known_aead)];
        size_t n_offer;

        NTS_KEResult *ke;

        SocketAddress ntp_address;
        bool have_ntp_address;
        int ntp_resolve_error;          /* of the negotiated NTP server's name */
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

        bool pool_checked;              /* a key-exchange pool's answer, judged: */
        NTS_PoolVerdict pool_verdict;

        /* Several sources: which server it is, as the daemon sees it, and an earlier source
         * that is the same server (sources_find_twins()). */
        SourceIdentity identity;
        const struct Query *twin_of;
        SourceSameness twin_why;
} Query;

static void query_done(Query *q) {
        NTS_ke_result_free(q->ke);
        for (size_t i = 0; i < q->n_exchanges; i++)
                NTS_ntp_result_done(&q->exchanges[i].result);
        NTS_ntp_result_done(&q->plain.result);
}

/* The failure of a query, of several sources or of a configuration: exit status e, and the
 * reason, one line, in failure (an array). */
_printf_(5, 6) static QueryExit fail_with(QueryExit *exit, char *failure, size_t size, QueryExit e,
                                          const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(failure, size, format, ap);
        va_end(ap);
        *exit = e;
        return e;
}
#define FAIL_WITH(x, e, ...) fail_with(&(x)->exit, (x)->failure, sizeof((x)->failure), (e), __VA_ARGS__)
#define query_fail FAIL_WITH

static void help(void) {
        printf("%s [OPTIONS...] HOST[:KEPORT]\n"
               "%s [OPTIONS...] srv:NAME\n"
               "%s [OPTIONS...] --config[=FILE]\n\n"
               "Runs one NTS key exchange with HOST (port %u unless given) and a few\n"
               "NTS-protected NTP exchanges with the server it names, and prints what was\n"
               "negotiated and measured. Never changes the clock. With srv:NAME, looks up\n"
               "the SRV records _ntske._tcp.NAME through systemd-resolved, uses them only\n"
               "when DNSSEC-authenticated, and checks each target the same way. With\n"
               "--config, checks every NTS server of systemd-timesyncd's configuration.\n\n"
               "  -h --help             Show this help\n"
               "     --version          Show package version\n"
               "     --ca=FILE|DIR      Trust only these CA certificates (PEM file or hashed\n"
               "                        directory) instead of the system store (with\n"
               "                        --config: instead of NTSTrustedCertificates=)\n"
               "     --config[=FILE]    Check the NTS= servers of timesyncd.conf and its\n"
               "                        drop-ins (or of FILE alone), trusting what\n"
               "                        NTSTrustedCertificates= says\n"
               "  -c --count=N          Number of NTP exchanges per server (default 4, at\n"
               "                        most %u)\n"
               "  -n --sources=N        srv:NAME: check the first N targets (default all);\n"
               "                        HOST: a key-exchange pool, get up to N distinct\n"
               "                        members with NTP Server Deny records (at most %u)\n"
               "  -t --timeout=SEC      Timeout of name lookups, of the key exchange and of\n"
               "                        each NTP exchange (default 5s)\n"
               "  -4 / -6               Use IPv4 / IPv6 addresses only\n"
               "     --aead=LIST        Offer only these AEAD algorithms, in this order: names\n"
               "                        (AES_SIV_CMAC_256) or numbers (15, 16, 17, 30), comma\n"
               "                        separated\n"
               "     --json             Print one JSON object for machines\n"
               "     --plain[=HOST[:PORT]]\n"
               "                        Also send one UNAUTHENTICATED NTP request to the\n"
               "                        negotiated server, or to HOST, for comparison (one\n"
               "                        server only)\n"
               "  -v --verbose          Show the raw NTS-KE records\n\n"
               "Exit status: 0 verified (every source, with several), 1 other error, 2 usage,\n"
               "3 resolve, 4 connect, 5 TLS or certificate, 6 NTS-KE protocol, 7 no verified\n"
               "NTP reply, 8 SRV records not DNSSEC-authenticated, 9 two sources that are\n"
               "one server disagree. See nts-query(1).\n",
               program_invocation_short_name, program_invocation_short_name, program_invocation_short_name,
               NTS_KE_PORT, QUERY_COUNT_MAX,
               QUERY_SOURCES_MAX);
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
                                               "AES_SIV_CMAC_256 (15), AES_SIV_CMAC_384 (16), AES_SIV_CMAC_512 (17), "
                                               "AES_128_GCM_SIV (30).", w);
                if (!NTS_aead_param(a))
                        return log_error_errno(EOPNOTSUPP, "%s (%u) is never offered: no NTS server offers it, and "
                                               "how servers derive its keys is not settled (chrony's record 1024 "
                                               "covers only AES_128_GCM_SIV). See nts-query(1).",
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

/* A decimal number from min to max. */
static int parse_count(const char *s, unsigned min, unsigned max, unsigned *ret) {
        uint64_t v;

        if (parse_unsigned(s, max, &v) < 0 || v < min)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

/* "srv:NAME", NAME a host name (a trailing dot allowed) without port: the records give the
 * ports. Else HOST[:KEPORT]. */
static int parse_server(const char *s) {
        const char *name = startswith(s, "srv:");
        _cleanup_free_ char *copy = NULL;
        int r;

        if (!name) {
                r = parse_host_port(s, &arg_host, &arg_port);
                if (r == -ENOMEM)
                        return log_oom();
                if (r < 0)
                        return log_error_errno(r, "Expected HOST[:KEPORT] or srv:NAME, not '%s'.", s);
                return 0;
        }

        copy = strdup(name);
        if (!copy)
                return log_oom();
        if (endswith(copy, "."))
                copy[strlen(copy) - 1] = 0;
        if (!hostname_is_valid(copy))
                return log_error_errno(EINVAL, "srv:NAME takes a DNS name without port (the SRV records give "
                                       "the ports), not '%s'.", name);
        free(arg_host);
        arg_host = TAKE_PTR(copy);
        arg_srv = true;
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
                ARG_CONFIG,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "ca", required_argument, NULL, ARG_CA },
                { "count", required_argument, NULL, 'c' },
                { "sources", required_argument, NULL, 'n' },
                { "timeout", required_argument, NULL, 't' },
                { "aead", required_argument, NULL, ARG_AEAD },
                { "json", no_argument, NULL, ARG_JSON },
                { "plain", optional_argument, NULL, ARG_PLAIN },
                { "verbose", no_argument, NULL, 'v' },
                { "config", optional_argument, NULL, ARG_CONFIG },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "hc:n:t:46v", options, NULL)) >= 0)
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
                        arg_ca_given = true;
                        break;
                case ARG_CONFIG:
                        arg_config = true;
                        if (free_and_strdup(&arg_config_file, optarg) < 0)
                                return log_oom();
                        break;
                case 'c':
                        if (parse_count(optarg, 1, QUERY_COUNT_MAX, &arg_count) < 0)
                                return log_error_errno(EINVAL, "--count= takes a number from 1 to %u, not '%s'.",
                                                       QUERY_COUNT_MAX, optarg);
                        break;
                case 'n':
                        if (parse_count(optarg, 1, QUERY_SOURCES_MAX, &arg_sources) < 0)
                                return log_error_errno(EINVAL, "--sources= takes a number from 1 to %u, not '%s'.",
                                                       QUERY_SOURCES_MAX, optarg);
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

        if (arg_config) {
                if (optind != argc)
                        return log_error_errno(EINVAL, "--config takes the servers from the configuration, not '%s'.",
                                               argv[optind]);
                if (arg_plain || arg_sources > 0)
                        return log_error_errno(EINVAL, "--plain and --sources= work with one server, not with --config.");
                return 1;
        }
        if (optind != argc - 1)
                return log_error_errno(EINVAL, "Exactly one HOST[:KEPORT] or srv:NAME expected, see --help.");
        r = parse_server(argv[optind]);
        if (r < 0)
                return r;
        if (arg_plain && (arg_srv || arg_sources > 0))
                return log_error_errno(EINVAL, "--plain works with one server only, not with srv:NAME or --sources=.");
        return 1;
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
static int resolve(const char *host, uint16_t port, int socktype, SocketAddress *ret, size_t max, size_t *ret_n) {
        _cleanup_(resolve_query_freep) ResolveQuery *rq = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        ResolveRun run = { .port = port, .addresses = ret, .max = max };
        int r;

        r = sd_event_new(&e);
        if (r < 0)
                return r;
        run.event = e;
        r = sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, arg_timeout, 0, on_resolve_timeout, &run);
        if (r < 0)
                return r;
        r = resolve_query_new(e, host, NULL, arg_family, socktype, on_resolved, &run, &rq);
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
                .tls = { .hostname = q->host, .ca_file = arg_ca_file, .ca_dir = arg_ca_dir },
                .aead = q->offer,
                .n_aead = q->n_offer,
                .timeout_usec = arg_timeout,
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
                if (q->plain_resolve_error < 0)
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

/* The key exchange with q->host: returns QUERY_EXIT_VERIFIED when it worked (nothing is
 * verified yet), else the failure, also in q->exit and q->failure. */
static QueryExit query_key_exchange(Query *q) {
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

        q->resolve_error = resolve(q->host, q->port, SOCK_STREAM, q->addresses, ELEMENTSOF(q->addresses),
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
static QueryExit query_ntp(Query *q) {
        int r;

        assert(q->ke && q->ke->error >= 0);

        if (!q->have_ntp_address && resolve_ntp_server(q) < 0)
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
static QueryExit run_one(Query *q) {
        QueryExit e;

        e = query_key_exchange(q);
        if (e == QUERY_EXIT_VERIFIED)
                e = query_ntp(q);
        if (arg_plain)
                run_plain(q);
        return e;
}

/* ---- Several sources: SRV pools and key-exchange pools ---- */

typedef struct Sources {
        /* srv:NAME */
        bool srv_looked_up;
        int srv_error;                  /* of the lookup: 0, or srv_handler_t's errno */
        char *srv_message;              /* with srv_error: the lookup's reason */
        SrvAnswer srv;                  /* in RFC 2782 order, as the daemon would use them */

        /* A key-exchange pool: the names sent as NTP Server Deny records, the members in
         * use first, then those turned down for sharing an address with one. */
        char *deny[NTS_KE_MAX_DENIED_SERVERS];
        size_t n_deny;
        const char *stop_reason;        /* why the round ended before --sources= members */

        /* Every key exchange, in order; those without pool_checked, or judged
         * NTS_POOL_NEW, are sources. */
        Query *queries[QUERY_ATTEMPTS_MAX];
        size_t n_queries;

        QueryExit exit;
        char failure[512];
} Sources;

static bool query_is_source(const Query *q) {
        return !q->pool_checked || q->pool_verdict == NTS_POOL_NEW;
}

static void sources_done(Sources *S) {
        free(S->srv_message);
        srv_answer_done(&S->srv);
        for (size_t i = 0; i < S->n_deny; i++)
                free(S->deny[i]);
        for (size_t i = 0; i < S->n_queries; i++) {
                query_done(S->queries[i]);
                free(S->queries[i]);
        }
}

#define sources_fail FAIL_WITH

static Query *sources_add_query(Sources *S, const char *host, uint16_t port) {
        Query *q;

        assert(S->n_queries < ELEMENTSOF(S->queries));

        q = new0(Query, 1);
        if (!q)
                return NULL;
        q->host = host;
        q->port = port;
        q->deny = S->deny;
        q->n_deny = S->n_deny;
        S->queries[S->n_queries++] = q;
        return q;
}

static const char *query_name(const Query *q) {
        return q->ke && q->ke->ntp_server ? q->ke->ntp_server : q->host;
}

/* What the daemon knows of a source once it polls it (timesyncd-several-vote.c): the NTP
 * server's address, and from a key exchange that worked its server's address and certificate
 * key. ke_pool: the pool whose members these are, NULL for SRV targets. */
static void query_identify(Query *q, const void *ke_pool) {
        q->identity = (SourceIdentity) { .ke_pool = ke_pool };
        if (q->have_ntp_address)
                source_identity_set_ntp_address(&q->identity, &q->ntp_address);
        if (!q->ke || q->ke->error < 0)
                return;
        source_identity_set_ke_address(&q->identity, &q->ke->address);
        if (q->ke->tls.has_key_sha256)
                source_identity_set_key(&q->identity, q->ke->tls.key_sha256);
}

/* One server, one source, by the daemon's own rule (source_identity_same()): each source that
 * is the same server as an earlier one is tied to the first of its kind and counts with it. */
static void sources_find_twins(Sources *S) {
        for (size_t j = 0; j < S->n_queries; j++)
                if (query_is_source(S->queries[j]))
                        query_identify(S->queries[j], arg_srv ? NULL : S);

        for (size_t j = 0; j < S->n_queries; j++) {
                Query *b = S->queries[j];

                if (!query_is_source(b))
                        continue;
                for (size_t i = 0; i < j && !b->twin_of; i++) {
                        const Query *a = S->queries[i];
                        SourceSameness why;

                        if (!query_is_source(a) || a->twin_of)
                                continue;
                        why = source_identity_same(&a->identity, &b->identity);
                        if (why != SOURCE_DISTINCT) {
                                b->twin_of = a;
                                b->twin_why = why;
                        }
                }
        }
}

/* "same NTP address 192.0.2.1": why q is the same server as its twin. */
static const char *query_twin_reason(const Query *q, char buf[static SOURCE_IDENTITY_REASON_MAX]) {
        assert(q->twin_of);
        return source_identity_reason(&q->twin_of->identity, q->twin_why, buf);
}

/* The IP address q shares with its twin; NULL when they share a certificate key. */
static const char *query_twin_address(const Query *q, char buf[static IN_ADDR_TO_STRING_MAX]) {
        const SourceIdentity *id = &q->twin_of->identity;

        if (q->twin_why == SOURCE_SAME_NTP_ADDRESS)
                return in_addr_to_string(id->ntp_family, &id->ntp_address, buf, IN_ADDR_TO_STRING_MAX);
        if (q->twin_why == SOURCE_SAME_KE_ADDRESS)
                return in_addr_to_string(id->ke_family, &id->ke_address, buf, IN_ADDR_TO_STRING_MAX);
        return NULL;
}

/* The first verified exchange of a source; NULL without one. */
static const Exchange *query_first_verified(const Query *q) {
        for (size_t i = 0; i < q->n_exchanges; i++)
                if (exchange_verified(&q->exchanges[i]))
                        return &q->exchanges[i];
        return NULL;
}

/* Two verified sources that are one server disagree when the intervals their first verified
 * exchanges give (offset plus or minus root distance) lie further apart than the step
 * threshold of RFC 5905 (128 ms): one server cannot be right twice. Returns the difference of
 * the offsets then, else 0. */
#define TWIN_DISAGREEMENT_NSEC INT64_C(128000000)
static int64_t twin_disagreement_nsec(const Query *a, const Query *b) {
        const Exchange *x = query_first_verified(a), *y = query_first_verified(b);
        int64_t d, bound;

        if (!x || !y)
                return 0;
        d = y->result.sample.offset_nsec - x->result.sample.offset_nsec;
        bound = ntp_sample_root_distance_nsec(&x->result.sample, &x->result.header, 0) +
                ntp_sample_root_distance_nsec(&y->result.sample, &y->result.header, 0) + TWIN_DISAGREEMENT_NSEC;
        return d > bound || d < -bound ? d : 0;
}

/* With several sources, everything must be right: the first source that is not gives the
 * exit status. */
static QueryExit sources_result(Sources *S) {
        size_t n = 0;

        sources_find_twins(S);

        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];

                if (!query_is_source(q))
                        continue;
                n++;
                if (q->exit != QUERY_EXIT_VERIFIED)
                        return sources_fail(S, q->exit, "Source %zu (%s): %s", n, q->ke && q->ke->ntp_server ?
                                            q->ke->ntp_server : q->host, q->failure);
        }
        if (n == 0)
                return sources_fail(S, QUERY_EXIT_OTHER, "No source was checked");

        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                char why[SOURCE_IDENTITY_REASON_MAX];
                int64_t d;

                if (!query_is_source(q) || !q->twin_of)
                        continue;
                d = twin_disagreement_nsec(q->twin_of, q);
                if (d != 0)
                        return sources_fail(S, QUERY_EXIT_DISAGREE, "%s and %s are the same server (%s) and "
                                            "disagree by %+.3f s", query_name(q->twin_of), query_name(q),
                                            query_twin_reason(q, why), (double) d / 1e9);
        }
        S->exit = QUERY_EXIT_VERIFIED;
        return S->exit;
}

typedef struct SrvRun {
        sd_event *event;
        Sources *sources;
} SrvRun;

static void on_srv_lookup(SrvLookup *l, int error, const char *message, const SrvAnswer *answer, void *userdata) {
        SrvRun *run = userdata;
        Sources *S = run->sources;

        S->srv_looked_up = true;
        S->srv_error = error;
        if (error < 0)
                S->srv_message = strdup(message);
        else {
                S->srv_error = srv_answer_copy(answer, &S->srv);
                if (S->srv_error < 0)
                        S->srv_message = strdup("Cannot keep the SRV records: out of memory");
        }
        (void) sd_event_exit(run->event, 0);
}

static int on_srv_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        SrvRun *run = userdata;

        run->sources->srv_error = -ETIMEDOUT;
        run->sources->srv_message = strdup("systemd-resolved did not answer the SRV lookup in time");
        return sd_event_exit(run->event, 0);
}

/* The daemon's lookup (timesyncd-srv.c) on a loop of its own. */
static int srv_lookup_run(Sources *S) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        SrvLookup *l = NULL;
        SrvRun run = { .sources = S };
        int r;

        r = sd_event_new(&e);
        if (r < 0)
                return r;
        run.event = e;
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                S->srv_error = -ENOTCONN;
                if (asprintf(&S->srv_message, "cannot connect to the system bus (%s); SRV pools need "
                             "systemd-resolved with DNSSEC=yes", strerror(-r)) < 0)
                        S->srv_message = NULL;
                return 0;
        }
        r = sd_bus_attach_event(bus, e, 0);
        if (r >= 0)
                r = sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, arg_timeout, 0, on_srv_timeout, &run);
        if (r >= 0)
                r = srv_lookup_new(bus, arg_host, NULL, NULL, on_srv_lookup, &run, &l);
        if (r < 0)
                return r;
        r = sd_event_loop(e);
        srv_lookup_free(l);
        return r;
}

static QueryExit run_srv(Sources *S) {
        size_t n;
        int r;

        r = srv_lookup_run(S);
        if (r < 0)
                return sources_fail(S, QUERY_EXIT_OTHER, "Cannot run the SRV lookup: %s", strerror(-r));
        if (S->srv_error < 0)
                /* Not authenticated, or authenticated as false: DNSSEC says no. Everything
                 * else is a lookup that did not give records. */
                return sources_fail(S, IN_SET(S->srv_error, -ENOKEY, -EBADMSG) ? QUERY_EXIT_DNSSEC : QUERY_EXIT_RESOLVE,
                                    "SRV lookup of %s%s refused: %s", SRV_NTSKE_PREFIX, arg_host,
                                    strna(S->srv_message));

        n = MIN(S->srv.n_records, arg_sources > 0 ? arg_sources : (size_t) QUERY_SOURCES_MAX);
        for (size_t i = 0; i < n; i++) {
                /* The certificate is checked against the target's name, at the record's port. */
                Query *q = sources_add_query(S, S->srv.records[i].target, S->srv.records[i].port);

                if (!q)
                        return sources_fail(S, QUERY_EXIT_OTHER, "Out of memory");
                if (query_key_exchange(q) == QUERY_EXIT_VERIFIED)
                        (void) query_ntp(q);
        }
        return sources_result(S);
}

static int sources_deny(Sources *S, const char *name) {
        if (S->n_deny >= ELEMENTSOF(S->deny))
                return -E2BIG;
        S->deny[S->n_deny] = strdup(name);
        if (!S->deny[S->n_deny])
                return -ENOMEM;
        S->n_deny++;
        return 0;
}

/* Judges the answer of q, a key exchange that worked, as nts-pool.h says; resolves the member's
 * name unless the name alone shows it brings nothing new. */
static NTS_PoolVerdict pool_judge(Sources *S, Query *q, const NTS_PoolMember *in_use, size_t n_in_use) {
        NTS_PoolVerdict v;

        v = NTS_pool_check(in_use, n_in_use, S->deny, S->n_deny, q->ke->ntp_server, NULL);
        if (v == NTS_POOL_NEW && resolve_ntp_server(q) >= 0)
                v = NTS_pool_check(in_use, n_in_use, S->deny, S->n_deny, q->ke->ntp_server, &q->ntp_address);
        q->pool_checked = true;
        q->pool_verdict = v;
        return v;
}

/* Key exchanges with HOST until --sources= distinct members, each named in the deny list of
 * the next exchange; as the daemon will run its rounds. */
static QueryExit run_ke_pool(Sources *S) {
        NTS_PoolMember in_use[QUERY_SOURCES_MAX];
        size_t n_in_use = 0;
        unsigned fruitless = 0;
        int r;

        while (n_in_use < arg_sources) {
                Query *q;

                if (fruitless >= NTS_POOL_MAX_FRUITLESS) {
                        S->stop_reason = "the last answers named no new member: the pool has no other, or it "
                                         "ignores NTP Server Deny";
                        break;
                }
                if (S->n_queries >= ELEMENTSOF(S->queries)) {
                        S->stop_reason = "too many key exchanges";
                        break;
                }
                q = sources_add_query(S, arg_host, arg_port);
                if (!q)
                        return sources_fail(S, QUERY_EXIT_OTHER, "Out of memory");
                if (query_key_exchange(q) != QUERY_EXIT_VERIFIED) {
                        S->stop_reason = "a key exchange failed";
                        break;
                }

                switch (pool_judge(S, q, in_use, n_in_use)) {
                case NTS_POOL_NEW:
                        /* A member that fails is a source that failed: shown, denied, and
                         * no reason to stop unless the next one fails as well. */
                        (void) query_ntp(q);
                        fruitless = q->exit == QUERY_EXIT_VERIFIED ? 0 : fruitless + 1;
                        if (q->have_ntp_address)
                                in_use[n_in_use++] = (NTS_PoolMember) { .name = q->ke->ntp_server,
                                                                        .address = q->ntp_address };
                        /* Without a Server record there is nothing to deny: the next answer
                         * tells whether this is a pool at all. */
                        r = q->ke->ntp_server ? sources_deny(S, q->ke->ntp_server) : 0;
                        if (r == -ENOMEM)
                                return sources_fail(S, QUERY_EXIT_OTHER, "Out of memory");
                        break;
                case NTS_POOL_SAME_ADDRESS:
                        r = sources_deny(S, q->ke->ntp_server);
                        if (r == -ENOMEM)
                                return sources_fail(S, QUERY_EXIT_OTHER, "Out of memory");
                        fruitless++;
                        break;
                case NTS_POOL_DENIED_AGAIN:
                        fruitless++;
                        break;
                case NTS_POOL_NO_MEMBER:
                        S->stop_reason = "the server names no pool member (no Server record): it is one server";
                        return sources_result(S);
                default:
                        assert_not_reached();
                }
                if (S->n_deny == ELEMENTSOF(S->deny) && n_in_use < arg_sources) {
                        S->stop_reason = "the deny list is full";
                        break;
                }
        }
        return sources_result(S);
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
/* failed_above: the TLS line already says why the handshake failed, which for a certificate
 * that did not verify is the verification's error in words of ours: not repeated here. */
static void print_certificate(const NTS_KEResult *ke, const char *host, bool failed_above) {
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
               arg_ca_file || arg_ca_dir ? "trusting " : "system store", arg_ca_file ?: arg_ca_dir ?: "");
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
                print_certificate(ke, q->host, !ke_handshake_done(q) && ke->stage == NTS_KE_STAGE_TLS);

        if (iovec_is_set(&ke->response))
                print_records(q, arg_verbose);

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
                } else if (q->plain_resolve_error < 0)
                        printf("Plain NTP:          cannot resolve %s: %s\n", arg_plain_host,
                               resolve_error_string(q->plain_resolve_error));
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

/* One server: the object nts-query has always printed. */
static void json_query(JsonWriter *w, const char *key, const Query *q) {
        char a[SOCKET_ADDRESS_STRING_MAX];

        json_begin_object(w, key);
        json_write_string(w, "host", q->host);
        json_write_integer(w, "port", q->port);
        json_write_integer(w, "exit_code", q->exit);
        json_write_string(w, "status", query_exit_table[q->exit]);
        json_write_string(w, "error", q->exit == QUERY_EXIT_VERIFIED ? NULL : q->failure);
        json_write_integer(w, "verified", (int64_t) q->n_verified);

        json_ke(w, q);

        json_begin_array(w, "exchanges");
        for (size_t i = 0; i < q->n_exchanges; i++)
                json_exchange(w, NULL, &q->exchanges[i], true);
        json_end_array(w);

        if (q->plain_done) {
                json_begin_object(w, "plain");
                json_write_string(w, "address", socket_address_to_string(&q->plain_address, a));
                json_exchange(w, "reply", &q->plain, false);
                json_end_object(w);
        } else
                json_write_null(w, "plain");

        json_end_object(w);
}

static void print_json(const Query *q) {
        JsonWriter w = JSON_WRITER_INIT(stdout);

        json_query(&w, NULL, q);
}

static const char *const pool_verdict_json[_NTS_POOL_VERDICT_MAX] = {
        [NTS_POOL_NEW] = "new",
        [NTS_POOL_DENIED_AGAIN] = "denied-again",
        [NTS_POOL_SAME_ADDRESS] = "same-address",
        [NTS_POOL_NO_MEMBER] = "no-member",
};

static void json_srv(JsonWriter *w, const Sources *S) {
        char name[sizeof(SRV_NTSKE_PREFIX) + HOSTNAME_MAX];

        snprintf(name, sizeof(name), SRV_NTSKE_PREFIX "%s", arg_host);
        json_begin_object(w, "srv");
        json_write_string(w, "name", name);
        json_write_bool(w, "authenticated", S->srv_looked_up && S->srv_error == 0);
        json_write_string(w, "error", S->srv_error < 0 ? strna(S->srv_message) : NULL);
        json_write_string(w, "errno", S->srv_error < 0 ? strerrorname_np(-S->srv_error) : NULL);
        if (S->srv_error == 0 && S->srv_looked_up)
                json_write_integer(w, "ttl", S->srv.ttl);
        else
                json_write_null(w, "ttl");
        json_begin_array(w, "records");
        for (size_t i = 0; i < S->srv.n_records; i++) {
                const SrvRecord *r = &S->srv.records[i];

                json_begin_object(w, NULL);
                json_write_integer(w, "priority", r->priority);
                json_write_integer(w, "weight", r->weight);
                json_write_integer(w, "port", r->port);
                json_write_string(w, "target", r->target);
                json_write_integer(w, "ttl", r->ttl);
                json_end_object(w);
        }
        json_end_array(w);
        json_end_object(w);
}

static void json_pool(JsonWriter *w, const Sources *S) {
        json_begin_object(w, "pool");
        json_begin_array(w, "key_exchanges");
        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                bool ok = q->ke && q->ke->error >= 0;

                json_begin_object(w, NULL);
                json_begin_array(w, "denied");
                for (size_t j = 0; j < q->n_deny; j++)
                        json_write_string(w, NULL, q->deny[j]);
                json_end_array(w);
                json_write_string(w, "member", ok ? q->ke->ntp_server : NULL);
                json_write_string(w, "verdict", q->pool_checked ? pool_verdict_json[q->pool_verdict] : NULL);
                json_write_string(w, "error", q->exit != QUERY_EXIT_VERIFIED ? q->failure : NULL);
                json_end_object(w);
        }
        json_end_array(w);
        json_begin_array(w, "members");
        for (size_t i = 0; i < S->n_queries; i++)
                if (query_is_source(S->queries[i]) && S->queries[i]->ke && S->queries[i]->ke->ntp_server)
                        json_write_string(w, NULL, S->queries[i]->ke->ntp_server);
        json_end_array(w);
        json_write_string(w, "stopped", S->stop_reason);
        json_end_object(w);
}

/* Servers, not names: a source that is the same server as an earlier one counts with it. */
static size_t sources_servers(const Sources *S) {
        size_t n = 0;

        for (size_t i = 0; i < S->n_queries; i++)
                n += query_is_source(S->queries[i]) && !S->queries[i]->twin_of;
        return n;
}

/* Servers whose every source was verified. */
static size_t sources_verified(const Sources *S) {
        size_t n = 0;

        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                bool ok;

                if (!query_is_source(q) || q->twin_of)
                        continue;
                ok = q->exit == QUERY_EXIT_VERIFIED;
                for (size_t j = i + 1; ok && j < S->n_queries; j++)
                        if (S->queries[j]->twin_of == q && S->queries[j]->exit != QUERY_EXIT_VERIFIED)
                                ok = false;
                n += ok;
        }
        return n;
}

static void print_sources_json(const Sources *S) {
        JsonWriter w = JSON_WRITER_INIT(stdout);

        json_begin_object(&w, NULL);
        json_write_string(&w, "mode", arg_srv ? "srv" : "pool");
        json_write_string(&w, "name", arg_host);
        if (arg_srv)
                json_write_null(&w, "port");
        else
                json_write_integer(&w, "port", arg_port);
        json_write_integer(&w, "exit_code", S->exit);
        json_write_string(&w, "status", query_exit_table[S->exit]);
        json_write_string(&w, "error", S->exit == QUERY_EXIT_VERIFIED ? NULL : S->failure);
        json_write_integer(&w, "verified", (int64_t) sources_verified(S));

        if (arg_srv)
                json_srv(&w, S);
        else
                json_write_null(&w, "srv");
        if (!arg_srv)
                json_pool(&w, S);
        else
                json_write_null(&w, "pool");

        json_write_integer(&w, "servers", (int64_t) sources_servers(S));
        json_begin_array(&w, "same_server");
        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                char why[SOURCE_IDENTITY_REASON_MAX], a[IN_ADDR_TO_STRING_MAX];

                if (!query_is_source(q) || !q->twin_of)
                        continue;
                json_begin_object(&w, NULL);
                json_write_string(&w, "first", query_name(q->twin_of));
                json_write_string(&w, "second", query_name(q));
                json_write_string(&w, "address", query_twin_address(q, a));
                json_write_string(&w, "reason", query_twin_reason(q, why));
                json_end_object(&w);
        }
        json_end_array(&w);

        json_begin_array(&w, "sources");
        for (size_t i = 0; i < S->n_queries; i++)
                if (query_is_source(S->queries[i]))
                        json_query(&w, NULL, S->queries[i]);
        json_end_array(&w);
        json_end_object(&w);
}

static void print_srv_human(const Sources *S) {
        if (S->srv_error < 0) {
                printf("SRV lookup:         %s%s refused (%s)\n", SRV_NTSKE_PREFIX, arg_host,
                       strna(strerrorname_np(-S->srv_error)));
                printf("                    %s\n", strna(S->srv_message));
                return;
        }

        printf("SRV lookup:         %s%s, DNSSEC-authenticated, %zu target%s, TTL %" PRIu32 " s\n",
               SRV_NTSKE_PREFIX, arg_host, S->srv.n_records, S->srv.n_records == 1 ? "" : "s", S->srv.ttl);
        printf("SRV records:        in RFC 2782 order (by priority, weighted random within one)\n");
        for (size_t i = 0; i < S->srv.n_records; i++) {
                const SrvRecord *r = &S->srv.records[i];

                printf("  priority %5u weight %5u port %5u target %s (TTL %" PRIu32 " s)\n", r->priority,
                       r->weight, r->port, r->target, r->ttl);
        }
}

static void print_pool_human(const Sources *S) {
        printf("Key-exchange pool:  %s port %u, up to %u distinct member%s\n", arg_host, arg_port, arg_sources,
               arg_sources == 1 ? "" : "s");
        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                char label[48];

                snprintf(label, sizeof(label), "Key exchange %zu:", i + 1);
                printf("%-20s%zu denied, ", label, q->n_deny);
                if (!q->pool_checked)
                        printf("failed: %s\n", q->failure);
                else if (!q->ke->ntp_server)
                        printf("no Server record: %s\n", NTS_pool_verdict_to_string(q->pool_verdict));
                else
                        printf("member %s: %s\n", q->ke->ntp_server, NTS_pool_verdict_to_string(q->pool_verdict));
        }
}

static void print_sources_human(const Sources *S) {
        size_t n = 0, total = 0;

        if (arg_srv)
                print_srv_human(S);
        else
                print_pool_human(S);

        for (size_t i = 0; i < S->n_queries; i++)
                total += query_is_source(S->queries[i]);

        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];

                if (!query_is_source(q))
                        continue;
                printf("\n--- Source %zu of %zu: %s ---\n", ++n, total,
                       q->ke && q->ke->ntp_server ? q->ke->ntp_server : q->host);
                print_human(q);
                if (q->exit != QUERY_EXIT_VERIFIED)
                        printf("Failed:             %s\n", q->failure);
        }

        printf("\n");
        if (S->stop_reason)
                printf("Stopped:            %s\n", S->stop_reason);
        for (size_t i = 0; i < S->n_queries; i++) {
                const Query *q = S->queries[i];
                char why[SOURCE_IDENTITY_REASON_MAX];

                if (query_is_source(q) && q->twin_of)
                        printf("Same server:        %s and %s are the same server (%s): they count once\n",
                               query_name(q->twin_of), query_name(q), query_twin_reason(q, why));
        }
        if (total > 0)
                printf("Sources:            %zu of %zu verified%s\n", sources_verified(S), sources_servers(S),
                       sources_servers(S) < total ? " (distinct servers)" : "");
}

static QueryExit run_sources(Sources *S) {
        return arg_srv ? run_srv(S) : run_ke_pool(S);
}

/* ---- --config: every NTS server of the daemon's configuration ---- */

typedef struct ConfigEntry {
        const char *name;               /* as written in NTS= */
        ServerNameKind kind;
        char *host;
        uint16_t port;
        Query query;                    /* a server, or a key-exchange pool's server */
        Sources srv;                    /* srv:NAME */
        QueryExit exit;
        const char *failure;
} ConfigEntry;

typedef struct ConfigRun {
        TimesyncConfig config;
        const char *list;               /* the setting whose servers are checked: "NTS=" or "FallbackNTS=" */
        const char *ca;                 /* what is trusted: a path, NULL for the system's store */
        ConfigEntry *entries;
        size_t n_entries;
        QueryExit exit;
        char failure[512];
        bool failure_logged;            /* by the configuration reader already */
} ConfigRun;

static void config_run_done(ConfigRun *R) {
        for (size_t i = 0; i < R->n_entries; i++) {
                query_done(&R->entries[i].query);
                sources_done(&R->entries[i].srv);
                free(R->entries[i].host);
        }
        free(R->entries);
        timesync_config_done(&R->config);
}

#define config_fail FAIL_WITH

/* A srv: entry is checked as srv:NAME on the command line is: the code of that mode reads
 * the name from arg_host and arg_srv, set here for the while. */
static void config_entry_as_srv(ConfigEntry *e, bool on) {
        arg_srv = on;
        arg_host = on ? e->host : NULL;
}

static void config_entry_run(ConfigEntry *e) {
        if (e->kind == SERVER_NAME_SRV) {
                config_entry_as_srv(e, true);
                e->exit = run_srv(&e->srv);
                config_entry_as_srv(e, false);
                e->failure = e->srv.failure;
                return;
        }
        /* A key-exchange pool: its server is checked with one key exchange, as a server. */
        e->query = (Query) { .host = e->host, .port = e->port > 0 ? e->port : NTS_KE_PORT };
        e->exit = run_one(&e->query);
        e->failure = e->query.failure;
}

/* The daemon's reader, the daemon's trust: NTSTrustedCertificates= as a file or a directory,
 * a refused value refuses every key exchange (as the daemon does), unless --ca= was given. The
 * daemon's list: NTS=, or FallbackNTS= where the configuration alone makes the daemon use it. */
static QueryExit run_config(ConfigRun *R) {
        char **servers;
        size_t n;
        int r;

        r = timesync_config_read(&R->config, arg_config_file, 0);
        if (r == -ENOENT && arg_config_file) {
                /* The reader said so. */
                R->failure_logged = true;
                return config_fail(R, QUERY_EXIT_USAGE, "Configuration file '%s' does not exist", arg_config_file);
        }
        /* Other errors were logged by the reader, which goes on with what it got, as the daemon does. */

        R->list = "NTS=";
        servers = R->config.nts_servers;
        if (timesync_config_uses_fallback_nts(&R->config)) {
                R->list = "FallbackNTS=";
                servers = R->config.fallback_nts_servers;
        }

        if (arg_ca_given)
                R->ca = arg_ca_file ?: arg_ca_dir;
        else if (R->config.nts_trusted_certificates_invalid)
                return config_fail(R, QUERY_EXIT_TLS, "NTSTrustedCertificates= has no valid value: the daemon "
                                   "refuses every key exchange rather than trust the system's store");
        else if (R->config.nts_trusted_certificates) {
                R->ca = R->config.nts_trusted_certificates;
                r = parse_ca(R->ca);
                if (r < 0)
                        return config_fail(R, QUERY_EXIT_TLS, "NTSTrustedCertificates=%s does not exist", R->ca);
        }

        n = strv_length(servers);
        if (n == 0)
                return config_fail(R, QUERY_EXIT_OTHER, "The configuration names no NTS server (NTS= is empty): %s",
                                   R->config.nts_required ?
                                   "NTSRequired=yes, so the daemon takes no time at all" :
                                   R->config.nts_set ?
                                   "it names no valid server, so the daemon takes no time at all" :
                                   R->config.ntp_servers ?
                                   "the daemon takes unauthenticated time from NTP=" :
                                   "the daemon takes unauthenticated time from FallbackNTP= (FallbackNTS= is empty)");
        R->entries = new0(ConfigEntry, n);
        if (!R->entries)
                return config_fail(R, QUERY_EXIT_OTHER, "Out of memory");

        for (size_t i = 0; i < n; i++) {
                ConfigEntry *e = &R->entries[i];

                e->name = servers[i];
                R->n_entries++;
                /* The reader keeps valid names only. */
                r = server_name_parse_nts(e->name, &e->kind, &e->host, &e->port);
                if (r < 0) {
                        e->exit = QUERY_EXIT_OTHER;
                        e->failure = "not a valid NTS server name";
                        continue;
                }
                config_entry_run(e);
        }

        R->exit = QUERY_EXIT_VERIFIED;
        for (size_t i = 0; i < R->n_entries; i++)
                if (R->entries[i].exit != QUERY_EXIT_VERIFIED)
                        return config_fail(R, R->entries[i].exit, "NTS server %zu (%s): %s", i + 1,
                                           R->entries[i].name, R->entries[i].failure);
        return R->exit;
}

static size_t config_verified(const ConfigRun *R) {
        size_t n = 0;

        for (size_t i = 0; i < R->n_entries; i++)
                n += R->entries[i].exit == QUERY_EXIT_VERIFIED;
        return n;
}

static const char *server_kind_string(ServerNameKind k) {
        return k == SERVER_NAME_SRV ? "srv" : k == SERVER_NAME_KE_POOL ? "pool" : "server";
}

static void print_config_human(const ConfigRun *R) {
        printf("Configuration:      %s\n", arg_config_file ?: "timesyncd.conf and its drop-ins");
        printf("Trusted CAs:        %s%s%s\n", R->ca ?: "the system's store",
               arg_ca_given ? " (--ca=)" : R->ca ? " (NTSTrustedCertificates=)" : "",
               arg_ca_given && R->config.nts_trusted_certificates ? ", not NTSTrustedCertificates=" : "");
        printf("NTS servers:        %zu%s\n", R->n_entries,
               streq_ptr(R->list, "FallbackNTS=") ?
               " of FallbackNTS= (no NTS= or NTP=: used unless the network names NTP servers)" : "");

        for (size_t i = 0; i < R->n_entries; i++) {
                ConfigEntry *e = &R->entries[i];

                printf("\n=== NTS server %zu of %zu: %s ===\n", i + 1, R->n_entries, e->name);
                if (e->kind == SERVER_NAME_SRV && e->host) {
                        config_entry_as_srv(e, true);
                        print_sources_human(&e->srv);
                        config_entry_as_srv(e, false);
                } else {
                        if (e->kind == SERVER_NAME_KE_POOL)
                                printf("Key-exchange pool:  one key exchange with its server\n");
                        print_human(&e->query);
                }
                if (e->exit != QUERY_EXIT_VERIFIED)
                        printf("Failed:             %s\n", e->failure);
        }

        printf("\n");
        if (R->n_entries > 0)
                printf("Servers:            %zu of %zu verified\n", config_verified(R), R->n_entries);
}

static void print_config_json(const ConfigRun *R) {
        JsonWriter w = JSON_WRITER_INIT(stdout);

        json_begin_object(&w, NULL);
        json_write_string(&w, "mode", "config");
        json_write_string(&w, "config", arg_config_file);
        json_write_string(&w, "trusted_certificates", R->ca);
        json_write_string(&w, "list", R->list);
        json_write_integer(&w, "exit_code", R->exit);
        json_write_string(&w, "status", query_exit_table[R->exit]);
        json_write_string(&w, "error", R->exit == QUERY_EXIT_VERIFIED ? NULL : R->failure);
        json_write_integer(&w, "verified", (int64_t) config_verified(R));
        json_begin_array(&w, "servers");
        for (size_t i = 0; i < R->n_entries; i++) {
                ConfigEntry *e = &R->entries[i];

                json_begin_object(&w, NULL);
                json_write_string(&w, "name", e->name);
                json_write_string(&w, "kind", server_kind_string(e->kind));
                json_write_integer(&w, "exit_code", e->exit);
                json_write_string(&w, "status", query_exit_table[e->exit]);
                json_write_string(&w, "error", e->exit == QUERY_EXIT_VERIFIED ? NULL : e->failure);
                json_begin_array(&w, "sources");
                if (e->kind == SERVER_NAME_SRV) {
                        for (size_t k = 0; k < e->srv.n_queries; k++)
                                json_query(&w, NULL, e->srv.queries[k]);
                } else if (e->host)
                        json_query(&w, NULL, &e->query);
                json_end_array(&w);
                json_end_object(&w);
        }
        json_end_array(&w);
        json_end_object(&w);
}

int main(int argc, char *argv[]) {
        int r;

        log_parse_environment();

        r = parse_argv(argc, argv);
        if (r <= 0) {
                free(arg_host);
                free(arg_plain_host);
                free(arg_config_file);
                return r < 0 ? QUERY_EXIT_USAGE : EXIT_SUCCESS;
        }

        /* libssl writes with write(): a server that goes away must not kill us. */
        (void) signal(SIGPIPE, SIG_IGN);

        if (arg_config) {
                ConfigRun R = {};

                (void) run_config(&R);
                if (arg_json)
                        print_config_json(&R);
                else if (!R.failure_logged)
                        print_config_human(&R);
                fflush(stdout);
                if (R.exit != QUERY_EXIT_VERIFIED && !R.failure_logged)
                        log_error("%s", R.failure);
                r = R.exit;
                config_run_done(&R);
        } else if (arg_srv || arg_sources > 0) {
                Sources S = {};

                (void) run_sources(&S);
                if (arg_json)
                        print_sources_json(&S);
                else
                        print_sources_human(&S);
                fflush(stdout);
                if (S.exit != QUERY_EXIT_VERIFIED)
                        log_error("%s", S.failure);
                r = S.exit;
                sources_done(&S);
        } else {
                Query q = { .host = arg_host, .port = arg_port };

                (void) run_one(&q);
                if (arg_json)
                        print_json(&q);
                else
                        print_human(&q);
                fflush(stdout);
                if (q.exit != QUERY_EXIT_VERIFIED)
                        log_error("%s", q.failure);
                r = q.exit;
                query_done(&q);
        }

        free(arg_host);
        free(arg_plain_host);
        free(arg_config_file);
        return r;
}
