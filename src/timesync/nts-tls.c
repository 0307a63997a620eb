/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "crypto-util.h"
#include "fileio.h"
#include "hostname-util.h"
#include "in-addr-util.h"
#include "log.h"
#include "nts-crypto.h"
#include "nts-tls.h"
#include "sigpipe-util.h"
#include "ssl-util.h"
#include "unaligned.h"

/* RFC 8915 section 4: the ALPN protocol list as it goes on the wire (length-prefixed). */
static const uint8_t alpn_ntske[] = { sizeof(NTS_KE_ALPN) - 1, 'n', 't', 's', 'k', 'e', '/', '1' };
assert_cc(sizeof(alpn_ntske) == sizeof(NTS_KE_ALPN));

struct NTS_TLS {
        SSL_CTX *ctx;
        SSL *ssl;
        X509 *leaf;             /* the server's certificate as the verifier saw it, one reference */
        uint32_t events;
        bool handshake_done;
        int alert;              /* last fatal alert the peer sent, -1 if none */
        time_t verify_time;     /* certificates are checked at this time; 0: now */
        char hostname[HOSTNAME_MAX + 1]; /* the name or address the certificate must be for */
        char error[256];
};

/* OpenSSL's error queue is per thread and shared with every other user of libcrypto in the
 * process. SSL_get_error() is only reliable on an empty queue, and whatever a call leaves
 * behind would be misread by the next user, so every entry point empties it on the way in and
 * on the way out. */
static void error_queue_clear(const NTS_TLS **t) {
        sym_ERR_clear_error();
}
#define ERROR_QUEUE_SCOPE(t)                                                                   \
        _cleanup_(error_queue_clear) _unused_ const NTS_TLS *UNIQ_T(scope, UNIQ) =             \
                (sym_ERR_clear_error(), (t))

_printf_(3, 4) static int tls_fail(NTS_TLS *t, int r, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(t->error, sizeof(t->error), format, ap);
        va_end(ap);
        return r;
}

static int asn1_time_to_time_t(const ASN1_TIME *a, time_t *ret);
static void cert_sans(X509 *cert, char *buf, size_t size);

/* "2021-01-01 00:00 UTC" when the date is past (past true) or still to come (false) at the
 * time the verifier checked, else "". */
static const char *format_cert_date(const NTS_TLS *t, const ASN1_TIME *a, bool past, char buf[static 32]) {
        time_t x, at = t->verify_time != 0 ? t->verify_time : time(NULL);
        struct tm tm;

        buf[0] = 0;
        if (asn1_time_to_time_t(a, &x) >= 0 && (past ? x < at : x > at) && gmtime_r(&x, &tm))
                (void) strftime(buf, 32, "%Y-%m-%d %H:%M UTC", &tm);
        return buf;
}

/* Why the verifier refused the server's certificate, in words that say what to do. OpenSSL's
 * own strings describe its search, not the cause: "self-signed certificate in certificate
 * chain" is what a chain whose root we do not trust reads as, and "certificate has expired"
 * gives no date. Those two and their kin get a sentence of ours (the issuer, the setting that
 * decides the trust, the date); every other error keeps OpenSSL's string. */
static const char *tls_verify_error(const NTS_TLS *t, long verify, char *buf, size_t size) {
        char name[128] = "", date[32];
        size_t room;

        switch (verify) {
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
        case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
                if (t->leaf)
                        (void) sym_X509_NAME_oneline(sym_X509_get_issuer_name(t->leaf), name, sizeof(name));
                (void) snprintf(buf, size, "its issuer %s is not a trusted CA (the trusted CAs are set by "
                                "NTSTrustedCertificates=, for nts-query by --ca=)",
                                isempty(name) ? "(unknown)" : name);
                return buf;
        case X509_V_ERR_CERT_HAS_EXPIRED:
                /* The leaf's date when it is the one that expired; else a CA's of the chain. */
                if (t->leaf && !isempty(format_cert_date(t, sym_X509_get0_notAfter(t->leaf), true, date)))
                        (void) snprintf(buf, size, "certificate has expired: valid until %s", date);
                else
                        (void) snprintf(buf, size, "certificate has expired: a CA certificate of its chain");
                return buf;
        case X509_V_ERR_CERT_NOT_YET_VALID:
                if (t->leaf && !isempty(format_cert_date(t, sym_X509_get0_notBefore(t->leaf), false, date)))
                        (void) snprintf(buf, size, "certificate is not yet valid: valid from %s", date);
                else
                        (void) snprintf(buf, size, "certificate is not yet valid: a CA certificate of its chain");
                return buf;
        case X509_V_ERR_HOSTNAME_MISMATCH:
        case X509_V_ERR_IP_ADDRESS_MISMATCH:
                /* Which names it is for, as many as fit beside the name asked for and the words
                 * around them (the caller puts about 50 bytes before), so that the operator can
                 * pick one. */
                if (!t->leaf)
                        return sym_X509_verify_cert_error_string(verify);
                room = size > 110 + strlen(t->hostname) ? size - 110 - strlen(t->hostname) : 0;
                cert_sans(t->leaf, name, CLAMP(room, (size_t) 32, sizeof(name)));
                if (isempty(name)) {
                        (void) sym_X509_NAME_oneline(sym_X509_get_subject_name(t->leaf), name, sizeof(name));
                        (void) snprintf(buf, size, "%s: the certificate has no alternative names (subject %s), and "
                                        "is not for %s", sym_X509_verify_cert_error_string(verify), name, t->hostname);
                } else
                        (void) snprintf(buf, size, "%s: the certificate is for %s, not for %s",
                                        sym_X509_verify_cert_error_string(verify), name, t->hostname);
                return buf;
        default:
                return sym_X509_verify_cert_error_string(verify);
        }
}

