/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* AES-SIV (RFC 5297): S2V on AES-CMAC (RFC 4493) and AES-CTR, on two libcrypto contexts that
 * are keyed once per key: AES-CBC with the first key half for CMAC, AES-CTR with the second
 * for the encryption.
 *
 * Why not libcrypto's own AES-SIV cipher: per packet it copies a keyed SIV context (a dozen
 * allocations), starts a CMAC through the EVP_MAC parameter machinery for every component,
 * and OpenSSL 3.0's refuses the empty plaintext that every NTS request seals. Built on the
 * two keyed block cipher contexts, sealing or opening an NTS packet is a few calls into
 * libcrypto and no allocation; on a small board polling every few minutes, most of what a
 * poll costs is this code coming back into a cold cache. The unit tests hold it to the RFC's
 * vectors and to libcrypto's AES-SIV for every key size and length. */

#include <stdint.h>
#include <sys/uio.h>

#include "crypto-util.h"

/* RFC 5297 section 2.1: S2V and CTR work on 128-bit blocks; the synthetic IV is one. */
#define SIV_BLOCK_SIZE 16

/* RFC 5297 section 7: S2V's security holds for at most 127 components, i.e. 126 of associated
 * data (a nonce counts as one) besides the plaintext. More are refused with -EIO. */
#define SIV_MAX_AD_COMPONENTS 126

typedef struct SivKey SivKey;

#if HAVE_NTS
/* Whether the loaded libcrypto has the AES-CBC and AES-CTR that a key of size bytes (both
 * halves) needs. libcrypto must be loaded. */
bool siv_key_size_supported(size_t size);

/* key: both halves, 32, 48 or 64 bytes (AES-SIV-CMAC-256/384/512). Returns 0, -EINVAL for
 * another size, -EOPNOTSUPP when libcrypto lacks the AES variant, -ENOMEM, -EIO. libcrypto must
 * be loaded. */
int siv_key_new(const void *key, size_t size, SivKey **ret);
SivKey *siv_key_free(SivKey *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(SivKey *, siv_key_free);

/* V = S2V(K1, s[0], ..., s[n-1]); s[n-1] is the plaintext when computing an SIV tag. n must be
 * at least 1. Returns 0 or -EIO. */
int siv_s2v(SivKey *k, const struct iovec *s, size_t n, uint8_t ret[static SIV_BLOCK_SIZE]);

/* Seals plaintext with the associated data components ad[0..n_ad) (a nonce is the last of
 * them): out receives the tag and then the ciphertext, plaintext->iov_len + SIV_BLOCK_SIZE
 * bytes. n_ad may be 0. Returns 0 or -EIO. */
int siv_seal(SivKey *k, const struct iovec *ad, size_t n_ad, const struct iovec *plaintext, uint8_t *out);

/* Opens tag || ciphertext of len >= SIV_BLOCK_SIZE bytes into out (len - SIV_BLOCK_SIZE
 * bytes). Returns 0, -EBADMSG when the tag does not verify (out is zeroed then), or -EIO. */
int siv_open(SivKey *k, const struct iovec *ad, size_t n_ad, const uint8_t *in, size_t len, uint8_t *out);
#endif
