/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The server's side of NTS-KE records, for unit tests and the mock NTS server: decode a
 * client's request, and build a response from knobs, including deliberately broken ones.
 * Built on NTS_record_next()/NTS_record_append(), so both sides share one record codec.
 * Pure, like nts-packet.c, except that a response with cookies of a given size may allocate. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "nts.h"

/* More algorithms or protocols than this in one request is refused as a bad request. */
#define NTS_SERVER_KE_MAX_IDS 32

typedef struct NTSServerKERequest {
        uint16_t aead[NTS_SERVER_KE_MAX_IDS];       /* in the client's order of preference */
        size_t n_aead;
        uint16_t protocols[NTS_SERVER_KE_MAX_IDS];
        size_t n_protocols;
        /* NTP Server Deny records (draft-venhoek-nts-pool section 6.6), as a pool reads them:
         * bodies of 1 to NTS_MAX_SERVER_NAME_SIZE bytes, pointing into the message. */
        struct iovec denied[NTS_SERVER_KE_MAX_IDS];
        size_t n_denied;
        /* With -EBADMSG: the code of the Error record to answer with (RFC 8915 section 4.1.3). */
        uint16_t error_code;
} NTSServerKERequest;

/* Decodes a client request: exactly one non-empty Next Protocol and AEAD record, no Error or
 * Warning record, unknown critical records refused, End of Message last. More than
 * NTS_SERVER_KE_MAX_IDS denied names, or an empty or overlong one, is a bad request.
 * Returns the bytes the request occupies; -ENODATA when End of Message has not arrived yet;
 * -EMSGSIZE beyond NTS_KE_MAX_MESSAGE_SIZE; -EBADMSG with ret->error_code set otherwise. */
ssize_t nts_server_ke_decode_request(const struct iovec *msg, NTSServerKERequest *ret);

bool nts_server_ke_request_offers(const NTSServerKERequest *req, uint16_t aead);

/* Whether the request denies the member of this name (compared byte for byte, as the pools do). */
bool nts_server_ke_request_denies(const NTSServerKERequest *req, const char *name);

/* The client's most preferred algorithm among supported[]; -ENOENT if there is none. */
int nts_server_ke_pick_aead(const NTSServerKERequest *req, const uint16_t *supported, size_t n_supported,
                            uint16_t *ret);

/* An algorithm the client did not offer, for answers that must be refused. */
uint16_t nts_server_ke_unoffered_aead(const NTSServerKERequest *req);

/* Writes cookie number index (size bytes) to buf. */
typedef int (*NTSServerKECookieFunc)(void *userdata, size_t index, uint8_t *buf, size_t size);

typedef struct NTSServerKEResponse {
        uint16_t aead;                  /* the chosen algorithm */
        bool aead_empty;                /* send an empty AEAD record: no common algorithm */
        bool aead_critical;             /* chrony sets the critical bit, NTPsec does not */

        size_t n_cookies;
        size_t cookie_size;             /* each cookie; may be 0 or oversized to break rules */
        /* Where cookie bytes come from: cookie_func if set, else cookie_data (n_cookies *
         * cookie_size bytes), else a pattern that makes every cookie distinct. */
        NTSServerKECookieFunc cookie_func;
        void *userdata;
        const uint8_t *cookie_data;

        const char *server;             /* Server Negotiation body; NULL: no record */
        uint16_t port;                  /* Port Negotiation value; 0: no record */
        bool keep_alive;                /* a Keep Alive record, as a pool passes on its member's */

        /* Sabotage. */
        int error_code;                 /* >= 0: an Error record with this code comes first */
        int warning_code;               /* >= 0: a Warning record with this code comes first */
        bool unknown_critical;          /* add an unknown record type, critical */
        bool unknown_noncritical;       /* add an unknown record type, not critical */
        bool omit_next_protocol;
        bool empty_next_protocol;       /* the server's refusal of NTPv4 */
        bool omit_aead;
        bool duplicate_port;            /* repeat the Port record (needs port != 0) */
        bool data_after_end;            /* one more record after End of Message */
} NTSServerKEResponse;

/* The record type the sabotage knobs use for "unknown". */
#define NTS_SERVER_KE_UNKNOWN_RECORD 0x4242

/* A well-formed answer: NTPv4, aead (critical as chrony does), eight 100-byte cookies. */
#define NTS_SERVER_KE_RESPONSE_DEFAULT(id)                                                     \
        ((NTSServerKEResponse) {                                                               \
                .aead = (id),                                                                  \
                .aead_critical = true,                                                         \
                .n_cookies = NTS_MAX_COOKIES,                                                  \
                .cookie_size = 100,                                                            \
                .error_code = -1,                                                              \
                .warning_code = -1,                                                            \
        })

/* Writes the response to buf in the order chrony uses: [Error] [Warning] Next Protocol, AEAD,
 * [Server], [Port], cookies, [Keep Alive], [unknown records], End of Message [extra record].
 * Returns the number of bytes written, -ENOBUFS, -EMSGSIZE, -ENOMEM, or the cookie_func's
 * error. */
ssize_t nts_server_ke_encode_response(void *buf, size_t size, const NTSServerKEResponse *r);
