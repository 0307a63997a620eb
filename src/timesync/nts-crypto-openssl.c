/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* AEAD for NTS: the AES-SIV algorithms of aes-siv.h (RFC 5297) and libcrypto's AES-GCM-SIV
 * (RFC 8452) under the NTS names and key sizes, with the argument checks of the NTS interface. */

#include <limits.h>
#include <syslog.h>

#include "aes-siv.h"
#include "crypto-util.h"
#include "iovec-util.h"
#include "nts-crypto.h"

/* Key sizes: RFC 5297 section 6 (AES-SIV-CMAC-256/384/512 take two AES keys of 128, 192 or
 * 256 bits), RFC 8452 section 4 (AEAD_AES_128_GCM_SIV takes one of 128 bits and nonces of
 * exactly 12 bytes).
 *
 * AEAD_AES_256_GCM_SIV (31) is absent: no NTS server offers it, and chrony's record 1024,
 * which settles the key derivation of AES-GCM-SIV, covers only the 128-bit one (docs/NTS.md,
 * "AEAD algorithms"). */
static const NTS_AEADParam aead_params[] = {
        { NTS_AEAD_AES_SIV_CMAC_256, "AEAD_AES_SIV_CMAC_256", 32, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE, NULL },
        { NTS_AEAD_AES_SIV_CMAC_384, "AEAD_AES_SIV_CMAC_384", 48, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE, NULL },
        { NTS_AEAD_AES_SIV_CMAC_512, "AEAD_AES_SIV_CMAC_512", 64, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE, NULL },
        { NTS_AEAD_AES_128_GCM_SIV, "AEAD_AES_128_GCM_SIV", 16, NTS_AEAD_TAG_SIZE, NTS_GCM_SIV_NONCE_SIZE,
          "AES-128-GCM-SIV" },
};

/* Order of preference in a KE request (RFC 8915 section 5.1 requires only
 * AEAD_AES_SIV_CMAC_256): stronger keys first; AEAD_AES_128_GCM_SIV, as strong as
 * AEAD_AES_SIV_CMAC_256, before it, because its keys are half as long and so are the cookies
 * that carry them (chrony: 64 bytes instead of 96), which makes every NTP packet shorter. */
static const NTS_AEADAlgorithm aead_preference[] = {
        NTS_AEAD_AES_SIV_CMAC_512,
        NTS_AEAD_AES_SIV_CMAC_384,
        NTS_AEAD_AES_128_GCM_SIV,
        NTS_AEAD_AES_SIV_CMAC_256,
};

struct NTS_AEADContext {
        const NTS_AEADParam *param;
        SivKey *key;                    /* AES-SIV: keyed once per session */

        /* AES-GCM-SIV: contexts keyed once per session for opening [0] and sealing [1], and
         * the one each packet works on, a fresh copy of one of them. libcrypto's cipher keeps
         * associated data across re-initialisations and seals only one message per nonce it
         * was given, so a context is not reused. */
        EVP_CIPHER_CTX *gcm_keyed[2];
        EVP_CIPHER_CTX *gcm_work;
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

        if (p->cipher)
                return crypto_cipher_available(p->cipher);
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
        for (size_t i = 0; i < ELEMENTSOF(c->gcm_keyed); i++)
                sym_EVP_CIPHER_CTX_free(c->gcm_keyed[i]);
        sym_EVP_CIPHER_CTX_free(c->gcm_work);
        return mfree(c);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_AEADContext *, NTS_aead_free);

/* Keys both contexts of an AES-GCM-SIV session (the nonce comes per packet). */
static int gcm_siv_key_new(NTS_AEADContext *c, const uint8_t *key) {
        EVP_CIPHER *cipher;
        int r = 0;

        cipher = sym_EVP_CIPHER_fetch(NULL, c->param->cipher, NULL);
        if (!cipher)
                return -EOPNOTSUPP;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(c->gcm_keyed); i++) {
                c->gcm_keyed[i] = sym_EVP_CIPHER_CTX_new();
                if (!c->gcm_keyed[i])
                        r = -ENOMEM;
                else if (!(i == 1 ? sym_EVP_EncryptInit_ex(c->gcm_keyed[i], cipher, NULL, key, NULL)
                                  : sym_EVP_DecryptInit_ex(c->gcm_keyed[i], cipher, NULL, key, NULL)))
                        r = -EIO;
        }
        sym_EVP_CIPHER_free(cipher);
        if (r < 0)
                return r;

        c->gcm_work = sym_EVP_CIPHER_CTX_new();
        return c->gcm_work ? 0 : -ENOMEM;
}

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

        if (p->cipher)
                r = gcm_siv_key_new(c, key->iov_base);
        else
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

/* RFC 8452 section 4 takes one string of associated data and a nonce of exactly 12 bytes. */
static int gcm_siv_check_args(const NTS_AEADContext *c, const struct iovec *ad, size_t n_ad,
                              const struct iovec *nonce) {
        if (n_ad > 1 || (n_ad == 1 && ad[0].iov_len > INT_MAX))
                return -EINVAL;
        if (!nonce || nonce->iov_len != c->param->nonce_size || !nonce->iov_base)
                return -EINVAL;
        return 0;
}

