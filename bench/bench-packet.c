/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Per-packet cost of NTS on the client: building a request (AES-SIV-CMAC-256, one cookie of
 * 100 bytes as chrony hands out, seven placeholders) and verifying a response carrying eight
 * new cookies, against plain NTP header work and against libcrypto's own way of doing the
 * same AES-SIV operations on the same bytes (its AES-SIV cipher and its EVP_MAC CMAC, called
 * directly through the sym_ pointers): the "floor" cases, which were the floor when the daemon
 * still used them and are the baseline that src/shared/aes-siv.c is measured against now.
 *
 * Output, one line per case: name, median ns/op, minimum ns/op, allocations/op. Every case
 * runs once per round, rounds interleave the cases, so a ratio taken within one round sees the
 * same machine load on both sides; `ratio NAME/FLOOR median` lines give the median over rounds
 * of those per-round ratios. Under callgrind (`valgrind --tool=callgrind`) each case runs a
 * fixed number of times between a zeroing and a dump of the counters instead, and the dumps
 * (named after the case) give instructions/op. */

#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc-count.h"
#include "crypto-util.h"
#include "iovec-util.h"
#include "log.h"
#include "ntp-packet.h"
#include "nts-server-ef.h"
#include "nts-crypto.h"
#include "nts-extfields.h"
#include "random-util.h"
#include "unaligned.h"

#if HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s)
#endif

#define COOKIE_SIZE 100
#define N_PLACEHOLDERS 7
#define N_RESPONSE_COOKIES 8
#define KEY_SIZE 32

static struct {
        uint8_t c2s_key[KEY_SIZE], s2c_key[KEY_SIZE];
        NTS_AEADContext *c2s, *s2c;
        uint8_t cookie[COOKIE_SIZE];
        uint8_t new_cookies[N_RESPONSE_COOKIES][COOKIE_SIZE];

        uint8_t request[NTS_MAX_PACKET_SIZE];
        size_t request_size;
        NTS_Query query;
        uint8_t response[NTS_MAX_PACKET_SIZE];
        size_t response_size;
        uint8_t scratch[NTS_MAX_PACKET_SIZE];

        /* The request's authenticator: associated data and nonce, for the floor. */
        struct iovec req_ad, req_nonce;
        /* The response's authenticator, for the floor. */
        struct iovec resp_ad, resp_nonce, resp_ct;

        EVP_CIPHER *siv;
        EVP_CIPHER_CTX *decrypt_template, *work;
        EVP_MAC_CTX *cmac;
        volatile unsigned sink;
} B;

static void fail(const char *what) {
        fprintf(stderr, "bench-packet: %s failed\n", what);
        exit(EXIT_FAILURE);
}

static void check(int r, const char *what) {
        if (r < 0)
                fail(what);
}

static void fill(uint8_t *p, size_t n, uint8_t seed) {
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t) (seed + i * 13);
}

static void client_header(uint8_t buf[static NTP_HEADER_SIZE]) {
        NTPHeader h = {
                .leap = NTP_LEAP_NOTINSYNC,
                .version = NTP_VERSION,
                .mode = NTP_MODE_CLIENT,
                .transmit = { 0xeb000000, 0x9abcdef0 },
        };
        ntp_header_encode(&h, buf);
}

/* Finds the authenticator of packet (fields after header_size) and splits it the way RFC 8915
 * section 5.6 lays it out. */
static void split_authenticator(const uint8_t *packet, size_t size, struct iovec *ad, struct iovec *nonce,
                                struct iovec *ct) {
        struct iovec p = IOVEC_MAKE(packet + NTP_HEADER_SIZE, size - NTP_HEADER_SIZE);
        NTS_ExtensionField ef;

        while (NTS_ef_next(&p, &ef) >= 0)
                if (ef.type == NTP_EF_NTS_AUTH_AND_EEF) {
                        const uint8_t *b = ef.body.iov_base;
                        size_t nl = unaligned_read_be16(b), cl = unaligned_read_be16(b + 2);

                        *ad = IOVEC_MAKE(packet, (size_t) (b - 4 - packet));
                        *nonce = IOVEC_MAKE(b + 4, nl);
                        *ct = IOVEC_MAKE(b + 4 + ALIGN4(nl), cl);
                        return;
                }
        fail("finding the authenticator");
}

