/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Public API and shared types of the NTS modules:
 *   nts-error.c       NTS_Error -> text
 *   nts-packet.c      NTS-KE records: encode the request, decode the response (pure)
 *   nts-extfields.c   NTP extension fields: build a request, verify a response (pure)
 *   nts-crypto.h      AEAD, see there
 *   nts-tls.h         TLS session, see there
 * "Pure" means: buffers in, negative errno out, no I/O, no logging, no hidden allocation. Any
 * pointer these functions return into a result points into a buffer the caller passed. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "nts-definitions.h"

typedef enum NTS_AEADAlgorithm {
        NTS_AEAD_AES_SIV_CMAC_256 = NTS_AEAD_ID_AES_SIV_CMAC_256,
        NTS_AEAD_AES_SIV_CMAC_384 = NTS_AEAD_ID_AES_SIV_CMAC_384,
        NTS_AEAD_AES_SIV_CMAC_512 = NTS_AEAD_ID_AES_SIV_CMAC_512,
        NTS_AEAD_AES_128_GCM_SIV = NTS_AEAD_ID_AES_128_GCM_SIV,
        NTS_AEAD_AES_256_GCM_SIV = NTS_AEAD_ID_AES_256_GCM_SIV,
} NTS_AEADAlgorithm;

/* Why a KE response or an NTP response was not accepted. One enum for both, so that logs and
 * D-Bus can name a cause with one string. NTS_error_string() returns NULL for values outside
 * the enum. */
typedef enum NTS_Error {
        NTS_OK = 0,

        /* The KE server said so. */
        NTS_ERROR_SERVER_UNRECOGNIZED_CRITICAL_RECORD, /* Error record, code 0 */
        NTS_ERROR_SERVER_BAD_REQUEST,                  /* Error record, code 1 */
        NTS_ERROR_SERVER_INTERNAL_ERROR,               /* Error record, code 2 */
        NTS_ERROR_SERVER_UNKNOWN_ERROR,                /* Error record, other code */
        NTS_ERROR_SERVER_WARNING,                      /* Warning record: unknown warnings are errors (RFC 8915 4.1.4) */

        /* The KE response is malformed or unacceptable. */
        NTS_ERROR_KE_TRUNCATED,              /* ends before End of Message */
        NTS_ERROR_KE_TOO_LONG,               /* larger than NTS_KE_MAX_MESSAGE_SIZE */
        NTS_ERROR_KE_DATA_AFTER_END,         /* bytes after End of Message */
        NTS_ERROR_KE_BAD_RECORD_LENGTH,      /* body length invalid for the record type */
        NTS_ERROR_KE_DUPLICATE_RECORD,       /* a record that may appear once appeared twice */
        NTS_ERROR_KE_UNKNOWN_CRITICAL_RECORD,
        NTS_ERROR_KE_NO_NEXT_PROTOCOL,       /* missing, empty, or not NTPv4 */
        NTS_ERROR_KE_NO_AEAD,                /* AEAD record missing */
        NTS_ERROR_KE_NO_COMMON_AEAD,         /* AEAD record empty: server supports none we offered */
        NTS_ERROR_KE_AEAD_NOT_OFFERED,       /* server chose an algorithm we did not offer */
        NTS_ERROR_KE_NO_COOKIES,
        NTS_ERROR_KE_BAD_COOKIE,             /* empty or larger than NTS_MAX_COOKIE_SIZE */
        NTS_ERROR_KE_BAD_SERVER,             /* Server Negotiation body not an address or name */
        NTS_ERROR_KE_BAD_PORT,               /* Port Negotiation port 0 */

        /* The NTP response is not acceptable. */
        NTS_ERROR_NTP_TRUNCATED,             /* shorter than a header, or a field overruns the packet */
        NTS_ERROR_NTP_BAD_EXTENSION_FIELD,   /* length or padding rules broken */
        NTS_ERROR_NTP_NO_UID,
        NTS_ERROR_NTP_UID_MISMATCH,
        NTS_ERROR_NTP_NO_AUTHENTICATOR,
        NTS_ERROR_NTP_BAD_AUTHENTICATOR,     /* malformed nonce/ciphertext lengths */
        NTS_ERROR_NTP_AUTH_FAILED,           /* AEAD verification failed */
        NTS_ERROR_NTP_NO_COOKIES,            /* verified, but no cookie inside the encrypted part */
        NTS_ERROR_NTP_NAK,                   /* kiss code NTSN for our UID: run KE again */

        _NTS_ERROR_MAX,
} NTS_Error;

