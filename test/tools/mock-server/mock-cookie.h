/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Cookies of the mock NTS server. A cookie carries the session's AEAD and keys sealed with a
 * server key (AEAD_AES_SIV_CMAC_256), so it is opaque to clients and useless against a server
 * with another key. The key is random per process, or kept in a keys file so that a
 * restarted server still accepts old cookies, and a replaced file simulates a key change.
 *
 *   key id (4) | nonce (16) | SIV(plaintext = AEAD id (2, big-endian) | 0 (2) | C2S key | S2C key)
 *
 * Every size is a multiple of four, so that a cookie never needs padding in its extension
 * field and the body the server reads back is exactly the cookie. */

#include <stdint.h>
#include <sys/uio.h>

#include "nts.h"

#define MOCK_COOKIE_KEY_ID_SIZE 4
#define MOCK_COOKIE_KEY_SIZE 32
#define MOCK_COOKIE_NONCE_SIZE 16

typedef struct MockCookieKey {
        uint8_t id[MOCK_COOKIE_KEY_ID_SIZE];
        NTS_AEADContext *aead;
} MockCookieKey;

/* With path: reads the key from it, or creates it with a new random key if it does not
 * exist. Without path: a random key for this process only. */
int mock_cookie_key_load(const char *path, MockCookieKey *ret);
void mock_cookie_key_done(MockCookieKey *k);

/* The size of every cookie for sessions using aead; 0 for unknown algorithms. */
size_t mock_cookie_size(NTS_AEADAlgorithm aead);

/* Writes a cookie of exactly mock_cookie_size(aead) bytes to buf. */
int mock_cookie_make(const MockCookieKey *k, NTS_AEADAlgorithm aead, const struct iovec *c2s,
                     const struct iovec *s2c, uint8_t *buf, size_t size);

typedef struct MockSession {
        NTS_AEADAlgorithm aead;
        uint8_t c2s[NTS_MAX_AEAD_KEY_SIZE];
        uint8_t s2c[NTS_MAX_AEAD_KEY_SIZE];
        size_t key_size;
} MockSession;

/* Opens a cookie. -EBADMSG for anything this server did not make with its current key. */
int mock_cookie_open(const MockCookieKey *k, const struct iovec *cookie, MockSession *ret);