/* Turns the result of an SSL_*() call that returned ret <= 0 into -EAGAIN, 0 (orderly close)
 * or a negative errno with t->error explaining it. */
static int tls_result(NTS_TLS *t, int ret, const char *op) {
        int saved_errno = errno;
        const char *func = NULL;
        unsigned long e;
        long verify;

        switch (sym_SSL_get_error(t->ssl, ret)) {
        case SSL_ERROR_WANT_READ:
                t->events = EPOLLIN;
                return -EAGAIN;
        case SSL_ERROR_WANT_WRITE:
                t->events = EPOLLOUT;
                return -EAGAIN;
        case SSL_ERROR_ZERO_RETURN:
                return 0;
        case SSL_ERROR_SYSCALL:
                if (saved_errno != 0)
                        return tls_fail(t, -saved_errno, "%s: %s", op, strerror(saved_errno));
                return tls_fail(t, -ECONNRESET, "%s: connection closed by peer", op);
        case SSL_ERROR_SSL:
                verify = sym_SSL_get_verify_result(t->ssl);
                if (!t->handshake_done && verify != X509_V_OK) {
                        char why[sizeof(t->error)];

                        return tls_fail(t, -EKEYREJECTED, "%s: certificate verification failed: %s",
                                        op, tls_verify_error(t, verify, why, sizeof(why)));
                }
                if (t->alert >= 0)
                        return tls_fail(t, -EPROTO, "%s: peer sent TLS alert: %s", op,
                                        sym_SSL_alert_desc_string_long(t->alert));
                /* The libssl function that failed tells which part of the handshake a bare
                 * reason such as "bad extension" is about. */
                e = sym_ERR_peek_last_error_all(NULL, NULL, &func, NULL, NULL);
                if (e == 0)
                        return tls_fail(t, -EPROTO, "%s: TLS protocol error", op);
                if (isempty(func))
                        return tls_fail(t, -EPROTO, "%s: %s", op, strna(sym_ERR_reason_error_string(e)));
                return tls_fail(t, -EPROTO, "%s: %s (in %s)", op, strna(sym_ERR_reason_error_string(e)), func);
        default:
                return tls_fail(t, -EIO, "%s: unexpected libssl error", op);
        }
}

static void tls_info_callback(const SSL *ssl, int where, int value) {
        NTS_TLS *t;

        /* value is level << 8 | description (RFC 8446 section 6) */
        if ((where & SSL_CB_READ_ALERT) != SSL_CB_READ_ALERT || (value >> 8) != SSL3_AL_FATAL)
                return;

        t = sym_SSL_get_ex_data(ssl, 0);
        if (t)
                t->alert = value;
}

/* libssl keeps the server's certificate only once it verified; this keeps it also when it did
 * not, so that an operator can see what was refused (NTS_tls_info()). It never changes the
 * verifier's decision. */
static int tls_verify_callback(int preverify_ok, X509_STORE_CTX *store) {
        SSL *ssl = sym_X509_STORE_CTX_get_ex_data(store, sym_SSL_get_ex_data_X509_STORE_CTX_idx());
        NTS_TLS *t = ssl ? sym_SSL_get_ex_data(ssl, 0) : NULL;
        X509 *leaf = sym_X509_STORE_CTX_get0_cert(store);

        if (t && !t->leaf && leaf && sym_X509_up_ref(leaf) == 1)
                t->leaf = leaf;
        return preverify_ok;
}

/* Whether a directory holds a certificate under its subject-hash name ("1a2b3c4d.0"), the
 * only names OpenSSL's directory lookup opens: 1 or 0, or -errno if it cannot be read. */
static bool cert_hash_name(const char *name) {
        return strspn(name, "0123456789abcdef") == 8 && name[8] == '.' && name[9] &&
               strspn(name + 9, "0123456789") == strlen(name + 9);
}