static int check_args(const NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce) {
        return c->param->cipher ? gcm_siv_check_args(c, ad, n_ad, nonce) : siv_check_args(n_ad, nonce);
}

/* The work context as a fresh copy of the keyed one, with this packet's nonce and associated
 * data. */
static int gcm_siv_start(NTS_AEADContext *c, bool encrypt, const struct iovec *ad, size_t n_ad,
                         const struct iovec *nonce) {
        typeof(sym_EVP_EncryptUpdate) update = encrypt ? sym_EVP_EncryptUpdate : sym_EVP_DecryptUpdate;
        int l;

        if (!sym_EVP_CIPHER_CTX_copy(c->gcm_work, c->gcm_keyed[encrypt]))
                return -EIO;
        if (!(encrypt ? sym_EVP_EncryptInit_ex(c->gcm_work, NULL, NULL, NULL, nonce->iov_base)
                      : sym_EVP_DecryptInit_ex(c->gcm_work, NULL, NULL, NULL, nonce->iov_base)))
                return -EIO;
        if (n_ad == 1 && ad[0].iov_len > 0 &&
            !update(c->gcm_work, NULL, &l, ad[0].iov_base, (int) ad[0].iov_len))
                return -EIO;
        return 0;
}

/* libcrypto's AES-GCM-SIV takes a NULL input as the end of the message, also for an empty
 * one: an empty plaintext or ciphertext is passed as this. */
static const uint8_t gcm_siv_empty[1];

/* out: ciphertext || tag (RFC 8452 section 4), room checked by the caller. */
static int gcm_siv_seal(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                        const struct iovec *plaintext, uint8_t *out) {
        uint8_t *tag = out + plaintext->iov_len;
        int r, l, lf;

        r = gcm_siv_start(c, true, ad, n_ad, nonce);
        if (r < 0)
                return r;
        if (!sym_EVP_EncryptUpdate(c->gcm_work, out, &l, plaintext->iov_len > 0 ? plaintext->iov_base : gcm_siv_empty,
                                   (int) plaintext->iov_len) ||
            !sym_EVP_EncryptFinal_ex(c->gcm_work, tag, &lf) ||
            !sym_EVP_CIPHER_CTX_ctrl(c->gcm_work, EVP_CTRL_AEAD_GET_TAG, NTS_AEAD_TAG_SIZE, tag))
                return -EIO;
        return 0;
}

/* in: ciphertext || tag, at least a tag long (checked by the caller); out: room for the
 * plaintext. */
static int gcm_siv_open(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                        const uint8_t *in, size_t size, uint8_t *out) {
        size_t n = size - NTS_AEAD_TAG_SIZE;
        uint8_t scratch[1], *pt = n > 0 ? out : scratch;
        int r, l, lf;

        r = gcm_siv_start(c, false, ad, n_ad, nonce);
        if (r >= 0 &&
            (!sym_EVP_CIPHER_CTX_ctrl(c->gcm_work, EVP_CTRL_AEAD_SET_TAG, NTS_AEAD_TAG_SIZE, (void *) (in + n)) ||
             !sym_EVP_DecryptUpdate(c->gcm_work, pt, &l, n > 0 ? in : gcm_siv_empty, (int) n)))
                r = -EIO;
        /* The final call compares the tags. Whatever failed, nothing decrypted is left. */
        if (r >= 0 && !sym_EVP_DecryptFinal_ex(c->gcm_work, scratch, &lf))
                r = -EBADMSG;
        if (r < 0)
                explicit_bzero_safe(pt, n);
        return r;
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

        r = check_args(c, ad, n_ad, nonce);
        if (r < 0)
                return r;
        if (plaintext->iov_len > INT_MAX - NTS_AEAD_TAG_SIZE)
                return -EINVAL;
        if (out->iov_len < plaintext->iov_len + NTS_AEAD_TAG_SIZE)
                return -ENOBUFS;

        if (c->param->cipher)
                r = gcm_siv_seal(c, ad, n_ad, nonce, plaintext, out->iov_base);
        else {
                n = siv_components(ad, n_ad, nonce, s);
                r = siv_seal(c->key, s, n, plaintext, out->iov_base);
        }
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

        r = check_args(c, ad, n_ad, nonce);
        if (r < 0)
                return r;
        if (ciphertext->iov_len < NTS_AEAD_TAG_SIZE)
                return -EBADMSG;
        if (ciphertext->iov_len > INT_MAX)
                return -EINVAL;
        if (out->iov_len < ciphertext->iov_len - NTS_AEAD_TAG_SIZE)
                return -ENOBUFS;

        if (c->param->cipher)
                r = gcm_siv_open(c, ad, n_ad, nonce, ciphertext->iov_base, ciphertext->iov_len, out->iov_base);
        else {
                n = siv_components(ad, n_ad, nonce, s);
                r = siv_open(c->key, s, n, ciphertext->iov_base, ciphertext->iov_len, out->iov_base);
        }
        /* A forged AES-SIV reply leaves nothing in libcrypto's error queue; GCM-SIV's tag check
         * in libcrypto may. */
        if (r < 0)
                return r == -EBADMSG && !c->param->cipher ? r : crypto_fail(r);

        out->iov_len = ciphertext->iov_len - NTS_AEAD_TAG_SIZE;
        return 0;
}
