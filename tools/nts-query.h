/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the modes of nts-query share: the options (filled in by nts-query.c, read by every
 * mode), the exit status, and one server's query, which every mode runs and shows. The modes:
 * one server (nts-query-one.c), the sources of a pool (nts-query-sources.c: srv:NAME and
 * --sources=N) and the daemon's configuration (nts-query-config.c); each prints its own
 * results. */

#include <stdbool.h>
#include <stdint.h>

#include "json-writer.h"
#include "nts-ke-client.h"
#include "nts-ntp-client.h"
#include "nts-pool.h"
#include "socket-address.h"
#include "time-util.h"
#include "timesyncd-source-identity.h"
#include "timesyncd-srv.h"

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

/* "verified", "tls", ...: the status word of the JSON output. */
const char *query_exit_to_string(QueryExit e);

#define QUERY_COUNT_MAX 64U
#define QUERY_ADDRESSES_MAX 16U
/* Every AEAD algorithm --aead= knows (nts-query.c). */
#define QUERY_AEAD_MAX 5U
/* Sources of one pool: SRV targets checked, or distinct members of a key-exchange pool; as
 * many as NTP Server Deny records fit in one request. */
#define QUERY_SOURCES_MAX NTS_KE_MAX_DENIED_SERVERS
/* Key exchanges with a key-exchange pool: every new member may cost one answer that brought
 * nothing new, and a round ends after NTS_POOL_MAX_FRUITLESS of those in a row. */
#define QUERY_ATTEMPTS_MAX (2 * QUERY_SOURCES_MAX + NTS_POOL_MAX_FRUITLESS)

/* The command line, as nts-query(1) describes it. */
typedef struct QueryOptions {
        char *host;                     /* with srv: the NAME of srv:NAME */
        uint16_t port;
        bool srv;
        unsigned sources;               /* 0: not given */
        const char *ca_file;
        const char *ca_dir;
        bool ca_given;
        unsigned count;
        usec_t timeout;
        int family;
        NTS_AEADAlgorithm aead[QUERY_AEAD_MAX];
        size_t n_aead;
        bool json;
        bool plain;
        char *plain_host;
        uint16_t plain_port;
        bool verbose;
        bool config;
        char *config_file;              /* with config; NULL: the standard search */
} QueryOptions;

/* --ca=PATH: a PEM file, or a hashed directory. */
int query_options_set_ca(QueryOptions *o, const char *path);

typedef struct Exchange {
        int error;                      /* 0, or the negative errno of NTS_ntp_client_query() */
        NTS_NTPResult result;           /* its cookies have moved to the jar */
        size_t n_new_cookies;
} Exchange;

typedef struct Query {
        const QueryOptions *opts;
        const char *host;               /* the KE server: its name, also for the certificate */
        uint16_t port;
        char *const *deny;              /* NTP Server Deny records sent (key-exchange pools) */
        size_t n_deny;

        SocketAddress addresses[QUERY_ADDRESSES_MAX];
        size_t n_addresses;
        int resolve_error;              /* of the KE server's name: 0, or a negative errno */

        NTS_AEADAlgorithm offer[QUERY_AEAD_MAX];
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

/* The failure of a query, of several sources or of a configuration: exit status e, and the
 * reason, one line, in failure (an array). */
_printf_(5, 6) QueryExit query_fail_with(QueryExit *exit, char *failure, size_t size, QueryExit e,
                                         const char *format, ...);
#define FAIL_WITH(x, e, ...) query_fail_with(&(x)->exit, (x)->failure, sizeof((x)->failure), (e), __VA_ARGS__)

/* One server (nts-query-one.c). */
void query_done(Query *q);
bool exchange_verified(const Exchange *x);
int query_resolve_ntp_server(Query *q);
QueryExit query_key_exchange(Query *q);
QueryExit query_ntp(Query *q);
QueryExit query_run(Query *q);
void query_print(const Query *q);
void query_json(JsonWriter *w, const char *key, const Query *q);
int query_main(const QueryOptions *o);

/* The sources of an SRV pool or a key-exchange pool (nts-query-sources.c). */
typedef struct Sources {
        const QueryOptions *opts;       /* with srv and host: srv:NAME; else the pool, host:port */

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

void sources_done(Sources *S);
QueryExit sources_run_srv(Sources *S);
void sources_print(const Sources *S);
int sources_main(const QueryOptions *o);

/* Every NTS server of the daemon's configuration (nts-query-config.c). */
int config_main(const QueryOptions *o);
