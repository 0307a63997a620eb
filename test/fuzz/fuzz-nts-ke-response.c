/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* NTS_decode_response() over arbitrary bytes, as a hostile KE server would send them. Besides
 * not crashing, any result must satisfy the decoder's contract. */

#include <stdio.h>

#include "iovec-util.h"
#include "nts-ke-check.h"
#include "nts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An offer that leaves registered algorithms out, so that AEAD records naming 16 or 31 are
 * refused as not offered. */
static const NTS_AEADAlgorithm offered[] = {
        NTS_AEAD_AES_SIV_CMAC_256,
        NTS_AEAD_AES_SIV_CMAC_512,
        NTS_AEAD_AES_128_GCM_SIV,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct iovec msg = IOVEC_MAKE(data, size);
        NTS_Agreement a;
        const char *broken;
        ssize_t r;

        r = NTS_decode_response(&msg, offered, ELEMENTSOF(offered), &a);

        broken = nts_ke_check_decode_result(&msg, offered, ELEMENTSOF(offered), r, &a);
        if (broken) {
                fprintf(stderr, "NTS_decode_response() returned %zd, error %d: %s\n",
                        r, (int) a.error, broken);
                abort();
        }

        if (r < 0 && !NTS_error_string(a.error))
                abort();

        return 0;
}