/* An AES-128-CMAC keyed with key, as a libcrypto user would make it. */
static EVP_MAC_CTX *cmac_new(const uint8_t *key, size_t size) {
        EVP_MAC *mac = sym_EVP_MAC_fetch(NULL, "CMAC", NULL);
        EVP_MAC_CTX *ctx = mac ? sym_EVP_MAC_CTX_new(mac) : NULL;
        OSSL_PARAM params[] = {
                sym_OSSL_PARAM_construct_utf8_string("cipher", (char *) "AES-128-CBC", 0),
                sym_OSSL_PARAM_construct_end(),
        };

        sym_EVP_MAC_free(mac);
        if (!ctx || !sym_EVP_MAC_init(ctx, key, size, params))
                fail("keying CMAC");
        return ctx;
}

static void setup(void) {
        struct iovec ct;
        NTS_Receipt receipt;
        uint8_t header[NTP_HEADER_SIZE];

        check(dlopen_libcrypto(LOG_ERR), "loading libcrypto");
        fill(B.c2s_key, sizeof B.c2s_key, 1);
        fill(B.s2c_key, sizeof B.s2c_key, 2);
        check(NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_256, &IOVEC_MAKE(B.c2s_key, KEY_SIZE), &B.c2s), "c2s key");
        check(NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_256, &IOVEC_MAKE(B.s2c_key, KEY_SIZE), &B.s2c), "s2c key");
        fill(B.cookie, sizeof B.cookie, 3);

        B.query = (NTS_Query) {
                .cookie = IOVEC_MAKE(B.cookie, sizeof B.cookie),
                .n_placeholders = N_PLACEHOLDERS,
                .c2s = B.c2s,
        };
        client_header(B.request);
        ssize_t l = NTS_add_extension_fields(B.request, sizeof B.request, NTP_HEADER_SIZE, &B.query);
        check((int) l, "building the request");
        B.request_size = (size_t) l;
        split_authenticator(B.request, B.request_size, &B.req_ad, &B.req_nonce, &ct);

        struct iovec cookies[N_RESPONSE_COOKIES];
        for (size_t i = 0; i < N_RESPONSE_COOKIES; i++) {
                fill(B.new_cookies[i], COOKIE_SIZE, (uint8_t) (10 + i));
                cookies[i] = IOVEC_MAKE(B.new_cookies[i], COOKIE_SIZE);
        }
        NTPHeader h = {
                .version = NTP_VERSION,
                .mode = NTP_MODE_SERVER,
                .stratum = 1,
                .refid = { 'G', 'P', 'S', 0 },
                .origin = { 0xeb000000, 0x9abcdef0 },
                .receive = { 0xeb000001, 0 },
                .transmit = { 0xeb000001, 1 },
        };
        ntp_header_encode(&h, header);
        NTSServerResponse r = {
                .header = header,
                .uid = IOVEC_MAKE(B.query.uid, sizeof B.query.uid),
                .cookies = cookies,
                .n_cookies = N_RESPONSE_COOKIES,
                .s2c = B.s2c,
        };
        l = nts_server_build_response(&r, B.response, sizeof B.response);
        check((int) l, "building the response");
        B.response_size = (size_t) l;
        split_authenticator(B.response, B.response_size, &B.resp_ad, &B.resp_nonce, &B.resp_ct);

        check(NTS_parse_extension_fields(&IOVEC_MAKE(B.response, B.response_size), &B.query, B.s2c,
                                         &IOVEC_MAKE(B.scratch, sizeof B.scratch), &receipt), "verifying the response");
        if (receipt.n_cookies != N_RESPONSE_COOKIES)
                fail("counting the response's cookies");

        /* The floor's own objects, made the way any libcrypto user would. */
        B.siv = sym_EVP_CIPHER_fetch(NULL, "AES-128-SIV", NULL);
        if (!B.siv)
                fail("fetching AES-128-SIV");
        B.decrypt_template = sym_EVP_CIPHER_CTX_new();
        B.work = sym_EVP_CIPHER_CTX_new();
        if (!B.decrypt_template || !B.work ||
            !sym_EVP_DecryptInit_ex(B.decrypt_template, B.siv, NULL, B.s2c_key, NULL))
                fail("keying AES-128-SIV");
        B.cmac = cmac_new(B.c2s_key, KEY_SIZE / 2);
}

/* ---- the cases ---- */

