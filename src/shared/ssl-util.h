/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* libssl, loaded on first use, like crypto-util.h for libcrypto. The X509 helpers that TLS
 * needs live in libcrypto but are resolved here, through the libssl handle, since only TLS
 * code uses them. */

#include "macro.h"

#if HAVE_NTS
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

extern typeof(TLS_client_method) *sym_TLS_client_method;
extern typeof(TLS_server_method) *sym_TLS_server_method;
extern typeof(SSL_CTX_new) *sym_SSL_CTX_new;
extern typeof(SSL_CTX_free) *sym_SSL_CTX_free;
extern typeof(SSL_CTX_ctrl) *sym_SSL_CTX_ctrl;
extern typeof(SSL_CTX_set_options) *sym_SSL_CTX_set_options;
extern typeof(SSL_CTX_set_default_verify_paths) *sym_SSL_CTX_set_default_verify_paths;
extern typeof(SSL_CTX_load_verify_locations) *sym_SSL_CTX_load_verify_locations;
extern typeof(SSL_CTX_load_verify_dir) *sym_SSL_CTX_load_verify_dir;
extern typeof(SSL_CTX_set_verify) *sym_SSL_CTX_set_verify;
extern typeof(SSL_CTX_set_alpn_protos) *sym_SSL_CTX_set_alpn_protos;
extern typeof(SSL_CTX_set_alpn_select_cb) *sym_SSL_CTX_set_alpn_select_cb;
extern typeof(SSL_CTX_use_certificate_chain_file) *sym_SSL_CTX_use_certificate_chain_file;
extern typeof(SSL_CTX_use_PrivateKey_file) *sym_SSL_CTX_use_PrivateKey_file;
extern typeof(SSL_CTX_check_private_key) *sym_SSL_CTX_check_private_key;
extern typeof(SSL_CTX_get_cert_store) *sym_SSL_CTX_get_cert_store;
extern typeof(SSL_select_next_proto) *sym_SSL_select_next_proto;
extern typeof(SSL_new) *sym_SSL_new;
extern typeof(SSL_free) *sym_SSL_free;
extern typeof(SSL_ctrl) *sym_SSL_ctrl;
extern typeof(SSL_set_fd) *sym_SSL_set_fd;
extern typeof(SSL_get_error) *sym_SSL_get_error;
extern typeof(SSL_connect) *sym_SSL_connect;
extern typeof(SSL_accept) *sym_SSL_accept;
extern typeof(SSL_do_handshake) *sym_SSL_do_handshake;
extern typeof(SSL_read) *sym_SSL_read;
extern typeof(SSL_write) *sym_SSL_write;
extern typeof(SSL_shutdown) *sym_SSL_shutdown;
extern typeof(SSL_set_connect_state) *sym_SSL_set_connect_state;
extern typeof(SSL_set_accept_state) *sym_SSL_set_accept_state;
extern typeof(SSL_get0_param) *sym_SSL_get0_param;
extern typeof(SSL_set1_host) *sym_SSL_set1_host;
extern typeof(SSL_set_hostflags) *sym_SSL_set_hostflags;
extern typeof(SSL_get0_alpn_selected) *sym_SSL_get0_alpn_selected;
extern typeof(SSL_get_verify_result) *sym_SSL_get_verify_result;
extern typeof(SSL_export_keying_material) *sym_SSL_export_keying_material;
extern typeof(SSL_get_version) *sym_SSL_get_version;
extern typeof(SSL_get_current_cipher) *sym_SSL_get_current_cipher;
extern typeof(SSL_CIPHER_get_name) *sym_SSL_CIPHER_get_name;
extern typeof(SSL_get0_verified_chain) *sym_SSL_get0_verified_chain;
extern typeof(SSL_alert_desc_string_long) *sym_SSL_alert_desc_string_long;
extern typeof(SSL_set_info_callback) *sym_SSL_set_info_callback;
extern typeof(SSL_get_servername) *sym_SSL_get_servername;
extern typeof(SSL_set_ex_data) *sym_SSL_set_ex_data;
extern typeof(SSL_get_ex_data) *sym_SSL_get_ex_data;
extern typeof(SSL_get_ex_data_X509_STORE_CTX_idx) *sym_SSL_get_ex_data_X509_STORE_CTX_idx;
extern typeof(X509_free) *sym_X509_free;
extern typeof(X509_up_ref) *sym_X509_up_ref;
extern typeof(X509_get_ext_d2i) *sym_X509_get_ext_d2i;
extern typeof(X509_get_X509_PUBKEY) *sym_X509_get_X509_PUBKEY;
extern typeof(i2d_X509_PUBKEY) *sym_i2d_X509_PUBKEY;
extern typeof(GENERAL_NAMES_free) *sym_GENERAL_NAMES_free;
extern typeof(ASN1_STRING_get0_data) *sym_ASN1_STRING_get0_data;
extern typeof(ASN1_STRING_length) *sym_ASN1_STRING_length;
extern typeof(OPENSSL_sk_num) *sym_OPENSSL_sk_num;
extern typeof(OPENSSL_sk_value) *sym_OPENSSL_sk_value;
extern typeof(X509_STORE_CTX_get0_cert) *sym_X509_STORE_CTX_get0_cert;
extern typeof(X509_STORE_CTX_get_ex_data) *sym_X509_STORE_CTX_get_ex_data;
extern typeof(X509_STORE_get0_objects) *sym_X509_STORE_get0_objects;
extern typeof(X509_OBJECT_get_type) *sym_X509_OBJECT_get_type;
extern typeof(X509_get_subject_name) *sym_X509_get_subject_name;
extern typeof(X509_get_issuer_name) *sym_X509_get_issuer_name;
extern typeof(X509_NAME_oneline) *sym_X509_NAME_oneline;
extern typeof(X509_get0_notBefore) *sym_X509_get0_notBefore;
extern typeof(X509_get0_notAfter) *sym_X509_get0_notAfter;
extern typeof(X509_verify_cert_error_string) *sym_X509_verify_cert_error_string;
extern typeof(X509_get_default_cert_dir) *sym_X509_get_default_cert_dir;
extern typeof(X509_get_default_cert_dir_env) *sym_X509_get_default_cert_dir_env;
extern typeof(X509_get_default_cert_file) *sym_X509_get_default_cert_file;
extern typeof(X509_get_default_cert_file_env) *sym_X509_get_default_cert_file_env;
extern typeof(X509_VERIFY_PARAM_set1_ip_asc) *sym_X509_VERIFY_PARAM_set1_ip_asc;
extern typeof(X509_VERIFY_PARAM_set_time) *sym_X509_VERIFY_PARAM_set_time;
extern typeof(X509_VERIFY_PARAM_set_flags) *sym_X509_VERIFY_PARAM_set_flags;
extern typeof(X509_VERIFY_PARAM_set1_host) *sym_X509_VERIFY_PARAM_set1_host;
extern typeof(X509_STORE_set_flags) *sym_X509_STORE_set_flags;
extern typeof(ASN1_TIME_to_tm) *sym_ASN1_TIME_to_tm;
extern typeof(ERR_reason_error_string) *sym_ERR_reason_error_string;
extern typeof(ERR_peek_last_error_all) *sym_ERR_peek_last_error_all;

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
