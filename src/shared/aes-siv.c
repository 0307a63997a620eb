/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <limits.h>

#include "aes-siv.h"
#include "iovec-util.h"

/* Bytes handed to libcrypto per call: a CMAC copies its input here (see cbc_feed()). */
#define CBC_CHUNK 512

/* The zero IV of both contexts, and the zero block of the CMAC subkeys and of S2V's start. */
static const uint8_t zero[SIV_BLOCK_SIZE] = {};

struct SivKey {
        /* AES-CBC keyed with K1, no padding, for CMAC. Its chaining value carries over from one
         * CMAC to the next: `chain` mirrors it, and a new CMAC XORs it into its first block,
         * which is the same as starting from a zero IV (RFC 4493's X := 0) without going
         * through libcrypto's re-initialisation. */
        EVP_CIPHER_CTX *cbc;
        uint8_t chain[SIV_BLOCK_SIZE];
        bool fresh;                     /* the next block is the first of a CMAC */
        uint8_t k1[SIV_BLOCK_SIZE];     /* CMAC subkeys, RFC 4493 section 2.3 */
        uint8_t k2[SIV_BLOCK_SIZE];
        uint8_t d0[SIV_BLOCK_SIZE];     /* CMAC(K1, <zero>): S2V's start, the same for every call */

        /* The last bytes of the message, held back until it is known whether they are the
         * last block (RFC 4493 section 2.4 treats that one differently). */
        uint8_t block[SIV_BLOCK_SIZE];
        size_t n_block;

        /* AES-CTR keyed with K2: the encryption, its IV set per message. */
        EVP_CIPHER_CTX *ctr;
};

/* RFC 5297 section 2.3 (and RFC 4493's subkey generation): doubling in GF(2^128) with the
 * polynomial x^128 + x^7 + x^2 + x + 1. */
static void dbl(uint8_t b[static SIV_BLOCK_SIZE]) {
        uint8_t carry = b[0] >> 7;

        for (size_t i = 0; i < SIV_BLOCK_SIZE - 1; i++)
                b[i] = (uint8_t) (b[i] << 1 | b[i + 1] >> 7);
        b[SIV_BLOCK_SIZE - 1] = (uint8_t) (b[SIV_BLOCK_SIZE - 1] << 1) ^ (carry ? 0x87 : 0);
}

static void xor_block(uint8_t *dst, const uint8_t *src, size_t n) {
        for (size_t i = 0; i < n; i++)
                dst[i] ^= src[i];
}

/* Puts the CBC context back to a zero chaining value after libcrypto failed in the middle of
 * a CMAC, when `chain` may no longer say where the context stands. */
static int cbc_resync(SivKey *k) {
        memset(k->chain, 0, sizeof(k->chain));
        return sym_EVP_EncryptInit_ex(k->cbc, NULL, NULL, NULL, zero) ? 0 : -EIO;
}

/* CBC-encrypts n bytes (whole blocks) of the current CMAC; `chain` ends as the last output
 * block. The input is copied so that the first block of a CMAC can absorb the carried-over
 * chaining value. */
static int cbc_feed(SivKey *k, const uint8_t *p, size_t n) {
        uint8_t in[CBC_CHUNK], out[CBC_CHUNK];
        int r = 0, l;

        assert(n % SIV_BLOCK_SIZE == 0);

        while (n > 0) {
                size_t c = MIN(n, sizeof(in));

                memcpy(in, p, c);
                if (k->fresh) {
                        xor_block(in, k->chain, SIV_BLOCK_SIZE);
                        k->fresh = false;
                }
                if (!sym_EVP_EncryptUpdate(k->cbc, out, &l, in, (int) c) || (size_t) l != c) {
                        (void) cbc_resync(k);
                        r = -EIO;
                        break;
                }
                memcpy(k->chain, out + c - SIV_BLOCK_SIZE, SIV_BLOCK_SIZE);
                p += c;
                n -= c;
        }

        /* The input may be plaintext (S2V's last component when opening). */
        explicit_bzero_safe(in, sizeof(in));
        explicit_bzero_safe(out, sizeof(out));
        return r;
}

static void cmac_begin(SivKey *k) {
        k->fresh = true;
        k->n_block = 0;
}

static int cmac_update(SivKey *k, const uint8_t *p, size_t n) {
        int r;

        while (n > 0) {
                if (k->n_block == SIV_BLOCK_SIZE) {
                        /* More follows, so the held-back block was not the last. */
                        r = cbc_feed(k, k->block, SIV_BLOCK_SIZE);
                        if (r < 0)
                                return r;
                        k->n_block = 0;
                }
                if (k->n_block == 0 && n > SIV_BLOCK_SIZE) {
                        /* Every whole block but the one that may be the last, in one go. */
                        size_t bulk = (n - 1) / SIV_BLOCK_SIZE * SIV_BLOCK_SIZE;

                        r = cbc_feed(k, p, bulk);
                        if (r < 0)
                                return r;
                        p += bulk;
                        n -= bulk;
                }

                size_t c = MIN(SIV_BLOCK_SIZE - k->n_block, n);
                memcpy(k->block + k->n_block, p, c);
                k->n_block += c;
                p += c;
                n -= c;
        }
        return 0;
}