const char *NTS_error_string(NTS_Error e);

/* Human readable name of an AEAD identifier, e.g. "AEAD_AES_SIV_CMAC_256"; NULL if unknown. */
const char *NTS_aead_name(uint16_t id);

/* ---- NTS-KE records (nts-packet.c) ---- */

typedef struct NTS_Record {
        uint16_t type;          /* without the critical bit */
        bool critical;
        struct iovec body;      /* points into the message */
} NTS_Record;

/* Reads the record at the start of *msg and advances *msg past it.
 * Returns 0, or -ENODATA if *msg holds less than a whole record (then *msg is unchanged). */
int NTS_record_next(struct iovec *msg, NTS_Record *ret);

/* Appends a record at the start of *out and advances *out past it.
 * Returns 0, -ENOBUFS if it does not fit, -EMSGSIZE if the body exceeds 65535 bytes. */
int NTS_record_append(struct iovec *out, uint16_t type, bool critical, const void *body, size_t size);

/* Writes a complete client request to buf: Next Protocol NTPv4, AEAD Algorithm Negotiation
 * listing aead[0..n_aead) in order of preference, chrony's Compliant AES-128-GCM-SIV Exporter
 * Context record (1024, empty, not critical) when that list holds AEAD_AES_128_GCM_SIV, one
 * NTP Server Deny record (not critical) per
 * name in deny[0..n_deny), End of Message. A denied name goes out byte for byte as given: a
 * pool recognizes a member only by the exact body of the Server record it sent.
 * Returns the number of bytes written; -ENOBUFS if size is too small (NTS_request_size() says
 * how much is needed); -EINVAL if n_aead is 0 or a denied name is empty or longer than
 * NTS_MAX_SERVER_NAME_SIZE; -E2BIG for more than NTS_KE_MAX_DENIED_SERVERS denied names. */
ssize_t NTS_encode_request(void *buf, size_t size, const NTS_AEADAlgorithm *aead, size_t n_aead,
                           char *const *deny, size_t n_deny);

/* The size of that request. */
size_t NTS_request_size(const NTS_AEADAlgorithm *aead, size_t n_aead, char *const *deny, size_t n_deny);

/* What the server agreed to. Pointers point into the decoded message. */
typedef struct NTS_Agreement {
        NTS_Error error;            /* NTS_OK, or why the response was refused */
        uint16_t record_type;       /* with NTS_ERROR_KE_*: the record type at fault */
        uint16_t server_code;       /* with NTS_ERROR_SERVER_*: the code the server sent */

        NTS_AEADAlgorithm aead;     /* also with NTS_ERROR_KE_AEAD_NOT_OFFERED: what the server chose */
        bool compliant_128gcm;      /* the server sent record 1024 (NTS_KE_RECORD_COMPLIANT_128GCM_EXPORT) */
        struct iovec server;        /* Server Negotiation body, not NUL-terminated; unset when absent */
        uint16_t port;              /* Port Negotiation value; 0 when absent */
        struct iovec cookies[NTS_MAX_COOKIES];
        size_t n_cookies;           /* at most NTS_MAX_COOKIES; further cookies are ignored */
} NTS_Agreement;

