/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The NTS part of one time source (RFC 8915): the key exchange on sd-event (resolving the
 * NTS-KE server, NTS_KEClient), the keys and the cookie jar with its state file
 * (timesyncd-nts-jar), the NTP server the exchange negotiated, retries with backoff, the
 * bootstrap bookkeeping, counters and the last error.
 *
 * It knows nothing of the manager or of the source that owns it: it gets what it needs at
 * creation (NTSClientSettings) and reports through one callback (nts_client_handler_t). The
 * owner pulls, the way chrony's NTP core pulls from its
 * nts-ntp-client.c:
 *   nts_client_prepare()   ready to poll (keys, a cookie and an NTP server), busy with a key
 *                          exchange of its own, or backing off after failed ones
 *   nts_client_seal()      the extension fields of one request
 *   nts_client_open()      the verification of one reply, before anything of it is used
 * There is no path from here to plain NTP: without keys there is no request. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "nts.h"
#include "socket-address.h"
#include "time-util.h"
#include "timesyncd-nts-client-state.h"
#include "timesyncd-refusals.h"

typedef struct ClockBackend ClockBackend;
typedef struct NTSClient NTSClient;

/* A bootstrap (see nts_client_may_bootstrap()): keys from a key exchange that skipped the
 * validity periods of the server's certificates, and which way their time may move our clock. */
typedef enum NTSClientBootstrap {
        NTS_CLIENT_BOOTSTRAP_NONE,      /* keys from a key exchange with every check */
        NTS_CLIENT_BOOTSTRAP_FORWARD,   /* a certificate was not yet valid by our clock: it may
                                         * be behind, and their time only moves it forward */
        NTS_CLIENT_BOOTSTRAP_BACKWARD,  /* a certificate had expired by our clock: it may be
                                         * ahead, and their time only moves it backward */
} NTSClientBootstrap;

/* What a client needs from its owner. The owner keeps it alive as long as the client and
 * current (a reload changes it): it is read at each use, never copied. */
typedef struct NTSClientSettings {
        sd_event *event;
        ClockBackend *clock;            /* certificate validity is checked against its time */
        const char *state_dir;          /* where the state files go; NULL: cookies are not kept */
        const char *trusted_certificates; /* NTSTrustedCertificates=, a file or a directory;
                                           * NULL: the system's store */
        bool trusted_certificates_invalid; /* a value was refused: no key exchange at all */
        usec_t ke_timeout_usec;         /* KeyExchangeTimeoutSec= */
        usec_t retry_usec;              /* the floor of the retry ladder (ConnectionRetrySec=): no
                                         * wait after a failed key exchange is shorter */
        /* The bootstrap policy: asked, for a certificate that is not yet valid (FORWARD) or
         * has expired (BACKWARD) by our clock, whether a key exchange may skip validity
         * periods now (see nts_client_may_bootstrap()). True with the evidence in why (a
         * clause); false with the reason in why and a shorter one in *ret_short, for a
         * status, or with *ret_short NULL when the question does not arise (nothing is said,
         * the failure stays as it is). It answers and changes nothing. NULL: never. */
        bool (*bootstrap_allowed)(void *userdata, NTSClientBootstrap direction, char *why, size_t size,
                                  const char **ret_short);
        void *bootstrap_userdata;
} NTSClientSettings;

/* What changed, for the owner to show and to act on (see nts_client_prepare()). */
typedef enum NTSClientEvent {
        NTS_CLIENT_EVENT_KEYS,                  /* a key exchange gave new keys and cookies */
        NTS_CLIENT_EVENT_KE_FAILED,             /* a key exchange failed, could not start, or the
                                                 * server refused the cookies it had just issued:
                                                 * backing off, nts_client_last_error() says why */
        NTS_CLIENT_EVENT_BOOTSTRAP_REFUSED,     /* time from bootstrap keys was refused: keys
                                                 * dropped, backing off */
        _NTS_CLIENT_EVENT_MAX,
} NTSClientEvent;

/* The one report to the owner. Always called from the event loop, never from inside an
 * nts_client_*() call (what happens inside one is reported on the next loop iteration), so
 * the owner may call into the client again, or free it. */
typedef void (*nts_client_handler_t)(NTSClient *c, NTSClientEvent event, void *userdata);

/* Loads libssl and libcrypto once per process, logging at debug level only: 0, or a negative
 * errno for the caller to report (always in a build without NTS). */
int nts_client_load_libraries(void);

/* server: the NTS-KE server as configured ("host" or "host:port": names the state file and
 * the log lines); host and port: where the key exchange goes (port 0: 4460). Copies the
 * strings; keeps settings. */
