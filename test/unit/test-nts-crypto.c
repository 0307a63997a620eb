/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "crypto-util.h"
#include "nts-test-util.h"
#include "aes-siv.h"
#include "alloc-count.h"

DEFINE_TRIVIAL_CLEANUP_FUNC_VOID(EVP_CIPHER_CTX *, sym_EVP_CIPHER_CTX_free);

static const NTS_AEADAlgorithm siv_algorithms[] = {
        NTS_AEAD_AES_SIV_CMAC_256,
        NTS_AEAD_AES_SIV_CMAC_384,
        NTS_AEAD_AES_SIV_CMAC_512,
};

static size_t unhex(const char *s, uint8_t *buf, size_t size) {
        size_t n = 0;

        for (; *s; s++) {
                if (*s == ' ')
                        continue;
                ASSERT_TRUE(n / 2 < size);
                unsigned v = (unsigned) (*s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10);
                ASSERT_TRUE(v < 16);
                if (n % 2 == 0)
                        buf[n / 2] = (uint8_t) (v << 4);
                else
                        buf[n / 2] |= (uint8_t) v;
                n++;
        }
        ASSERT_EQ(n % 2, 0);
        return n / 2;
}

#define HEX(name, s)                                                                           \
        uint8_t name##_buf[256];                                                               \
        struct iovec name = IOVEC_MAKE(name##_buf, unhex(s, name##_buf, sizeof(name##_buf)))

/* RFC 5297 appendix A.1: deterministic authenticated encryption (no nonce). */
#define A1_KEY "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
#define A1_AD "101112131415161718191a1b1c1d1e1f2021222324252627"
#define A1_PLAINTEXT "112233445566778899aabbccddee"
#define A1_OUTPUT "85632d07c6e8f37f950acd320a2ecc93 40c02b9690c4dc04daef7f6afe5c"

/* RFC 5297 appendix A.2: nonce-based, two associated data components and a nonce. */
#define A2_KEY "7f7e7d7c7b7a797877767574737271704041424344454647 48494a4b4c4d4e4f"
#define A2_AD1 "00112233445566778899aabbccddeeffdeaddadadeaddadaffeeddccbbaa99887766554433221100"
#define A2_AD2 "102030405060708090a0"
#define A2_NONCE "09f911029d74e35bd84156c5635688c0"
#define A2_PLAINTEXT "7468697320697320736f6d6520706c61696e7465787420746f20656e6372797074207573696e67205349562d414553"
#define A2_OUTPUT "7bdb6e3b432667eb06f4d14bff2fbd0f cb900f2fddbe404326601965c889bf17dba77ceb094fa663b7a3f748ba8af829ea64ad544a272e9c485b62a3fd5c0d"

static void test_s2v_reproduces_rfc5297_a1_iv(void) {
        _cleanup_(siv_key_freep) SivKey *k = NULL;
        HEX(key, A1_KEY);
        HEX(expected, A1_OUTPUT);
        uint8_t v[SIV_BLOCK_SIZE];

        ASSERT_OK(dlopen_libcrypto(LOG_ERR));
        ASSERT_OK(siv_key_new(key.iov_base, key.iov_len, &k));

        HEX(ad, A1_AD);
        HEX(plaintext, A1_PLAINTEXT);
        const struct iovec s[] = { ad, plaintext };
        ASSERT_OK(siv_s2v(k, s, ELEMENTSOF(s), v));
        ASSERT_MEMEQ(v, expected.iov_base, SIV_BLOCK_SIZE);

        /* The key can be reused. */
        memset(v, 0, sizeof(v));
        ASSERT_OK(siv_s2v(k, s, ELEMENTSOF(s), v));
        ASSERT_MEMEQ(v, expected.iov_base, SIV_BLOCK_SIZE);
}

static void test_s2v_reproduces_rfc5297_a2_iv(void) {
        _cleanup_(siv_key_freep) SivKey *k = NULL;
        HEX(key, A2_KEY);
        HEX(expected, A2_OUTPUT);
        HEX(ad1, A2_AD1);
        HEX(ad2, A2_AD2);
        HEX(nonce, A2_NONCE);
        HEX(plaintext, A2_PLAINTEXT);
        uint8_t v[SIV_BLOCK_SIZE];

        ASSERT_OK(dlopen_libcrypto(LOG_ERR));
        ASSERT_OK(siv_key_new(key.iov_base, key.iov_len, &k));

        const struct iovec s[] = { ad1, ad2, nonce, plaintext };
        ASSERT_OK(siv_s2v(k, s, ELEMENTSOF(s), v));
        ASSERT_MEMEQ(v, expected.iov_base, SIV_BLOCK_SIZE);
}

/* libcrypto's own AES-SIV cipher seals ad[0..n_ad) and a non-empty plaintext into out (tag,
 * then ciphertext): the reference that aes-siv.c is held to. */
static void libcrypto_siv_seal(const NTS_AEADParam *p, const uint8_t *key, const struct iovec *ad, size_t n_ad,
                               const struct iovec *pt, uint8_t *out) {
        static const char *const names[] = { "AES-128-SIV", "AES-192-SIV", "AES-256-SIV" };
        _cleanup_(sym_EVP_CIPHER_CTX_freep) EVP_CIPHER_CTX *ctx = sym_EVP_CIPHER_CTX_new();
        EVP_CIPHER *cipher = sym_EVP_CIPHER_fetch(NULL, names[p->key_size / 16 - 2], NULL);
        int l, lf;

        ASSERT_TRUE(ctx);
        ASSERT_TRUE(cipher);
        ASSERT_TRUE(sym_EVP_EncryptInit_ex(ctx, cipher, NULL, key, NULL));
        sym_EVP_CIPHER_free(cipher);
        for (size_t i = 0; i < n_ad; i++)
                ASSERT_TRUE(sym_EVP_EncryptUpdate(ctx, NULL, &l, ad[i].iov_base, (int) ad[i].iov_len));
        ASSERT_TRUE(sym_EVP_EncryptUpdate(ctx, out + 16, &l, pt->iov_base, (int) pt->iov_len));
        ASSERT_TRUE(sym_EVP_EncryptFinal_ex(ctx, out + 16 + l, &lf));
        ASSERT_EQ((size_t) (l + lf), pt->iov_len);
        ASSERT_TRUE(sym_EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out));
}

