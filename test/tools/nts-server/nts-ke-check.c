/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdint.h>

#include "iovec-util.h"
#include "nts-ke-check.h"

static bool inside(const struct iovec *msg, size_t end, const struct iovec *part) {
        const uint8_t *base = msg->iov_base, *p = part->iov_base;

        return p >= base && p <= base + end && part->iov_len <= (size_t) (base + end - p);
}

static bool offered_has(const NTS_AEADAlgorithm *offered, size_t n_offered, NTS_AEADAlgorithm aead) {
        for (size_t i = 0; i < n_offered; i++)
                if (offered[i] == aead)
                        return true;
        return false;
}

static const char *check_failure(ssize_t r, const NTS_Agreement *a, const NTS_AEADAlgorithm *offered,
                                 size_t n_offered) {
        switch (r) {
        case -ENODATA:
                if (a->error != NTS_ERROR_KE_TRUNCATED)
                        return "-ENODATA without NTS_ERROR_KE_TRUNCATED";
                break;
        case -EMSGSIZE:
                if (a->error != NTS_ERROR_KE_TOO_LONG)
                        return "-EMSGSIZE without NTS_ERROR_KE_TOO_LONG";
                break;
        case -EBADMSG:
                if (a->error == NTS_OK || a->error == NTS_ERROR_KE_TRUNCATED ||
                    a->error == NTS_ERROR_KE_TOO_LONG || a->error > NTS_ERROR_KE_BAD_PORT)
                        return "-EBADMSG with a cause that is not a KE refusal";
                break;
        default:
                return "an error that NTS_decode_response() does not document";
        }

        if (a->n_cookies != 0 || iovec_is_set(&a->server) || a->port != 0 || a->compliant_128gcm)
                return "a refused response left agreement fields set";
        /* The one field a refusal keeps: the algorithm a server chose that we did not offer. */
        if (a->error == NTS_ERROR_KE_AEAD_NOT_OFFERED ? offered_has(offered, n_offered, a->aead) : a->aead != 0)
                return "a refused response left agreement fields set";
        return NULL;
}

const char *nts_ke_check_decode_result(const struct iovec *msg, const NTS_AEADAlgorithm *offered,
                                       size_t n_offered, ssize_t r, const NTS_Agreement *a) {
        const uint8_t *end;

        if (r <= 0)
                return r == 0 ? "success with an empty message" : check_failure(r, a, offered, n_offered);

        if (a->error != NTS_OK)
                return "success with an error set";
        if ((size_t) r > msg->iov_len || r > NTS_KE_MAX_MESSAGE_SIZE || r < NTS_KE_RECORD_HEADER_SIZE)
                return "success with an impossible length";

        end = (const uint8_t *) msg->iov_base + r - NTS_KE_RECORD_HEADER_SIZE;
        if ((end[0] & 0x7f) != 0 || end[1] != 0 || end[2] != 0 || end[3] != 0)
                return "success without End of Message at the end";
        if ((size_t) r != msg->iov_len)
                return "success with data after End of Message";

        if (!offered_has(offered, n_offered, a->aead))
                return "success with an AEAD algorithm that was not offered";

        if (a->n_cookies < 1 || a->n_cookies > NTS_MAX_COOKIES)
                return "success with no or too many cookies";
        for (size_t i = 0; i < a->n_cookies; i++) {
                if (a->cookies[i].iov_len < 1 || a->cookies[i].iov_len > NTS_MAX_COOKIE_SIZE)
                        return "success with a cookie of bad size";
                if (!inside(msg, (size_t) r, &a->cookies[i]))
                        return "success with a cookie outside the message";
        }

        if (iovec_is_set(&a->server)) {
                if (a->server.iov_len > NTS_MAX_SERVER_NAME_SIZE)
                        return "success with an overlong server";
                if (!inside(msg, (size_t) r, &a->server))
                        return "success with a server outside the message";
                for (size_t i = 0; i < a->server.iov_len; i++) {
                        char c = ((const char *) a->server.iov_base)[i];
                        if (c <= ' ' || c > '~')
                                return "success with a server that is not printable ASCII";
                }
        } else if (a->server.iov_len != 0)
                return "success with a server length but no server";

        return NULL;
}
