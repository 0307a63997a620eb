/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Deterministic bytes and keys for the NTS unit tests. */

#include "iovec-util.h"
#include "nts-crypto.h"
#include "tests.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(NTS_AEADContext *, NTS_aead_free);

/* A byte pattern that differs with seed, for keys, cookies and payloads. */
static inline void test_fill(uint8_t *p, size_t n, uint8_t seed) {
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t) (seed + i * 7);
}

/* A context for id keyed with test_fill(key, key_size, seed). */
static inline NTS_AEADContext *test_aead_new(NTS_AEADAlgorithm id, uint8_t seed) {
        const NTS_AEADParam *p = NTS_aead_param(id);
        uint8_t key[NTS_MAX_AEAD_KEY_SIZE];
        NTS_AEADContext *c = NULL;

        ASSERT_TRUE(p);
        test_fill(key, p->key_size, seed);
        ASSERT_OK(NTS_aead_new(id, &IOVEC_MAKE(key, p->key_size), &c));
        ASSERT_EQ(NTS_aead_algorithm(c), id);
        return c;
}