/* Ours against libcrypto's AES-SIV for every key size, with zero to three associated data
 * components (empty ones among them), lengths around every block boundary up to several
 * 512-byte chunks, and the same key reused for everything: the CMAC chaining value carried
 * over from call to call must never show. OpenSSL 3.0 cannot seal an empty plaintext, so
 * that case has its own known answer below. */
static void test_siv_agrees_with_libcrypto_for_every_key_size_and_length(void) {
        static const size_t lengths[] = { 0, 1, 15, 16, 17, 31, 32, 33, 100, 511, 512, 513, 1100 };
        uint8_t key[NTS_MAX_AEAD_KEY_SIZE], a[3][1100], pt[1100], ours[1100 + 16], theirs[1100 + 16], back[1100];

        ASSERT_OK(dlopen_libcrypto(LOG_ERR));
        for (size_t i = 0; i < ELEMENTSOF(a); i++)
                test_fill(a[i], sizeof(a[i]), (uint8_t) (3 + i));
        test_fill(pt, sizeof(pt), 9);

        for (size_t i = 0; i < ELEMENTSOF(siv_algorithms); i++) {
                const NTS_AEADParam *p = NTS_aead_param(siv_algorithms[i]);
                _cleanup_(NTS_aead_freep) NTS_AEADContext *c = NULL;

                test_fill(key, p->key_size, (uint8_t) (11 + i));
                ASSERT_OK(NTS_aead_new(p->id, &IOVEC_MAKE(key, p->key_size), &c));

                for (size_t n_ad = 0; n_ad <= ELEMENTSOF(a); n_ad++)
                        for (size_t j = 0; j < ELEMENTSOF(lengths); j++)
                                for (size_t m = 1; m < ELEMENTSOF(lengths); m++) {
                                        struct iovec ad[ELEMENTSOF(a)], plain = IOVEC_MAKE(pt, lengths[m]);
                                        struct iovec o = IOVEC_MAKE(ours, sizeof(ours)), b = IOVEC_MAKE(back, sizeof(back));

                                        /* Component k is lengths[j + k] long (wrapping): mixed. */
                                        for (size_t k = 0; k < n_ad; k++)
                                                ad[k] = IOVEC_MAKE(a[k], lengths[(j + k) % ELEMENTSOF(lengths)]);

                                        ASSERT_OK(NTS_aead_encrypt(c, ad, n_ad, NULL, &plain, &o));
                                        libcrypto_siv_seal(p, key, ad, n_ad, &plain, theirs);
                                        ASSERT_EQ(o.iov_len, plain.iov_len + 16);
                                        ASSERT_MEMEQ(ours, theirs, o.iov_len);

                                        ASSERT_OK(NTS_aead_decrypt(c, ad, n_ad, NULL, &o, &b));
                                        ASSERT_EQ(b.iov_len, plain.iov_len);
                                        ASSERT_MEMEQ(back, pt, b.iov_len);
                                }
        }
}

/* Seals with key, expecting expected, and opens the result again. */
static void assert_siv_known_answer(const struct iovec *key, const struct iovec *ad, size_t n_ad,
                                    const struct iovec *nonce, const struct iovec *plaintext,
                                    const struct iovec *expected) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c = NULL;
        uint8_t out[128], back[128];
        struct iovec o = IOVEC_MAKE(out, sizeof(out)), b = IOVEC_MAKE(back, sizeof(back));

        ASSERT_OK(NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_256, key, &c));
        ASSERT_OK(NTS_aead_encrypt(c, ad, n_ad, nonce, plaintext, &o));
        ASSERT_TRUE(iovec_equal(&o, expected));

        ASSERT_OK(NTS_aead_decrypt(c, ad, n_ad, nonce, &o, &b));
        ASSERT_TRUE(iovec_equal(&b, plaintext));
}