static int cert_dir_has_hash_links(const char *path) {
        _cleanup_(closedirp) DIR *dir = opendir(path);
        struct dirent *de;

        if (!dir)
                return -errno;

        while ((de = readdir(dir)))
                if (cert_hash_name(de->d_name))
                        return 1;
        return 0;
}

/* The same for any directory of a colon-separated list. */
static bool cert_dirs_have_hash_links(const char *dirs) {
        _cleanup_free_ char *copy = strdup(dirs);
        char *saveptr = NULL;

        if (!copy)
                return false;

        for (char *d = strtok_r(copy, ":", &saveptr); d; d = strtok_r(NULL, ":", &saveptr))
                if (cert_dir_has_hash_links(d) > 0)
                        return true;
        return false;
}

/* The system's trust store. OpenSSL's default verify paths parse the whole bundle file
 * (Debian: ca-certificates.crt, ~140 certificates) for every new context, that is for every
 * key exchange: measured 55 ms of CPU per exchange instead of 3 ms, and ~950 KiB more heap
 * afterwards (bench/: bench-ke, bench-memory-stages).
 * The hashed directory (/etc/ssl/certs) holds the same certificates and is read on demand,
 * one file per issuer looked up. The bundle stays in use where SSL_CERT_FILE names one, or
 * where the directory has no hash links (a system without c_rehash output). */
static int tls_ctx_load_system_store(SSL_CTX *ctx) {
        const char *dirs;

        if (!getenv(sym_X509_get_default_cert_file_env())) {
                dirs = getenv(sym_X509_get_default_cert_dir_env()) ?: sym_X509_get_default_cert_dir();
                if (cert_dirs_have_hash_links(dirs))
                        return sym_SSL_CTX_load_verify_dir(ctx, dirs) == 1 ? 0 : -EIO;
        }
        return sym_SSL_CTX_set_default_verify_paths(ctx) == 1 ? 0 : -EIO;
}

/* ---- what a context trusts, as one digest ---- */

/* Bigger than any CA bundle (Debian's is ~220 KiB). */
#define TRUST_FILE_MAX (16U * 1024U * 1024U)

/* Appends "TAG PATH ERROR\n" to f and, when the file could be read (ERROR 0), the SHA-256 of
 * its bytes: a file that cannot be read is part of what is trusted (nothing), not a failure. */
static void trust_add_file(FILE *f, const char *tag, const char *path) {
        _cleanup_free_ char *data = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint8_t md[32];
        unsigned len = 0;
        size_t n = 0;
        int r;

        /* O_NONBLOCK: a FIFO in its place is read as empty, never waited on. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        r = fd < 0 ? -errno : read_full_fd(fd, TRUST_FILE_MAX, &data, &n);
        if (r >= 0 && (sym_EVP_Digest(data, n, md, &len, sym_EVP_sha256(), NULL) != 1 || len != sizeof md))
                r = -EIO;
        fprintf(f, "%s %s %d\n", tag, path, r < 0 ? r : 0);
        if (r >= 0)
                fwrite(md, 1, sizeof md, f);
}

/* Byte order, not the locale's collation: the same directory gives the same digest everywhere. */
static int compare_names(const struct dirent **a, const struct dirent **b) {
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int filter_hash_name(const struct dirent *de) {
        return cert_hash_name(de->d_name);
}

/* The certificates of a directory that OpenSSL's lookup can open: those under subject-hash
 * names, by name, each with its bytes. */
static void trust_add_dir(FILE *f, const char *tag, const char *dir) {
        struct dirent **list = NULL;
        int n;

        n = scandir(dir, &list, filter_hash_name, compare_names);
        fprintf(f, "%s %s %d\n", tag, dir, n < 0 ? -errno : n);
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *p = NULL;

                if (asprintf(&p, "%s/%s", dir, list[i]->d_name) >= 0)
                        trust_add_file(f, "cert", p);
                else
                        fputs("cert (no memory)\n", f);
                free(list[i]);
        }
        free(list);
}

static void trust_add_dirs(FILE *f, const char *tag, const char *dirs) {
        _cleanup_free_ char *copy = strdup(dirs);
        char *saveptr = NULL;

        if (!copy) {
                fputs("dirs (no memory)\n", f);
                return;
        }
        for (char *d = strtok_r(copy, ":", &saveptr); d; d = strtok_r(NULL, ":", &saveptr))
                trust_add_dir(f, tag, d);
}

/* What tls_ctx_load_system_store() loads. */
static void trust_add_system_store(FILE *f) {
        const char *file = getenv(sym_X509_get_default_cert_file_env());
        const char *dirs = getenv(sym_X509_get_default_cert_dir_env()) ?: sym_X509_get_default_cert_dir();

        if (!file && cert_dirs_have_hash_links(dirs)) {
                trust_add_dirs(f, "system-dir", dirs);
                return;
        }
        trust_add_file(f, "system-file", file ?: sym_X509_get_default_cert_file());
        trust_add_dirs(f, "system-dir", dirs);
}

int NTS_tls_trust_sha256(const NTS_TLSOptions *o, uint8_t ret[static 32]) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        unsigned len = 0;
        FILE *f;
        int r;

        assert(o);
        assert(ret);

        r = dlopen_libssl(LOG_DEBUG);
        if (r < 0)
                return r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        if (o->ca_file)
                trust_add_file(f, "ca-file", o->ca_file);
        if (o->ca_dir)
                trust_add_dir(f, "ca-dir", o->ca_dir);
        if (!o->ca_file && !o->ca_dir)
                trust_add_system_store(f);
        /* A memstream that could not grow drops writes: that digest would be of less than what
         * is trusted. */
        if (fflush(f) != 0 || ferror(f)) {
                fclose(f);
                return -ENOMEM;
        }
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;

        if (sym_EVP_Digest(buf, size, ret, &len, sym_EVP_sha256(), NULL) != 1 || len != 32)
                return -EIO;
        return 0;
}

