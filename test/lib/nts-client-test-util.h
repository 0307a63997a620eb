/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What an NTS client reports, by value, for assertions on one field of it:
 * ASSERT_EQ(test_nts_report(c).cookies, 3u). */

#include "timesyncd-nts-client.h"

static inline NTSClientReport test_nts_report(const NTSClient *c) {
        NTSClientReport r;

        nts_client_get_report(c, &r);
        return r;
}