static void test_siv_matches_rfc5297_a1_deterministic(void) {
        HEX(key, A1_KEY);
        HEX(ad, A1_AD);
        HEX(plaintext, A1_PLAINTEXT);
        HEX(expected, A1_OUTPUT);

        assert_siv_known_answer(&key, &ad, 1, NULL, &plaintext, &expected);
}

static void test_siv_matches_rfc5297_a2_nonce_based(void) {
        HEX(key, A2_KEY);
        HEX(ad1, A2_AD1);
        HEX(ad2, A2_AD2);
        HEX(nonce, A2_NONCE);
        HEX(plaintext, A2_PLAINTEXT);
        HEX(expected, A2_OUTPUT);
        const struct iovec ad[] = { ad1, ad2 };

        assert_siv_known_answer(&key, ad, ELEMENTSOF(ad), &nonce, &plaintext, &expected);
}

/* Known answer for the case OpenSSL 3.0 cannot compute: no associated data, empty plaintext,
 * A.1's key. The value is the "Empty Authenticated Data And Plaintext Example" of the
 * miscreant project's AES-SIV vectors. */
static void test_siv_empty_plaintext_matches_known_answer(void) {
        HEX(key, A1_KEY);
        HEX(expected, "f2007a5beb2b8900c588a7adf599f172");

        assert_siv_known_answer(&key, NULL, 0, NULL, &IOVEC_NULL, &expected);
}

/* Associated data as long as an NTP header with a UID, a nonce, a plaintext, and buffers for
 * sealing and opening them. */
#define SAMPLE_MAX 1000

typedef struct Sample {
        uint8_t ad[84], nonce[NTS_SIV_NONCE_SIZE], pt[SAMPLE_MAX];
        uint8_t out[SAMPLE_MAX + NTS_AEAD_TAG_SIZE], back[SAMPLE_MAX];
        struct iovec a, n;
} Sample;

static void sample_init(Sample *s) {
        test_fill(s->ad, sizeof(s->ad), 1);
        test_fill(s->nonce, sizeof(s->nonce), 2);
        test_fill(s->pt, sizeof(s->pt), 3);
        s->a = IOVEC_MAKE(s->ad, sizeof(s->ad));
        s->n = IOVEC_MAKE(s->nonce, sizeof(s->nonce));
}

/* Seals the first len bytes of the plaintext into s->out. */
static struct iovec sample_seal(Sample *s, NTS_AEADContext *c, size_t len) {
        struct iovec o = IOVEC_MAKE(s->out, sizeof(s->out));

        ASSERT_OK(NTS_aead_encrypt(c, &s->a, 1, &s->n, &IOVEC_MAKE(s->pt, len), &o));
        ASSERT_EQ(o.iov_len, len + NTS_AEAD_TAG_SIZE);
        return o;
}

static int sample_open(Sample *s, NTS_AEADContext *c, const struct iovec *ct) {
        struct iovec b = IOVEC_MAKE(s->back, sizeof(s->back));
        int r;

        r = NTS_aead_decrypt(c, &s->a, 1, &s->n, ct, &b);
        if (r >= 0) {
                ASSERT_EQ(b.iov_len, ct->iov_len - NTS_AEAD_TAG_SIZE);
                ASSERT_MEMEQ(s->back, s->pt, b.iov_len);
        }
        return r;
}

static void test_round_trip_every_siv_algorithm(void) {
        static const size_t lengths[] = { 0, 1, 15, 16, 17, 100, 1000 };
        Sample s;

        sample_init(&s);
        for (size_t i = 0; i < ELEMENTSOF(siv_algorithms); i++) {
                _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(siv_algorithms[i], 40);

                for (size_t j = 0; j < ELEMENTSOF(lengths); j++) {
                        struct iovec o = sample_seal(&s, c, lengths[j]);
                        ASSERT_OK(sample_open(&s, c, &o));
                }
        }
}

/* Per packet nothing is allocated: the keys are set up once per key exchange (libcrypto's own
 * AES-SIV cipher copied a keyed context per packet, 23 allocations per open). */
static void test_seal_and_open_allocate_nothing(void) {
        Sample s;

        if (!alloc_count_available()) {
                log_info("AddressSanitizer's allocator is in place, not counting allocations.");
                return;
        }

        sample_init(&s);
        for (size_t i = 0; i < ELEMENTSOF(siv_algorithms); i++) {
                _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(siv_algorithms[i], 40);
                struct iovec o;
                unsigned long before;

                /* A reply's worth of plaintext, and a request's empty one. */
                before = alloc_count();
                o = sample_seal(&s, c, 832);
                ASSERT_OK(sample_open(&s, c, &o));
                o = sample_seal(&s, c, 0);
                ASSERT_OK(sample_open(&s, c, &o));
                s.out[0] ^= 1;
                ASSERT_ERROR(sample_open(&s, c, &o), EBADMSG);
                ASSERT_EQ(alloc_count() - before, 0UL);
        }
}

