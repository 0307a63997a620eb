/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the files of the NTS client share; outside them, only their unit tests include it:
 *   timesyncd-nts-client.c             the state, the key exchange, the keys, the pull
 *                                      interface and the views
 *   timesyncd-nts-client-state-file.c  the rules of the state file
 *   timesyncd-nts-client-pool.c        key-exchange pools
 *   timesyncd-nts-client-bootstrap.c   bootstrap with a wrong clock
 * The public interface is timesyncd-nts-client.h. */

#include <sys/types.h>

#include "nts-crypto.h"
#include "nts-ke-client.h"
#include "nts-pool.h"
#include "resolve-util.h"
#include "timesyncd-backoff.h"
#include "timesyncd-nts-client.h"
#include "timesyncd-nts-jar.h"

/* Key-exchange pools: a member that did not answer this many rounds in a row (each a request
 * to every address, 10 s each) is replaced: one lost reply is no reason for a key exchange
 * with the pool, two in a row are rare on a working path. */
#define NTS_POOL_MEMBER_MAX_FAILURES 2
/* Members turned down (failed, refused service, a second name for a server in use) are denied
 * for this long, and at most this many at once (the oldest makes room): long enough not to get
 * them back at once, short enough that a small pool's members come back after a bad hour. */
#define NTS_POOL_TURNED_DOWN_USEC (1 * USEC_PER_HOUR)
#define NTS_POOL_TURNED_DOWN_MAX 8

struct NTSClientPool {
        NTSClient *clients[NTS_CLIENT_POOL_MAX];        /* in the order they joined */
        size_t n_clients;
        NTSClient *ke_running;          /* the client whose key exchange with the pool runs */
        struct {
                char *name;             /* a Server record's body, as received */
                usec_t until;           /* CLOCK_BOOTTIME */
        } turned_down[NTS_POOL_TURNED_DOWN_MAX];
        size_t n_turned_down;
        /* The cap on key exchanges with one server name (nts_client_take_limit()) holds for
         * the pool's name, so for all its clients together. */
        BackoffLimit ke_limit;
};

struct NTSClient {
        /* What it is doing: changed by nts_client_enter() only. */
        NTSClientState state;
        const NTSClientSettings *settings;
        nts_client_handler_t handler;
        void *userdata;
        char *server;                   /* as configured: names the log lines */
        char *state_name;               /* names the state file and the server it records; NULL:
                                         * server (nts_client_set_state_name()) */
        char *host;                     /* of the NTS-KE server */
        uint16_t port;                  /* 0: NTS_KE_PORT */

        /* A client of a key-exchange pool (nts_client_join_pool()). Its member is the
         * jar's NTP server while it has keys. */
        NTSClientPool *pool;
        unsigned pool_fruitless;        /* answers in a row that named no new member */
        bool pool_exhausted;            /* its last key exchange found no member it may take */
        unsigned member_failures;       /* rounds in a row the member did not answer */
        SocketAddress member_address;   /* the member's NTP address being polled; none: family 0 */

        /* The rule of the state file: a cookie is sent only while no file lists it. The file is
         * written at a clean stop only, and removed for good when it is loaded, before any of
         * its cookies goes (nts_client_load()): while the client runs, no file lists any of
         * its cookies, so a poll needs no write and no crash can make a start send one
         * again. */
        NTSJar jar;
        bool jar_loaded;                /* the state file was looked at */
        char *state_path;               /* NULL: the state is not saved (nts_client_find_path()) */
        int state_error;                /* the last failure of the state file logged as a warning */
        NTS_AEADContext *c2s, *s2c;