/* RFC 4493 section 2.4: a whole last block is XORed with K1; a partial one (or none) is padded
 * with 10...0 and XORed with K2. */
static int cmac_end(SivKey *k, uint8_t ret[static SIV_BLOCK_SIZE]) {
        int r;

        if (k->n_block == SIV_BLOCK_SIZE)
                xor_block(k->block, k->k1, SIV_BLOCK_SIZE);
        else {
                k->block[k->n_block] = 0x80;
                memset(k->block + k->n_block + 1, 0, SIV_BLOCK_SIZE - k->n_block - 1);
                xor_block(k->block, k->k2, SIV_BLOCK_SIZE);
        }

        r = cbc_feed(k, k->block, SIV_BLOCK_SIZE);
        explicit_bzero_safe(k->block, sizeof(k->block));
        k->n_block = 0;
        if (r < 0)
                return r;

        memcpy(ret, k->chain, SIV_BLOCK_SIZE);
        return 0;
}

static int cmac(SivKey *k, const void *p, size_t n, uint8_t ret[static SIV_BLOCK_SIZE]) {
        int r;

        cmac_begin(k);
        r = cmac_update(k, p, n);
        if (r < 0)
                return r;
        return cmac_end(k, ret);
}

static const char *aes_name(size_t half, bool ctr) {
        switch (half) {
        case 16:
                return ctr ? "AES-128-CTR" : "AES-128-CBC";
        case 24:
                return ctr ? "AES-192-CTR" : "AES-192-CBC";
        case 32:
                return ctr ? "AES-256-CTR" : "AES-256-CBC";
        default:
                return NULL;
        }
}

bool siv_key_size_supported(size_t size) {
        const char *cbc = size % 2 == 0 ? aes_name(size / 2, false) : NULL;

        return cbc && crypto_cipher_available(cbc) && crypto_cipher_available(aes_name(size / 2, true));
}

static int aes_ctx_new(size_t half, bool ctr, const uint8_t *key, EVP_CIPHER_CTX **ret) {
        EVP_CIPHER *cipher;
        EVP_CIPHER_CTX *ctx;
        int ok;

        cipher = sym_EVP_CIPHER_fetch(NULL, aes_name(half, ctr), NULL);
        if (!cipher)
                return -EOPNOTSUPP;

        ctx = sym_EVP_CIPHER_CTX_new();
        ok = ctx && sym_EVP_EncryptInit_ex(ctx, cipher, NULL, key, zero) &&
                sym_EVP_CIPHER_CTX_set_padding(ctx, 0);
        sym_EVP_CIPHER_free(cipher);
        if (!ok) {
                sym_EVP_CIPHER_CTX_free(ctx);
                return ctx ? -EIO : -ENOMEM;
        }

        *ret = ctx;
        return 0;
}

SivKey *siv_key_free(SivKey *k) {
        if (!k)
                return NULL;

        /* libcrypto cleanses the key schedules when it frees these. */
        sym_EVP_CIPHER_CTX_free(k->cbc);
        sym_EVP_CIPHER_CTX_free(k->ctr);
        explicit_bzero_safe(k, sizeof(*k));
        return mfree(k);
}

/* RFC 4493 section 2.3: L = AES(K1, 0), K1' = dbl(L), K2' = dbl(K1'). The CBC context starts
 * with a zero IV, so its first output is L and `chain` then mirrors it. */
static int cmac_subkeys(SivKey *k) {
        int r;

        k->fresh = false;
        r = cbc_feed(k, zero, SIV_BLOCK_SIZE);
        if (r < 0)
                return r;

        memcpy(k->k1, k->chain, SIV_BLOCK_SIZE);
        dbl(k->k1);
        memcpy(k->k2, k->k1, SIV_BLOCK_SIZE);
        dbl(k->k2);

        return cmac(k, zero, sizeof(zero), k->d0);
}

int siv_key_new(const void *key, size_t size, SivKey **ret) {
        _cleanup_(siv_key_freep) SivKey *k = NULL;
        size_t half = size / 2;
        int r;

        assert(key);
        assert(ret);

        if (size % 2 != 0 || !aes_name(half, false))
                return -EINVAL;

        k = new0(SivKey, 1);
        if (!k)
                return -ENOMEM;

        r = aes_ctx_new(half, false, key, &k->cbc);
        if (r < 0)
                return r;
        r = aes_ctx_new(half, true, (const uint8_t *) key + half, &k->ctr);
        if (r < 0)
                return r;
        r = cmac_subkeys(k);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(k);
        return 0;
}