static void test_wrong_key_is_rejected(void) {
        Sample s;

        sample_init(&s);
        for (size_t i = 0; i < ELEMENTSOF(siv_algorithms); i++) {
                _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(siv_algorithms[i], 40);
                _cleanup_(NTS_aead_freep) NTS_AEADContext *other = test_aead_new(siv_algorithms[i], 41);

                for (size_t len = 0; len <= 20; len += 20) {
                        struct iovec o = sample_seal(&s, c, len);
                        ASSERT_ERROR(sample_open(&s, other, &o), EBADMSG);
                }
        }
}

static void test_flipped_byte_is_rejected(void) {
        Sample s;

        sample_init(&s);
        for (size_t i = 0; i < ELEMENTSOF(siv_algorithms); i++) {
                _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(siv_algorithms[i], 40);

                for (size_t len = 0; len <= 20; len += 20) {
                        struct iovec o = sample_seal(&s, c, len);
                        uint8_t *targets[] = { s.out, s.ad, s.nonce };
                        size_t sizes[] = { o.iov_len, sizeof(s.ad), sizeof(s.nonce) };

                        for (size_t t = 0; t < ELEMENTSOF(targets); t++)
                                for (size_t k = 0; k < sizes[t]; k++) {
                                        targets[t][k] ^= 0x01;
                                        ASSERT_ERROR(sample_open(&s, c, &o), EBADMSG);
                                        targets[t][k] ^= 0x01;
                                }

                        ASSERT_OK(sample_open(&s, c, &o));
                }
        }
}

/* A failed open (the CMAC chaining value carried over from it included) must leave the key
 * giving the same output as a fresh one. */
static void test_context_is_correct_after_failed_decrypt(void) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(NTS_AEAD_AES_SIV_CMAC_256, 7);
        _cleanup_(NTS_aead_freep) NTS_AEADContext *fresh = test_aead_new(NTS_AEAD_AES_SIV_CMAC_256, 7);
        uint8_t expected[32 + NTS_AEAD_TAG_SIZE];
        struct iovec o;
        Sample s;

        sample_init(&s);
        o = sample_seal(&s, fresh, 32);
        memcpy(expected, s.out, sizeof(expected));

        o = sample_seal(&s, c, 32);
        s.out[20] ^= 0x80;
        ASSERT_ERROR(sample_open(&s, c, &o), EBADMSG);

        o = sample_seal(&s, c, 32);
        ASSERT_MEMEQ(s.out, expected, sizeof(expected));
        ASSERT_OK(sample_open(&s, c, &o));
}

/* An empty associated data component is a component (RFC 5297 section 2.4): it changes the
 * tag, with an empty plaintext and with a non-empty one. */
static void test_empty_associated_data_component_counts(void) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(NTS_AEAD_AES_SIV_CMAC_256, 7);
        uint8_t key[32], ad[20], pt[20], with[64], without[64], v[SIV_BLOCK_SIZE];
        const struct iovec a[] = { IOVEC_MAKE(ad, sizeof(ad)), IOVEC_MAKE(ad, 0) };

        test_fill(key, sizeof(key), 7);
        test_fill(ad, sizeof(ad), 1);
        test_fill(pt, sizeof(pt), 2);

        for (size_t len = 0; len <= sizeof(pt); len += sizeof(pt)) {
                _cleanup_(siv_key_freep) SivKey *k = NULL;
                struct iovec w = IOVEC_MAKE(with, sizeof(with)), wo = IOVEC_MAKE(without, sizeof(without));
                struct iovec b = IOVEC_MAKE(pt, sizeof(pt));

                ASSERT_OK(NTS_aead_encrypt(c, a, 2, NULL, &IOVEC_MAKE(pt, len), &w));
                ASSERT_OK(NTS_aead_encrypt(c, a, 1, NULL, &IOVEC_MAKE(pt, len), &wo));
                ASSERT_TRUE(memcmp(with, without, SIV_BLOCK_SIZE) != 0);

                ASSERT_OK(siv_key_new(key, sizeof(key), &k));
                const struct iovec s[] = { a[0], a[1], IOVEC_MAKE(pt, len) };
                ASSERT_OK(siv_s2v(k, s, ELEMENTSOF(s), v));
                ASSERT_MEMEQ(v, with, SIV_BLOCK_SIZE);

                ASSERT_OK(NTS_aead_decrypt(c, a, 2, NULL, &w, &b));
                ASSERT_ERROR(NTS_aead_decrypt(c, a, 1, NULL, &w, &b), EBADMSG);
        }
}

