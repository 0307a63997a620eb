/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Any string as a time span: whatever parse_sec() accepts, format_timespan() must print in a
 * form parse_sec() reads back to the same value, at full accuracy and truncated. */

#include "time-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL;
        char small[8];
        usec_t u, v;

        s = strndup((const char *) data, size);
        if (!s || parse_sec(s, &u) < 0)
                return 0;

        assert_se(parse_sec(FORMAT_TIMESPAN(u, 1), &v) >= 0);
        assert_se(u == v);

        format_timespan(small, sizeof small, u, USEC_PER_SEC);
        assert_se(strlen(small) < sizeof small);
        return 0;
}