/* RFC 5297 section 2.4. */
static int s2v(SivKey *k, const struct iovec *ad, size_t n_ad, const struct iovec *last,
               uint8_t d[static SIV_BLOCK_SIZE], uint8_t t[static SIV_BLOCK_SIZE], uint8_t ret[static SIV_BLOCK_SIZE]) {
        int r;

        memcpy(d, k->d0, SIV_BLOCK_SIZE);
        for (size_t i = 0; i < n_ad; i++) {
                r = cmac(k, ad[i].iov_base, ad[i].iov_len, t);
                if (r < 0)
                        return r;
                dbl(d);
                xor_block(d, t, SIV_BLOCK_SIZE);
        }

        if (last->iov_len < SIV_BLOCK_SIZE) {
                /* T = dbl(D) xor pad(Sn), pad() appending 0x80 and zeros. */
                dbl(d);
                memset(t, 0, SIV_BLOCK_SIZE);
                if (last->iov_len > 0)
                        memcpy(t, last->iov_base, last->iov_len);
                t[last->iov_len] = 0x80;
                xor_block(d, t, SIV_BLOCK_SIZE);
                return cmac(k, d, SIV_BLOCK_SIZE, ret);
        }

        /* T = Sn xorend D: D goes into the last 16 bytes of Sn, fed to CMAC from a copy so that
         * Sn itself is left alone. */
        size_t head = last->iov_len - SIV_BLOCK_SIZE;

        memcpy(t, (const uint8_t *) last->iov_base + head, SIV_BLOCK_SIZE);
        xor_block(t, d, SIV_BLOCK_SIZE);

        cmac_begin(k);
        r = cmac_update(k, last->iov_base, head);
        if (r >= 0)
                r = cmac_update(k, t, SIV_BLOCK_SIZE);
        if (r < 0)
                return r;
        return cmac_end(k, ret);
}

/* S2V over ad[0..n_ad) and then last (the plaintext of an SIV tag). */
static int s2v_wiped(SivKey *k, const struct iovec *ad, size_t n_ad, const struct iovec *last,
                     uint8_t ret[static SIV_BLOCK_SIZE]) {
        uint8_t d[SIV_BLOCK_SIZE], t[SIV_BLOCK_SIZE];
        int r;

        if (n_ad > SIV_MAX_AD_COMPONENTS)
                return -EIO;

        r = s2v(k, ad, n_ad, last, d, t, ret);

        /* t holds plaintext bytes. */
        explicit_bzero_safe(d, sizeof(d));
        explicit_bzero_safe(t, sizeof(t));
        return r;
}

int siv_s2v(SivKey *k, const struct iovec *s, size_t n, uint8_t ret[static SIV_BLOCK_SIZE]) {
        assert(k);
        assert(s);
        assert(n >= 1);

        return s2v_wiped(k, s, n - 1, &s[n - 1], ret);
}

/* RFC 5297 section 2.5: CTR(K2, Q, in) with Q = V with bits 63 and 31 cleared. CTR is its own
 * inverse, so this both encrypts and decrypts. */
static int ctr(SivKey *k, const uint8_t v[static SIV_BLOCK_SIZE], const uint8_t *in, size_t n, uint8_t *out) {
        uint8_t q[SIV_BLOCK_SIZE];
        int l;

        if (n == 0)
                return 0;
        if (n > INT_MAX)
                return -EIO;

        memcpy(q, v, sizeof(q));
        q[8] &= 0x7f;
        q[12] &= 0x7f;

        if (!sym_EVP_EncryptInit_ex(k->ctr, NULL, NULL, NULL, q) ||
            !sym_EVP_EncryptUpdate(k->ctr, out, &l, in, (int) n) || (size_t) l != n)
                return -EIO;
        return 0;
}

int siv_seal(SivKey *k, const struct iovec *ad, size_t n_ad, const struct iovec *plaintext, uint8_t *out) {
        int r;

        assert(k);
        assert(ad || n_ad == 0);
        assert(plaintext);
        assert(out);

        /* out: V || C (RFC 5297 section 2.6). */
        r = s2v_wiped(k, ad, n_ad, plaintext, out);
        if (r < 0)
                return r;
        return ctr(k, out, plaintext->iov_base, plaintext->iov_len, out + SIV_BLOCK_SIZE);
}

int siv_open(SivKey *k, const struct iovec *ad, size_t n_ad, const uint8_t *in, size_t len, uint8_t *out) {
        uint8_t t[SIV_BLOCK_SIZE];
        size_t n;
        int r;

        assert(k);
        assert(ad || n_ad == 0);
        assert(in);
        assert(len >= SIV_BLOCK_SIZE);
        assert(out || len == SIV_BLOCK_SIZE);

        /* RFC 5297 section 2.7: P = CTR(K2, Q, C), T = S2V(K1, AD..., P), accept iff T = V. */
        n = len - SIV_BLOCK_SIZE;
        r = ctr(k, in, in + SIV_BLOCK_SIZE, n, out);
        if (r >= 0)
                r = s2v_wiped(k, ad, n_ad, &IOVEC_MAKE(out, n), t);
        if (r >= 0 && sym_CRYPTO_memcmp(t, in, SIV_BLOCK_SIZE) != 0)
                r = -EBADMSG;
        if (r < 0 && n > 0)
                explicit_bzero_safe(out, n);
        return r;
}
