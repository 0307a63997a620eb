/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Prints "REALTIME_NS:RAW_NS", now: the base of true-time.so (TRUE_TIME_BASE=). */

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

int main(void) {
        struct timespec rt, raw;

        if (clock_gettime(CLOCK_REALTIME, &rt) < 0 || clock_gettime(CLOCK_MONOTONIC_RAW, &raw) < 0) {
                perror("clock_gettime");
                return 1;
        }
        printf("%" PRId64 ":%" PRId64 "\n", (int64_t) rt.tv_sec * INT64_C(1000000000) + rt.tv_nsec,
               (int64_t) raw.tv_sec * INT64_C(1000000000) + raw.tv_nsec);
        return 0;
}