static void case_ntp_encode(void) {
        uint8_t buf[NTP_HEADER_SIZE];
        NTPHeader h = { .version = NTP_VERSION, .mode = NTP_MODE_CLIENT, .transmit = { 1, (uint32_t) B.sink } };

        ntp_header_encode(&h, buf);
        B.sink += buf[47];
}

static void case_ntp_decode(void) {
        NTPHeader h;

        ntp_header_decode(B.response, &h);
        B.sink += h.stratum + ntp_ts_equal(h.origin, (NTPTimestamp) { 0xeb000000, 0x9abcdef0 });
}

/* What the daemon does per plain NTP request: a random transmit timestamp, the header. */
static void case_ntp_request(void) {
        uint8_t buf[NTP_HEADER_SIZE];
        NTPHeader h = { .version = NTP_VERSION, .mode = NTP_MODE_CLIENT };

        check(random_bytes(&h.transmit, sizeof h.transmit), "random");
        ntp_header_encode(&h, buf);
        B.sink += buf[47];
}

static void case_nts_request(void) {
        NTS_Query q = {
                .cookie = IOVEC_MAKE(B.cookie, sizeof B.cookie),
                .n_placeholders = N_PLACEHOLDERS,
                .c2s = B.c2s,
        };
        uint8_t buf[NTS_MAX_PACKET_SIZE];

        client_header(buf);
        ssize_t l = NTS_add_extension_fields(buf, sizeof buf, NTP_HEADER_SIZE, &q);
        check((int) l, "building a request");
        B.sink += (unsigned) l;
}

static void case_nts_verify(void) {
        NTS_Receipt receipt;

        check(NTS_parse_extension_fields(&IOVEC_MAKE(B.response, B.response_size), &B.query, B.s2c,
                                         &IOVEC_MAKE(B.scratch, sizeof B.scratch), &receipt), "verifying");
        B.sink += (unsigned) receipt.n_cookies;
}

/* Floor of the request: AES-SIV of an empty plaintext is S2V alone (RFC 5297 section 2.6),
 * which OpenSSL 3.0's AES-SIV cipher refuses to compute; so the floor is the four CMACs of
 * S2V over the request's associated data and nonce, on one keyed EVP_MAC context. */
static void cmac(const void *p, size_t n, uint8_t out[static 16]) {
        size_t l;

        if (!sym_EVP_MAC_init(B.cmac, NULL, 0, NULL) || !sym_EVP_MAC_update(B.cmac, p, n) ||
            !sym_EVP_MAC_final(B.cmac, out, &l, 16))
                fail("CMAC");
}

static void dbl_xor(uint8_t d[static 16], const uint8_t t[static 16]) {
        uint8_t carry = d[0] >> 7;

        for (size_t i = 0; i < 15; i++)
                d[i] = (uint8_t) (d[i] << 1 | d[i + 1] >> 7) ^ t[i];
        d[15] = (uint8_t) ((d[15] << 1) ^ (carry ? 0x87 : 0)) ^ t[15];
}

static void case_floor_seal(void) {
        static const uint8_t zero[16] = {}, pad[16] = { 0x80 };
        uint8_t d[16], t[16];

        cmac(zero, sizeof zero, d);
        cmac(B.req_ad.iov_base, B.req_ad.iov_len, t);
        dbl_xor(d, t);
        cmac(B.req_nonce.iov_base, B.req_nonce.iov_len, t);
        dbl_xor(d, t);
        dbl_xor(d, pad);
        cmac(d, sizeof d, t);
        B.sink += t[0];
}

/* Floor of the response: AES-128-SIV decryption with the tag check, on the same bytes. */
static void floor_open(EVP_CIPHER_CTX *ctx) {
        uint8_t out[NTS_MAX_PACKET_SIZE];
        const uint8_t *ct = B.resp_ct.iov_base;
        int l;

        if (!sym_EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, (void *) ct) ||
            !sym_EVP_DecryptUpdate(ctx, NULL, &l, B.resp_ad.iov_base, (int) B.resp_ad.iov_len) ||
            !sym_EVP_DecryptUpdate(ctx, NULL, &l, B.resp_nonce.iov_base, (int) B.resp_nonce.iov_len) ||
            !sym_EVP_DecryptUpdate(ctx, out, &l, ct + 16, (int) B.resp_ct.iov_len - 16))
                fail("AES-SIV open");
        B.sink += out[0];
}

