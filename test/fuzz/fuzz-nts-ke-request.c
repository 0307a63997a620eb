/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* nts_server_ke_decode_request() over arbitrary bytes: the mock NTS server (and its pool mode,
 * which reads NTP Server Deny records) parses what a client sends with it, so it must survive
 * anything and keep its contract. */

#include <stdio.h>

#include "iovec-util.h"
#include "nts-server-ke.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct iovec msg = IOVEC_MAKE(data, size);
        NTSServerKERequest req;
        ssize_t r;

        r = nts_server_ke_decode_request(&msg, &req);

        if (r >= 0) {
                if ((size_t) r != size || size > NTS_KE_MAX_MESSAGE_SIZE)
                        abort();
                if (req.n_aead < 1 || req.n_aead > NTS_SERVER_KE_MAX_IDS ||
                    req.n_protocols < 1 || req.n_protocols > NTS_SERVER_KE_MAX_IDS ||
                    req.n_denied > NTS_SERVER_KE_MAX_IDS)
                        abort();
                /* Denied names are sane bodies inside the message. */
                for (size_t i = 0; i < req.n_denied; i++) {
                        const uint8_t *p = req.denied[i].iov_base;
                        if (req.denied[i].iov_len < 1 || req.denied[i].iov_len > NTS_MAX_SERVER_NAME_SIZE ||
                            p < data || p + req.denied[i].iov_len > data + size)
                                abort();
                }
        } else if (r == -EBADMSG) {
                if (req.error_code != NTS_KE_ERROR_BAD_REQUEST &&
                    req.error_code != NTS_KE_ERROR_UNRECOGNIZED_CRITICAL_RECORD)
                        abort();
        } else if (r != -ENODATA && r != -EMSGSIZE)
                abort();

        return 0;
}
