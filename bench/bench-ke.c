/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* NTS-KE cost on the client: N sessions of nts-ke-client (TCP connect, TLS 1.3 handshake with
 * certificate verification, request, response, key export) one after the other in one
 * process, against a server on loopback. One line per session: wall time from the start of
 * the session to the handler (keys and cookies in hand), and the CPU time this process spent
 * meanwhile (user + system, CLOCK_PROCESS_CPUTIME_ID). The first session also pays for loading
 * libssl and libcrypto; run.sh reports it apart.
 *
 * CAFILE "-" trusts the system store.
 *
 * bench-ke ADDRESS PORT HOSTNAME CAFILE|- [COUNT] */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "crypto-util.h"
#include "nts-crypto.h"
#include "nts-ke-client.h"
#include "ssl-util.h"

static double clock_ns(clockid_t id) {
        struct timespec ts;

        clock_gettime(id, &ts);
        return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

int main(int argc, char *argv[]) {
        SocketAddress a;
        NTS_AEADAlgorithm offer[8];
        int n_offer, count = 1, r;

        if (argc < 5 || argc > 6) {
                fprintf(stderr, "usage: %s ADDRESS PORT HOSTNAME CAFILE [COUNT]\n", argv[0]);
                return EXIT_FAILURE;
        }
        if (argc == 6)
                count = atoi(argv[5]);
        if (socket_address_from_string(argv[1], (uint16_t) atoi(argv[2]), &a) < 0 || count < 1) {
                fprintf(stderr, "bad address, port or count\n");
                return EXIT_FAILURE;
        }

        printf("# session\twall_us\tcpu_us\tcookies\n");
        for (int i = 0; i < count; i++) {
                double t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
                NTS_KEResult *result = NULL;

                /* What the daemon does before each exchange (loads the libraries the first time). */
                n_offer = NTS_aead_offer(offer, ELEMENTSOF(offer));
                if (n_offer < 0) {
                        fprintf(stderr, "libcrypto unusable\n");
                        return EXIT_FAILURE;
                }

                NTS_KEClientParams p = {
                        .addresses = &a,
                        .n_addresses = 1,
                        .tls = { .hostname = argv[3], .ca_file = streq(argv[4], "-") ? NULL : argv[4] },
                        .aead = offer,
                        .n_aead = (size_t) n_offer,
                        .timeout_usec = 10 * USEC_PER_SEC,
                };
                /* Its own event loop per session, as nts-query does it. */
                r = NTS_ke_client_run(&p, &result);
                if (r < 0) {
                        fprintf(stderr, "cannot run a key exchange: %s\n", strerror(-r));
                        return EXIT_FAILURE;
                }

                double t1 = clock_ns(CLOCK_MONOTONIC), c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
                if (result->error < 0) {
                        fprintf(stderr, "key exchange failed: %s\n", result->reason);
                        NTS_ke_result_free(result);
                        return EXIT_FAILURE;
                }
                printf("%d\t%.1f\t%.1f\t%zu\n", i, (t1 - t0) / 1e3, (c1 - c0) / 1e3, result->n_cookies);
                NTS_ke_result_free(result);
        }
        return 0;
}
