/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* AEAD for NTS on libcrypto's EVP interface, every call through a sym_ pointer.
 *
 * Two facts about OpenSSL 3.0 shape this file:
 *  - Its AES-SIV refuses an empty plaintext (the final call fails). An empty plaintext is
 *    what every NTS client request seals, so that case is computed here with S2V
 *    (siv-s2v.h): the SIV output is then the S2V value alone.
 *  - Re-initialising a used SIV context with all-NULL arguments yields wrong tags once an
 *    operation on it has failed. So each direction keeps a keyed template context that is
 *    never used itself, and every operation works on a fresh copy of it (a copy is also
 *    about twice as fast as a new key schedule). */

#include <limits.h>
#include <syslog.h>

#include "crypto-util.h"
#include "iovec-util.h"
#include "nts-crypto.h"
#include "siv-s2v.h"

/* RFC 5297 section 7: S2V's security holds for at most 127 components, i.e. 126 of associated
 * data and nonce besides the plaintext. */
#define SIV_MAX_AD_COMPONENTS 126

/* Key sizes: RFC 5297 section 6 (AES-SIV-CMAC-256/384/512 take two AES keys of 128, 192 or
 * 256 bits).
 *
 * AES-GCM-SIV (30, 31) is deliberately absent, although OpenSSL >= 3.2 has it: chrony 4.4 to
 * 4.6 derived its AES-128-GCM-SIV keys differently from RFC 8915, and chrony >= 4.6.1 needs a
 * KE record of type 1024 to agree on the RFC's keys. No test here can exchange GCM-SIV with a
 * server, so we do not offer it (docs/NTS.md, "AEAD algorithms"). */