static void test_more_than_126_associated_data_components_are_refused(void) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(NTS_AEAD_AES_SIV_CMAC_256, 7);
        uint8_t byte = 1, out[64];
        struct iovec ad[127], o;

        for (size_t i = 0; i < ELEMENTSOF(ad); i++)
                ad[i] = IOVEC_MAKE(&byte, 1);

        o = IOVEC_MAKE(out, sizeof(out));
        ASSERT_OK(NTS_aead_encrypt(c, ad, 126, NULL, &IOVEC_NULL, &o));
        o = IOVEC_MAKE(out, sizeof(out));
        ASSERT_ERROR(NTS_aead_encrypt(c, ad, 126, &IOVEC_MAKE(&byte, 1), &IOVEC_NULL, &o), EINVAL);
        ASSERT_ERROR(NTS_aead_encrypt(c, ad, 127, NULL, &IOVEC_MAKE(&byte, 1), &o), EINVAL);
}

static void test_small_output_buffer_is_refused(void) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(NTS_AEAD_AES_SIV_CMAC_256, 7);
        uint8_t ad[16] = {}, pt[4] = {}, out[64];
        struct iovec a = IOVEC_MAKE(ad, sizeof(ad)), o = IOVEC_MAKE(out, sizeof(pt) + NTS_AEAD_TAG_SIZE - 1);

        ASSERT_ERROR(NTS_aead_encrypt(c, &a, 1, NULL, &IOVEC_MAKE(pt, sizeof(pt)), &o), ENOBUFS);
        o = IOVEC_MAKE(out, 0);
        ASSERT_ERROR(NTS_aead_encrypt(c, &a, 1, NULL, &IOVEC_NULL, &o), ENOBUFS);

        o = IOVEC_MAKE(out, sizeof(out));
        ASSERT_OK(NTS_aead_encrypt(c, &a, 1, NULL, &IOVEC_MAKE(pt, sizeof(pt)), &o));
        struct iovec b = IOVEC_MAKE(pt, sizeof(pt) - 1);
        ASSERT_ERROR(NTS_aead_decrypt(c, &a, 1, NULL, &o, &b), ENOBUFS);

        /* Shorter than a tag: cannot be authentic. */
        b = IOVEC_MAKE(pt, sizeof(pt));
        ASSERT_ERROR(NTS_aead_decrypt(c, &a, 1, NULL, &IOVEC_MAKE(out, NTS_AEAD_TAG_SIZE - 1), &b), EBADMSG);
}

static void test_key_size_must_match_algorithm(void) {
        uint8_t key[NTS_MAX_AEAD_KEY_SIZE + 1] = {};
        NTS_AEADContext *c = NULL;

        ASSERT_ERROR(NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_256, &IOVEC_MAKE(key, 31), &c), EINVAL);
        ASSERT_ERROR(NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_384, &IOVEC_MAKE(key, 64), &c), EINVAL);
        ASSERT_ERROR(NTS_aead_new(NTS_AEAD_AES_SIV_CMAC_512, &IOVEC_MAKE(key, 65), &c), EINVAL);
        ASSERT_ERROR(NTS_aead_new((NTS_AEADAlgorithm) 1, &IOVEC_MAKE(key, 16), &c), EINVAL);
        ASSERT_TRUE(!c);
}

static void test_parameters_follow_the_rfcs(void) {
        ASSERT_EQ(NTS_aead_param(NTS_AEAD_AES_SIV_CMAC_256)->key_size, 32);
        ASSERT_EQ(NTS_aead_param(NTS_AEAD_AES_SIV_CMAC_384)->key_size, 48);
        ASSERT_EQ(NTS_aead_param(NTS_AEAD_AES_SIV_CMAC_512)->key_size, 64);
        ASSERT_EQ(NTS_aead_param(NTS_AEAD_AES_SIV_CMAC_256)->nonce_size, 16);
        ASSERT_STREQ(NTS_aead_param(NTS_AEAD_AES_SIV_CMAC_384)->name, "AEAD_AES_SIV_CMAC_384");
        ASSERT_TRUE(!NTS_aead_param((NTS_AEADAlgorithm) 14));
}

/* The offer where the loaded libcrypto has AES-128-GCM-SIV (OpenSSL 3.2 and later), and where
 * it does not (3.0, 3.1): the same four in the same order, less what is missing. */
static const NTS_AEADAlgorithm offer_with_gcm_siv[] = {
        NTS_AEAD_AES_SIV_CMAC_512, NTS_AEAD_AES_SIV_CMAC_384, NTS_AEAD_AES_128_GCM_SIV, NTS_AEAD_AES_SIV_CMAC_256,
};
static const NTS_AEADAlgorithm offer_without_gcm_siv[] = {
        NTS_AEAD_AES_SIV_CMAC_512, NTS_AEAD_AES_SIV_CMAC_384, NTS_AEAD_AES_SIV_CMAC_256,
};

