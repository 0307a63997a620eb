/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* nts-query: one NTS-KE session and a few NTS-protected NTP exchanges with one server, shown to
 * a person or (--json) to a monitoring system; or the same for several sources of a pool: the
 * targets of a DNSSEC-validated SRV pool (srv:NAME), or the members of a key-exchange pool
 * (--sources=N); or for every NTS server of the daemon's configuration (--config), read by the
 * daemon's own reader with its NTSTrustedCertificates=. It only reads time: no privileges, no
 * clock change. The protocol work is the daemon's own modules (nts-ke-client, nts-ntp-client,
 * nts-pool, timesyncd-srv, resolve-util, timesyncd-conf); the modes only drive them and print
 * what they report. This file reads the command line into a QueryOptions and hands it to the
 * mode asked for: nts-query-one.c, nts-query-sources.c, nts-query-config.c. */


#include <ctype.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>

#include "hostname-util.h"
#include "log.h"
#include "nts-crypto.h"
#include "nts-query.h"
#include "string-util.h"

/* Every AEAD algorithm --aead= knows by name or number. Only those the crypto module can use
 * (NTS_aead_param()) may be offered: AEAD_AES_256_GCM_SIV is named only to refuse it clearly
 * (docs/NTS.md, "AEAD algorithms"). */
static const NTS_AEADAlgorithm known_aead[] = {
        NTS_AEAD_AES_SIV_CMAC_256, NTS_AEAD_AES_SIV_CMAC_384, NTS_AEAD_AES_SIV_CMAC_512,
        NTS_AEAD_AES_128_GCM_SIV,  NTS_AEAD_AES_256_GCM_SIV,
};

assert_cc(ELEMENTSOF(known_aead) == QUERY_AEAD_MAX);

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

static int parse_aead_list(QueryOptions *o, const char *s) {
        _cleanup_free_ char *copy = strdup(s);
        char *saveptr = NULL;

        if (!copy)
                return log_oom();

        o->n_aead = 0;
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
                for (size_t i = 0; i < o->n_aead; i++)
                        if (o->aead[i] == a)
                                return log_error_errno(EINVAL, "AEAD algorithm '%s' given twice.", w);
                o->aead[o->n_aead++] = a;
        }
        if (o->n_aead == 0)
                return log_error_errno(EINVAL, "--aead= needs at least one algorithm.");
        return 0;
}

int query_options_set_ca(QueryOptions *o, const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return log_error_errno(errno, "Cannot use --ca=%s: %m", path);
        o->ca_file = o->ca_dir = NULL;
        if (S_ISDIR(st.st_mode))
                o->ca_dir = path;
        else
                o->ca_file = path;
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
static int parse_server(QueryOptions *o, const char *s) {
        const char *name = startswith(s, "srv:");
        _cleanup_free_ char *copy = NULL;
        int r;

        if (!name) {
                r = parse_host_port(s, &o->host, &o->port);
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
        free(o->host);
        o->host = TAKE_PTR(copy);
        o->srv = true;
        return 0;
}

/* Returns 1 to go on, 0 to exit successfully (--help, --version), < 0 on a usage error. */
static int parse_argv(int argc, char *argv[], QueryOptions *o) {
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
                        r = query_options_set_ca(o, optarg);
                        if (r < 0)
                                return r;
                        o->ca_given = true;
                        break;
                case ARG_CONFIG:
                        o->config = true;
                        if (free_and_strdup(&o->config_file, optarg) < 0)
                                return log_oom();
                        break;
                case 'c':
                        if (parse_count(optarg, 1, QUERY_COUNT_MAX, &o->count) < 0)
                                return log_error_errno(EINVAL, "--count= takes a number from 1 to %u, not '%s'.",
                                                       QUERY_COUNT_MAX, optarg);
                        break;
                case 'n':
                        if (parse_count(optarg, 1, QUERY_SOURCES_MAX, &o->sources) < 0)
                                return log_error_errno(EINVAL, "--sources= takes a number from 1 to %u, not '%s'.",
                                                       QUERY_SOURCES_MAX, optarg);
                        break;
                case 't':
                        r = parse_sec(optarg, &o->timeout);
                        if (r < 0 || o->timeout == 0 || o->timeout == USEC_INFINITY)
                                return log_error_errno(EINVAL, "--timeout= takes a positive time span, not '%s'.",
                                                       optarg);
                        break;
                case '4':
                        o->family = AF_INET;
                        break;
                case '6':
                        o->family = AF_INET6;
                        break;
                case ARG_AEAD:
                        r = parse_aead_list(o, optarg);
                        if (r < 0)
                                return r;
                        break;
                case ARG_JSON:
                        o->json = true;
                        break;
                case ARG_PLAIN:
                        o->plain = true;
                        if (optarg) {
                                o->plain_port = 123;
                                r = parse_host_port(optarg, &o->plain_host, &o->plain_port);
                                if (r == -ENOMEM)
                                        return log_oom();
                                if (r < 0)
                                        return log_error_errno(r, "--plain= takes HOST[:PORT], not '%s'.", optarg);
                        }
                        break;
                case 'v':
                        o->verbose = true;
                        break;
                case '?':
                        return -EINVAL;
                default:
                        assert_not_reached();
                }

        if (o->config) {
                if (optind != argc)
                        return log_error_errno(EINVAL, "--config takes the servers from the configuration, not '%s'.",
                                               argv[optind]);
                if (o->plain || o->sources > 0)
                        return log_error_errno(EINVAL, "--plain and --sources= work with one server, not with --config.");
                return 1;
        }
        if (optind != argc - 1)
                return log_error_errno(EINVAL, "Exactly one HOST[:KEPORT] or srv:NAME expected, see --help.");
        r = parse_server(o, argv[optind]);
        if (r < 0)
                return r;
        if (o->plain && (o->srv || o->sources > 0))
                return log_error_errno(EINVAL, "--plain works with one server only, not with srv:NAME or --sources=.");
        return 1;
}

static void query_options_done(QueryOptions *o) {
        free(o->host);
        free(o->plain_host);
        free(o->config_file);
}

int main(int argc, char *argv[]) {
        _cleanup_(query_options_done) QueryOptions o = {
                .port = NTS_KE_PORT,
                .count = 4,
                .timeout = 5 * USEC_PER_SEC,
                .family = AF_UNSPEC,
                .plain_port = 123,
        };
        int r;

        log_parse_environment();

        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? QUERY_EXIT_USAGE : EXIT_SUCCESS;

        /* libssl writes with write(): a server that goes away must not kill us. */
        (void) signal(SIGPIPE, SIG_IGN);

        if (o.config)
                return config_main(&o);
        if (o.srv || o.sources > 0)
                return sources_main(&o);
        return query_main(&o);
}
