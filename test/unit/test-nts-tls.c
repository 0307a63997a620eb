/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Our TLS client against an in-process libssl server over a socketpair, both non-blocking and
 * stepped in turn, with the test PKI from test/tools/fixtures/make-certs.sh. */

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "crypto-util.h"
#include "iovec-util.h"
#include "nts-server-tls.h"
#include "nts-tls.h"
#include "string-util.h"
#include "test-tls-setup.h"
#include "tests.h"

static char certs[] = "/tmp/test-nts-tls-XXXXXX";

static const char *cert_path(const char *name) {
        return test_path(certs, name);
}

typedef struct ServerSetup {
        const char *chain;              /* file in certs; NULL: server-chain.pem */
        ServerALPN alpn;
        int max_version;
        bool system_store;              /* the client trusts the system store, not ca.pem */
} ServerSetup;

typedef struct Pair {
        SSL_CTX *server_ctx;
        SSL *server;
        NTS_TLS *client;
        ServerALPN alpn;
        int fds[2];
} Pair;

static void pair_free(Pair *p) {
        NTS_tls_free(p->client);
        sym_SSL_free(p->server);
        sym_SSL_CTX_free(p->server_ctx);
        safe_close(p->fds[0]);
        safe_close(p->fds[1]);
}

static void pair_new(Pair *p, const ServerSetup *s, const NTS_TLSOptions *o) {
        NTS_TLSOptions opts = *o;

        *p = (Pair) { .alpn = s->alpn };
        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p->fds));

        ASSERT_OK(server_tls_ctx_new(&(ServerTLSOptions) {
                                             .cert_chain = cert_path(s->chain ?: "server-chain.pem"),
                                             .key = cert_path("server.key"),
                                             .max_version = s->max_version,
                                             .alpn = &p->alpn,
                                     },
                                     &p->server_ctx));
        ASSERT_OK(server_tls_ssl_new(p->server_ctx, p->fds[1], &p->server));

        if (!opts.ca_file && !opts.ca_dir && !s->system_store)
                opts.ca_file = cert_path("ca.pem");
        ASSERT_OK(NTS_tls_new(p->fds[0], &opts, &p->client, NULL, 0));
}

/* Steps both sides until neither waits any more; returns the client's result. */
static int pair_handshake(Pair *p) {
        int rc = -EAGAIN, rs = -EAGAIN;

        for (unsigned i = 0; i < 100 && (rc == -EAGAIN || rs == -EAGAIN); i++) {
                if (rc == -EAGAIN)
                        rc = NTS_tls_handshake(p->client);
                if (rc < 0 && rc != -EAGAIN)
                        break;
                if (rs == -EAGAIN)
                        rs = server_tls_handshake(p->server, NULL);
                if (rs < 0 && rs != -EAGAIN && rc == -EAGAIN) {
                        /* Let the client read whatever alert the server sent. */
                        rc = NTS_tls_handshake(p->client);
                        break;
                }
        }

        if (rc >= 0)
                ASSERT_EQ(rs, 0);
        /* Whatever happened, nothing may be left in OpenSSL's error queue. */
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
        return rc;
}

static void assert_refused(const ServerSetup *s, const NTS_TLSOptions *o, int error, const char *reason) {
        Pair p;

        pair_new(&p, s, o);
        ASSERT_ERROR(pair_handshake(&p), error);
        fprintf(stderr, "    refused: %s\n", NTS_tls_error(p.client));
        if (!strcasestr(NTS_tls_error(p.client), reason)) {
                fprintf(stderr, "expected \"%s\" in \"%s\"\n", reason, NTS_tls_error(p.client));
                abort();
        }
        pair_free(&p);
}

static void assert_accepted(const ServerSetup *s, const NTS_TLSOptions *o) {
        Pair p;

        pair_new(&p, s, o);
        ASSERT_OK(pair_handshake(&p));
        ASSERT_STREQ(NTS_tls_error(p.client), "");
        pair_free(&p);
}

/* What a chain whose root is not trusted reads as (OpenSSL: "self-signed certificate in
 * certificate chain"), by the issuer of the server's certificate. */
#define UNTRUSTED(issuer)                                                                       \
        "its issuer " issuer " is not a trusted CA (the trusted CAs are set by "                \
        "NTSTrustedCertificates=, for nts-query by --ca=)"
#define TEST_CA_UNTRUSTED UNTRUSTED("/CN=timesyncd-nts test CA")
#define OTHER_CA_UNTRUSTED UNTRUSTED("/CN=timesyncd-nts other CA")

static const char *verify_reason(long code) {
        return sym_X509_verify_cert_error_string(code);
}

