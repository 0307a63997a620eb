/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A non-blocking TLS 1.3 client session for NTS-KE over an already connected TCP socket,
 * through libssl (loaded with dlopen() on first use). The caller owns the socket and the
 * event loop: every call that would block returns -EAGAIN and NTS_tls_events() tells which
 * poll events to wait for. */

#include <time.h>

#include "macro.h"
#include "nts.h"

typedef struct NTS_TLS NTS_TLS;

typedef struct NTS_TLSOptions {
        const char *hostname;           /* name or IP literal to verify; a name is also sent as SNI */
        const char *ca_file;            /* PEM file of trusted CAs; NULL: system store */
        const char *ca_dir;             /* hashed directory of trusted CAs; NULL: system store */
        time_t verify_time;             /* check certificate validity at this time; 0: now */
        bool no_verify_time;            /* do not check validity periods at all (bootstrap) */
} NTS_TLSOptions;

/* Loads libssl; takes no ownership of fd. Returns -EOPNOTSUPP if libssl is missing, -ENODATA
 * if ca_file or ca_dir holds no certificate, another negative errno if they cannot be read or
 * on other failures; then error (if not NULL) holds one line naming the cause and the file
 * ("CA file /x.pem contains no certificate"). */
int NTS_tls_new(int fd, const NTS_TLSOptions *o, NTS_TLS **ret, char *error, size_t error_size);
NTS_TLS *NTS_tls_free(NTS_TLS *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_TLS *, NTS_tls_free);

/* What a context made with o trusts (its ca_file, its ca_dir or the system's store, as
 * NTS_tls_new() loads them), as one SHA-256 over the paths and the bytes of every file read:
 * the files' names and bytes, for a directory of those under subject-hash names (what
 * OpenSSL's lookup opens). A file that cannot be read counts with its error. Loads libssl;
 * -EOPNOTSUPP without it, -ENOMEM. */
int NTS_tls_trust_sha256(const NTS_TLSOptions *o, uint8_t ret[static 32]);

/* Drives the handshake. 0 when complete and verified (chain, hostname or IP, ALPN "ntske/1"
 * selected by the server, TLS >= 1.3); -EAGAIN to be called again when NTS_tls_events()
 * happen; another negative errno on failure, with the reason in NTS_tls_error(). */
int NTS_tls_handshake(NTS_TLS *t);

/* Returns bytes written/read, 0 on read for an orderly close by the peer, -EAGAIN (see
 * NTS_tls_events()), or another negative errno with NTS_tls_error() set. */
ssize_t NTS_tls_write(NTS_TLS *t, const void *buf, size_t size);
ssize_t NTS_tls_read(NTS_TLS *t, void *buf, size_t size);

/* Whether a failed handshake refused the certificate for its validity period, and which way:
 * the bootstrap of a machine with a wrong clock needs to tell "not yet valid" from the rest. */
typedef enum NTS_TLSCertTime {
        NTS_TLS_CERT_TIME_OTHER,        /* no certificate time failure (or not only that) */
        NTS_TLS_CERT_NOT_YET_VALID,
        NTS_TLS_CERT_EXPIRED,
} NTS_TLSCertTime;

NTS_TLSCertTime NTS_tls_cert_time_failure(const NTS_TLS *t);

/* EPOLLIN and/or EPOLLOUT: what the last -EAGAIN waits for. */
uint32_t NTS_tls_events(const NTS_TLS *t);

/* RFC 8915 section 5.1: exports the C2S and S2C keys for aead (each key_size bytes of the
 * algorithm) into c2s and s2c (iov_len is capacity on entry, key size on return), with
 * context_aead as the AEAD ID of the exporter context: NTS_exporter_aead() of the agreement,
 * which differs from aead only for chrony's AES-128-GCM-SIV keys. */
int NTS_tls_export_keys(NTS_TLS *t, NTS_AEADAlgorithm aead, uint16_t context_aead, struct iovec *c2s,
                        struct iovec *s2c);

/* Text of the last failure (certificate verification message, TLS alert, ALPN refusal,
 * system error); "" if none. Valid until the next call on t. */
const char *NTS_tls_error(const NTS_TLS *t);

/* What an operator wants to see about the session (nts-query, debug logs). Strings are owned
 * by t. The certificate is the server's as the verifier saw it, so all of this is there also
 * after a handshake that failed verification: that is when an operator needs it most. */
typedef struct NTS_TLSInfo {
        const char *version;            /* "TLSv1.3"; meaningful once the handshake completed */
        const char *cipher;             /* "TLS_AES_256_GCM_SHA384"; likewise */
        char subject[256];
        char issuer[256];
        char sans[512];                 /* "DNS:localhost, IP:127.0.0.1", "" if none */
        time_t not_before;              /* of the server's certificate */
        time_t not_after;
        /* When every certificate of the chain the verifier built (up to the trust anchor,
         * whole after a handshake that verified) is valid, the intersection of their periods:
         * the leaf alone may be valid at a time its issuer is not. valid_from > valid_until
         * when empty or unknown. */
        time_t valid_from;
        time_t valid_until;
        const char *verify_result;      /* "ok" or the verifier's message ("certificate has expired") */
        /* SHA-256 of the certificate's SubjectPublicKeyInfo: the server's key, whatever name
         * it was reached by (one server, one vote). */
        bool has_key_sha256;
        uint8_t key_sha256[32];
} NTS_TLSInfo;

/* Returns 0, or -ENODATA when no certificate arrived (then only version, cipher and
 * verify_result are set). */
int NTS_tls_info(NTS_TLS *t, NTS_TLSInfo *ret);

/* Sends close_notify, best effort, without blocking. */
void NTS_tls_shutdown(NTS_TLS *t);
