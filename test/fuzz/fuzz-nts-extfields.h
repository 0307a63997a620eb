/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The fixed state fuzz-nts-extfields verifies its inputs with, and gen-nts-extfields-corpus
 * seals its seeds with: a known S2C key and the UID of a query in flight. */

#include "nts.h"
#include "nts-crypto.h"

#define FUZZ_NTS_AEAD NTS_AEAD_AES_SIV_CMAC_256

static inline int fuzz_nts_state(NTS_Query *q, NTS_AEADContext **s2c) {
        uint8_t key[32];

        for (size_t i = 0; i < sizeof(key); i++)
                key[i] = (uint8_t) i;
        *q = (NTS_Query) {};
        for (size_t i = 0; i < sizeof(q->uid); i++)
                q->uid[i] = (uint8_t) (0xa0 + i);

        return NTS_aead_new(FUZZ_NTS_AEAD, &(struct iovec) { key, sizeof(key) }, s2c);
}