static void test_handshake_exports_the_keys_the_server_derives(void) {
        static const struct {
                NTS_AEADAlgorithm aead;
                size_t key_size;
        } algs[] = {
                { NTS_AEAD_AES_SIV_CMAC_256, 32 },
                { NTS_AEAD_AES_SIV_CMAC_384, 48 },
                { NTS_AEAD_AES_SIV_CMAC_512, 64 },
        };
        NTS_TLSInfo info;
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_OK(pair_handshake(&p));
        ASSERT_STREQ(NTS_tls_error(p.client), "");

        for (size_t i = 0; i < ELEMENTSOF(algs); i++) {
                uint8_t c2s[NTS_MAX_AEAD_KEY_SIZE], s2c[NTS_MAX_AEAD_KEY_SIZE];
                uint8_t server_c2s[NTS_MAX_AEAD_KEY_SIZE], server_s2c[NTS_MAX_AEAD_KEY_SIZE];
                struct iovec c = IOVEC_MAKE(c2s, sizeof(c2s)), s = IOVEC_MAKE(s2c, sizeof(s2c));

                ASSERT_OK(NTS_tls_export_keys(p.client, algs[i].aead, algs[i].aead, &c, &s));
                ASSERT_EQ(c.iov_len, algs[i].key_size);
                ASSERT_EQ(s.iov_len, algs[i].key_size);
                ASSERT_OK(server_tls_export_keys(p.server, algs[i].aead, algs[i].key_size, server_c2s, server_s2c));
                ASSERT_MEMEQ(c2s, server_c2s, algs[i].key_size);
                ASSERT_MEMEQ(s2c, server_s2c, algs[i].key_size);
                ASSERT_TRUE(memcmp(c2s, s2c, algs[i].key_size) != 0);
        }

        ASSERT_OK(NTS_tls_info(p.client, &info));
        ASSERT_STREQ(info.version, "TLSv1.3");
        ASSERT_TRUE(strstr(info.cipher, "TLS_"));
        ASSERT_STREQ(info.subject, "/CN=server");
        ASSERT_STREQ(info.issuer, "/CN=timesyncd-nts test CA");
        ASSERT_STREQ(info.sans, "DNS:localhost, DNS:ntp.test, DNS:*.nts.test, IP:127.0.0.1, IP:::1");
        ASSERT_STREQ(info.verify_result, "ok");
        ASSERT_EQ(info.not_before, 1704067200); /* 2024-01-01, make-certs.sh */
        ASSERT_EQ(info.not_after, 4102358400);  /* 2099-12-31 */
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
        pair_free(&p);
}

/* AEAD_AES_128_GCM_SIV: 16-byte keys, exported with the AEAD ID that NTS_exporter_aead() names:
 * 30 after the server's record 1024 (RFC 8915 section 5.1), 15 without it (chrony). The server
 * side here builds the context by hand, as a server of either kind does. */
static void test_gcm_siv_keys_follow_the_exporter_context(void) {
        static const struct {
                bool compliant;
                uint16_t context_aead;
        } cases[] = {
                { true, 30 },
                { false, 15 },
        };
        uint8_t first_c2s[16] = {};
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_OK(pair_handshake(&p));

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                NTS_Agreement a = { .aead = NTS_AEAD_AES_128_GCM_SIV, .compliant_128gcm = cases[i].compliant };
                uint8_t c2s[NTS_MAX_AEAD_KEY_SIZE], s2c[NTS_MAX_AEAD_KEY_SIZE];
                uint8_t server_c2s[16], server_s2c[16];
                struct iovec c = IOVEC_MAKE(c2s, sizeof(c2s)), s = IOVEC_MAKE(s2c, sizeof(s2c));

                ASSERT_EQ(NTS_exporter_aead(&a), cases[i].context_aead);
                ASSERT_OK(NTS_tls_export_keys(p.client, a.aead, NTS_exporter_aead(&a), &c, &s));
                ASSERT_EQ(c.iov_len, 16);
                ASSERT_EQ(s.iov_len, 16);
                ASSERT_OK(server_tls_export_keys(p.server, (NTS_AEADAlgorithm) cases[i].context_aead, 16,
                                                 server_c2s, server_s2c));
                ASSERT_MEMEQ(c2s, server_c2s, 16);
                ASSERT_MEMEQ(s2c, server_s2c, 16);
                /* The two contexts give different keys: a wrong guess cannot verify. */
                if (i == 0)
                        memcpy(first_c2s, c2s, 16);
                else
                        ASSERT_TRUE(memcmp(first_c2s, c2s, 16) != 0);
        }
        pair_free(&p);
}

static void test_export_refuses_small_buffers_and_unknown_aead(void) {
        uint8_t c2s[64], s2c[64];
        struct iovec c = IOVEC_MAKE(c2s, 31), s = IOVEC_MAKE(s2c, sizeof(s2c));
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_OK(pair_handshake(&p));
        ASSERT_ERROR(NTS_tls_export_keys(p.client, NTS_AEAD_AES_SIV_CMAC_256, 15, &c, &s), ENOBUFS);
        c.iov_len = sizeof(c2s);
        ASSERT_ERROR(NTS_tls_export_keys(p.client, (NTS_AEADAlgorithm) 1, 1, &c, &s), EOPNOTSUPP);
        pair_free(&p);
}

static void test_name_is_sent_as_sni(void) {
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "ntp.test" });
        ASSERT_OK(pair_handshake(&p));
        ASSERT_STREQ(sym_SSL_get_servername(p.server, TLSEXT_NAMETYPE_host_name), "ntp.test");
        pair_free(&p);
}

