/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <sys/epoll.h>

#include "crypto-util.h"
#include "log.h"
#include "nts-server-tls.h"

static const uint8_t alpn_ntske[] = "\x07ntske/1";
static const uint8_t alpn_other[] = "http/1.1";

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *userdata) {
        const ServerALPN *mode = userdata;
        unsigned char *selected;

        switch (*mode) {
        case SERVER_ALPN_NTSKE:
                if (sym_SSL_select_next_proto(&selected, outlen, alpn_ntske, sizeof(alpn_ntske) - 1,
                                              in, inlen) != OPENSSL_NPN_NEGOTIATED)
                        return SSL_TLSEXT_ERR_ALERT_FATAL;
                *out = selected;
                return SSL_TLSEXT_ERR_OK;
        case SERVER_ALPN_NONE:
                return SSL_TLSEXT_ERR_NOACK;
        case SERVER_ALPN_OTHER:
                *out = alpn_other;
                *outlen = sizeof(alpn_other) - 1;
                return SSL_TLSEXT_ERR_OK;
        case SERVER_ALPN_REFUSE:
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        }
        return SSL_TLSEXT_ERR_ALERT_FATAL;
}

int server_tls_ctx_new(const ServerTLSOptions *o, SSL_CTX **ret) {
        SSL_CTX *ctx;
        char buf[256];
        int r;

        assert(o && o->cert_chain && o->key && o->alpn);
        assert(ret);

        r = dlopen_libssl(LOG_ERR);
        if (r < 0)
                return r;

        ctx = sym_SSL_CTX_new(sym_TLS_server_method());
        if (!ctx)
                return log_error_errno(ENOMEM, "SSL_CTX_new: %s", crypto_last_error(buf, sizeof(buf)));

        if (sym_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION,
                             o->max_version != 0 ? TLS1_2_VERSION : TLS1_3_VERSION, NULL) != 1 ||
            sym_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION,
                             o->max_version != 0 ? o->max_version : TLS1_3_VERSION, NULL) != 1 ||
            sym_SSL_CTX_use_certificate_chain_file(ctx, o->cert_chain) != 1 ||
            sym_SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) != 1 ||
            sym_SSL_CTX_check_private_key(ctx) != 1) {
                sym_SSL_CTX_free(ctx);
                return log_error_errno(EINVAL, "Failed to set up server TLS context with %s and %s: %s",
                                       o->cert_chain, o->key, crypto_last_error(buf, sizeof(buf)));
        }

        sym_SSL_CTX_set_alpn_select_cb(ctx, alpn_select, (void *) o->alpn);

        *ret = ctx;
        return 0;
}

int server_tls_ssl_new(SSL_CTX *ctx, int fd, SSL **ret) {
        SSL *ssl;
        char buf[256];

        ssl = sym_SSL_new(ctx);
        if (!ssl)
                return log_error_errno(ENOMEM, "SSL_new: %s", crypto_last_error(buf, sizeof(buf)));
        if (sym_SSL_set_fd(ssl, fd) != 1) {
                sym_SSL_free(ssl);
                return log_error_errno(ENOMEM, "SSL_set_fd: %s", crypto_last_error(buf, sizeof(buf)));
        }
        sym_SSL_set_accept_state(ssl);

        *ret = ssl;
        return 0;
}

int server_tls_result(SSL *ssl, int ret, uint32_t *ret_events) {
        int saved_errno = errno, e;
        uint32_t events = 0;
        char buf[256];

        e = sym_SSL_get_error(ssl, ret);
        switch (e) {
        case SSL_ERROR_WANT_READ:
                events = EPOLLIN;
                break;
        case SSL_ERROR_WANT_WRITE:
                events = EPOLLOUT;
                break;
        case SSL_ERROR_ZERO_RETURN:
                sym_ERR_clear_error();
                return 0;
        case SSL_ERROR_SYSCALL:
                sym_ERR_clear_error();
                if (saved_errno == 0)
                        return log_debug_errno(ECONNRESET, "Server TLS: connection closed by peer");
                return log_debug_errno(saved_errno, "Server TLS: %m");
        default:
                return log_debug_errno(EPROTO, "Server TLS: %s", crypto_last_error(buf, sizeof(buf)));
        }

        sym_ERR_clear_error();
        if (ret_events)
                *ret_events = events;
        return -EAGAIN;
}

int server_tls_handshake(SSL *ssl, uint32_t *ret_events) {
        int r;

        sym_ERR_clear_error();
        r = sym_SSL_do_handshake(ssl);
        if (r == 1)
                return 0;

        r = server_tls_result(ssl, r, ret_events);
        return r == 0 ? -ECONNRESET : r;
}

int server_tls_export_keys(SSL *ssl, NTS_AEADAlgorithm aead, size_t key_size, uint8_t *c2s, uint8_t *s2c) {
        /* RFC 8915 section 5.1: Protocol ID NTPv4 (0), AEAD ID, direction; all big-endian. */
        uint8_t context[NTS_EXPORTER_CONTEXT_SIZE] = { 0, 0, (uint8_t) (aead >> 8), (uint8_t) aead, 0 };

        context[4] = NTS_EXPORTER_C2S;
        if (sym_SSL_export_keying_material(ssl, c2s, key_size, NTS_EXPORTER_LABEL, strlen(NTS_EXPORTER_LABEL),
                                           context, sizeof(context), 1) != 1)
                return -EIO;

        context[4] = NTS_EXPORTER_S2C;
        if (sym_SSL_export_keying_material(ssl, s2c, key_size, NTS_EXPORTER_LABEL, strlen(NTS_EXPORTER_LABEL),
                                           context, sizeof(context), 1) != 1)
                return -EIO;

        return 0;
}
