/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Where the memory of NTS goes, and what of it can be given back. This process follows the
 * daemon's path step by step (load libcrypto, make an AES-SIV context and seal one packet, load
 * libssl, one key exchange, ten more), then tries what might give memory back once the key
 * exchanges are over: malloc_trim(0), dlclose() of libssl, and as a what-if that the daemon
 * does not do, dropping the pages of libssl's and libcrypto's code from this process
 * (MADV_DONTNEED on their executable mappings) and then running one poll's crypto.
 *
 * After each step it prints VmRSS, RssAnon and RssFile (KiB, /proc/self/status), the Rss of
 * the libcrypto and of the libssl mappings (/proc/self/smaps) and whether libssl is mapped.
 * File-backed pages are library code and read-only data touched so far, shared with every
 * other process mapping the same files; anonymous ones are this process's own (heap,
 * relocations). CAFILE "-" trusts the system store.
 *
 * --openssl-init=no-config, =no-strings or both initialises libcrypto and libssl with
 * OPENSSL_INIT_NO_LOAD_CONFIG and without the error strings before their first use, to
 * measure what those cost.
 *
 * bench-memory-stages [--openssl-init=no-config,no-strings] ADDRESS PORT HOSTNAME CAFILE */

#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "crypto-util.h"
#include "log.h"
#include "nts-crypto.h"
#include "nts-ke-client.h"
#include "ssl-util.h"
#include "string-util.h"

static bool is_openssl(const char *path, bool *ret_ssl) {
        const char *base = strrchr(path, '/');

        base = base ? base + 1 : path;
        *ret_ssl = startswith(base, "libssl.so");
        return *ret_ssl || startswith(base, "libcrypto.so");
}