/* Why NTS_tls_new() failed: for the caller's message, and at debug level here. */
_printf_(4, 5) static int setup_fail(int r, char *error, size_t error_size, const char *format, ...) {
        char buf[256];
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);
        log_debug("TLS setup failed: %s", buf);
        if (error_size > 0)
                (void) snprintf(error, error_size, "%s", buf);
        return r;
}

static bool store_has_certificate(X509_STORE *store) {
        const STACK_OF(X509_OBJECT) *objects = sym_X509_STORE_get0_objects(store);
        int n = objects ? sym_OPENSSL_sk_num((const OPENSSL_STACK *) objects) : 0;

        for (int i = 0; i < n; i++)
                if (sym_X509_OBJECT_get_type(sym_OPENSSL_sk_value((const OPENSSL_STACK *) objects, i)) == X509_LU_X509)
                        return true;
        return false;
}

DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(SSL_CTX *, sym_SSL_CTX_free);

/* A file of trusted CAs that holds no certificate (empty, garbage, a key, CRLs only) would
 * only show later as "unable to get local issuer certificate" for every server: say what is
 * wrong with the file instead. */
static int tls_ctx_load_ca_file(SSL_CTX *ctx, const char *path, char *error, size_t error_size) {
        _cleanup_close_ int fd = -EBADF;
        unsigned long e, first = 0;
        bool none = false;

        /* libssl's own words for an unreadable file are about its BIO layer. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return setup_fail(-errno, error, error_size, "CA file %s cannot be read: %s", path, strerror(errno));

        if (sym_SSL_CTX_load_verify_locations(ctx, path, NULL) != 1) {
                while ((e = sym_ERR_get_error()) != 0) {
                        none = none || (ERR_GET_LIB(e) == ERR_LIB_X509 &&
                                        ERR_GET_REASON(e) == X509_R_NO_CERTIFICATE_OR_CRL_FOUND);
                        first = first ?: e;
                }
                if (none)
                        return setup_fail(-ENODATA, error, error_size, "CA file %s contains no certificate", path);
                return setup_fail(-EBADMSG, error, error_size, "CA file %s is not a PEM certificate file: %s", path,
                                  strna(sym_ERR_reason_error_string(first)));
        }

        if (!store_has_certificate(sym_SSL_CTX_get_cert_store(ctx)))
                return setup_fail(-ENODATA, error, error_size, "CA file %s contains no certificate", path);
        return 0;
}

/* OpenSSL reads a CA directory only while it verifies, and then looks for subject-hash names
 * alone: a directory without them trusts nothing, silently. */
static int tls_ctx_load_ca_dir(SSL_CTX *ctx, const char *path, char *error, size_t error_size) {
        char buf[256];
        int r;

        r = cert_dir_has_hash_links(path);
        if (r < 0)
                return setup_fail(r, error, error_size, "CA directory %s cannot be read: %s", path, strerror(-r));
        if (r == 0)
                return setup_fail(-ENODATA, error, error_size,
                                  "CA directory %s contains no certificate under a subject-hash name (see openssl rehash)",
                                  path);

        if (sym_SSL_CTX_load_verify_dir(ctx, path) != 1)
                return setup_fail(-EIO, error, error_size, "CA directory %s cannot be used: %s", path,
                                  crypto_last_error(buf, sizeof(buf)));
        return 0;
}

static int tls_ctx_new(const NTS_TLSOptions *o, SSL_CTX **ret, char *error, size_t error_size) {
        _cleanup_(sym_SSL_CTX_freep) SSL_CTX *ctx = NULL;
        char buf[256];
        int r;

        ctx = sym_SSL_CTX_new(sym_TLS_client_method());
        if (!ctx)
                return setup_fail(-ENOMEM, error, error_size, "Failed to create TLS context: %s",
                                  crypto_last_error(buf, sizeof(buf)));

        /* RFC 8915 section 3: TLS 1.2 or older must not be negotiated. */
        if (sym_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_3_VERSION, NULL) != 1 ||
            sym_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, TLS1_3_VERSION, NULL) != 1)
                return setup_fail(-EOPNOTSUPP, error, error_size, "libssl cannot restrict the protocol to TLS 1.3: %s",
                                  crypto_last_error(buf, sizeof(buf)));

        sym_SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, tls_verify_callback);

        if (o->ca_file || o->ca_dir) {
                r = o->ca_file ? tls_ctx_load_ca_file(ctx, o->ca_file, error, error_size) : 0;
                if (r >= 0 && o->ca_dir)
                        r = tls_ctx_load_ca_dir(ctx, o->ca_dir, error, error_size);
                if (r < 0)
                        return r;
        } else if (tls_ctx_load_system_store(ctx) < 0)
                return setup_fail(-EIO, error, error_size, "Failed to load the system's trusted CA certificates: %s",
                                  crypto_last_error(buf, sizeof(buf)));

        /* Unlike every other SSL_CTX setter, this one returns 0 on success. */
        if (sym_SSL_CTX_set_alpn_protos(ctx, alpn_ntske, sizeof(alpn_ntske)) != 0)
                return setup_fail(-ENOMEM, error, error_size, "Failed to set ALPN protocol: %s",
                                  crypto_last_error(buf, sizeof(buf)));

        *ret = TAKE_PTR(ctx);
        return 0;
}

