/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "siv-s2v.h"

/* RFC 5297 section 2.3: doubling in GF(2^128) with the polynomial x^128 + x^7 + x^2 + x + 1. */
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

static int cmac_begin(EVP_MAC_CTX *cmac) {
        /* A NULL key restarts CMAC with the key already set. */
        return sym_EVP_MAC_init(cmac, NULL, 0, NULL) ? 0 : -EIO;
}

static int cmac_end(EVP_MAC_CTX *cmac, uint8_t ret[static SIV_BLOCK_SIZE]) {
        size_t l = 0;

        if (!sym_EVP_MAC_final(cmac, ret, &l, SIV_BLOCK_SIZE) || l != SIV_BLOCK_SIZE)
                return -EIO;
        return 0;
}

static int cmac_once(EVP_MAC_CTX *cmac, const void *p, size_t n, uint8_t ret[static SIV_BLOCK_SIZE]) {
        int r;

        r = cmac_begin(cmac);
        if (r < 0)
                return r;
        if (n > 0 && !sym_EVP_MAC_update(cmac, p, n))
                return -EIO;
        return cmac_end(cmac, ret);
}

int siv_cmac_new(const void *key, size_t size, EVP_MAC_CTX **ret) {
        const char *cipher;
        EVP_MAC *mac;
        EVP_MAC_CTX *ctx;

        assert(key);
        assert(ret);

        switch (size) {
        case 16:
                cipher = "AES-128-CBC";
                break;
        case 24:
                cipher = "AES-192-CBC";
                break;
        case 32:
                cipher = "AES-256-CBC";
                break;
        default:
                return -EINVAL;
        }

        mac = sym_EVP_MAC_fetch(NULL, "CMAC", NULL);
        if (!mac)
                return -EIO;
        ctx = sym_EVP_MAC_CTX_new(mac);
        sym_EVP_MAC_free(mac);
        if (!ctx)
                return -EIO;

        OSSL_PARAM params[] = {
                sym_OSSL_PARAM_construct_utf8_string("cipher", (char *) cipher, 0),
                sym_OSSL_PARAM_construct_end(),
        };
        if (!sym_EVP_MAC_init(ctx, key, size, params)) {
                sym_EVP_MAC_CTX_free(ctx);
                return -EIO;
        }

        *ret = ctx;
        return 0;
}

static int s2v(EVP_MAC_CTX *cmac, const struct iovec *s, size_t n, uint8_t d[static SIV_BLOCK_SIZE],
               uint8_t t[static SIV_BLOCK_SIZE], uint8_t ret[static SIV_BLOCK_SIZE]) {
        static const uint8_t zero[SIV_BLOCK_SIZE] = {};
        const struct iovec *last = &s[n - 1];
        int r;

        r = cmac_once(cmac, zero, sizeof(zero), d);
        if (r < 0)
                return r;

        for (size_t i = 0; i + 1 < n; i++) {
                r = cmac_once(cmac, s[i].iov_base, s[i].iov_len, t);
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
                return cmac_once(cmac, d, SIV_BLOCK_SIZE, ret);
        }

        /* T = Sn xorend D: D goes into the last block of Sn, which is fed to CMAC separately
         * so that Sn need not be copied. */
        size_t head = last->iov_len - SIV_BLOCK_SIZE;

        memcpy(t, (const uint8_t *) last->iov_base + head, SIV_BLOCK_SIZE);
        xor_block(t, d, SIV_BLOCK_SIZE);

        r = cmac_begin(cmac);
        if (r < 0)
                return r;
        if (head > 0 && !sym_EVP_MAC_update(cmac, last->iov_base, head))
                return -EIO;
        if (!sym_EVP_MAC_update(cmac, t, SIV_BLOCK_SIZE))
                return -EIO;
        return cmac_end(cmac, ret);
}

int siv_s2v(EVP_MAC_CTX *cmac, const struct iovec *s, size_t n, uint8_t ret[static SIV_BLOCK_SIZE]) {
        uint8_t d[SIV_BLOCK_SIZE], t[SIV_BLOCK_SIZE];
        int r;

        assert(cmac);
        assert(s);
        assert(n >= 1);

        r = s2v(cmac, s, n, d, t, ret);

        /* t holds plaintext bytes. */
        explicit_bzero_safe(d, sizeof(d));
        explicit_bzero_safe(t, sizeof(t));
        return r;
}
