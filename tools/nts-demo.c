/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Shows one complete NTS exchange on loopback without touching the system: makes a test PKI in
 * a temporary directory, starts the mock NTS server on 127.0.0.1, runs one NTS-KE session and
 * one authenticated NTP query with our client modules and prints what was negotiated. */

#include <inttypes.h>
#include <stdio.h>

#include "crypto-util.h"
#include "iovec-util.h"
#include "log.h"
#include "mock-harness.h"

#define FINGERPRINT_LABEL "nts-demo key fingerprint"

/* The keys are secret, so the demo prints a check value instead of the keys or a plain hash of
 * them: HMAC-SHA256 keyed with the key over a fixed label. It goes through the EVP_MAC
 * pointers crypto-util.h already has (no new libcrypto symbol for a demo), and reveals nothing
 * a hash of the key would not. Reproduce it with
 *   printf %s 'nts-demo key fingerprint' | openssl mac -digest SHA256 -macopt hexkey:KEY HMAC */
static int key_fingerprint(const struct iovec *key, char ret[static 17]) {
        OSSL_PARAM params[2];
        uint8_t out[EVP_MAX_MD_SIZE];
        EVP_MAC_CTX *ctx = NULL;
        EVP_MAC *mac = NULL;
        size_t l = 0;
        int r = -EIO;

        r = dlopen_libcrypto(LOG_ERR);
        if (r < 0)
                return r;

        params[0] = sym_OSSL_PARAM_construct_utf8_string("digest", (char *) "SHA256", 0);
        params[1] = sym_OSSL_PARAM_construct_end();

        r = -EIO;
        mac = sym_EVP_MAC_fetch(NULL, "HMAC", NULL);
        if (mac)
                ctx = sym_EVP_MAC_CTX_new(mac);
        if (ctx && sym_EVP_MAC_init(ctx, key->iov_base, key->iov_len, params) == 1 &&
            sym_EVP_MAC_update(ctx, (const uint8_t *) FINGERPRINT_LABEL,
                               strlen(FINGERPRINT_LABEL)) == 1 &&
            sym_EVP_MAC_final(ctx, out, &l, sizeof(out)) == 1 && l >= 8) {
                for (size_t i = 0; i < 8; i++)
                        snprintf(ret + 2 * i, 3, "%02x", out[i]);
                r = 0;
        }
        sym_EVP_MAC_CTX_free(ctx);
        sym_EVP_MAC_free(mac);
        return r;
}

static int demo(const char *certs) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c2s = NULL, *s2c = NULL;
        _cleanup_(NTS_ke_result_freep) NTS_KEResult *ke = NULL;
        _cleanup_free_ char *ca = NULL;
        char a[SOCKET_ADDRESS_STRING_MAX], fp_c2s[17], fp_s2c[17];
        SocketAddress ntp_server;
        NTS_NTPResult ntp;
        MockProcess mock;
        int r;

        if (asprintf(&ca, "%s/ca.pem", certs) < 0)
                return log_oom();

        r = mock_server_start(certs, &(MockOptions) {}, &mock);
        if (r < 0)
                return r;

        printf("NTS-KE server:    %s (mock, certificate for localhost from a fresh test CA)\n",
               socket_address_to_string(&mock.ke_address, a));

        r = harness_run_ke(&mock.ke_address, 1, "localhost", ca, 10 * USEC_PER_SEC, &ke);
        if (r < 0) {
                mock_server_stop(&mock);
                return log_error_errno(r, "Failed to run NTS-KE: %m");
        }
        if (ke->error < 0) {
                mock_server_stop(&mock);
                return log_error_errno(ke->error, "NTS-KE failed (%s stage): %s",
                                       NTS_ke_stage_to_string(ke->stage), ke->reason);
        }

        printf("TLS:              %s, %s, server certificate %s issued by %s\n", ke->tls.version,
               ke->tls.cipher, ke->tls.subject, ke->tls.issuer);
        printf("AEAD:             %s (%u)\n", strna(NTS_aead_name(ke->aead)), ke->aead);
        printf("cookies:          %zu, sizes", ke->n_cookies);
        for (size_t i = 0; i < ke->n_cookies; i++)
                printf(" %zu", ke->cookies[i].iov_len);
        printf(" bytes\n");
        printf("negotiated NTP:   server %s, port %s%u\n",
               ke->ntp_server ?: "(none: the KE server's address)", ke->ntp_port ? "" : "(none) ",
               ke->ntp_port ?: NTP_PORT);

        r = key_fingerprint(&ke->c2s_key, fp_c2s);
        if (r >= 0)
                r = key_fingerprint(&ke->s2c_key, fp_s2c);
        if (r < 0) {
                mock_server_stop(&mock);
                return log_error_errno(r, "Failed to compute key fingerprints: %m");
        }
        printf("C2S key:          %zu bytes, HMAC-SHA256 check value %s\n", ke->c2s_key.iov_len,
               fp_c2s);
        printf("S2C key:          %zu bytes, HMAC-SHA256 check value %s\n", ke->s2c_key.iov_len,
               fp_s2c);

        r = harness_ntp_address(ke, &ntp_server);
        if (r >= 0)
                r = harness_aead_contexts(ke, &c2s, &s2c);
        if (r < 0) {
                mock_server_stop(&mock);
                return r;
        }

        NTS_NTPQueryParams p = {
                .c2s = c2s,
                .s2c = s2c,
                .cookie = ke->cookies[0],
                .timeout_usec = 5 * USEC_PER_SEC,
        };
        r = NTS_ntp_client_query(&ntp_server, &p, &ntp);
        mock_server_stop(&mock);
        if (r < 0)
                return log_error_errno(r, "NTS-protected NTP query to %s failed: %s%s",
                                       socket_address_to_string(&ntp_server, a),
                                       strna(NTS_error_string(ntp.nts_error)),
                                       r == -ETIMEDOUT ? " (timeout)" : "");

        printf("NTP server:       %s, stratum %u, authenticated, %zu new cookie(s)\n",
               socket_address_to_string(&ntp_server, a), ntp.header.stratum, ntp.n_cookies);
        printf("offset:           %+.6f ms\n", (double) ntp.sample.offset_nsec / 1e6);
        printf("delay:            %.6f ms\n", (double) ntp.sample.delay_nsec / 1e6);
        NTS_ntp_result_done(&ntp);
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(mock_certs_removep) char *certs = NULL;
        int r;

        /* The mock server logs every session at info level; the demo's output is what matters
         * here. An explicit SYSTEMD_LOG_LEVEL still shows everything. */
        (void) setenv("SYSTEMD_LOG_LEVEL", "warning", /* overwrite= */ 0);
        log_parse_environment();

        r = mock_certs_make(&certs);
        if (r < 0) {
                log_error_errno(r, "Failed to make test certificates: %m");
                return EXIT_FAILURE;
        }

        return demo(certs) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