int nts_client_new(const NTSClientSettings *settings, const char *server, const char *host, uint16_t port,
                   nts_client_handler_t handler, void *userdata, NTSClient **ret);
/* Saves the unspent cookies to the state file (the only write of it: a clean stop, or the server
 * gone from the configuration) and cancels a running key exchange. */
NTSClient *nts_client_free(NTSClient *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(NTSClient *, nts_client_free);

/* Reads the state file on the first call, and removes it durably before its cookies may be
 * used (if it cannot be removed, they are not). Starts a key exchange when there are no usable
 * keys (or their renewal failed) and none runs and no backoff forbids it. Returns the state it
 * leaves the client in: READY (poll the NTP server it names now), busy
 * (nts_client_state_busy(): the handler is called when the exchange ends) or BACKING_OFF;
 * never IDLE.
 *
 * Keys are renewed at a random time in the last day before their limit, on a timer of the
 * client's own, not with a request: the owner keeps polling with the keys it has while the
 * renewal runs (its handler hears of the new keys, or of the failure) and after a renewal
 * failed, until their limit. */
NTSClientState nts_client_prepare(NTSClient *c);
/* What the client is doing (timesyncd-nts-client-state.h). */
NTSClientState nts_client_state(const NTSClient *c);

/* The NTP server to poll while ready: the name or address the key exchange negotiated, or the
 * address of the NTS-KE server that answered, and the negotiated port or 123. */
const char *nts_client_ntp_host(const NTSClient *c);
uint16_t nts_client_ntp_port(const NTSClient *c);
/* CLOCK_BOOTTIME; 0 when not backing off. */
usec_t nts_client_retry_after(const NTSClient *c);
bool nts_client_backing_off(const NTSClient *c);
/* Someone fixed what made key exchanges fail (a reload, a retry asked over D-Bus): ends the
 * backoff, so that the next nts_client_prepare() runs a key exchange (the renewal of keys that
 * serve on starts now). The ladder keeps its rung and the cap per server name holds: asking
 * again and again never makes more key exchanges than failures would. Returns whether it was
 * backing off. */
bool nts_client_retry_now(NTSClient *c);
/* Whether the keys in use are bound to what would be trusted and sent now (NTSJarBinding):
 * false after NTSTrustedCertificates=, the file it names or the system's store changed, or
 * when that cannot be told. True without keys. Reads the trusted certificates. */
bool nts_client_binding_current(NTSClient *c);
/* A sealed request has not been answered (yet): when the next one is sealed, the cookie count
 * falls for good. */
bool nts_client_awaiting_reply(const NTSClient *c);

/* buf holds an NTP request header in its first NTP_HEADER_SIZE bytes: appends the Unique
 * Identifier, a cookie (no file lists it: nts_client_prepare()), placeholders that ask for
 * enough cookies to fill the jar again, and the authenticator. Returns the packet length;
 * 0 when no request may go with these keys (no cookie left, keys older than
 * NTS_JAR_MAX_AGE_USEC, or renewed keys for another NTP server than nts_client_prepare()
 * named): the handler is called (a key exchange ended, or was started, or backs off), and
 * nts_client_prepare() says what now; negative errno on failure. */
ssize_t nts_client_seal(NTSClient *c, uint8_t *buf, size_t size);

/* Verifies a reply to the last sealed request, before anything of it may be used: 0 when it
 * is authentic (its cookies went into the jar). -EAGAIN: not authentic, to be ignored (the
 * real reply may still come). -EKEYREJECTED: the server refused our cookie (NTS NAK): the keys
 * were dropped and a key exchange started or a backoff begun, which the client reports. On
 * failure *ret_cause and *ret_reason (static text) say why, for the caller to count and log. */
int nts_client_open(NTSClient *c, const uint8_t *buf, size_t size, RefusalCause *ret_cause, const char **ret_reason);

/* For a reply that verified, if the keys come from a bootstrap exchange: whether its time
 * may be used: within the validity period of the whole certificate chain, and moving the
 * clock the bootstrap's way. 0: yes; -EPERM: no (logged), the keys were dropped and the client
 * backs off. */
int nts_client_check_bootstrap(NTSClient *c, int64_t server_time_nsec, int64_t offset_nsec);
/* The clock took a sample: if the keys come from a bootstrap exchange, drops them and repeats
 * the key exchange with every certificate check. Returns true when it did (busy now). */
bool nts_client_bootstrap_done(NTSClient *c);
/* Whether the keys in use come from a bootstrap exchange, and which way. */
NTSClientBootstrap nts_client_bootstrap(const NTSClient *c);

/* ---- Key-exchange pools (docs/NTS.md, "Pools") ----
 *
 * The clients that take their members from one pool share an NTSClientPool. Their key
 * exchanges with the pool run one at a time and send NTP Server Deny records naming the members
 * the others use and the members turned down in the last hour; each answer is checked
 * (NTS_pool_check()): a member in use or turned down, named again, is asked for once more and
 * then counts as a failed key exchange (the pool has no other, or ignores the records); no
 * Server record while another client of the pool uses the server means it is no pool. Cookies
 * and keys belong to the pair (pool, member): a client's keys are for its member only, and a
 * member turned down takes them with it. */
#define NTS_CLIENT_POOL_MAX 16

typedef struct NTSClientPool NTSClientPool;

int nts_client_pool_new(NTSClientPool **ret);
/* Every client must have been freed before. */
NTSClientPool *nts_client_pool_free(NTSClientPool *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(NTSClientPool *, nts_client_pool_free);

/* Before the first nts_client_prepare(): names the state file and the server it records (NULL:
 * the server as configured). The sources of one pool entry need one each. */
int nts_client_set_state_name(NTSClient *c, const char *name);
/* Before the first nts_client_prepare(): the client takes the members of its key exchanges
 * from pool. -E2BIG when NTS_CLIENT_POOL_MAX clients are in it. */
int nts_client_join_pool(NTSClient *c, NTSClientPool *pool);
/* The member its keys are for (the pool's Server record, as received); NULL outside a pool or
 * without keys. */
const char *nts_client_pool_member(const NTSClient *c);
/* Its last key exchange with the pool ended because the pool named no member it may take (only
 * members in use or turned down, NTS_POOL_MAX_FRUITLESS answers in a row, or no Server record
 * while another client uses the server): the pool has no more members for it. False outside a
 * pool, and from the start of its next key exchange on. */
bool nts_client_pool_exhausted(const NTSClient *c);
/* Before polling an address of its member: 0, or -EADDRINUSE when another client of the pool
 * polls the same address and port: the member was turned down and its keys dropped, and the
 * pool is asked for another (or the client backs off): nts_client_prepare() says which. */
int nts_client_pool_claim_address(NTSClient *c, const SocketAddress *a);
/* The member did not answer a round of requests (refused: it refused service, kiss code DENY
 * or RSTR). True when it was turned down and the keys dropped (at once when it refused,
 * else after NTS_POOL_MEMBER_MAX_FAILURES rounds in a row without a verified reply): the next
 * start runs a key exchange for another member. False outside a pool. */
bool nts_client_pool_member_failed(NTSClient *c, bool refused);

/* What D-Bus (NTSKeyExchangeServer..., the Sources table) shows of a client, filled in one call
 * (chrony's NNC_GetReport()). The strings belong to the client: valid until it runs again
 * (the next nts_client_*() call, or the loop). */
typedef struct NTSClientReport {
        const char *server;             /* as configured */
        const char *ke_address;         /* "host:port" of the last exchange */
        const char *aead;               /* NULL without keys */
        size_t cookies;
        usec_t last_ke_realtime;        /* nts_client_last_ke_realtime() */
        unsigned ke_failures;           /* failed key exchanges (and refused bootstrap keys) in a row */
        NTSClientBootstrap bootstrap;
        const char *last_error;         /* "" when there is none */
        usec_t last_error_realtime;     /* CLOCK_REALTIME; 0: none */
} NTSClientReport;

void nts_client_get_report(const NTSClient *c, NTSClientReport *ret);

/* What the policy, the source and the NTS glue ask of a client one at a time. */
const char *nts_client_server(const NTSClient *c);      /* as configured */
/* Which server the last key exchange reached, for one server, one vote: its address, and the
 * SHA-256 of its certificate's SubjectPublicKeyInfo (32 bytes). Keys resumed from the state
 * file bring both from the run that got them. NULL when unknown: no key exchange yet, or a
 * state file that did not record it. */
const SocketAddress *nts_client_ke_peer(const NTSClient *c);
const uint8_t *nts_client_ke_key_sha256(const NTSClient *c);
/* When the key exchange of the keys in use, or of the last keys, succeeded (keys resumed from the
 * state file: in an earlier run); 0: none known. */
usec_t nts_client_last_ke_realtime(const NTSClient *c);
const char *nts_client_last_error(const NTSClient *c);  /* "" when there is none */
/* The last error was logged at warning level as it came (a failed key exchange, with its
 * reason): who reports it again need not repeat the reason. */
bool nts_client_last_error_logged(const NTSClient *c);
