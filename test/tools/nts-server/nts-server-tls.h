/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The server side of NTS-KE TLS for the test servers and the TLS unit test: a TLS context
 * with a certificate chain and key, an ALPN behaviour that can be good or broken on purpose,
 * and the RFC 8915 section 5.1 key export as the server computes it. Built from ssl-util.h
 * sym_ pointers, like the client. */

#include <sys/uio.h>

#include "nts.h"
#include "ssl-util.h"

typedef enum ServerALPN {
        SERVER_ALPN_NTSKE,      /* select "ntske/1" if offered, else fatal no_application_protocol */
        SERVER_ALPN_NONE,       /* select nothing: no ALPN extension in the reply */
        SERVER_ALPN_OTHER,      /* select "http/1.1" whatever the client offered */
        SERVER_ALPN_REFUSE,     /* fatal no_application_protocol alert */
} ServerALPN;

typedef struct ServerTLSOptions {
        const char *cert_chain;         /* PEM: leaf first */
        const char *key;
        int max_version;                /* e.g. TLS1_2_VERSION; 0: TLS 1.3 only */
        const ServerALPN *alpn;         /* read at every handshake, so it may change at run time */
} ServerTLSOptions;

int server_tls_ctx_new(const ServerTLSOptions *o, SSL_CTX **ret);

/* A non-blocking server session on fd (not owned). */
int server_tls_ssl_new(SSL_CTX *ctx, int fd, SSL **ret);

/* For an SSL_*() call that returned ret <= 0: -EAGAIN with the poll events to wait for in
 * *ret_events (may be NULL), 0 for an orderly close, -EPROTO or -errno on failure (logged at
 * debug level). Empties the error queue. */
int server_tls_result(SSL *ssl, int ret, uint32_t *ret_events);

/* Steps the handshake: 0 when done, else like server_tls_result(). A close during the
 * handshake is -ECONNRESET. */
int server_tls_handshake(SSL *ssl, uint32_t *ret_events);

/* RFC 8915 section 5.1: both keys for aead, key_size bytes each, as the server derives them. */
int server_tls_export_keys(SSL *ssl, NTS_AEADAlgorithm aead, size_t key_size, uint8_t *c2s, uint8_t *s2c);
