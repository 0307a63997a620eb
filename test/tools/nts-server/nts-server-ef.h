/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The server's side of NTS-protected NTP (RFC 8915 section 5), for unit tests and the mock
 * server: read and verify a client request, build a response, honest or sabotaged in one of
 * the ways a client must survive. Built on the client's extension field codec (nts.h,
 * nts-extfields.h), so both sides read and write fields the same way. */

#include "nts.h"

typedef struct NTSServerRequest {
        struct iovec uid;               /* body of the Unique Identifier, points into the packet */
        struct iovec cookie;            /* body of the cookie field, padding included */
        size_t n_placeholders;
        NTS_ExtensionField auth;        /* the authenticator, for nts_server_verify_request() */
} NTSServerRequest;

/* Reads a client request without a key (a server finds the keys in the cookie). Returns 0, or
 * -EBADMSG when the packet is shorter than an NTP header or its fields are malformed, when
 * there is not exactly one UID (at least NTS_UID_SIZE bytes), one cookie and one
 * authenticator, when a placeholder is sized unlike the cookie, or when anything follows the
 * authenticator. */
int nts_server_parse_request(const struct iovec *packet, NTSServerRequest *ret);

/* Verifies the request's authenticator with the client-to-server key. Returns 0, -EBADMSG
 * when it does not verify, or another error from the AEAD. */
int nts_server_verify_request(const struct iovec *packet, const NTSServerRequest *req, NTS_AEADContext *c2s);

typedef enum NTSServerSabotage {
        NTS_SERVER_HONEST,
        NTS_SERVER_WRONG_UID,               /* echo the UID with one byte changed */
        NTS_SERVER_CORRUPT_AUTHENTICATOR,   /* flip a bit of the sealed part */
        NTS_SERVER_NO_AUTHENTICATOR,        /* UID and cookies in the clear, nothing sealed */
        NTS_SERVER_NAK,                     /* kiss-o'-death NTSN echoing the UID, nothing else */
        NTS_SERVER_COOKIES_OUTSIDE,         /* cookies in the clear before an authenticator sealing nothing */
        _NTS_SERVER_SABOTAGE_MAX,
} NTSServerSabotage;

/* "honest", "wrong-uid", "corrupt-authenticator", "no-authenticator", "nak", "cookies-outside" */
const char *nts_server_sabotage_to_string(NTSServerSabotage s);
/* -EINVAL for an unknown name. */
int nts_server_sabotage_from_string(const char *s);

typedef struct NTSServerResponse {
        const uint8_t *header;          /* NTP_HEADER_SIZE bytes; NAK sets stratum 0 and "NTSN" */
        struct iovec uid;               /* the request's UID, echoed */
        const struct iovec *cookies;    /* new cookies for the client */
        size_t n_cookies;
        NTS_AEADContext *s2c;           /* server-to-client key; unused by NO_AUTHENTICATOR and NAK */
        NTSServerSabotage sabotage;
} NTSServerResponse;

/* Writes the response to buf. Returns its length, -ENOBUFS, -EINVAL, or an error from the
 * AEAD. */
ssize_t nts_server_build_response(const NTSServerResponse *r, uint8_t *buf, size_t size);
