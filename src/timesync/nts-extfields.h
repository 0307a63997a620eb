/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The NTS Authenticator and Encrypted Extension Fields field (RFC 8915 section 5.6), sealed
 * and opened in one place for both directions: the client's requests and responses
 * (nts-extfields.c) and the test servers' side of the same exchange. The rest of the
 * extension field API is in nts.h. */

#include "nts.h"

/* Appends an authenticator at the start of *out that seals plaintext (a sequence of
 * extension fields, possibly empty) with aead under a fresh random nonce; the associated data
 * is everything from packet up to *out. Returns 0, -ENOBUFS, or an error from the AEAD. */
int NTS_ef_append_authenticator(struct iovec *out, const uint8_t *packet, NTS_AEADContext *aead,
                                const struct iovec *plaintext);

/* Opens the authenticator auth, an extension field read by NTS_ef_next() from the packet
 * that starts at packet. The plaintext goes to out (capacity on entry, length on return).
 * Returns 0; -EBADMSG with *reason NTS_ERROR_NTP_BAD_AUTHENTICATOR when the nonce or
 * ciphertext lengths are malformed or unusable with the algorithm, NTS_ERROR_NTP_AUTH_FAILED
 * when it does not verify; other errors from the AEAD with NTS_ERROR_NTP_AUTH_FAILED. */
int NTS_ef_open_authenticator(const uint8_t *packet, const NTS_ExtensionField *auth, NTS_AEADContext *aead,
                              struct iovec *out, NTS_Error *reason);