static int tls_ssl_setup(NTS_TLS *t, int fd, const NTS_TLSOptions *o, char *error, size_t error_size) {
        X509_VERIFY_PARAM *param;
        char buf[256];

        t->ssl = sym_SSL_new(t->ctx);
        if (!t->ssl)
                return setup_fail(-ENOMEM, error, error_size, "Failed to create TLS session: %s",
                                  crypto_last_error(buf, sizeof(buf)));

        if (sym_SSL_set_ex_data(t->ssl, 0, t) != 1 || sym_SSL_set_fd(t->ssl, fd) != 1)
                return setup_fail(-ENOMEM, error, error_size, "Failed to set up TLS session: %s",
                                  crypto_last_error(buf, sizeof(buf)));
        sym_SSL_set_info_callback(t->ssl, tls_info_callback);
        sym_SSL_set_connect_state(t->ssl);

        param = sym_SSL_get0_param(t->ssl);
        (void) snprintf(t->hostname, sizeof(t->hostname), "%s", o->hostname);

        if (in_addr_from_string_auto(o->hostname, NULL, NULL) >= 0) {
                /* No SNI: RFC 6066 section 3 forbids IP literals there, and some servers (chrony)
                 * drop the connection when they see one. */
                if (sym_X509_VERIFY_PARAM_set1_ip_asc(param, o->hostname) != 1)
                        return setup_fail(-EINVAL, error, error_size, "Failed to set IP address %s to verify: %s",
                                          o->hostname, crypto_last_error(buf, sizeof(buf)));
        } else {
                if (sym_SSL_ctrl(t->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                                 (void *) o->hostname) != 1)
                        return setup_fail(-EINVAL, error, error_size, "Invalid server name for SNI '%s': %s",
                                          o->hostname, crypto_last_error(buf, sizeof(buf)));

                sym_SSL_set_hostflags(t->ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
                if (sym_SSL_set1_host(t->ssl, o->hostname) != 1)
                        return setup_fail(-EINVAL, error, error_size, "Failed to set host name %s to verify: %s",
                                          o->hostname, crypto_last_error(buf, sizeof(buf)));
        }

        if (o->no_verify_time) {
                if (sym_X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_NO_CHECK_TIME) != 1)
                        return setup_fail(-EIO, error, error_size, "Failed to disable certificate time checks: %s",
                                          crypto_last_error(buf, sizeof(buf)));
        } else if (o->verify_time != 0) {
                sym_X509_VERIFY_PARAM_set_time(param, o->verify_time);
                t->verify_time = o->verify_time;
        }

        return 0;
}

int NTS_tls_new(int fd, const NTS_TLSOptions *o, NTS_TLS **ret, char *error, size_t error_size) {
        NTS_TLS *t;
        int r;

        assert(fd >= 0);
        assert(o);
        assert(ret);
        assert(error || error_size == 0);

        if (error_size > 0)
                error[0] = 0;
        if (isempty(o->hostname))
                return setup_fail(-EINVAL, error, error_size, "no server name to verify");

        r = dlopen_libssl(LOG_DEBUG);
        if (r < 0)
                return setup_fail(r, error, error_size, "libssl cannot be loaded: %s", strerror(-r));

        ERROR_QUEUE_SCOPE(NULL);

        t = calloc(1, sizeof(NTS_TLS));
        if (!t)
                return -ENOMEM;
        t->alert = -1;

        r = tls_ctx_new(o, &t->ctx, error, error_size);
        if (r >= 0)
                r = tls_ssl_setup(t, fd, o, error, error_size);
        if (r < 0) {
                NTS_tls_free(t);
                return r;
        }

        *ret = t;
        return 0;
}

