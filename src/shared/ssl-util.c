/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "crypto-util.h"
#include "dlopen-util.h"
#include "log.h"
#include "ssl-util.h"

ELF_NOTE_DLOPEN("nts", "TLS 1.3 for NTS key exchange", ELF_NOTE_DLOPEN_PRIORITY_RECOMMENDED,
                LIBSSL_SONAME);

static void *libssl_dl;

typeof(TLS_client_method) *sym_TLS_client_method;
typeof(TLS_server_method) *sym_TLS_server_method;
typeof(SSL_CTX_new) *sym_SSL_CTX_new;
typeof(SSL_CTX_free) *sym_SSL_CTX_free;
typeof(SSL_CTX_ctrl) *sym_SSL_CTX_ctrl;
typeof(SSL_new) *sym_SSL_new;
typeof(SSL_free) *sym_SSL_free;
typeof(SSL_ctrl) *sym_SSL_ctrl;
typeof(SSL_set_fd) *sym_SSL_set_fd;
typeof(SSL_get_error) *sym_SSL_get_error;

int dlopen_libssl(int log_level) {
        int r;

        r = dlopen_libcrypto(log_level);
        if (r < 0)
                return r;

        r = dlopen_library_symbols(
                        &libssl_dl, LIBSSL_SONAME, log_level,
                        DLSYM_ARG(TLS_client_method),
                        DLSYM_ARG(TLS_server_method),
                        DLSYM_ARG(SSL_CTX_new),
                        DLSYM_ARG(SSL_CTX_free),
                        DLSYM_ARG(SSL_CTX_ctrl),
                        DLSYM_ARG(SSL_new),
                        DLSYM_ARG(SSL_free),
                        DLSYM_ARG(SSL_ctrl),
                        DLSYM_ARG(SSL_set_fd),
                        DLSYM_ARG(SSL_get_error));
        return r < 0 ? r : 0;
}

bool libssl_loaded(void) {
        return libssl_dl;
}