static const NTS_AEADParam aead_params[] = {
        { NTS_AEAD_AES_SIV_CMAC_256, "AEAD_AES_SIV_CMAC_256", "AES-128-SIV", 32, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE },
        { NTS_AEAD_AES_SIV_CMAC_384, "AEAD_AES_SIV_CMAC_384", "AES-192-SIV", 48, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE },
        { NTS_AEAD_AES_SIV_CMAC_512, "AEAD_AES_SIV_CMAC_512", "AES-256-SIV", 64, NTS_AEAD_TAG_SIZE, NTS_SIV_NONCE_SIZE },
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
        /* Keyed once and only ever copied into work; one per direction, as EVP fixes the
         * direction when a context is initialised. */
        EVP_CIPHER_CTX *encrypt_template;
        EVP_CIPHER_CTX *decrypt_template;
        EVP_CIPHER_CTX *work;
        EVP_MAC_CTX *s2v;               /* CMAC keyed with the first key half */
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

static EVP_CIPHER *cipher_fetch(const NTS_AEADParam *p) {
        EVP_CIPHER *c;

        c = sym_EVP_CIPHER_fetch(NULL, p->cipher, NULL);
        if (!c)
                sym_ERR_clear_error();
        return c;
}

bool NTS_aead_supported(NTS_AEADAlgorithm id) {
        const NTS_AEADParam *p;
        EVP_CIPHER *c;

        p = NTS_aead_param(id);
        if (!p)
                return false;
        if (dlopen_libcrypto(LOG_DEBUG) < 0)
                return false;

        c = cipher_fetch(p);
        if (!c)
                return false;
        sym_EVP_CIPHER_free(c);
        return true;
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

        /* libcrypto cleanses the key schedules when it frees these. */
        sym_EVP_CIPHER_CTX_free(c->encrypt_template);
        sym_EVP_CIPHER_CTX_free(c->decrypt_template);
        sym_EVP_CIPHER_CTX_free(c->work);
        sym_EVP_MAC_CTX_free(c->s2v);
        return mfree(c);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_AEADContext *, NTS_aead_free);

static int template_new(EVP_CIPHER *cipher, const struct iovec *key, bool encrypt, EVP_CIPHER_CTX **ret) {
        EVP_CIPHER_CTX *ctx;
        int ok;

        ctx = sym_EVP_CIPHER_CTX_new();
        if (!ctx)
                return crypto_fail(-ENOMEM);

        if (encrypt)
                ok = sym_EVP_EncryptInit_ex(ctx, cipher, NULL, key->iov_base, NULL);
        else
                ok = sym_EVP_DecryptInit_ex(ctx, cipher, NULL, key->iov_base, NULL);
        if (!ok) {
                sym_EVP_CIPHER_CTX_free(ctx);
                return crypto_fail(-EIO);
        }

        *ret = ctx;
        return 0;
}

int NTS_aead_new(NTS_AEADAlgorithm id, const struct iovec *key, NTS_AEADContext **ret) {
        _cleanup_(NTS_aead_freep) NTS_AEADContext *c = NULL;
        const NTS_AEADParam *p;
        EVP_CIPHER *cipher;
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

        cipher = cipher_fetch(p);
        if (!cipher)
                return -EOPNOTSUPP;

        r = template_new(cipher, key, true, &c->encrypt_template);
        if (r >= 0)
                r = template_new(cipher, key, false, &c->decrypt_template);
        sym_EVP_CIPHER_free(cipher);
        if (r < 0)
                return r;

        c->work = sym_EVP_CIPHER_CTX_new();
        if (!c->work)
                return crypto_fail(-ENOMEM);

        r = siv_cmac_new(key->iov_base, key->iov_len / 2, &c->s2v);
        if (r < 0)
                return crypto_fail(r);

        *ret = TAKE_PTR(c);
        return 0;
}

NTS_AEADAlgorithm NTS_aead_algorithm(const NTS_AEADContext *c) {
        assert(c);
        return c->param->id;
}

/* S2V over ad[], the nonce (if any) and plaintext, for the cases libcrypto's AES-SIV cannot
 * do. */
static int siv_tag(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                   const struct iovec *plaintext, uint8_t ret[static SIV_BLOCK_SIZE]) {
        struct iovec s[SIV_MAX_AD_COMPONENTS + 1];
        size_t n = 0;

        for (size_t i = 0; i < n_ad; i++)
                s[n++] = ad[i];
        if (nonce)
                s[n++] = *nonce;
        s[n++] = *plaintext;

        return siv_s2v(c->s2v, s, n, ret) < 0 ? crypto_fail(-EIO) : 0;
}

static int siv_check_args(size_t n_ad, const struct iovec *nonce) {
        return n_ad + !!nonce > SIV_MAX_AD_COMPONENTS ? -EINVAL : 0;
}

/* Feeds the associated data into the work context; the nonce is its last component (RFC 5297
 * section 3). */
static int work_add_ad(NTS_AEADContext *c, bool encrypt, const struct iovec *ad, size_t n_ad,
                       const struct iovec *nonce) {
        typeof(sym_EVP_EncryptUpdate) update = encrypt ? sym_EVP_EncryptUpdate : sym_EVP_DecryptUpdate;
        int l;

        for (size_t i = 0; i < n_ad; i++) {
                if (ad[i].iov_len > INT_MAX)
                        return -EINVAL;
                /* An empty component still counts in S2V (RFC 5297 section 2.4). */
                if (!update(c->work, NULL, &l, ad[i].iov_base, (int) ad[i].iov_len))
                        return crypto_fail(-EIO);
        }

        if (nonce &&
            (nonce->iov_len > INT_MAX ||
             !update(c->work, NULL, &l, nonce->iov_base, (int) nonce->iov_len)))
                return crypto_fail(-EIO);

        return 0;
}

/* A fresh copy of the keyed template. */
static int work_start(NTS_AEADContext *c, bool encrypt) {
        if (!sym_EVP_CIPHER_CTX_copy(c->work, encrypt ? c->encrypt_template : c->decrypt_template))
                return crypto_fail(-EIO);
        return 0;
}

int NTS_aead_encrypt(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                     const struct iovec *plaintext, struct iovec *out) {
        const size_t tag_size = NTS_AEAD_TAG_SIZE;
        uint8_t *ct, *tag;
        int r, l = 0, lf = 0;

        assert(c);
        assert(ad || n_ad == 0);
        assert(plaintext);
        assert(out);

        r = siv_check_args(n_ad, nonce);
        if (r < 0)
                return r;
        if (plaintext->iov_len > INT_MAX - tag_size)
                return -EINVAL;
        if (out->iov_len < plaintext->iov_len + tag_size)
                return -ENOBUFS;

        /* tag || ciphertext (RFC 5297 section 2.6) */
        tag = out->iov_base;
        ct = tag + tag_size;

        if (plaintext->iov_len == 0) {
                r = siv_tag(c, ad, n_ad, nonce, plaintext, tag);
                if (r < 0)
                        return r;
                out->iov_len = tag_size;
                return 0;
        }

        r = work_start(c, true);
        if (r < 0)
                return r;
        r = work_add_ad(c, true, ad, n_ad, nonce);
        if (r < 0)
                return r;

        if (plaintext->iov_len > 0 &&
            !sym_EVP_EncryptUpdate(c->work, ct, &l, plaintext->iov_base, (int) plaintext->iov_len))
                return crypto_fail(-EIO);
        if (!sym_EVP_EncryptFinal_ex(c->work, ct + l, &lf))
                return crypto_fail(-EIO);
        if ((size_t) l + (size_t) lf != plaintext->iov_len)
                return crypto_fail(-EIO);
        if (!sym_EVP_CIPHER_CTX_ctrl(c->work, EVP_CTRL_AEAD_GET_TAG, (int) tag_size, tag))
                return crypto_fail(-EIO);

        out->iov_len = plaintext->iov_len + tag_size;
        return 0;
}

static int decrypt_refuse(struct iovec *out, size_t n, int r) {
        explicit_bzero_safe(out->iov_base, n);
        return crypto_fail(r);
}

int NTS_aead_decrypt(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                     const struct iovec *ciphertext, struct iovec *out) {
        const size_t tag_size = NTS_AEAD_TAG_SIZE;
        const uint8_t *ct, *tag;
        size_t n;
        int r, l = 0, lf = 0;

        assert(c);
        assert(ad || n_ad == 0);
        assert(ciphertext);
        assert(out);

        r = siv_check_args(n_ad, nonce);
        if (r < 0)
                return r;
        if (ciphertext->iov_len < tag_size)
                return -EBADMSG;
        if (ciphertext->iov_len > INT_MAX)
                return -EINVAL;
        n = ciphertext->iov_len - tag_size;
        if (out->iov_len < n)
                return -ENOBUFS;

        tag = ciphertext->iov_base;
        ct = tag + tag_size;

        if (n == 0) {
                uint8_t v[SIV_BLOCK_SIZE];

                r = siv_tag(c, ad, n_ad, nonce, &IOVEC_MAKE(NULL, 0), v);
                if (r < 0)
                        return r;
                if (sym_CRYPTO_memcmp(v, tag, tag_size) != 0)
                        return -EBADMSG;
                out->iov_len = 0;
                return 0;
        }

        r = work_start(c, false);
        if (r < 0)
                return r;
        if (!sym_EVP_CIPHER_CTX_ctrl(c->work, EVP_CTRL_AEAD_SET_TAG, (int) tag_size, (void *) tag))
                return crypto_fail(-EIO);
        r = work_add_ad(c, false, ad, n_ad, nonce);
        if (r < 0)
                return r;

        /* libcrypto's AES-SIV verifies in the update call; a failing final call means the same:
         * the data is not authentic. */
        if (n > 0 && !sym_EVP_DecryptUpdate(c->work, out->iov_base, &l, ct, (int) n))
                return decrypt_refuse(out, n, -EBADMSG);
        if (!sym_EVP_DecryptFinal_ex(c->work, (uint8_t *) out->iov_base + l, &lf))
                return decrypt_refuse(out, n, -EBADMSG);
        if ((size_t) l + (size_t) lf != n)
                return decrypt_refuse(out, n, -EIO);

        out->iov_len = n;
        return 0;
}