/* A copy of a keyed template per operation: what nts-crypto-openssl.c did before aes-siv.c. */
static void case_floor_open_copy(void) {
        if (!sym_EVP_CIPHER_CTX_copy(B.work, B.decrypt_template))
                fail("copy");
        floor_open(B.work);
}

/* A new key schedule per operation on a reused context. */
static void case_floor_open_rekey(void) {
        if (!sym_EVP_DecryptInit_ex(B.work, B.siv, NULL, B.s2c_key, NULL))
                fail("rekey");
        floor_open(B.work);
}

/* ---- where the rest goes ---- */

static void case_getrandom16(void) {
        uint8_t b[16];

        check(random_bytes(b, sizeof b), "random");
        B.sink += b[0];
}

static void case_getrandom32(void) {
        uint8_t b[32];

        check(random_bytes(b, sizeof b), "random");
        B.sink += b[0];
}

static void case_ctx_copy(void) {
        if (!sym_EVP_CIPHER_CTX_copy(B.work, B.decrypt_template))
                fail("copy");
}

static void case_aead_seal(void) {
        uint8_t out[16];
        struct iovec o = IOVEC_MAKE(out, sizeof out);

        check(NTS_aead_encrypt(B.c2s, &B.req_ad, 1, &B.req_nonce, &IOVEC_NULL, &o), "seal");
        B.sink += out[0];
}

static void case_aead_open(void) {
        uint8_t out[NTS_MAX_PACKET_SIZE];
        struct iovec o = IOVEC_MAKE(out, sizeof out);

        check(NTS_aead_decrypt(B.s2c, &B.resp_ad, 1, &B.resp_nonce, &B.resp_ct, &o), "open");
        B.sink += out[0];
}

/* The request's fields without the authenticator. */
static void case_request_fields(void) {
        uint8_t buf[NTS_MAX_PACKET_SIZE];
        struct iovec out = IOVEC_MAKE(buf + NTP_HEADER_SIZE, sizeof buf - NTP_HEADER_SIZE);

        client_header(buf);
        check(NTS_ef_append(&out, NTP_EF_NTS_UNIQUE_IDENTIFIER, B.query.uid, sizeof B.query.uid), "uid");
        check(NTS_ef_append(&out, NTP_EF_NTS_COOKIE, B.cookie, sizeof B.cookie), "cookie");
        for (size_t i = 0; i < N_PLACEHOLDERS; i++)
                check(NTS_ef_append(&out, NTP_EF_NTS_COOKIE_PLACEHOLDER, NULL, sizeof B.cookie), "placeholder");
        B.sink += buf[NTP_HEADER_SIZE];
}

/* Walking the response's fields and the decrypted cookies, without the AEAD. */
static void case_response_walk(void) {
        struct iovec p = IOVEC_MAKE(B.response + NTP_HEADER_SIZE, B.response_size - NTP_HEADER_SIZE);
        struct iovec pt = IOVEC_MAKE(B.scratch, N_RESPONSE_COOKIES * (COOKIE_SIZE + 4));
        NTS_ExtensionField ef;
        NTPHeader h;

        ntp_header_decode(B.response, &h);
        while (NTS_ef_next(&p, &ef) >= 0)
                B.sink += ef.type;
        while (NTS_ef_next(&pt, &ef) >= 0)
                B.sink += ef.type;
}

typedef struct Case {
        const char *name;
        void (*run)(void);
        const char *what;
} Case;

static const Case cases[] = {
        { "ntp-header-encode", case_ntp_encode, "plain NTP: encode a 48-byte header" },
        { "ntp-header-decode", case_ntp_decode, "plain NTP: decode a header, origin check" },
        { "ntp-request", case_ntp_request, "plain NTP request as the daemon builds it (random transmit + encode)" },
        { "nts-request", case_nts_request, "NTS request: header, UID, cookie, 7 placeholders, authenticator" },
        { "nts-verify", case_nts_verify, "NTS response: parse, UID check, AES-SIV open, take 8 cookies" },
        { "floor-seal", case_floor_seal, "floor of the request: S2V (4 CMACs) via EVP_MAC on the same bytes" },
        { "floor-open-copy", case_floor_open_copy, "floor of the response: EVP AES-SIV open, copy of a keyed template" },
        { "floor-open-rekey", case_floor_open_rekey, "floor of the response: EVP AES-SIV open, new key schedule" },
        { "getrandom-16", case_getrandom16, "random_bytes(16): one getrandom() call" },
        { "getrandom-32", case_getrandom32, "random_bytes(32): one getrandom() call, UID and nonce at once" },
        { "ctx-copy", case_ctx_copy, "EVP_CIPHER_CTX_copy of the keyed AES-SIV template alone" },
        { "aead-seal", case_aead_seal, "NTS_aead_encrypt of the request (empty plaintext, S2V path)" },
        { "aead-open", case_aead_open, "NTS_aead_decrypt of the response" },
        { "request-fields", case_request_fields, "request fields without authenticator (UID, cookie, placeholders)" },
        { "response-walk", case_response_walk, "walking the response's and the plaintext's fields, no AEAD" },
};