NTS_TLS *NTS_tls_free(NTS_TLS *t) {
        if (!t)
                return NULL;

        sym_X509_free(t->leaf);
        sym_SSL_free(t->ssl);
        sym_SSL_CTX_free(t->ctx);
        sym_ERR_clear_error();
        return mfree(t);
}

static bool alpn_printable(const uint8_t *p, unsigned len) {
        for (unsigned i = 0; i < len; i++)
                if (p[i] < 0x20 || p[i] > 0x7e)
                        return false;
        return true;
}

int NTS_tls_handshake(NTS_TLS *t) {
        const unsigned char *alpn = NULL;
        unsigned alpn_len = 0;
        long verify;
        int r;

        assert(t);

        if (t->handshake_done)
                return 0;

        ERROR_QUEUE_SCOPE(t);
        SIGPIPE_BLOCK_SCOPE;
        t->error[0] = 0;

        r = sym_SSL_connect(t->ssl);
        if (r <= 0) {
                r = tls_result(t, r, "TLS handshake");
                /* A close during the handshake is a failure, never an orderly end. */
                return r == 0 ? tls_fail(t, -ECONNRESET, "TLS handshake: connection closed by peer") : r;
        }

        /* SSL_VERIFY_PEER already fails the handshake; this guards against a future change of
         * the verify mode. */
        verify = sym_SSL_get_verify_result(t->ssl);
        if (verify != X509_V_OK) {
                char why[sizeof(t->error)];

                return tls_fail(t, -EKEYREJECTED, "TLS handshake: certificate verification failed: %s",
                                tls_verify_error(t, verify, why, sizeof(why)));
        }

        /* RFC 8915 section 4: a server that does not select "ntske/1" does not speak NTS-KE. */
        sym_SSL_get0_alpn_selected(t->ssl, &alpn, &alpn_len);
        if (alpn_len == 0)
                return tls_fail(t, -EPROTO, "TLS handshake: server did not select ALPN protocol \"%s\" (not an NTS-KE server?)",
                                NTS_KE_ALPN);
        if (alpn_len != strlen(NTS_KE_ALPN) || memcmp(alpn, NTS_KE_ALPN, alpn_len) != 0) {
                if (alpn_printable(alpn, alpn_len))
                        return tls_fail(t, -EPROTO, "TLS handshake: server selected ALPN protocol \"%.*s\", not \"%s\"",
                                        (int) alpn_len, (const char *) alpn, NTS_KE_ALPN);
                return tls_fail(t, -EPROTO, "TLS handshake: server selected a non-printable ALPN protocol (%u bytes), not \"%s\"",
                                alpn_len, NTS_KE_ALPN);
        }

        t->handshake_done = true;
        return 0;
}

ssize_t NTS_tls_write(NTS_TLS *t, const void *buf, size_t size) {
        int r;

        assert(t);
        assert(t->handshake_done);
        assert(buf || size == 0);

        if (size == 0)
                return 0;

        ERROR_QUEUE_SCOPE(t);
        SIGPIPE_BLOCK_SCOPE;
        t->error[0] = 0;

        r = sym_SSL_write(t->ssl, buf, (int) MIN(size, (size_t) INT_MAX));
        if (r > 0)
                return r;

        r = tls_result(t, r, "TLS write");
        return r == 0 ? tls_fail(t, -EPIPE, "TLS write: connection closed by peer") : r;
}

ssize_t NTS_tls_read(NTS_TLS *t, void *buf, size_t size) {
        int r;

        assert(t);
        assert(t->handshake_done);
        assert(buf);
        assert(size > 0);

        ERROR_QUEUE_SCOPE(t);
        SIGPIPE_BLOCK_SCOPE;
        t->error[0] = 0;

        r = sym_SSL_read(t->ssl, buf, (int) MIN(size, (size_t) INT_MAX));
        if (r > 0)
                return r;

        return tls_result(t, r, "TLS read");
}

uint32_t NTS_tls_events(const NTS_TLS *t) {
        assert(t);
        return t->events;
}

static int tls_export_key(NTS_TLS *t, uint16_t context_aead, uint8_t direction, struct iovec *key,
                          size_t key_size) {
        uint8_t context[NTS_EXPORTER_CONTEXT_SIZE];

        if (key->iov_len < key_size)
                return -ENOBUFS;

        unaligned_write_be16(context, NTS_PROTOCOL_NTPV4);
        unaligned_write_be16(context + 2, context_aead);
        context[4] = direction;

        if (sym_SSL_export_keying_material(t->ssl, key->iov_base, key_size,
                                           NTS_EXPORTER_LABEL, strlen(NTS_EXPORTER_LABEL),
                                           context, sizeof(context), 1) != 1)
                return tls_fail(t, -EIO, "TLS key export failed");

        key->iov_len = key_size;
        return 0;
}

