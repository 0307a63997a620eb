/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* S2V, the "string to vector" PRF of AES-SIV (RFC 5297 section 2.4), on libcrypto's AES-CMAC.
 *
 * libcrypto implements AES-SIV as a cipher, but OpenSSL 3.0 refuses an empty plaintext. With
 * S2V on hand a caller can handle that case itself: the SIV output for an empty plaintext is
 * S2V's value alone. */

#include <sys/uio.h>

#include "crypto-util.h"

/* RFC 5297 section 2.1: S2V works on 128-bit blocks; its output is the synthetic IV. */
#define SIV_BLOCK_SIZE 16

#if HAVE_NTS
/* An AES-CMAC context keyed with key (16, 24 or 32 bytes: the first half of an AES-SIV key).
 * Returns 0, -EINVAL for another key size, -EIO when libcrypto fails. libcrypto must be
 * loaded. */
int siv_cmac_new(const void *key, size_t size, EVP_MAC_CTX **ret);

/* V = S2V(K, s[0], ..., s[n-1]) with the key of cmac; s[n-1] is the plaintext when computing an
 * SIV tag. n must be at least 1. The CMAC context is re-initialised for every block it
 * computes and may be reused afterwards. Returns 0 or -EIO. */
int siv_s2v(EVP_MAC_CTX *cmac, const struct iovec *s, size_t n, uint8_t ret[static SIV_BLOCK_SIZE]);
#endif