static double now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
        qsort(v, n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const Case *find_case(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (strcmp(cases[i].name, name) == 0)
                        return &cases[i];
        return NULL;
}

/* Ratios reported per round: ours over the floor, and the two floor variants. */
static const char *const ratios[][2] = {
        { "nts-request", "floor-seal" },
        { "nts-verify", "floor-open-copy" },
        { "nts-verify", "floor-open-rekey" },
        { "floor-open-copy", "floor-open-rekey" },
        { "aead-seal", "floor-seal" },
        { "aead-open", "floor-open-copy" },
        { "nts-request", "ntp-request" },
};

int main(int argc, char *argv[]) {
        enum { N_CASES = ELEMENTSOF(cases) };
        unsigned rounds = 15, iterations = 20000;
        static double ns[N_CASES][64], ratio[ELEMENTSOF(ratios)][64];
        unsigned long allocs[N_CASES] = {};
        int c;

        static const struct option options[] = {
                { "rounds", required_argument, NULL, 'r' },
                { "iterations", required_argument, NULL, 'n' },
                { "list", no_argument, NULL, 'l' },
                {}
        };
        while ((c = getopt_long(argc, argv, "r:n:l", options, NULL)) >= 0)
                switch (c) {
                case 'r':
                        rounds = (unsigned) atoi(optarg);
                        break;
                case 'n':
                        iterations = (unsigned) atoi(optarg);
                        break;
                case 'l':
                        for (size_t i = 0; i < N_CASES; i++)
                                printf("%s\t%s\n", cases[i].name, cases[i].what);
                        return 0;
                default:
                        return EXIT_FAILURE;
                }
        if (rounds < 1 || rounds > 64 || iterations < 1)
                fail("checking --rounds (1..64) and --iterations");

        setup();

        if (RUNNING_ON_VALGRIND) {
                /* Instruction counts: deterministic, one pass each after a warm-up. */
                for (size_t i = 0; i < N_CASES; i++) {
                        cases[i].run();
                        CALLGRIND_ZERO_STATS;
                        for (unsigned k = 0; k < iterations; k++)
                                cases[i].run();
                        CALLGRIND_DUMP_STATS_AT(cases[i].name);
                }
                printf("iterations\t%u\n", iterations);
                return 0;
        }

        for (size_t i = 0; i < N_CASES; i++) {
                unsigned long a = alloc_count();
                for (unsigned k = 0; k < 1000; k++)
                        cases[i].run();
                allocs[i] = alloc_count() - a;
        }

        for (unsigned r = 0; r < rounds; r++) {
                for (size_t i = 0; i < N_CASES; i++) {
                        double t0 = now_ns();
                        for (unsigned k = 0; k < iterations; k++)
                                cases[i].run();
                        ns[i][r] = (now_ns() - t0) / iterations;
                }
                for (size_t j = 0; j < ELEMENTSOF(ratios); j++)
                        ratio[j][r] = ns[find_case(ratios[j][0]) - cases][r] / ns[find_case(ratios[j][1]) - cases][r];
        }

        printf("# case\tmedian_ns\tmin_ns\tallocs_per_op\n");
        for (size_t i = 0; i < N_CASES; i++) {
                double m = median(ns[i], rounds);
                printf("%s\t%.1f\t%.1f\t%.2f\n", cases[i].name, m, ns[i][0], allocs[i] / 1000.0);
        }
        for (size_t j = 0; j < ELEMENTSOF(ratios); j++)
                printf("ratio\t%s/%s\t%.3f\n", ratios[j][0], ratios[j][1], median(ratio[j], rounds));
        printf("# request %zu bytes, response %zu bytes, %u rounds of %u iterations\n", B.request_size,
               B.response_size, rounds, iterations);
        return 0;
}