int NTS_tls_export_keys(NTS_TLS *t, NTS_AEADAlgorithm aead, uint16_t context_aead, struct iovec *c2s,
                        struct iovec *s2c) {
        const NTS_AEADParam *param;
        size_t key_size;
        int r;

        assert(t);
        assert(t->handshake_done);
        assert(c2s && c2s->iov_base);
        assert(s2c && s2c->iov_base);

        param = NTS_aead_param(aead);
        if (!param)
                return -EOPNOTSUPP;
        key_size = param->key_size;
        if (c2s->iov_len < key_size || s2c->iov_len < key_size)
                return -ENOBUFS;

        ERROR_QUEUE_SCOPE(t);
        t->error[0] = 0;

        r = tls_export_key(t, context_aead, NTS_EXPORTER_C2S, c2s, key_size);
        if (r >= 0)
                r = tls_export_key(t, context_aead, NTS_EXPORTER_S2C, s2c, key_size);
        if (r < 0) {
                explicit_bzero_safe(c2s->iov_base, c2s->iov_len);
                explicit_bzero_safe(s2c->iov_base, s2c->iov_len);
                return r;
        }
        return 0;
}

const char *NTS_tls_error(const NTS_TLS *t) {
        assert(t);
        return t->error;
}

static int asn1_time_to_time_t(const ASN1_TIME *a, time_t *ret) {
        struct tm tm = {};
        time_t x;

        if (!a || sym_ASN1_TIME_to_tm(a, &tm) != 1)
                return -EINVAL;

        x = timegm(&tm);
        if (x == (time_t) -1)
                return -ERANGE;

        *ret = x;
        return 0;
}

/* The intersection of the validity periods of the chain the verifier built; empty (from >
 * until) when there is none or a date cannot be read. */
static void tls_chain_validity(NTS_TLS *t, time_t *ret_from, time_t *ret_until) {
        STACK_OF(X509) *chain = sym_SSL_get0_verified_chain(t->ssl);
        int n = chain ? sym_OPENSSL_sk_num((const OPENSSL_STACK *) chain) : 0;
        time_t from = 1, until = 0;

        for (int i = 0; i < n; i++) {
                const X509 *x = sym_OPENSSL_sk_value((const OPENSSL_STACK *) chain, i);
                time_t nb, na;

                if (!x || asn1_time_to_time_t(sym_X509_get0_notBefore(x), &nb) < 0 ||
                    asn1_time_to_time_t(sym_X509_get0_notAfter(x), &na) < 0) {
                        from = 1, until = 0;
                        break;
                }
                from = i == 0 ? nb : MAX(from, nb);
                until = i == 0 ? na : MIN(until, na);
        }

        *ret_from = from;
        *ret_until = until;
}

/* Appends ", KIND:VALUE" (no comma first; "KIND" alone without value) if it fits whole, else
 * ", ..." and returns false: the list is full. Bytes outside printable ASCII, commas and
 * spaces become '?': the certificate may not have verified, and ", " separates the names. */
static bool sans_append(char *buf, size_t size, const char *kind, const uint8_t *value, size_t n) {
        size_t k = strlen(buf);
        char *p = buf + k;

        assert(size > sizeof(", ..."));

        if (k + 2 + strlen(kind) + 1 + n >= size - sizeof(", ...")) {
                strcpy(p, k > 0 ? ", ..." : "...");
                return false;
        }

        p += sprintf(p, "%s%s%s", k > 0 ? ", " : "", kind, value ? ":" : "");
        for (size_t i = 0; i < n; i++)
                *p++ = value[i] > ' ' && value[i] < 0x7f && value[i] != ',' ? (char) value[i] : '?';
        *p = 0;
        return true;
}

static bool sans_append_string(char *buf, size_t size, const char *kind, const ASN1_STRING *a) {
        int n = sym_ASN1_STRING_length(a);

        return sans_append(buf, size, kind, sym_ASN1_STRING_get0_data(a), n > 0 ? (size_t) n : 0);
}

static bool sans_append_ip(char *buf, size_t size, const ASN1_OCTET_STRING *a) {
        char text[INET6_ADDRSTRLEN] = "(malformed)";
        int n = sym_ASN1_STRING_length(a);

        if (IN_SET(n, 4, 16))
                (void) inet_ntop(n == 4 ? AF_INET : AF_INET6, sym_ASN1_STRING_get0_data(a), text, sizeof(text));
        return sans_append(buf, size, "IP", (const uint8_t *) text, strlen(text));
}

