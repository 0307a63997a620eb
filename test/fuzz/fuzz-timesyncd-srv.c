/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Anything as the records of a ResolveRecord answer: the input is a sequence of records, each
 * preceded by its length (2 bytes, big-endian), the last one taking what is left. Every record
 * that parses has a valid host name (or "." for no service) as target; the order that follows
 * has non-decreasing priorities, no "." and no target twice. */

#include <string.h>

#include "fuzz.h"
#include "hostname-util.h"
#include "timesyncd-srv.h"
#include "unaligned.h"

/* Draws from a counter instead of the kernel: the same input takes the same path. */
static uint32_t counter_random(uint32_t n, void *userdata) {
        uint32_t *c = userdata;

        return (*c)++ * UINT32_C(2654435761) % n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(srv_answer_done) SrvAnswer a = {};
        uint32_t counter = 0;

        while (size > 0) {
                size_t len = size;
                SrvRecord rec;

                if (size >= 2) {
                        len = MIN((size_t) unaligned_read_be16(data), size - 2);
                        data += 2;
                        size -= 2;
                }
                if (srv_record_parse(&(struct iovec) { .iov_base = (void *) data, .iov_len = len }, &rec) >= 0) {
                        assert_se(rec.target);
                        assert_se(strlen(rec.target) <= HOSTNAME_MAX);
                        assert_se(isempty(rec.target) || hostname_is_valid(rec.target));
                        assert_se(rec.ttl <= INT32_MAX);
                        free(rec.target);
                }
                (void) srv_answer_add(&a, &(struct iovec) { .iov_base = (void *) data, .iov_len = len });
                data += len;
                size -= len;
        }

        if (srv_answer_order(&a, counter_random, &counter) < 0) {
                assert_se(a.n_records == 0);
                return 0;
        }
        for (size_t i = 0; i < a.n_records; i++) {
                assert_se(!isempty(a.records[i].target));
                assert_se(i == 0 || a.records[i - 1].priority <= a.records[i].priority);
                for (size_t k = 0; k < i; k++)
                        assert_se(!streq(a.records[k].target, a.records[i].target));
        }
        return 0;
}