        ResolveQuery *resolve;          /* of the NTS-KE server, while RESOLVING */
        NTS_KEClient *ke;               /* while KEY_EXCHANGE */
        /* When to talk to the NTS-KE server (timesyncd-backoff, docs/POOLS.md): the jittered
         * ladder of failures in a row (without a verified reply in between), the cap on key
         * exchanges with this server name, and when to renew the keys. */
        BackoffLadder ke_ladder;
        unsigned ke_failures;           /* in a row, for D-Bus: the ladder's count is its rung,
                                         * which a refusal puts at the top at once */
        BackoffLimit ke_limit;
        usec_t ke_retry_after;          /* CLOCK_BOOTTIME; 0: no backoff */
        usec_t renew_realtime;          /* renew the keys from then on (CLOCK_REALTIME) */
        /* Starts the renewal at renew_realtime, whether or not a request goes out then
         * (nts_client_arm_renewal()). Allocated with the client, so arming never fails for want
         * of memory. */
        sd_event_source *renew_timer;
        /* The NTP server nts_client_prepare() last named to the owner, which it polls: keys
         * that a renewal got for another server are used only once the owner asked again.
         * NULL: none named yet (or no memory to remember it: then not checked). */
        char *named_ntp_server;
        uint16_t named_ntp_port;
        char *ke_address;               /* "host:port" as used for the exchange */
        /* Which server the last key exchange reached (one server, one vote), in this run or
         * before the state file was written: its address (family 0: unknown) and its
         * certificate's key. Kept when the keys are dropped (nts_client_remember_peer()). */
        SocketAddress ke_peer;
        bool has_ke_key;
        uint8_t ke_key_sha256[NTS_JAR_KEY_SHA256_SIZE];
        usec_t last_ke_realtime;
        NTSJarBinding ke_binding;       /* of the key exchange that runs (nts_client_binding()) */

        /* Bootstrap (see nts_client_may_bootstrap()): the keys came from a handshake that did not
         * check certificate validity periods, so time from them must fall in the period in which
         * every certificate of the chain is valid, and may only move the clock the way the
         * refused certificate said our clock is wrong. */
        NTSClientBootstrap bootstrap_attempt; /* the next key exchange skips the validity check */
        NTSClientBootstrap bootstrap;   /* the keys in the jar come from such an exchange */
        bool bootstrap_refusal_logged;  /* each retry meets the same refusal: one warning */
        time_t chain_valid_from, chain_valid_until;

        NTS_Query query;                /* the request in flight */
        bool query_pending;
        bool cookies_unproven;          /* from a key exchange of this run, none accepted yet */

        /* Events that happened inside a call of the owner, reported from the loop. The event
         * source is allocated with the client, so reporting never fails for want of memory. */
        sd_event_source *event_report;
        unsigned pending_events;        /* bit mask of NTSClientEvent */

        char last_error[256];
        usec_t last_error_realtime;     /* when it came (CLOCK_REALTIME); 0: none */
        bool last_error_logged;         /* ... at warning level when it came (a failed key exchange) */
};


/* timesyncd-nts-client.c */
/* Every change of c->state goes through here. */
void nts_client_enter(NTSClient *c, NTSClientState state);
/* Reports e to the owner on the next loop iteration. */
void nts_client_report(NTSClient *c, NTSClientEvent e);
void nts_client_forget_keys(NTSClient *c);
/* The AEAD contexts for the keys in the jar. */
int nts_client_make_contexts(NTSClient *c);
/* Draws the renewal time of the keys in the jar and arms the timer that starts it. */
void nts_client_schedule_renewal(NTSClient *c);
/* Which server the keys in the jar come from, for nts_client_ke_peer() and
 * nts_client_ke_key_sha256(). */
void nts_client_remember_peer(NTSClient *c);
/* What keys from a key exchange now would be bound to: the trust (NTS_tls_trust_sha256()) and
 * what shapes the request (host, port, AEAD offer). */
int nts_client_binding(NTSClient *c, NTSJarBinding *ret);
/* A key exchange, unless one runs or waits; nts_client_ke_begin() for a caller that knows
 * none does. */
int nts_client_start_ke(NTSClient *c);
int nts_client_ke_begin(NTSClient *c);
void nts_client_ke_failed(NTSClient *c, BackoffOutcome outcome, const char *reason);

/* timesyncd-nts-client-state-file.c */
/* The state file, read once (the first nts_client_prepare()), and saved at a clean stop. */
void nts_client_load(NTSClient *c);
void nts_client_save(NTSClient *c);

/* timesyncd-nts-client-pool.c */
void nts_client_pool_ke_ended(NTSClient *c);
void nts_client_leave_pool(NTSClient *c);
size_t nts_client_pool_deny(NTSClient *c, char *deny[static NTS_KE_MAX_DENIED_SERVERS]);
NTS_PoolVerdict nts_client_pool_judge(NTSClient *c, const char *member, const SocketAddress *address);
void nts_client_pool_fruitless(NTSClient *c, NTS_PoolVerdict v, const char *member);

/* timesyncd-nts-client-bootstrap.c */
bool nts_client_may_bootstrap(NTSClient *c, const NTS_KEResult *result, char *reason, size_t size);