/* The subject alternative names, which the server's name is checked against: "DNS:localhost,
 * IP:127.0.0.1". */
static void cert_sans(X509 *cert, char *buf, size_t size) {
        GENERAL_NAMES *names;
        bool more = true;
        int n;

        buf[0] = 0;
        names = sym_X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
        if (!names)
                return;

        n = sym_OPENSSL_sk_num((const OPENSSL_STACK *) names);
        for (int i = 0; i < n && more; i++) {
                const GENERAL_NAME *g = sym_OPENSSL_sk_value((const OPENSSL_STACK *) names, i);

                switch (g->type) {
                case GEN_DNS:
                        more = sans_append_string(buf, size, "DNS", g->d.dNSName);
                        break;
                case GEN_IPADD:
                        more = sans_append_ip(buf, size, g->d.iPAddress);
                        break;
                case GEN_EMAIL:
                        more = sans_append_string(buf, size, "email", g->d.rfc822Name);
                        break;
                case GEN_URI:
                        more = sans_append_string(buf, size, "URI", g->d.uniformResourceIdentifier);
                        break;
                default:
                        more = sans_append(buf, size, "other", NULL, 0);
                }
        }
        sym_GENERAL_NAMES_free(names);
}

/* The SHA-256 of cert's SubjectPublicKeyInfo in DER, as `openssl x509 -pubkey | openssl pkey
 * -pubin -outform der | sha256sum` computes it. */
static int cert_key_sha256(X509 *cert, uint8_t ret[static 32]) {
        _cleanup_free_ uint8_t *der = NULL;
        X509_PUBKEY *key = sym_X509_get_X509_PUBKEY(cert);
        unsigned len = 0;
        uint8_t *p;
        int n;

        n = key ? sym_i2d_X509_PUBKEY(key, NULL) : -1;
        if (n <= 0)
                return -EIO;
        der = malloc((size_t) n);
        if (!der)
                return -ENOMEM;
        p = der;
        if (sym_i2d_X509_PUBKEY(key, &p) != n)
                return -EIO;
        if (sym_EVP_Digest(der, (size_t) n, ret, &len, sym_EVP_sha256(), NULL) != 1 || len != 32)
                return -EIO;
        return 0;
}

int NTS_tls_info(NTS_TLS *t, NTS_TLSInfo *ret) {
        assert(t);
        assert(ret);

        ERROR_QUEUE_SCOPE(t);

        *ret = (NTS_TLSInfo) {
                .version = sym_SSL_get_version(t->ssl),
                .cipher = sym_SSL_CIPHER_get_name(sym_SSL_get_current_cipher(t->ssl)),
                .verify_result = sym_X509_verify_cert_error_string(sym_SSL_get_verify_result(t->ssl)),
        };

        if (!t->leaf)
                return -ENODATA;

        (void) sym_X509_NAME_oneline(sym_X509_get_subject_name(t->leaf), ret->subject, sizeof(ret->subject));
        (void) sym_X509_NAME_oneline(sym_X509_get_issuer_name(t->leaf), ret->issuer, sizeof(ret->issuer));
        cert_sans(t->leaf, ret->sans, sizeof(ret->sans));
        (void) asn1_time_to_time_t(sym_X509_get0_notBefore(t->leaf), &ret->not_before);
        (void) asn1_time_to_time_t(sym_X509_get0_notAfter(t->leaf), &ret->not_after);
        tls_chain_validity(t, &ret->valid_from, &ret->valid_until);
        ret->has_key_sha256 = cert_key_sha256(t->leaf, ret->key_sha256) >= 0;
        return 0;
}

void NTS_tls_shutdown(NTS_TLS *t) {
        assert(t);

        ERROR_QUEUE_SCOPE(t);
        SIGPIPE_BLOCK_SCOPE;
        (void) sym_SSL_shutdown(t->ssl);
}

NTS_TLSCertTime NTS_tls_cert_time_failure(const NTS_TLS *t) {
        long v;

        assert(t);

        if (t->handshake_done)
                return NTS_TLS_CERT_TIME_OTHER;

        /* The verifier reports the first error it meets. It checks the host name first, then
         * each certificate from the trust anchor down to the leaf: the issuer's signature on it,
         * then its dates. So "not yet valid" may be an intermediate's or the root's, with the
         * signatures below it and the leaf's dates not checked at all (an expired leaf under a
         * not yet valid issuer reports "not yet valid"). The bootstrap therefore repeats the
         * handshake with every check but the dates before it trusts anything. */
        v = sym_SSL_get_verify_result(t->ssl);
        if (v == X509_V_ERR_CERT_NOT_YET_VALID)
                return NTS_TLS_CERT_NOT_YET_VALID;
        if (v == X509_V_ERR_CERT_HAS_EXPIRED)
                return NTS_TLS_CERT_EXPIRED;
        return NTS_TLS_CERT_TIME_OTHER;
}
