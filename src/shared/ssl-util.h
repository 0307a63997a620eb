/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* libssl, loaded on first use, like crypto-util.h for libcrypto. The X509 helpers that TLS
 * needs live in libcrypto but are resolved here, through the libssl handle, since only TLS
 * code uses them. */

#include "macro.h"

#if HAVE_NTS
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

extern typeof(TLS_client_method) *sym_TLS_client_method;
extern typeof(TLS_server_method) *sym_TLS_server_method;
extern typeof(SSL_CTX_new) *sym_SSL_CTX_new;
extern typeof(SSL_CTX_free) *sym_SSL_CTX_free;
extern typeof(SSL_CTX_ctrl) *sym_SSL_CTX_ctrl;
extern typeof(SSL_new) *sym_SSL_new;
extern typeof(SSL_free) *sym_SSL_free;
extern typeof(SSL_ctrl) *sym_SSL_ctrl;
extern typeof(SSL_set_fd) *sym_SSL_set_fd;
extern typeof(SSL_get_error) *sym_SSL_get_error;

/* Loads libcrypto, then libssl (LIBSSL_SONAME) and every symbol above. */
int dlopen_libssl(int log_level);
bool libssl_loaded(void);
#else
static inline int dlopen_libssl(int log_level) {
        return -EOPNOTSUPP;
}
static inline bool libssl_loaded(void) {
        return false;
}
#endif
