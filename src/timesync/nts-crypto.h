/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* AEAD for NTS: AES-SIV-CMAC-256/384/512 (RFC 5297, src/shared/aes-siv.c) on libcrypto's AES,
 * and AEAD_AES_128_GCM_SIV (RFC 8452) as libcrypto's "AES-128-GCM-SIV" cipher where the loaded
 * libcrypto has it (OpenSSL 3.2 and later); libcrypto is loaded with dlopen() on first use.
 * docs/NTS.md, "AEAD algorithms", says why AEAD_AES_256_GCM_SIV is not among them.
 *
 * An NTS_AEADContext holds one key, set up once and reused for every packet of a session: with
 * AES-SIV per packet there is no key schedule and no allocation; with AES-GCM-SIV, libcrypto's
 * cipher derives the message keys from each nonce, and each packet works on a copy of a keyed
 * context. */

#include "nts.h"

typedef struct NTS_AEADParam {
        NTS_AEADAlgorithm id;
        const char *name;               /* "AEAD_AES_SIV_CMAC_256" */
        size_t key_size;                /* bytes of key material exported from TLS */
        size_t tag_size;                /* NTS_AEAD_TAG_SIZE */
        size_t nonce_size;              /* nonce length we generate; AES-GCM-SIV takes no other */
        const char *cipher;             /* libcrypto's name of an AES-GCM-SIV cipher; NULL for AES-SIV */
} NTS_AEADParam;

/* NULL for identifiers we cannot use (unknown, or AEAD_AES_256_GCM_SIV: NTS_aead_name() names
 * those). Independent of what libcrypto has: NTS_aead_supported() says that. */
const NTS_AEADParam *NTS_aead_param(NTS_AEADAlgorithm id);

/* Whether the loaded libcrypto has what id needs (probed: AES-CBC and AES-CTR of its key size
 * for AES-SIV, the cipher itself for AES-GCM-SIV, which OpenSSL 3.0 and 3.1 lack). Loads
 * libcrypto; false if that fails. */
bool NTS_aead_supported(NTS_AEADAlgorithm id);

/* Fills ret[] with the algorithms we offer in a KE request, in order of preference, and
 * returns how many: AEAD_AES_SIV_CMAC_512, _384, AEAD_AES_128_GCM_SIV, AEAD_AES_SIV_CMAC_256,
 * each where libcrypto supports it. Returns a negative errno if libcrypto cannot be loaded. */
int NTS_aead_offer(NTS_AEADAlgorithm *ret, size_t n);

/* key->iov_len must equal the algorithm's key_size. Loads libcrypto. -EOPNOTSUPP when the
 * loaded libcrypto lacks the algorithm. */
int NTS_aead_new(NTS_AEADAlgorithm id, const struct iovec *key, NTS_AEADContext **ret);
NTS_AEADContext *NTS_aead_free(NTS_AEADContext *c);
NTS_AEADAlgorithm NTS_aead_algorithm(const NTS_AEADContext *c);

/* Seals plaintext. ad[0..n_ad) are the associated data components (RFC 5297 S2V takes each as
 * its own vector; AES-GCM-SIV takes at most one); nonce may be NULL for deterministic SIV
 * (RFC 5297 A.1), and must have exactly nonce_size bytes for AES-GCM-SIV. out->iov_len is the
 * capacity on entry and the ciphertext length (plaintext + tag) on return: tag first for
 * AES-SIV (RFC 5297 section 2.6), last for AES-GCM-SIV (RFC 8452 section 4). An empty
 * plaintext (every NTS request's) works.
 * Returns 0, -ENOBUFS, -EINVAL, or -EIO when libcrypto fails. */
int NTS_aead_encrypt(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                     const struct iovec *plaintext, struct iovec *out);

/* Opens ciphertext (tag included). out->iov_len is the capacity on entry and the plaintext
 * length on return. Returns 0, or -EBADMSG when authentication fails (nothing usable is left
 * in out), -ENOBUFS, -EINVAL, -EIO. */
int NTS_aead_decrypt(NTS_AEADContext *c, const struct iovec *ad, size_t n_ad, const struct iovec *nonce,
                     const struct iovec *ciphertext, struct iovec *out);
