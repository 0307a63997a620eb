/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "crypto-util.h"
#include "dlopen-util.h"
#include "log.h"

ELF_NOTE_DLOPEN("nts", "AEAD for Network Time Security", ELF_NOTE_DLOPEN_PRIORITY_RECOMMENDED,
                LIBCRYPTO_SONAME);

static void *libcrypto_dl;

typeof(EVP_CIPHER_fetch) *sym_EVP_CIPHER_fetch;
typeof(EVP_CIPHER_free) *sym_EVP_CIPHER_free;
typeof(EVP_CIPHER_CTX_new) *sym_EVP_CIPHER_CTX_new;
typeof(EVP_CIPHER_CTX_free) *sym_EVP_CIPHER_CTX_free;
typeof(EVP_CIPHER_CTX_copy) *sym_EVP_CIPHER_CTX_copy;
typeof(EVP_CIPHER_CTX_ctrl) *sym_EVP_CIPHER_CTX_ctrl;
typeof(EVP_CIPHER_CTX_set_padding) *sym_EVP_CIPHER_CTX_set_padding;
typeof(EVP_EncryptInit_ex) *sym_EVP_EncryptInit_ex;
typeof(EVP_EncryptUpdate) *sym_EVP_EncryptUpdate;
typeof(EVP_EncryptFinal_ex) *sym_EVP_EncryptFinal_ex;
typeof(EVP_DecryptInit_ex) *sym_EVP_DecryptInit_ex;
typeof(EVP_DecryptUpdate) *sym_EVP_DecryptUpdate;
typeof(EVP_DecryptFinal_ex) *sym_EVP_DecryptFinal_ex;
typeof(EVP_MAC_fetch) *sym_EVP_MAC_fetch;
typeof(EVP_MAC_free) *sym_EVP_MAC_free;
typeof(EVP_MAC_CTX_new) *sym_EVP_MAC_CTX_new;
typeof(EVP_MAC_CTX_free) *sym_EVP_MAC_CTX_free;
typeof(EVP_MAC_CTX_dup) *sym_EVP_MAC_CTX_dup;
typeof(EVP_MAC_init) *sym_EVP_MAC_init;
typeof(EVP_MAC_update) *sym_EVP_MAC_update;
typeof(EVP_MAC_final) *sym_EVP_MAC_final;
typeof(OSSL_PARAM_construct_utf8_string) *sym_OSSL_PARAM_construct_utf8_string;
typeof(OSSL_PARAM_construct_end) *sym_OSSL_PARAM_construct_end;
typeof(CRYPTO_memcmp) *sym_CRYPTO_memcmp;
typeof(EVP_Digest) *sym_EVP_Digest;
typeof(EVP_sha256) *sym_EVP_sha256;
typeof(ERR_get_error) *sym_ERR_get_error;
typeof(ERR_peek_last_error) *sym_ERR_peek_last_error;
typeof(ERR_clear_error) *sym_ERR_clear_error;
typeof(ERR_error_string_n) *sym_ERR_error_string_n;
typeof(OpenSSL_version) *sym_OpenSSL_version;
typeof(OpenSSL_version_num) *sym_OpenSSL_version_num;

int dlopen_libcrypto(int log_level) {
        int r;

        r = dlopen_library_symbols(
                        &libcrypto_dl, LIBCRYPTO_SONAME, log_level,
                        DLSYM_ARG(EVP_CIPHER_fetch),
                        DLSYM_ARG(EVP_CIPHER_free),
                        DLSYM_ARG(EVP_CIPHER_CTX_new),
                        DLSYM_ARG(EVP_CIPHER_CTX_free),
                        DLSYM_ARG(EVP_CIPHER_CTX_copy),
                        DLSYM_ARG(EVP_CIPHER_CTX_ctrl),
                        DLSYM_ARG(EVP_CIPHER_CTX_set_padding),
                        DLSYM_ARG(EVP_EncryptInit_ex),
                        DLSYM_ARG(EVP_EncryptUpdate),
                        DLSYM_ARG(EVP_EncryptFinal_ex),
                        DLSYM_ARG(EVP_DecryptInit_ex),
                        DLSYM_ARG(EVP_DecryptUpdate),
                        DLSYM_ARG(EVP_DecryptFinal_ex),
                        DLSYM_ARG(EVP_MAC_fetch),
                        DLSYM_ARG(EVP_MAC_free),
                        DLSYM_ARG(EVP_MAC_CTX_new),
                        DLSYM_ARG(EVP_MAC_CTX_free),
                        DLSYM_ARG(EVP_MAC_CTX_dup),
                        DLSYM_ARG(EVP_MAC_init),
                        DLSYM_ARG(EVP_MAC_update),
                        DLSYM_ARG(EVP_MAC_final),
                        DLSYM_ARG(OSSL_PARAM_construct_utf8_string),
                        DLSYM_ARG(OSSL_PARAM_construct_end),
                        DLSYM_ARG(CRYPTO_memcmp),
                        DLSYM_ARG(EVP_Digest),
                        DLSYM_ARG(EVP_sha256),
                        DLSYM_ARG(ERR_get_error),
                        DLSYM_ARG(ERR_peek_last_error),
                        DLSYM_ARG(ERR_clear_error),
                        DLSYM_ARG(ERR_error_string_n),
                        DLSYM_ARG(OpenSSL_version),
                        DLSYM_ARG(OpenSSL_version_num));
        return r < 0 ? r : 0;
}

bool libcrypto_loaded(void) {
        return libcrypto_dl;
}

const char *crypto_last_error(char *buf, size_t size) {
        unsigned long e;

        assert(buf);
        assert(size > 0);

        if (!libcrypto_dl)
                return "libcrypto not loaded";

        e = sym_ERR_get_error();
        if (e == 0)
                return "no error reported by libcrypto";

        sym_ERR_error_string_n(e, buf, size);
        sym_ERR_clear_error();
        return buf;
}

bool crypto_cipher_available(const char *name) {
        EVP_CIPHER *cipher;

        assert(name);

        cipher = sym_EVP_CIPHER_fetch(NULL, name, NULL);
        if (!cipher) {
                sym_ERR_clear_error();
                return false;
        }
        sym_EVP_CIPHER_free(cipher);
        return true;
}
