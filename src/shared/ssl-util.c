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
typeof(SSL_CTX_set_options) *sym_SSL_CTX_set_options;
typeof(SSL_CTX_set_default_verify_paths) *sym_SSL_CTX_set_default_verify_paths;
typeof(SSL_CTX_load_verify_locations) *sym_SSL_CTX_load_verify_locations;
typeof(SSL_CTX_load_verify_dir) *sym_SSL_CTX_load_verify_dir;
typeof(SSL_CTX_set_verify) *sym_SSL_CTX_set_verify;
typeof(SSL_CTX_set_alpn_protos) *sym_SSL_CTX_set_alpn_protos;
typeof(SSL_CTX_set_alpn_select_cb) *sym_SSL_CTX_set_alpn_select_cb;
typeof(SSL_CTX_use_certificate_chain_file) *sym_SSL_CTX_use_certificate_chain_file;
typeof(SSL_CTX_use_PrivateKey_file) *sym_SSL_CTX_use_PrivateKey_file;
typeof(SSL_CTX_check_private_key) *sym_SSL_CTX_check_private_key;
typeof(SSL_CTX_get_cert_store) *sym_SSL_CTX_get_cert_store;
typeof(SSL_select_next_proto) *sym_SSL_select_next_proto;
typeof(SSL_new) *sym_SSL_new;
typeof(SSL_free) *sym_SSL_free;
typeof(SSL_ctrl) *sym_SSL_ctrl;
typeof(SSL_set_fd) *sym_SSL_set_fd;
typeof(SSL_get_error) *sym_SSL_get_error;
typeof(SSL_connect) *sym_SSL_connect;
typeof(SSL_accept) *sym_SSL_accept;
typeof(SSL_do_handshake) *sym_SSL_do_handshake;
typeof(SSL_read) *sym_SSL_read;
typeof(SSL_write) *sym_SSL_write;
typeof(SSL_shutdown) *sym_SSL_shutdown;
typeof(SSL_set_connect_state) *sym_SSL_set_connect_state;
typeof(SSL_set_accept_state) *sym_SSL_set_accept_state;
typeof(SSL_get0_param) *sym_SSL_get0_param;
typeof(SSL_set1_host) *sym_SSL_set1_host;
typeof(SSL_set_hostflags) *sym_SSL_set_hostflags;
typeof(SSL_get0_alpn_selected) *sym_SSL_get0_alpn_selected;
typeof(SSL_get_verify_result) *sym_SSL_get_verify_result;
typeof(SSL_export_keying_material) *sym_SSL_export_keying_material;
typeof(SSL_get_version) *sym_SSL_get_version;
typeof(SSL_get_current_cipher) *sym_SSL_get_current_cipher;
typeof(SSL_CIPHER_get_name) *sym_SSL_CIPHER_get_name;
typeof(SSL_get0_verified_chain) *sym_SSL_get0_verified_chain;
typeof(SSL_alert_desc_string_long) *sym_SSL_alert_desc_string_long;
typeof(SSL_set_info_callback) *sym_SSL_set_info_callback;
typeof(SSL_get_servername) *sym_SSL_get_servername;
typeof(SSL_set_ex_data) *sym_SSL_set_ex_data;
typeof(SSL_get_ex_data) *sym_SSL_get_ex_data;
typeof(SSL_get_ex_data_X509_STORE_CTX_idx) *sym_SSL_get_ex_data_X509_STORE_CTX_idx;
typeof(X509_free) *sym_X509_free;
typeof(X509_up_ref) *sym_X509_up_ref;
typeof(X509_get_ext_d2i) *sym_X509_get_ext_d2i;
typeof(X509_get_X509_PUBKEY) *sym_X509_get_X509_PUBKEY;
typeof(i2d_X509_PUBKEY) *sym_i2d_X509_PUBKEY;
typeof(GENERAL_NAMES_free) *sym_GENERAL_NAMES_free;
typeof(ASN1_STRING_get0_data) *sym_ASN1_STRING_get0_data;
typeof(ASN1_STRING_length) *sym_ASN1_STRING_length;
typeof(OPENSSL_sk_num) *sym_OPENSSL_sk_num;
typeof(OPENSSL_sk_value) *sym_OPENSSL_sk_value;
typeof(X509_STORE_CTX_get0_cert) *sym_X509_STORE_CTX_get0_cert;
typeof(X509_STORE_CTX_get_ex_data) *sym_X509_STORE_CTX_get_ex_data;
typeof(X509_STORE_get0_objects) *sym_X509_STORE_get0_objects;
typeof(X509_OBJECT_get_type) *sym_X509_OBJECT_get_type;
typeof(X509_get_subject_name) *sym_X509_get_subject_name;
typeof(X509_get_issuer_name) *sym_X509_get_issuer_name;
typeof(X509_NAME_oneline) *sym_X509_NAME_oneline;
typeof(X509_get0_notBefore) *sym_X509_get0_notBefore;
typeof(X509_get0_notAfter) *sym_X509_get0_notAfter;
typeof(X509_verify_cert_error_string) *sym_X509_verify_cert_error_string;
typeof(X509_get_default_cert_dir) *sym_X509_get_default_cert_dir;
typeof(X509_get_default_cert_dir_env) *sym_X509_get_default_cert_dir_env;
typeof(X509_get_default_cert_file) *sym_X509_get_default_cert_file;
typeof(X509_get_default_cert_file_env) *sym_X509_get_default_cert_file_env;
typeof(X509_VERIFY_PARAM_set1_ip_asc) *sym_X509_VERIFY_PARAM_set1_ip_asc;
typeof(X509_VERIFY_PARAM_set_time) *sym_X509_VERIFY_PARAM_set_time;
typeof(X509_VERIFY_PARAM_set_flags) *sym_X509_VERIFY_PARAM_set_flags;
typeof(X509_VERIFY_PARAM_set1_host) *sym_X509_VERIFY_PARAM_set1_host;
typeof(X509_STORE_set_flags) *sym_X509_STORE_set_flags;
typeof(ASN1_TIME_to_tm) *sym_ASN1_TIME_to_tm;
typeof(ERR_reason_error_string) *sym_ERR_reason_error_string;
typeof(ERR_peek_last_error_all) *sym_ERR_peek_last_error_all;

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
                        DLSYM_ARG(SSL_CTX_set_options),
                        DLSYM_ARG(SSL_CTX_set_default_verify_paths),
                        DLSYM_ARG(SSL_CTX_load_verify_locations),
                        DLSYM_ARG(SSL_CTX_load_verify_dir),
                        DLSYM_ARG(SSL_CTX_set_verify),
                        DLSYM_ARG(SSL_CTX_set_alpn_protos),
                        DLSYM_ARG(SSL_CTX_set_alpn_select_cb),
                        DLSYM_ARG(SSL_CTX_use_certificate_chain_file),
                        DLSYM_ARG(SSL_CTX_use_PrivateKey_file),
                        DLSYM_ARG(SSL_CTX_check_private_key),
                        DLSYM_ARG(SSL_CTX_get_cert_store),
                        DLSYM_ARG(SSL_select_next_proto),
                        DLSYM_ARG(SSL_new),
                        DLSYM_ARG(SSL_free),
                        DLSYM_ARG(SSL_ctrl),
                        DLSYM_ARG(SSL_set_fd),
                        DLSYM_ARG(SSL_get_error),
                        DLSYM_ARG(SSL_connect),
                        DLSYM_ARG(SSL_accept),
                        DLSYM_ARG(SSL_do_handshake),
                        DLSYM_ARG(SSL_read),
                        DLSYM_ARG(SSL_write),
                        DLSYM_ARG(SSL_shutdown),
                        DLSYM_ARG(SSL_set_connect_state),
                        DLSYM_ARG(SSL_set_accept_state),
                        DLSYM_ARG(SSL_get0_param),
                        DLSYM_ARG(SSL_set1_host),
                        DLSYM_ARG(SSL_set_hostflags),
                        DLSYM_ARG(SSL_get0_alpn_selected),
                        DLSYM_ARG(SSL_get_verify_result),
                        DLSYM_ARG(SSL_export_keying_material),
                        DLSYM_ARG(SSL_get_version),
                        DLSYM_ARG(SSL_get_current_cipher),
                        DLSYM_ARG(SSL_CIPHER_get_name),
                        DLSYM_ARG(SSL_get0_verified_chain),
                        DLSYM_ARG(SSL_alert_desc_string_long),
                        DLSYM_ARG(SSL_set_info_callback),
                        DLSYM_ARG(SSL_get_servername),
                        DLSYM_ARG(SSL_set_ex_data),
                        DLSYM_ARG(SSL_get_ex_data),
                        DLSYM_ARG(SSL_get_ex_data_X509_STORE_CTX_idx),
                        DLSYM_ARG(X509_free),
                        DLSYM_ARG(X509_up_ref),
                        DLSYM_ARG(X509_get_ext_d2i),
                        DLSYM_ARG(X509_get_X509_PUBKEY),
                        DLSYM_ARG(i2d_X509_PUBKEY),
                        DLSYM_ARG(GENERAL_NAMES_free),
                        DLSYM_ARG(ASN1_STRING_get0_data),
                        DLSYM_ARG(ASN1_STRING_length),
                        DLSYM_ARG(OPENSSL_sk_num),
                        DLSYM_ARG(OPENSSL_sk_value),
                        DLSYM_ARG(X509_STORE_CTX_get0_cert),
                        DLSYM_ARG(X509_STORE_CTX_get_ex_data),
                        DLSYM_ARG(X509_STORE_get0_objects),
                        DLSYM_ARG(X509_OBJECT_get_type),
                        DLSYM_ARG(X509_get_subject_name),
                        DLSYM_ARG(X509_get_issuer_name),
                        DLSYM_ARG(X509_NAME_oneline),
                        DLSYM_ARG(X509_get0_notBefore),
                        DLSYM_ARG(X509_get0_notAfter),
                        DLSYM_ARG(X509_verify_cert_error_string),
                        DLSYM_ARG(X509_get_default_cert_dir),
                        DLSYM_ARG(X509_get_default_cert_dir_env),
                        DLSYM_ARG(X509_get_default_cert_file),
                        DLSYM_ARG(X509_get_default_cert_file_env),
                        DLSYM_ARG(X509_VERIFY_PARAM_set1_ip_asc),
                        DLSYM_ARG(X509_VERIFY_PARAM_set_time),
                        DLSYM_ARG(X509_VERIFY_PARAM_set_flags),
                        DLSYM_ARG(X509_VERIFY_PARAM_set1_host),
                        DLSYM_ARG(X509_STORE_set_flags),
                        DLSYM_ARG(ASN1_TIME_to_tm),
                        DLSYM_ARG(ERR_reason_error_string),
                        DLSYM_ARG(ERR_peek_last_error_all));
        return r < 0 ? r : 0;
}

bool libssl_loaded(void) {
        return libssl_dl;
}
