/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NTS in the daemon: per NTS-KE server, the key exchange on sd-event, the cookie jar and its
 * file, the NTS extension fields of every request, and the verification of every reply
 * before the manager may look at its time. With NTS= servers configured the manager only
 * ever talks to them: there is no path from here to plain NTP. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nts.h"
#include "nts_ke_client.h"
#include "resolve-util.h"
#include "time-util.h"
#include "timesyncd-nts-jar.h"
#include "timesyncd-refusals.h"

typedef struct Manager Manager;
typedef struct ServerName ServerName;

/* Failed key exchanges back off exponentially from ConnectionRetrySec up to this. */
#define NTS_KE_BACKOFF_MAX_USEC (1 * USEC_PER_HOUR)
/* Requests per write of the state file. A cookie must be out of the file before it is sent
 * (never reused after a crash), so each write leaves out, besides the cookie about to go, the
 * next NTS_COOKIES_PER_WRITE - 1 oldest ones: the following requests spend them without a
 * write of their own. A crash loses those cookies (the server gives new ones, or a key
 * exchange does), it never resends one. */
#define NTS_COOKIES_PER_WRITE 3U
/* The same failure to write the state file is logged at most this often per server: a full
 * disk fails a write every few requests, and a removal frees room for one more. */
#define NTS_STATE_LOG_INTERVAL_USEC (10 * USEC_PER_MINUTE)

typedef struct NTSState {
        ServerName *name;

        /* The jar is, oldest first: n_withheld cookies the state file does not list (left out by
         * its last write, NTS_COOKIES_PER_WRITE, or never written), then n_listed that it lists,
         * then newer ones from replies, not in it either. The rule: a cookie is sent only while
         * the file does not list it; before a listed one goes, the file is rewritten without it
         * or removed. */
        NTSJar jar;
        bool jar_loaded;                /* the state file was looked at */
        bool jar_dirty;                 /* cookies came in since the last save */
        size_t n_withheld;
        size_t n_listed;
        char *state_path;               /* NULL: the state is not saved (nts_state_find_path()) */
        int save_error, remove_error;   /* the last failure of the state file logged as a warning */
        usec_t save_logged;             /* when (CLOCK_BOOTTIME) */
        bool save_announced;            /* ... and no write succeeded since */
        NTS_AEADContext *c2s, *s2c;

        ResolveQuery *resolve;          /* of the KE server */
        NTS_KEClient *ke;
        unsigned ke_failures;           /* in a row, without a verified reply in between */
        usec_t ke_retry_after;          /* CLOCK_BOOTTIME; 0: no backoff */
        char *ke_address;               /* "host:port" as used for the exchange */

        /* Bootstrap (see timesyncd-nts.c): the keys came from a handshake that did not check
         * certificate validity periods, so time from them must fall in the period in which
         * every certificate of the chain is valid, and may only move the clock forward. */
        bool bootstrap_attempt;         /* the next key exchange skips the validity check */
        bool bootstrap;                 /* the keys in the jar come from such an exchange */
        time_t chain_valid_from, chain_valid_until;

        NTS_Query query;                /* the request in flight */
        bool query_pending;
        bool authenticated;             /* the last reply verified */
        bool cookies_unproven;          /* from a key exchange of this run, none accepted yet */

        char last_error[256];
} NTSState;

/* True when any NTS server is configured, or NTS= named only invalid ones, or NTSRequired=yes:
 * then time comes from NTS only. */
bool manager_nts_enabled(Manager *m);
/* At start: loads libssl/libcrypto once if NTS is enabled; logs one clear error if that
 * fails. Returns 0 if NTS is usable or not enabled, negative errno otherwise. */
int manager_nts_prepare(Manager *m);

int nts_state_new(ServerName *n, NTSState **ret);
NTSState *nts_state_free(NTSState *s);
/* True while a failed key exchange backs off: the manager skips the server meanwhile. */
bool nts_state_backing_off(const NTSState *s);

/* The manager selected n: resolves the NTP server if we hold cookies, runs a key exchange
 * first otherwise. Calls back into the manager (manager_resolve_ntp(), manager_connect()). */
int manager_nts_connect(Manager *m, ServerName *n);

/* Appends the NTS extension fields for the current server to the header in buf[0..48).
 * Returns the packet length; 0 when there is no cookie left (a key exchange was started and
 * the request is not to be sent); negative errno on failure. */
ssize_t manager_nts_build_request(Manager *m, uint8_t *buf, size_t size);

/* Verifies a reply from the current server. 0: authentic, use it. -EAGAIN: not authentic,
 * ignore the packet and keep waiting. -EKEYREJECTED: the server NAKed our cookie; a new key
 * exchange was started (logged). On failure *ret_cause and *ret_reason (static text) say why,
 * for the caller to count and log (see timesyncd-refusals.h). */
int manager_nts_verify_reply(Manager *m, const uint8_t *buf, size_t size, RefusalCause *ret_cause,
                             const char **ret_reason);

/* For a reply that verified: if the current keys come from a bootstrap exchange, whether its
 * time may be used. 0: yes (and the bootstrap ends once the clock took it); -EPERM: no, the
 * server is dropped (logged). */
int manager_nts_check_bootstrap(Manager *m, int64_t server_time_nsec, int64_t offset_nsec);
/* The clock took a sample: if it came from bootstrap keys, drop them and repeat the key
 * exchange with full certificate checks. Returns true when it did so. */
bool manager_nts_bootstrap_done(Manager *m);

/* What D-Bus shows about the current server. */
const char *manager_nts_aead_name(Manager *m);
unsigned manager_nts_cookies(Manager *m);
const char *manager_nts_ke_server(Manager *m);
