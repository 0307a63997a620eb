/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* libcrypto, loaded on first use. Every libcrypto function this project calls goes through a
 * sym_ pointer declared here; nothing links against libcrypto. */

#include "macro.h"

#if HAVE_NTS
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>

extern typeof(EVP_CIPHER_fetch) *sym_EVP_CIPHER_fetch;
extern typeof(EVP_CIPHER_free) *sym_EVP_CIPHER_free;
extern typeof(EVP_CIPHER_CTX_new) *sym_EVP_CIPHER_CTX_new;
extern typeof(EVP_CIPHER_CTX_free) *sym_EVP_CIPHER_CTX_free;
extern typeof(EVP_CIPHER_CTX_copy) *sym_EVP_CIPHER_CTX_copy;
extern typeof(EVP_CIPHER_CTX_ctrl) *sym_EVP_CIPHER_CTX_ctrl;
extern typeof(EVP_CIPHER_CTX_set_padding) *sym_EVP_CIPHER_CTX_set_padding;
extern typeof(EVP_EncryptInit_ex) *sym_EVP_EncryptInit_ex;
extern typeof(EVP_EncryptUpdate) *sym_EVP_EncryptUpdate;
extern typeof(EVP_EncryptFinal_ex) *sym_EVP_EncryptFinal_ex;
extern typeof(EVP_DecryptInit_ex) *sym_EVP_DecryptInit_ex;
extern typeof(EVP_DecryptUpdate) *sym_EVP_DecryptUpdate;
extern typeof(EVP_DecryptFinal_ex) *sym_EVP_DecryptFinal_ex;
extern typeof(EVP_MAC_fetch) *sym_EVP_MAC_fetch;
extern typeof(EVP_MAC_free) *sym_EVP_MAC_free;
extern typeof(EVP_MAC_CTX_new) *sym_EVP_MAC_CTX_new;
extern typeof(EVP_MAC_CTX_free) *sym_EVP_MAC_CTX_free;
extern typeof(EVP_MAC_CTX_dup) *sym_EVP_MAC_CTX_dup;
extern typeof(EVP_MAC_init) *sym_EVP_MAC_init;
extern typeof(EVP_MAC_update) *sym_EVP_MAC_update;
extern typeof(EVP_MAC_final) *sym_EVP_MAC_final;
extern typeof(OSSL_PARAM_construct_utf8_string) *sym_OSSL_PARAM_construct_utf8_string;
extern typeof(OSSL_PARAM_construct_end) *sym_OSSL_PARAM_construct_end;
extern typeof(CRYPTO_memcmp) *sym_CRYPTO_memcmp;
extern typeof(EVP_Digest) *sym_EVP_Digest;
extern typeof(EVP_sha256) *sym_EVP_sha256;
extern typeof(ERR_get_error) *sym_ERR_get_error;
extern typeof(ERR_peek_last_error) *sym_ERR_peek_last_error;
extern typeof(ERR_clear_error) *sym_ERR_clear_error;
extern typeof(ERR_error_string_n) *sym_ERR_error_string_n;
extern typeof(OpenSSL_version) *sym_OpenSSL_version;
extern typeof(OpenSSL_version_num) *sym_OpenSSL_version_num;

/* Loads libcrypto (LIBCRYPTO_SONAME) and every symbol above. Returns 0 or a negative errno,
 * logged at log_level with the missing library or symbol named. */
int dlopen_libcrypto(int log_level);

/* True when libcrypto has already been loaded into this process by us. */
bool libcrypto_loaded(void);

/* Whether the loaded libcrypto has the cipher of that name ("AES-128-CTR"); a failed lookup
 * leaves nothing in the error queue. libcrypto must be loaded. */
bool crypto_cipher_available(const char *name);

/* The last libcrypto error as text, for log messages; clears the error queue. */
const char *crypto_last_error(char *buf, size_t size);
#else
static inline int dlopen_libcrypto(int log_level) {
        return -EOPNOTSUPP;
}
static inline bool libcrypto_loaded(void) {
        return false;
}
#endif