static void assert_offer(const NTS_AEADAlgorithm *expected, size_t n_expected) {
        NTS_AEADAlgorithm offer[8];

        ASSERT_EQ((size_t) ASSERT_OK(NTS_aead_offer(offer, ELEMENTSOF(offer))), n_expected);
        ASSERT_MEMEQ(offer, expected, n_expected * sizeof(offer[0]));

        /* A short array gets the most preferred ones. */
        ASSERT_EQ(NTS_aead_offer(offer, 1), 1);
        ASSERT_EQ(offer[0], expected[0]);
}

static void test_offer_follows_the_loaded_libcrypto(void) {
        ASSERT_OK(dlopen_libcrypto(LOG_ERR));
        log_info("libcrypto: %s", sym_OpenSSL_version(OPENSSL_VERSION));
        if (NTS_aead_supported(NTS_AEAD_AES_128_GCM_SIV))
                assert_offer(offer_with_gcm_siv, ELEMENTSOF(offer_with_gcm_siv));
        else
                assert_offer(offer_without_gcm_siv, ELEMENTSOF(offer_without_gcm_siv));
}

static typeof(sym_EVP_CIPHER_fetch) real_cipher_fetch;

/* A libcrypto that has every cipher it is asked for, as OpenSSL >= 3.2 has AES-GCM-SIV. */
static EVP_CIPHER *fetch_any_cipher(OSSL_LIB_CTX *ctx, const char *algorithm, const char *properties) {
        return real_cipher_fetch(ctx, "AES-128-SIV", properties);
}

/* One without AES-GCM-SIV, as OpenSSL 3.0 and 3.1. */
static EVP_CIPHER *fetch_without_gcm_siv(OSSL_LIB_CTX *ctx, const char *algorithm, const char *properties) {
        if (strstr(algorithm, "GCM-SIV"))
                return NULL;
        return real_cipher_fetch(ctx, algorithm, properties);
}

/* The choice of algorithms as a table over what libcrypto has, on any OpenSSL: the probe is
 * made to say yes to everything, then no to AES-GCM-SIV. AEAD_AES_256_GCM_SIV is never offered
 * nor keyed. */
static void test_offer_has_gcm_siv_exactly_where_libcrypto_has_it(void) {
        static const struct {
                typeof(sym_EVP_CIPHER_fetch) fetch;
                const NTS_AEADAlgorithm *offer;
                size_t n_offer;
        } table[] = {
                { fetch_any_cipher, offer_with_gcm_siv, ELEMENTSOF(offer_with_gcm_siv) },
                { fetch_without_gcm_siv, offer_without_gcm_siv, ELEMENTSOF(offer_without_gcm_siv) },
        };
        uint8_t key[32] = {};
        NTS_AEADContext *c = NULL;

        ASSERT_OK(dlopen_libcrypto(LOG_ERR));
        real_cipher_fetch = sym_EVP_CIPHER_fetch;
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                sym_EVP_CIPHER_fetch = table[i].fetch;
                assert_offer(table[i].offer, table[i].n_offer);
                ASSERT_EQ(NTS_aead_supported(NTS_AEAD_AES_128_GCM_SIV), i == 0);
                ASSERT_FALSE(NTS_aead_supported(NTS_AEAD_AES_256_GCM_SIV));
                if (i == 1)
                        ASSERT_ERROR(NTS_aead_new(NTS_AEAD_AES_128_GCM_SIV, &IOVEC_MAKE(key, 16), &c), EOPNOTSUPP);
        }
        sym_EVP_CIPHER_fetch = real_cipher_fetch;

        ASSERT_TRUE(!NTS_aead_param(NTS_AEAD_AES_256_GCM_SIV));
        ASSERT_ERROR(NTS_aead_new(NTS_AEAD_AES_256_GCM_SIV, &IOVEC_MAKE(key, 32), &c), EINVAL);
        ASSERT_ERROR(NTS_aead_new(NTS_AEAD_AES_128_GCM_SIV, &IOVEC_MAKE(key, 32), &c), EINVAL);
        ASSERT_TRUE(!c);
}

/* RFC 8452 section 4 and appendix C.1: key 16 bytes, nonce 12, tag 16. */
static void test_gcm_siv_parameters_follow_rfc8452(void) {
        const NTS_AEADParam *p = NTS_aead_param(NTS_AEAD_AES_128_GCM_SIV);

        ASSERT_TRUE(p);
        ASSERT_STREQ(p->name, "AEAD_AES_128_GCM_SIV");
        ASSERT_EQ(p->key_size, 16);
        ASSERT_EQ(p->nonce_size, 12);
        ASSERT_EQ(p->tag_size, 16);
        ASSERT_STREQ(p->cipher, "AES-128-GCM-SIV");
}

