/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* AEAD for NTS: the AES-SIV algorithms of aes-siv.h (RFC 5297) under the NTS names and key
 * sizes, with the argument checks of the NTS interface. */

#include <limits.h>
#include <syslog.h>

#include "aes-siv.h"
#include "crypto-util.h"
#include "iovec-util.h"
#include "nts-crypto.h"

/* Key sizes: RFC 5297 section 6 (AES-SIV-CMAC-256/384/512 take two AES keys of 128, 192 or
 * 256 bits).
 *
 * AES-GCM-SIV (30, 31) is deliberately absent, although OpenSSL >= 3.2 has it: chrony 4.4 to
 * 4.6 derived its AES-128-GCM-SIV keys differently from RFC 8915, and chrony >= 4.6.1 needs a
 * KE record of type 1024 to agree on the RFC's keys. No test here can exchange GCM-SIV with a
 * server, so we do not offer it (docs/NTS.md, "AEAD algorithms"). */
static const NTS_AEADParam aead_params[] = {
        { NTS_AEAD_AES_SIV_CMAC_256, "AEAD_AES_SIV_CMAC_256", 32, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE },
        { NTS_AEAD_AES_SIV_CMAC_384, "AEAD_AES_SIV_CMAC_384", 48, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE },
        { NTS_AEAD_AES_SIV_CMAC_512, "AEAD_AES_SIV_CMAC_512", 64, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE },
};

/* Order of preference in a KE request: strongest first (RFC 8915 section 5.1 requires only
 * AEAD_AES_SIV_CMAC_256). */
static const NTS_AEADAlgorithm aead_preference[] = {
        NTS_AEAD_AES_SIV_CMAC_512,
        NTS_AEAD_AES_SIV_CMAC_384,
        NTS_AEAD_AES_SIV_CMAC_256,
};

struct NTS_AEADContext {
        const NTS_AEADParam *param;
        SivKey *key;                    /* keyed once per session */
};

const NTS_AEADParam *NTS_aead_param(NTS_AEADAlgorithm id) {
        for (size_t i = 0; i < ELEMENTSOF(aead_params); i++)
                if (aead_params[i].id == id)
                        return &aead_params[i];
        return NULL;
}

/* libcrypto failed: drop its error queue so that it does not grow with every bad packet. */
static int crypto_fail(int r) {
        sym_ERR_clear_error();
        return r;
}

bool NTS_aead_supported(NTS_AEADAlgorithm id) {
        const NTS_AEADParam *p;

        p = NTS_aead_param(id);
        if (!p)
                return false;
        if (dlopen_libcrypto(LOG_DEBUG) < 0)
                return false;

        return siv_key_size_supported(p->key_size);
}

int NTS_aead_offer(NTS_AEADAlgorithm *ret, size_t n) {
        size_t k = 0;
        int r;

        assert(ret || n == 0);

        r = dlopen_libcrypto(LOG_DEBUG);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(aead_preference) && k < n; i++)
                if (NTS_aead_supported(aead_preference[i]))
                        ret[k++] = aead_preference[i];

        return (int) k;
}

NTS_AEADContext *NTS_aead_free(NTS_AEADContext *c) {
        if (!c)
                return NULL;

        siv_key_free(c->key);
        return mfree(c);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_AEADContext *, NTS_aead_free);

int NTS_aead_new(NTS_AEADAlgorithm id, const struct iovec *key, NTS_AEADContext **ret) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c = NULL;
        const NTS_AEADParam *p;
        int r;

        assert(key);
        assert(ret);

        p = NTS_aead_param(id);
        if (!p)
                return -EINVAL;
        if (key->iov_len != p->key_size || !key->iov_base)
                return -EINVAL;

        r = dlopen_libcrypto(LOG_DEBUG);
        if (r < 0)
                return r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->param = p;

        r = siv_key_new(key->iov_base, key->iov_len, &c->key);
        if (r < 0)
                return crypto_fail(r);

        *ret = TAKE_PTR(c);
        return 0;
}

NTS_AEADAlgorithm NTS_aead_algorithm(const NTS_AEADContext *c) {
        assert(c);
        return c->param->id;
}

static int siv_check_args(size_t n_ad, const struct iovec *nonce) {
        return n_ad + !!nonce > SIV_MAX_AD_COMPONENTS ? -EINVAL : 0;
}

/* The associated data components with the nonce as the last one (RFC 5297 section 3). */
static size_t siv_components(const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                             struct iovec ret[static SIV_MAX_AD_COMPONENTS]) {
        size_t n = 0;

        for (size_t i = 0; i < n_ad; i++)
                ret[n++] = ad[i];
        if (nonce)
                ret[n++] = *nonce;
        return n;
}

int NTS_aead_encrypt(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                     const struct iovec *plaintext, struct iovec *out) {
        struct iovec s[SIV_MAX_AD_COMPONENTS];
        size_t n;
        int r;

        assert(c);
        assert(ad || n_ad == 0);
        assert(plaintext);
        assert(out);

        r = siv_check_args(n_ad, nonce);
        if (r < 0)
                return r;
        if (plaintext->iov_len > INT_MAX - NTS_AEAD_TAG_SIZE)
                return -EINVAL;
        if (out->iov_len < plaintext->iov_len + NTS_AEAD_TAG_SIZE)
                return -ENOBUFS;

        n = siv_components(ad, n_ad, nonce, s);
        r = siv_seal(c->key, s, n, plaintext, out->iov_base);
        if (r < 0)
                return crypto_fail(r);

        out->iov_len = plaintext->iov_len + NTS_AEAD_TAG_SIZE;
        return 0;
}

int NTS_aead_decrypt(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                     const struct iovec *ciphertext, struct iovec *out) {
        struct iovec s[SIV_MAX_AD_COMPONENTS];
        size_t n;
        int r;

        assert(c);
        assert(ad || n_ad == 0);
        assert(ciphertext);
        assert(out);

        r = siv_check_args(n_ad, nonce);
        if (r < 0)
                return r;
        if (ciphertext->iov_len < NTS_AEAD_TAG_SIZE)
                return -EBADMSG;
        if (ciphertext->iov_len > INT_MAX)
                return -EINVAL;
        if (out->iov_len < ciphertext->iov_len - NTS_AEAD_TAG_SIZE)
                return -ENOBUFS;

        n = siv_components(ad, n_ad, nonce, s);
        r = siv_open(c->key, s, n, ciphertext->iov_base, ciphertext->iov_len, out->iov_base);
        if (r < 0)
                return r == -EBADMSG ? r : crypto_fail(r);

        out->iov_len = ciphertext->iov_len - NTS_AEAD_TAG_SIZE;
        return 0;
}