/* Decodes a complete server response, checking every rule of RFC 8915 section 4: exactly one
 * Next Protocol record naming NTPv4, exactly one AEAD record naming one of offered[], at
 * least one cookie, at most one Server and Port record, no Error or Warning record, unknown
 * critical records refused, unknown non-critical records skipped, nothing after End of
 * Message.
 * Returns the number of bytes the message occupies (> 0) and ret->error == NTS_OK on success;
 * -ENODATA with NTS_ERROR_KE_TRUNCATED when End of Message has not arrived yet (read more,
 * or fail if the stream ended); -EMSGSIZE with NTS_ERROR_KE_TOO_LONG; -EBADMSG with the cause
 * in ret->error for every other refusal. */
ssize_t NTS_decode_response(const struct iovec *msg, const NTS_AEADAlgorithm *offered, size_t n_offered,
                            NTS_Agreement *ret);

/* The AEAD ID that goes into the TLS exporter context (RFC 8915 section 5.1) for the keys of
 * agreement a: its AEAD, except for AEAD_AES_128_GCM_SIV without the server's record 1024,
 * where chrony (4.4 and later, the servers that offer it) puts AEAD_AES_SIV_CMAC_256. */
uint16_t NTS_exporter_aead(const NTS_Agreement *a);

/* ---- NTP extension fields (nts-extfields.c) ---- */

typedef struct NTS_AEADContext NTS_AEADContext;   /* nts-crypto.h */

typedef struct NTS_ExtensionField {
        uint16_t type;
        struct iovec body;      /* points into the packet; excludes the 4-byte header */
} NTS_ExtensionField;

/* Reads the extension field at the start of *p (which must start after the NTP header) and
 * advances *p. Enforces RFC 7822 length rules (>= 16, multiple of 4, inside the packet).
 * Returns 0, -ENODATA when *p is empty, -EBADMSG for a malformed field. */
int NTS_ef_next(struct iovec *p, NTS_ExtensionField *ret);

/* Appends an extension field with the given body, zero-padded to a multiple of 4 and to at
 * least NTP_EF_MIN_SIZE, at the start of *out and advances *out. Returns 0 or -ENOBUFS. */
int NTS_ef_append(struct iovec *out, uint16_t type, const void *body, size_t size);

/* The client's side of one NTS-protected NTP exchange. */
typedef struct NTS_Query {
        struct iovec cookie;            /* the cookie this request spends (not owned) */
        size_t n_placeholders;          /* extra cookies requested, 0..NTS_MAX_COOKIES-1 */
        NTS_AEADContext *c2s;           /* client-to-server key */
        uint8_t uid[NTS_UID_SIZE];      /* set by NTS_add_extension_fields() */
} NTS_Query;

/* buf holds the NTP header in its first header_size bytes; appends the Unique Identifier
 * (fresh random bytes, stored in q->uid), the cookie, n_placeholders placeholders of the
 * cookie's size and the authenticator (fresh random nonce, C2S key, over everything before
 * it). Returns the total packet length, or -ENOBUFS, -EINVAL, or an error from the AEAD. */
ssize_t NTS_add_extension_fields(uint8_t *buf, size_t size, size_t header_size, NTS_Query *q);

/* What a verified response carried. */
typedef struct NTS_Receipt {
        NTS_Error error;
        struct iovec cookies[NTS_MAX_COOKIES];  /* point into the caller's scratch buffer */
        size_t n_cookies;
} NTS_Receipt;

/* Verifies a response to the query q: the Unique Identifier must equal q->uid, the
 * authenticator must verify with s2c over everything before it, new cookies are taken only
 * from the decrypted part (into scratch, which must be at least packet->iov_len bytes), and
 * extension fields outside the authenticated part are ignored. A kiss-o'-death NTSN that
 * echoes q->uid yields NTS_ERROR_NTP_NAK.
 * Returns 0 when the response is authentic, a negative errno with ret->error set otherwise. */
int NTS_parse_extension_fields(const struct iovec *packet, const NTS_Query *q, NTS_AEADContext *s2c,
                               struct iovec *scratch, NTS_Receipt *ret);
