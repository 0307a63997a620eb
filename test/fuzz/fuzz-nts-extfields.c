/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* An NTP response, as it comes off the network, checked against a query in flight. */

#include <syslog.h>

#include "fuzz-nts-extfields.h"
#include "fuzz.h"
#include "iovec-util.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static NTS_AEADContext *s2c;
        static NTS_Query q;
        _cleanup_free_ uint8_t *scratch = NULL;
        NTS_Receipt receipt;
        int r;

        if (!s2c) {
                log_set_max_level(LOG_CRIT);
                assert_se(fuzz_nts_state(&q, &s2c) >= 0);
        }

        scratch = malloc(MAX(size, (size_t) 1));
        assert_se(scratch);

        r = NTS_parse_extension_fields(&IOVEC_MAKE(data, size), &q, s2c, &IOVEC_MAKE(scratch, size), &receipt);
        if (r >= 0) {
                assert_se(receipt.error == NTS_OK);
                assert_se(receipt.n_cookies > 0 && receipt.n_cookies <= NTS_MAX_COOKIES);
                for (size_t i = 0; i < receipt.n_cookies; i++)
                        assert_se((uint8_t *) receipt.cookies[i].iov_base >= scratch &&
                                  (uint8_t *) receipt.cookies[i].iov_base + receipt.cookies[i].iov_len <= scratch + size);
        } else
                assert_se(receipt.error != NTS_OK && receipt.n_cookies == 0);

        return 0;
}