/* The crypto needs the cipher itself; without it (OpenSSL 3.0, 3.1) the tests below say so and
 * return. The same test binary runs against OpenSSL 3.5 and 3.6 in the trixie and forky trees
 * (test-nts-crypto-trixie, -forky). */
static bool gcm_siv_available(const char *test) {
        if (NTS_aead_supported(NTS_AEAD_AES_128_GCM_SIV))
                return true;
        log_info("%s: skipped, the loaded libcrypto (%s) has no AES-128-GCM-SIV (OpenSSL 3.2 and later have it).",
                 test, sym_OpenSSL_version(OPENSSL_VERSION));
        return false;
}

/* RFC 8452 appendix C.1: key, nonce, associated data, plaintext, result (ciphertext || tag). */
static const struct {
        const char *key, *nonce, *ad, *pt, *result;
} rfc8452_c1[] = {
        { "01000000000000000000000000000000", "030000000000000000000000", "", "",
          "dc20e2d83f25705bb49e439eca56de25" },
        { "01000000000000000000000000000000", "030000000000000000000000", "", "0100000000000000",
          "b5d839330ac7b786578782fff6013b815b287c22493a364c" },
        { "01000000000000000000000000000000", "030000000000000000000000", "010000000000000000000000", "02000000",
          "a8fe3e8707eb1f84fb28f8cb73de8e99e2f48a14" },
        { "e66021d5eb8e4f4066d4adb9c33560e4", "f46e44bb3da0015c94f70887", "", "",
          "a4194b79071b01a87d65f706e3949578" },
        { "36864200e0eaf5284d884a0e77d31646", "bae8e37fc83441b16034566b", "46bb91c3c5", "7a806c",
          "af60eb711bd85bc1e4d3e0a462e074eea428a8" },
};

static void test_gcm_siv_matches_rfc8452_c1(void) {
        if (!gcm_siv_available(__func__))
                return;

        for (size_t i = 0; i < ELEMENTSOF(rfc8452_c1); i++) {
                HEX(key, rfc8452_c1[i].key);
                HEX(nonce, rfc8452_c1[i].nonce);
                HEX(ad, rfc8452_c1[i].ad);
                HEX(pt, rfc8452_c1[i].pt);
                HEX(expected, rfc8452_c1[i].result);
                _cleanup_(NTS_aead_freep) NTS_AEADContext *c = NULL;
                uint8_t out[64], back[64];
                struct iovec o = IOVEC_MAKE(out, sizeof(out)), b = IOVEC_MAKE(back, sizeof(back));

                ASSERT_OK(NTS_aead_new(NTS_AEAD_AES_128_GCM_SIV, &key, &c));
                /* Twice on one key: each packet starts from the keyed state. */
                for (int k = 0; k < 2; k++) {
                        o.iov_len = sizeof(out);
                        ASSERT_OK(NTS_aead_encrypt(c, &ad, ad.iov_len > 0, &nonce, &pt, &o));
                        ASSERT_EQ(o.iov_len, expected.iov_len);
                        ASSERT_MEMEQ(out, expected.iov_base, expected.iov_len);

                        b.iov_len = sizeof(back);
                        ASSERT_OK(NTS_aead_decrypt(c, &ad, ad.iov_len > 0, &nonce, &expected, &b));
                        ASSERT_EQ(b.iov_len, pt.iov_len);
                        ASSERT_MEMEQ(back, pt.iov_base, pt.iov_len);
                }

                /* Any flipped bit, in the ciphertext or the tag, is refused; the key stays usable. */
                for (size_t j = 0; j < expected.iov_len; j++) {
                        memcpy(out, expected.iov_base, expected.iov_len);
                        out[j] ^= 0x40;
                        b.iov_len = sizeof(back);
                        ASSERT_ERROR(NTS_aead_decrypt(c, &ad, ad.iov_len > 0, &nonce, &IOVEC_MAKE(out, expected.iov_len), &b),
                                     EBADMSG);
                }
                b.iov_len = sizeof(back);
                ASSERT_OK(NTS_aead_decrypt(c, &ad, ad.iov_len > 0, &nonce, &expected, &b));
        }
}

/* What NTS does with it: an empty plaintext under the whole request as associated data, and
 * replies of every length, all on one key; and the arguments AES-GCM-SIV cannot take. */