static void test_ip_literal_verifies_ip_san_and_sends_no_sni(void) {
        static const char *const ips[] = { "127.0.0.1", "::1" };

        for (size_t i = 0; i < ELEMENTSOF(ips); i++) {
                Pair p;

                pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = ips[i] });
                ASSERT_OK(pair_handshake(&p));
                ASSERT_TRUE(sym_SSL_get_servername(p.server, TLSEXT_NAMETYPE_host_name) == NULL);
                pair_free(&p);
        }
}

static void test_ip_literal_not_in_certificate_is_refused(void) {
        assert_refused(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "127.0.0.2" }, EKEYREJECTED,
                       verify_reason(X509_V_ERR_IP_ADDRESS_MISMATCH));
}

static void test_wrong_hostname_is_refused(void) {
        assert_refused(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "other.test" }, EKEYREJECTED,
                       verify_reason(X509_V_ERR_HOSTNAME_MISMATCH));
        assert_refused(&(ServerSetup) { .chain = "wrongname-chain.pem" }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EKEYREJECTED, verify_reason(X509_V_ERR_HOSTNAME_MISMATCH));
}

/* The names the certificate is for, and the one asked for: what the operator needs to fix NTS=. */
static void test_hostname_mismatch_names_both_sides(void) {
        assert_refused(&(ServerSetup) { .chain = "wrongname-chain.pem" }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EKEYREJECTED, "hostname mismatch: the certificate is for DNS:wrong.test, not for localhost");
        assert_refused(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "other.test" }, EKEYREJECTED,
                       "the certificate is for DNS:localhost, DNS:ntp.test, DNS:*.nts.test, IP:127.0.0.1, IP:::1, "
                       "not for other.test");
        assert_refused(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "127.0.0.2" }, EKEYREJECTED,
                       "IP address mismatch: the certificate is for DNS:localhost, DNS:ntp.test, DNS:*.nts.test, "
                       "IP:127.0.0.1, IP:::1, not for 127.0.0.2");
}

/* Many names: whole names while they fit, then "...", and the name asked for always. The
 * self-signed many-chain.pem of test_long_san_list_is_cut_whole_names_first(), trusted as it is. */
static void test_hostname_mismatch_cuts_a_long_name_list(void) {
        Pair p;

        pair_new(&p, &(ServerSetup) { .chain = "many-chain.pem" },
                 &(NTS_TLSOptions) { .hostname = "nope.example", .ca_file = cert_path("many-chain.pem") });
        ASSERT_ERROR(pair_handshake(&p), EKEYREJECTED);
        fprintf(stderr, "    refused: %s\n", NTS_tls_error(p.client));
        ASSERT_TRUE(strstr(NTS_tls_error(p.client), ", ..., not for nope.example"));
        pair_free(&p);
}

static void test_expired_certificate_is_refused(void) {
        /* OpenSSL's words, then the date. */
        assert_refused(&(ServerSetup) { .chain = "expired-chain.pem" }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EKEYREJECTED, "certificate verification failed: certificate has expired: valid until 2021-01-01 00:00 UTC");
}

static void test_not_yet_valid_certificate_is_refused(void) {
        assert_refused(&(ServerSetup) { .chain = "future-chain.pem" }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EKEYREJECTED, "certificate verification failed: certificate is not yet valid: valid from 2099-01-01 00:00 UTC");
}

static void test_unknown_ca_is_refused(void) {
        /* otherca-chain.pem carries its own (untrusted, self-signed) root, which OpenSSL reports
         * as "self-signed certificate in certificate chain": the reason names the issuer that is
         * not trusted and the settings that decide the trust instead. */
        assert_refused(&(ServerSetup) { .chain = "otherca-chain.pem" }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EKEYREJECTED, "certificate verification failed: " OTHER_CA_UNTRUSTED);
}

/* The refused certificate, as NTS_tls_info() shows it after the failed handshake. */
typedef struct RefusedCert {
        const char *chain;
        const char *hostname;
        long verify_error;
        const char *subject;
        const char *issuer;
        const char *sans;
        time_t not_before;
        time_t not_after;
} RefusedCert;

#define TEST_SANS "DNS:localhost, DNS:ntp.test, DNS:*.nts.test, IP:127.0.0.1, IP:::1"
#define TEST_CA "/CN=timesyncd-nts test CA"

static void assert_refused_certificate_is_shown(const RefusedCert *c) {
        NTS_TLSInfo info;
        Pair p;

        pair_new(&p, &(ServerSetup) { .chain = c->chain }, &(NTS_TLSOptions) { .hostname = c->hostname });
        ASSERT_ERROR(pair_handshake(&p), EKEYREJECTED);
        ASSERT_OK(NTS_tls_info(p.client, &info));
        fprintf(stderr, "    %s: %s, SANs %s, issuer %s, %s\n", c->chain, info.subject, info.sans, info.issuer,
                info.verify_result);
        ASSERT_STREQ(info.verify_result, verify_reason(c->verify_error));
        ASSERT_STREQ(info.subject, c->subject);
        ASSERT_STREQ(info.issuer, c->issuer);
        ASSERT_STREQ(info.sans, c->sans);
        if (c->not_before != 0) {
                ASSERT_EQ(info.not_before, c->not_before);
                ASSERT_EQ(info.not_after, c->not_after);
        } else
                ASSERT_TRUE(info.not_before > 0 && info.not_after > info.not_before);
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
        pair_free(&p);
}

