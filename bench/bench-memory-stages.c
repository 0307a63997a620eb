/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Where the memory of NTS goes: this process follows the daemon's path step by step (load
 * libcrypto, make an AES-SIV context and seal one packet, load libssl, one key exchange, ten
 * more) and prints its VmRSS, RssAnon and RssFile (KiB, /proc/self/status) after each step.
 * File-backed pages are library text and read-only data touched so far, shared with every
 * other process mapping the same files; anonymous ones are this process's own (heap,
 * relocations). CAFILE "-" trusts the system store.
 *
 * bench-memory-stages ADDRESS PORT HOSTNAME CAFILE */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto-util.h"
#include "log.h"
#include "nts_crypto.h"
#include "nts_ke_client.h"
#include "ssl-util.h"

static void report(const char *stage) {
        char line[256];
        long rss = -1, anon = -1, file = -1;
        FILE *f = fopen("/proc/self/status", "re");

        if (!f) {
                perror("/proc/self/status");
                exit(EXIT_FAILURE);
        }
        while (fgets(line, sizeof line, f)) {
                (void) sscanf(line, "VmRSS: %ld", &rss);
                (void) sscanf(line, "RssAnon: %ld", &anon);
                (void) sscanf(line, "RssFile: %ld", &file);
        }
        fclose(f);
        printf("%s\t%ld\t%ld\t%ld\n", stage, rss, anon, file);
}

static int key_exchange(const SocketAddress *a, const char *hostname, const char *ca_file) {
        NTS_AEADAlgorithm offer[8];
        NTS_KEResult *result = NULL;
        int n_offer, r;

        n_offer = NTS_aead_offer(offer, ELEMENTSOF(offer));
        if (n_offer < 0)
                return n_offer;
        r = NTS_ke_client_run(&(NTS_KEClientParams) {
                        .addresses = a,
                        .n_addresses = 1,
                        .tls = { .hostname = hostname, .ca_file = ca_file },
                        .aead = offer,
                        .n_aead = (size_t) n_offer,
                        .timeout_usec = 10 * USEC_PER_SEC,
                }, &result);
        if (r >= 0 && result->error < 0) {
                fprintf(stderr, "key exchange failed: %s\n", result->reason);
                r = result->error;
        }
        NTS_ke_result_free(result);
        return r;
}

int main(int argc, char *argv[]) {
        uint8_t key[32] = { 1 }, nonce_bytes[16] = { 2 }, packet[48] = { 0x23 }, sealed[128];
        NTS_AEADContext *aead = NULL;
        const char *ca_file;
        SocketAddress a;

        if (argc != 5) {
                fprintf(stderr, "usage: %s ADDRESS PORT HOSTNAME CAFILE|-\n", argv[0]);
                return EXIT_FAILURE;
        }
        if (socket_address_from_string(argv[1], (uint16_t) atoi(argv[2]), &a) < 0) {
                fprintf(stderr, "bad address or port\n");
                return EXIT_FAILURE;
        }
        ca_file = streq(argv[4], "-") ? NULL : argv[4];

        printf("# stage\trss_kib\tanon_kib\tfile_kib\n");
        report("start");
        if (dlopen_libcrypto(LOG_ERR) < 0)
                return EXIT_FAILURE;
        report("libcrypto loaded");

        struct iovec out = { sealed, sizeof sealed };
        if (NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_256, &(struct iovec) { key, sizeof key }, &aead) < 0 ||
            NTS_aead_encrypt(aead, &(struct iovec) { packet, sizeof packet }, 1,
                             &(struct iovec) { nonce_bytes, sizeof nonce_bytes }, &(struct iovec) {}, &out) < 0) {
                fprintf(stderr, "AES-SIV unusable\n");
                return EXIT_FAILURE;
        }
        report("AES-SIV context, one packet sealed");

        if (dlopen_libssl(LOG_ERR) < 0)
                return EXIT_FAILURE;
        report("libssl loaded");

        if (key_exchange(&a, argv[3], ca_file) < 0)
                return EXIT_FAILURE;
        report("after one key exchange");
        for (int i = 0; i < 10; i++)
                if (key_exchange(&a, argv[3], ca_file) < 0)
                        return EXIT_FAILURE;
        report("after ten more");
        NTS_aead_free(aead);
        return 0;
}