static void test_gcm_siv_round_trip_and_refusals(void) {
        static const size_t lengths[] = { 0, 1, 15, 16, 17, 100, 1000 };
        uint8_t ad[84], nonce[NTS_GCM_SIV_NONCE_SIZE + 4], pt[1000], out[1000 + NTS_AEAD_TAG_SIZE], back[1000];
        struct iovec a = IOVEC_MAKE(ad, sizeof(ad)), n = IOVEC_MAKE(nonce, NTS_GCM_SIV_NONCE_SIZE), o, b;

        if (!gcm_siv_available(__func__))
                return;

        _cleanup_(NTS_aead_freep) NTS_AEADContext *c = test_aead_new(NTS_AEAD_AES_128_GCM_SIV, 40);
        _cleanup_(NTS_aead_freep) NTS_AEADContext *other = test_aead_new(NTS_AEAD_AES_128_GCM_SIV, 41);

        test_fill(ad, sizeof(ad), 1);
        test_fill(nonce, sizeof(nonce), 2);
        test_fill(pt, sizeof(pt), 3);
        for (size_t i = 0; i < ELEMENTSOF(lengths); i++) {
                o = IOVEC_MAKE(out, sizeof(out));
                ASSERT_OK(NTS_aead_encrypt(c, &a, 1, &n, &IOVEC_MAKE(pt, lengths[i]), &o));
                ASSERT_EQ(o.iov_len, lengths[i] + NTS_AEAD_TAG_SIZE);
                /* The ciphertext comes first: as long as the plaintext, and not equal to it. */
                ASSERT_TRUE(lengths[i] == 0 || memcmp(out, pt, lengths[i]) != 0);
                b = IOVEC_MAKE(back, sizeof(back));
                ASSERT_OK(NTS_aead_decrypt(c, &a, 1, &n, &o, &b));
                ASSERT_EQ(b.iov_len, lengths[i]);
                ASSERT_MEMEQ(back, pt, lengths[i]);

                b = IOVEC_MAKE(back, sizeof(back));
                ASSERT_ERROR(NTS_aead_decrypt(other, &a, 1, &n, &o, &b), EBADMSG);
                ad[0] ^= 1;
                b = IOVEC_MAKE(back, sizeof(back));
                ASSERT_ERROR(NTS_aead_decrypt(c, &a, 1, &n, &o, &b), EBADMSG);
                ad[0] ^= 1;
        }

        /* Exactly 12 bytes of nonce, always one; at most one associated data component. */
        o = IOVEC_MAKE(out, sizeof(out));
        ASSERT_ERROR(NTS_aead_encrypt(c, &a, 1, &IOVEC_MAKE(nonce, 16), &IOVEC_MAKE(pt, 0), &o), EINVAL);
        ASSERT_ERROR(NTS_aead_encrypt(c, &a, 1, &IOVEC_MAKE(nonce, 11), &IOVEC_MAKE(pt, 0), &o), EINVAL);
        ASSERT_ERROR(NTS_aead_encrypt(c, &a, 1, NULL, &IOVEC_MAKE(pt, 0), &o), EINVAL);
        ASSERT_ERROR(NTS_aead_encrypt(c, (const struct iovec[]) { a, a }, 2, &n, &IOVEC_MAKE(pt, 0), &o), EINVAL);
        b = IOVEC_MAKE(back, sizeof(back));
        ASSERT_ERROR(NTS_aead_decrypt(c, &a, 1, &IOVEC_MAKE(nonce, 16), &IOVEC_MAKE(out, 16), &b), EINVAL);
        /* Shorter than a tag cannot be authentic; too small a buffer is refused. */
        ASSERT_ERROR(NTS_aead_decrypt(c, &a, 1, &n, &IOVEC_MAKE(out, NTS_AEAD_TAG_SIZE - 1), &b), EBADMSG);
        o = IOVEC_MAKE(out, 20);
        ASSERT_ERROR(NTS_aead_encrypt(c, &a, 1, &n, &IOVEC_MAKE(pt, 5), &o), ENOBUFS);
}

TEST_MAIN(TEST_CASE(test_s2v_reproduces_rfc5297_a1_iv),
          TEST_CASE(test_s2v_reproduces_rfc5297_a2_iv),
          TEST_CASE(test_siv_agrees_with_libcrypto_for_every_key_size_and_length),
          TEST_CASE(test_siv_matches_rfc5297_a1_deterministic),
          TEST_CASE(test_siv_matches_rfc5297_a2_nonce_based),
          TEST_CASE(test_siv_empty_plaintext_matches_known_answer),
          TEST_CASE(test_round_trip_every_siv_algorithm),
          TEST_CASE(test_seal_and_open_allocate_nothing),
          TEST_CASE(test_wrong_key_is_rejected),
          TEST_CASE(test_flipped_byte_is_rejected),
          TEST_CASE(test_context_is_correct_after_failed_decrypt),
          TEST_CASE(test_empty_associated_data_component_counts),
          TEST_CASE(test_more_than_126_associated_data_components_are_refused),
          TEST_CASE(test_small_output_buffer_is_refused),
          TEST_CASE(test_key_size_must_match_algorithm),
          TEST_CASE(test_parameters_follow_the_rfcs),
          TEST_CASE(test_offer_follows_the_loaded_libcrypto),
          TEST_CASE(test_offer_has_gcm_siv_exactly_where_libcrypto_has_it),
          TEST_CASE(test_gcm_siv_parameters_follow_rfc8452),
          TEST_CASE(test_gcm_siv_matches_rfc8452_c1),
          TEST_CASE(test_gcm_siv_round_trip_and_refusals));
