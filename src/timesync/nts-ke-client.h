/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One NTS-KE session (RFC 8915 section 4) on an sd-event loop: TCP connect to each of the
 * given addresses in turn, TLS 1.3 handshake, request, response, key export. It knows nothing
 * of the daemon: the caller resolves names, keeps the cookies, retries and logs the outcome;
 * this module logs at debug level only.
 *
 * All I/O waits on the loop and one timer bounds the whole session, so a slow or silent server
 * never stalls the loop. Freeing the session at any time (also from its own callback) cancels
 * it. A peer that resets the connection yields an error, not SIGPIPE, whatever the host's
 * disposition of that signal. */

#include <systemd/sd-event.h>

#include "nts.h"
#include "nts-tls.h"
#include "socket-address.h"
#include "time-util.h"

typedef struct NTS_KEClient NTS_KEClient;

/* Where a session failed. */
typedef enum NTS_KEStage {
        NTS_KE_STAGE_CONNECT,           /* no address accepted a TCP connection */
        NTS_KE_STAGE_TLS,               /* handshake, verification, TLS I/O or key export */
        NTS_KE_STAGE_PROTOCOL,          /* the KE response was refused: see nts_error */
        NTS_KE_STAGE_TIMEOUT,           /* the overall timeout expired */
        _NTS_KE_STAGE_MAX,
} NTS_KEStage;

const char *NTS_ke_stage_to_string(NTS_KEStage s);

/* Everything here is owned by the result; free it with NTS_ke_result_free(). */
typedef struct NTS_KEResult {
        int error;                      /* 0, or the negative errno of the failure */
        NTS_KEStage stage;              /* with error: where it failed */
        NTS_Error nts_error;            /* with NTS_KE_STAGE_PROTOCOL: why it was refused */
        char reason[256];               /* with error: one line naming the stage and the cause */

        NTS_AEADAlgorithm aead;
        struct iovec c2s_key;
        struct iovec s2c_key;
        struct iovec cookies[NTS_MAX_COOKIES];
        size_t n_cookies;
        char *ntp_server;               /* Server Negotiation; NULL: the KE server's address */
        uint16_t ntp_port;              /* Port Negotiation; 0: not negotiated, use 123 */
        SocketAddress address;          /* the KE address that answered, or the last one tried */
        NTS_TLSCertTime cert_time_failure; /* with NTS_KE_STAGE_TLS: refused for its validity period */

        /* version and cipher: set once a handshake completed, also when the KE protocol failed
         * afterwards. The certificate: set whenever the server sent one, also when it failed
         * verification (nts-query shows what was refused and why). */
        struct {
                char version[16];       /* "TLSv1.3" */
                char cipher[64];
                bool certificate;       /* the fields below are set */
                char subject[256];      /* of the server certificate */
                char issuer[256];
                char sans[512];         /* "DNS:localhost, IP:127.0.0.1" */
                time_t not_before;
                time_t not_after;
                char verification[128]; /* "ok" or the verifier's message */
                time_t valid_from;      /* when the whole chain is valid (NTS_TLSInfo) */
                time_t valid_until;
                bool has_key_sha256;    /* key_sha256 is set */
                uint8_t key_sha256[32]; /* of the certificate's SubjectPublicKeyInfo */
        } tls;

        /* For diagnostics (nts-query): whether a TCP connection was established, and the KE
         * response as received, also when it was refused; unset when nothing arrived. */
        bool connected;
        struct iovec response;
} NTS_KEResult;

NTS_KEResult *NTS_ke_result_free(NTS_KEResult *r);

typedef struct NTS_KEClientParams {
        const SocketAddress *addresses; /* tried in this order; a connect failure moves on */
        size_t n_addresses;
        NTS_TLSOptions tls;             /* tls.hostname is required: verification and SNI */
        const NTS_AEADAlgorithm *aead;  /* offer, in order of preference (NTS_aead_offer()) */
        size_t n_aead;
        usec_t timeout_usec;            /* for the whole session, all addresses included */
        /* Pool members not wanted, sent as NTP Server Deny records (draft-venhoek-nts-pool
         * section 6.6): the bodies of the pool's earlier Server records, exactly as received
         * (NTS_KEResult.ntp_server). At most NTS_KE_MAX_DENIED_SERVERS. A pool may still name
         * one of them (it has no other member, or ignores the records): NTS_pool_check()
         * tells. */
        char *const *deny;
        size_t n_deny;
} NTS_KEClientParams;

/* Called exactly once unless the session is freed first; it receives ownership of result. It
 * may free the session. */
typedef void (*NTS_KEClientHandler)(NTS_KEClient *c, NTS_KEResult *result, void *userdata);

/* Starts a session: copies everything in p, so the caller's buffers may go away at once. The
 * handler runs from the loop, never from inside this call. Returns 0, -EINVAL for empty
 * address or AEAD lists, a missing hostname or an empty or overlong denied name, -E2BIG for
 * too many denied names, -ENOMEM, or an sd-event error. */
int NTS_ke_client_start(sd_event *e, const NTS_KEClientParams *p, NTS_KEClientHandler handler,
                        void *userdata, NTS_KEClient **ret);
NTS_KEClient *NTS_ke_client_free(NTS_KEClient *c);

/* Runs one session to completion on a private event loop, blocking for at most
 * p->timeout_usec: for one-shot tools and tests, never for the daemon. *ret receives the
 * result, also for a failed session (see its error). Returns 0, or a negative errno when the
 * session could not run at all. */
int NTS_ke_client_run(const NTS_KEClientParams *p, NTS_KEResult **ret);

DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_KEClient *, NTS_ke_client_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_KEResult *, NTS_ke_result_free);
