/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What any result of NTS_decode_response() must satisfy, whatever the input: shared by the
 * unit tests and the fuzzer, which feed it mutated and random messages. */

#include <stdbool.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "nts.h"

/* r and a are what NTS_decode_response(msg, offered, n_offered, a) returned. On success: the
 * message ends in End of Message at r, the AEAD was offered, 1..NTS_MAX_COOKIES cookies of
 * sane size lie inside the message, as does the Server body. On failure: one of the three
 * documented errors with a matching cause, and nothing else left in *a.
 * Returns NULL when all holds, otherwise the broken rule, for the caller to report. */
const char *nts_ke_check_decode_result(const struct iovec *msg, const NTS_AEADAlgorithm *offered,
                                       size_t n_offered, ssize_t r, const NTS_Agreement *a);