static void test_refused_certificate_is_shown_with_the_reason(void) {
        static const RefusedCert refused[] = {
                { "expired-chain.pem", "localhost", X509_V_ERR_CERT_HAS_EXPIRED, "/CN=expired", TEST_CA, TEST_SANS,
                  1577836800 /* 2020-01-01 */, 1609459200 /* 2021-01-01 */ },
                { "future-chain.pem", "localhost", X509_V_ERR_CERT_NOT_YET_VALID, "/CN=future", TEST_CA, TEST_SANS,
                  4070908800 /* 2099-01-01 */, 4102358400 /* 2099-12-31 */ },
                { "wrongname-chain.pem", "localhost", X509_V_ERR_HOSTNAME_MISMATCH, "/CN=wrongname", TEST_CA,
                  "DNS:wrong.test", 1704067200, 4102358400 },
                { "server-chain.pem", "127.0.0.2", X509_V_ERR_IP_ADDRESS_MISMATCH, "/CN=server", TEST_CA, TEST_SANS,
                  1704067200, 4102358400 },
                { "otherca-chain.pem", "localhost", X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, "/CN=otherca",
                  "/CN=timesyncd-nts other CA", TEST_SANS, 1704067200, 4102358400 },
                /* Valid for ten years from the test run. */
                { "selfsigned-chain.pem", "localhost", X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, "/CN=selfsigned",
                  "/CN=selfsigned", TEST_SANS, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                assert_refused_certificate_is_shown(&refused[i]);
}

static void test_long_san_list_is_cut_whole_names_first(void) {
        char cmd[4096], sans[2048] = "subjectAltName=";
        NTS_TLSInfo info;
        Pair p;

        for (unsigned i = 0; i < 40; i++)
                snprintf(sans + strlen(sans), sizeof(sans) - strlen(sans), "%sDNS:name-%02u.example.test",
                         i > 0 ? "," : "", i);
        snprintf(cmd, sizeof(cmd),
                 "openssl req -x509 -new -key '%s' -days 2 -subj /CN=many -addext '%s' -out '%s' 2>/dev/null",
                 cert_path("server.key"), sans, cert_path("many-chain.pem"));
        ASSERT_EQ(system(cmd), 0);

        pair_new(&p, &(ServerSetup) { .chain = "many-chain.pem" }, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_ERROR(pair_handshake(&p), EKEYREJECTED);
        ASSERT_OK(NTS_tls_info(p.client, &info));
        fprintf(stderr, "    %s\n", info.sans);
        ASSERT_TRUE(startswith(info.sans, "DNS:name-00.example.test, DNS:name-01.example.test, "));
        ASSERT_TRUE(endswith(info.sans, ".example.test, ..."));
        ASSERT_TRUE(strlen(info.sans) < sizeof(info.sans));
        pair_free(&p);
}

static void test_trusting_the_other_ca_accepts_its_chain(void) {
        assert_accepted(&(ServerSetup) { .chain = "otherca-chain.pem" },
                        &(NTS_TLSOptions) { .hostname = "localhost", .ca_file = cert_path("other-ca.pem") });
        assert_refused(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost", .ca_file = cert_path("other-ca.pem") },
                       EKEYREJECTED, TEST_CA_UNTRUSTED);
}

static void test_ca_dir_is_a_trust_anchor(void) {
        char cmd[1024];

        snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s' && openssl rehash '%s'",
                 cert_path("cadir"), cert_path("ca.pem"), cert_path("cadir/ca.pem"), cert_path("cadir"));
        ASSERT_EQ(system(cmd), 0);

        assert_accepted(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost", .ca_dir = cert_path("cadir") });
        assert_refused(&(ServerSetup) { .chain = "otherca-chain.pem" },
                       &(NTS_TLSOptions) { .hostname = "localhost", .ca_dir = cert_path("cadir") },
                       EKEYREJECTED, OTHER_CA_UNTRUSTED);
}

static void test_system_store_is_used_without_ca_file(void) {
        _cleanup_free_ char *saved = getenv("SSL_CERT_FILE") ? strdup(getenv("SSL_CERT_FILE")) : NULL;

        /* libcrypto's default verify paths honour SSL_CERT_FILE: point it at the test CA. */
        ASSERT_OK(setenv("SSL_CERT_FILE", cert_path("ca.pem"), 1));
        assert_accepted(&(ServerSetup) { .system_store = true }, &(NTS_TLSOptions) { .hostname = "localhost" });

        ASSERT_OK(setenv("SSL_CERT_FILE", cert_path("other-ca.pem"), 1));
        assert_refused(&(ServerSetup) { .system_store = true }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EKEYREJECTED, TEST_CA_UNTRUSTED);

        if (saved)
                ASSERT_OK(setenv("SSL_CERT_FILE", saved, 1));
        else
                ASSERT_OK(unsetenv("SSL_CERT_FILE"));
}

static void restore_env(const char *name, const char *saved) {
        if (saved)
                ASSERT_OK(setenv(name, saved, 1));
        else
                ASSERT_OK(unsetenv(name));
}

static void test_system_store_prefers_the_hashed_directory(void) {
        _cleanup_free_ char *saved_file = getenv("SSL_CERT_FILE") ? strdup(getenv("SSL_CERT_FILE")) : NULL;
        _cleanup_free_ char *saved_dir = getenv("SSL_CERT_DIR") ? strdup(getenv("SSL_CERT_DIR")) : NULL;
        char cmd[1024];

        snprintf(cmd, sizeof(cmd), "mkdir -p '%s' '%s' && cp '%s' '%s' && openssl rehash '%s'",
                 cert_path("sysdir"), cert_path("emptydir"), cert_path("ca.pem"), cert_path("sysdir/ca.pem"),
                 cert_path("sysdir"));
        ASSERT_EQ(system(cmd), 0);
        ASSERT_OK(unsetenv("SSL_CERT_FILE"));

        /* The directory alone: the system bundle does not hold the test CA, so this is only
         * accepted through the hash links (also as the second entry of a list). */
        ASSERT_OK(setenv("SSL_CERT_DIR", cert_path("sysdir"), 1));
        assert_accepted(&(ServerSetup) { .system_store = true }, &(NTS_TLSOptions) { .hostname = "localhost" });
        snprintf(cmd, sizeof(cmd), "%s:%s", cert_path("emptydir"), cert_path("sysdir"));
        ASSERT_OK(setenv("SSL_CERT_DIR", cmd, 1));
        assert_accepted(&(ServerSetup) { .system_store = true }, &(NTS_TLSOptions) { .hostname = "localhost" });

        /* A directory without hash links: the default bundle (the system's) is used instead. */
        ASSERT_OK(setenv("SSL_CERT_DIR", cert_path("emptydir"), 1));
        assert_refused(&(ServerSetup) { .system_store = true }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EKEYREJECTED, TEST_CA_UNTRUSTED);

        /* SSL_CERT_FILE asks for a bundle: it is honoured. */
        ASSERT_OK(setenv("SSL_CERT_FILE", cert_path("ca.pem"), 1));
        assert_accepted(&(ServerSetup) { .system_store = true }, &(NTS_TLSOptions) { .hostname = "localhost" });

        restore_env("SSL_CERT_FILE", saved_file);
        restore_env("SSL_CERT_DIR", saved_dir);
}

/* Heap held by a fresh client context trusting the system store. */
static size_t system_store_heap(void) {
        _cleanup_(NTS_tls_freep) NTS_TLS *t = NULL;
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        size_t before;

        ASSERT_TRUE(fd >= 0);
        before = mallinfo2().uordblks;
        ASSERT_OK(NTS_tls_new(fd, &(NTS_TLSOptions) { .hostname = "localhost" }, &t, NULL, 0));
        return mallinfo2().uordblks - before;
}

static void test_system_store_directory_is_not_parsed_up_front(void) {
        static const char bundle[] = "/etc/ssl/certs/ca-certificates.crt";
        _cleanup_free_ char *saved_file = getenv("SSL_CERT_FILE") ? strdup(getenv("SSL_CERT_FILE")) : NULL;
        _cleanup_free_ char *saved_dir = getenv("SSL_CERT_DIR") ? strdup(getenv("SSL_CERT_DIR")) : NULL;
        size_t with_bundle, with_dir;

        if (access(bundle, R_OK) < 0) {
                log_info("%s missing, skipping.", bundle);
                return;
        }
        (void) system_store_heap(); /* libssl's one-time setup is not what is measured */

        ASSERT_OK(setenv("SSL_CERT_FILE", bundle, 1));
        with_bundle = system_store_heap();
        ASSERT_OK(unsetenv("SSL_CERT_FILE"));
        ASSERT_OK(setenv("SSL_CERT_DIR", cert_path("sysdir"), 1));
        with_dir = system_store_heap();
        restore_env("SSL_CERT_FILE", saved_file);
        restore_env("SSL_CERT_DIR", saved_dir);

        log_info("heap of a new context: %zu bytes with the bundle, %zu with the directory", with_bundle, with_dir);
        if (with_bundle == 0) {
                log_info("mallinfo2() counts nothing here (a sanitizer's allocator), skipping.");
                return;
        }
        /* Parsing the bundle costs hundreds of KiB; the directory is read at verification. */
        ASSERT_TRUE(with_bundle > 4 * with_dir);
}

static void test_no_verify_time_accepts_expired_and_future(void) {
        assert_accepted(&(ServerSetup) { .chain = "expired-chain.pem" },
                        &(NTS_TLSOptions) { .hostname = "localhost", .no_verify_time = true });
        assert_accepted(&(ServerSetup) { .chain = "future-chain.pem" },
                        &(NTS_TLSOptions) { .hostname = "localhost", .no_verify_time = true });
}

static void test_no_verify_time_still_refuses_wrong_name_and_unknown_ca(void) {
        assert_refused(&(ServerSetup) { .chain = "wrongname-chain.pem" },
                       &(NTS_TLSOptions) { .hostname = "localhost", .no_verify_time = true },
                       EKEYREJECTED, verify_reason(X509_V_ERR_HOSTNAME_MISMATCH));
        assert_refused(&(ServerSetup) { .chain = "otherca-chain.pem" },
                       &(NTS_TLSOptions) { .hostname = "localhost", .no_verify_time = true },
                       EKEYREJECTED, OTHER_CA_UNTRUSTED);
}

static void test_verify_time_is_the_time_checked(void) {
        /* The test CA is made by the test run and valid for ten years from now; the leaf from
         * 2024 to 2099. Only the configured time can make this chain fail. */
        const time_t now = time(NULL), year = 366 * 24 * 3600;

        assert_accepted(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost", .verify_time = now + year });
        assert_refused(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost", .verify_time = now + 11 * year },
                       EKEYREJECTED, verify_reason(X509_V_ERR_CERT_HAS_EXPIRED));
        assert_refused(&(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost", .verify_time = now - year },
                       EKEYREJECTED, verify_reason(X509_V_ERR_CERT_NOT_YET_VALID));
}

/* OpenSSL checks each certificate from the trust anchor down: the issuer's signature on it,
 * then its dates. A CA not yet valid is reported before anything about the leaf, even an
 * expired leaf: "not yet valid" does not mean that the rest of the chain passed. */
static void test_issuer_not_yet_valid_is_reported_before_an_expired_leaf(void) {
        const time_t year = 366 * 24 * 3600;
        Pair p;

        /* The CA is valid from the test run on, the leaf expired in 2021. */
        pair_new(&p, &(ServerSetup) { .chain = "expired-chain.pem" },
                 &(NTS_TLSOptions) { .hostname = "localhost", .verify_time = time(NULL) - year });
        ASSERT_ERROR(pair_handshake(&p), EKEYREJECTED);
        ASSERT_TRUE(strstr(NTS_tls_error(p.client), verify_reason(X509_V_ERR_CERT_NOT_YET_VALID)));
        ASSERT_EQ(NTS_tls_cert_time_failure(p.client), NTS_TLS_CERT_NOT_YET_VALID);
        pair_free(&p);
}

/* The bootstrap may take only a time at which every certificate of the chain is valid. */
static void test_chain_validity_is_the_intersection_of_the_chain(void) {
        const time_t now = time(NULL);
        NTS_TLSInfo info;
        Pair p;

        /* Leaf 2024..2099, CA from the test run for ten years: the CA's period. */
        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_OK(pair_handshake(&p));
        ASSERT_OK(NTS_tls_info(p.client, &info));
        ASSERT_EQ(info.not_before, 1704067200);
        ASSERT_TRUE(info.valid_from > now - 3600 && info.valid_from <= now);
        ASSERT_TRUE(info.valid_until > now + 3649 * 24 * 3600 && info.valid_until < info.not_after);
        pair_free(&p);

        /* Leaf 2020..2021 under that CA, accepted without time checks (the bootstrap's
         * handshake): no time at all. */
        pair_new(&p, &(ServerSetup) { .chain = "expired-chain.pem" },
                 &(NTS_TLSOptions) { .hostname = "localhost", .no_verify_time = true });
        ASSERT_OK(pair_handshake(&p));
        ASSERT_OK(NTS_tls_info(p.client, &info));
        ASSERT_TRUE(info.valid_from > info.valid_until);
        pair_free(&p);
}

static void test_server_without_alpn_is_refused(void) {
        assert_refused(&(ServerSetup) { .alpn = SERVER_ALPN_NONE }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EPROTO, "did not select ALPN protocol \"ntske/1\"");
}

static void test_server_with_other_alpn_is_refused(void) {
        /* libssl itself refuses a protocol it did not offer (in its ALPN parser, which the
         * message names); our own check would say so too. */
        assert_refused(&(ServerSetup) { .alpn = SERVER_ALPN_OTHER }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EPROTO, "alpn");
}

static void test_server_refusing_alpn_is_refused_with_its_alert(void) {
        assert_refused(&(ServerSetup) { .alpn = SERVER_ALPN_REFUSE }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EPROTO, "peer sent TLS alert: no application protocol");
}

static void test_tls12_only_server_is_refused(void) {
        assert_refused(&(ServerSetup) { .max_version = TLS1_2_VERSION }, &(NTS_TLSOptions) { .hostname = "localhost" },
                       EPROTO, "peer sent TLS alert: protocol version");
}

static void test_peer_closing_during_handshake_is_an_error(void) {
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_ERROR(NTS_tls_handshake(p.client), EAGAIN);
        ASSERT_EQ(NTS_tls_events(p.client), EPOLLIN);
        p.fds[1] = safe_close(p.fds[1]);
        ASSERT_TRUE(NTS_tls_handshake(p.client) < 0);
        ASSERT_TRUE(strstr(NTS_tls_error(p.client), "TLS handshake: "));
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
        pair_free(&p);
}

static void test_data_flows_and_orderly_close_reads_zero(void) {
        char buf[64];
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_OK(pair_handshake(&p));

        ASSERT_EQ(NTS_tls_write(p.client, "request", 7), 7);
        ASSERT_EQ(sym_SSL_read(p.server, buf, sizeof(buf)), 7);
        ASSERT_MEMEQ(buf, "request", 7);

        /* Nothing sent yet: the read waits. (The server's session tickets are consumed.) */
        ASSERT_ERROR(NTS_tls_read(p.client, buf, sizeof(buf)), EAGAIN);
        ASSERT_EQ(NTS_tls_events(p.client), EPOLLIN);

        ASSERT_EQ(sym_SSL_write(p.server, "response", 8), 8);
        ASSERT_EQ(NTS_tls_read(p.client, buf, sizeof(buf)), 8);
        ASSERT_MEMEQ(buf, "response", 8);

        ASSERT_TRUE(sym_SSL_shutdown(p.server) >= 0);
        ASSERT_EQ(NTS_tls_read(p.client, buf, sizeof(buf)), 0);
        NTS_tls_shutdown(p.client);
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
        pair_free(&p);
}

static void test_close_without_close_notify_is_an_error(void) {
        char buf[64];
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_OK(pair_handshake(&p));
        p.fds[1] = safe_close(p.fds[1]);
        ASSERT_TRUE(NTS_tls_read(p.client, buf, sizeof(buf)) < 0);
        ASSERT_TRUE(strstr(NTS_tls_error(p.client), "TLS read: "));
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
        pair_free(&p);
}

/* Leaves an entry in this thread's OpenSSL error queue, as unrelated code might: a PEM error
 * (not a system error, which SSL_get_error() would take for errno). */
static void push_stale_error(void) {
        SSL_CTX *ctx = sym_SSL_CTX_new(sym_TLS_client_method());

        ASSERT_TRUE(ctx);
        ASSERT_TRUE(sym_SSL_CTX_use_certificate_chain_file(ctx, cert_path("server.key")) != 1);
        sym_SSL_CTX_free(ctx);
        ASSERT_TRUE(sym_ERR_peek_last_error() != 0);
}

static void test_stale_errors_in_the_queue_are_neither_misread_nor_left(void) {
        int rc = -EAGAIN, rs = -EAGAIN;
        char buf[16];
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });

        /* SSL_get_error() misreads a would-block as a failure when the queue is not empty. */
        for (unsigned i = 0; i < 100 && (rc == -EAGAIN || rs == -EAGAIN); i++) {
                if (rc == -EAGAIN) {
                        push_stale_error();
                        rc = NTS_tls_handshake(p.client);
                        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
                }
                if (rs == -EAGAIN)
                        rs = server_tls_handshake(p.server, NULL);
        }
        ASSERT_OK(rc);
        ASSERT_OK(rs);

        push_stale_error();
        ASSERT_ERROR(NTS_tls_read(p.client, buf, sizeof(buf)), EAGAIN);
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);

        push_stale_error();
        ASSERT_EQ(NTS_tls_write(p.client, "x", 1), 1);
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
        pair_free(&p);
}

static void test_dead_peer_is_an_error_not_a_signal(void) {
        struct sigaction sa = { .sa_handler = SIG_DFL }, old;
        sigset_t pending;
        Pair p;

        pair_new(&p, &(ServerSetup) {}, &(NTS_TLSOptions) { .hostname = "localhost" });
        ASSERT_OK(pair_handshake(&p));
        p.fds[1] = safe_close(p.fds[1]);

        /* With the default disposition a SIGPIPE would kill this test. */
        ASSERT_OK(sigaction(SIGPIPE, &sa, &old));
        ASSERT_ERROR(NTS_tls_write(p.client, "request", 7), EPIPE);
        ASSERT_TRUE(strstr(NTS_tls_error(p.client), "TLS write: "));
        NTS_tls_shutdown(p.client);
        ASSERT_OK(sigpending(&pending));
        ASSERT_FALSE(sigismember(&pending, SIGPIPE));
        ASSERT_OK(sigaction(SIGPIPE, &old, NULL));
        pair_free(&p);
}

/* NTS_tls_new() refuses o with error, and its message contains each of the words. */
static void assert_setup_refused(const NTS_TLSOptions *o, int error, const char *message, const char *path) {
        NTS_TLS *t = NULL;
        char e[256] = "unset";
        int fds[2];

        ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds));
        ASSERT_ERROR(NTS_tls_new(fds[0], o, &t, e, sizeof(e)), error);
        ASSERT_TRUE(t == NULL);
        fprintf(stderr, "    refused: %s\n", e);
        if (!strstr(e, message) || !strstr(e, path)) {
                fprintf(stderr, "expected \"%s\" and \"%s\" in \"%s\"\n", message, path, e);
                abort();
        }
        ASSERT_EQ(sym_ERR_peek_last_error(), 0);
        safe_close(fds[0]);
        safe_close(fds[1]);
}