static void report(const char *stage) {
        char line[512], path[512];
        long rss = -1, anon = -1, file = -1, crypto = 0, ssl_rss = 0, v;
        bool in_openssl = false, ssl = false, ssl_mapped = false;
        FILE *f;

        f = fopen("/proc/self/status", "re");
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

        f = fopen("/proc/self/smaps", "re");
        if (!f) {
                perror("/proc/self/smaps");
                exit(EXIT_FAILURE);
        }
        while (fgets(line, sizeof line, f)) {
                unsigned long from, to;

                /* A mapping's first line: "from-to perms offset dev inode [path]". */
                if (sscanf(line, "%lx-%lx ", &from, &to) == 2 && strchr(line, '-') < strchr(line, ' ')) {
                        path[0] = 0;
                        (void) sscanf(line, "%*s %*s %*s %*s %*s %511s", path);
                        in_openssl = is_openssl(path, &ssl);
                        ssl_mapped = ssl_mapped || ssl;
                        continue;
                }
                if (in_openssl && sscanf(line, "Rss: %ld", &v) == 1)
                        *(ssl ? &ssl_rss : &crypto) += v;
        }
        fclose(f);

        printf("%s\t%ld\t%ld\t%ld\t%ld\t%ld\t%s\n", stage, rss, anon, file, crypto, ssl_rss, ssl_mapped ? "yes" : "no");
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

/* OPENSSL_init_crypto() and OPENSSL_init_ssl() are not among the sym_ pointers (the daemon
 * does not call them): found in the loaded libraries by name. */
static void openssl_init(const char *soname, const char *function, uint64_t flags) {
        void *dl = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
        int (*init)(uint64_t, const OPENSSL_INIT_SETTINGS *) = dl ? dlsym(dl, function) : NULL;

        if (!init || init(flags, NULL) != 1) {
                fprintf(stderr, "%s(0x%llx) failed\n", function, (unsigned long long) flags);
                exit(EXIT_FAILURE);
        }
        (void) dlclose(dl);
}

/* The what-if: the pages of a library's code leave this process's page tables; they stay in
 * the page cache and come back on the next call (a minor fault). Only executable mappings:
 * the read-only data after relocation (RELRO) is this process's own copy, and dropping it
 * would bring back the unrelocated file contents (it crashed when tried). */
static void drop_code_pages(void) {
        char line[512], path[512], perms[8];
        FILE *f = fopen("/proc/self/maps", "re");
        bool ssl;

        if (!f) {
                perror("/proc/self/maps");
                exit(EXIT_FAILURE);
        }
        while (fgets(line, sizeof line, f)) {
                unsigned long from, to;

                path[0] = 0;
                if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %511s", &from, &to, perms, path) < 3)
                        continue;
                if (perms[2] != 'x' || !is_openssl(path, &ssl))
                        continue;
                if (madvise((void *) from, to - from, MADV_DONTNEED) < 0) {
                        perror("madvise");
                        exit(EXIT_FAILURE);
                }
        }
        fclose(f);
}

/* What each poll does with libcrypto: seal a request, open a reply. */
static int one_poll(NTS_AEADContext *aead) {
        uint8_t nonce[16] = { 2 }, ad[48] = { 0x23 }, plain[100] = { 3 }, sealed[128], opened[128];
        struct iovec n = { nonce, sizeof nonce }, out = { sealed, sizeof sealed }, back = { opened, sizeof opened };
        int r;

        r = NTS_aead_encrypt(aead, &(struct iovec) { ad, sizeof ad }, 1, &n, &(struct iovec) { plain, sizeof plain }, &out);
        if (r < 0)
                return r;
        r = NTS_aead_decrypt(aead, &(struct iovec) { ad, sizeof ad }, 1, &n, &out, &back);
        if (r < 0)
                return r;
        return back.iov_len == sizeof plain && memcmp(opened, plain, sizeof plain) == 0 ? 0 : -EBADMSG;
}

int main(int argc, char *argv[]) {
        uint8_t key[32] = { 1 };
        NTS_AEADContext *aead = NULL;
        const char *ca_file;
        bool no_config = false, no_strings = false;
        SocketAddress a;
        void *dl;

        if (argc > 1 && startswith(argv[1], "--openssl-init=")) {
                no_config = strstr(argv[1], "no-config");
                no_strings = strstr(argv[1], "no-strings");
                if (!no_config && !no_strings) {
                        fprintf(stderr, "--openssl-init= takes no-config, no-strings or both\n");
                        return EXIT_FAILURE;
                }
                argc--, argv++;
        }
        if (argc != 5) {
                fprintf(stderr, "usage: bench-memory-stages [--openssl-init=no-config,no-strings] ADDRESS PORT HOSTNAME CAFILE|-\n");
                return EXIT_FAILURE;
        }
        if (socket_address_from_string(argv[1], (uint16_t) atoi(argv[2]), &a) < 0) {
                fprintf(stderr, "bad address or port\n");
                return EXIT_FAILURE;
        }
        ca_file = streq(argv[4], "-") ? NULL : argv[4];

        printf("# stage\trss_kib\tanon_kib\tfile_kib\tlibcrypto_kib\tlibssl_kib\tlibssl_mapped\n");
        report("start");
        if (dlopen_libcrypto(LOG_ERR) < 0)
                return EXIT_FAILURE;
        if (no_config || no_strings)
                openssl_init(LIBCRYPTO_SONAME, "OPENSSL_init_crypto",
                             (no_config ? OPENSSL_INIT_NO_LOAD_CONFIG : 0) |
                             (no_strings ? OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS : 0));
        report("libcrypto loaded");

        if (NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_256, &(struct iovec) { key, sizeof key }, &aead) < 0 ||
            one_poll(aead) < 0) {
                fprintf(stderr, "AES-SIV unusable\n");
                return EXIT_FAILURE;
        }
        report("AES-SIV context, one packet sealed");

        if (dlopen_libssl(LOG_ERR) < 0)
                return EXIT_FAILURE;
        if (no_config || no_strings)
                openssl_init(LIBSSL_SONAME, "OPENSSL_init_ssl",
                             (no_config ? OPENSSL_INIT_NO_LOAD_CONFIG : 0) |
                             (no_strings ? OPENSSL_INIT_NO_LOAD_SSL_STRINGS | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS : 0));
        report("libssl loaded");

        if (key_exchange(&a, argv[3], ca_file) < 0)
                return EXIT_FAILURE;
        report("after one key exchange");
        for (int i = 0; i < 10; i++)
                if (key_exchange(&a, argv[3], ca_file) < 0)
                        return EXIT_FAILURE;
        report("after ten more");

        (void) malloc_trim(0);
        report("malloc_trim(0)");

        /* Two references to drop: this one and the one ssl-util.c holds. Nothing calls into
         * libssl after this, should it really go. */
        dl = dlopen(LIBSSL_SONAME, RTLD_NOW | RTLD_NOLOAD);
        if (dl) {
                (void) dlclose(dl);
                (void) dlclose(dl);
        }
        report("libssl dlclose()d");

        drop_code_pages();
        report("what-if: OpenSSL code pages dropped");
        if (one_poll(aead) < 0) {
                fprintf(stderr, "AES-SIV failed after the code pages were dropped\n");
                return EXIT_FAILURE;
        }
        report("what-if: then one poll's crypto");

        NTS_aead_free(aead);
        return 0;
}