static void test_ca_file_without_certificate_says_so(void) {
        static const char *const files[] = { "empty.pem", "garbage.pem", "server.key", "crl-only.pem" };
        char cmd[2048];

        snprintf(cmd, sizeof(cmd),
                 "cd '%s' && : >empty.pem && printf 'not a certificate\\n' >garbage.pem && "
                 "mkdir -p crldb && : >crldb/index.txt && "
                 "printf '[ca]\\ndefault_ca=c\\n[c]\\ndatabase=crldb/index.txt\\ndefault_md=sha256\\ndefault_crl_days=1\\n' >crl.cnf && "
                 "openssl ca -gencrl -config crl.cnf -keyfile ca.key -cert ca.pem -out crl-only.pem 2>/dev/null",
                 certs);
        ASSERT_EQ(system(cmd), 0);

        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                assert_setup_refused(&(NTS_TLSOptions) { .hostname = "localhost", .ca_file = cert_path(files[i]) },
                                     ENODATA, "contains no certificate", cert_path(files[i]));
}

static void test_unusable_ca_file_or_directory_says_why(void) {
        char cmd[1024];

        snprintf(cmd, sizeof(cmd),
                 "mkdir -p '%s' && printf -- '-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\\n' >'%s'",
                 cert_path("nohashdir"), cert_path("broken.pem"));
        ASSERT_EQ(system(cmd), 0);

        assert_setup_refused(&(NTS_TLSOptions) { .hostname = "localhost", .ca_file = cert_path("missing.pem") },
                             ENOENT, "cannot be read: No such file or directory", cert_path("missing.pem"));
        assert_setup_refused(&(NTS_TLSOptions) { .hostname = "localhost", .ca_file = cert_path("broken.pem") },
                             EBADMSG, "is not a PEM certificate file", cert_path("broken.pem"));
        assert_setup_refused(&(NTS_TLSOptions) { .hostname = "localhost", .ca_dir = cert_path("nohashdir") },
                             ENODATA, "contains no certificate under a subject-hash name", cert_path("nohashdir"));
        assert_setup_refused(&(NTS_TLSOptions) { .hostname = "localhost", .ca_dir = cert_path("missingdir") },
                             ENOENT, "cannot be read", cert_path("missingdir"));
        assert_setup_refused(&(NTS_TLSOptions) { .hostname = "" }, EINVAL, "no server name", "");
}

static void setup(void) {
        test_tls_setup(certs, ".");
}

static void cleanup(void) {
        test_tls_cleanup(certs);
}

TEST_MAIN(TEST_CASE(setup),
          TEST_CASE(test_handshake_exports_the_keys_the_server_derives),
          TEST_CASE(test_gcm_siv_keys_follow_the_exporter_context),
          TEST_CASE(test_export_refuses_small_buffers_and_unknown_aead),
          TEST_CASE(test_name_is_sent_as_sni),
          TEST_CASE(test_ip_literal_verifies_ip_san_and_sends_no_sni),
          TEST_CASE(test_ip_literal_not_in_certificate_is_refused),
          TEST_CASE(test_wrong_hostname_is_refused),
          TEST_CASE(test_hostname_mismatch_names_both_sides),
          TEST_CASE(test_expired_certificate_is_refused),
          TEST_CASE(test_not_yet_valid_certificate_is_refused),
          TEST_CASE(test_unknown_ca_is_refused),
          TEST_CASE(test_refused_certificate_is_shown_with_the_reason),
          TEST_CASE(test_long_san_list_is_cut_whole_names_first),
          TEST_CASE(test_hostname_mismatch_cuts_a_long_name_list),
          TEST_CASE(test_trusting_the_other_ca_accepts_its_chain),
          TEST_CASE(test_ca_dir_is_a_trust_anchor),
          TEST_CASE(test_system_store_is_used_without_ca_file),
          TEST_CASE(test_system_store_prefers_the_hashed_directory),
          TEST_CASE(test_system_store_directory_is_not_parsed_up_front),
          TEST_CASE(test_no_verify_time_accepts_expired_and_future),
          TEST_CASE(test_no_verify_time_still_refuses_wrong_name_and_unknown_ca),
          TEST_CASE(test_verify_time_is_the_time_checked),
          TEST_CASE(test_issuer_not_yet_valid_is_reported_before_an_expired_leaf),
          TEST_CASE(test_chain_validity_is_the_intersection_of_the_chain),
          TEST_CASE(test_server_without_alpn_is_refused),
          TEST_CASE(test_server_with_other_alpn_is_refused),
          TEST_CASE(test_server_refusing_alpn_is_refused_with_its_alert),
          TEST_CASE(test_tls12_only_server_is_refused),
          TEST_CASE(test_peer_closing_during_handshake_is_an_error),
          TEST_CASE(test_data_flows_and_orderly_close_reads_zero),
          TEST_CASE(test_close_without_close_notify_is_an_error),
          TEST_CASE(test_stale_errors_in_the_queue_are_neither_misread_nor_left),
          TEST_CASE(test_dead_peer_is_an_error_not_a_signal),
          TEST_CASE(test_ca_file_without_certificate_says_so),
          TEST_CASE(test_unusable_ca_file_or_directory_says_why),
          TEST_CASE(cleanup));
